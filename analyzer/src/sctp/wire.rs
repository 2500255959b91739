//! SCTP chunk walking over packet bytes: `SctpPacket` view and `ChunkView` iteration (RFC 9260 3).
//!
//! In the style of smoltcp `wire`: `SctpPacket<T: AsRef<[u8]>>` is a view over a buffer,
//! `SctpPacket::chunks` walks the chunks without allocating, and `ChunkView::parse` decodes one
//! chunk into the typed `Chunk` of `chunk.rs`. Nothing here panics or loops on malformed input.
//!
//! Length conventions of the parsed types: `DataChunk::payload_len`, `CookieEcho::cookie_len` and
//! `Pad::len` come from the chunk Length field (announced, not captured); `InitParam::StateCookie`
//! and `InitParam::Padding` `len` are the bytes after the 4-byte parameter header; the `len` of
//! `InitParam::{Auth, Other}`, `AsconfParam::Other`, `ErrorCause` and `ReconfigParam` is the
//! parameter Length field as on the wire (header included, padding excluded).

use std::borrow::Cow;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use thiserror::Error;

use super::chunk::{
    chunk_type_name, types, AsconfChunk, AsconfParam, Chunk, DataChunk, ErrorCause, InitChunk,
    InitParam, ReconfigParam, SackChunk,
};

/// Length of the SCTP common header (RFC 9260 3.1).
pub const COMMON_HEADER_LEN: usize = 12;
/// Length of a chunk header: type, flags, length (RFC 9260 3.2).
pub const CHUNK_HEADER_LEN: usize = 4;

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

/// A view of an SCTP packet (common header + chunks) over a byte buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SctpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> SctpPacket<T> {
    /// Wraps a buffer without checking its length: the header accessors panic below 12 bytes.
    pub const fn new_unchecked(buffer: T) -> Self {
        SctpPacket { buffer }
    }

    /// Wraps a buffer holding at least the 12-byte common header (RFC 9260 3.1).
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let len = buffer.as_ref().len();
        if len < COMMON_HEADER_LEN {
            return Err(WireError::TooShort(len));
        }
        Ok(SctpPacket { buffer })
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn be16(&self, at: usize) -> u16 {
        be16(self.buffer.as_ref(), at)
    }

    pub fn src_port(&self) -> u16 {
        self.be16(0)
    }

    pub fn dst_port(&self) -> u16 {
        self.be16(2)
    }

    pub fn verification_tag(&self) -> u32 {
        be32(self.buffer.as_ref(), 4)
    }

    /// The checksum field read big-endian, as tshark displays it. The CRC32c itself is stored
    /// little-endian (see `crc32c`); use `verify_checksum` to check it.
    pub fn checksum(&self) -> u32 {
        be32(self.buffer.as_ref(), 8)
    }

    /// CRC32c check of the whole packet (RFC 9260 6.8); false for a packet cut by the capture.
    pub fn verify_checksum(&self) -> bool {
        super::crc32c::verify(self.buffer.as_ref())
    }

    /// The bytes after the common header (the chunks), empty if the buffer is too short.
    pub fn payload(&self) -> &[u8] {
        self.buffer.as_ref().get(COMMON_HEADER_LEN..).unwrap_or(&[])
    }

    /// Walks the chunks. `missing` is how many bytes of this packet the capture cut off (snap
    /// length), 0 for a fully captured packet.
    pub fn chunks(&self, missing: usize) -> ChunkIter<'_> {
        ChunkIter::new(self.buffer.as_ref(), missing)
    }
}

impl<'a> SctpPacket<&'a [u8]> {
    /// Like `chunks`, but the views borrow the underlying bytes rather than this packet view.
    pub fn into_chunks(self, missing: usize) -> ChunkIter<'a> {
        ChunkIter::new(self.buffer, missing)
    }
}

