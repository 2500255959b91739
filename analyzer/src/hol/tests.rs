//! Head-of-line blocking from hand-built DATA / SACK sequences.

use super::*;
use std::collections::BTreeMap;

use crate::sctp::{DataChunk, InitChunk, SackChunk};

const A: &str = "10.0.0.1";
const B: &str = "10.0.0.2";

struct Run {
    hol: Hol,
    frame: u64,
    /// The last packet's time (the association's `last_ns`).
    last_ns: i64,
}

fn data(tsn: u32, sid: u16, ssn: u32, b: bool, e: bool, u: bool) -> DataChunk {
    DataChunk {
        idata: false,
        tsn,
        stream_id: sid,
        ssn_or_mid: ssn,
        ppid_or_fsn: 0,
        payload_len: 100,
        flag_i: false,
        flag_u: u,
        flag_b: b,
        flag_e: e,
    }
}

impl Run {
    fn new() -> Self {
        Run {
            hol: Hol::default(),
            frame: 0,
            last_ns: 0,
        }
    }

    fn ctx(&mut self, ms: f64, from_a: bool) -> PacketCtx {
        self.frame += 1;
        let (a, b) = ((A, 1), (B, 2));
        let (src, dst) = if from_a { (a, b) } else { (b, a) };
        let ctx = PacketCtx::test(self.frame, ms, src, dst);
        self.last_ns = ctx.ts_ns;
        ctx
    }

    /// Endpoint 0 sends (or the receiver sees arrive) `d` at `ms`.
    fn send(&mut self, ms: f64, d: DataChunk) {
        let ctx = self.ctx(ms, true);
        self.hol.chunk(&ctx, 0, &Chunk::Data(d), 0);
    }

    /// An unfragmented ordered message.
    fn msg(&mut self, ms: f64, tsn: u32, sid: u16, ssn: u32) {
        self.send(ms, data(tsn, sid, ssn, true, true, false));
    }

    /// Endpoint 1 acknowledges up to `cum` and the gap blocks `gaps` (offsets from `cum`).
    fn sack(&mut self, ms: f64, cum: u32, gaps: &[(u16, u16)]) {
        let ctx = self.ctx(ms, false);
        let bytes: Vec<u8> = gaps
            .iter()
            .flat_map(|&(s, e)| {
                let (s, e) = (s.to_be_bytes(), e.to_be_bytes());
                [s[0], s[1], e[0], e[1]]
            })
            .collect();
        let k = SackChunk {
            nr: false,
            cum_tsn_ack: cum,
            a_rwnd: 65536,
            n_gap_blocks: gaps.len() as u16,
            n_nr_gap_blocks: 0,
            n_dup_tsns: 0,
            gap_bytes: &bytes,
            nr_gap_bytes: &[],
            dup_bytes: &[],
        };
        self.hol.chunk(&ctx, 1, &Chunk::Sack(k), 0);
    }

    /// Endpoint 0's INIT, first TSN `tsn`.
    fn init(&mut self, tsn: u32) {
        let ctx = self.ctx(0.0, true);
        let init = InitChunk {
            ack: false,
            initiate_tag: 7,
            a_rwnd: 65536,
            outbound_streams: 10,
            inbound_streams: 10,
            initial_tsn: tsn,
            params: Vec::new(),
        };
        self.hol.chunk(&ctx, 0, &Chunk::Init(init), 0);
    }

    fn report(&self, v: Vantage) -> HolReport {
        self.hol.report(0, v, self.last_ns).expect("a report")
    }
}

use crate::infer::summary::Vantage;

#[test]
fn in_order_messages_never_wait() {
    let mut r = Run::new();
    r.init(100);
    for i in 0..10u32 {
        r.msg(f64::from(i), 100 + i, (i % 2) as u16, i / 2);
    }
    r.sack(30.0, 109, &[]);
    for v in [Vantage::Receiver, Vantage::Sender] {
        let h = r.report(v);
        assert_eq!(h.messages, 10);
        assert_eq!(h.ordered_messages, 10);
        assert_eq!(h.blocked_messages, 0);
        assert_eq!(h.delay_ms, None);
        assert_eq!(h.single_stream_blocked_messages, 0);
        assert_eq!(h.streams, 2);
    }
    assert_eq!(r.report(Vantage::Receiver).clock, "arrivals");
    assert_eq!(r.report(Vantage::Sender).clock, "sacks");
    // Everything settled by both clocks is dropped.
    let d = r.hol.dirs[0].as_ref().unwrap();
    assert_eq!(d.base, d.end);
}

