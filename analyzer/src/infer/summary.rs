//! End-of-pass inference for one direction: vantage, SACK delay, RTO.min / RTO.max / RTO.Initial,
//! Path.Max.Retrans, spurious-failover diagnosis with cause and recommendation.

use super::chain::{chain_expiries, failover_policy, policy_evidence, Chain};
use super::direction::DirInfer;
use super::events::{FailoverPolicy, RttKind, TimerStart};
use super::heartbeat::Period;
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

pub fn summarise(inf: &mut AssocInfer, s: usize) -> DirSummary {
    let (vantage, vantage_evidence) = vantage(inf, s);
    let tick_estimator = inf.tick_estimator[s];
    let t3_restart_on_sack = if vantage == Vantage::Sender {
        apply_timer_model(&mut inf.dirs[s], inf.no_t3_restart[s])
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
        // At the receiver a retransmission is only visible when the original arrived too.
        for r in &mut dir.retransmissions {
            r.spurious
                .get_or_insert("original seen arriving at the receiver");
        }
    }
    // The peer's SACK delay: typical (median) and the longest a lone packet waits (p95).
    let sd_ms = sack_delay.map(|d| (d.median, d.p95));
    let hb_gap_min_ms = inf.hb_gap_min_ns.map(|g| g as f64 / 1e6);
    let peer_linux = inf.tick_estimator[1 - s] == Some(true);
    let dir = &mut inf.dirs[s];
    diagnose_failovers(
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

/// Marks spurious failovers with their evidence, cause and recommendation (METRICS.md "Failover").
#[allow(clippy::too_many_arguments)]
fn diagnose_failovers(
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
        let (cause, recommendation) = if spurious {
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
        let _ = vantage;
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
        assert_eq!(diagnose(&mut dir), (Some(3_053_533_000), Some(5748)));
    }
}
