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
use super::wire::{address, ChunkErrorKind, Tlv, TlvIter};

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
mod tests {
    use super::*;

    /// One cause TLV: header, body, padding to 4 bytes.
    fn tlv(code: u16, body: &[u8]) -> Vec<u8> {
        let len = u16::try_from(body.len() + 4).unwrap();
        let mut v = Vec::new();
        v.extend_from_slice(&code.to_be_bytes());
        v.extend_from_slice(&len.to_be_bytes());
        v.extend_from_slice(body);
        while v.len() % 4 != 0 {
            v.push(0);
        }
        v
    }

    fn ipv4(a: [u8; 4]) -> Vec<u8> {
        tlv(5, &a)
    }

    fn ipv6(a: [u8; 16]) -> Vec<u8> {
        tlv(6, &a)
    }

    /// The single cause of a value holding one cause.
    fn one(code: u16, body: &[u8]) -> CauseInfo {
        let v = decode_causes(&tlv(code, body));
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].code, code);
        v[0].clone()
    }

    fn detail(code: u16, body: &[u8]) -> Option<String> {
        one(code, body).detail
    }

    #[test]
    fn restart_with_new_encapsulation_port() {
        let c = one(14, &[0x26, 0xab, 0x27, 0x0f]);
        assert_eq!(
            c.name,
            "Restart of an Association with New Encapsulation Port"
        );
        assert_eq!(
            c.detail.as_deref(),
            Some("UDP encapsulation port 9899 -> 9999")
        );
    }

    #[test]
    fn invalid_stream_identifier() {
        let c = one(1, &[0x00, 0x2a, 0, 0]);
        assert_eq!(c.name, "Invalid Stream Identifier");
        assert_eq!(c.detail.as_deref(), Some("stream id 42"));
        assert_eq!(
            detail(1, &[7]).as_deref(),
            Some("malformed: 1 body bytes, needs 2")
        );
    }

    #[test]
    fn missing_mandatory_parameter() {
        let c = one(2, &[0, 0, 0, 2, 0, 7, 0, 9]);
        assert_eq!(c.name, "Missing Mandatory Parameter");
        assert_eq!(
            c.detail.as_deref(),
            Some("2 missing parameters: State Cookie (7), Cookie Preservative (9)")
        );
        assert_eq!(
            detail(2, &[0, 0, 0, 1, 0x80, 0x09, 0, 0]).as_deref(),
            Some("1 missing parameter: parameter 0x8009")
        );
        assert_eq!(
            detail(2, &[0, 0, 0, 3, 0, 7]).as_deref(),
            Some("3 missing parameters: State Cookie (7) (only 1 listed)")
        );
    }

    #[test]
    fn stale_cookie_error() {
        let c = one(3, &1_500_000u32.to_be_bytes());
        assert_eq!(c.name, "Stale Cookie Error");
        assert_eq!(c.detail.as_deref(), Some("staleness 1500000 µs"));
    }

    #[test]
    fn out_of_resource() {
        let c = one(4, &[]);
        assert_eq!(c.name, "Out of Resource");
        assert_eq!(c.detail, None);
        assert_eq!(detail(4, &[1, 2]).as_deref(), Some("2 unexpected bytes"));
    }

    #[test]
    fn unresolvable_address() {
        let c = one(5, &ipv4([192, 0, 2, 1]));
        assert_eq!(c.name, "Unresolvable Address");
        assert_eq!(c.detail.as_deref(), Some("192.0.2.1"));
        let mut a6 = [0u8; 16];
        a6[..2].copy_from_slice(&[0x20, 0x01]);
        a6[2..4].copy_from_slice(&[0x0d, 0xb8]);
        a6[15] = 1;
        assert_eq!(detail(5, &ipv6(a6)).as_deref(), Some("2001:db8::1"));
        // RFC 9260 3.3.2.1 Host Name Address: NUL-terminated, length 4 + name.
        let host = tlv(11, b"peer.example\0");
        assert_eq!(
            detail(5, &host[..4 + 13]).as_deref(),
            Some("host name \"peer.example\"")
        );
        // A wrong address length is reported, not decoded.
        assert_eq!(
            detail(5, &tlv(5, &[1, 2, 3, 4, 5, 6])).as_deref(),
            Some("malformed: IPv4 address parameter length is not 8")
        );
    }

    #[test]
    fn unrecognized_chunk_type() {
        let c = one(6, &[99, 0x01, 0, 8, 1, 2, 3, 4]);
        assert_eq!(c.name, "Unrecognized Chunk Type");
        assert_eq!(
            c.detail.as_deref(),
            Some("chunk UNKNOWN-99 (type 99), flags 0x01, length 8")
        );
        assert_eq!(
            detail(6, &[130, 0, 0, 4]).as_deref(),
            Some("chunk RE-CONFIG (type 130), flags 0x00, length 4")
        );
        assert_eq!(
            detail(6, &[64]).as_deref(),
            Some("chunk I-DATA (type 64), header cut")
        );
    }

    #[test]
    fn invalid_mandatory_parameter() {
        let c = one(7, &[]);
        assert_eq!(c.name, "Invalid Mandatory Parameter");
        assert_eq!(c.detail, None);
    }

    #[test]
    fn unrecognized_parameters() {
        let mut body = tlv(0x8001, &[0, 0, 0, 1]);
        body.extend(tlv(0xC00F, &[9]));
        let c = one(8, &body);
        assert_eq!(c.name, "Unrecognized Parameters");
        assert_eq!(
            c.detail.as_deref(),
            Some("Zero Checksum Acceptable (0x8001), 8 bytes; parameter 0xC00F, 5 bytes")
        );
    }

    #[test]
    fn no_user_data() {
        let c = one(9, &0xdead_beefu32.to_be_bytes());
        assert_eq!(c.name, "No User Data");
        assert_eq!(c.detail.as_deref(), Some("TSN 3735928559"));
    }

    #[test]
    fn cookie_received_while_shutting_down() {
        let c = one(10, &[]);
        assert_eq!(c.name, "Cookie Received While Shutting Down");
        assert_eq!(c.detail, None);
    }

    #[test]
    fn restart_with_new_addresses() {
        let mut body = ipv4([10, 0, 0, 2]);
        let mut a6 = [0u8; 16];
        a6[0] = 0xfe;
        a6[1] = 0x80;
        a6[15] = 2;
        body.extend(ipv6(a6));
        let c = one(11, &body);
        assert_eq!(c.name, "Restart of an Association with New Addresses");
        assert_eq!(c.detail.as_deref(), Some("10.0.0.2, fe80::2"));
    }

    #[test]
    fn user_initiated_abort() {
        let c = one(12, b"app \"closing\"\n\x1b[1m");
        assert_eq!(c.name, "User-Initiated Abort");
        assert_eq!(
            c.detail.as_deref(),
            Some("\"app \\\"closing\\\"\\n\\u{1b}[1m\"")
        );
        // No reason, or only NUL padding-like bytes: no detail.
        assert_eq!(detail(12, &[]), None);
        assert_eq!(detail(12, &[0, 0]), None);
        // A trailing NUL (C string) is dropped.
        assert_eq!(detail(12, b"bye\0").as_deref(), Some("\"bye\""));
        // At most 200 characters, the last one an ellipsis.
        let long = "x".repeat(300);
        let d = detail(12, long.as_bytes()).unwrap();
        let inner = d.trim_matches('"');
        assert_eq!(inner.chars().count(), 200);
        assert!(inner.ends_with("x…"));
        // Exactly 200 characters fit whole.
        let exact = "y".repeat(200);
        assert_eq!(detail(12, exact.as_bytes()), Some(format!("\"{exact}\"")));
        // An escape is never split by the cut.
        let mut esc = "z".repeat(197);
        esc.push('\u{7}');
        esc.push_str("tail");
        let d = detail(12, esc.as_bytes()).unwrap();
        assert!(d.ends_with(&format!("{}…\"", "z")), "{d}");
        assert!(!d.contains("\\u"), "{d}");
    }

    #[test]
    fn non_utf8_abort_reason() {
        // Latin-1 text: still text, invalid bytes replaced.
        assert_eq!(
            detail(12, b"caf\xe9 ferm\xe9").as_deref(),
            Some("\"caf\u{fffd} ferm\u{fffd}\"")
        );
        // Binary: hex.
        assert_eq!(
            detail(12, &[0x01, 0xff, 0xfe, 0x02]).as_deref(),
            Some("hex 01fffe02")
        );
        let big = vec![0x80u8; 100];
        let d = detail(13, &big).unwrap();
        assert_eq!(d, format!("hex {}… (100 bytes)", "80".repeat(64)));
    }

    #[test]
    fn protocol_violation() {
        let c = one(13, b"TSN 7 beyond the window");
        assert_eq!(c.name, "Protocol Violation");
        assert_eq!(c.detail.as_deref(), Some("\"TSN 7 beyond the window\""));
        assert_eq!(detail(13, &[]), None);
    }

    #[test]
    fn unsupported_hmac_identifier() {
        // RFC 4895 4.1: code 0x0105, length 6 (identifier + 2 bytes of padding).
        let c = one(0x0105, &[0, 3]);
        assert_eq!(c.name, "Unsupported HMAC Identifier");
        assert_eq!(c.detail.as_deref(), Some("HMAC identifier 3 (SHA-256)"));
        assert_eq!(
            detail(0x0105, &[0, 1]).as_deref(),
            Some("HMAC identifier 1 (SHA-1)")
        );
        assert_eq!(
            detail(0x0105, &[0, 2]).as_deref(),
            Some("HMAC identifier 2 (unknown)")
        );
        // Decimal 105 is not registered.
        assert_eq!(cause_name(105), None);
    }

    #[test]
    fn delete_last_remaining_address() {
        let c = one(0x00A0, &ipv4([10, 1, 2, 3]));
        assert_eq!(c.name, "Request to Delete Last Remaining IP Address");
        assert_eq!(c.detail.as_deref(), Some("10.1.2.3"));
    }

    #[test]
    fn refused_resource_shortage() {
        // RFC 5061 4.2.1 Add IP Address: correlation id, then the address parameter.
        let mut add = 17u32.to_be_bytes().to_vec();
        add.extend(ipv4([10, 9, 8, 7]));
        let c = one(0x00A1, &tlv(0xC001, &add));
        assert_eq!(c.name, "Operation Refused Due to Resource Shortage");
        assert_eq!(
            c.detail.as_deref(),
            Some("Add IP Address (0xC001), correlation id 17, 10.9.8.7")
        );
    }

    #[test]
    fn delete_source_address() {
        let c = one(0x00A2, &ipv4([172, 16, 0, 1]));
        assert_eq!(c.name, "Request to Delete Source IP Address");
        assert_eq!(c.detail.as_deref(), Some("172.16.0.1"));
    }

    #[test]
    fn illegal_asconf_ack() {
        let c = one(0x00A3, &[]);
        assert_eq!(c.name, "Association Aborted Due to Illegal ASCONF-ACK");
        assert_eq!(c.detail, None);
    }

    #[test]
    fn refused_no_authorization() {
        let mut set = 3u32.to_be_bytes().to_vec();
        set.extend(ipv4([192, 0, 2, 9]));
        let c = one(0x00A4, &tlv(0xC004, &set));
        assert_eq!(c.name, "Request Refused - No Authorization");
        assert_eq!(
            c.detail.as_deref(),
            Some("Set Primary Address (0xC004), correlation id 3, 192.0.2.9")
        );
        // No embedded parameter.
        assert_eq!(detail(0x00A4, &[]).as_deref(), Some("no parameter"));
    }

    #[test]
    fn unknown_cause() {
        let c = one(4711, &[1, 2, 3, 4, 5]);
        assert_eq!(c.name, "Unknown cause 4711");
        assert_eq!(c.detail.as_deref(), Some("5 bytes"));
        assert_eq!(cause_name(4711), None);
    }

    #[test]
    fn registry_names() {
        let named: Vec<u16> = (0..=u16::MAX)
            .filter(|&c| cause_name(c).is_some())
            .collect();
        assert_eq!(
            named,
            [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 160, 161, 162, 163, 164, 261]
        );
    }

    #[test]
    fn reconfig_result_names() {
        assert_eq!(reconfig_result_name(0), Some("Success - Nothing to do"));
        assert_eq!(reconfig_result_name(1), Some("Success - Performed"));
        assert_eq!(reconfig_result_name(2), Some("Denied"));
        assert_eq!(reconfig_result_name(3), Some("Error - Wrong SSN"));
        assert_eq!(
            reconfig_result_name(4),
            Some("Error - Request already in progress")
        );
        assert_eq!(reconfig_result_name(5), Some("Error - Bad Sequence Number"));
        assert_eq!(reconfig_result_name(6), Some("In progress"));
        assert_eq!(reconfig_result_name(7), None);
    }

    #[test]
    fn several_causes_with_padding() {
        // Lengths 6 (2 padding bytes), 4, 9 (3 padding bytes), 8.
        let mut v = tlv(1, &[0, 5]);
        v.extend(tlv(10, &[]));
        v.extend(tlv(12, b"bye!!"));
        v.extend(tlv(9, &7u32.to_be_bytes()));
        assert_eq!(v.len(), 8 + 4 + 12 + 8);
        let got = decode_causes(&v);
        let codes: Vec<u16> = got.iter().map(|c| c.code).collect();
        assert_eq!(codes, [1, 10, 12, 9]);
        assert_eq!(got[0].detail.as_deref(), Some("stream id 5"));
        assert_eq!(got[1].detail, None);
        assert_eq!(got[2].detail.as_deref(), Some("\"bye!!\""));
        assert_eq!(got[3].detail.as_deref(), Some("TSN 7"));
        let tlvs: Vec<(u16, &[u8])> = cause_tlvs(&v).collect();
        assert_eq!(tlvs.len(), 4);
        assert_eq!(tlvs[2], (12, &b"bye!!"[..]));
        // The last cause's padding may be missing.
        let mut w = tlv(9, &7u32.to_be_bytes());
        w.extend(tlv(12, b"bye!!"));
        let got = decode_causes(&w[..w.len() - 3]);
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].detail.as_deref(), Some("\"bye!!\""));
    }

    #[test]
    fn truncated_last_cause() {
        let mut v = tlv(3, &9u32.to_be_bytes());
        v.extend(tlv(12, b"a long abort reason"));
        let cut = &v[..8 + 4 + 6];
        let got = decode_causes(cut);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].detail.as_deref(), Some("staleness 9 µs"));
        assert_eq!(got[1].code, 12);
        assert_eq!(got[1].name, "User-Initiated Abort");
        assert_eq!(
            got[1].detail.as_deref(),
            Some("truncated: cause length 23, only 6 of 19 body bytes present; \"a long\"")
        );
        // A cut fixed-size cause says only that it is cut.
        let cut = &tlv(9, &1u32.to_be_bytes())[..6];
        assert_eq!(
            decode_causes(cut)[0].detail.as_deref(),
            Some("truncated: cause length 8, only 2 of 4 body bytes present")
        );
        // cause_tlvs stops before it.
        assert_eq!(cause_tlvs(&v[..8 + 4 + 6]).count(), 1);
    }

    #[test]
    fn cause_length_below_4() {
        let mut v = tlv(1, &[0, 1, 0, 0]);
        v.extend_from_slice(&[0, 12, 0, 2, 0, 0, 0, 0]);
        v.extend(tlv(4, &[]));
        let got = decode_causes(&v);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[1].code, 12);
        assert_eq!(
            got[1].detail.as_deref(),
            Some("malformed: cause length 2 < 4")
        );
        assert_eq!(cause_tlvs(&v).count(), 1);
    }

    #[test]
    fn short_trailing_bytes() {
        let mut v = tlv(4, &[]);
        v.extend_from_slice(&[0, 13, 0]);
        let got = decode_causes(&v);
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].code, 0);
        assert_eq!(got[1].name, "Malformed cause");
        assert_eq!(
            got[1].detail.as_deref(),
            Some("3 trailing bytes (000d00), shorter than a 4-byte cause header")
        );
        // Zero bytes there are padding.
        let mut v = tlv(4, &[]);
        v.extend_from_slice(&[0, 0]);
        assert_eq!(decode_causes(&v).len(), 1);
    }

    #[test]
    fn empty_value() {
        assert!(decode_causes(&[]).is_empty());
        assert_eq!(cause_tlvs(&[]).count(), 0);
    }

    #[test]
    fn serde_round_trip() {
        let c = one(12, b"x");
        let j = serde_json::to_string(&c).unwrap();
        assert_eq!(
            j,
            r#"{"code":12,"name":"User-Initiated Abort","detail":"\"x\""}"#
        );
        assert_eq!(serde_json::from_str::<CauseInfo>(&j).unwrap(), c);
    }

    #[test]
    fn long_lists_are_capped() {
        let mut body = 40u32.to_be_bytes().to_vec();
        for _ in 0..40 {
            body.extend_from_slice(&[0, 7]);
        }
        let d = detail(2, &body).unwrap();
        assert_eq!(d.matches("State Cookie (7)").count(), 32);
        assert!(d.ends_with(", … (8 more)"), "{d}");
        // An ASCONF parameter nested in an ASCONF parameter is not expanded again.
        let mut inner = 1u32.to_be_bytes().to_vec();
        inner.extend(ipv4([10, 0, 0, 1]));
        let mut outer = 2u32.to_be_bytes().to_vec();
        outer.extend(tlv(0xC001, &inner));
        assert_eq!(
            detail(0x00A1, &tlv(0xC002, &outer)).as_deref(),
            Some("Delete IP Address (0xC002), correlation id 2, Add IP Address (0xC001), 16 bytes")
        );
    }

    #[test]
    fn never_panics_on_any_short_input() {
        // Every prefix of a varied value, and every byte value in a header position.
        let mut v = tlv(2, &[0, 0, 0, 9, 0, 7]);
        v.extend(tlv(5, &tlv(11, b"h")));
        v.extend(tlv(6, &[1]));
        v.extend(tlv(0x00A1, &tlv(0xC002, &[0, 0])));
        v.extend(tlv(0x0105, &[]));
        for n in 0..=v.len() {
            let _ = decode_causes(&v[..n]);
            let _ = cause_tlvs(&v[..n]).count();
        }
        for b in 0..=255u8 {
            let mut w = v.clone();
            w[3] = b;
            let _ = decode_causes(&w);
        }
    }
}
