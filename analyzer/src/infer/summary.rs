//! End-of-pass inference for one direction: vantage, SACK delay, RTO.min / RTO.max / RTO.Initial,
//! Path.Max.Retrans and failover policy (each failover's diagnosis is `failover`'s).

use super::chain::policy_evidence;
use super::direction::DirInfer;
use super::events::{FailoverPolicy, TimerStart};
use super::stats::{median, Dist, Samples};
use super::AssocInfer;
use crate::decimal::Fixed;

/// Where the capture was taken, relative to one direction's DATA sender (METRICS.md "Vantage").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vantage {
    Sender,
    Receiver,
    Middle,
    Unknown,
}

impl Vantage {
    pub fn as_str(self) -> &'static str {
        match self {
            Vantage::Sender => "sender",
            Vantage::Receiver => "receiver",
            Vantage::Middle => "middle",
            Vantage::Unknown => "unknown",
        }
    }
}

/// One SACK-delay sample (ms) with where it came from.
#[derive(Debug, Clone, Copy)]
pub struct SackDelaySample {
    pub path: u16,
    pub t_ns: i64,
    pub delay_ms: f64,
    pub frame_data: u64,
    pub frame_sack: u64,
}

/// Everything inferred for one direction at the end of the pass.
#[derive(Debug, Clone)]
pub struct DirSummary {
    pub vantage: Vantage,
    pub vantage_evidence: String,
    pub base_rtt_ms: Option<f64>,
    pub sack_delay_samples: Vec<SackDelaySample>,
    pub sack_delay: Option<Dist>,
    pub sack_every: Option<f64>,
    pub delayed_sack_share: Option<f64>,
    pub sacks_per_data_packet: Option<f64>,
    pub ibit_share: f64,
    /// Whether the stack restarts T3-rtx on SACKs (RFC 9260 6.3.2 R3); None without evidence.
    pub t3_restart_on_sack: Option<bool>,
    pub rto_min_ms: Option<f64>,
    pub rto_min_evidence: u32,
    pub rto_max_ms: Option<f64>,
    pub rto_max_evidence: u32,
    pub rto_initial_ms: Option<f64>,
    pub rto_initial_evidence: u32,
    pub path_max_retrans: Option<u32>,
    pub pmr_evidence: u32,
    /// "rfc" (RFC 9260 8.2) or "pf" (RFC 7829) when the failovers show it.
    pub failover_policy: Option<&'static str>,
    pub pf_retrans: Option<u32>,
    pub policy_evidence: Option<String>,
    pub transfer_ms: Option<Dist>,
    pub message_interval_ms: Option<f64>,
    pub burstiness: Option<&'static str>,
    pub max_gap_ms: Option<f64>,
    pub deadline_missed: Option<u64>,
}

/// Vantage from request/response latencies: requests of the endpoint that holds the capture
/// take a full round trip, the peer's requests are answered at once (METRICS.md "Vantage").
fn vantage(inf: &AssocInfer, s: usize) -> (Vantage, String) {
    let (a, b) = (inf.resp_min_ns[s], inf.resp_min_ns[1 - s]);
    let ms = |x: i64| x as f64 / 1e6;
    match (a, b) {
        (Some(a), Some(b)) => {
            let ev = format!(
                "fastest answer to the DATA sender's requests {} ms, to the peer's {} ms",
                Fixed(ms(a), 3),
                Fixed(ms(b), 3)
            );
            let v = if b.saturating_mul(5) < a && a.saturating_sub(b) > 200_000 {
                Vantage::Sender
            } else if a.saturating_mul(5) < b && b.saturating_sub(a) > 200_000 {
                Vantage::Receiver
            } else if a > 200_000 && b > 200_000 {
                Vantage::Middle
            } else {
                Vantage::Unknown
            };
            (v, ev)
        }
        _ => (
            Vantage::Unknown,
            "no answered requests in both directions (HEARTBEAT, INIT, COOKIE-ECHO, DATA)"
                .to_string(),
        ),
    }
}

