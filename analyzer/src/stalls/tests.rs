//! Stall episodes from hand-built DATA / SACK sequences.

use super::*;
use crate::packet::TimeBase;
use crate::sctp::{DataChunk, SackChunk};

const A: &str = "10.0.0.1";
const B: &str = "10.0.0.2";

struct Run {
    st: Stalls,
    frame: u64,
}

impl Run {
    fn new() -> Self {
        Run {
            st: Stalls::default(),
            frame: 0,
        }
    }

    fn ctx(&mut self, ms: f64, from_a: bool, len: u32) -> PacketCtx {
        self.frame += 1;
        let (a, b) = ((A, 1), (B, 2));
        let (src, dst) = if from_a { (a, b) } else { (b, a) };
        PacketCtx {
            len,
            ..PacketCtx::test(self.frame, ms, src, dst)
        }
    }

    /// Endpoint 0 sends one DATA packet of `len` bytes carrying `tsn` (payload len - 28).
    fn data(&mut self, ms: f64, tsn: u32, len: u32) {
        self.data_to(ms, tsn, len, B);
    }

    /// `data` to destination address `to`.
    fn data_to(&mut self, ms: f64, tsn: u32, len: u32, to: &str) {
        self.frame += 1;
        let ctx = PacketCtx {
            len,
            ..PacketCtx::test(self.frame, ms, (A, 1), (to, 2))
        };
        let d = DataChunk {
            idata: false,
            tsn,
            stream_id: 0,
            ssn_or_mid: tsn,
            ppid_or_fsn: 0,
            payload_len: len - 28,
            flag_i: false,
            flag_u: false,
            flag_b: true,
            flag_e: true,
        };
        self.st.chunk(&ctx, 0, &Chunk::Data(d));
    }

    /// Endpoint 1 sends a SACK.
    fn sack(&mut self, ms: f64, cum: u32, a_rwnd: u32) {
        self.sack_gaps(ms, cum, a_rwnd, 0);
    }

    /// Endpoint 1 sends a SACK announcing `gaps` gap blocks, each acknowledging cum + 2 (a
    /// TSN above a missing cum + 1).
    fn sack_gaps(&mut self, ms: f64, cum: u32, a_rwnd: u32, gaps: u16) {
        let blocks = vec![(2, 2); usize::from(gaps)];
        self.sack_blocks(ms, cum, a_rwnd, &blocks);
    }

    /// Endpoint 1 sends a SACK with these gap blocks (start, end offsets from `cum`).
    fn sack_blocks(&mut self, ms: f64, cum: u32, a_rwnd: u32, blocks: &[(u16, u16)]) {
        let ctx = self.ctx(ms, false, 28);
        let bytes: Vec<u8> = blocks
            .iter()
            .flat_map(|&(a, b)| [a.to_be_bytes(), b.to_be_bytes()].concat())
            .collect();
        let k = SackChunk {
            nr: false,
            cum_tsn_ack: cum,
            a_rwnd,
            n_gap_blocks: blocks.len() as u16,
            n_nr_gap_blocks: 0,
            n_dup_tsns: 0,
            gap_bytes: &bytes,
            nr_gap_bytes: &[],
            dup_bytes: &[],
        };
        self.st.chunk(&ctx, 1, &Chunk::Sack(k));
    }

    fn report(&self, rto_ms: Option<f64>, last_ms: f64) -> Vec<StallReport> {
        self.st.report(
            TimeBase { first_ns: Some(0) },
            0,
            rto_ms,
            (last_ms * 1e6) as i64,
            [Some(7), Some(9)],
        )
    }
}

#[test]
fn a_closed_window_with_data_outstanding_is_a_zero_window_stall() {
    let mut r = Run::new();
    for t in 1..=3 {
        r.data(f64::from(t) * 10.0, t, 128);
    }
    r.sack(40.0, 1, 0);
    r.data(300.0, 2, 128); // a window probe (RFC 9260 6.1 A)
    r.sack(340.0, 1, 0);
    r.sack(900.0, 3, 65_535);
    let s = r.report(None, 1000.0);
    assert_eq!(s.len(), 1, "{s:?}");
    let z = &s[0];
    assert_eq!(z.cause, "zero_window");
    assert!((z.t_s - 0.04).abs() < 1e-9 && z.end_s == Some(0.9), "{z:?}");
    assert_eq!((z.frame, z.end_frame), (4, Some(7)));
    assert!(z.evidence.contains("window of 0 bytes"), "{}", z.evidence);
    assert!(
        z.evidence.contains("2 SACKs, 1 DATA packet"),
        "{}",
        z.evidence
    );
    assert_eq!(
        z.filter,
        "frame.number >= 4 && frame.number <= 7 && (sctp.verification_tag == 0x00000007 || sctp.verification_tag == 0x00000009)"
    );
}

