//! End-of-pass inference for one direction: vantage, SACK delay, RTO.min / RTO.max / RTO.Initial,
//! Path.Max.Retrans, spurious-failover diagnosis with cause and recommendation.

use super::direction::DirInfer;
use super::events::{FailoverPolicy, RttKind, TimerStart};
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
    let policy_evidence = failover_policy.map(|p| policy_evidence(p, policies.len()));
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

/// The expiries on the old path since the outage that a failover's chain is made of.
fn chain_timeouts<'d>(
    dir: &'d DirInfer,
    f: &super::events::Failover,
    tick_estimator: Option<bool>,
) -> Vec<&'d super::events::Timeout> {
    // A Linux kernel clears the error count on the acknowledgement of a chunk last sent to the
    // destination, retransmitted or not (RFC 9260 8.2): its chain starts after that.
    let reset = f.chain_reset_ns.filter(|_| tick_estimator == Some(true));
    f.timeouts
        .iter()
        .filter_map(|&i| dir.timeouts.get(i as usize))
        .filter(|t| reset.is_none_or(|r| t.t_ns > r))
        .collect()
}

/// The consecutive expiries on the old path that led to a failover (RFC 9260 8.2: inactive after
/// PMR + 1 of them; RFC 7829: potentially failed after pf_retrans + 1), counted only when the
/// chain is complete: its first expiry ran from a send or a SACK (a stack that restarts T3-rtx on
/// SACKs, RFC 9260 6.3.2 R3) with no hidden earlier expiry (observed RTO near what the estimate,
/// its backoff rank and the known RTO.min allow), and each later one doubles the RTO (a
/// quadrupling means one expiry retransmitted nothing: counted). Returns (expiries, last RTO ms).
fn chain_expiries(
    dir: &DirInfer,
    f: &super::events::Failover,
    rto_min_ms: Option<f64>,
    tick_estimator: Option<bool>,
) -> Option<(u32, f64, f64)> {
    let ts = chain_timeouts(dir, f, tick_estimator);
    let first = ts.first()?;
    if !matches!(first.timer_start, TimerStart::Send | TimerStart::Sack) {
        return None;
    }
    let r0 = first.observed_rto_ns? as f64 / 1e6;
    if first.timer_start == TimerStart::Sack && tick_estimator == Some(false) {
        return None;
    }
    // RFC 9260 8.3: a HEARTBEAT not acknowledged within an RTO counts against the destination
    // like an expiry (Linux strikes when its heartbeat timer fires again while it is
    // unanswered: at the next HEARTBEAT). A strike on the old destination between the chain's
    // start and the failover means the expiries alone no longer tell Path.Max.Retrans + 1. A
    // strike that made the destination inactive moves the DATA in the same timer event, and
    // the HEARTBEAT of that event may leave just after it (`SAME_EVENT_NS`).
    let chain_start = first.timer_start_ns.unwrap_or(first.t_ns);
    let strike = if tick_estimator == Some(true) {
        f.hb_again_ns
    } else {
        f.hb_unanswered_ns
            .map(|h| h + first.observed_rto_ns.unwrap_or(0))
    };
    if strike.is_some_and(|h| h >= chain_start && h <= f.t_ns + SAME_EVENT_NS) {
        return None;
    }
    // The RTO the stack may have held: the exact RFC 9260 6.3.1 estimate, or the one a stack
    // keeping it in 10 ms ticks holds, at least RTO.min; doubled per earlier expiry (6.3.3 E2).
    let est = match (first.est_rto_ms, first.est_rto_coarse_ms) {
        (Some(e), Some(c)) => Some(e.max(c)),
        (e, c) => e.or(c),
    };
    let expected = match (est, rto_min_ms) {
        (Some(e), Some(m)) => e.max(m),
        (Some(e), None) => e,
        (None, Some(m)) => m,
        (None, None) => return None,
    } * 2f64.powi(first.backoff.min(16) as i32);
    // RFC 9260 15 (RTO.min 1 s, the Linux default too) explains a first expiry near 1 s.
    let default_floor = DEFAULT_RTO_MIN_MS * 2f64.powi(first.backoff.min(16) as i32);
    let at_default_floor = r0 >= default_floor && r0 <= 1.5 * default_floor;
    // A hidden earlier expiry is one whose retransmission the capture did not show. A Linux
    // kernel restarts T3-rtx on SACKs (so the start is in the trace) and sends each expiry's
    // retransmission (RFC 9260 6.3.3 E3) to an alternate destination when it has one (6.4.1):
    // when every expiry of the chain was seen retransmitting to another destination than the
    // failing one, the capture holds that destination too and an earlier expiry would show.
    // Then a first expiry above the estimate was bounded by an RTO.min the capture cannot tell.
    let none_hidden = tick_estimator == Some(true)
        && first.backoff == 0
        && ts.iter().all(|t| t.to_path != t.path);
    if r0 > 1.5 * expected.max(1.0) && !at_default_floor && !none_hidden {
        return None;
    }
    // A timer restarted by a SACK runs a whole RTO from it and fires late, never early: a
    // first expiry sooner after the SACK than the stack's RTO can be (the larger of the exact
    // estimate and the lowest a tick estimator can hold, less a tenth) was started earlier (a
    // stack that does not restart T3-rtx on SACKs, RFC 9260 6.3.2 R3 not followed): its start
    // is not in the trace.
    if first.timer_start == TimerStart::Sack {
        let floor = match (first.est_rto_ms, first.est_rto_coarse_low_ms) {
            (Some(e), Some(c)) => e.max(c),
            (e, c) => e.or(c)?,
        } * 2f64.powi(first.backoff.min(16) as i32);
        if r0 < 0.9 * floor {
            return None;
        }
    }
    let mut count = 1u32;
    let mut prev = r0;
    let mut sum = r0;
    for t in &ts[1..] {
        let r = t.observed_rto_ns? as f64 / 1e6;
        let ratio = r / prev;
        if (1.5..=2.6).contains(&ratio) {
            count += 1;
        } else if (3.2..=5.2).contains(&ratio) {
            count += 2;
        } else {
            return None;
        }
        prev = r;
        sum += r;
    }
    let last = ts.last()?;
    // The failover must follow the last expiry before another one could have come.
    if (f.t_ns - last.t_ns) as f64 / 1e6 > 2.0 * prev {
        return None;
    }
    Some((count, prev, sum))
}