/// Whether the sender restarts T3-rtx when a SACK advances the cumulative ack (RFC 9260 6.3.2
/// R3): Some(false) with evidence against it, None otherwise. FreeBSD / usrsctp do not: their expiries then come sooner after the last SACK than any
/// RTO the stack can hold (RTO >= SRTT + 4 RTTVAR, fired at most one 10 ms tick early). For such
/// a stack the timer start of each expiry is the send from idle (or the previous expiry) instead;
/// where that start is not in the trace either (the timer ran through silent expiries under
/// continuous traffic) the observed RTO is reported as missing.
fn apply_timer_model(dir: &mut DirInfer, stack_no_restart: bool) -> Option<bool> {
    let too_early = |t: &super::events::Timeout| match (t.observed_rto_ns, t.est_rto_ms) {
        (Some(o), Some(e)) => {
            t.timer_start == TimerStart::Sack && (o as f64 / 1e6) < e - (0.2 * e).max(10.0)
        }
        _ => false,
    };
    let sack_started = dir
        .timeouts
        .iter()
        .any(|t| t.timer_start == TimerStart::Sack);
    if !sack_started {
        return None;
    }
    // The evidence, or the stack: an endpoint identified as usrsctp (FreeBSD's stack) was seen
    // on every lab run not to restart T3-rtx on a SACK that advances the cumulative ack (README
    // "Timer inference"), so a SACK-started expiry of it says nothing of its RTO.
    if !stack_no_restart && !dir.timeouts.iter().any(too_early) {
        return None;
    }
    for t in dir
        .timeouts
        .iter_mut()
        .filter(|t| t.timer_start == TimerStart::Sack)
    {
        let plausible_cap = t
            .est_rto_ms
            .map(|e| 2.5 * e.max(1.0) * 2f64.powi(t.backoff as i32));
        match t.observed_rto_nr_ns {
            Some(o)
                if matches!(t.timer_start_nr, TimerStart::Send | TimerStart::Expiry)
                    && plausible_cap.is_none_or(|c| (o as f64 / 1e6) <= c) =>
            {
                t.observed_rto_ns = Some(o);
                t.timer_start = t.timer_start_nr;
                t.timer_start_ns = Some(t.t_ns - o);
            }
            _ => {
                t.observed_rto_ns = None;
                t.timer_start = TimerStart::Unknown;
                t.timer_start_ns = None;
            }
        }
    }
    Some(false)
}

/// Drops the observed RTO of an expiry whose timer evidently started later than the start the
/// capture showed (a SACK processed late by the sender, or seen before it got there): with no
/// RTT sample in between each expiry doubles the RTO (RFC 9260 6.3.3 E2), so when the next two
/// expiries of the destination ran from their retransmissions and doubled, the next one's RTO is
/// twice this one's. An observed RTO more than the timer's lateness above half of it is not this
/// timer's: its start is unknown (Linux lab run `ho7_pf0_pmr6_hb500`: 218 ms from the last SACK,
/// then 300 and 610 ms, the kernel's RTO 150 ms). A later expiry capped by RTO.max would only
/// read lower: the doubling of the two is what rules the cap out.
fn drop_late_starts(dir: &mut DirInfer) {
    // Timer lateness: up to the Linux timer wheel's granularity (twice its mean), and 5% for
    // the capture's timing.
    let slack = |ms: f64| 2.0 * super::heartbeat::wheel_late_ms(ms) + 0.05 * ms;
    let from_rtx = |k: TimerStart| matches!(k, TimerStart::Send | TimerStart::Expiry);
    let n = dir.timeouts.len();
    for i in 0..n {
        let t = &dir.timeouts[i];
        let Some(o0) = t.observed_rto_ns.map(|o| o as f64 / 1e6) else {
            continue;
        };
        let mut next = dir.timeouts[i + 1..].iter().filter(|u| u.path == t.path);
        let (Some(t1), Some(t2)) = (next.next(), next.next()) else {
            continue;
        };
        let chained = t1.backoff == t.backoff + 1
            && t2.backoff == t.backoff + 2
            && from_rtx(t1.timer_start)
            && from_rtx(t2.timer_start);
        let (Some(o1), Some(o2)) = (t1.observed_rto_ns, t2.observed_rto_ns) else {
            continue;
        };
        let (o1, o2) = (o1 as f64 / 1e6, o2 as f64 / 1e6);
        if !chained || (o2 - 2.0 * o1).abs() > slack(o2) {
            continue;
        }
        if o0 > o1 / 2.0 + slack(o1 / 2.0) {
            let t = &mut dir.timeouts[i];
            t.observed_rto_ns = None;
            t.timer_start = TimerStart::Unknown;
            t.timer_start_ns = None;
        }
    }
}

