//! Failover diagnosis of one direction (METRICS.md "Failover"): each failover spurious or a
//! path failure, with its cause, the outage it followed, the expiry chain and policy that moved
//! the DATA, its evidence and what other settings would have given.

use super::chain::{chain_expiries, failover_policy, Chain};
use super::direction::DirInfer;
use super::events::{FailoverPolicy, RttKind};
use super::heartbeat::Period;
use super::stats::median;
use super::summary::Vantage;
use crate::decimal::Fixed;

/// A span with nothing sent to the old path after its last SACK shorter than this leaves the
/// failover time from that SACK (`diagnose_failovers`, the idle rule).
const IDLE_SPAN_MIN_NS: i64 = 50_000_000;

/// Marks spurious failovers with their evidence, cause and recommendation (METRICS.md "Failover").
#[allow(clippy::too_many_arguments)]
pub(super) fn diagnose_failovers(
    dir: &mut DirInfer,
    vantage: Vantage,
    base_rtt_ms: Option<f64>,
    sd: Option<(f64, f64)>,
    rto_min_ms: Option<f64>,
    hb_gap_min_ms: Option<f64>,
    tick_estimator: Option<bool>,
    peer_linux: bool,
) {
    let linux = (tick_estimator == Some(true), peer_linux);
    let (sd_ms, sd_high_ms) = (sd.map(|d| d.0), sd.map(|d| d.1));
    // The sender's idle heartbeat periods, for the heartbeat interval's floor (Linux timers).
    let hb_periods: Vec<Period> = if linux.0 {
        dir.dsts
            .iter()
            .flat_map(|d| d.hb_period.periods().iter().copied())
            .collect()
    } else {
        Vec::new()
    };
    for fi in 0..dir.failovers.len() {
        let f = dir.failovers[fi].clone();
        let from = f.from;
        let mut evidence = Vec::new();
        // 1. Were the "lost" originals delivered after all? The outage starts at the first
        // original on the old path that was neither acknowledged nor delivered.
        let episode: Vec<_> = f
            .episode_rtx
            .iter()
            .filter_map(|&i| dir.retransmissions.get(i as usize))
            .collect();
        let truly_lost = episode
            .iter()
            .filter(|r| r.spurious.is_none())
            .map(|r| (r.orig_t_ns, r.orig_frame))
            .min();
        let delivered: Vec<_> = episode
            .iter()
            .filter_map(|r| r.spurious.map(|why| (r.tsn, why)))
            .collect();
        // A SACK that still arrived over the old path after the first lost original was sent
        // shows the path alive until then (in-flight and queued originals are lost at the cut):
        // the outage cannot have started before it.
        // When no original counts as lost (those a T3-rtx expiry resent had arrived; only their
        // SACKs were lost), the old path fell silent at its last SACK: the outage as far as the
        // trace can tell, provided the sender's timer for that path expired in the silence.
        let silent = f.last_heard_ns.filter(|&h| {
            h <= f.t_ns
                && dir
                    .timeouts
                    .iter()
                    .any(|t| t.path == from && t.t_ns > h && t.t_ns <= f.t_ns)
        });
        let outage = truly_lost
            .or(f.outage_start_ns.zip(f.outage_frame))
            .map(|(t, fr)| match f.last_heard_ns {
                Some(h) if h > t && h <= f.t_ns => (h, fr),
                _ => (t, fr),
            })
            .or(silent.map(|h| (h, f.last_heard_frame)));
        // The old path carried nothing from its last SACK until the transmission that started
        // the first timer to expire after it (a sender waiting on a window or another path's
        // timer): the outage began somewhere in that span. Past a quarter of the failover time
        // (and 50 ms) the figure would tell the idle span, not the failover: none is given.
        // The same when the outage starts at a resent copy (no original lost): nothing went to
        // the old path between its last SACK and that copy.
        // (An episode holds rows exactly when an original was lost in it.)
        let first_sent = match (episode.is_empty(), f.outage_start_ns) {
            (false, _) => None,
            (true, Some(s)) => f.last_heard_ns.map(|h| (h, s)),
            (true, None) => silent.and_then(|h| {
                dir.timeouts
                    .iter()
                    .find(|t| t.path == from && t.t_ns > h && t.t_ns <= f.t_ns)
                    .and_then(|t| t.timer_start_ns)
                    .map(|s| (h, s))
            }),
        };
        let idle = first_sent
            .filter(|&(h, s)| h <= f.t_ns && s - h > IDLE_SPAN_MIN_NS.max((f.t_ns - h) / 4));
        let start = outage.map_or(f.t_ns, |o| o.0);
        if truly_lost.is_none() {
            if let Some((tsn, why)) = delivered.first() {
                evidence.push(format!(
                    "all {} retransmitted chunk(s) first sent to {} had been delivered (TSN {tsn}: {why})",
                    delivered.len(),
                    dir.dsts[from as usize].addr
                ));
            }
        }
        // 1b. Did originals reach the peer, which discarded them? A packet crosses a path whole
        // (RFC 9260 6.10: its chunks share one IP datagram and one checksum), so a chunk whose
        // packet-mates were acknowledged got there: the old path was working.
        let discarded: Vec<_> = episode
            .iter()
            .filter_map(|r| r.peer_discarded.map(|why| (r, why)))
            .collect();
        if let Some((r, why)) = discarded.first() {
            evidence.push(format!(
                "{} retransmitted chunk(s) first sent to {} had reached the peer, which discarded them (TSN {}, first sent in frame {}: {why})",
                discarded.len(),
                dir.dsts[from as usize].addr,
                r.tsn,
                r.orig_frame
            ));
        }
        // 2. Heartbeats on the old path were answered during the outage.
        let hb_ok = dir
            .rtt_rows
            .iter()
            .filter(|r| r.kind == RttKind::Heartbeat && r.path == from)
            .any(|r| r.t_ns - r.rtt_ns >= start && r.t_ns <= f.t_ns);
        if hb_ok {
            evidence.push(format!(
                "a HEARTBEAT to {} sent during the outage was acknowledged before the failover",
                dir.dsts[from as usize].addr
            ));
        }
        let chain = chain_expiries(dir, &f, rto_min_ms, tick_estimator);
        let policy = failover_policy(&f, chain, hb_gap_min_ms, &hb_periods);
        let hb_strikes = chain.map_or(0, |c| c.hb_strikes);
        let pmr = match policy {
            Some(FailoverPolicy::Rfc { path_max_retrans }) => Some(path_max_retrans),
            _ => None,
        };
        let spurious = !evidence.is_empty();
        let (cause, recommendation) = if !discarded.is_empty() {
            // The peer dropped what reached it: its receive buffer, not the path, nor a timer
            // that expired too soon (the originals were never acknowledged).
            (
                Some("receiver_discard"),
                Some(format!(
                    "the peer discarded DATA that reached it (most often a full receive buffer: Linux counts each chunk's whole buffer against SO_RCVBUF, so small messages fill it long before the window): have the receiving application read faster or give its socket a larger SO_RCVBUF; each drop costs a T3-rtx expiry, and a sender that fails over at the first one ({}) leaves a working path: raise Path.Max.Retrans ({}) or pf_retrans",
                    super::settings::pf(linux.0),
                    super::settings::path_max_retrans(linux.0)
                )),
            )
        } else if spurious {
            let rto = f
                .timeouts
                .first()
                .and_then(|&i| dir.timeouts.get(i as usize))
                .and_then(|t| t.observed_rto_ns)
                .map(|n| n as f64 / 1e6);
            // How long after their first transmission the delivered originals were acknowledged.
            let lat: Vec<f64> = episode
                .iter()
                .filter(|r| r.spurious.is_some())
                .filter_map(|r| r.acked_ns.map(|a| (a - r.orig_t_ns) as f64 / 1e6))
                .collect();
            let ack_ms = median(&lat);
            classify(dir, &f, start, base_rtt_ms, sd_ms, rto, ack_ms, pmr, linux)
        } else if vantage != Vantage::Sender {
            // The old path's silence and the expiry chain are seen at the sender.
            (None, None)
        } else {
            path_failure(
                dir,
                &f,
                (chain, policy),
                start,
                (base_rtt_ms, sd_high_ms),
                tick_estimator,
                &mut evidence,
            )
        };
        // A capture gap (rotated files) that ended before the failover with no SACK or
        // HEARTBEAT-ACK from the old path seen after it: the outage may have begun in the gap
        // (and the failover too), so no failover time, cause, policy or what-if for a failover
        // not shown spurious.
        let heard = [f.last_heard_ns, dir.dsts[from as usize].last_hb_ack_ns]
            .into_iter()
            .flatten()
            .filter(|&h| h <= f.t_ns)
            .max()
            .unwrap_or(i64::MIN);
        let across_gap = !spurious && f.gap_end_ns <= f.t_ns && heard < f.gap_end_ns;
        let (outage, cause, recommendation, policy, pmr) = if across_gap {
            evidence = vec![format!(
                "a capture gap (rotated files: a file boundary with no packet) ended {} s before this failover was seen and nothing was heard from the old path after it: the outage may have begun in the gap (the failover too); no failover time",
                Fixed((f.t_ns - f.gap_end_ns) as f64 / 1e9, 3)
            )];
            (None, None, None, None, None)
        } else {
            (outage, cause, recommendation, policy, pmr)
        };
        // Without an outage start the what-if has no failover time to compare with.
        let (outage, recommendation) = match idle {
            Some((h, s)) if !spurious && outage.is_some() => {
                evidence.push(format!(
                    "nothing was sent to {} for {} ms after its last SACK ({} ms before the failover): the outage began in that span; no failover time",
                    crate::net::Ip(dir.dsts[from as usize].addr),
                    Fixed((s - h) as f64 / 1e6, 0),
                    Fixed((f.t_ns - h) as f64 / 1e6, 0)
                ));
                (None, None)
            }
            _ => (outage, recommendation),
        };
        if vantage != Vantage::Sender && !spurious && cause.is_none() {
            // Away from the sender a retransmission to the alternate address looks like new
            // DATA moved (RFC 9260 6.4): say what the time is and what cannot be known here.
            evidence.push(format!(
                "{} vantage: the first DATA seen going to {}; retransmissions cannot be told from new DATA here, so the sender may have moved its new DATA later, and whether the failover was spurious is not known from this capture",
                vantage.as_str(),
                crate::net::Ip(dir.dsts[f.to as usize].addr)
            ));
        }
        let fo = &mut dir.failovers[fi];
        if !spurious {
            fo.outage_start_ns = outage.map(|o| o.0);
            fo.outage_frame = outage.map(|o| o.1);
        }
        fo.spurious = spurious;
        fo.evidence = evidence;
        fo.cause = cause;
        fo.recommendation = recommendation;
        fo.pmr = pmr;
        fo.policy = policy;
        fo.hb_strikes = if policy.is_some() { hb_strikes } else { 0 };
    }
}

