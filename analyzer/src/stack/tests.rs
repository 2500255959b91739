//! Tests of the stack rules on hand-built INIT / INIT-ACK chunks, parsed by the real chunk parser:
//! one per rule, and the cases that must stay null.

use super::rules::p::*;
use super::*;

const TAG: u32 = 0x1234_5678;
const PEER_TAG: u32 = 0x9abc_def0;

/// An INIT (or INIT-ACK) value: the 16 fixed bytes, then each parameter padded to 4 bytes.
fn value(rwnd: u32, os: u16, mis: u16, params: &[(u16, Vec<u8>)]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend(TAG.to_be_bytes());
    v.extend(rwnd.to_be_bytes());
    v.extend(os.to_be_bytes());
    v.extend(mis.to_be_bytes());
    v.extend(0x0102_0304u32.to_be_bytes());
    for (t, body) in params {
        v.extend(t.to_be_bytes());
        v.extend(((body.len() + 4) as u16).to_be_bytes());
        v.extend(body);
        while v.len() % 4 != 0 {
            v.push(0);
        }
    }
    v
}

fn param(t: u16) -> (u16, Vec<u8>) {
    (t, Vec::new())
}
fn v4(last: u8) -> (u16, Vec<u8>) {
    (IPV4, vec![10, 0, 0, last])
}
fn sat() -> (u16, Vec<u8>) {
    (SUPPORTED_ADDR, vec![0, 5])
}
fn ext(list: &[u8]) -> (u16, Vec<u8>) {
    (EXTENSIONS, list.to_vec())
}
fn cookie(bytes: Vec<u8>) -> (u16, Vec<u8>) {
    (COOKIE, bytes)
}

/// The Seen of one chunk (`ack`: INIT-ACK), `cut` bytes of its value captured when given.
fn seen_cut(ack: bool, v: &[u8], cut: Option<usize>) -> Seen {
    let captured = cut.map_or(v, |n| &v[..n]);
    let view = ChunkView {
        ctype: if ack { 2 } else { 1 },
        flags: 0,
        length: (v.len() + 4) as u16,
        value: captured,
        offset: 12,
        truncated: cut.is_some(),
    };
    let Ok(crate::sctp::Chunk::Init(init)) = view.parse() else {
        panic!("test chunk is not an INIT");
    };
    Seen::new(&view, &init, if ack { PEER_TAG } else { 0 })
}

fn seen(ack: bool, v: &[u8]) -> Seen {
    seen_cut(ack, v, None)
}

fn guess(init: Option<&Seen>, ack: Option<&Seen>) -> (Option<String>, String, String) {
    let r = rules::classify(init, ack);
    (r.name, r.confidence, r.evidence)
}

/// A Linux cookie: a 32-byte MAC (an MD5 digest, zero-padded), optionally the 4-byte pad, then
/// my_vtag and peer_vtag little-endian, then the rest of struct sctp_cookie.
fn linux_cookie(pad: bool) -> Vec<u8> {
    let mut c: Vec<u8> = (1..=16).collect();
    c.resize(32, 0);
    if pad {
        c.extend([0; 4]);
    }
    c.extend(TAG.to_le_bytes());
    c.extend(PEER_TAG.to_le_bytes());
    c.resize(200, 7);
    c
}

/// The lab's usrsctp INIT (usrsctp 0.9.5): ECN, Forward-TSN, Supported Extensions [192, 15, 193,
/// 128, 130], RANDOM, HMAC-ALGO, CHUNKS, Supported Address Types, two IPv4 addresses.
fn usrsctp_init() -> Vec<u8> {
    value(
        131_072,
        10,
        2048,
        &[
            param(ECN),
            param(FORWARD_TSN),
            ext(&[192, 15, 193, 128, 130]),
            (RANDOM, vec![9; 32]),
            (HMAC_ALGO, vec![0, 1]),
            (CHUNKS, vec![193, 128]),
            sat(),
            v4(1),
            v4(2),
        ],
    )
}

fn usrsctp_init_ack(cookie_magic: &[u8]) -> Vec<u8> {
    let mut c = cookie_magic.to_vec();
    c.resize(356, 0);
    value(
        131_072,
        10,
        2048,
        &[
            param(ECN),
            param(FORWARD_TSN),
            ext(&[192, 15, 193, 128, 130]),
            (RANDOM, vec![9; 32]),
            (HMAC_ALGO, vec![0, 1]),
            (CHUNKS, vec![193, 128]),
            v4(3),
            v4(4),
            cookie(c),
        ],
    )
}