pub fn summarise(inf: &mut AssocInfer, s: usize) -> DirSummary {
    let (vantage, vantage_evidence) = vantage(inf, s);
    let tick_estimator = inf.tick_estimator[s];
    let t3_restart_on_sack = if vantage == Vantage::Sender {
        let model = apply_timer_model(&mut inf.dirs[s], inf.no_t3_restart[s]);
        drop_late_starts(&mut inf.dirs[s]);
        model
    } else {
        None
    };
    if vantage != Vantage::Sender {
        // The timer that expired runs at the sender: elsewhere its start is not seen.
        for t in &mut inf.dirs[s].timeouts {
            t.observed_rto_ns = None;
            t.est_rto_ms = None;
            t.timer_start = TimerStart::Unknown;
        }
    }
    let dir = &inf.dirs[s];
    let base_all = dir
        .dsts
        .iter()
        .filter_map(|d| d.base_rtt_ms())
        .reduce(f64::min);

    // SACK delay (METRICS.md): receiver vantage directly; sender vantage minus the base RTT.
    let mut sack_delay_samples = Vec::new();
    for l in &dir.lone_acks {
        let lat = l.latency_ns as f64 / 1e6;
        let d = match vantage {
            Vantage::Receiver => Some(lat),
            Vantage::Sender => dir.dsts[l.path as usize]
                .base_rtt_ms()
                .or(base_all)
                .map(|b| (lat - b).max(0.0)),
            _ => None,
        };
        if let Some(delay_ms) = d {
            sack_delay_samples.push(SackDelaySample {
                path: l.path,
                t_ns: l.t_ns,
                delay_ms,
                frame_data: l.frame_data,
                frame_sack: l.frame_sack,
            });
        }
    }
    let mut sd = Samples::default();
    for x in &sack_delay_samples {
        sd.push(x.delay_ms);
    }
    let sack_delay = sd.dist();
    let base_rtt_ms = if vantage == Vantage::Sender {
        base_all
    } else {
        None
    };
    let delayed_threshold = 2.0f64.max(0.25 * base_rtt_ms.unwrap_or(0.0));
    let advancing: u64 = dir.acked_pkts_hist.iter().sum();
    let delayed = sack_delay_samples
        .iter()
        .filter(|x| x.delay_ms > delayed_threshold)
        .count() as u64;
    let delayed_sack_share =
        (advancing > 0 && vantage != Vantage::Unknown && vantage != Vantage::Middle)
            .then(|| delayed as f64 / advancing as f64);
    let multi: u64 = dir.acked_pkts_hist[2..].iter().sum();
    let sack_every = (multi > 0).then(|| {
        let w: u64 = dir.acked_pkts_hist[2..]
            .iter()
            .enumerate()
            .map(|(i, n)| (i as u64 + 2) * n)
            .sum();
        w as f64 / multi as f64
    });
    let sacks_per_data_packet =
        (dir.data_packets > 0).then(|| dir.sacks as f64 / dir.data_packets as f64);
    let ibit_share = if dir.data_chunks > 0 {
        dir.ibit_chunks as f64 / dir.data_chunks as f64
    } else {
        0.0
    };

    // RTO.min: first timeouts (timer started by a send from idle) that stay above the RFC
    // estimate show the floor (RFC 9260 6.3.1 C6).
    let floor: Vec<f64> = dir
        .timeouts
        .iter()
        .filter(|t| {
            t.backoff == 0 && matches!(t.timer_start, TimerStart::Send | TimerStart::Expiry)
        })
        .filter_map(|t| {
            let obs = t.observed_rto_ns? as f64 / 1e6;
            let est = t.est_rto_ms?;
            // A stack that keeps the estimator in 10 ms ticks (Linux at HZ 100) holds an RTO
            // far above the exact estimate at small RTTs (120 ms at 40 ms): an expiry there
            // is explained by its estimator, not by a floor. Applied unless the stack was shown
            // to run its timers otherwise (no T3-rtx restart on SACKs: FreeBSD / usrsctp).
            let coarse = if t3_restart_on_sack == Some(false) || tick_estimator == Some(false) {
                0.0
            } else {
                t.est_rto_coarse_ms.unwrap_or(0.0)
            };
            (est.max(coarse) < 0.7 * obs).then_some(obs)
        })
        .collect();
    // The floor is the lowest cluster: expiries fire at most a tick early, while a hidden
    // (silent) earlier expiry or a backoff only makes an observed RTO longer.
    let lowest = floor.iter().copied().fold(f64::INFINITY, f64::min);
    let floor: Vec<f64> = floor
        .into_iter()
        .filter(|&v| v <= 1.3 * lowest + 5.0)
        .collect();
    // No expiry whose start the trace shows can come sooner than RTO.min (less one timer tick):
    // one that does means the cluster is inflated (e.g. by silent expiries) and no claim is made.
    let candidate = median(&floor).filter(|_| vantage == Vantage::Sender && floor.len() >= 2);
    let contradicted = candidate.is_some_and(|m| {
        dir.timeouts
            .iter()
            .filter(|t| matches!(t.timer_start, TimerStart::Send | TimerStart::Expiry))
            .filter_map(|t| t.observed_rto_ns)
            .any(|o| (o as f64 / 1e6) < m - (0.2 * m).max(10.0))
    });
    let rto_min_ms = candidate.filter(|_| !contradicted);
    let rto_min_evidence = if rto_min_ms.is_some() {
        floor.len() as u32
    } else {
        0
    };

    // RTO.max: consecutive expiries on one path whose interval stops doubling (RFC 9260 6.3.3 E2).
    let mut plateau = Vec::new();
    for w in dir.timeouts.windows(2) {
        let (p, q) = (&w[0], &w[1]);
        if p.path == q.path
            && q.backoff == p.backoff + 1
            && q.timer_start == TimerStart::Expiry
            && p.backoff >= 1
        {
            if let (Some(a), Some(b)) = (p.observed_rto_ns, q.observed_rto_ns) {
                let r = b as f64 / a as f64;
                if r < 1.3 && b > 1_000_000_000 {
                    plateau.push(b as f64 / 1e6);
                }
            }
        }
    }
    let rto_max_ms = if vantage == Vantage::Sender {
        median(&plateau)
    } else {
        None
    };
    let rto_max_evidence = if rto_max_ms.is_some() {
        plateau.len() as u32
    } else {
        0
    };

    let init_samples: Vec<f64> = inf
        .rto_initial_samples
        .iter()
        .map(|&n| n as f64 / 1e6)
        .collect();
    let rto_initial_ms = if vantage == Vantage::Sender {
        median(&init_samples)
    } else {
        None
    };
    let rto_initial_evidence = if rto_initial_ms.is_some() {
        init_samples.len() as u32
    } else {
        0
    };

    let dir = &mut inf.dirs[s];
    if vantage == Vantage::Receiver {
        drop_outrun_failovers(dir);
        // At the receiver a retransmission is only visible when the original arrived too; one
        // whose earlier copy the receiver discarded (another chunk of its packet acknowledged,
        // or TSNs that arrived after it taken and not it: a receiver handles its arrivals in
        // order) was needed all the same.
        for r in &mut dir.retransmissions {
            // A copy the receiver reported as a duplicate had been taken before.
            if r.orig_passed_over && r.spurious.is_none() {
                r.peer_discarded
                    .get_or_insert(super::events::LATER_ARRIVALS_ACKED);
            }
            if r.peer_discarded.is_none() {
                r.spurious
                    .get_or_insert("original seen arriving at the receiver");
            }
        }
    }
    // The peer's SACK delay: typical (median) and the longest a lone packet waits (p95).
    let sd_ms = sack_delay.map(|d| (d.median, d.p95));
    let hb_gap_min_ms = inf.hb_gap_min_ns.map(|g| g as f64 / 1e6);
    let peer_linux = inf.tick_estimator[1 - s] == Some(true);
    let dir = &mut inf.dirs[s];
    super::failover::diagnose_failovers(
        dir,
        vantage,
        base_rtt_ms,
        sd_ms,
        rto_min_ms,
        hb_gap_min_ms,
        tick_estimator,
        peer_linux,
    );
    let claims: Vec<u32> = dir
        .failovers
        .iter()
        .filter(|f| !f.spurious)
        .filter_map(|f| f.pmr)
        .collect();
    let path_max_retrans = claims
        .first()
        .copied()
        .filter(|p| claims.iter().all(|q| q == p));
    // One policy for the direction when its failovers agree (pf_retrans from the PF ones).
    let policies: Vec<FailoverPolicy> = dir.failovers.iter().filter_map(|f| f.policy).collect();
    let failover_policy = policies
        .first()
        .copied()
        .filter(|p| policies.iter().all(|q| q.as_str() == p.as_str()));
    let pf_retrans = match failover_policy {
        Some(FailoverPolicy::Pf { .. }) => {
            let v: Vec<u32> = policies
                .iter()
                .filter_map(|p| match p {
                    FailoverPolicy::Pf { pf_retrans } => Some(*pf_retrans),
                    _ => None,
                })
                .collect();
            v.first().copied().filter(|x| v.iter().all(|y| y == x))
        }
        _ => None,
    };
    let hb_struck = dir
        .failovers
        .iter()
        .any(|f| f.policy.is_some() && f.hb_strikes > 0);
    let policy_evidence = failover_policy.map(|p| policy_evidence(p, policies.len(), hb_struck));
    let pmr_evidence = if path_max_retrans.is_some() {
        claims.len() as u32
    } else {
        0
    };

    let transfer_ms = if vantage == Vantage::Sender || vantage == Vantage::Receiver {
        dir.transfer_ms.dist()
    } else {
        None
    };
    let message_interval_ms = dir.message_starts.mean();
    let n_msgs = dir.message_starts.len();
    let burstiness = (n_msgs > 0).then_some(if dir.burst_starts as f64 > 0.5 * n_msgs as f64 {
        "bursts"
    } else {
        "single"
    });
    let max_gap_ms = match vantage {
        Vantage::Receiver => dir.message_starts.max(),
        Vantage::Sender => (dir.max_gap_ns > 0).then(|| dir.max_gap_ns as f64 / 1e6),
        _ => None,
    };
    DirSummary {
        vantage,
        vantage_evidence,
        base_rtt_ms,
        sack_delay_samples,
        sack_delay,
        sack_every,
        delayed_sack_share,
        sacks_per_data_packet,
        ibit_share,
        t3_restart_on_sack,
        rto_min_ms,
        rto_min_evidence,
        rto_max_ms,
        rto_max_evidence,
        rto_initial_ms,
        rto_initial_evidence,
        path_max_retrans,
        pmr_evidence,
        failover_policy: failover_policy.map(FailoverPolicy::as_str),
        pf_retrans,
        policy_evidence,
        transfer_ms,
        message_interval_ms,
        burstiness,
        max_gap_ms,
        deadline_missed: inf.deadline_ns.map(|_| inf.dirs[s].deadline_missed),
    }
}

