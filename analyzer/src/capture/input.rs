//! Byte sources under the capture reader: a counter of raw input bytes (for progress), detection
//! and decoding of compressed captures (gzip, zstd, LZ4), and a "prefix" reader that serves the already-inspected start of the stream and
//! then records the first read error (with its offset) that pcap-parser would otherwise reduce to
//! a bare `ReadError`.

use std::io::{self, BufRead, BufReader, ErrorKind, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// gzip member magic (RFC 1952 2.3.1: ID1 = 0x1f, ID2 = 0x8b).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// zstd frame magic, little-endian (RFC 8878 3.1.1).
const ZSTD_MAGIC: u32 = 0xFD2F_B528;
/// zstd skippable frames (RFC 8878 3.1.2): 0x184D2A50 to 0x184D2A5F, little-endian; `pzstd`
/// starts its output with one.
const ZSTD_SKIPPABLE: u32 = 0x184D_2A50;
/// LZ4 frame magic, little-endian (LZ4 Frame Format 1.6.4, "General structure").
const LZ4_MAGIC: u32 = 0x184D_2204;

/// How a capture file is compressed: each is sniffed by its magic and decoded as a stream, the
/// way Wireshark reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    Gzip,
    Zstd,
    Lz4,
}

impl Compression {
    /// The compression whose magic starts `head`, if any.
    pub(crate) fn sniff(head: &[u8]) -> Option<Compression> {
        if head.starts_with(&GZIP_MAGIC) {
            return Some(Compression::Gzip);
        }
        let m = u32::from_le_bytes(head.get(..4)?.try_into().ok()?);
        match m {
            ZSTD_MAGIC => Some(Compression::Zstd),
            _ if m & !0xF == ZSTD_SKIPPABLE => Some(Compression::Zstd),
            LZ4_MAGIC => Some(Compression::Lz4),
            _ => None,
        }
    }

    /// Its name in reports and messages.
    pub fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Lz4 => "lz4",
        }
    }
}

/// The largest zstd window decoded (2 GiB, what `zstd --long=31` writes): libzstd refuses more
/// than 128 MiB unless told (RFC 8878 3.1.1.1.2 lets a frame ask up to 3.75 TiB).
const ZSTD_WINDOW_LOG_MAX: u32 = 31;
/// Windows above this (libzstd's default limit) are told in a warning: they cost their size in
/// memory.
pub(crate) const ZSTD_WINDOW_TOLD: u64 = 128 << 20;

/// The window the first zstd frame of `head` needs (RFC 8878 3.1.1.1: after skippable frames,
/// 3.1.2; from the Window_Descriptor, or the Frame_Content_Size of a single-segment frame), if
/// `head` holds its header.
pub(crate) fn zstd_window(head: &[u8]) -> Option<u64> {
    let mut at = 0;
    loop {
        let m = u32::from_le_bytes(head.get(at..at + 4)?.try_into().ok()?);
        if m & !0xF == ZSTD_SKIPPABLE {
            let size = u32::from_le_bytes(head.get(at + 4..at + 8)?.try_into().ok()?);
            at += 8 + size as usize;
            continue;
        }
        if m != ZSTD_MAGIC {
            return None;
        }
        break;
    }
    // Frame_Header_Descriptor: FCS flag (bits 7-6), Single_Segment (5), Dictionary_ID flag (1-0).
    let fhd = *head.get(at + 4)?;
    let single = fhd & 0x20 != 0;
    if !single {
        // Window_Descriptor: Exponent (5 bits), Mantissa (3 bits).
        let wd = *head.get(at + 5)?;
        let base = 1u64 << (10 + (wd >> 3));
        return Some(base + (base / 8) * u64::from(wd & 7));
    }
    let did = [0, 1, 2, 4][usize::from(fhd & 3)];
    let fcs_at = at + 5 + did;
    let fcs = match fhd >> 6 {
        0 => u64::from(*head.get(fcs_at)?),
        1 => {
            u64::from(u16::from_le_bytes(
                head.get(fcs_at..fcs_at + 2)?.try_into().ok()?,
            )) + 256
        }
        2 => u64::from(u32::from_le_bytes(
            head.get(fcs_at..fcs_at + 4)?.try_into().ok()?,
        )),
        _ => u64::from_le_bytes(head.get(fcs_at..fcs_at + 8)?.try_into().ok()?),
    };
    Some(fcs)
}

/// State shared between the reader chain (moved into pcap-parser) and the `CaptureReader`.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// Raw (compressed, if gzip) bytes read from the input so far.
    pub input_bytes: AtomicU64,
    /// First read error after the prefix: (decompressed stream offset, message).
    pub error: Mutex<Option<(u64, String)>>,
}

/// Counts the bytes read from the underlying input.
pub(crate) struct Counting<R> {
    inner: R,
    shared: Arc<Shared>,
}

