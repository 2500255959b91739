//! Tests of the lifecycle's end: SHUTDOWN, ABORT / ERROR, heartbeat loss, packets after the end,
//! the event bound, the filters and the JSON form.

use super::tests::*;
use super::*;

#[test]
fn full_lifecycle_ends_in_shutdown_with_the_last_data_wait() {
    let mut lc = Lifecycle::default();
    handshake(&mut lc);
    feed(
        &mut lc,
        &ctx(5, 100.0, 0, TAG1),
        0,
        types::DATA,
        0x03,
        &data_value(1000),
    );
    feed(
        &mut lc,
        &ctx(6, 150.0, 1, TAG0),
        1,
        types::SACK,
        0,
        &sack_value(1000),
    );
    feed(
        &mut lc,
        &ctx(7, 300.0, 0, TAG1),
        0,
        types::SHUTDOWN,
        0,
        &1000u32.to_be_bytes(),
    );
    feed(
        &mut lc,
        &ctx(8, 310.0, 1, TAG0),
        1,
        types::SHUTDOWN_ACK,
        0,
        &[],
    );
    feed(
        &mut lc,
        &ctx(9, 320.0, 0, TAG1),
        0,
        types::SHUTDOWN_COMPLETE,
        0,
        &[],
    );
    assert!(lc.ended());
    lc.finish();
    let r = report(&lc);
    assert_eq!(
        kinds(&r)[4..],
        ["shutdown", "shutdown_ack", "shutdown_complete"]
    );
    let sd = &r.events[4];
    assert_eq!(sd.by, Some(0));
    assert_eq!(sd.delay_ms, Some(200.0));
    assert!(sd.detail.contains("200 ms after its last DATA"));
    // The SACK came 50 ms after the DATA and the SHUTDOWN 150 ms after that: not a SACK wait.
    assert!(
        sd.detail
            .contains("acknowledged 50 ms after it was sent: the application closed later"),
        "{}",
        sd.detail
    );
    assert_eq!(r.events[5].delay_ms, Some(10.0));
    assert_eq!(lc.end_kind(), EndKind::Shutdown);
    assert_eq!(r.end.kind, "shutdown");
    assert_eq!(r.end.by, Some(0));
    assert_eq!(r.end.frame, Some(9));
    assert_eq!(r.end.t_s, Some(0.32));
    assert!(r
        .end
        .detail
        .contains("last DATA 200 ms before the SHUTDOWN"));
}

#[test]
fn shutdown_right_after_the_sack_of_the_last_data_is_a_sack_wait() {
    let mut lc = Lifecycle::default();
    handshake(&mut lc);
    let data = data_value(1000);
    feed(
        &mut lc,
        &ctx(5, 100.0, 0, TAG1),
        0,
        types::DATA,
        0x03,
        &data,
    );
    // A delayed SACK 200 ms later, and the SHUTDOWN 1 ms after it.
    let sack = sack_value(1000);
    feed(&mut lc, &ctx(6, 300.0, 1, TAG0), 1, types::SACK, 0, &sack);
    let cum = 1000u32.to_be_bytes();
    feed(
        &mut lc,
        &ctx(7, 301.0, 0, TAG1),
        0,
        types::SHUTDOWN,
        0,
        &cum,
    );
    let r = report(&lc);
    let sd = r.events.iter().find(|e| e.kind == "shutdown").unwrap();
    assert_eq!(sd.delay_ms, Some(201.0));
    assert!(
        sd.detail
            .contains("it waited for the SACK of that DATA, which came 200 ms after it"),
        "{}",
        sd.detail
    );
}

