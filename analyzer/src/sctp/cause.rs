//! SCTP error causes of ABORT / ERROR chunks decoded by name with their fields (RFC 9260 3.3.10,
//! RFC 4895 4.1, RFC 5061 4.3), and the RFC 6525 re-configuration result code names.
//!
//! The causes are walked with the TLV walker of `wire.rs` (same length and padding rules as the
//! chunk parse). Names follow the IANA "Error Cause Codes" registry of the SCTP parameters, which
//! holds 1-13 (RFC 9260), 160-164 (RFC 5061) and 261 = 0x0105 (RFC 4895); 14 ("Restart of an
//! Association with New Encapsulation Port", draft-tuexen-tsvwg-sctp-udp-encaps-cons, not in the
//! registry) is named too because Linux and usrsctp send it; everything else is reported as
//! unknown. RFC 6525
//! registers no error cause: its failures travel as result codes of the Re-configuration Response
//! parameter (`reconfig_result_name`).

use std::fmt::Write as _;

use super::chunk::chunk_type_name;
use super::error::ChunkErrorKind;
use super::param::{address, Tlv, TlvIter};

/// One error cause of an ABORT or ERROR chunk, decoded.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CauseInfo {
    pub code: u16,
    /// Registry name, e.g. "User-Initiated Abort"; "Unknown cause 4711" for unregistered codes.
    pub name: String,
    /// The cause's fields in words (stream id, missing parameter types by name, staleness in µs,
    /// the unresolvable address, the unrecognized chunk's type name, the abort reason text, the
    /// protocol violation information, the new addresses of a restart, ...); None when the cause
    /// has no fields.
    pub detail: Option<String>,
}

/// Error cause codes (IANA "Error Cause Codes" registry).
mod codes {
    // RFC 9260 3.3.10.1-3.3.10.13.
    pub const INVALID_STREAM: u16 = 1;
    pub const MISSING_PARAM: u16 = 2;
    pub const STALE_COOKIE: u16 = 3;
    pub const OUT_OF_RESOURCE: u16 = 4;
    pub const UNRESOLVABLE_ADDRESS: u16 = 5;
    pub const UNRECOGNIZED_CHUNK: u16 = 6;
    pub const INVALID_PARAM: u16 = 7;
    pub const UNRECOGNIZED_PARAMS: u16 = 8;
    pub const NO_USER_DATA: u16 = 9;
    pub const COOKIE_WHILE_SHUTTING_DOWN: u16 = 10;
    pub const RESTART_NEW_ADDRESSES: u16 = 11;
    pub const USER_ABORT: u16 = 12;
    pub const PROTOCOL_VIOLATION: u16 = 13;
    // draft-tuexen-tsvwg-sctp-udp-encaps-cons 4.2 (not in the IANA registry; sent by Linux as
    // SCTP_ERROR_NEW_ENCAP_PORT and by usrsctp).
    pub const RESTART_NEW_ENCAP_PORT: u16 = 14;
    // RFC 5061 4.3.1-4.3.5.
    pub const DELETE_LAST_ADDRESS: u16 = 0x00A0;
    pub const RESOURCE_SHORTAGE: u16 = 0x00A1;
    pub const DELETE_SOURCE_ADDRESS: u16 = 0x00A2;
    pub const ILLEGAL_ASCONF_ACK: u16 = 0x00A3;
    pub const NO_AUTHORIZATION: u16 = 0x00A4;
    // RFC 4895 4.1 (0x0105 = 261, not decimal 105).
    pub const UNSUPPORTED_HMAC: u16 = 0x0105;
}

