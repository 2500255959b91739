//! Reads and checks the start of a capture before pcap-parser sees it: empty file, magic, the
//! file header (fatal errors), then more bytes up to the end of the first packet record, so that
//! a read or decompression error before the first frame is fatal too, while later ones become warnings.

use std::io::Read;

use super::classic::{self, Magic, FILE_HEADER_LEN, MAX_RECORD_LEN};
use super::erf;
use super::error::CaptureError;
use super::foreign::{foreign_compression, foreign_format, text_start};
use super::input::{fill_to, Compression};
use super::pcapng::{self, Head};

/// Read at least this much before looking at the file.
const PREFIX_MIN: usize = 64 * 1024;
/// Stop extending the prefix towards the first frame beyond this.
const PREFIX_MAX: usize = pcapng::MAX_BLOCK_LEN + PREFIX_MIN;

/// The inspected start of a capture.
pub(crate) struct Prefix {
    pub bytes: Vec<u8>,
    pub magic: Magic,
    /// Length of the file header (classic) or first SHB (pcapng).
    pub header_len: usize,
    /// Classic pcap: the record header length, and the old tcpdump variant it was told from
    /// when not the format's own (`classic::variant_record_header_len`).
    pub record_header_len: usize,
    pub variant: Option<&'static str>,
    /// A read (or decompression) error met after the first frame while filling the prefix: reading ends
    /// there with a warning, as for any later error.
    pub error: Option<std::io::Error>,
}

/// Result of looking for the end of something in the prefix.
enum Need {
    /// The prefix holds it.
    Have,
    /// The prefix must hold at least this many bytes.
    More(usize),
    /// Malformed: leave the reporting to the record loop.
    Stop,
}

/// Reads the prefix of the (decompressed) stream and checks the file header.
pub(crate) fn read_prefix(
    stream: &mut dyn Read,
    compression: Option<Compression>,
) -> Result<Prefix, CaptureError> {
    let mut bytes = Vec::with_capacity(PREFIX_MIN);
    let mut eof = false;
    // A read error ends the prefix; it is fatal unless the first frame was read before it.
    let mut late: Option<(u64, std::io::Error)> = None;
    let fatal = |late: Option<(u64, std::io::Error)>| {
        late.map(|(offset, source)| match compression {
            Some(c) => CaptureError::Decompress {
                compression: c.name(),
                offset,
                source,
            },
            None => CaptureError::Io { offset, source },
        })
    };
    fill(stream, &mut bytes, PREFIX_MIN, &mut eof, &mut late);
    if bytes.len() < 4 && late.is_some() {
        return Err(fatal(late).expect("checked"));
    }
    if bytes.is_empty() {
        return Err(CaptureError::Empty);
    }
    let Some(head4) = bytes.get(..4).and_then(|b| <[u8; 4]>::try_from(b).ok()) else {
        return Err(CaptureError::TruncatedHeader {
            format: "capture",
            offset: 0,
            have: bytes.len() as u64,
            need: 4,
        });
    };
    // Before the first frame, a read error explains a bad header better than the header does.
    let sniffed = classic::sniff(&head4).map_err(|e| {
        // What the file is instead, when its first bytes say so.
        let other = match e {
            CaptureError::BadMagic { magic } => foreign_compression(&bytes)
                .map(|(format, tool)| CaptureError::Compressed { format, tool })
                .or_else(|| {
                    foreign_format(&bytes).map(|format| CaptureError::OtherFormat { magic, format })
                })
                .or_else(|| {
                    text_start(&bytes).map(|(start, advice)| CaptureError::Text {
                        magic,
                        start,
                        advice,
                    })
                }),
            _ => None,
        };
        // ERF has no magic: its first records tell it, once no format with a magic or text did.
        let erf = other.is_none()
            && late.is_none()
            && matches!(e, CaptureError::BadMagic { .. })
            && erf::looks_like(&bytes, eof);
        (!erf).then(|| fatal(late.take()).or(other).unwrap_or(e))
    });
    let magic = match sniffed {
        Ok(m) => m,
        Err(None) => Magic::Erf,
        Err(Some(e)) => return Err(e),
    };
    let header_len = loop {
        match header_end(magic, &bytes) {
            Ok(None) => break Ok(header_len(magic, &bytes)),
            Ok(Some(n)) if !eof && n <= PREFIX_MAX => {
                fill(stream, &mut bytes, n, &mut eof, &mut late)
            }
            Ok(Some(n)) => {
                break Err(CaptureError::TruncatedHeader {
                    format: magic.format().as_str(),
                    offset: 0,
                    have: bytes.len() as u64,
                    need: n as u64,
                })
            }
            Err(reason) => {
                break Err(CaptureError::BadHeader {
                    format: magic.format().as_str(),
                    offset: 0,
                    reason,
                })
            }
        }
    }
    .map_err(|e| fatal(late.take()).unwrap_or(e))?;
    // Extend to the end of the first packet record (or give up on malformed data: the record
    // loop reports that with its offset).
    let mut walk = FirstFrame::default();
    let first_frame = loop {
        match walk.end(magic, &bytes) {
            Need::Have => break true,
            Need::More(n) if !eof && n <= PREFIX_MAX => {
                fill(stream, &mut bytes, n, &mut eof, &mut late)
            }
            _ => break false,
        }
    };
    let error = match late {
        Some((_, source)) if first_frame => Some(source),
        Some(l) => return Err(fatal(Some(l)).expect("some")),
        None => None,
    };
    let (record_header_len, variant) = match magic {
        Magic::Classic {
            big_endian,
            nanos,
            modified,
        } => classic::variant_record_header_len(&bytes, big_endian, nanos, modified),
        Magic::Pcapng | Magic::Erf => (0, None),
    };
    Ok(Prefix {
        bytes,
        magic,
        header_len,
        record_header_len,
        variant,
        error,
    })
}

