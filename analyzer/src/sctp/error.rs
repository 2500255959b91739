//! What can be wrong in SCTP bytes: a common header too short to read (`WireError`) and a chunk
//! that cannot be walked or decoded (`ChunkError`, RFC 9260 3.2), with where.

use thiserror::Error;

use super::chunk::chunk_type_name;

/// The common header could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum WireError {
    #[error("SCTP packet of {0} bytes is shorter than the 12-byte common header")]
    TooShort(usize),
}

/// A chunk that could not be walked or decoded; `offset` is the chunk's offset in the SCTP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("SCTP chunk at offset {offset}: {kind}")]
pub struct ChunkError {
    pub offset: usize,
    pub kind: ChunkErrorKind,
}

/// What is wrong with a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ChunkErrorKind {
    /// Chunk Length field below the 4-byte chunk header (RFC 9260 3.2); ends the walk.
    #[error("chunk length {0} < 4")]
    LengthTooSmall(u16),
    /// Chunk Length goes past the end of the (fully captured) packet.
    #[error("chunk length {length} goes past the packet end ({available} bytes left)")]
    PastEnd { length: u16, available: usize },
    /// 1 to 3 bytes after the last chunk: too few for a chunk header.
    #[error("{0} trailing bytes after the last chunk")]
    TrailingBytes(usize),
    /// The chunk (header included) is shorter than its fixed fields; `need`/`have` count the
    /// whole chunk in bytes, `have` being what was captured for a truncated chunk.
    #[error("{} chunk of {have} bytes, needs at least {need}", chunk_type_name(*.ctype))]
    ValueTooShort { ctype: u8, need: usize, have: usize },
    /// A malformed parameter or error cause; `offset` is from the start of the chunk.
    #[error("bad parameter at chunk offset {offset}: {what}")]
    BadParameter { offset: usize, what: &'static str },
}