/// A message that never comes (lab run `frozen_p20`: every copy of it dropped): the messages of
/// its stream behind it are complete but still waiting when the capture ends; counted apart from
/// the blocked ones (their wait has no end), with the longest wait so far.
#[test]
fn messages_still_waiting_when_the_capture_ends_are_counted_apart() {
    let mut r = Run::new();
    r.init(1);
    r.msg(0.0, 1, 0, 0);
    // TSN 2 (SSN 1) never arrives.
    r.msg(20.0, 3, 0, 2);
    r.msg(40.0, 4, 0, 3);
    r.sack(60.0, 1, &[(2, 3)]);
    r.msg(80.0, 5, 1, 0); // another stream: delivered
    r.sack(1000.0, 1, &[(2, 4)]);
    for (v, first_ms) in [(Vantage::Receiver, 20.0), (Vantage::Sender, 60.0)] {
        let h = r.report(v);
        assert_eq!(h.blocked_messages, 0, "{v:?}");
        assert_eq!(h.waiting_at_end_messages, 2, "{v:?}");
        assert_eq!(h.waiting_at_end_max_ms, Some(1000.0 - first_ms), "{v:?}");
        // On one stream TSN 5 (stream 1) waits too.
        assert_eq!(h.single_stream_waiting_at_end_messages, 3, "{v:?}");
        assert!(
            h.evidence
                .contains("2 complete message(s) were still waiting"),
            "{}",
            h.evidence
        );
    }
}

/// The capture missed TSNs 2-3 (SSNs 1-2) while nothing was lost (study run
/// `sctp-vs-tcp-loss_rtomin200_loss0_r1`: 963 messages read as waiting to the end): on either
/// clock the cumulative point passes them in order, so the later messages of the stream are
/// released unattributed, never left waiting.
#[test]
fn messages_behind_ones_the_capture_missed_in_order_are_unattributed() {
    let mut r = Run::new();
    r.init(1);
    r.msg(0.0, 1, 0, 0);
    r.sack(10.0, 3, &[]); // acknowledges 2 and 3: the receiver had them
    r.msg(20.0, 4, 0, 3);
    r.msg(40.0, 5, 0, 4);
    r.sack(60.0, 5, &[]);
    // Arrivals: SSNs 3 and 4 waited until the SACK showed 2-3 received, both released; SACKs:
    // the point passes 2-4 in order, SSN 3 released, SSN 4 then in order.
    for (v, unattributed) in [(Vantage::Receiver, 2), (Vantage::Sender, 1)] {
        let h = r.report(v);
        assert_eq!(h.waiting_at_end_messages, 0, "{v:?}");
        assert_eq!(h.unattributed_messages, unattributed, "{v:?}");
        assert_eq!((h.ordered_messages, h.blocked_messages), (3, 0), "{v:?}");
    }
}

/// Streams 0 and 1 alternate; TSN 3 (stream 0, SSN 1) is lost and comes again at 100 ms: SSN 2
/// of stream 0 (TSN 5) waits for it, stream 1 does not; on one stream, TSNs 4, 5 and 6 would
/// all have waited.
fn one_loss() -> Run {
    let mut r = Run::new();
    r.init(1);
    r.msg(0.0, 1, 0, 0);
    r.msg(1.0, 2, 1, 0);
    // TSN 3 (stream 0, SSN 1) lost.
    r.msg(3.0, 4, 1, 1);
    r.msg(4.0, 5, 0, 2);
    r.msg(5.0, 6, 1, 2);
    r.sack(20.0, 2, &[]);
    r.sack(23.0, 2, &[(2, 2)]);
    r.sack(24.0, 2, &[(2, 3)]);
    r.sack(25.0, 2, &[(2, 4)]);
    r.msg(100.0, 3, 0, 1);
    r.sack(120.0, 6, &[]);
    r
}