#[test]
fn a_shutdown_repeated_within_a_millisecond_answers_data_not_a_t2_expiry() {
    let mut lc = Lifecycle::default();
    handshake(&mut lc);
    let cum = 1000u32.to_be_bytes();
    let shutdown = |lc: &mut Lifecycle, frame: u64, ms: f64| {
        feed(lc, &ctx(frame, ms, 0, TAG1), 0, types::SHUTDOWN, 0, &cum)
    };
    shutdown(&mut lc, 5, 300.0);
    // The peer's DATA crossed the SHUTDOWN; the answer (RFC 9260 9.2) follows 0.5 ms later.
    let data = data_value(2000);
    feed(
        &mut lc,
        &ctx(6, 300.2, 1, TAG0),
        1,
        types::DATA,
        0x03,
        &data,
    );
    shutdown(&mut lc, 7, 300.5);
    // Then one a T2-shutdown timeout later.
    shutdown(&mut lc, 8, 1300.5);
    let r = report(&lc);
    let repeats: Vec<&str> = r
        .events
        .iter()
        .filter(|e| e.kind == "shutdown" && e.detail.contains("repeated"))
        .map(|e| e.detail.as_str())
        .collect();
    assert_eq!(repeats.len(), 2, "{:?}", r.events);
    assert!(
        repeats[0].contains("(#2, 500 µs after the previous: too soon for a T2-shutdown expiry, which waits at least RTO.min: the answer to DATA received in SHUTDOWN-SENT; endpoint 1's last DATA came 300 µs before it, RFC 9260 9.2)"),
        "{}",
        repeats[0]
    );
    assert!(
        repeats[1].contains("(#3, 1.0 s after the previous: T2-shutdown expiry or the answer to DATA in SHUTDOWN-SENT, RFC 9260 9.2)"),
        "{}",
        repeats[1]
    );
}

#[test]
fn shutdown_without_data_has_no_delay_and_without_complete_ends_at_the_ack() {
    let mut lc = Lifecycle::default();
    handshake(&mut lc);
    feed(
        &mut lc,
        &ctx(5, 300.0, 1, TAG0),
        1,
        types::SHUTDOWN,
        0,
        &0u32.to_be_bytes(),
    );
    feed(
        &mut lc,
        &ctx(6, 310.0, 0, TAG1),
        0,
        types::SHUTDOWN_ACK,
        0,
        &[],
    );
    lc.finish();
    let r = report(&lc);
    assert_eq!(r.events[4].delay_ms, None);
    assert!(r.events[4].detail.contains("sent no DATA"));
    assert_eq!(r.end.kind, "shutdown");
    assert_eq!(r.end.by, Some(1));
    assert_eq!(r.end.frame, Some(6));
    assert!(r.end.detail.contains("no SHUTDOWN-COMPLETE"));
}

#[test]
fn shutdown_complete_t_bit_is_in_the_detail() {
    let mut lc = Lifecycle::default();
    handshake(&mut lc);
    feed(
        &mut lc,
        &ctx(5, 300.0, 0, TAG1),
        0,
        types::SHUTDOWN,
        0,
        &0u32.to_be_bytes(),
    );
    feed(
        &mut lc,
        &ctx(6, 310.0, 1, TAG0),
        1,
        types::SHUTDOWN_ACK,
        0,
        &[],
    );
    feed(
        &mut lc,
        &ctx(7, 320.0, 0, TAG0),
        0,
        types::SHUTDOWN_COMPLETE,
        1,
        &[],
    );
    let r = report(&lc);
    assert!(r.events[6].detail.contains("T bit set"));
    assert!(r.end.detail.contains("T bit set"));
}

#[test]
fn abort_after_the_handshake_ends_in_abort_with_decoded_causes() {
    let mut lc = Lifecycle::default();
    handshake(&mut lc);
    let mut value = cause(13, b"bad TSN");
    value.extend(cause(1, &[0, 7, 0, 0]));
    feed(&mut lc, &ctx(5, 500.0, 1, TAG1), 1, types::ABORT, 1, &value);
    lc.finish();
    assert_eq!(lc.end_kind(), EndKind::Abort);
    let r = report(&lc);
    let ev = r.events.last().unwrap();
    assert_eq!(ev.kind, "abort");
    assert_eq!(ev.causes.len(), 2);
    assert_eq!(ev.causes[0].name, "Protocol Violation");
    assert!(ev.detail.contains("T bit set"));
    assert!(ev.detail.contains("Protocol Violation"));
    assert!(ev.detail.contains("and 1 more cause"));
    assert_eq!(r.end.kind, "abort");
    assert_eq!(r.end.by, Some(1));
    assert_eq!(r.end.causes.len(), 2);
    assert!(r.end.detail.contains("T bit set"));
    // Chunks after the end are ignored.
    feed(
        &mut lc,
        &ctx(6, 501.0, 0, TAG1),
        0,
        types::SHUTDOWN,
        0,
        &0u32.to_be_bytes(),
    );
    assert_eq!(report(&lc).events.len(), r.events.len());
}