/// The cause of a real failover in words (METRICS.md "Failover policy and stacks": the old
/// path fell silent, the expiry chain, PMR or pf_retrans reached) and what other settings would
/// have given (`whatif`), with the settings' names where the stack is known.
/// `base_rtt_ms` and `sd_high_ms` (the peer's longest usual SACK delay, p95) bound what a lone
/// packet's SACK takes to come back (`lone_caveat`).
fn path_failure(
    dir: &DirInfer,
    f: &super::events::Failover,
    (chain, policy): (Option<Chain>, Option<FailoverPolicy>),
    start_ns: i64,
    (base_rtt_ms, sd_high_ms): (Option<f64>, Option<f64>),
    tick_estimator: Option<bool>,
    evidence: &mut Vec<String>,
) -> (Option<&'static str>, Option<String>) {
    let failover_ms = (f.t_ns - start_ns) as f64 / 1e6;
    let old = &dir.dsts[f.from as usize];
    let heard = [f.last_heard_ns, old.last_hb_ack_ns]
        .into_iter()
        .flatten()
        .filter(|&h| h <= f.t_ns)
        .max();
    evidence.push(match heard {
        Some(h) => format!(
            "no SACK or HEARTBEAT-ACK came from {} in the {} ms before the failover",
            crate::net::Ip(old.addr),
            Fixed((f.t_ns - h) as f64 / 1e6, 0)
        ),
        None => format!(
            "no SACK or HEARTBEAT-ACK from {} was captured",
            crate::net::Ip(old.addr)
        ),
    });
    let rtos: Vec<String> = f
        .timeouts
        .iter()
        .filter_map(|&i| dir.timeouts.get(i as usize))
        .filter_map(|t| t.observed_rto_ns)
        .map(|n| Fixed(n as f64 / 1e6, 0).to_string())
        .collect();
    if !rtos.is_empty() {
        evidence.push(format!(
            "{} T3-rtx expir{} on {} since the outage began (observed RTO {} ms)",
            rtos.len(),
            if rtos.len() == 1 { "y" } else { "ies" },
            crate::net::Ip(old.addr),
            rtos.join(", ")
        ));
    }
    match policy {
        Some(FailoverPolicy::Pf { pf_retrans }) => evidence.push(match chain {
            Some(c) if c.hb_strikes > 0 => format!(
                "new DATA moved after {} strikes ({} T3-rtx expiries and {} unanswered HEARTBEAT{}, RFC 9260 8.3): the path was potentially failed (RFC 7829, pf_retrans {pf_retrans}), not yet inactive",
                pf_retrans + 1,
                c.strikes - c.hb_strikes,
                c.hb_strikes,
                if c.hb_strikes == 1 { "" } else { "s" }
            ),
            _ => format!(
                "new DATA moved after {} expir{}: the path was potentially failed (RFC 7829, pf_retrans {pf_retrans}), not yet inactive",
                pf_retrans + 1,
                if pf_retrans == 0 { "y" } else { "ies" }
            ),
        }),
        Some(FailoverPolicy::Rfc { path_max_retrans }) => evidence.push(match chain {
            Some(c) if c.hb_strikes > 0 => format!(
                "Path.Max.Retrans {path_max_retrans} + 1 strikes made the path inactive (RFC 9260 8.2): {} T3-rtx expiries and {} unanswered HEARTBEAT{} (RFC 9260 8.3; a Linux kernel strikes when it sends a HEARTBEAT while one is unanswered), {}",
                c.strikes - c.hb_strikes,
                c.hb_strikes,
                if c.hb_strikes == 1 { "" } else { "s" },
                if c.hb_moved {
                    format!(
                        "the last sent by the heartbeat timer {} ms after the last expiry, new DATA having gone to the path in between",
                        Fixed(
                            (f.t_ns
                                - f.timeouts
                                    .last()
                                    .and_then(|&i| dir.timeouts.get(i as usize))
                                    .map_or(f.t_ns, |t| t.t_ns))
                                as f64
                                / 1e6,
                            0
                        )
                    )
                } else {
                    "between the last two expiries (the running T3-rtx timer kept its RTO)"
                        .to_string()
                }
            ),
            _ => format!(
                "Path.Max.Retrans {path_max_retrans} + 1 expiries made the path inactive (RFC 9260 8.2)"
            ),
        }),
        None => {}
    }
    let linux = tick_estimator == Some(true);
    // What-if figures (`whatif`): only from a complete chain.
    // The what-if model doubles the RTO per expiry: a chain with a heartbeat strike is left out.
    let recommendation = chain.filter(|c| c.hb_strikes == 0).and_then(|c| {
        super::whatif::recommendation(
            dir,
            f,
            (c.strikes, c.sum_ms),
            (start_ns, failover_ms),
            (base_rtt_ms, sd_high_ms),
            linux,
        )
    });
    (Some("path_failure"), recommendation)
}

