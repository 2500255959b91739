//! The streaming capture reader: pcap-parser's buffered reader underneath (`create_reader`,
//! `refill`, `grow`, `consume`, and `next` for the file header, SHBs and IDBs), packet records
//! parsed in place so that a frame costs no allocation.

use std::fmt;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use pcap_parser::pcapng::Block;
use pcap_parser::PcapError;

use super::classic::{self, Magic, MAX_RECORD_LEN};
use super::erf;
use super::error::CaptureError;
use super::header::read_prefix;
pub(super) use super::in_place::READ_WHOLE_MAX;
use super::in_place::{Backing, Input, Source, SPARE};
use super::input::{open_stream, Compression, Prefixed, Shared, ZSTD_WINDOW_TOLD};
use super::pcapng::{self, Head, Iface};
use super::{CaptureFormat, Frame};

/// Initial size of pcap-parser's buffer.
const INITIAL_CAPACITY: usize = 4 << 20;
/// Warnings kept; the rest are counted in one final line.
const MAX_WARNINGS: usize = 100;

/// Per-format reading state.
#[derive(Debug)]
enum Mode {
    Classic {
        big_endian: bool,
        nanos: bool,
        record_header_len: usize,
        linktype: u32,
        snaplen: u32,
    },
    Pcapng {
        /// Byte order of the current section.
        big_endian: bool,
        /// Interfaces of the current section, by IDB order (pcapng 4.2: the interface id is
        /// the IDB's index within its section).
        ifaces: Vec<Iface>,
        /// Number of SHBs seen.
        sections: u32,
    },
    /// Endace ERF: records from the first byte, no file header.
    Erf { tally: erf::Tally },
}

/// Length of a classic pcap record header (draft 5); the "modified" format's is 24.
const CLASSIC_RECORD_HEADER_LEN: usize = 16;

/// A packet record found in the buffer.
struct Record {
    /// Bytes of the whole record (consumed once the frame is done with).
    len: usize,
    /// Where the captured bytes start in the record, and how many there are.
    start: usize,
    caplen: usize,
    ts_ns: i64,
    linktype: u32,
    orig_len: u32,
}

/// What the next bytes of the buffer are.
enum Step {
    Frame(Record),
    /// A non-packet block of this length was handled or skipped.
    Consume(usize),
    /// The next record needs this many bytes in the buffer.
    NeedMore(usize),
    /// End of the stream at a record boundary.
    Eof,
    /// Unrecoverable problem: end reading with this warning.
    Stop(String),
}

/// Streaming reader of classic pcap and pcapng captures, plain or compressed (gzip, zstd, LZ4).
pub struct CaptureReader {
    inner: Input,
    format: CaptureFormat,
    compression: Option<Compression>,
    shared: Arc<Shared>,
    mode: Mode,
    capacity: usize,
    /// Stream offset of the first byte of `inner.data()` (after `pending` is consumed).
    pos: u64,
    /// Length of the record returned last: consumed at the next call (the frame borrows it).
    pending: usize,
    frames: u64,
    last_ts: i64,
    done: bool,
    warnings: Vec<String>,
    suppressed: u64,
    snaplen_warned: bool,
    unknown_blocks_warned: Vec<u32>,
}