#[test]
fn error_event_lists_its_causes() {
    let mut lc = Lifecycle::default();
    handshake(&mut lc);
    let value = cause(6, &[0x99, 0, 0, 4]);
    feed(&mut lc, &ctx(5, 40.0, 1, TAG0), 1, types::ERROR, 0, &value);
    let r = report(&lc);
    let ev = &r.events[4];
    assert_eq!(ev.kind, "error");
    assert_eq!(ev.causes[0].code, 6);
    assert!(
        ev.detail.contains("Unrecognized Chunk Type"),
        "{}",
        ev.detail
    );
    assert_eq!(ev.filter, "frame.number == 5 && sctp.chunk_type == 9");
    assert_eq!(r.end.kind, "open_at_capture_end");
}

/// Established mid-capture: DATA both ways.
fn mid_capture(lc: &mut Lifecycle) {
    feed(
        lc,
        &ctx(1, 0.0, 0, TAG1),
        0,
        types::DATA,
        0x03,
        &data_value(1),
    );
    feed(lc, &ctx(2, 1.0, 1, TAG0), 1, types::SACK, 0, &sack_value(1));
}

#[test]
fn three_unanswered_heartbeats_then_an_ack() {
    let mut lc = Lifecycle::default();
    mid_capture(&mut lc);
    for (i, ms) in [0.0, 1500.0, 3000.0, 4500.0].into_iter().enumerate() {
        let f = 10 + i as u64;
        feed(
            &mut lc,
            &ctx(f, 10.0 + ms, 0, TAG1),
            0,
            types::HEARTBEAT,
            0,
            &hb_info(i as u32),
        );
    }
    feed(
        &mut lc,
        &ctx(20, 4520.0, 1, TAG0),
        1,
        types::HEARTBEAT_ACK,
        0,
        &hb_info(3),
    );
    feed(
        &mut lc,
        &ctx(21, 4600.0, 0, TAG1),
        0,
        types::DATA,
        0x03,
        &data_value(2),
    );
    lc.finish();
    let r = report(&lc);
    assert_eq!(kinds(&r), ["heartbeat_loss"]);
    let ev = &r.events[0];
    assert_eq!(ev.frame, 10);
    assert_eq!(ev.by, Some(0));
    assert_eq!(ev.t_s, 0.01);
    assert!(
        ev.detail
            .starts_with("3 HEARTBEATs to 10.0.0.2 unanswered over 4.5 s"),
        "{}",
        ev.detail
    );
    assert!(ev.detail.contains("frame 20"));
    assert_eq!(ev.delay_ms, Some(4510.0));
    assert_eq!(ev.filter, "frame.number == 10 && sctp.chunk_type == 4");
    assert_eq!(ev.chunks, ["HEARTBEAT"]);
}

#[test]
fn heartbeat_loss_is_placed_in_capture_order() {
    let mut lc = Lifecycle::default();
    handshake(&mut lc);
    feed(
        &mut lc,
        &ctx(5, 100.0, 0, TAG1),
        0,
        types::HEARTBEAT,
        0,
        &hb_info(1),
    );
    feed(
        &mut lc,
        &ctx(6, 200.0, 1, TAG0),
        1,
        types::ERROR,
        0,
        &cause(9, &[0, 0, 0, 1]),
    );
    feed(
        &mut lc,
        &ctx(7, 1100.0, 0, TAG1),
        0,
        types::HEARTBEAT,
        0,
        &hb_info(2),
    );
    feed(
        &mut lc,
        &ctx(8, 1110.0, 1, TAG0),
        1,
        types::HEARTBEAT_ACK,
        0,
        &hb_info(2),
    );
    let r = report(&lc);
    assert_eq!(kinds(&r)[4..], ["heartbeat_loss", "error"]);
    assert!(r.events[4].detail.starts_with("1 HEARTBEAT to 10.0.0.2"));
}