#[allow(clippy::too_many_arguments)]
fn classify(
    dir: &DirInfer,
    f: &super::events::Failover,
    start: i64,
    base_rtt_ms: Option<f64>,
    sd_ms: Option<f64>,
    rto_ms: Option<f64>,
    delivered_ack_ms: Option<f64>,
    pmr: Option<u32>,
    (linux, peer_linux): (bool, bool),
) -> (Option<&'static str>, Option<String>) {
    use super::settings as set;
    let originals_delivered = delivered_ack_ms.is_some();
    let base = base_rtt_ms.unwrap_or(0.0);
    let rto = rto_ms.unwrap_or(f64::NAN);
    // An RTT spike: undelayed samples (heartbeats, SACKs of two or more packets) on the old
    // path around the failover far above the base RTT and above the RTO.
    let mut spike = dir
        .rtt_rows
        .iter()
        .filter(|r| r.path == f.from && (r.kind == RttKind::Heartbeat || r.packets_acked >= 2))
        .filter(|r| r.t_ns >= start - 500_000_000 && r.t_ns <= f.t_ns + 3_000_000_000)
        .map(|r| r.rtt_ns as f64 / 1e6)
        .fold(f64::NAN, f64::max);
    // RTTs are only seen at the sender vantage (`base_rtt_ms` is None elsewhere): at the
    // receiver, request-to-answer times are the peer's processing, not a path's RTT.
    let rtt_seen = base_rtt_ms.is_some();
    let mut spiked = rtt_seen
        && spike.is_finite()
        && spike > (3.0 * base).max(if rto.is_finite() { rto } else { 0.0 });
    // The delivered originals were acknowledged far later than RTT + SACK delay can explain
    // (RFC 9260 6.2: the SACK delay is at most 500 ms; 200 ms is the usual default).
    if let Some(l) = delivered_ack_ms.filter(|_| rtt_seen) {
        let explained = base + sd_ms.unwrap_or(200.0);
        if l > 1.5 * explained && l > base + 20.0 {
            spiked = true;
            if !spike.is_finite() || l > spike {
                spike = l;
            }
        }
    }
    let fmt = |x: f64| Fixed(x, 0).to_string();
    if spiked {
        return (
            Some("rtt_spike"),
            Some(format!(
                "RTT on {} rose from {} ms to {} ms, above the RTO ({} ms): raise RTO.min above {} ms ({}) or Path.Max.Retrans ({}) so that a delay spike does not fail over",
                dir.dsts[f.from as usize].addr,
                fmt(base),
                fmt(spike),
                if rto.is_finite() { fmt(rto) } else { "?".into() },
                fmt(spike),
                set::rto_min(linux),
                set::path_max_retrans(linux)
            )),
        );
    }
    let sd_explains = match sd_ms {
        Some(sd) => !rto.is_finite() || sd + base >= 0.9 * rto,
        None => originals_delivered,
    };
    if sd_explains && originals_delivered {
        let sd_txt = sd_ms.map_or("longer than the RTO".to_string(), |sd| {
            format!("{} ms{}", fmt(sd), set::sack_delay_default(peer_linux, sd))
        });
        let rto_txt = if rto.is_finite() {
            fmt(rto)
        } else {
            "?".into()
        };
        return (
            Some("sack_delay_exceeds_rto"),
            Some(format!(
                "the peer's SACK delay ({sd_txt}) exceeds this sender's RTO ({rto_txt} ms): set the I-bit (RFC 7053, SACK-IMMEDIATELY) on DATA when RTO < peer SACK delay, or lower the peer's SACK delay below {rto_txt} ms ({}), or raise RTO.min above RTT + SACK delay ({} ms; {})",
                set::sack_delay(peer_linux),
                sd_ms.map_or("?".to_string(), |sd| fmt(sd + base)),
                set::rto_min(linux)
            )),
        );
    }
    if pmr.is_some_and(|p| p <= 1) || f.timeouts.len() <= 2 {
        return (
            Some("pmr_too_low"),
            Some(format!(
                "{} timeout(s) on a working path were enough to fail over: raise Path.Max.Retrans ({})",
                f.timeouts.len(),
                set::path_max_retrans(linux)
            )),
        );
    }
    (Some("unknown"), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infer::chain::tests::{expiry, failover};
    use crate::infer::events::TimerStart;

    #[test]
    fn an_outage_whose_resent_originals_had_arrived_starts_when_the_old_path_fell_silent() {
        // Linux lab run (bulk, PF on): the last SACK over path 0 came at 3.0535 s, T3-rtx
        // expired at 3.1815 s and resent two chunks that had arrived (only their SACK was lost
        // at the cut), and new DATA moved at 3.2225 s: no original counts as lost.
        let mut dir = DirInfer::default();
        dir.dsts = vec![
            super::super::direction::DstState::new("10.201.1.2".parse().unwrap()),
            super::super::direction::DstState::new("10.201.2.2".parse().unwrap()),
        ];
        let mut f = failover(3.2225, None);
        f.timeouts = Vec::new();
        f.last_heard_ns = Some(3_053_533_000);
        f.last_heard_frame = 5748;
        dir.failovers = vec![f];
        let diagnose = |dir: &mut DirInfer| {
            diagnose_failovers(
                dir,
                Vantage::Sender,
                Some(40.0),
                None,
                None,
                None,
                None,
                true,
            );
            (
                dir.failovers[0].outage_start_ns,
                dir.failovers[0].outage_frame,
            )
        };
        // No expiry of the old path's timer in the silence: no outage start.
        assert_eq!(diagnose(&mut dir.clone()), (None, None));
        dir.timeouts = vec![expiry(3.1815, 128.0, 0, TimerStart::Sack)];
        assert_eq!(
            diagnose(&mut dir.clone()),
            (Some(3_053_533_000), Some(5748))
        );
        // The timer that expired was started by a send 68 ms after that SACK (more than 50 ms
        // and a quarter of the 169 ms since it): nothing went to the old path in between, so
        // the outage began somewhere in that span and no failover time is given.
        dir.timeouts = vec![expiry(3.1815, 60.0, 0, TimerStart::Send)];
        assert_eq!(diagnose(&mut dir), (None, None));
        assert!(!dir.failovers[0].spurious);
        let said = dir.failovers[0].evidence.join("; ");
        assert!(
            said.contains("nothing was sent to 10.201.1.2 for 68 ms"),
            "{said}"
        );
    }

    /// A Linux-like sender (PF, pf_retrans 0): DATA 2 and 3 leave in one packet to path 0, the
    /// peer acknowledges 3 only, the T3-rtx expiry resends 2 to path 1 and new DATA follows it
    /// there. The packet reached the peer (a path loses a packet whole): the peer discarded 2.
    #[test]
    fn a_failover_after_the_peer_discarded_part_of_a_packet_is_spurious_receiver_discard() {
        use crate::infer::direction::tests::{data, sack_gaps as sack};
        use crate::packet::PacketCtx;
        use crate::sctp::SackChunk;
        let (a, b1, b2) = (("10.0.0.1", 1), ("10.0.0.2", 2), ("10.0.0.3", 2));
        let run = |discarded: bool| {
            let mut d = DirInfer::default();
            let send = |d: &mut DirInfer, frame: u64, ms: f64, to, tsns: &[u32]| {
                d.packet_start();
                for &t in tsns {
                    d.data(&PacketCtx::test(frame, ms, a, to), &data(t), None);
                }
            };
            let ack = |d: &mut DirInfer, frame: u64, ms: f64, from, s: &SackChunk<'_>| {
                d.packet_start();
                d.sack(&PacketCtx::test(frame, ms, from, a), s, None, false);
            };
            send(&mut d, 1, 0.0, b1, &[1]);
            ack(&mut d, 2, 20.0, b1, &sack(1, &[]));
            if discarded {
                send(&mut d, 3, 100.0, b1, &[2, 3]);
            } else {
                send(&mut d, 3, 100.0, b1, &[2]);
                send(&mut d, 4, 100.5, b1, &[3]);
            }
            // TSN 3 acknowledged by a gap block (offset 2 from the cumulative ack 1), 2 not.
            ack(&mut d, 5, 120.0, b1, &sack(1, &[0, 2, 0, 2]));
            send(&mut d, 6, 400.0, b2, &[2]);
            ack(&mut d, 7, 420.0, b2, &sack(3, &[]));
            send(&mut d, 8, 430.0, b2, &[4]);
            assert_eq!(d.retransmissions.len(), 1);
            assert_eq!(d.retransmissions[0].peer_discarded.is_some(), discarded);
            assert_eq!(d.failovers.len(), 1);
            diagnose_failovers(
                &mut d,
                Vantage::Sender,
                Some(20.0),
                None,
                None,
                None,
                None,
                true,
            );
            d.failovers.remove(0)
        };
        let f = run(true);
        assert!(f.spurious, "{f:?}");
        assert_eq!(f.cause, Some("receiver_discard"));
        assert!(
            f.evidence[0].contains(
                "TSN 2, first sent in frame 3: other chunks of its packet were acknowledged"
            ),
            "{:?}",
            f.evidence
        );
        // In a packet of its own, TSN 2 may have been lost on the path: no such claim.
        let f = run(false);
        assert_ne!(f.cause, Some("receiver_discard"), "{f:?}");
        assert!(f.evidence.iter().all(|e| !e.contains("discarded")), "{f:?}");
    }
}