#[test]
fn a_loss_blocks_its_stream_only() {
    let r = one_loss();
    let h = r.report(Vantage::Receiver);
    assert_eq!(h.messages, 6);
    assert_eq!(h.blocked_messages, 1);
    let d = h.delay_ms.expect("delays");
    assert_eq!((d.n, d.max), (1, 96.0));
    assert_eq!(h.delay_sum_ms, 96.0);
    // One stream: TSNs 4, 5, 6 complete at 3, 4, 5 ms, all delivered at 100 ms.
    assert_eq!(h.single_stream_blocked_messages, 3);
    let s = h.single_stream_delay_ms.expect("one-stream delays");
    assert_eq!((s.min, s.max), (95.0, 97.0));
    assert_eq!(h.single_stream_delay_sum_ms, 97.0 + 96.0 + 95.0);
    assert_eq!(r.hol.stream(0, Vantage::Receiver, 0).map(|x| x.0), Some(1));
    assert_eq!(r.hol.stream(0, Vantage::Receiver, 1).map(|x| x.0), Some(0));
}

#[test]
fn at_the_sender_the_sacks_give_the_times() {
    let r = one_loss();
    let h = r.report(Vantage::Sender);
    assert_eq!(h.clock, "sacks");
    assert_eq!(h.blocked_messages, 1);
    // TSN 5 gap-acknowledged at 24 ms, deliverable at the SACK of 120 ms.
    assert_eq!(h.delay_ms.map(|d| d.max), Some(96.0));
    assert_eq!(h.single_stream_blocked_messages, 3);
    let s = h.single_stream_delay_ms.expect("one-stream delays");
    assert_eq!((s.min, s.max), (95.0, 97.0));
}

#[test]
fn a_fragmented_message_is_complete_at_its_last_fragment() {
    let mut r = Run::new();
    r.init(10);
    r.send(0.0, data(10, 0, 0, true, false, false));
    // TSN 11 (the middle fragment) comes late; SSN 1 on TSN 13 waits for the whole message.
    r.send(2.0, data(12, 0, 0, false, true, false));
    r.msg(3.0, 13, 0, 1);
    r.send(50.0, data(11, 0, 0, false, false, false));
    let h = r.report(Vantage::Receiver);
    assert_eq!(h.messages, 2);
    assert_eq!(h.blocked_messages, 1);
    assert_eq!(h.delay_ms.map(|d| d.max), Some(47.0));
    // One stream: the fragmented message itself did not wait (it was complete at 50 ms).
    assert_eq!(h.single_stream_blocked_messages, 1);
}

#[test]
fn unordered_messages_never_wait() {
    let mut r = Run::new();
    r.init(1);
    r.msg(0.0, 1, 0, 0);
    // TSN 2 lost; TSN 3 is unordered on the same stream.
    r.send(1.0, data(3, 0, 0, true, true, true));
    r.msg(40.0, 2, 0, 1);
    let h = r.report(Vantage::Receiver);
    assert_eq!(h.messages, 3);
    assert_eq!(h.ordered_messages, 2);
    assert_eq!(h.blocked_messages, 0);
    // On one ordered stream it would have waited.
    assert_eq!(h.single_stream_blocked_messages, 1);
}

#[test]
fn a_message_the_capture_never_showed_gives_no_delay() {
    let mut r = Run::new();
    r.init(1);
    r.msg(0.0, 1, 0, 0);
    // TSN 2 (SSN 1) never captured; SSN 2 arrives and waits, then the SACK shows TSN 2 held.
    r.msg(2.0, 3, 0, 2);
    r.sack(10.0, 3, &[]);
    let h = r.report(Vantage::Receiver);
    assert_eq!(h.blocked_messages, 0);
    assert_eq!(h.unattributed_messages, 1);
    assert!(h.evidence.contains("never showed"), "{}", h.evidence);
    // Nothing waits any more: later messages of the stream are delivered at once.
    r.msg(11.0, 4, 0, 3);
    assert_eq!(r.report(Vantage::Receiver).blocked_messages, 0);
    assert_eq!(r.report(Vantage::Receiver).ordered_messages, 3);
}