#[test]
fn a_window_closed_for_one_sack_or_with_nothing_outstanding_is_none() {
    let mut r = Run::new();
    r.data(0.0, 1, 128);
    r.data(10.0, 2, 128);
    r.sack(40.0, 1, 0);
    r.sack(60.0, 2, 8000); // reopened 20 ms later after one SACK
    r.sack(100.0, 2, 0); // closed with nothing outstanding
    r.sack(400.0, 2, 0);
    assert!(r.report(None, 500.0).is_empty());
}

#[test]
fn sacks_that_do_not_move_the_cumulative_ack_for_long_are_a_frozen_cum_ack() {
    let mut r = Run::new();
    for t in 1..=10 {
        r.data(f64::from(t), t, 128);
    }
    r.sack(50.0, 5, 60_000);
    for k in 1..=7 {
        r.sack(50.0 + 300.0 * f64::from(k), 5, 60_000);
    }
    assert!(r
        .st
        .episodes()
        .iter()
        .any(|e| e.cause == Cause::FrozenCumAck));
    r.sack(2200.0, 10, 60_000);
    let s = r.report(Some(100.0), 2300.0);
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!(s[0].cause, "frozen_cum_ack");
    assert!((s[0].t_s - 0.05).abs() < 1e-9 && s[0].end_s == Some(2.2));
    assert!(s[0].evidence.contains("stuck at 5"), "{}", s[0].evidence);
    // An RTO of 1 s makes the threshold 3 s: 2.15 s is loss recovery, not a stall.
    assert!(r.report(Some(1000.0), 2300.0).is_empty());
}

/// An episode still open at the capture's end is reported (and makes the association's
/// `stalled`, which is derived from the reported stalls) only once it passes max(1 s, 3 RTO).
#[test]
fn a_freeze_open_at_the_end_is_a_stall_only_past_three_rtos() {
    let mut r = Run::new();
    for t in 1..=10 {
        r.data(f64::from(t), t, 128);
    }
    r.sack(50.0, 5, 60_000);
    for k in 1..=5 {
        r.sack(50.0 + 300.0 * f64::from(k), 5, 60_000);
    }
    assert!(r
        .st
        .episodes()
        .iter()
        .any(|e| e.cause == Cause::FrozenCumAck && e.end.is_none()));
    // 1.55 s frozen at the end: a stall with an RTO of 100 ms, none with 1 s (threshold 3 s).
    let s = r.report(Some(100.0), 1600.0);
    assert!(s.len() == 1 && s[0].end_s.is_none(), "{s:?}");
    assert!(r.report(Some(1000.0), 1600.0).is_empty());
}

#[test]
fn sacks_with_gap_blocks_are_loss_recovery_however_long() {
    let mut r = Run::new();
    for t in 1..=10 {
        r.data(f64::from(t), t, 128);
    }
    for k in 1..=15 {
        r.sack_gaps(50.0 + 300.0 * f64::from(k), 5, 60_000, 1);
    }
    r.sack(5000.0, 10, 60_000);
    assert!(r.report(Some(100.0), 5100.0).is_empty());
}

#[test]
fn a_short_freeze_is_loss_recovery_not_a_stall() {
    let mut r = Run::new();
    for t in 1..=10 {
        r.data(f64::from(t), t, 128);
    }
    r.sack(50.0, 5, 60_000);
    for k in 1..=4 {
        r.sack(50.0 + 150.0 * f64::from(k), 5, 60_000);
    }
    r.sack(800.0, 10, 60_000);
    assert!(r.st.episodes().is_empty());
}

#[test]
fn a_large_packet_sent_again_and_again_while_small_ones_pass_is_a_black_hole() {
    let mut r = Run::new();
    // Large packets got through before (the path's MTU shrank later).
    for t in 1..=4 {
        r.data(f64::from(t) * 20.0, t, 1428);
    }
    r.sack(120.0, 4, 60_000);
    r.data(200.0, 5, 1428);
    r.data(210.0, 6, 228);
    r.sack_gaps(260.0, 4, 60_000, 1); // 6 arrived, 5 did not
    r.data(500.0, 5, 1428);
    r.data(510.0, 7, 228);
    r.sack_gaps(540.0, 4, 60_000, 1);
    r.data(900.0, 5, 1428);
    r.sack_gaps(940.0, 4, 60_000, 1);
    r.data(1700.0, 5, 1428);
    let s = r.report(None, 2000.0);
    let b = s
        .iter()
        .find(|x| x.cause == "pmtu_black_hole")
        .expect("a black hole");
    assert!((b.t_s - 0.5).abs() < 1e-9, "{b:?}");
    assert_eq!(b.end_s, None);
    assert!(
        b.evidence
            .contains("1428-byte DATA packet (TSN 5) was sent 4 times"),
        "{}",
        b.evidence
    );
    assert!(b.evidence.contains("of up to 228 bytes"), "{}", b.evidence);
    assert!(b.filter.starts_with("frame.number >= "), "{}", b.filter);
    // Acknowledged at last: the episode ends.
    r.sack(2100.0, 7, 60_000);
    let s = r.report(None, 2200.0);
    assert!(s.iter().all(|x| x.end_s.is_some()), "{s:?}");
}

