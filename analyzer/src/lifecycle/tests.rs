//! Tests of the lifecycle analysis on hand-built chunks (ABORT / ERROR values as bytes, so the
//! real cause decoder runs): the test helpers, the handshake, collisions and restarts.

use super::*;
use crate::packet::TimeBase;

pub(super) const A: &str = "10.0.0.1";
pub(super) const B: &str = "10.0.0.2";
pub(super) const TAG0: u32 = 0x0a0a_0a0a;
pub(super) const TAG1: u32 = 0x0b0b_0b0b;
pub(super) const TB: TimeBase = TimeBase { first_ns: Some(0) };

/// A packet from endpoint `sender` (0 = 10.0.0.1:5000, 1 = 10.0.0.2:6000) at `ms`.
pub(super) fn ctx(frame: u64, ms: f64, sender: u8, vtag: u32) -> PacketCtx {
    let (a, b) = ((A, 5000), (B, 6000));
    let (src, dst) = if sender == 0 { (a, b) } else { (b, a) };
    PacketCtx {
        vtag,
        ..PacketCtx::test(frame, ms, src, dst)
    }
}

/// Feeds one chunk (type, flags, value) through the real chunk parser.
pub(super) fn feed(
    lc: &mut Lifecycle,
    c: &PacketCtx,
    sender: u8,
    ctype: u8,
    flags: u8,
    value: &[u8],
) {
    let view = ChunkView {
        ctype,
        flags,
        length: (value.len() + 4) as u16,
        value,
        offset: 12,
        truncated: false,
    };
    let chunk = view.parse().expect("test chunk parses");
    lc.chunk(c, sender, &view, &chunk);
}

pub(super) fn init_value(tag: u32) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&tag.to_be_bytes());
    v.extend_from_slice(&65536u32.to_be_bytes());
    v.extend_from_slice(&10u16.to_be_bytes());
    v.extend_from_slice(&10u16.to_be_bytes());
    v.extend_from_slice(&1000u32.to_be_bytes());
    v
}

pub(super) fn data_value(tsn: u32) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&tsn.to_be_bytes());
    v.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, 46]);
    v.extend_from_slice(b"payload!");
    v
}

pub(super) fn sack_value(cum: u32) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&cum.to_be_bytes());
    v.extend_from_slice(&65536u32.to_be_bytes());
    v.extend_from_slice(&[0, 0, 0, 0]);
    v
}

/// One error cause TLV, padded to 4 bytes.
pub(super) fn cause(code: u16, body: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&code.to_be_bytes());
    v.extend_from_slice(&((body.len() + 4) as u16).to_be_bytes());
    v.extend_from_slice(body);
    while v.len() % 4 != 0 {
        v.push(0);
    }
    v
}

/// Heartbeat info parameter (type 1) with `n` as its body.
pub(super) fn hb_info(n: u32) -> Vec<u8> {
    let mut v = vec![0, 1, 0, 8];
    v.extend_from_slice(&n.to_be_bytes());
    v
}

pub(super) fn kinds(r: &LifecycleReport) -> Vec<&str> {
    r.events.iter().map(|e| e.kind.as_str()).collect()
}

pub(super) fn report(lc: &Lifecycle) -> LifecycleReport {
    lc.report(TB, [5000, 6000], [Some(TAG0), Some(TAG1)])
}

/// Endpoint 0's INIT (tag `TAG0`) at frame 1, time 0.
pub(super) fn init(lc: &mut Lifecycle) {
    feed(lc, &ctx(1, 0.0, 0, 0), 0, types::INIT, 0, &init_value(TAG0));
}

/// INIT / INIT-ACK / COOKIE-ECHO / COOKIE-ACK at frames 1-4, 0-30 ms.
pub(super) fn handshake(lc: &mut Lifecycle) {
    init(lc);
    feed(
        lc,
        &ctx(2, 10.0, 1, TAG0),
        1,
        types::INIT_ACK,
        0,
        &init_value(TAG1),
    );
    feed(
        lc,
        &ctx(3, 20.0, 0, TAG1),
        0,
        types::COOKIE_ECHO,
        0,
        &[7; 32],
    );
    feed(lc, &ctx(4, 30.0, 1, TAG0), 1, types::COOKIE_ACK, 0, &[]);
}

#[test]
fn handshake_events_and_their_delays() {
    let mut lc = Lifecycle::default();
    handshake(&mut lc);
    assert!(lc.handshake_started());
    assert!(lc.handshake_completed());
    let r = report(&lc);
    assert_eq!(kinds(&r), ["init", "init_ack", "cookie_echo", "cookie_ack"]);
    assert_eq!(r.events[1].delay_ms, Some(10.0));
    assert_eq!(r.events[1].by, Some(1));
    assert!(r.events[3]
        .detail
        .contains("handshake 30 ms from the first INIT"));
    assert_eq!(r.events[0].chunks, ["INIT"]);
    assert_eq!(lc.handshake_ns(), Some(30_000_000));
    assert_eq!(
        r.events[0].filter,
        "frame.number == 1 && sctp.chunk_type == 1"
    );
    assert_eq!(r.end.kind, "open_at_capture_end");
}