/// Registry name of an error cause code, None when unregistered.
pub fn cause_name(code: u16) -> Option<&'static str> {
    use codes::*;
    Some(match code {
        INVALID_STREAM => "Invalid Stream Identifier",
        MISSING_PARAM => "Missing Mandatory Parameter",
        STALE_COOKIE => "Stale Cookie Error",
        OUT_OF_RESOURCE => "Out of Resource",
        UNRESOLVABLE_ADDRESS => "Unresolvable Address",
        UNRECOGNIZED_CHUNK => "Unrecognized Chunk Type",
        INVALID_PARAM => "Invalid Mandatory Parameter",
        UNRECOGNIZED_PARAMS => "Unrecognized Parameters",
        NO_USER_DATA => "No User Data",
        COOKIE_WHILE_SHUTTING_DOWN => "Cookie Received While Shutting Down",
        RESTART_NEW_ADDRESSES => "Restart of an Association with New Addresses",
        USER_ABORT => "User-Initiated Abort",
        PROTOCOL_VIOLATION => "Protocol Violation",
        RESTART_NEW_ENCAP_PORT => "Restart of an Association with New Encapsulation Port",
        DELETE_LAST_ADDRESS => "Request to Delete Last Remaining IP Address",
        RESOURCE_SHORTAGE => "Operation Refused Due to Resource Shortage",
        DELETE_SOURCE_ADDRESS => "Request to Delete Source IP Address",
        ILLEGAL_ASCONF_ACK => "Association Aborted Due to Illegal ASCONF-ACK",
        NO_AUTHORIZATION => "Request Refused - No Authorization",
        UNSUPPORTED_HMAC => "Unsupported HMAC Identifier",
        _ => return None,
    })
}

/// The error cause TLVs of an ABORT / ERROR chunk value (the bytes after the 4-byte chunk header):
/// (code, body without the 4-byte cause header), lax: stops at the first malformed TLV.
pub fn cause_tlvs(value: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    // RFC 9260 3.3.10: causes are TLVs padded to 4 bytes, the padding not in their length.
    TlvIter::new(value, 0, false)
        .map_while(Result::ok)
        .map(|t| (t.ptype, t.body))
}

/// Every cause of an ABORT / ERROR chunk value decoded; a malformed or truncated tail gives a last
/// entry whose detail says so (never panics, never loops).
///
/// A tail of 1 to 3 non-zero bytes (too short for a cause header) gives code 0 with the name
/// "Malformed cause"; zero bytes there are taken as padding.
pub fn decode_causes(value: &[u8]) -> Vec<CauseInfo> {
    let mut out = Vec::new();
    for t in TlvIter::new(value, 0, false) {
        match t {
            Ok(t) => out.push(CauseInfo {
                code: t.ptype,
                name: name_of(t.ptype),
                detail: fields(t.ptype, t.body, false),
            }),
            // The walker ends after an error; `offset` is where the bad cause starts (base 0).
            Err(ChunkErrorKind::BadParameter { offset, .. }) => {
                out.push(bad_tail(value.get(offset..).unwrap_or_default()));
            }
            Err(other) => out.push(CauseInfo {
                code: 0,
                name: MALFORMED.to_string(),
                detail: Some(other.to_string()),
            }),
        }
    }
    out
}

/// RFC 6525 4.4 Re-configuration Response result code name ("Denied", ...), None if unknown.
pub fn reconfig_result_name(code: u32) -> Option<&'static str> {
    // RFC 6525 4.4, table of the Result field.
    Some(match code {
        0 => "Success - Nothing to do",
        1 => "Success - Performed",
        2 => "Denied",
        3 => "Error - Wrong SSN",
        4 => "Error - Request already in progress",
        5 => "Error - Bad Sequence Number",
        6 => "In progress",
        _ => return None,
    })
}

const MALFORMED: &str = "Malformed cause";
/// Longest text shown for an abort reason or protocol violation information, in characters.
const MAX_TEXT_CHARS: usize = 200;
/// Most bytes shown in hex for binary information.
const MAX_HEX_BYTES: usize = 64;
/// Most parameters (types, addresses) listed for one cause.
const MAX_LIST: usize = 32;

fn name_of(code: u16) -> String {
    cause_name(code).map_or_else(|| format!("Unknown cause {code}"), str::to_string)
}

/// The entry for the cause at the start of `rest` that the walker rejected.
fn bad_tail(rest: &[u8]) -> CauseInfo {
    if rest.len() < 4 {
        return CauseInfo {
            code: 0,
            name: MALFORMED.to_string(),
            detail: Some(format!(
                "{} trailing bytes ({}), shorter than a 4-byte cause header",
                rest.len(),
                hex(rest)
            )),
        };
    }
    let code = be16(rest, 0);
    let len = be16(rest, 2);
    let detail = if len < 4 {
        // RFC 9260 3.3.10: the Cause Length includes the 4-byte header.
        format!("malformed: cause length {len} < 4")
    } else {
        // The cause runs past the chunk value: decode what is there.
        let body = &rest[4..];
        let mut d = format!(
            "truncated: cause length {len}, only {} of {} body bytes present",
            body.len(),
            len - 4
        );
        if let Some(partial) = fields(code, body, true) {
            let _ = write!(d, "; {partial}");
        }
        d
    };
    CauseInfo {
        code,
        name: name_of(code),
        detail: Some(detail),
    }
}