/// One chunk as found in the packet: header fields and its (captured) value bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkView<'a> {
    pub ctype: u8,
    pub flags: u8,
    /// The chunk Length field (header included, padding excluded).
    pub length: u16,
    /// The captured bytes after the 4-byte chunk header, at most `length - 4`.
    pub value: &'a [u8],
    /// Offset of the chunk inside the SCTP packet.
    pub offset: usize,
    /// The capture cut this chunk: `value` is shorter than `length - 4`.
    pub truncated: bool,
}

/// Iterator over the chunks of an SCTP packet; see `SctpPacket::chunks`. Fused: after an error
/// or a truncated chunk it returns `None`.
#[derive(Debug, Clone)]
pub struct ChunkIter<'a> {
    packet: &'a [u8],
    pos: usize,
    missing: usize,
    done: bool,
}

impl<'a> ChunkIter<'a> {
    /// Walks the chunks of `packet` (common header included; a shorter packet has no chunks).
    pub fn new(packet: &'a [u8], missing: usize) -> Self {
        ChunkIter {
            packet,
            pos: COMMON_HEADER_LEN.min(packet.len()),
            missing,
            done: false,
        }
    }

    fn fail(&mut self, kind: ChunkErrorKind) -> Option<Result<ChunkView<'a>, ChunkError>> {
        self.done = true;
        Some(Err(ChunkError {
            offset: self.pos,
            kind,
        }))
    }
}

impl<'a> Iterator for ChunkIter<'a> {
    type Item = Result<ChunkView<'a>, ChunkError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let rest = &self.packet[self.pos..];
        if rest.is_empty() {
            self.done = true;
            return None;
        }
        if rest.len() < CHUNK_HEADER_LEN {
            if self.missing > 0 {
                // The capture cut the chunk header itself: nothing to report.
                self.done = true;
                return None;
            }
            return self.fail(ChunkErrorKind::TrailingBytes(rest.len()));
        }
        let (ctype, flags, length) = (rest[0], rest[1], be16(rest, 2));
        let len = usize::from(length);
        // RFC 9260 3.2: the Length field counts the 4-byte header, so it is at least 4.
        if len < CHUNK_HEADER_LEN {
            return self.fail(ChunkErrorKind::LengthTooSmall(length));
        }
        let offset = self.pos;
        let truncated = len > rest.len();
        if truncated {
            // A chunk cut by the snap length is still reported, as far as captured, and ends the
            // walk; unless its length goes past the original packet end too.
            let available = rest.len().saturating_add(self.missing);
            if self.missing == 0 || len > available {
                return self.fail(ChunkErrorKind::PastEnd { length, available });
            }
            self.done = true;
        } else {
            // RFC 9260 3.2: chunks are padded to a multiple of 4 bytes, padding not in Length.
            // A missing final padding is tolerated.
            self.pos = (self.pos + ((len + 3) & !3)).min(self.packet.len());
        }
        Some(Ok(ChunkView {
            ctype,
            flags,
            length,
            value: &rest[CHUNK_HEADER_LEN..len.min(rest.len())],
            offset,
            truncated,
        }))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.done {
            (0, Some(0))
        } else {
            (0, Some((self.packet.len() - self.pos).div_ceil(4)))
        }
    }
}

impl std::iter::FusedIterator for ChunkIter<'_> {}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Takes up to `n` bytes off the front of `rest`, rounded down to whole 4-byte entries.
fn take4<'a>(rest: &mut &'a [u8], n: usize) -> &'a [u8] {
    let n = n.min(rest.len()) & !3;
    let (head, tail) = rest.split_at(n);
    *rest = tail;
    head
}