#[test]
fn without_the_start_numbering_begins_at_the_first_message_seen() {
    let mut r = Run::new();
    r.msg(0.0, 500, 3, 77);
    r.msg(1.0, 501, 3, 78);
    let h = r.report(Vantage::Receiver);
    assert_eq!((h.ordered_messages, h.blocked_messages), (2, 0));
}

#[test]
fn with_the_start_a_lost_first_message_blocks_the_second() {
    let mut r = Run::new();
    r.init(1);
    // SSN 0 on TSN 1 lost; SSN 1 on TSN 2 waits for it (RFC 9260 6.5: numbering from 0).
    r.msg(1.0, 2, 0, 1);
    r.msg(30.0, 1, 0, 0);
    let h = r.report(Vantage::Receiver);
    assert_eq!(h.blocked_messages, 1);
    assert_eq!(h.delay_ms.map(|d| d.max), Some(29.0));
}

#[test]
fn ssn_wraps_and_idata_numbers_are_wide() {
    let mut r = Run::new();
    r.msg(0.0, 1, 0, 65535);
    // SSN 0 after 65535 (16-bit serial), lost first: SSN 1 waits.
    r.msg(2.0, 3, 0, 1);
    r.msg(9.0, 2, 0, 0);
    let h = r.report(Vantage::Receiver);
    assert_eq!((h.ordered_messages, h.blocked_messages), (3, 1));

    let mut r = Run::new();
    let wide = |tsn, mid| DataChunk {
        idata: true,
        ..data(tsn, 0, mid, true, true, false)
    };
    r.send(0.0, wide(1, 70_000));
    r.send(1.0, wide(3, 70_002));
    r.send(5.0, wide(2, 70_001));
    let h = r.report(Vantage::Receiver);
    assert_eq!((h.ordered_messages, h.blocked_messages), (3, 1));
}

#[test]
fn a_stream_reset_starts_the_numbering_again() {
    let mut r = Run::new();
    r.init(1);
    r.msg(0.0, 1, 0, 0);
    r.msg(1.0, 2, 0, 1);
    // RFC 6525: after the reset, SSN 0 again (epoch 1).
    let ctx = r.ctx(5.0, true);
    r.hol
        .chunk(&ctx, 0, &Chunk::Data(data(3, 0, 0, true, true, false)), 1);
    let ctx = r.ctx(6.0, true);
    r.hol
        .chunk(&ctx, 0, &Chunk::Data(data(4, 0, 1, true, true, false)), 1);
    let h = r.report(Vantage::Receiver);
    assert_eq!((h.ordered_messages, h.blocked_messages), (4, 0));
}

#[test]
fn without_sacks_the_sender_vantage_has_no_figures() {
    let mut r = Run::new();
    r.init(1);
    r.msg(0.0, 1, 0, 0);
    assert!(r.hol.report(0, Vantage::Sender, 0).is_none());
    assert!(r.hol.report(0, Vantage::Receiver, 0).is_some());
    // No DATA at all in the other direction.
    assert!(r.hol.report(1, Vantage::Receiver, 0).is_none());
    assert_eq!(r.hol.stream(0, Vantage::Sender, 0), None);
}

#[test]
fn memory_stays_bounded_without_sacks() {
    let mut r = Run::new();
    r.init(1);
    for i in 0..(MAX_WINDOW as u32 * 3) {
        r.msg(f64::from(i) * 0.01, i + 1, 0, i & 0xffff);
    }
    assert!(r.hol.dirs[0].as_ref().unwrap().ring.len() <= MAX_WINDOW);
    // The SACK clock lost TSNs it never saw acknowledged: no figures rather than wrong ones.
    assert!(r.hol.report(0, Vantage::Sender, 0).is_none());
    let h = r.report(Vantage::Receiver);
    assert_eq!(h.blocked_messages, 0);
    assert_eq!(h.ordered_messages, MAX_WINDOW as u64 * 3);
}

