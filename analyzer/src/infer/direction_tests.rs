//! Per-direction bookkeeping from hand-built DATA / SACK sequences.

use super::*;

const A: (&str, u16) = ("10.0.0.1", 1);
const B: (&str, u16) = ("10.0.0.2", 2);
/// B's second address.
const B2: (&str, u16) = ("10.0.1.2", 2);

/// A one-chunk message of 100 bytes on stream 0.
pub(in crate::infer) fn data(tsn: u32) -> DataChunk {
    DataChunk {
        idata: false,
        tsn,
        stream_id: 0,
        ssn_or_mid: tsn,
        ppid_or_fsn: 0,
        payload_len: 100,
        flag_i: false,
        flag_u: false,
        flag_b: true,
        flag_e: true,
    }
}

fn sack(cum: u32) -> SackChunk<'static> {
    sack_gaps(cum, &[])
}

/// A SACK with gap ack blocks `gaps` as on the wire (start, end: 16-bit offsets from `cum`).
pub(in crate::infer) fn sack_gaps(cum: u32, gaps: &'static [u8]) -> SackChunk<'static> {
    SackChunk {
        nr: false,
        cum_tsn_ack: cum,
        a_rwnd: 65536,
        n_gap_blocks: (gaps.len() / 4) as u16,
        n_nr_gap_blocks: 0,
        n_dup_tsns: 0,
        gap_bytes: gaps,
        nr_gap_bytes: &[],
        dup_bytes: &[],
    }
}

/// A sends DATA `tsn` to `to` (an address of B's) in frame `frame` at `ms`.
fn send(d: &mut DirInfer, frame: u64, ms: f64, to: (&str, u16), tsn: u32) {
    d.packet_start();
    d.data(&PacketCtx::test(frame, ms, A, to), &data(tsn), None);
}

/// B's SACK of cumulative TSN ack `cum` and gap blocks `gaps` (`sack_gaps`) in frame `frame`
/// at `ms`.
fn sack_at(d: &mut DirInfer, frame: u64, ms: f64, cum: u32, gaps: &'static [u8]) {
    d.packet_start();
    d.sack(
        &PacketCtx::test(frame, ms, B, A),
        &sack_gaps(cum, gaps),
        None,
        false,
    );
}

/// A sends one DATA packet of `len` bytes (SCTP) at `ms`, B acknowledges it `after` ms later.
fn exchange(d: &mut DirInfer, frame: u64, ms: f64, len: u32, tsn: u32, after: f64) {
    let ctx = PacketCtx {
        len,
        ..PacketCtx::test(frame, ms, A, B)
    };
    d.packet_start();
    d.data(&ctx, &data(tsn), None);
    let ack = PacketCtx::test(frame + 1, ms + after, B, A);
    d.packet_start();
    d.sack(&ack, &sack(tsn), None, false);
}

#[test]
fn a_sack_after_a_gso_frame_is_no_delayed_sack_sample() {
    let mut d = DirInfer::default();
    // The first DATA packet never makes a sample; the second, a lone 100-byte packet
    // acknowledged 40 ms later, does.
    exchange(&mut d, 1, 0.0, 100, 1, 40.0);
    exchange(&mut d, 3, 100.0, 100, 2, 40.0);
    assert_eq!(d.lone_acks.len(), 1);
    assert_eq!(d.lone_acks[0].latency_ns, 40_000_000);
    // A 2,900-byte frame (two wire packets' worth, segmented after the capture point by GSO)
    // acknowledged at once, and one that just fits a 1500-byte link (1480 + 20).
    exchange(&mut d, 5, 200.0, 2900, 3, 0.06);
    assert_eq!(d.lone_acks.len(), 1);
    exchange(&mut d, 7, 300.0, 1480, 4, 40.0);
    assert_eq!(d.lone_acks.len(), 2);
}

/// At the receiver vantage: TSN 1 arrives, TSN 2 arrives 10 ms later, the receiver's SACK takes 2
/// (a gap block) and not 1, then 1 comes again: the receiver, which handles its arrivals in
/// order, dropped the first copy. TSNs that arrive within a millisecond of each other (two
/// interfaces) tell nothing.
#[test]
fn a_copy_passed_over_by_a_later_arrival_is_marked_at_its_retransmission() {
    let run = |second_ms: f64| {
        let mut d = DirInfer::default();
        send(&mut d, 1, 0.0, B, 1);
        send(&mut d, 2, second_ms, B, 2);
        // The SACK, and the same SACK again (its gap block takes nothing new: no evidence).
        sack_at(&mut d, 3, second_ms + 0.1, 0, &[0, 2, 0, 2]);
        sack_at(&mut d, 4, second_ms + 0.2, 0, &[0, 2, 0, 2]);
        send(&mut d, 5, 300.0, B, 1);
        assert_eq!(d.retransmissions.len(), 1);
        d.retransmissions[0].orig_passed_over
    };
    assert!(run(10.0));
    assert!(!run(0.5));
}

/// TSN 1 is lost; three SACKs take 2, 3 and 4 by gap blocks (three miss indications for 1,
/// RFC 9260 7.2.4). Resent 1 ms after the third SACK it is a fast retransmission; resent 3 s
/// after it (no SACK in between: nothing could have triggered a fast retransmit) it is a
/// T3-rtx expiry's (RFC 9260 6.3.3), as when a fast retransmission to an unused alternate path
/// is lost and that path's timer, still at RTO.Initial, fires.
#[test]
fn three_misses_make_a_fast_retransmission_only_right_after_a_sack() {
    let run = |resend_after_ms: f64| {
        let mut d = DirInfer::default();
        for tsn in 1..=4u32 {
            send(&mut d, tsn as u64, tsn as f64, B, tsn);
        }
        sack_at(&mut d, 10, 40.0, 0, &[0, 2, 0, 2]);
        sack_at(&mut d, 11, 41.0, 0, &[0, 2, 0, 3]);
        sack_at(&mut d, 12, 42.0, 0, &[0, 2, 0, 4]);
        send(&mut d, 20, 42.0 + resend_after_ms, B, 1);
        assert_eq!(d.retransmissions.len(), 1);
        (d.retransmissions[0].kind, d.timeouts.len())
    };
    assert_eq!(run(1.0), (RtxKind::Fast, 0));
    assert_eq!(run(3000.0), (RtxKind::Timeout, 1));
}

/// Path 1 loses TSN 1 while taking TSN 2; 1 is resent to path 2 (no SACK comes from there),
/// path 1's SACKs stop after 60 ms, path 2's timer sends 1 back to path 1 at 3 s and path 1's
/// timer expires on it at 3.1 s before new DATA moves to path 2. No original was lost after
/// path 1's last SACK: the outage starts at the resent copy of 3 s, and the expiry of 3.1 s is
/// the failover's (RFC 9260 8.2: each expiry strikes the destination).
#[test]
fn an_expired_copy_already_resent_starts_the_outage_of_a_silent_path() {
    let mut d = DirInfer::default();
    send(&mut d, 1, 0.0, B, 1);
    send(&mut d, 2, 1.0, B, 2);
    sack_at(&mut d, 3, 40.0, 0, &[0, 2, 0, 2]);
    send(&mut d, 4, 50.0, B2, 1);
    sack_at(&mut d, 5, 60.0, 0, &[0, 2, 0, 2]);
    send(&mut d, 6, 3000.0, B, 1);
    send(&mut d, 7, 3100.0, B, 1);
    send(&mut d, 8, 3200.0, B2, 3);
    assert_eq!(d.failovers.len(), 1);
    let f = &d.failovers[0];
    assert_eq!(
        (f.outage_start_ns, f.outage_frame),
        (Some(3_000_000_000), Some(6))
    );
    assert_eq!(f.timeouts.len(), 1);
    assert_eq!(d.timeouts[f.timeouts[0] as usize].t_ns, 3_100_000_000);
}

/// At the receiver vantage (lab run `spike_p20_rtomin1000`): retransmissions to the alternate
/// address arrive before their originals, delayed on the primary; the originals then arrive
/// there, acknowledged already. The "failover" their first sight made is marked outrun; new DATA
/// first seen on the alternate address clears the mark (a real move).
#[test]
fn a_failover_whose_first_data_arrive_again_on_the_old_path_is_outrun() {
    let mut d = DirInfer::default();
    send(&mut d, 1, 0.0, B, 1);
    send(&mut d, 2, 20.0, B, 2);
    send(&mut d, 3, 500.0, B2, 3); // outran 3 and 4, still on their way over B
    send(&mut d, 4, 500.0, B2, 4);
    sack_at(&mut d, 5, 501.0, 4, &[]);
    send(&mut d, 6, 520.0, B, 3); // the delayed originals
    assert_eq!(d.failovers.len(), 1);
    assert_eq!(d.failovers[0].outrun_ns, None, "4 not seen again yet");
    send(&mut d, 7, 540.0, B, 4);
    assert_eq!(d.failovers[0].outrun_ns, Some(540_000_000));
    send(&mut d, 8, 560.0, B, 5); // new DATA back on B: the failback
    assert_eq!(d.failbacks.len(), 1);

    // The same, but new DATA keeps coming over B2: the sender moved.
    let mut d = DirInfer::default();
    send(&mut d, 1, 0.0, B, 1);
    send(&mut d, 2, 500.0, B2, 2);
    send(&mut d, 3, 520.0, B, 2);
    assert!(d.failovers[0].outrun_ns.is_some());
    send(&mut d, 4, 540.0, B2, 3);
    assert_eq!(d.failovers[0].outrun_ns, None);
    assert!(d.failbacks.is_empty());
}