/// Parameter / error cause type numbers used below.
mod ptypes {
    pub const IPV4: u16 = 5;
    pub const IPV6: u16 = 6;
    pub const STATE_COOKIE: u16 = 7;
    pub const COOKIE_PRESERVATIVE: u16 = 9;
    pub const HOST_NAME: u16 = 11;
    pub const SUPPORTED_ADDRESS_TYPES: u16 = 12;
    pub const ECN_CAPABLE: u16 = 0x8000;
    pub const RANDOM: u16 = 0x8002;
    pub const CHUNK_LIST: u16 = 0x8003;
    pub const HMAC_ALGO: u16 = 0x8004;
    pub const PADDING: u16 = 0x8005;
    pub const SUPPORTED_EXTENSIONS: u16 = 0x8008;
    pub const FORWARD_TSN_SUPPORTED: u16 = 0xC000;
    pub const ADD_IP: u16 = 0xC001;
    pub const DELETE_IP: u16 = 0xC002;
    pub const SET_PRIMARY: u16 = 0xC004;
    pub const SUCCESS: u16 = 0xC005;
    pub const ADAPTATION: u16 = 0xC006;
    // RFC 5061 4.2.3: Error Cause Indication is 0xC003.
    pub const ERROR_CAUSE_INDICATION: u16 = 0xC003;
    pub const OUT_SSN_RESET: u16 = 13;
    pub const IN_SSN_RESET: u16 = 14;
    pub const SSN_TSN_RESET: u16 = 15;
    pub const RECONFIG_RESPONSE: u16 = 16;
    pub const ADD_OUT_STREAMS: u16 = 17;
    pub const ADD_IN_STREAMS: u16 = 18;
}

/// One type-length-value parameter (RFC 9260 3.2.1) or error cause (3.3.10) inside a chunk.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tlv<'a> {
    pub(crate) ptype: u16,
    /// The Length field (header included, padding excluded), >= 4.
    pub(crate) len: u16,
    /// Captured bytes after the 4-byte header, at most `len - 4`.
    pub(crate) body: &'a [u8],
    /// All `len - 4` body bytes were captured.
    pub(crate) complete: bool,
    /// Offset of the parameter from the start of the chunk.
    pub(crate) offset: usize,
}

impl Tlv<'_> {
    fn bad(&self, what: &'static str) -> ChunkErrorKind {
        ChunkErrorKind::BadParameter {
            offset: self.offset,
            what,
        }
    }

    /// RFC minimum of the Length field.
    fn need_len(&self, min: u16, what: &'static str) -> Result<(), ChunkErrorKind> {
        if self.len < min {
            return Err(self.bad(what));
        }
        Ok(())
    }

    /// The u32 at `at` in the body if captured.
    fn u32_at(&self, at: usize) -> Option<u32> {
        (self.body.len() >= at + 4).then(|| be32(self.body, at))
    }

    /// The whole body if it was captured.
    fn full_body(&self) -> Option<&[u8]> {
        self.complete.then_some(self.body)
    }
}

/// Walks the parameters of a chunk value (`base` = offset of `bytes` from the chunk start).
/// In a truncated chunk a cut parameter is yielded with `complete == false` and ends the walk.
#[derive(Debug, Clone)]
pub(crate) struct TlvIter<'a> {
    bytes: &'a [u8],
    pos: usize,
    base: usize,
    truncated: bool,
    done: bool,
}

impl<'a> TlvIter<'a> {
    pub(crate) fn new(bytes: &'a [u8], base: usize, truncated: bool) -> Self {
        TlvIter {
            bytes,
            pos: 0,
            base,
            truncated,
            done: false,
        }
    }

    fn fail(&mut self, what: &'static str) -> Option<Result<Tlv<'a>, ChunkErrorKind>> {
        self.done = true;
        Some(Err(ChunkErrorKind::BadParameter {
            offset: self.base + self.pos,
            what,
        }))
    }
}

impl<'a> Iterator for TlvIter<'a> {
    type Item = Result<Tlv<'a>, ChunkErrorKind>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let rest = &self.bytes[self.pos..];
        if rest.len() < 4 {
            self.done = true;
            // Zero bytes left over are padding (some stacks count the last parameter's padding
            // in the chunk length, RFC 9260 3.2); a cut header ends a truncated chunk quietly.
            if self.truncated || rest.iter().all(|&b| b == 0) {
                return None;
            }
            return self.fail("trailing bytes shorter than a parameter header");
        }
        let ptype = be16(rest, 0);
        let len = be16(rest, 2);
        let n = usize::from(len);
        // RFC 9260 3.2.1: the parameter Length includes its 4-byte header.
        if n < 4 {
            return self.fail("parameter length < 4");
        }
        let offset = self.base + self.pos;
        if n > rest.len() {
            if !self.truncated {
                return self.fail("parameter length past the chunk end");
            }
            self.done = true;
            return Some(Ok(Tlv {
                ptype,
                len,
                body: &rest[4..],
                complete: false,
                offset,
            }));
        }
        // RFC 9260 3.2.1: parameters are padded to 4 bytes, padding not in their Length.
        self.pos = (self.pos + ((n + 3) & !3)).min(self.bytes.len());
        Some(Ok(Tlv {
            ptype,
            len,
            body: &rest[4..n],
            complete: true,
            offset,
        }))
    }
}