#[test]
fn garbage_sacks_are_harmless() {
    let mut r = one_loss();
    // A cumulative ack far past anything sent, gap blocks backwards or beyond the window.
    r.sack(130.0, 0x8000_0000, &[(5, 2), (0, 3), (60000, 65535)]);
    r.sack(131.0, 0, &[(1, 65535)]);
    let h = r.report(Vantage::Sender);
    assert_eq!(h.blocked_messages, 1);
}

#[test]
fn fragments_acknowledged_in_order_complete_on_the_sack_clock() {
    let mut r = Run::new();
    r.init(1);
    r.send(0.0, data(1, 0, 0, true, false, false));
    r.send(0.1, data(2, 0, 0, false, false, false));
    r.send(0.2, data(3, 0, 0, false, true, false));
    r.msg(0.3, 4, 0, 1);
    // The message's fragments acknowledged one SACK at a time, then the next message.
    r.sack(20.0, 1, &[]);
    r.sack(21.0, 2, &[]);
    r.sack(22.0, 3, &[]);
    r.sack(23.0, 4, &[]);
    let h = r.report(Vantage::Sender);
    assert_eq!(
        (h.messages, h.ordered_messages, h.blocked_messages),
        (2, 2, 0)
    );
    // A gap on the SACK clock after passing fragments without their times: still complete.
    r.send(1.0, data(5, 0, 2, true, false, false));
    r.send(1.1, data(6, 0, 2, false, true, false));
    r.msg(1.2, 7, 0, 3);
    r.sack(30.0, 5, &[(2, 2)]);
    r.sack(40.0, 7, &[]);
    let h = r.report(Vantage::Sender);
    assert_eq!(
        (h.messages, h.ordered_messages, h.blocked_messages),
        (4, 4, 1)
    );
    assert_eq!(h.delay_ms.map(|d| d.max), Some(10.0));
}

/// A message of the randomized sequences: its TSNs (consecutive), stream, number, unordered.
#[derive(Debug, Clone)]
struct Msg {
    tsns: std::ops::Range<u32>,
    sid: u16,
    ssn: u32,
    unordered: bool,
}

/// Blocked messages and the sum of their waits (us), and the same on one stream, computed the
/// slow way from each TSN's arrival time (`None`: never arrived) on one clock.
fn reference(msgs: &[Msg], arrival: &BTreeMap<u32, i64>) -> (u64, i64, u64, i64) {
    let complete = |m: &Msg| -> Option<i64> {
        m.tsns
            .clone()
            .map(|t| arrival.get(&t).copied())
            .collect::<Option<Vec<_>>>()
            .map(|v| v.into_iter().max().unwrap())
    };
    let (mut blocked, mut sum) = (0, 0);
    let mut last_delivery: BTreeMap<u16, Option<i64>> = BTreeMap::new();
    // Messages of a stream in number order are in TSN order here (as stacks send them).
    for m in msgs.iter().filter(|m| !m.unordered) {
        let prev = last_delivery.get(&m.sid).copied().unwrap_or(Some(i64::MIN));
        let d = match (complete(m), prev) {
            (Some(c), Some(p)) => Some(c.max(p)),
            _ => None,
        };
        if let (Some(d), Some(c)) = (d, complete(m)) {
            if d - c > MIN_WAIT_NS / 1000 {
                blocked += 1;
                sum += d - c;
            }
        }
        last_delivery.insert(m.sid, d);
    }
    // One stream: delivered when every lower TSN has arrived.
    let (mut single, mut single_sum) = (0, 0);
    let mut upto = i64::MIN;
    let mut hole = false;
    for m in msgs {
        for t in m.tsns.clone() {
            match arrival.get(&t) {
                Some(&a) => upto = upto.max(a),
                None => hole = true,
            }
        }
        if hole {
            break;
        }
        let c = complete(m).unwrap();
        if upto - c > MIN_WAIT_NS / 1000 {
            single += 1;
            single_sum += upto - c;
        }
    }
    (blocked, sum, single, single_sum)
}