/// The fields of one cause in words; `cut` when `body` is only the start of the cause's body.
fn fields(code: u16, body: &[u8], cut: bool) -> Option<String> {
    use codes::*;
    match code {
        // RFC 9260 3.3.10.1: Stream Identifier (16 bits), Reserved (16 bits).
        INVALID_STREAM => fixed(body, 2, cut, |b| format!("stream id {}", be16(b, 0))),
        // RFC 9260 3.3.10.2: Number of missing params (32 bits), then one 16-bit type each.
        MISSING_PARAM => fixed(body, 4, cut, |_| missing_params(body)),
        // RFC 9260 3.3.10.3: Measure of Staleness (32 bits, microseconds).
        STALE_COOKIE => fixed(body, 4, cut, |b| format!("staleness {} µs", be32(b, 0))),
        // RFC 9260 3.3.10.4, 3.3.10.7, 3.3.10.10, RFC 5061 4.3.4: no fields.
        OUT_OF_RESOURCE | INVALID_PARAM | COOKIE_WHILE_SHUTTING_DOWN | ILLEGAL_ASCONF_ACK => {
            (!body.is_empty()).then(|| format!("{} unexpected bytes", body.len()))
        }
        // RFC 9260 3.3.10.5: the complete address parameter (IPv4, IPv6 or Host Name Address).
        // RFC 5061 4.3.1 / 4.3.3: TLV copy of the (last / source) address parameter.
        // RFC 5061 4.3.2 / 4.3.5: TLV copy of the rejected ASCONF parameter.
        UNRESOLVABLE_ADDRESS
        | DELETE_LAST_ADDRESS
        | DELETE_SOURCE_ADDRESS
        | RESOURCE_SHORTAGE
        | NO_AUTHORIZATION => Some(params(body, cut, ", ", false)),
        // RFC 9260 3.3.10.6: the unrecognized chunk (type, flags, length, ...).
        UNRECOGNIZED_CHUNK => Some(match body.get(..4) {
            Some(b) => format!(
                "chunk {} (type {}), flags 0x{:02x}, length {}",
                chunk_type_name(b[0]),
                b[0],
                b[1],
                be16(b, 2)
            ),
            None => match body.first() {
                Some(&t) => format!("chunk {} (type {t}), header cut", chunk_type_name(t)),
                None => "no chunk header".to_string(),
            },
        }),
        // RFC 9260 3.3.10.8: the unrecognized parameters, each complete.
        UNRECOGNIZED_PARAMS => Some(params(body, cut, "; ", false)),
        // RFC 9260 3.3.10.9: TSN value (32 bits).
        NO_USER_DATA => fixed(body, 4, cut, |b| format!("TSN {}", be32(b, 0))),
        // draft-tuexen-tsvwg-sctp-udp-encaps-cons 4.2: current and new UDP encapsulation port.
        RESTART_NEW_ENCAP_PORT => fixed(body, 4, cut, |b| {
            format!("UDP encapsulation port {} -> {}", be16(b, 0), be16(b, 2))
        }),
        // RFC 9260 3.3.10.11: the new address TLVs, copied from the INIT.
        RESTART_NEW_ADDRESSES => Some(params(body, cut, ", ", false)),
        // RFC 9260 3.3.10.12: Upper Layer Abort Reason; 3.3.10.13: Additional Information.
        USER_ABORT | PROTOCOL_VIOLATION => text(body),
        // RFC 4895 4.1: HMAC Identifier (16 bits) then 2 bytes of padding (Cause Length 6).
        UNSUPPORTED_HMAC => fixed(body, 2, cut, |b| {
            let id = be16(b, 0);
            format!(
                "HMAC identifier {id} ({})",
                hmac_name(id).unwrap_or("unknown")
            )
        }),
        _ => Some(format!("{} bytes", body.len())),
    }
}

/// The fixed fields of a cause: `show` of the first `need` body bytes; a shorter body is
/// malformed, or, when `cut`, shows nothing.
fn fixed(
    body: &[u8],
    need: usize,
    cut: bool,
    show: impl FnOnce(&[u8]) -> String,
) -> Option<String> {
    match body.get(..need) {
        Some(b) => Some(show(b)),
        None if cut => None,
        None => Some(format!(
            "malformed: {} body bytes, needs {need}",
            body.len()
        )),
    }
}