/// An IPv4 (type 5, RFC 9260 3.3.2.1: length 8) or IPv6 (type 6: length 20) address parameter;
/// `Ok(None)` when it was not captured whole.
pub(crate) fn address(t: &Tlv<'_>) -> Result<Option<IpAddr>, ChunkErrorKind> {
    match t.ptype {
        ptypes::IPV4 => {
            if t.len != 8 {
                return Err(t.bad("IPv4 address parameter length is not 8"));
            }
            Ok(t.full_body()
                .map(|b| IpAddr::V4(Ipv4Addr::from(<[u8; 4]>::try_from(b).unwrap_or_default()))))
        }
        ptypes::IPV6 => {
            if t.len != 20 {
                return Err(t.bad("IPv6 address parameter length is not 20"));
            }
            Ok(t.full_body()
                .map(|b| IpAddr::V6(Ipv6Addr::from(<[u8; 16]>::try_from(b).unwrap_or_default()))))
        }
        _ => Err(t.bad("not an address parameter")),
    }
}

/// An INIT / INIT-ACK parameter (RFC 9260 3.3.2.1, 3.3.3.1 and the extension RFCs); `Ok(None)`
/// when a cut parameter lacks the bytes its value needs.
fn init_param(t: &Tlv<'_>) -> Result<Option<InitParam>, ChunkErrorKind> {
    use ptypes::*;
    let body_len = usize::from(t.len) - 4;
    let p = match t.ptype {
        IPV4 | IPV6 => match address(t)? {
            Some(a) => InitParam::Address(a),
            None => return Ok(None),
        },
        // RFC 9260 3.3.3.1: the state cookie is opaque; keep its size.
        STATE_COOKIE => InitParam::StateCookie { len: body_len },
        // RFC 9260 3.3.2.1: Cookie Preservative, length 8, a u32 in milliseconds.
        COOKIE_PRESERVATIVE => {
            t.need_len(8, "cookie preservative shorter than 8")?;
            match t.u32_at(0) {
                Some(ms) => InitParam::CookiePreservative(ms),
                None => return Ok(None),
            }
        }
        // RFC 9260 3.3.2.1: Host Name Address, NUL-terminated and padded with NULs.
        HOST_NAME => match t.full_body() {
            Some(b) => {
                let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
                InitParam::HostName(String::from_utf8_lossy(&b[..end]).into_owned())
            }
            None => return Ok(None),
        },
        // RFC 9260 3.3.2.1: Supported Address Types, a list of u16 parameter types.
        SUPPORTED_ADDRESS_TYPES => match t.full_body() {
            Some(b) => {
                InitParam::SupportedAddressTypes(b.chunks_exact(2).map(|x| be16(x, 0)).collect())
            }
            None => return Ok(None),
        },
        // RFC 9260 Appendix A: ECN Capable, no value.
        ECN_CAPABLE => InitParam::EcnCapable,
        // RFC 3758 3.1: Forward-TSN Supported, no value.
        FORWARD_TSN_SUPPORTED => InitParam::ForwardTsnSupported,
        // RFC 5061 4.2.7: Supported Extensions, one chunk type per byte.
        SUPPORTED_EXTENSIONS => match t.full_body() {
            Some(b) => InitParam::SupportedExtensions(b.to_vec()),
            None => return Ok(None),
        },
        // RFC 4895 3.1-3.3: Random, Chunk List, Requested HMAC Algorithm.
        RANDOM | CHUNK_LIST | HMAC_ALGO => InitParam::Auth {
            ptype: t.ptype,
            len: usize::from(t.len),
        },
        // RFC 5061 4.2.6: Adaptation Layer Indication, length 8, a u32.
        ADAPTATION => {
            t.need_len(8, "adaptation layer indication shorter than 8")?;
            match t.u32_at(0) {
                Some(v) => InitParam::AdaptationLayer(v),
                None => return Ok(None),
            }
        }
        // RFC 4820 3: Padding parameter.
        PADDING => InitParam::Padding { len: body_len },
        _ => InitParam::Other {
            ptype: t.ptype,
            len: usize::from(t.len),
        },
    };
    Ok(Some(p))
}