#[test]
fn pending_heartbeats_at_the_end() {
    // Still answerable at the end (within 2 x max(RTT, 1 s)): not lost.
    let mut lc = Lifecycle::default();
    mid_capture(&mut lc);
    feed(
        &mut lc,
        &ctx(3, 100.0, 0, TAG1),
        0,
        types::HEARTBEAT,
        0,
        &hb_info(1),
    );
    lc.finish_at(1_500_000_000);
    assert!(report(&lc).events.is_empty());

    // Older than the grace at the capture's end: lost.
    let mut lc = Lifecycle::default();
    mid_capture(&mut lc);
    feed(
        &mut lc,
        &ctx(3, 100.0, 0, TAG1),
        0,
        types::HEARTBEAT,
        0,
        &hb_info(1),
    );
    feed(
        &mut lc,
        &ctx(4, 1100.0, 0, TAG1),
        0,
        types::HEARTBEAT,
        0,
        &hb_info(2),
    );
    lc.finish_at(5_100_000_000);
    let r = report(&lc);
    assert_eq!(kinds(&r), ["heartbeat_loss"]);
    assert!(r.events[0]
        .detail
        .starts_with("2 HEARTBEATs to 10.0.0.2 unanswered over 5.0 s, never answered"));
    lc.finish();
    assert_eq!(report(&lc).events.len(), 1, "finish is idempotent");

    // The peer never appears (one direction captured): nothing is called lost.
    let mut lc = Lifecycle::default();
    feed(
        &mut lc,
        &ctx(3, 100.0, 0, TAG1),
        0,
        types::HEARTBEAT,
        0,
        &hb_info(1),
    );
    lc.finish_at(60_000_000_000);
    assert!(report(&lc).events.is_empty());
}

#[test]
fn heartbeat_pending_state_is_bounded() {
    let mut lc = Lifecycle::default();
    mid_capture(&mut lc);
    for i in 0..1000u32 {
        let c = ctx(10 + u64::from(i), 10.0 + f64::from(i) * 1000.0, 0, TAG1);
        feed(&mut lc, &c, 0, types::HEARTBEAT, 0, &hb_info(i));
    }
    assert!(lc.hb.pending_len(0) <= heartbeat::MAX_PENDING);
    lc.finish();
    let r = report(&lc);
    assert_eq!(kinds(&r), ["heartbeat_loss"]);
    assert!(
        r.events[0].detail.starts_with("997 HEARTBEATs"),
        "{}",
        r.events[0].detail
    );
}

#[test]
fn after_end_packets_are_counted_and_listed() {
    let mut lc = Lifecycle::default();
    handshake(&mut lc);
    feed(
        &mut lc,
        &ctx(5, 300.0, 0, TAG1),
        0,
        types::SHUTDOWN,
        0,
        &0u32.to_be_bytes(),
    );
    feed(
        &mut lc,
        &ctx(6, 310.0, 1, TAG0),
        1,
        types::SHUTDOWN_ACK,
        0,
        &[],
    );
    feed(
        &mut lc,
        &ctx(7, 320.0, 0, TAG1),
        0,
        types::SHUTDOWN_COMPLETE,
        0,
        &[],
    );
    lc.after_end(&ctx(8, 1320.0, 1, TAG0), 1, &[types::SHUTDOWN_ACK]);
    lc.after_end(&ctx(9, 1400.0, 0, TAG1), 0, &[types::SACK, types::DATA]);
    lc.finish();
    let r = report(&lc);
    assert_eq!(r.after_end_packets, 2);
    let ev = &r.events[r.events.len() - 2];
    assert_eq!(ev.kind, "after_end");
    assert_eq!(ev.by, Some(1));
    assert_eq!(ev.chunks, ["SHUTDOWN-ACK"]);
    assert!(ev.detail.contains("1.0 s after the association ended"));
    assert_eq!(ev.filter, "frame.number == 8 && sctp.chunk_type == 8");
    assert_eq!(r.events.last().unwrap().chunks, ["SACK", "DATA"]);
    assert_eq!(r.end.kind, "shutdown");
    assert_eq!(r.end.frame, Some(7));
}

