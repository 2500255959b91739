//! Streaming capture reading: classic pcap, pcapng and Endace ERF, plain or compressed (gzip, zstd, LZ4), one
//! frame at a time.
//!
//! The reader never holds the whole file: it wraps `pcap_parser`'s streaming reader over a
//! buffered (and, when compressed, decompressing) byte source. Errors in the file header are fatal;
//! errors after at least the header parsed (truncated last record, garbage) end reading with a
//! warning that names the byte offset, and everything read before stays valid.

mod classic;
mod erf;
mod error;
mod foreign;
mod header;
mod in_place;
mod input;
mod pcapng;
mod reader;
pub mod rotation;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_compressed;
#[cfg(test)]
mod testutil;

pub use error::CaptureError;
pub use input::Compression;
pub use reader::CaptureReader;

/// Container format of a capture file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CaptureFormat {
    Pcap,
    Pcapng,
    /// Endace ERF (DAG capture cards), read record by record (`erf`).
    Erf,
}

impl CaptureFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            CaptureFormat::Pcap => "pcap",
            CaptureFormat::Pcapng => "pcapng",
            CaptureFormat::Erf => "erf",
        }
    }
}

/// One captured frame, borrowed from the reader's buffer.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    /// 1-based frame number, as Wireshark counts them.
    pub number: u64,
    /// Capture timestamp in nanoseconds since the Unix epoch.
    pub ts_ns: i64,
    /// Link type (DLT / LINKTYPE_ value) of the interface the frame was captured on.
    pub linktype: u32,
    /// The captured bytes (possibly cut by the snap length).
    pub data: &'a [u8],
    /// The frame's length on the wire.
    pub orig_len: u32,
    /// Byte offset of the frame's record in the (decompressed) capture stream.
    pub offset: u64,
}