/// An ASCONF / ASCONF-ACK parameter (RFC 5061 4.2); `Ok(None)` when cut before its needed bytes.
fn asconf_param(t: &Tlv<'_>) -> Result<Option<AsconfParam>, ChunkErrorKind> {
    use ptypes::*;
    match t.ptype {
        // RFC 5061 4.2.1-4.2.5: all start with a 4-byte ASCONF-Request Correlation ID.
        ADD_IP | DELETE_IP | SET_PRIMARY | SUCCESS | ERROR_CAUSE_INDICATION => {
            t.need_len(8, "ASCONF parameter shorter than 8")?;
        }
        _ => {
            return Ok(Some(AsconfParam::Other {
                ptype: t.ptype,
                len: usize::from(t.len),
            }))
        }
    }
    let Some(correlation) = t.u32_at(0) else {
        return Ok(None);
    };
    let p = match t.ptype {
        SUCCESS => AsconfParam::Success { correlation },
        ERROR_CAUSE_INDICATION => AsconfParam::ErrorCause { correlation },
        _ => {
            // RFC 5061 4.2.1/4.2.2/4.2.4: then an IPv4 or IPv6 address parameter.
            let inner = &t.body[4..];
            let mut it = TlvIter::new(inner, t.offset + 8, !t.complete);
            let addr = match it.next().transpose()? {
                Some(a) if matches!(a.ptype, IPV4 | IPV6) => address(&a)?,
                _ => None,
            };
            if addr.is_none() && !t.complete {
                return Ok(None);
            }
            match t.ptype {
                ADD_IP => AsconfParam::AddIp { correlation, addr },
                DELETE_IP => AsconfParam::DeleteIp { correlation, addr },
                _ => AsconfParam::SetPrimary { correlation, addr },
            }
        }
    };
    Ok(Some(p))
}

/// A RE-CONFIG parameter (RFC 6525 4.1-4.6) with its request (or response) sequence number;
/// `Ok(None)` when cut before that number.
fn reconfig_param(t: &Tlv<'_>) -> Result<Option<ReconfigParam>, ChunkErrorKind> {
    use ptypes::*;
    // RFC 6525 4.1: 16 bytes + streams; 4.2: 8 + streams; 4.3: 8; 4.4: 12 (or 20);
    // 4.5/4.6: 12. Each starts with the (re-configuration) request/response sequence number.
    let min = match t.ptype {
        OUT_SSN_RESET => 16,
        IN_SSN_RESET | SSN_TSN_RESET => 8,
        RECONFIG_RESPONSE | ADD_OUT_STREAMS | ADD_IN_STREAMS => 12,
        _ => {
            return Ok(Some(ReconfigParam {
                ptype: t.ptype,
                req_seq: None,
                len: t.len,
                resp_seq: None,
                result: None,
                new_streams: None,
                stream_count: 0,
            }))
        }
    };
    t.need_len(min, "RE-CONFIG parameter shorter than RFC 6525 requires")?;
    // RFC 6525 4.1 / 4.2: the stream numbers (u16 each) follow the fixed part; none means all.
    let stream_count = match t.ptype {
        OUT_SSN_RESET => (t.len - 16) / 2,
        IN_SSN_RESET => (t.len - 8) / 2,
        _ => 0,
    };
    Ok(t.u32_at(0).map(|seq| ReconfigParam {
        ptype: t.ptype,
        req_seq: Some(seq),
        len: t.len,
        // 4.1: Re-configuration Response Sequence Number after the request's.
        resp_seq: (t.ptype == OUT_SSN_RESET).then(|| t.u32_at(4)).flatten(),
        // 4.4: Result after the Response Sequence Number.
        result: (t.ptype == RECONFIG_RESPONSE)
            .then(|| t.u32_at(4))
            .flatten(),
        // 4.5 / 4.6: Number of New Streams (u16), then 2 reserved bytes.
        new_streams: matches!(t.ptype, ADD_OUT_STREAMS | ADD_IN_STREAMS)
            .then(|| t.u32_at(4).map(|v| (v >> 16) as u16))
            .flatten(),
        stream_count,
    }))
}