#[test]
fn init_retransmitted_twice_shows_the_t1_init_backoff() {
    let mut lc = Lifecycle::default();
    for (f, ms) in [(1, 0.0), (2, 3000.0), (3, 9000.0)] {
        feed(
            &mut lc,
            &ctx(f, ms, 0, 0),
            0,
            types::INIT,
            0,
            &init_value(TAG0),
        );
    }
    lc.finish();
    let r = report(&lc);
    assert_eq!(
        kinds(&r),
        ["init", "init_retransmitted", "init_retransmitted"]
    );
    assert_eq!(r.events[1].delay_ms, Some(3000.0));
    assert_eq!(r.events[2].delay_ms, Some(6000.0));
    assert!(r.events[1]
        .detail
        .contains("INIT retransmitted (T1-init expired after 3.0 s, RFC 9260 5.1)"));
    assert!(r.events[2].detail.contains("2.0x the previous wait"));
    assert_eq!(lc.end_kind(), EndKind::HandshakeFailed);
    assert_eq!(r.end.kind, "handshake_failed");
    assert_eq!(r.end.by, None);
    assert!(r.end.detail.contains("no INIT-ACK"), "{}", r.end.detail);
}

#[test]
fn init_answered_by_abort_is_a_failed_handshake_with_its_cause() {
    let mut lc = Lifecycle::default();
    feed(
        &mut lc,
        &ctx(1, 0.0, 0, 0),
        0,
        types::INIT,
        0,
        &init_value(TAG0),
    );
    // RFC 9260 8.4 rule 3: the ABORT carries the INIT's Initiate Tag, T bit 0.
    let value = cause(12, b"no listener");
    feed(&mut lc, &ctx(2, 1.0, 1, TAG0), 1, types::ABORT, 0, &value);
    lc.finish();
    assert!(!lc.handshake_completed());
    assert_eq!(lc.end_kind(), EndKind::HandshakeFailed);
    assert_eq!(lc.abort_causes().len(), 1);
    assert_eq!(lc.abort_causes()[0].code, 12);
    assert_eq!(lc.abort_causes()[0].name, "User-Initiated Abort");
    let r = report(&lc);
    assert_eq!(kinds(&r), ["init", "abort"]);
    assert!(r.events[1].detail.contains("answering the INIT"));
    assert!(r.events[1].detail.contains("User-Initiated Abort"));
    assert!(r.events[1].detail.contains("no listener"));
    assert_eq!(r.end.by, Some(1));
    assert_eq!(r.end.frame, Some(2));
    assert_eq!(r.end.causes, lc.abort_causes());
    assert!(r.end.detail.contains("answered the INIT with an ABORT"));
    // A cause says why: no guess about listeners.
    assert!(!r.end.detail.contains("listens"), "{}", r.end.detail);
}

/// An INIT refused by an ABORT without a cause (T bit 0): what the Linux kernel answers when no
/// socket listens on the port; the end names the port. With the T bit set it is not that answer.
#[test]
fn init_refused_without_a_cause_names_the_port_nothing_may_listen_on() {
    for t_bit in [false, true] {
        let mut lc = Lifecycle::default();
        init(&mut lc);
        feed(
            &mut lc,
            &ctx(2, 0.001, 1, TAG0),
            1,
            types::ABORT,
            u8::from(t_bit),
            &[],
        );
        lc.finish();
        assert_eq!(lc.end_kind(), EndKind::HandshakeFailed);
        let r = report(&lc);
        let d = &r.end.detail;
        assert!(d.contains("answered the INIT with an ABORT"), "{d}");
        assert_eq!(
            d.contains("no socket listens on the port (port 6000 of endpoint 1)"),
            !t_bit,
            "{d}"
        );
    }
}