#[test]
fn a_lost_packet_resent_while_same_size_ones_pass_is_no_black_hole() {
    // A cut path: the lost TSN is resent; later packets of the same size get through on the
    // alternate path. Not a size problem.
    let mut r = Run::new();
    for t in 1..=4 {
        r.data(f64::from(t) * 20.0, t, 228);
    }
    r.sack(120.0, 4, 60_000);
    r.data(200.0, 5, 228);
    r.data(210.0, 6, 228);
    r.sack_gaps(260.0, 4, 60_000, 1);
    for k in 0..4 {
        r.data(500.0 + 300.0 * f64::from(k), 5, 228);
        r.data(510.0 + 300.0 * f64::from(k), 7 + k, 228);
        r.sack_gaps(540.0 + 300.0 * f64::from(k), 4, 60_000, 1);
    }
    assert!(r
        .report(None, 2000.0)
        .iter()
        .all(|x| x.cause != "pmtu_black_hole"));
}

/// One TSN refused (lab run `frozen_p20`: the wire drops every copy of one message): resent
/// again and again to a destination that acknowledges later packets of the same size in gap
/// blocks, the cumulative ack frozen since it last moved.
#[test]
fn a_tsn_resent_again_and_again_while_as_large_ones_pass_is_a_frozen_cum_ack() {
    let mut r = Run::new();
    for t in 1..=3 {
        r.data(f64::from(t) * 20.0, t, 128);
    }
    r.sack(100.0, 1, 60_000); // the cumulative ack's last move
    r.sack_blocks(110.0, 1, 60_000, &[(2, 2)]); // 3 arrived, 2 did not
    r.data(200.0, 2, 128); // fast retransmission
    r.data(220.0, 4, 128); // as large, to the same destination: the probe
    r.sack_blocks(260.0, 1, 60_000, &[(2, 3)]);
    // Resent to the other destination too, at each expiry; new DATA keeps passing.
    for k in 0..6 {
        let t = 500.0 + 400.0 * f64::from(k);
        r.data_to(t, 2, 128, if k % 2 == 0 { "10.0.1.2" } else { B });
        r.data(t + 20.0, 5 + k, 128);
        r.sack_blocks(t + 60.0, 1, 60_000, &[(2, 4 + k as u16)]);
    }
    let s = r.report(Some(200.0), 3000.0);
    assert_eq!(s.len(), 1, "{s:?}");
    let f = &s[0];
    assert_eq!(f.cause, "frozen_cum_ack");
    assert!((f.t_s - 0.1).abs() < 1e-9 && f.end_s.is_none(), "{f:?}");
    assert!(
        f.evidence.contains("stood at 1 ")
            && f.evidence
                .contains("TSN 2 was sent 8 times in a 128-byte packet")
            && f.evidence.contains("8 SACKs")
            && f.evidence.contains("later 128-byte DATA packet"),
        "{}",
        f.evidence
    );
    // Acknowledged at last: the episode ends there.
    r.sack(3100.0, 10, 60_000);
    let s = r.report(Some(200.0), 3200.0);
    assert_eq!(s[0].end_s, Some(3.1), "{s:?}");
    // Shorter than max(1 s, 3 RTO) with an RTO of 2 s: none.
    assert!(r.report(Some(2000.0), 3200.0).is_empty());
}