/// Reads until `bytes` holds `want` bytes; `eof` when the stream ended (or failed) before. The
/// first read error is kept in `late`.
fn fill(
    stream: &mut dyn Read,
    bytes: &mut Vec<u8>,
    want: usize,
    eof: &mut bool,
    late: &mut Option<(u64, std::io::Error)>,
) {
    let res = fill_to(stream, bytes, want);
    *eof = bytes.len() < want;
    if let Err(source) = res {
        late.get_or_insert((bytes.len() as u64, source));
    }
}

fn header_len(magic: Magic, bytes: &[u8]) -> usize {
    match magic {
        Magic::Classic { .. } => FILE_HEADER_LEN,
        // No file header: records from the first byte.
        Magic::Erf => 0,
        Magic::Pcapng => match pcapng::block_head(bytes, false) {
            Head::Block(h) => h.len,
            _ => pcapng::SHB_MIN_LEN,
        },
    }
}

/// Is the whole file header in `bytes`? Ok(None) = yes, Ok(Some(n)) = `n` bytes needed,
/// Err = invalid header.
fn header_end(magic: Magic, bytes: &[u8]) -> Result<Option<usize>, String> {
    match magic {
        // draft-ietf-opsawg-pcap 4: fixed 24-byte header.
        Magic::Classic { .. } => Ok((bytes.len() < FILE_HEADER_LEN).then_some(FILE_HEADER_LEN)),
        Magic::Erf => Ok(None),
        // pcapng 4.1: the file starts with a complete SHB, major version 1.
        Magic::Pcapng => {
            let h = match pcapng::block_head(bytes, false) {
                Head::Block(h) => h,
                Head::Short => return Ok(Some(12)),
                Head::Invalid(m) => return Err(m),
            };
            if bytes.len() < h.len {
                return Ok(Some(h.len));
            }
            pcapng::trailer_ok(&bytes[..h.len], &h)?;
            let major = bytes
                .get(12..14)
                .map(|b| {
                    let b = [b[0], b[1]];
                    if h.big_endian {
                        u16::from_be_bytes(b)
                    } else {
                        u16::from_le_bytes(b)
                    }
                })
                .unwrap_or(0);
            if major != 1 {
                return Err(format!("unsupported pcapng major version {major}"));
            }
            Ok(None)
        }
    }
}

/// Looks for the end of the first packet record; pcapng blocks already walked are not walked
/// again when the prefix grows.
#[derive(Default)]
struct FirstFrame {
    /// Start of the first pcapng block not yet known to be complete.
    pos: usize,
    /// Byte order of the section at `pos`.
    big_endian: bool,
}

impl FirstFrame {
    fn end(&mut self, magic: Magic, bytes: &[u8]) -> Need {
        match magic {
            Magic::Classic {
                big_endian,
                modified,
                ..
            } => {
                // draft-ietf-opsawg-pcap 5: the first record follows the 24-byte header.
                let hdr = classic::record_header_len(modified);
                let start = FILE_HEADER_LEN;
                let rec = bytes.get(start..).unwrap_or(&[]);
                if rec.len() < hdr {
                    return Need::More(start + hdr);
                }
                match classic::record_head(rec, big_endian) {
                    Some(h) if h.caplen <= MAX_RECORD_LEN => {
                        let end = start + hdr + h.caplen as usize;
                        if bytes.len() >= end {
                            Need::Have
                        } else {
                            Need::More(end)
                        }
                    }
                    _ => Need::Stop,
                }
            }
            Magic::Erf => match erf::head(bytes) {
                Some(h) if h.rlen >= erf::HEADER_LEN && bytes.len() >= h.rlen => Need::Have,
                Some(h) if h.rlen >= erf::HEADER_LEN => Need::More(h.rlen),
                Some(_) => Need::Stop,
                None => Need::More(erf::HEADER_LEN),
            },
            Magic::Pcapng => loop {
                let Some(rest) = bytes.get(self.pos..) else {
                    return Need::Stop;
                };
                let h = match pcapng::block_head(rest, self.big_endian) {
                    Head::Block(h) => h,
                    Head::Short => return Need::More(self.pos + 12),
                    Head::Invalid(_) => return Need::Stop,
                };
                if rest.len() < h.len {
                    return Need::More(self.pos + h.len);
                }
                if pcapng::is_packet(h.btype) {
                    return Need::Have;
                }
                if h.btype == pcapng::SHB {
                    self.big_endian = h.big_endian;
                }
                self.pos += h.len;
                if self.pos > PREFIX_MAX {
                    return Need::Stop;
                }
            },
        }
    }
}
