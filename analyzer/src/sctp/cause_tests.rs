//! Unit tests of `cause`: error causes and their fields decoded from hand-built bytes.

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