#[test]
fn linux_init_order_with_kernel_defaults_is_high() {
    let i = seen(
        false,
        &value(
            106_496,
            10,
            65535,
            &[v4(1), v4(2), sat(), param(ECN), param(FORWARD_TSN)],
        ),
    );
    let (name, conf, ev) = guess(Some(&i), None);
    assert_eq!(name.as_deref(), Some("linux"));
    assert_eq!(conf, "high");
    assert!(ev.contains("Linux kernel's order"), "{ev}");
    assert!(ev.contains("65535 inbound streams"), "{ev}");
}

#[test]
fn linux_init_order_alone_is_medium() {
    // Open5GS-like: one address (none listed), streams set by the application, another rwnd.
    let i = seen(
        false,
        &value(50_000, 2, 2, &[sat(), param(ECN), param(FORWARD_TSN)]),
    );
    let (name, conf, _) = guess(Some(&i), None);
    assert_eq!(name.as_deref(), Some("linux"));
    assert_eq!(conf, "medium");
    // With ASCONF and RE-CONFIG on, the extension list sits between ECN and Forward-TSN.
    let i = seen(
        false,
        &value(
            50_000,
            2,
            2,
            &[sat(), param(ECN), ext(&[193, 128, 130]), param(FORWARD_TSN)],
        ),
    );
    assert_eq!(guess(Some(&i), None).0.as_deref(), Some("linux"));
}

#[test]
fn linux_cookie_layout_identifies_the_init_ack_sender() {
    for pad in [true, false] {
        let a = seen(
            true,
            &value(
                106_496,
                10,
                10,
                &[
                    v4(3),
                    cookie(linux_cookie(pad)),
                    param(ECN),
                    param(FORWARD_TSN),
                ],
            ),
        );
        let (name, conf, ev) = guess(None, Some(&a));
        assert_eq!(name.as_deref(), Some("linux"), "{ev}");
        assert_eq!(conf, "high");
        let at = if pad { "byte 36" } else { "byte 32" };
        assert!(
            ev.contains(at) && ev.contains("followed by the peer's"),
            "{ev}"
        );
    }
    // The same order with a cookie of another layout: the order alone names nothing.
    let mut other = vec![0x55; 200];
    other[..4].copy_from_slice(&TAG.to_be_bytes());
    let a = seen(
        true,
        &value(
            106_496,
            10,
            10,
            &[cookie(other), param(ECN), param(FORWARD_TSN)],
        ),
    );
    assert_eq!(guess(None, Some(&a)).0, None);
}

#[test]
fn usrsctp_init_order_is_high_and_kame_cookie_too() {
    let i = seen(false, &usrsctp_init());
    let (name, conf, ev) = guess(Some(&i), None);
    assert_eq!(name.as_deref(), Some("usrsctp"));
    assert_eq!(conf, "high");
    assert!(ev.contains("FORWARD-TSN first"), "{ev}");
    let a = seen(true, &usrsctp_init_ack(b"KAME-BSD 1.1"));
    let (name, conf, ev) = guess(None, Some(&a));
    assert_eq!((name.as_deref(), conf.as_str()), (Some("usrsctp"), "high"));
    assert!(ev.contains("KAME-BSD"), "{ev}");
    // The whole order without the cookie magic is still only FreeBSD's.
    let a = seen(true, &usrsctp_init_ack(&[0x42; 16]));
    let (name, conf, _) = guess(None, Some(&a));
    assert_eq!((name.as_deref(), conf.as_str()), (Some("usrsctp"), "high"));
    // Without AUTH (sctp_auth_enable 0) and the magic: the extension list and the cookie last.
    let a = seen(
        true,
        &value(
            131_072,
            10,
            2048,
            &[
                param(ECN),
                param(FORWARD_TSN),
                ext(&[192, 130]),
                v4(3),
                cookie(vec![0x42; 100]),
            ],
        ),
    );
    let (name, conf, _) = guess(None, Some(&a));
    assert_eq!(
        (name.as_deref(), conf.as_str()),
        (Some("usrsctp"), "medium")
    );
}

#[test]
fn usrsctp_init_cut_by_the_snap_length_is_medium() {
    // A 96-byte snap length leaves 50 bytes of the INIT: ECN, Forward-TSN, the extension list
    // and the start of RANDOM.
    let v = usrsctp_init();
    let i = seen_cut(false, &v, Some(50));
    assert!(i.truncated);
    let (name, conf, ev) = guess(Some(&i), None);
    assert_eq!(
        (name.as_deref(), conf.as_str()),
        (Some("usrsctp"), "medium"),
        "{ev}"
    );
}