impl<'a> ChunkView<'a> {
    /// RFC name of the chunk type ("DATA", "UNKNOWN-99", ...).
    pub fn type_name(&self) -> Cow<'static, str> {
        chunk_type_name(self.ctype)
    }

    /// Decodes the chunk. A truncated chunk is decoded as far as captured: it succeeds when its
    /// fixed fields are present (variable parts hold what was captured), else it is an error.
    pub fn parse(&self) -> Result<Chunk<'a>, ChunkError> {
        use types::*;
        // Every arm makes the whole result, each error with the chunk's offset: building the
        // chunk first and wrapping it afterwards copied it (a quarter of the cost of decoding).
        let err = |kind| ChunkError {
            offset: self.offset,
            kind,
        };
        // The fixed fields after the chunk header, `need` bytes at least.
        let fixed = |need| self.fixed(need).map_err(err);
        let t_bit = self.flags & 0x01 != 0;
        match self.ctype {
            DATA | I_DATA => self.data().map(Chunk::Data).map_err(err),
            INIT | INIT_ACK => self.init().map(Chunk::Init).map_err(err),
            SACK | NR_SACK => self.sack().map(Chunk::Sack).map_err(err),
            // RFC 9260 3.3.5/3.3.6: the Heartbeat Info parameter, kept as raw bytes.
            HEARTBEAT | HEARTBEAT_ACK => Ok(Chunk::Heartbeat {
                ack: self.ctype == HEARTBEAT_ACK,
                info: self.value,
            }),
            // RFC 9260 3.3.7: T bit is flag 0x01; then zero or more error causes.
            ABORT => self
                .causes()
                .map(|causes| Chunk::Abort { t_bit, causes })
                .map_err(err),
            // RFC 9260 3.3.10: one or more error causes.
            ERROR => self
                .causes()
                .map(|causes| Chunk::Error { causes })
                .map_err(err),
            // RFC 9260 3.3.8: Cumulative TSN Ack, length 8.
            SHUTDOWN => fixed(4).map(|v| Chunk::Shutdown {
                cum_tsn_ack: be32(v, 0),
            }),
            // RFC 9260 3.3.9 / 3.3.12: header only.
            SHUTDOWN_ACK => Ok(Chunk::ShutdownAck),
            COOKIE_ACK => Ok(Chunk::CookieAck),
            // RFC 9260 3.3.13: T bit is flag 0x01.
            SHUTDOWN_COMPLETE => Ok(Chunk::ShutdownComplete { t_bit }),
            // RFC 9260 3.3.11: the cookie is the whole value.
            COOKIE_ECHO => Ok(Chunk::CookieEcho {
                cookie_len: self.announced(),
            }),
            // RFC 9260 Appendix A: ECNE and CWR carry the lowest TSN (u32).
            ECNE => fixed(4).map(|v| Chunk::Ecne {
                lowest_tsn: be32(v, 0),
            }),
            CWR => fixed(4).map(|v| Chunk::Cwr {
                lowest_tsn: be32(v, 0),
            }),
            // RFC 4895 4.1: Shared Key Identifier u16, HMAC Identifier u16, then the HMAC.
            AUTH => fixed(4).map(|v| Chunk::Auth {
                key_id: be16(v, 0),
                hmac_id: be16(v, 2),
            }),
            ASCONF | ASCONF_ACK => self.asconf().map(Chunk::Asconf).map_err(err),
            RE_CONFIG => self
                .reconfig()
                .map(|params| Chunk::Reconfig { params })
                .map_err(err),
            // RFC 4820 3: the value is padding.
            PAD => Ok(Chunk::Pad {
                len: self.announced(),
            }),
            // RFC 3758 3.2 / RFC 8260 2.3: New Cumulative TSN, then per-stream entries.
            FORWARD_TSN | I_FORWARD_TSN => fixed(4).map(|v| Chunk::ForwardTsn {
                i_forward: self.ctype == I_FORWARD_TSN,
                new_cum_tsn: be32(v, 0),
            }),
            ctype => Ok(Chunk::Unknown { ctype }),
        }
    }

    /// The value if it holds at least `need` bytes (the fixed fields after the chunk header).
    fn fixed(&self, need: usize) -> Result<&'a [u8], ChunkErrorKind> {
        if self.value.len() < need {
            return Err(ChunkErrorKind::ValueTooShort {
                ctype: self.ctype,
                need: need + CHUNK_HEADER_LEN,
                have: self.value.len() + CHUNK_HEADER_LEN,
            });
        }
        Ok(self.value)
    }

    /// Announced value length (Length field minus the chunk header).
    fn announced(&self) -> usize {
        usize::from(self.length).saturating_sub(CHUNK_HEADER_LEN)
    }

    fn params(&self, from: usize) -> TlvIter<'a> {
        let bytes = self.value.get(from..).unwrap_or(&[]);
        TlvIter::new(bytes, CHUNK_HEADER_LEN + from, self.truncated)
    }

    /// RFC 6525 3.1: one or two re-configuration parameters.
    fn reconfig(&self) -> Result<Vec<ReconfigParam>, ChunkErrorKind> {
        let mut params = Vec::new();
        for t in self.params(0) {
            match reconfig_param(&t?)? {
                Some(p) => params.push(p),
                None => break,
            }
        }
        Ok(params)
    }

    fn data(&self) -> Result<DataChunk, ChunkErrorKind> {
        let idata = self.ctype == types::I_DATA;
        // RFC 9260 3.3.1: TSN, Stream Identifier, Stream Sequence Number, PPID (16-byte header).
        // RFC 8260 2.1: TSN, Stream Identifier, Reserved, MID, PPID/FSN (20-byte header).
        let (fixed, ssn_or_mid, ppid_at) = if idata {
            let v = self.fixed(16)?;
            (16, be32(v, 8), 12)
        } else {
            let v = self.fixed(12)?;
            (12, u32::from(be16(v, 6)), 8)
        };
        let v = self.value;
        // A DATA chunk with no user data (length 16) is a protocol violation (RFC 9260 3.3.1)
        // but is still decoded, with payload_len 0, for the analysis to report.
        Ok(DataChunk {
            idata,
            tsn: be32(v, 0),
            stream_id: be16(v, 4),
            ssn_or_mid,
            ppid_or_fsn: be32(v, ppid_at),
            payload_len: self.announced().saturating_sub(fixed) as u32,
            // RFC 7053 (DATA) and RFC 8260 2.1 (I-DATA): flags I=0x08, U=0x04, B=0x02, E=0x01.
            flag_i: self.flags & 0x08 != 0,
            flag_u: self.flags & 0x04 != 0,
            flag_b: self.flags & 0x02 != 0,
            flag_e: self.flags & 0x01 != 0,
        })
    }

    fn init(&self) -> Result<InitChunk, ChunkErrorKind> {
        // RFC 9260 3.3.2/3.3.3: Initiate Tag, a_rwnd, OS, MIS, Initial TSN (20-byte chunk),
        // then optional/variable-length parameters.
        let v = self.fixed(16)?;
        let mut params = Vec::new();
        for t in self.params(16) {
            match init_param(&t?)? {
                Some(p) => params.push(p),
                None => break,
            }
        }
        Ok(InitChunk {
            ack: self.ctype == types::INIT_ACK,
            initiate_tag: be32(v, 0),
            a_rwnd: be32(v, 4),
            outbound_streams: be16(v, 8),
            inbound_streams: be16(v, 10),
            initial_tsn: be32(v, 12),
            params,
        })
    }

    fn sack(&self) -> Result<SackChunk<'a>, ChunkErrorKind> {
        let nr = self.ctype == types::NR_SACK;
        // RFC 9260 3.3.4: Cumulative TSN Ack, a_rwnd, # gap blocks, # dup TSNs (16-byte chunk).
        // NR-SACK: Cumulative TSN Ack, a_rwnd, # gap, # NR gap, # dup, reserved (20 bytes).
        let head = if nr { 16 } else { 12 };
        let v = self.fixed(head)?;
        let n_gap_blocks = be16(v, 8);
        let (n_nr_gap_blocks, n_dup_tsns) = if nr {
            (be16(v, 10), be16(v, 12))
        } else {
            (0, be16(v, 10))
        };
        let gaps = 4 * usize::from(n_gap_blocks);
        let nr_gaps = 4 * usize::from(n_nr_gap_blocks);
        let dups = 4 * usize::from(n_dup_tsns);
        let need = head + gaps + nr_gaps + dups;
        // RFC 9260 3.3.4: the blocks and TSNs announced must fit in the chunk length.
        if self.announced() < need {
            return Err(ChunkErrorKind::ValueTooShort {
                ctype: self.ctype,
                need: need + CHUNK_HEADER_LEN,
                have: usize::from(self.length),
            });
        }
        // Gap blocks (4 bytes each), then NR gap blocks, then duplicate TSNs; clipped to what was
        // captured in whole entries.
        let mut rest = &v[head..];
        let gap_bytes = take4(&mut rest, gaps);
        let nr_gap_bytes = take4(&mut rest, nr_gaps);
        let dup_bytes = take4(&mut rest, dups);
        Ok(SackChunk {
            nr,
            cum_tsn_ack: be32(v, 0),
            a_rwnd: be32(v, 4),
            n_gap_blocks,
            n_nr_gap_blocks,
            n_dup_tsns,
            gap_bytes,
            nr_gap_bytes,
            dup_bytes,
        })
    }

    fn causes(&self) -> Result<Vec<ErrorCause>, ChunkErrorKind> {
        // RFC 9260 3.3.10: causes are TLVs (code, length), padded to 4 bytes; a cut cause whose
        // header was captured is still listed.
        let mut causes = Vec::new();
        for t in self.params(0) {
            let t = t?;
            causes.push(ErrorCause {
                code: t.ptype,
                len: t.len,
            });
        }
        Ok(causes)
    }

    fn asconf(&self) -> Result<AsconfChunk, ChunkErrorKind> {
        let ack = self.ctype == types::ASCONF_ACK;
        // RFC 5061 3.1.1/3.1.2: Serial Number, then (ASCONF only) the Address Parameter, then
        // the ASCONF parameters.
        let v = self.fixed(4)?;
        let mut sender = None;
        let mut params = Vec::new();
        for (i, t) in self.params(4).enumerate() {
            let t = t?;
            if i == 0 && !ack && matches!(t.ptype, ptypes::IPV4 | ptypes::IPV6) {
                match address(&t)? {
                    Some(a) => sender = Some(a),
                    None => break,
                }
                continue;
            }
            match asconf_param(&t)? {
                Some(p) => params.push(p),
                None => break,
            }
        }
        Ok(AsconfChunk {
            ack,
            serial: be32(v, 0),
            address: sender,
            params,
        })
    }
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
