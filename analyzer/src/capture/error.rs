//! Fatal capture errors: problems that stop a capture from being read at all.
//!
//! Problems after the file header (and, for I/O and decompression, after the first frame) are not errors:
//! they end reading with a warning (see [`super::CaptureReader::warnings`]).

use std::io;

/// Why a capture could not be opened. Every variant that has a position names the byte offset in
/// the (decompressed) capture stream.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// Reading the file failed before the first frame.
    #[error("I/O error at offset {offset}: {source}")]
    Io {
        offset: u64,
        #[source]
        source: io::Error,
    },
    /// The file (or the decompressed stream) holds no byte at all.
    #[error("empty file at offset 0: not a pcap or pcapng file")]
    Empty,
    /// The first four bytes are neither a pcap nor a pcapng magic number.
    #[error("bad magic 0x{magic:08x} at offset 0: not a pcap or pcapng file")]
    BadMagic { magic: u32 },
    /// The file is compressed in a format that is not read directly (xz, bzip2, zip, 7z).
    #[error("{format}-compressed file (magic at offset 0): decompress it first ({tool}), or compress it with gzip, zstd or lz4, which are read directly")]
    Compressed {
        format: &'static str,
        tool: &'static str,
    },
    /// The capture format of another tool (`foreign::FORMATS`), which Wireshark reads.
    #[error("bad magic 0x{magic:08x} at offset 0: not a pcap or pcapng file but a {format} capture: convert it with Wireshark's editcap (editcap -F pcapng FILE FILE.pcapng) and analyse the result")]
    OtherFormat { magic: u32, format: &'static str },
    /// Text where a capture was expected (a dissection, a hex dump, a saved web page).
    #[error("bad magic 0x{magic:08x} at offset 0: not a pcap or pcapng file but text (it starts \"{start}\"): {advice}")]
    Text {
        magic: u32,
        start: String,
        advice: &'static str,
    },
    /// A known magic, but a format variant this reader does not support.
    #[error("unsupported {what} (magic 0x{magic:08x} at offset 0)")]
    Unsupported { what: &'static str, magic: u32 },
    /// The file ends inside its header (classic pcap: 24 bytes; pcapng: the first Section Header
    /// Block).
    #[error("truncated {format} file header at offset {offset}: {have} of {need} bytes")]
    TruncatedHeader {
        format: &'static str,
        offset: u64,
        have: u64,
        need: u64,
    },
    /// The header is there but its content is invalid (pcapng byte-order magic, block length,
    /// version).
    #[error("bad {format} file header at offset {offset}: {reason}")]
    BadHeader {
        format: &'static str,
        offset: u64,
        reason: String,
    },
    /// The compressed stream (gzip, zstd, LZ4) is corrupt before the first frame could be read.
    #[error(
        "corrupt {compression} stream at decompressed offset {offset} (before the first frame): {source}"
    )]
    Decompress {
        compression: &'static str,
        offset: u64,
        #[source]
        source: io::Error,
    },
}

impl CaptureError {
    /// The byte offset the error refers to, where it has one.
    pub fn offset(&self) -> Option<u64> {
        match self {
            CaptureError::Io { offset, .. }
            | CaptureError::TruncatedHeader { offset, .. }
            | CaptureError::BadHeader { offset, .. }
            | CaptureError::Decompress { offset, .. } => Some(*offset),
            CaptureError::Empty
            | CaptureError::Compressed { .. }
            | CaptureError::OtherFormat { .. }
            | CaptureError::Text { .. }
            | CaptureError::BadMagic { .. }
            | CaptureError::Unsupported { .. } => Some(0),
        }
    }
}