/// RFC 9260 3.3.10.2 body (at least 4 bytes).
fn missing_params(body: &[u8]) -> String {
    let n = be32(body, 0);
    let types = body[4..]
        .chunks_exact(2)
        .take(usize::try_from(n).unwrap_or(usize::MAX));
    let listed = types.len();
    let mut s = format!("{n} missing parameter{}", if n == 1 { "" } else { "s" });
    if listed > 0 {
        let names = types.map(|b| param_label(be16(b, 0)));
        let _ = write!(s, ": {}", capped(names, ", "));
    }
    if (listed as u64) < u64::from(n) {
        let _ = write!(s, " (only {listed} listed)");
    }
    s
}

/// The first `MAX_LIST` items joined with `sep`, then how many more there are.
fn capped(items: impl Iterator<Item = String>, sep: &str) -> String {
    let mut out = String::new();
    let mut n = 0usize;
    for item in items {
        if n < MAX_LIST {
            if n > 0 {
                out.push_str(sep);
            }
            out.push_str(&item);
        }
        n += 1;
    }
    if n > MAX_LIST {
        let _ = write!(out, "{sep}… ({} more)", n - MAX_LIST);
    }
    out
}

/// The TLV parameters embedded in a cause body, described and joined with `sep`; `nested` for
/// the parameters inside an embedded ASCONF parameter (not expanded further: bounded depth).
fn params(body: &[u8], cut: bool, sep: &str, nested: bool) -> String {
    let mut parts = TlvIter::new(body, 0, cut)
        .map(|t| match t {
            Ok(t) => param(&t, nested),
            Err(ChunkErrorKind::BadParameter { what, .. }) => format!("malformed: {what}"),
            Err(e) => format!("malformed: {e}"),
        })
        .peekable();
    if parts.peek().is_none() {
        return "no parameter".to_string();
    }
    capped(parts, sep)
}

/// One embedded parameter: an address, a host name, an ASCONF request (unless `nested`), or its
/// type and size.
fn param(t: &Tlv<'_>, nested: bool) -> String {
    const IPV4: u16 = 5;
    const IPV6: u16 = 6;
    const HOST_NAME: u16 = 11;
    const ADD_IP: u16 = 0xC001;
    const DELETE_IP: u16 = 0xC002;
    const SET_PRIMARY: u16 = 0xC004;
    let cut = if t.complete { "" } else { " (cut)" };
    match t.ptype {
        // RFC 9260 3.3.2.1: IPv4 (length 8) / IPv6 (length 20) Address parameters.
        IPV4 | IPV6 => match address(t) {
            Ok(Some(a)) => a.to_string(),
            Ok(None) => format!("{} (cut)", param_label(t.ptype)),
            Err(ChunkErrorKind::BadParameter { what, .. }) => format!("malformed: {what}"),
            Err(e) => format!("malformed: {e}"),
        },
        // RFC 9260 3.3.2.1: Host Name Address, NUL-terminated (the NULs are not shown).
        HOST_NAME => {
            let end = t.body.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
            format!("host name {}{cut}", quoted(&t.body[..end]))
        }
        // RFC 5061 4.2.1/4.2.2/4.2.4: ASCONF-Request Correlation ID then an address parameter.
        ADD_IP | DELETE_IP | SET_PRIMARY if !nested => {
            let mut s = param_label(t.ptype);
            if let Some(b) = t.body.get(..4) {
                let _ = write!(s, ", correlation id {}", be32(b, 0));
                let inner = params(&t.body[4..], !t.complete, ", ", true);
                let _ = write!(s, ", {inner}");
            }
            s.push_str(cut);
            s
        }
        _ => format!("{}, {} bytes{cut}", param_label(t.ptype), t.len),
    }
}

/// "State Cookie (7)", "Zero Checksum Acceptable (0x8001)", "parameter 0x1234".
fn param_label(ptype: u16) -> String {
    let num = if ptype < 0x100 {
        ptype.to_string()
    } else {
        format!("0x{ptype:04X}")
    };
    match param_name(ptype) {
        Some(n) => format!("{n} ({num})"),
        None => format!("parameter {num}"),
    }
}