#[test]
fn stale_cookie_error_then_a_new_init() {
    let mut lc = Lifecycle::default();
    feed(
        &mut lc,
        &ctx(1, 0.0, 0, 0),
        0,
        types::INIT,
        0,
        &init_value(TAG0),
    );
    feed(
        &mut lc,
        &ctx(2, 10.0, 1, TAG0),
        1,
        types::INIT_ACK,
        0,
        &init_value(TAG1),
    );
    feed(
        &mut lc,
        &ctx(3, 20.0, 0, TAG1),
        0,
        types::COOKIE_ECHO,
        0,
        &[7; 32],
    );
    let value = cause(3, &1500u32.to_be_bytes());
    feed(&mut lc, &ctx(4, 30.0, 1, TAG0), 1, types::ERROR, 0, &value);
    feed(
        &mut lc,
        &ctx(5, 40.0, 0, 0),
        0,
        types::INIT,
        0,
        &init_value(TAG0),
    );
    lc.finish();
    let r = report(&lc);
    assert_eq!(
        kinds(&r),
        ["init", "init_ack", "cookie_echo", "stale_cookie", "init"]
    );
    let st = &r.events[3];
    assert_eq!(st.delay_ms, Some(1.5));
    assert_eq!(st.causes[0].code, 3);
    assert_eq!(st.causes[0].name, "Stale Cookie Error");
    assert!(st.detail.contains("1.5 ms after the cookie's lifetime"));
    assert!(r.events[4].detail.contains("after the Stale Cookie Error"));
    assert_eq!(r.end.kind, "handshake_failed");
    assert!(r.end.detail.contains("Stale Cookie Error"));
}

#[test]
fn cookie_echo_retransmitted_and_completed_by_traffic_without_cookie_ack() {
    let mut lc = Lifecycle::default();
    feed(
        &mut lc,
        &ctx(1, 0.0, 0, 0),
        0,
        types::INIT,
        0,
        &init_value(TAG0),
    );
    feed(
        &mut lc,
        &ctx(2, 10.0, 1, TAG0),
        1,
        types::INIT_ACK,
        0,
        &init_value(TAG1),
    );
    feed(
        &mut lc,
        &ctx(3, 20.0, 0, TAG1),
        0,
        types::COOKIE_ECHO,
        0,
        &[7; 32],
    );
    // DATA bundled with the COOKIE-ECHO proves nothing.
    feed(
        &mut lc,
        &ctx(3, 20.0, 0, TAG1),
        0,
        types::DATA,
        0x03,
        &data_value(1000),
    );
    assert!(!lc.handshake_completed());
    feed(
        &mut lc,
        &ctx(4, 1020.0, 0, TAG1),
        0,
        types::COOKIE_ECHO,
        0,
        &[7; 32],
    );
    let r = report(&lc);
    assert_eq!(r.events[3].kind, "cookie_echo_retransmitted");
    assert_eq!(r.events[3].delay_ms, Some(1000.0));
    assert!(r.events[3].detail.contains("T1-cookie expired after 1.0 s"));
    // The peer's SACK: only an established association sends it.
    feed(
        &mut lc,
        &ctx(5, 1030.0, 1, TAG0),
        1,
        types::SACK,
        0,
        &sack_value(1000),
    );
    assert!(lc.handshake_completed());
    lc.finish();
    assert_eq!(lc.end_kind(), EndKind::OpenAtCaptureEnd);
}

#[test]
fn crossing_inits_are_an_init_collision() {
    let mut lc = Lifecycle::default();
    feed(
        &mut lc,
        &ctx(1, 0.0, 0, 0),
        0,
        types::INIT,
        0,
        &init_value(TAG0),
    );
    feed(
        &mut lc,
        &ctx(2, 1.0, 1, 0),
        1,
        types::INIT,
        0,
        &init_value(TAG1),
    );
    // RFC 9260 5.2.1: each answers with its own original tag.
    feed(
        &mut lc,
        &ctx(3, 10.0, 0, TAG1),
        0,
        types::INIT_ACK,
        0,
        &init_value(TAG0),
    );
    feed(
        &mut lc,
        &ctx(4, 11.0, 1, TAG0),
        1,
        types::INIT_ACK,
        0,
        &init_value(TAG1),
    );
    feed(
        &mut lc,
        &ctx(5, 20.0, 0, TAG1),
        0,
        types::COOKIE_ECHO,
        0,
        &[7; 32],
    );
    feed(
        &mut lc,
        &ctx(6, 21.0, 1, TAG0),
        1,
        types::COOKIE_ECHO,
        0,
        &[8; 32],
    );
    feed(
        &mut lc,
        &ctx(7, 30.0, 1, TAG0),
        1,
        types::COOKIE_ACK,
        0,
        &[],
    );
    feed(
        &mut lc,
        &ctx(8, 31.0, 0, TAG1),
        0,
        types::COOKIE_ACK,
        0,
        &[],
    );
    assert!(lc.handshake_completed());
    let r = report(&lc);
    let coll: Vec<&EventReport> = r
        .events
        .iter()
        .filter(|e| e.kind == "init_collision")
        .collect();
    assert_eq!(coll.len(), 3, "{:#?}", r.events);
    assert_eq!(coll[0].frame, 2);
    assert_eq!(coll[0].by, Some(1));
    assert!(coll[0].detail.contains("RFC 9260 5.2.1"));
    assert!(coll[0].detail.contains("COOKIE-WAIT"));
    assert_eq!(coll[1].frame, 5);
    assert!(coll[1].detail.contains("case B"), "{}", coll[1].detail);
    assert_eq!(coll[2].frame, 6);
    assert!(coll[2].detail.contains("COOKIE-ECHOED"));
    assert!(coll[2].detail.contains("case D"), "{}", coll[2].detail);
    assert_eq!(coll[2].filter, "frame.number == 6 && sctp.chunk_type == 10");
}

