//! SCTP wire format (RFC 9260 and extensions): packet views over byte buffers and typed chunks.
//!
//! `wire` holds the zero-copy views (`SctpPacket<T: AsRef<[u8]>>`, chunk iteration) and the chunk
//! decoder, `param` the parameters inside chunks, `error` what can be wrong in the bytes, `chunk`
//! the typed representation parsed once per chunk, `crc32c` the checksum check (RFC 9260 6.8).

pub mod adler32;
pub mod cause;
pub mod chunk;
pub mod crc32c;
pub mod error;
mod param;
pub mod wire;

pub use chunk::*;
pub use error::*;
pub use wire::*;