#[test]
fn events_are_bounded_but_the_end_is_kept() {
    let mut lc = Lifecycle::default();
    mid_capture(&mut lc);
    for i in 0..300u64 {
        let c = ctx(10 + i, 10.0 + i as f64, 1, TAG0);
        feed(&mut lc, &c, 1, types::ERROR, 0, &cause(9, &[0, 0, 0, 1]));
    }
    feed(&mut lc, &ctx(400, 500.0, 0, TAG1), 0, types::ABORT, 0, &[]);
    lc.after_end(&ctx(401, 501.0, 1, TAG0), 1, &[types::DATA]);
    lc.finish();
    let r = report(&lc);
    assert_eq!(r.events.len(), MAX_EVENTS + 1);
    assert_eq!(r.events_dropped, 300 - MAX_EVENTS as u64 + 1);
    assert_eq!(r.after_end_packets, 1);
    let last = r.events.last().unwrap();
    assert_eq!(last.kind, "abort");
    assert!(last.detail.contains("no error cause"));
    assert_eq!(r.end.kind, "abort");
    assert_eq!(r.end.by, Some(0));
}

#[test]
fn mid_capture_association_is_open_at_capture_end() {
    let mut lc = Lifecycle::default();
    mid_capture(&mut lc);
    lc.finish();
    assert!(!lc.handshake_started());
    assert!(!lc.handshake_completed());
    let r = report(&lc);
    assert!(!r.handshake_started);
    assert_eq!(r.end.kind, "open_at_capture_end");
    assert_eq!(r.end.by, None);
    assert_eq!(r.end.t_s, None);
}

#[test]
fn association_filter_text() {
    let f = assoc_filter([5000, 6000], [Some(0x0a0a_0a0a), Some(0x0b0b_0b0b)]);
    assert_eq!(
        f,
        "sctp.port == 5000 && sctp.port == 6000 && (sctp.verification_tag == 0x0a0a0a0a \
         || sctp.verification_tag == 0x0b0b0b0b || sctp.initiate_tag == 0x0a0a0a0a \
         || sctp.initiate_tag == 0x0b0b0b0b)"
    );
    // An unknown tag leaves out the terms that need it.
    let f = assoc_filter([5000, 6000], [Some(0x0a0a_0a0a), None]);
    assert_eq!(
        f,
        "sctp.port == 5000 && sctp.port == 6000 && (sctp.verification_tag == 0x0a0a0a0a \
         || sctp.initiate_tag == 0x0a0a0a0a)"
    );
    assert_eq!(
        assoc_filter([1, 2], [None, None]),
        "sctp.port == 1 && sctp.port == 2"
    );
    assert_eq!(
        report(&Lifecycle::default()).filter,
        assoc_filter([5000, 6000], [Some(TAG0), Some(TAG1)])
    );
}

#[test]
fn unparsed_abort_still_ends_the_association() {
    let mut lc = Lifecycle::default();
    handshake(&mut lc);
    // A cause whose length runs past the chunk.
    let value = [0, 12, 0, 40, b'x', b'y'];
    let view = ChunkView {
        ctype: types::ABORT,
        flags: 0,
        length: 10,
        value: &value,
        offset: 12,
        truncated: false,
    };
    lc.unparsed(&ctx(5, 100.0, 1, TAG1), 1, &view);
    assert_eq!(lc.end_kind(), EndKind::Abort);
    assert_eq!(lc.abort_causes()[0].code, 12);
}

#[test]
fn end_kind_names_and_report_json_round_trip() {
    for (k, s) in [
        (EndKind::Shutdown, "shutdown"),
        (EndKind::Abort, "abort"),
        (EndKind::OpenAtCaptureEnd, "open_at_capture_end"),
        (EndKind::HandshakeFailed, "handshake_failed"),
        (EndKind::Restarted, "restarted"),
    ] {
        assert_eq!(k.as_str(), s);
    }
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
        &ctx(2, 1.0, 1, TAG0),
        1,
        types::ABORT,
        0,
        &cause(12, b"bye"),
    );
    let r = report(&lc);
    let json = serde_json::to_string(&r).unwrap();
    for field in [
        "\"handshake_started\"",
        "\"events_dropped\"",
        "\"after_end_packets\"",
        "\"t_s\"",
        "\"delay_ms\"",
        "\"chunks\"",
    ] {
        assert!(json.contains(field), "{field}");
    }
    let back: LifecycleReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back, r);
}