/// At the receiver vantage a retransmission sent to another destination arrives before its
/// original when the old path is slow (an RTT spike): its first sight reads as new DATA moved,
/// and the delayed original's arrival on the old path, then new DATA there, as a failback. A
/// failover whose first DATA was seen again on the old path (`Failover::outrun_ns`) is no
/// failover of the sender: it goes, with the failback that ended it (RFC 9260 6.4: a
/// retransmission may go to another active destination; the sender's new DATA never moved).
fn drop_outrun_failovers(dir: &mut super::direction::DirInfer) {
    let mut i = 0;
    while i < dir.failovers.len() {
        let f = &dir.failovers[i];
        if f.outrun_ns.is_none() {
            i += 1;
            continue;
        }
        let (t, from) = (f.t_ns, f.from);
        let next_t = dir.failovers.get(i + 1).map_or(i64::MAX, |n| n.t_ns);
        if let Some(b) = dir
            .failbacks
            .iter()
            .position(|b| b.t_ns >= t && b.t_ns <= next_t && b.to == from)
        {
            dir.failbacks.remove(b);
        }
        dir.failovers.remove(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infer::events::Timeout;

    fn expiry(t_ms: i64, observed_ms: f64, start: TimerStart, backoff: u32) -> Timeout {
        let ns = (observed_ms * 1e6) as i64;
        Timeout {
            t_ns: t_ms * 1_000_000,
            frame: 1,
            path: 0,
            to_path: 1,
            timer_start: start,
            timer_start_ns: Some(t_ms * 1_000_000 - ns),
            observed_rto_ns: Some(ns),
            observed_rto_nr_ns: None,
            timer_start_nr: TimerStart::Unknown,
            backoff,
            chunks: 1,
            est_rto_ms: None,
            est_rto_coarse_ms: None,
            est_rto_coarse_low_ms: None,
            first_tsn: 1,
        }
    }

    fn dir_of(timeouts: Vec<Timeout>) -> DirInfer {
        let mut dir = DirInfer::default();
        dir.timeouts = timeouts;
        dir
    }

    fn observed(dir: &DirInfer) -> Vec<Option<i64>> {
        dir.timeouts
            .iter()
            .map(|t| t.observed_rto_ns.map(|o| o / 1_000_000))
            .collect()
    }

    #[test]
    fn a_first_expiry_longer_than_half_the_doubled_next_has_no_known_start() {
        // Lab run ho7_pf0_pmr6_hb500 (Linux, kernel RTO 150 ms): 218.5 ms from the last SACK
        // the capture showed, then 300.2 and 610.0 ms from the retransmissions.
        let mut dir = dir_of(vec![
            expiry(4185, 218.5, TimerStart::Sack, 0),
            expiry(4505, 300.2, TimerStart::Send, 1),
            expiry(5115, 610.0, TimerStart::Send, 2),
        ]);
        drop_late_starts(&mut dir);
        assert_eq!(observed(&dir), [None, Some(300), Some(610)]);
        assert_eq!(dir.timeouts[0].timer_start, TimerStart::Unknown);
        // Within the timer's lateness of half the next (150 + 10 ms tick + 5%): kept.
        let mut dir = dir_of(vec![
            expiry(4185, 165.0, TimerStart::Sack, 0),
            expiry(4505, 300.2, TimerStart::Send, 1),
            expiry(5115, 610.0, TimerStart::Send, 2),
        ]);
        drop_late_starts(&mut dir);
        assert_eq!(observed(&dir), [Some(165), Some(300), Some(610)]);
        // The next two capped by RTO.max (no doubling): nothing to compare with, kept.
        let mut dir = dir_of(vec![
            expiry(4185, 218.5, TimerStart::Sack, 0),
            expiry(4505, 300.2, TimerStart::Send, 1),
            expiry(4805, 300.0, TimerStart::Send, 2),
        ]);
        drop_late_starts(&mut dir);
        assert_eq!(observed(&dir), [Some(218), Some(300), Some(300)]);
        // An RTT sample in between (backoff back to 0): not one chain, kept.
        let mut dir = dir_of(vec![
            expiry(4185, 218.5, TimerStart::Sack, 0),
            expiry(4505, 300.2, TimerStart::Send, 0),
            expiry(5115, 610.0, TimerStart::Send, 1),
        ]);
        drop_late_starts(&mut dir);
        assert_eq!(observed(&dir)[0], Some(218));
    }
}