/// IANA "Chunk Parameter Types" names of the parameters an error cause may name or carry.
fn param_name(ptype: u16) -> Option<&'static str> {
    Some(match ptype {
        // RFC 9260 3.3.2.1, 3.3.3.1, 3.3.5.
        1 => "Heartbeat Info",
        5 => "IPv4 Address",
        6 => "IPv6 Address",
        7 => "State Cookie",
        8 => "Unrecognized Parameters",
        9 => "Cookie Preservative",
        11 => "Host Name Address",
        12 => "Supported Address Types",
        // RFC 6525 4.1-4.6.
        13 => "Outgoing SSN Reset Request",
        14 => "Incoming SSN Reset Request",
        15 => "SSN/TSN Reset Request",
        16 => "Re-configuration Response",
        17 => "Add Outgoing Streams Request",
        18 => "Add Incoming Streams Request",
        // RFC 9260 Appendix A.
        0x8000 => "ECN Capable",
        // RFC 9653.
        0x8001 => "Zero Checksum Acceptable",
        // RFC 4895 3.1-3.3.
        0x8002 => "Random",
        0x8003 => "Chunk List",
        0x8004 => "Requested HMAC Algorithm",
        // RFC 4820.
        0x8005 => "Padding",
        // RFC 5061 4.2.7.
        0x8008 => "Supported Extensions",
        // RFC 3758.
        0xC000 => "Forward TSN Supported",
        // RFC 5061 4.2.1-4.2.6.
        0xC001 => "Add IP Address",
        0xC002 => "Delete IP Address",
        0xC003 => "Error Cause Indication",
        0xC004 => "Set Primary Address",
        0xC005 => "Success Indication",
        0xC006 => "Adaptation Layer Indication",
        _ => return None,
    })
}

/// RFC 4895 3.3 / IANA "HMAC Identifiers".
fn hmac_name(id: u16) -> Option<&'static str> {
    match id {
        1 => Some("SHA-1"),
        3 => Some("SHA-256"),
        _ => None,
    }
}

/// Free-form information (abort reason, protocol violation): quoted text when it reads as text
/// (UTF-8 lossy, control characters escaped, trailing NULs dropped, at most 200 characters),
/// otherwise hex. None when empty.
fn text(body: &[u8]) -> Option<String> {
    let end = body.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let body = &body[..end];
    if body.is_empty() {
        return None;
    }
    let s = String::from_utf8_lossy(body);
    let (mut chars, mut bad) = (0usize, 0usize);
    for c in s.chars() {
        chars += 1;
        if c == char::REPLACEMENT_CHARACTER || (c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
        {
            bad += 1;
        }
    }
    // Binary: more than a quarter of the characters are invalid UTF-8 or control characters.
    if bad * 4 > chars {
        return Some(format!("hex {}", hex(body)));
    }
    Some(quoted(body))
}

/// `body` as a double-quoted string: UTF-8 lossy, control characters, quotes and backslashes
/// escaped; longer than `MAX_TEXT_CHARS` characters, it is cut to that many, the last being '…'.
fn quoted(body: &[u8]) -> String {
    let s = String::from_utf8_lossy(body);
    let full: String = s.chars().flat_map(escaped).collect();
    if full.chars().count() <= MAX_TEXT_CHARS {
        return format!("\"{full}\"");
    }
    let mut out = String::with_capacity(MAX_TEXT_CHARS + 4);
    let mut n = 0usize;
    for c in s.chars() {
        let piece: String = escaped(c).collect();
        let len = piece.chars().count();
        // Whole escapes only, and room for the ellipsis.
        if n + len >= MAX_TEXT_CHARS {
            break;
        }
        n += len;
        out.push_str(&piece);
    }
    format!("\"{out}…\"")
}

/// A character as shown in quoted text: itself, or escaped when it is a control character, a
/// quote or a backslash.
fn escaped(c: char) -> impl Iterator<Item = char> {
    let plain = !(c.is_control() || c == '"' || c == '\\');
    let mut esc = c.escape_default();
    let mut first = Some(c);
    std::iter::from_fn(move || if plain { first.take() } else { esc.next() })
}

/// Lower-case hex, at most `MAX_HEX_BYTES` bytes, then "… (N bytes)".
fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len().min(MAX_HEX_BYTES) * 2 + 16);
    for x in b.iter().take(MAX_HEX_BYTES) {
        let _ = write!(s, "{x:02x}");
    }
    if b.len() > MAX_HEX_BYTES {
        let _ = write!(s, "… ({} bytes)", b.len());
    }
    s
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

#[cfg(test)]
#[path = "cause_tests.rs"]
mod tests;