#[test]
fn late_init_ack_is_unexpected() {
    let mut lc = Lifecycle::default();
    feed(
        &mut lc,
        &ctx(1, 0.0, 0, 0),
        0,
        types::INIT,
        0,
        &init_value(TAG0),
    );
    feed(
        &mut lc,
        &ctx(2, 1000.0, 0, 0),
        0,
        types::INIT,
        0,
        &init_value(TAG0),
    );
    feed(
        &mut lc,
        &ctx(3, 1010.0, 1, TAG0),
        1,
        types::INIT_ACK,
        0,
        &init_value(TAG1),
    );
    feed(
        &mut lc,
        &ctx(4, 1020.0, 0, TAG1),
        0,
        types::COOKIE_ECHO,
        0,
        &[7; 32],
    );
    feed(
        &mut lc,
        &ctx(5, 1021.0, 1, TAG0),
        1,
        types::INIT_ACK,
        0,
        &init_value(TAG1),
    );
    let r = report(&lc);
    let last = r.events.last().unwrap();
    assert_eq!(last.kind, "init_collision");
    assert!(last.detail.contains("RFC 9260 5.2.3"));
    assert!(last.detail.contains("COOKIE-ECHOED"));
}

#[test]
fn repeated_cookie_echo_of_a_plain_handshake_is_no_collision() {
    let mut lc = Lifecycle::default();
    handshake(&mut lc);
    feed(
        &mut lc,
        &ctx(5, 1020.0, 0, TAG1),
        0,
        types::COOKIE_ECHO,
        0,
        &[7; 32],
    );
    let r = report(&lc);
    assert_eq!(r.events.last().unwrap().kind, "cookie_echo_retransmitted");
    assert!(!kinds(&r).contains(&"init_collision"));
}

#[test]
fn init_in_established_is_reported() {
    let mut lc = Lifecycle::default();
    handshake(&mut lc);
    feed(
        &mut lc,
        &ctx(5, 500.0, 0, 0),
        0,
        types::INIT,
        0,
        &init_value(TAG0),
    );
    let r = report(&lc);
    assert_eq!(kinds(&r)[4..], ["init", "init_collision"]);
    assert!(r.events[5].detail.contains("5.2.2"));
    assert!(r.events[5].detail.contains("late duplicate"));
}

#[test]
fn restart_ends_the_old_record_and_opens_the_new() {
    let mut old = Lifecycle::default();
    handshake(&mut old);
    let c = ctx(10, 5000.0, 1, 0);
    old.restarted(&c, 1, 7);
    assert!(old.ended());
    assert_eq!(old.end_kind(), EndKind::Restarted);
    old.finish();
    let r = report(&old);
    let ev = r.events.last().unwrap();
    assert_eq!(ev.kind, "restart");
    assert_eq!(ev.by, Some(1));
    assert!(ev.detail.contains("association 7"));
    assert_eq!(r.end.kind, "restarted");
    assert_eq!(r.end.by, Some(1));
    assert_eq!(r.end.frame, Some(10));

    let mut new = Lifecycle::default();
    new.restart_of(&c, 3);
    feed(&mut new, &c, 1, types::INIT, 0, &init_value(0x1234_5678));
    let r = new.report(TB, [6000, 5000], [Some(0x1234_5678), Some(TAG0)]);
    assert_eq!(kinds(&r), ["restart", "init"]);
    assert_eq!(r.events[0].by, Some(1));
    assert!(r.events[0].detail.contains("restart of association 3"));
    assert_eq!(
        r.events[0].filter,
        "frame.number == 10 && sctp.chunk_type == 1"
    );
}

#[test]
fn handshake_without_cookie_ack_names_the_missing_step() {
    let mut lc = Lifecycle::default();
    feed(
        &mut lc,
        &ctx(1, 0.0, 0, 0),
        0,
        types::INIT,
        0,
        &init_value(TAG0),
    );
    feed(
        &mut lc,
        &ctx(2, 10.0, 1, TAG0),
        1,
        types::INIT_ACK,
        0,
        &init_value(TAG1),
    );
    feed(
        &mut lc,
        &ctx(3, 20.0, 0, TAG1),
        0,
        types::COOKIE_ECHO,
        0,
        &[7; 32],
    );
    lc.finish();
    let r = report(&lc);
    assert_eq!(r.end.kind, "handshake_failed");
    assert!(r.end.detail.contains("no COOKIE-ACK"), "{}", r.end.detail);
}