impl<R: Read> Counting<R> {
    pub fn new(inner: R, shared: Arc<Shared>) -> Self {
        Counting { inner, shared }
    }
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.shared
            .input_bytes
            .fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Wraps the raw input: buffers it, sniffs a compression's magic and, if one is found, puts its
/// decoder in front: gzip members (RFC 1952 2.2: a file may hold several), zstd frames (RFC 8878
/// 3.1: several, skippable ones among them) or LZ4 frames, each read to the end of the input.
/// Returns the decoded stream, its compression and, for zstd, the window its first frame needs.
pub(crate) fn open_stream(raw: Box<dyn Read + Send>, shared: &Arc<Shared>) -> io::Result<Opened> {
    let mut buffered = BufReader::with_capacity(64 * 1024, Counting::new(raw, shared.clone()));
    // fill_buf returns fewer bytes than a magic only at the end of a tiny input: then it is
    // none (and no capture either, which the header check says).
    let head = loop {
        match buffered.fill_buf() {
            Ok(b) => break b,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    };
    let compression = Compression::sniff(head);
    let window = (compression == Some(Compression::Zstd))
        .then(|| zstd_window(head))
        .flatten();
    let stream: Box<dyn Read + Send> = match compression {
        None => Box::new(buffered),
        Some(Compression::Gzip) => Box::new(flate2::bufread::MultiGzDecoder::new(buffered)),
        Some(Compression::Zstd) => {
            let mut z = zstd::stream::read::Decoder::with_buffer(buffered)?;
            // Captures compressed with `zstd --long` ask for windows past libzstd's default.
            z.window_log_max(ZSTD_WINDOW_LOG_MAX)?;
            Box::new(z)
        }
        Some(Compression::Lz4) => Box::new(Lz4Frames {
            frame: Some(lz4::Decoder::new(buffered)?),
        }),
    };
    Ok((stream, compression, window))
}

/// A byte source opened by `open_stream`: the decoded stream, its compression, the zstd window.
pub(crate) type Opened = (Box<dyn Read + Send>, Option<Compression>, Option<u64>);

/// LZ4 frames one after another (a file of several, as concatenating `.lz4` files makes), each
/// decoded in turn to the end of the input. An input that ends inside a frame is an error, not
/// an early end.
struct Lz4Frames<R: BufRead> {
    frame: Option<lz4::Decoder<R>>,
}

impl<R: BufRead> Read for Lz4Frames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(frame) = self.frame.as_mut() else {
                return Ok(0);
            };
            let n = frame.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            // The frame decoder reads exactly up to its frame's end (it asks for the bytes it
            // needs): what follows is the next frame, or nothing.
            let (mut rest, ended) = self.frame.take().expect("a frame").finish();
            if ended.is_err() {
                return Err(io::Error::new(
                    ErrorKind::UnexpectedEof,
                    "the input ends inside an LZ4 frame",
                ));
            }
            if rest.fill_buf()?.is_empty() {
                return Ok(0);
            }
            self.frame = Some(lz4::Decoder::new(rest)?);
        }
    }
}

/// Reads until `buf` holds `want` bytes or the stream ends. Returns the read error, if any
/// (bytes read before it stay in `buf`).
pub(crate) fn fill_to(r: &mut dyn Read, buf: &mut Vec<u8>, want: usize) -> io::Result<()> {
    let mut chunk = [0u8; 16 * 1024];
    while buf.len() < want {
        let n = (want - buf.len()).min(chunk.len());
        match r.read(&mut chunk[..n]) {
            Ok(0) => return Ok(()),
            Ok(k) => buf.extend_from_slice(&chunk[..k]),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Serves `prefix` first, then the rest of the stream. Read errors of the rest are stored in
/// `shared.error` with the stream offset where they happened (pcap-parser keeps only
/// "ReadError").
pub(crate) struct Prefixed {
    prefix: Vec<u8>,
    pos: usize,
    inner: Box<dyn Read + Send>,
    /// Stream offset of the next byte `inner` returns.
    offset: u64,
    shared: Arc<Shared>,
}

impl Prefixed {
    pub fn new(prefix: Vec<u8>, inner: Box<dyn Read + Send>, shared: Arc<Shared>) -> Self {
        let offset = prefix.len() as u64;
        Prefixed {
            prefix,
            pos: 0,
            inner,
            offset,
            shared,
        }
    }
}

impl Read for Prefixed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos < self.prefix.len() {
            let n = (self.prefix.len() - self.pos).min(buf.len());
            buf[..n].copy_from_slice(&self.prefix[self.pos..self.pos + n]);
            self.pos += n;
            if self.pos == self.prefix.len() {
                // Free the prefix: it is never read again.
                self.prefix = Vec::new();
                self.pos = 0;
            }
            return Ok(n);
        }
        loop {
            match self.inner.read(buf) {
                Ok(n) => {
                    self.offset += n as u64;
                    return Ok(n);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    if let Ok(mut slot) = self.shared.error.lock() {
                        slot.get_or_insert((self.offset, e.to_string()));
                    }
                    return Err(e);
                }
            }
        }
    }
}