/// The first packet that could show the path takes the refused TSN's size is lost itself
/// (random loss): the next one probes instead.
#[test]
fn a_lost_probe_is_replaced_by_the_next_packet() {
    let mut r = Run::new();
    for t in 1..=3 {
        r.data(f64::from(t) * 20.0, t, 128);
    }
    r.sack(100.0, 1, 60_000);
    r.sack_blocks(110.0, 1, 60_000, &[(2, 2)]);
    r.data(200.0, 2, 128);
    r.data(220.0, 4, 128); // the first probe: lost
    r.data(240.0, 5, 128);
    r.sack_blocks(280.0, 1, 60_000, &[(2, 2), (4, 4)]); // 5 arrived, 4 did not
    for k in 0..6 {
        let t = 500.0 + 400.0 * f64::from(k);
        r.data(t, 2, 128);
        r.data(t + 20.0, 6 + k, 128);
        r.sack_blocks(t + 60.0, 1, 60_000, &[(2, 2), (4, 5 + k as u16)]);
    }
    let s = r.report(Some(200.0), 3000.0);
    assert!(s.iter().any(|x| x.cause == "frozen_cum_ack"), "{s:?}");
}

/// A dead path (Linux without PF keeps resending to it): the lost TSN is resent only to the
/// dead destination while later DATA passes on the other one. Loss recovery on a failed path,
/// not a refused TSN; and a later packet smaller than the resent one proves nothing either.
#[test]
fn a_tsn_resent_only_to_a_dead_destination_or_larger_than_what_passes_is_none() {
    for (dead, later_len) in [("10.0.1.2", 128), (B, 100)] {
        let mut r = Run::new();
        for t in 1..=3 {
            r.data_to(f64::from(t) * 20.0, t, 128, dead);
        }
        r.sack(100.0, 1, 60_000);
        for k in 0..8 {
            let t = 200.0 + 400.0 * f64::from(k);
            r.data_to(t, 2, 128, dead);
            r.data(t + 20.0, 4 + k, later_len);
            r.sack_blocks(t + 60.0, 1, 60_000, &[(2, 3 + k as u16)]);
        }
        let s = r.report(Some(200.0), 3500.0);
        assert!(
            s.iter().all(|x| x.cause != "frozen_cum_ack"),
            "{dead}: {s:?}"
        );
    }
}

#[test]
fn at_the_receiver_a_probe_into_the_closed_window_shows_the_sender_has_data() {
    let mut r = Run::new();
    r.data(0.0, 1, 128);
    r.sack(10.0, 1, 0); // everything that arrived is acknowledged, the window is closed
    r.sack(200.0, 1, 0);
    r.data(500.0, 2, 128); // a window probe
    r.sack(510.0, 1, 0);
    let s = r.report(None, 600.0);
    assert_eq!(s.len(), 1, "{s:?}");
    assert!(
        (s[0].t_s - 0.01).abs() < 1e-9 && s[0].end_s.is_none(),
        "{s:?}"
    );
    assert!(s[0].evidence.contains("1 DATA packet"), "{}", s[0].evidence);
}

/// Linux after a stalled reader resumes (lab run `lk_zerowin_rcvbuf`): the window closes and
/// reopens within a few ms while the reader drains the buffer, several SACKs each time. Flow
/// control at work, not a stall.
#[test]
fn a_window_closed_for_a_few_ms_over_several_sacks_is_none() {
    let mut r = Run::new();
    for t in 1..=10 {
        r.data(f64::from(t), t, 128);
    }
    r.sack(40.0, 2, 0);
    r.sack(41.0, 3, 0);
    r.sack(42.0, 4, 0);
    r.sack(45.0, 6, 8000);
    r.sack(60.0, 10, 8000);
    assert!(r.report(Some(100.0), 100.0).is_empty());
}

/// A cumulative ack that stands while the window is closed is the zero window's doing: the
/// freeze is timed from the window's last closed SACK, not from the ack's last move (lab run
/// `lk_zerowin_rcvbuf`: 2 s closed, then SACKs with the window open for 20 ms before the
/// cumulative ack moved, which read as a 2.03 s `frozen_cum_ack` beside the `zero_window`).
#[test]
fn a_closed_window_is_a_zero_window_and_not_also_a_freeze() {
    let mut r = Run::new();
    for t in 1..=10 {
        r.data(f64::from(t), t, 128);
    }
    r.sack(50.0, 5, 0);
    for k in 1..=6 {
        r.data(50.0 + 300.0 * f64::from(k), 6, 128); // window probes
        r.sack(51.0 + 300.0 * f64::from(k), 5, 0);
    }
    // The window opens; three SACKs that do not move the cumulative ack, then it moves.
    r.sack(2060.0, 5, 60_000);
    r.sack(2065.0, 5, 60_000);
    r.sack(2070.0, 5, 60_000);
    r.sack(2080.0, 10, 60_000);
    let s = r.report(Some(100.0), 2100.0);
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!(s[0].cause, "zero_window");
    assert!(
        (s[0].t_s - 0.05).abs() < 1e-9 && s[0].end_s == Some(2.06),
        "{s:?}"
    );
}