impl fmt::Debug for CaptureReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CaptureReader")
            .field("format", &self.format)
            .field("compression", &self.compression)
            .field("pos", &self.pos)
            .field("frames", &self.frames)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl CaptureReader {
    /// Opens a capture file (pcap / pcapng, plain or compressed with gzip, zstd or LZ4).
    pub fn open(path: &Path) -> Result<CaptureReader, CaptureError> {
        let file = File::open(path).map_err(|source| CaptureError::Io { offset: 0, source })?;
        match Self::source(file)? {
            Source::InPlace(bytes) => Self::from_bytes(bytes),
            Source::Stream(r) => Self::from_read(r),
        }
    }

    /// How to read a capture file: a regular, uncompressed one in place, a small one read whole
    /// and a larger one mapped (frames then come straight from the page cache, without copying
    /// the file through a buffer); anything else as a stream (also when mapping fails, or with
    /// `SCTP_ANALYZER_NO_MMAP` set). Each byte of the file is read once.
    fn source(mut file: File) -> Result<Source, CaptureError> {
        // Compressed, or too short to tell: a stream.
        let streamed = |b: &[u8]| b.len() < 4 || Compression::sniff(b).is_some();
        let Ok(meta) = file.metadata() else {
            return Ok(Source::Stream(Box::new(file)));
        };
        if !meta.is_file() || std::env::var_os("SCTP_ANALYZER_NO_MMAP").is_some() {
            return Ok(Source::Stream(Box::new(file)));
        }
        if meta.len() <= READ_WHOLE_MAX {
            let mut v = SPARE.take();
            v.clear();
            v.reserve(meta.len() as usize);
            if let Err(source) = file.read_to_end(&mut v) {
                // A read error part-way: the stream reading meets it again at the same offset,
                // analyses the frames before it and says where it stopped.
                let offset = v.len() as u64;
                SPARE.set(v);
                file.seek(SeekFrom::Start(0))
                    .map_err(|_| CaptureError::Io { offset, source })?;
                return Ok(Source::Stream(Box::new(file)));
            }
            if streamed(&v) {
                // The bytes already read are the stream (not read from the file again).
                return Ok(Source::Stream(Box::new(std::io::Cursor::new(v))));
            }
            return Ok(Source::InPlace(Backing::Owned(v)));
        }
        // SAFETY: the mapping is read-only and private. Captures are not truncated while they
        // are analysed (one being written only grows; the map covers the size at open).
        let Ok(map) = (unsafe { memmap2::MmapOptions::new().map(&file) }) else {
            return Ok(Source::Stream(Box::new(file)));
        };
        if streamed(&map) {
            // Mapping left the file position at the start.
            return Ok(Source::Stream(Box::new(file)));
        }
        // One sequential pass: ask the kernel to read ahead generously.
        let _ = map.advise(memmap2::Advice::Sequential);
        Ok(Source::InPlace(Backing::Mapped(map)))
    }

    /// Reads an uncompressed capture in place.
    fn from_bytes(bytes: Backing) -> Result<CaptureReader, CaptureError> {
        let prefix = read_prefix(&mut &bytes[..], None)?;
        let inner = Input::InPlace {
            bytes,
            pos: 0,
            released: 0,
        };
        let shared = Arc::new(Shared::default());
        let classic = (prefix.record_header_len, prefix.variant);
        Self::start(inner, prefix.magic, classic, None, shared, INITIAL_CAPACITY)
    }

    /// A reader positioned after the file header (classic, read here) or before the first block
    /// (pcapng), whatever the input.
    /// `classic`: the record header length of a classic capture, and the old variant it was
    /// told from, if any (`Prefix`).
    fn start(
        mut inner: Input,
        magic: Magic,
        (record_header_len, variant): (usize, Option<&'static str>),
        compression: Option<Compression>,
        shared: Arc<Shared>,
        capacity: usize,
    ) -> Result<CaptureReader, CaptureError> {
        let bad_header = |reason| CaptureError::BadHeader {
            format: magic.format().as_str(),
            offset: 0,
            reason: format!("pcap-parser: {reason}"),
        };
        let (format, mode, pos) = match magic {
            Magic::Classic {
                big_endian, nanos, ..
            } => {
                let (n, linktype, snaplen) = inner.classic_header().map_err(bad_header)?;
                let mode = Mode::Classic {
                    big_endian,
                    nanos,
                    record_header_len,
                    linktype,
                    snaplen,
                };
                (CaptureFormat::Pcap, mode, n as u64)
            }
            Magic::Erf => {
                if matches!(inner, Input::Stream(_)) {
                    // The stream was fronted with a classic file header for pcap-parser's buffered
                    // reader (`from_read`): consumed, it leaves the file's first byte at offset 0.
                    inner.classic_header().map_err(bad_header)?;
                }
                let mode = Mode::Erf {
                    tally: erf::Tally::default(),
                };
                (CaptureFormat::Erf, mode, 0)
            }
            Magic::Pcapng => {
                // The first SHB sets the byte order.
                let mode = Mode::Pcapng {
                    big_endian: false,
                    ifaces: Vec::new(),
                    sections: 0,
                };
                (CaptureFormat::Pcapng, mode, 0)
            }
        };
        Ok(CaptureReader {
            inner,
            format,
            compression,
            shared,
            mode,
            capacity,
            pos,
            pending: 0,
            frames: 0,
            last_ts: 0,
            done: false,
            warnings: variant
                .map(|v| format!("pcap records with {record_header_len}-byte headers ({v}'s variant of the format, told from its first records as Wireshark does): read as such"))
                .into_iter()
                .collect(),
            suppressed: 0,
            snaplen_warned: false,
            unknown_blocks_warned: Vec::new(),
        })
    }

    /// Reads a capture from any byte source; gzip, zstd and LZ4 are detected (by magic) and
    /// decompressed.
    pub fn from_read(r: Box<dyn Read + Send>) -> Result<CaptureReader, CaptureError> {
        let shared = Arc::new(Shared::default());
        let (mut stream, compression, zstd_window) =
            open_stream(r, &shared).map_err(|source| CaptureError::Io { offset: 0, source })?;
        let prefix = read_prefix(&mut *stream, compression)?;
        let magic = prefix.magic;
        let classic = (prefix.record_header_len, prefix.variant);
        let capacity = INITIAL_CAPACITY.max(prefix.header_len.next_power_of_two());
        if let Some(e) = prefix.error {
            // Met while reading ahead, after the first frame: served once the prefix is read.
            stream = Box::new(FailAfter(Some(e), false));
        }
        let mut bytes = prefix.bytes;
        if magic == Magic::Erf {
            // pcap-parser's buffered reader starts at a pcap or pcapng file header; an ERF file
            // has none, so it reads one made here (LINKTYPE_ERF) before the file's bytes, and
            // `start` consumes it: the reader serves only as the buffer of the records.
            let mut front = classic::file_header(crate::linktype::LINKTYPE_ERF);
            front.extend_from_slice(&bytes);
            bytes = front;
        }
        let source = Prefixed::new(bytes, stream, shared.clone());
        let bad = |e: PcapError<&[u8]>| CaptureError::BadHeader {
            format: magic.format().as_str(),
            offset: 0,
            reason: format!("pcap-parser: {}", describe(&e)),
        };
        let inner = pcap_parser::create_reader(capacity, source).map_err(bad)?;
        let mut reader = Self::start(
            Input::Stream(inner),
            magic,
            classic,
            compression,
            shared,
            capacity,
        )?;
        if let Some(w) = zstd_window.filter(|&w| w > ZSTD_WINDOW_TOLD) {
            reader.warnings.push(format!(
                "the zstd stream asks for a {} MiB window (written with `zstd --long`): decoding keeps that much of it in memory",
                w >> 20
            ));
        }
        Ok(reader)
    }

    /// Whether the capture is read in place (its file mapped, or read whole when small).
    pub fn is_in_place(&self) -> bool {
        matches!(self.inner, Input::InPlace { .. })
    }

    /// Whether the capture's file is mapped (not read whole).
    #[cfg(test)]
    pub(super) fn is_mapped(&self) -> bool {
        matches!(
            self.inner,
            Input::InPlace {
                bytes: Backing::Mapped(_),
                ..
            }
        )
    }

    pub fn format(&self) -> CaptureFormat {
        self.format
    }

    /// Whether the capture is gzip-compressed (`compression`).
    pub fn gzip(&self) -> bool {
        self.compression == Some(Compression::Gzip)
    }

    /// How the capture file is compressed, if it is.
    pub fn compression(&self) -> Option<Compression> {
        self.compression
    }

    /// Problems met after the header, each naming its byte offset.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Bytes of the underlying (compressed, if it is) input consumed so far.
    pub fn input_bytes_read(&self) -> u64 {
        match &self.inner {
            Input::Stream(_) => self.shared.input_bytes.load(Ordering::Relaxed),
            // Like a stream read to its end: the whole file once reading stopped.
            Input::InPlace { bytes, .. } if self.done => bytes.len() as u64,
            Input::InPlace { pos, .. } => *pos as u64,
        }
    }

    /// Frames returned so far.
    pub fn frames_read(&self) -> u64 {
        self.frames
    }

    /// Next frame, or None at the end. The frame borrows the reader's buffer. Problems end
    /// reading with a warning (see [`Self::warnings`]); frames already returned stay valid.
    pub fn next_frame(&mut self) -> Option<Frame<'_>> {
        if self.pending > 0 {
            self.inner.consume(self.pending);
            self.pos += self.pending as u64;
            self.pending = 0;
        }
        if self.done {
            return None;
        }
        let r = match self.in_place_classic_record() {
            Some(r) => r,
            None => self.next_record()?,
        };
        self.frames += 1;
        self.pending = r.len;
        self.last_ts = r.ts_ns;
        Some(Frame {
            number: self.frames,
            ts_ns: r.ts_ns,
            linktype: r.linktype,
            data: &self.inner.data()[r.start..r.start + r.caplen],
            orig_len: r.orig_len,
            offset: self.pos,
        })
    }

    /// The next packet record by the general steps (classic or pcapng, any input), past the
    /// blocks that carry none; None at the end or when reading stops. Out of line: inlined, it
    /// slowed the in-place short path in `next_frame` (cachegrind, +5 instructions a record).
    #[inline(never)]
    fn next_record(&mut self) -> Option<Record> {
        loop {
            let step = match self.mode {
                Mode::Classic { .. } => self.classic_step(),
                Mode::Pcapng { .. } => self.pcapng_step(),
                Mode::Erf { .. } => self.erf_step(),
            };
            match step {
                Step::Frame(r) => {
                    if r.start + r.caplen > self.inner.data().len() {
                        self.stop(format!(
                            "internal error: record at offset {} out of buffer",
                            self.pos
                        ));
                        return None;
                    }
                    return Some(r);
                }
                Step::Consume(n) => {
                    self.inner.consume(n);
                    self.pos += n as u64;
                }
                Step::NeedMore(total) => {
                    if !self.fill(total) {
                        return None;
                    }
                }
                Step::Eof => {
                    self.done = true;
                    self.format_warnings();
                    self.flush_suppressed();
                    return None;
                }
                Step::Stop(msg) => {
                    self.stop(msg);
                    return None;
                }
            }
        }
    }

    /// The common case, read without the general machinery of `classic_step`: a whole record
    /// of a little-endian classic pcap read in place (mapped or read whole), within the snap
    /// length and the record size limit. None for anything else (then `classic_step` reads it and deals
    /// with what is unusual: short or oversized records, warnings, the end of the file).
    #[inline]
    fn in_place_classic_record(&self) -> Option<Record> {
        let (
            Mode::Classic {
                big_endian: false,
                nanos,
                record_header_len: CLASSIC_RECORD_HEADER_LEN,
                linktype,
                snaplen,
            },
            Input::InPlace { bytes, pos, .. },
        ) = (&self.mode, &self.inner)
        else {
            return None;
        };
        let data = bytes.get(*pos..*pos + CLASSIC_RECORD_HEADER_LEN)?;
        let h = classic::record_head(data, false)?;
        // draft 5: a record within the snap length (0: none given) and our size limit.
        let limit = if *snaplen == 0 {
            MAX_RECORD_LEN
        } else {
            (*snaplen).min(MAX_RECORD_LEN)
        };
        let len = CLASSIC_RECORD_HEADER_LEN + h.caplen as usize;
        if h.caplen > limit || *pos + len > bytes.len() {
            return None;
        }
        Some(Record {
            len,
            start: CLASSIC_RECORD_HEADER_LEN,
            caplen: h.caplen as usize,
            ts_ns: classic::ts_ns(&h, *nanos),
            linktype: *linktype,
            orig_len: h.origlen,
        })
    }

    /// One classic pcap record (draft-ietf-opsawg-pcap 5).
    fn classic_step(&mut self) -> Step {
        let Mode::Classic {
            big_endian,
            nanos,
            record_header_len: hdr,
            linktype,
            snaplen,
        } = self.mode
        else {
            return Step::Stop("internal error: not a classic pcap".into());
        };
        let data = self.inner.data();
        if data.is_empty() && self.inner.reader_exhausted() {
            return Step::Eof;
        }
        let Some(h) = (data.len() >= hdr)
            .then(|| classic::record_head(data, big_endian))
            .flatten()
        else {
            return Step::NeedMore(hdr);
        };
        if h.caplen > MAX_RECORD_LEN {
            return Step::Stop(format!(
                "bad record at offset {}: captured length {} exceeds {MAX_RECORD_LEN} bytes (corrupt record header)",
                self.pos, h.caplen
            ));
        }
        let total = hdr + h.caplen as usize;
        if data.len() < total {
            return Step::NeedMore(total);
        }
        // draft 4: SnapLen is the maximum number of octets captured per packet. Writers do get
        // it wrong (Wireshark and libpcap accept such records), so it is only noted once.
        if snaplen != 0 && h.caplen > snaplen && !self.snaplen_warned {
            self.snaplen_warned = true;
            let msg = format!(
                "record at offset {}: captured length {} exceeds the file's snap length {snaplen} (kept)",
                self.pos, h.caplen
            );
            push_warning(&mut self.warnings, &mut self.suppressed, msg);
        }
        Step::Frame(Record {
            len: total,
            start: hdr,
            caplen: h.caplen as usize,
            ts_ns: classic::ts_ns(&h, nanos),
            linktype,
            orig_len: h.origlen,
        })
    }

    /// One ERF record (`erf`): a frame, or padding skipped.
    fn erf_step(&mut self) -> Step {
        let data = self.inner.data();
        if data.is_empty() && self.inner.reader_exhausted() {
            return Step::Eof;
        }
        let Some(h) = erf::head(data) else {
            return Step::NeedMore(erf::HEADER_LEN);
        };
        if h.rlen < erf::HEADER_LEN {
            return Step::Stop(format!(
                "bad ERF record at offset {}: record length {} is shorter than its {}-byte header",
                self.pos,
                h.rlen,
                erf::HEADER_LEN
            ));
        }
        if data.len() < h.rlen {
            return Step::NeedMore(h.rlen);
        }
        let Mode::Erf { tally } = &mut self.mode else {
            return Step::Stop("internal error: not an ERF capture".into());
        };
        tally.record(&h);
        if h.kind() == erf::types::PAD {
            // Padding records are no frames (Wireshark skips them too).
            return Step::Consume(h.rlen);
        }
        match erf::frame(&data[..h.rlen], &h) {
            Ok(f) => Step::Frame(Record {
                len: h.rlen,
                start: f.start,
                caplen: f.caplen,
                ts_ns: erf::ts_ns(h.ts),
                linktype: f.linktype,
                orig_len: u32::from(h.wlen).max(f.caplen as u32),
            }),
            Err(why) => Step::Stop(format!("bad ERF record at offset {}: {why}", self.pos)),
        }
    }

    /// What the format's records told beyond their frames (ERF's losses and flags), once
    /// reading ends.
    fn format_warnings(&mut self) {
        if let Mode::Erf { tally } = &mut self.mode {
            let told = std::mem::take(tally).warnings();
            for w in told {
                push_warning(&mut self.warnings, &mut self.suppressed, w);
            }
        }
    }

    /// One pcapng block (pcapng 3.1 framing, 4.x block types).
    fn pcapng_step(&mut self) -> Step {
        let Mode::Pcapng {
            big_endian,
            ref ifaces,
            ..
        } = self.mode
        else {
            return Step::Stop("internal error: not a pcapng".into());
        };
        let data = self.inner.data();
        if data.is_empty() && self.inner.reader_exhausted() {
            return Step::Eof;
        }
        let head = match pcapng::block_head(data, big_endian) {
            Head::Block(h) => h,
            Head::Short => return Step::NeedMore(12),
            Head::Invalid(m) => {
                return Step::Stop(format!("bad block at offset {}: {m}", self.pos))
            }
        };
        if data.len() < head.len {
            return Step::NeedMore(head.len);
        }
        let block = &data[..head.len];
        if let Err(m) = pcapng::trailer_ok(block, &head) {
            return Step::Stop(format!("bad block at offset {}: {m}", self.pos));
        }
        match head.btype {
            pcapng::EPB | pcapng::SPB | pcapng::OPB => {
                let p = match pcapng::packet(block, &head) {
                    Ok(p) => p,
                    Err(m) => {
                        return Step::Stop(format!("bad packet block at offset {}: {m}", self.pos))
                    }
                };
                let Some(iface) = ifaces.get(p.if_id as usize) else {
                    // pcapng 4.3: the interface id must refer to an IDB of the section.
                    return Step::Stop(format!(
                        "bad packet block at offset {}: interface {} is not defined (the section has {})",
                        self.pos,
                        p.if_id,
                        ifaces.len()
                    ));
                };
                let caplen = if head.btype == pcapng::SPB && iface.snaplen != 0 {
                    // pcapng 4.4: an SPB holds min(original length, snaplen) bytes.
                    p.caplen.min(iface.snaplen as usize)
                } else {
                    p.caplen
                };
                Step::Frame(Record {
                    len: head.len,
                    start: p.data_off,
                    caplen,
                    // pcapng 4.4: an SPB has no timestamp: repeat the previous one.
                    ts_ns: p.ts.map_or(self.last_ts, |t| iface.ts_ns(t)),
                    linktype: iface.linktype,
                    orig_len: p.orig_len,
                })
            }
            pcapng::SHB | pcapng::IDB => self.pcapng_header_block(head.len),
            t if pcapng::is_known_skipped(t) => Step::Consume(head.len),
            t => {
                if !self.unknown_blocks_warned.contains(&t) && self.unknown_blocks_warned.len() < 16
                {
                    self.unknown_blocks_warned.push(t);
                    let msg = format!(
                        "unknown block type 0x{t:08x} at offset {} ({} bytes) skipped",
                        self.pos, head.len
                    );
                    push_warning(&mut self.warnings, &mut self.suppressed, msg);
                }
                Step::Consume(head.len)
            }
        }
    }

    /// An SHB or IDB, parsed by pcap-parser (which also tracks the section's byte order).
    fn pcapng_header_block(&mut self, len: usize) -> Step {
        let pos = self.pos;
        let Mode::Pcapng {
            ref mut big_endian,
            ref mut ifaces,
            ref mut sections,
        } = self.mode
        else {
            return Step::Stop("internal error: not a pcapng".into());
        };
        let mut warning = None;
        let step = match self.inner.header_block(*big_endian) {
            Ok(Some(Block::SectionHeader(shb))) => {
                // pcapng 4.1: a new section starts; its interfaces replace the previous ones.
                *big_endian = shb.big_endian();
                ifaces.clear();
                *sections += 1;
                if shb.major_version != 1 {
                    Step::Stop(format!(
                        "SHB at offset {pos}: unsupported pcapng version {}.{}",
                        shb.major_version, shb.minor_version
                    ))
                } else {
                    Step::Consume(len)
                }
            }
            Ok(Some(Block::InterfaceDescription(idb))) => {
                let (iface, w) = Iface::from_idb(&idb, *big_endian);
                warning = w.map(|w| format!("IDB at offset {pos}: {w}"));
                ifaces.push(iface);
                Step::Consume(len)
            }
            Ok(_) => Step::Consume(len),
            Err(e) => Step::Stop(format!("bad block at offset {pos}: {e}")),
        };
        if let Some(w) = warning {
            push_warning(&mut self.warnings, &mut self.suppressed, w);
        }
        step
    }

    /// Makes `total` bytes available in the buffer (growing it if needed). False = reading
    /// ended with a warning.
    fn fill(&mut self, total: usize) -> bool {
        if total > self.capacity {
            // Bounded: classic records <= 256 KiB, pcapng blocks <= MAX_BLOCK_LEN (checked).
            let new_cap = total.next_power_of_two();
            self.inner.grow(new_cap);
            self.capacity = new_cap;
        }
        let what = match self.format {
            CaptureFormat::Pcap | CaptureFormat::Erf => "record",
            CaptureFormat::Pcapng => "block",
        };
        if self.inner.reader_exhausted() {
            let have = self.inner.data().len();
            self.stop(format!(
                "truncated {what} at offset {}: {have} of {total} bytes present at the end of the {}",
                self.pos,
                if self.compression.is_some() {
                    "decompressed stream"
                } else {
                    "file"
                }
            ));
            return false;
        }
        if self.inner.refill().is_err() {
            let (offset, msg) = self
                .shared
                .error
                .lock()
                .ok()
                .and_then(|mut e| e.take())
                .unwrap_or((self.pos, "read error".into()));
            let kind = match self.compression {
                Some(c) => format!("corrupt {} stream at decompressed offset", c.name()),
                None => "I/O error at offset".to_string(),
            };
            self.stop(format!(
                "{kind} {offset}: {msg}; the {what} at offset {} is incomplete",
                self.pos
            ));
            return false;
        }
        true
    }

    /// Ends reading with a warning.
    fn stop(&mut self, msg: String) {
        self.done = true;
        self.format_warnings();
        let msg = format!("{msg}; kept {} frames", self.frames);
        // The final warning is always kept, even past the limit.
        self.warnings.push(msg);
        self.flush_suppressed();
    }

    fn flush_suppressed(&mut self) {
        if self.suppressed > 0 {
            self.warnings
                .push(format!("{} more warnings not shown", self.suppressed));
            self.suppressed = 0;
        }
    }
}

/// Adds a warning, counting the ones past the limit.
fn push_warning(list: &mut Vec<String>, suppressed: &mut u64, msg: String) {
    if list.len() < MAX_WARNINGS {
        list.push(msg);
    } else {
        *suppressed += 1;
    }
}

/// A short description of a pcap-parser error (its Display dumps the whole input).
pub(super) fn describe(e: &PcapError<&[u8]>) -> String {
    match e {
        PcapError::NomError(_, kind) => format!("parse error ({kind:?})"),
        PcapError::OwnedNomError(_, kind) => format!("parse error ({kind:?})"),
        other => other.to_string(),
    }
}

/// The stream after a prefix that ran into a read error: its second read fails with that error.
/// The first read answers 0 bytes: pcap-parser's reader setup makes one read past the prefix and
/// fails outright on an error there, while an error met by a later refill ends reading with a
/// warning naming the offset (kept frames stay).
struct FailAfter(Option<std::io::Error>, bool);

impl Read for FailAfter {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        if !std::mem::replace(&mut self.1, true) {
            return Ok(0);
        }
        match self.0.take() {
            Some(e) => Err(e),
            None => Ok(0),
        }
    }
}
