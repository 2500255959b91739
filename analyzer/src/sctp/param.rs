//! Parameters inside chunks (RFC 9260 3.2.1): the type-length-value walk (`TlvIter`) and the
//! decoding of INIT / INIT-ACK (3.3.2.1), ASCONF (RFC 5061 4.2) and RE-CONFIG (RFC 6525 4)
//! parameters and of address parameters, for `ChunkView::parse` and the error-cause decoder.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::chunk::{AsconfParam, InitParam, ReconfigParam};
use super::error::ChunkErrorKind;

pub(super) fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

pub(super) fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Parameter / error cause type numbers used below and by `wire`.
pub(super) mod ptypes {
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
pub(super) fn init_param(t: &Tlv<'_>) -> Result<Option<InitParam>, ChunkErrorKind> {
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
pub(super) fn asconf_param(t: &Tlv<'_>) -> Result<Option<AsconfParam>, ChunkErrorKind> {
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
pub(super) fn reconfig_param(t: &Tlv<'_>) -> Result<Option<ReconfigParam>, ChunkErrorKind> {
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