/// Which rule moved the new DATA (METRICS.md "Failover policy"), from a complete expiry chain of
/// `n` expiries ending at RTO `last_rto` ms:
/// * after one expiry only a potentially-failed rule does it: RFC 7829 with pf_retrans 0 (an
///   RFC 9260 8.2 failover would need Path.Max.Retrans 0);
/// * after more, the old destination's next HEARTBEAT tells: a PF sender probes it one doubled
///   RTO later, with jitter (RFC 7829 4, RFC 9260 8.3: 0.5 to 1.5 RTO), an inactive one is
///   probed a heartbeat interval + RTO later (8.3). A probe sooner than half the shortest
///   heartbeat spacing seen before is PF; none, or one no sooner than 3/4 of that spacing (or
///   later than any PF probe can come) is RFC 9260 8.2 with PMR = n - 1; otherwise no claim.
fn failover_policy(
    f: &super::events::Failover,
    chain: Option<(u32, f64, f64)>,
    hb_gap_min_ms: Option<f64>,
) -> Option<FailoverPolicy> {
    let (n, last_rto, _) = chain?;
    if n == 1 {
        return Some(FailoverPolicy::Pf { pf_retrans: 0 });
    }
    let Some(probe) = f.probe_ns.map(|p| (p - f.t_ns) as f64 / 1e6) else {
        return Some(FailoverPolicy::Rfc {
            path_max_retrans: n - 1,
        });
    };
    let pf_latest = PF_PROBE_LATE * 2.0 * last_rto;
    let rfc = FailoverPolicy::Rfc {
        path_max_retrans: n - 1,
    };
    // The next probe, the first unanswered: a potentially failed destination is probed again
    // 0.5 to 1.5 of its RTO later (doubled by the last expiry, RFC 9260 6.3.3 E2), an inactive
    // one a heartbeat interval later on top (RFC 9260 8.3; Linux `sctp_transport_timeout`). A
    // second probe sooner than the earliest an inactive one can come (the heartbeat interval at
    // least half the shortest heartbeat spacing seen) is PF.
    let again = f
        .probe2_ns
        .map(|p| (p - f.probe_ns.unwrap_or(p)) as f64 / 1e6);
    match (hb_gap_min_ms, again) {
        (Some(h), _) if probe < 0.5 * h && probe <= pf_latest => {
            Some(FailoverPolicy::Pf { pf_retrans: n - 1 })
        }
        (Some(h), Some(a)) if a < 0.5 * h + last_rto && a <= pf_latest => {
            Some(FailoverPolicy::Pf { pf_retrans: n - 1 })
        }
        (Some(h), _) if probe >= 0.75 * h => Some(rfc),
        _ if probe > pf_latest => Some(rfc),
        _ => None,
    }
}