#[test]
fn dcsctp_capabilities_are_medium_and_its_cookie_magic_high() {
    let fwd_ext = [param(FORWARD_TSN), ext(&[130, 192])];
    let i = seen(false, &value(5 * 1024 * 1024, 65535, 65535, &fwd_ext));
    let (name, conf, ev) = guess(Some(&i), None);
    assert_eq!(
        (name.as_deref(), conf.as_str()),
        (Some("dcsctp"), "medium"),
        "{ev}"
    );
    let mut c = b"dcSCTP00".to_vec();
    c.resize(80, 1);
    let a = seen(
        true,
        &value(
            5 * 1024 * 1024,
            65535,
            65535,
            &[cookie(c), param(FORWARD_TSN), ext(&[130, 192])],
        ),
    );
    let (name, conf, ev) = guess(None, Some(&a));
    assert_eq!(
        (name.as_deref(), conf.as_str()),
        (Some("dcsctp"), "high"),
        "{ev}"
    );
    assert!(ev.contains("dcSCTP00"), "{ev}");
}

#[test]
fn pion_extension_list_alone_is_low() {
    let i = seen(false, &value(1 << 20, 65535, 65535, &[ext(&[130, 192])]));
    let (name, conf, _) = guess(Some(&i), None);
    assert_eq!((name.as_deref(), conf.as_str()), (Some("pion"), "low"));
}

#[test]
fn weak_or_foreign_signatures_stay_null() {
    let cases: Vec<(bool, Vec<u8>)> = vec![
        // Forward-TSN before Supported Address Types, no extension list (Wireshark's
        // sctp-test.cap): neither the kernel's order nor usrsctp's extension list.
        (false, value(65535, 17, 17, &[param(FORWARD_TSN), sat()])),
        // An address and Supported Address Types only (an M3UA product, ip-frag.pcap).
        (false, value(102_400, 1024, 1024, &[v4(1), sat()])),
        // Cookie first, then Forward-TSN, with a cookie of no known layout.
        (
            true,
            value(4096, 17, 17, &[cookie(vec![3; 64]), param(FORWARD_TSN)]),
        ),
        // Nothing but the fixed fields (a synthetic INIT).
        (false, value(65535, 10, 10, &[])),
        // Addresses and cookie only.
        (true, value(65535, 10, 10, &[v4(1), cookie(vec![3; 64])])),
    ];
    for (ack, v) in cases {
        let s = seen(ack, &v);
        let (i, a) = if ack {
            (None, Some(&s))
        } else {
            (Some(&s), None)
        };
        let (name, conf, ev) = guess(i, a);
        assert_eq!(name, None, "{ev}");
        assert_eq!(conf, "low");
        assert!(ev.contains("Sent:"), "{ev}");
    }
    let (name, _, ev) = guess(None, None);
    assert_eq!(name, None);
    assert!(ev.contains("no INIT or INIT-ACK"), "{ev}");
}

#[test]
fn a_kame_cookie_outweighs_an_init_in_another_order() {
    // An INIT in the kernel's order from an endpoint whose INIT-ACK carries a KAME cookie: the
    // INIT-ACK contradicts the kernel, the cookie names usrsctp.
    let i = seen(
        false,
        &value(106_496, 10, 65535, &[sat(), param(ECN), param(FORWARD_TSN)]),
    );
    let a = seen(true, &usrsctp_init_ack(b"KAME-BSD 1.1"));
    let (name, _, ev) = guess(Some(&i), Some(&a));
    assert_eq!(name.as_deref(), Some("usrsctp"), "{ev}");
}

#[test]
fn stacks_keep_the_first_init_of_each_endpoint_and_report_json() {
    let mut st = Stacks::default();
    let feed = |st: &mut Stacks, sender: u8, ack: bool, v: &[u8]| {
        let view = ChunkView {
            ctype: if ack { 2 } else { 1 },
            flags: 0,
            length: (v.len() + 4) as u16,
            value: v,
            offset: 12,
            truncated: false,
        };
        let Ok(crate::sctp::Chunk::Init(init)) = view.parse() else {
            panic!("not an INIT");
        };
        st.init(sender, if ack { PEER_TAG } else { 0 }, &view, &init);
    };
    feed(&mut st, 0, false, &usrsctp_init());
    // A later INIT of another shape from the same endpoint is not kept.
    feed(&mut st, 0, false, &value(1, 1, 1, &[]));
    feed(
        &mut st,
        1,
        true,
        &value(
            106_496,
            10,
            10,
            &[cookie(linux_cookie(true)), param(ECN), param(FORWARD_TSN)],
        ),
    );
    assert_eq!(st.report(0).name.as_deref(), Some("usrsctp"));
    assert_eq!(st.report(1).name.as_deref(), Some("linux"));
    let json = serde_json::to_value(st.report(1)).unwrap();
    assert_eq!(json["name"], "linux");
    assert_eq!(json["confidence"], "high");
    assert!(json["evidence"].as_str().unwrap().contains("INIT-ACK"));
}