/// Random associations (streams, fragments, unordered messages, lost and reordered packets,
/// late SACKs with gap blocks) against `reference` on both clocks.
#[test]
fn randomized_sequences_match_the_reference() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    // Totals over the rounds: the sequences must make messages wait on both clocks.
    let mut seen = [[0u64; 2]; 2];
    for round in 0..300 {
        // The messages, in TSN order; numbers per stream from 0 (the INIT is seen).
        let streams = 1 + rnd(4) as u16;
        let mut next_ssn = vec![0u32; usize::from(streams)];
        let (mut msgs, mut tsn) = (Vec::new(), 1u32);
        for _ in 0..(5 + rnd(40)) {
            let sid = rnd(u64::from(streams)) as u16;
            let frags = if rnd(5) == 0 { 2 + rnd(3) as u32 } else { 1 };
            let unordered = rnd(8) == 0;
            let ssn = if unordered {
                0
            } else {
                next_ssn[usize::from(sid)] += 1;
                next_ssn[usize::from(sid)] - 1
            };
            msgs.push(Msg {
                tsns: tsn..tsn + frags,
                sid,
                ssn,
                unordered,
            });
            tsn += frags;
        }
        // Each TSN sent at 1 ms steps; one in six lost and sent again 30-90 ms later; the
        // capture sees the arrivals (receiver vantage), in time order.
        let mut sends: Vec<(i64, u32)> = Vec::new();
        for t in 1..tsn {
            let at = i64::from(t) * 1000;
            if rnd(6) == 0 {
                sends.push((at + 30_000 + 1000 * rnd(60) as i64, t));
            } else {
                sends.push((at, t));
            }
        }
        sends.sort();
        let mut r = Run::new();
        r.init(1);
        let mut arrival: BTreeMap<u32, i64> = BTreeMap::new();
        let mut acked: BTreeMap<u32, i64> = BTreeMap::new();
        let meta: BTreeMap<u32, (&Msg, bool, bool)> = msgs
            .iter()
            .flat_map(|m| {
                m.tsns
                    .clone()
                    .map(move |t| (t, (m, t == m.tsns.start, t + 1 == m.tsns.end)))
            })
            .collect();
        let mut next_sack = 0;
        for (i, &(us, t)) in sends.iter().enumerate() {
            let (m, b, e) = meta[&t];
            r.send(us as f64 / 1000.0, data(t, m.sid, m.ssn, b, e, m.unordered));
            arrival.entry(t).or_insert(us);
            // Now and then a SACK of everything arrived so far (cum ack and gap blocks).
            if i + 1 == sends.len() || rnd(3) == 0 {
                let sack_us = us + 200;
                if sack_us <= next_sack {
                    continue;
                }
                next_sack = sack_us;
                let mut cum = 0;
                while arrival.contains_key(&(cum + 1)) {
                    cum += 1;
                }
                let mut gaps = Vec::new();
                let mut t2 = cum + 1;
                while t2 < tsn {
                    if arrival.contains_key(&t2) {
                        let start = t2;
                        while arrival.contains_key(&t2) {
                            t2 += 1;
                        }
                        gaps.push(((start - cum) as u16, (t2 - 1 - cum) as u16));
                    } else {
                        t2 += 1;
                    }
                }
                for (&a, _) in arrival.iter() {
                    acked.entry(a).or_insert(sack_us);
                }
                r.sack(sack_us as f64 / 1000.0, cum, &gaps);
            }
        }
        for (k, (vantage, times)) in [(Vantage::Receiver, &arrival), (Vantage::Sender, &acked)]
            .into_iter()
            .enumerate()
        {
            let h = r.report(vantage);
            let (blocked, sum, single, single_sum) = reference(&msgs, times);
            seen[k][0] += blocked;
            seen[k][1] += single;
            let got = (
                h.blocked_messages,
                (h.delay_sum_ms * 1000.0).round() as i64,
                h.single_stream_blocked_messages,
                (h.single_stream_delay_sum_ms * 1000.0).round() as i64,
            );
            assert_eq!(
                got,
                (blocked, sum, single, single_sum),
                "round {round} {vantage:?}: {msgs:?}"
            );
            assert_eq!(h.unattributed_messages, 0, "round {round}");
        }
    }
    for [blocked, single] in seen {
        assert!(blocked > 100 && single > blocked, "{seen:?}");
    }
}