/// Packets a stack sends in one timer event leave within this of each other.
const SAME_EVENT_NS: i64 = 1_000_000;

/// RFC 9260 15: the recommended RTO.min.
const DEFAULT_RTO_MIN_MS: f64 = 1000.0;

/// The latest a PF probe comes, in doubled RTOs after the failover: 1.5 (RFC 9260 8.3 jitter)
/// and timer lateness.
const PF_PROBE_LATE: f64 = 1.6;

/// The policy's evidence in words.
fn policy_evidence(p: FailoverPolicy, failovers: usize) -> String {
    match p {
        FailoverPolicy::Pf { pf_retrans } => format!(
            "new DATA moved after {} T3-rtx expir{} on the old path, before Path.Max.Retrans + 1 could be reached, and the old path was probed with HEARTBEATs (RFC 7829 potentially failed, pf_retrans {pf_retrans}); {failovers} failover(s)",
            pf_retrans + 1,
            if pf_retrans == 0 { "y" } else { "ies" }
        ),
        FailoverPolicy::Rfc { path_max_retrans } => format!(
            "new DATA moved after {} consecutive T3-rtx expiries on the old path, which was then not probed again within a doubled RTO (RFC 9260 8.2 inactive at Path.Max.Retrans {path_max_retrans} + 1); {failovers} failover(s)",
            path_max_retrans + 1
        ),
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
        let policy = failover_policy(&f, chain, hb_gap_min_ms);
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
    (chain, policy): (Option<(u32, f64, f64)>, Option<FailoverPolicy>),
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
        Some(FailoverPolicy::Pf { pf_retrans }) => evidence.push(format!(
            "new DATA moved after {} expir{}: the path was potentially failed (RFC 7829, pf_retrans {pf_retrans}), not yet inactive",
            pf_retrans + 1,
            if pf_retrans == 0 { "y" } else { "ies" }
        )),
        Some(FailoverPolicy::Rfc { path_max_retrans }) => evidence.push(format!(
            "Path.Max.Retrans {path_max_retrans} + 1 expiries made the path inactive (RFC 9260 8.2)"
        )),
        None => {}
    }
    let linux = tick_estimator == Some(true);
    // What-if figures (`whatif`): only from a complete chain.
    let recommendation = chain.and_then(|(n, _, sum)| {
        super::whatif::recommendation(
            dir,
            f,
            (n, sum),
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
    use crate::infer::events::{Failover, Timeout};

    fn failover(t_s: f64, probe_s: Option<f64>) -> Failover {
        let ns = |s: f64| (s * 1e9) as i64;
        Failover {
            t_ns: ns(t_s),
            frame: 1,
            from: 0,
            to: 1,
            outage_start_ns: None,
            outage_frame: None,
            gap_end_ns: i64::MIN,
            last_heard_ns: None,
            last_heard_frame: 0,
            timeouts: vec![0, 1, 2],
            episode_rtx: Vec::new(),
            spurious: false,
            evidence: Vec::new(),
            cause: None,
            recommendation: None,
            pmr: None,
            probe_ns: probe_s.map(ns),
            probe2_ns: None,
            hb_unanswered_ns: None,
            hb_again_ns: None,
            policy: None,
            chain_reset_ns: None,
        }
    }

    #[test]
    fn one_expiry_is_pf_and_more_read_the_probe_of_the_old_path() {
        // RFC 7829: new DATA moved at the first expiry.
        assert_eq!(
            failover_policy(&failover(5.0, None), Some((1, 120.0, 120.0)), Some(1120.0)),
            Some(FailoverPolicy::Pf { pf_retrans: 0 })
        );
        // Three expiries, the old path next probed 1.3 s later while heartbeats came 1.12 s
        // apart: an inactive destination (RFC 9260 8.2), PMR 2 (lab run lk_pf0).
        let rfc = Some(FailoverPolicy::Rfc {
            path_max_retrans: 2,
        });
        assert_eq!(
            failover_policy(
                &failover(5.0, Some(6.31)),
                Some((3, 484.0, 844.0)),
                Some(1120.0)
            ),
            rfc
        );
        // No probe at all: RFC too.
        assert_eq!(
            failover_policy(&failover(5.0, None), Some((3, 484.0, 844.0)), Some(1120.0)),
            rfc
        );
        // Probed one doubled RTO later, far sooner than any heartbeat interval: PF, pf_retrans 2.
        assert_eq!(
            failover_policy(
                &failover(5.0, Some(5.9)),
                Some((3, 484.0, 844.0)),
                Some(5000.0)
            ),
            Some(FailoverPolicy::Pf { pf_retrans: 2 })
        );
        // Between the two, or without a heartbeat interval to compare: no claim.
        assert_eq!(
            failover_policy(
                &failover(5.0, Some(5.7)),
                Some((3, 484.0, 844.0)),
                Some(1120.0)
            ),
            None
        );
        assert_eq!(
            failover_policy(&failover(5.0, Some(5.9)), Some((3, 484.0, 844.0)), None),
            None
        );
        // Probed later than a PF probe can come: RFC.
        assert_eq!(
            failover_policy(&failover(5.0, Some(7.0)), Some((3, 484.0, 844.0)), None),
            rfc
        );
        // The first probe as an inactive destination's would come, but the next one followed
        // it 1.28 s later, sooner than a 1.2 s-spaced heartbeat interval plus half the doubled
        // 870 ms RTO allow: PF, pf_retrans 2 (Linux lab run with pf_retrans 2, PMR 5).
        let mut pf = failover(5.472, Some(6.432));
        pf.probe2_ns = Some(7_712_000_000);
        assert_eq!(
            failover_policy(&pf, Some((3, 870.0, 1480.0)), Some(1200.0)),
            Some(FailoverPolicy::Pf { pf_retrans: 2 })
        );
        // An inactive destination's next probe, 1.94 s on (lab run lk_failback_pf0, PMR 2).
        let mut inactive = failover(6.251, Some(7.431));
        inactive.probe2_ns = Some(9_371_000_000);
        assert_eq!(
            failover_policy(&inactive, Some((3, 740.0, 1270.0)), Some(1200.0)),
            rfc
        );
        // An incomplete chain tells nothing.
        assert_eq!(failover_policy(&failover(5.0, None), None, None), None);
    }

    /// A Linux sender's expiry on path 0 at `t_s`, `rto_ms` after its timer started, the
    /// retransmission sent to path 1.
    fn expiry(t_s: f64, rto_ms: f64, backoff: u32, start: TimerStart) -> Timeout {
        let t_ns = (t_s * 1e9) as i64;
        let rto_ns = (rto_ms * 1e6) as i64;
        Timeout {
            t_ns,
            frame: 1,
            path: 0,
            to_path: 1,
            timer_start: start,
            timer_start_ns: Some(t_ns - rto_ns),
            observed_rto_ns: Some(rto_ns),
            observed_rto_nr_ns: None,
            timer_start_nr: TimerStart::Unknown,
            backoff,
            chunks: 1,
            est_rto_ms: Some(45.0),
            est_rto_coarse_ms: Some(130.0),
            est_rto_coarse_low_ms: Some(120.0),
            first_tsn: 1,
        }
    }

    #[test]
    fn a_heartbeat_strike_within_the_chain_leaves_path_max_retrans_untold() {
        let mut dir = DirInfer::default();
        dir.timeouts = vec![
            expiry(4.10, 125.0, 0, TimerStart::Sack),
            expiry(4.35, 250.0, 1, TimerStart::Send),
            expiry(4.85, 500.0, 2, TimerStart::Send),
        ];
        let f = failover(4.86, None);
        let linux = Some(true);
        assert_eq!(chain_expiries(&dir, &f, None, linux).map(|c| c.0), Some(3));
        // A HEARTBEAT to the old path at 4.2 s went unanswered; a Linux kernel struck it when
        // it sent the next one, at 4.5 s, within the chain: four strikes, not three.
        let mut struck = f.clone();
        struck.hb_unanswered_ns = Some(4_200_000_000);
        struck.hb_again_ns = Some(4_500_000_000);
        assert_eq!(chain_expiries(&dir, &struck, None, linux), None);
        // The next one left with the failover's own DATA: the strike that made the path
        // inactive.
        struck.hb_again_ns = Some(4_860_300_000);
        assert_eq!(chain_expiries(&dir, &struck, None, linux), None);
        // Not sent again before the failover: no Linux strike yet.
        struck.hb_again_ns = None;
        assert_eq!(
            chain_expiries(&dir, &struck, None, linux).map(|c| c.0),
            Some(3)
        );
        // RFC 9260 8.3 (a stack not known to be Linux): struck one RTO after it was sent, at
        // 4.325 s, within the chain; one sent at 4.8 s would be struck after the failover.
        assert_eq!(chain_expiries(&dir, &struck, None, None), None);
        struck.hb_unanswered_ns = Some(4_800_000_000);
        assert_eq!(
            chain_expiries(&dir, &struck, None, None).map(|c| c.0),
            Some(3)
        );
    }

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
