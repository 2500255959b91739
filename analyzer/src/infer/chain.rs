//! The chain of strikes (T3-rtx expiries, RFC 9260 6.3.3; unanswered HEARTBEATs, 8.3) against the
//! old destination that led to a failover, and the rule it shows moved the DATA: RFC 9260 8.2
//! (inactive at Path.Max.Retrans + 1) or RFC 7829 (potentially failed at pf_retrans + 1).

use super::direction::DirInfer;
use super::events::{FailoverPolicy, TimerStart};
use super::heartbeat::Period;

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
/// quadrupling means one expiry retransmitted nothing: counted).
pub(super) fn chain_expiries(
    dir: &DirInfer,
    f: &super::events::Failover,
    rto_min_ms: Option<f64>,
    tick_estimator: Option<bool>,
) -> Option<Chain> {
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
    // Linux strikes are counted where that is sound (`linux_hb_strikes`); for another stack any
    // strike in the chain (one RTO after a HEARTBEAT left unanswered) means no claim.
    let (hb_between, strike_moved) = if tick_estimator == Some(true) {
        linux_hb_strikes(f, &ts, chain_start)?
    } else {
        let strike = f
            .hb_unanswered_ns
            .map(|h| h + first.observed_rto_ns.unwrap_or(0));
        if strike.is_some_and(|h| h >= chain_start && h <= f.t_ns + SAME_EVENT_NS) {
            return None;
        }
        (0, false)
    };
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
    // RFC 9260 8.3 / Linux `sctp_do_8_2_transport_strike`: each heartbeat strike doubled the
    // RTO too (the running T3-rtx timer kept its own).
    let hb = hb_between + u32::from(strike_moved);
    Some(Chain {
        strikes: count + hb,
        hb_strikes: hb,
        hb_moved: strike_moved,
        first_rto_ms: r0,
        last_rto_ms: prev * 2f64.powi(hb.min(16) as i32),
        sum_ms: sum,
    })
}

/// The heartbeat strikes of a Linux sender (a HEARTBEAT sent while one was unanswered) within a
/// failover's chain of expiries `ts`, when they can be counted: (strikes between the last two
/// expiries, whether one more came in the timer event that moved the DATA). None when a strike
/// came where no count is sound:
/// - before the second-to-last expiry: the doubled RTO shows in a later expiry's ratio, which
///   the chain reads as a silent expiry;
/// - after the last expiry but not in the event that moved the DATA, or with no new DATA sent to
///   the old destination after the last expiry (that expiry may have made it inactive);
/// - more strikes than are kept.
///
/// Some((0, false)) when no strike came in the chain.
fn linux_hb_strikes(
    f: &super::events::Failover,
    ts: &[&super::events::Timeout],
    chain_start: i64,
) -> Option<(u32, bool)> {
    let last = ts.last()?.t_ns;
    let before_last = if ts.len() >= 2 {
        ts[ts.len() - 2].t_ns
    } else {
        chain_start
    };
    let strikes = &f.hb_strikes_seen;
    if !strikes.complete() && strikes.times().next()? >= chain_start {
        return None;
    }
    let mut between = 0;
    let mut moved = false;
    for h in strikes
        .times()
        .filter(|&h| h >= chain_start && h <= f.t_ns + SAME_EVENT_NS)
    {
        if h <= before_last {
            return None;
        } else if h < last {
            between += 1;
        } else if (h - f.t_ns).abs() <= SAME_EVENT_NS
            && !moved
            && f.new_to_old_ns.is_some_and(|n| n > last)
        {
            moved = true;
        } else {
            return None;
        }
    }
    Some((between, moved))
}

/// A complete chain of strikes against the old destination (`chain_expiries`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Chain {
    /// T3-rtx expiries and heartbeat strikes (Path.Max.Retrans or pf_retrans + 1).
    pub(super) strikes: u32,
    /// Of them, unanswered HEARTBEATs (RFC 9260 8.3).
    pub(super) hb_strikes: u32,
    /// The last strike was a HEARTBEAT, in the timer event that moved the DATA.
    pub(super) hb_moved: bool,
    /// The observed RTO of the first expiry, ms: at least RTO.min and the RTO before the chain.
    pub(super) first_rto_ms: f64,
    /// The RTO of the last strike, ms (doubled by the one before, RFC 9260 6.3.3 E2).
    pub(super) last_rto_ms: f64,
    /// The expiries' observed RTOs summed, ms.
    pub(super) sum_ms: f64,
}

/// Which rule moved the new DATA (METRICS.md "Failover policy"), from a complete expiry chain of
/// `n` expiries ending at RTO `last_rto` ms:
/// * after one expiry only a potentially-failed rule does it: RFC 7829 with pf_retrans 0 (an
///   RFC 9260 8.2 failover would need Path.Max.Retrans 0);
/// * after more, the old destination's next HEARTBEATs tell: a PF sender restarts its heartbeat
///   timer as the destination becomes PF and probes it within one RTO or so (RFC 7829 4,
///   `pf_probe_window`), then again within the doubled RTO; an inactive destination is probed
///   when its running heartbeat timer fires, a heartbeat interval + RTO after the last restart
///   (RFC 9260 8.3), which may be any time after the failover. A first probe in the PF window and
///   sooner than half the shortest heartbeat spacing seen before, or a second one sooner than an
///   inactive destination's can follow, is PF; none, or one later than any PF probe can come,
///   is RFC 9260 8.2 with PMR = n - 1; otherwise no claim (a probe in the PF window later than
///   that proves nothing: lab runs of both policies put it there).
pub(super) fn failover_policy(
    f: &super::events::Failover,
    chain: Option<Chain>,
    hb_gap_min_ms: Option<f64>,
    hb_periods: &[Period],
) -> Option<FailoverPolicy> {
    let Chain {
        strikes: n,
        hb_moved,
        first_rto_ms,
        last_rto_ms: last_rto,
        ..
    } = chain?;
    // The HEARTBEAT of a heartbeat strike that moved the DATA is no probe: the next one is.
    // (A strike between the expiries came before the failover: the first probe is a probe.)
    let (probe_ns, probe2_ns) = if hb_moved {
        (f.probe2_ns, None)
    } else {
        (f.probe_ns, f.probe2_ns)
    };
    if n == 1 {
        return Some(FailoverPolicy::Pf { pf_retrans: 0 });
    }
    let rfc = Some(FailoverPolicy::Rfc {
        path_max_retrans: n - 1,
    });
    let pf = Some(FailoverPolicy::Pf { pf_retrans: n - 1 });
    let Some(probe) = probe_ns.map(|p| (p - f.t_ns) as f64 / 1e6) else {
        return rfc;
    };
    // A destination that becomes potentially failed has its heartbeat timer restarted at once
    // (RFC 7829 4: probed every RTO; Linux `sctp_do_8_2_transport_strike`) to max(RTO / 2,
    // 200 ms) + a random part of the RTO below one RTO (RFC 9260 8.3 jitter; Linux
    // `sctp_transport_timeout`), the RTO not yet doubled by the strike that made it PF (doubled
    // when a heartbeat strike moved the DATA: its own HEARTBEAT went first). A first probe outside
    // that window, timer lateness included, is no PF probe; an inactive destination's is the
    // heartbeat timer that was already running (RFC 9260 8.3), which may fire at any time.
    let entry_rto = if hb_moved { 2.0 * last_rto } else { last_rto };
    let (pf_first_earliest, pf_first_latest) = pf_probe_window(entry_rto);
    // The probe after it (its HEARTBEAT unanswered): the same timer, the RTO doubled by the
    // last expiry.
    let (_, pf_again_latest) = pf_probe_window(2.0 * entry_rto);
    // The next probe, the first unanswered: a potentially failed destination is probed again
    // within that window (`pf_again_latest`), an inactive one a heartbeat interval later on top
    // (RFC 9260 8.3; Linux `sctp_transport_timeout`). A second probe sooner than the earliest
    // an inactive one can come (the heartbeat interval at least half the shortest heartbeat
    // spacing seen) is PF.
    let again = probe2_ns.map(|p| (p - probe_ns.unwrap_or(p)) as f64 / 1e6);
    // The least heartbeat interval the sender's idle periods allow (`hb_interval_floor_ms`).
    let hb_floor = hb_interval_floor_ms(hb_periods, first_rto_ms);
    let pf_first = probe >= pf_first_earliest - PROBE_SLACK_MS;
    match (hb_gap_min_ms, again) {
        (Some(h), _) if probe < 0.5 * h && pf_first && probe <= pf_first_latest => pf,
        (Some(h), Some(a)) if a < 0.5 * h + last_rto && a <= pf_again_latest => pf,
        // An inactive destination's next probe comes at least HB.interval + half its RTO (the
        // last expiry's doubled, as above) after the first (RFC 9260 8.3): sooner is PF.
        (_, Some(a)) if hb_floor.is_some_and(|l| a < l + last_rto) && a <= pf_again_latest => pf,
        _ if probe > pf_first_latest => rfc,
        (_, Some(a)) if a > pf_again_latest => rfc,
        _ => None,
    }
}

/// The window in which a potentially failed destination's heartbeat timer, restarted with RTO
/// `rto_ms`, fires (ms after the restart): max(RTO / 2, 200 ms) + up to one RTO of jitter (RFC
/// 9260 8.3; Linux `sctp_transport_timeout`, HZ / 5 at least), plus a timer wheel level of
/// lateness (never early). The earliest is 0.5 RTO, as stacks without Linux's floor probe.
fn pf_probe_window(rto_ms: f64) -> (f64, f64) {
    let latest = (0.5 * rto_ms).max(PF_HB_MIN_MS) + rto_ms;
    (
        0.5 * rto_ms,
        latest + 2.0 * super::heartbeat::wheel_late_ms(latest),
    )
}

/// Linux's least heartbeat timeout (HZ / 5, `sctp_transport_timeout`).
const PF_HB_MIN_MS: f64 = 200.0;

/// Capture timestamps against timer expiries: a probe this much before the earliest still counts.
const PROBE_SLACK_MS: f64 = 5.0;

/// Packets a stack sends in one timer event leave within this of each other.
pub(super) const SAME_EVENT_NS: i64 = 1_000_000;

/// The least heartbeat interval a Linux sender's idle heartbeat periods allow: each is
/// HB.interval + u RTO (u below 1.5, RFC 9260 8.3) + timer lateness (below one level of the timer
/// wheel, `heartbeat::wheel_late_ms` twice), the RTO then at most the larger of `first_rto_ms`
/// (the first expiry's, at least RTO.min) and the estimate in ticks when the period began. The
/// least over the periods; None without a period that has an estimate.
pub(super) fn hb_interval_floor_ms(periods: &[Period], first_rto_ms: f64) -> Option<f64> {
    periods
        .iter()
        .filter(|p| p.est_ticks_ms.is_finite())
        .map(|p| {
            let rto = first_rto_ms.max(p.est_ticks_ms);
            p.ms - 1.5 * rto - 2.0 * super::heartbeat::wheel_late_ms(p.ms)
        })
        .reduce(f64::min)
        .filter(|&l| l > 0.0)
}

/// RFC 9260 15: the recommended RTO.min.
const DEFAULT_RTO_MIN_MS: f64 = 1000.0;

/// The policy's evidence in words; `hb_struck`: a chain counted an unanswered HEARTBEAT.
pub(super) fn policy_evidence(p: FailoverPolicy, failovers: usize, hb_struck: bool) -> String {
    let (expiries, expiry) = if hb_struck {
        (
            "strikes (T3-rtx expiries and unanswered HEARTBEATs, RFC 9260 8.3)",
            "strike",
        )
    } else {
        ("T3-rtx expiries", "T3-rtx expiry")
    };
    match p {
        FailoverPolicy::Pf { pf_retrans } => format!(
            "new DATA moved after {} {} on the old path, before Path.Max.Retrans + 1 could be reached, and the old path was probed with HEARTBEATs (RFC 7829 potentially failed, pf_retrans {pf_retrans}); {failovers} failover(s)",
            pf_retrans + 1,
            if pf_retrans == 0 { expiry } else { expiries }
        ),
        FailoverPolicy::Rfc { path_max_retrans } => format!(
            "new DATA moved after {} consecutive {expiries} on the old path, which was then not probed again within a doubled RTO (RFC 9260 8.2 inactive at Path.Max.Retrans {path_max_retrans} + 1); {failovers} failover(s)",
            path_max_retrans + 1
        ),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::infer::events::{Failover, Timeout};

    fn chain(strikes: u32, last_rto_ms: f64, sum_ms: f64) -> Chain {
        Chain {
            strikes,
            hb_strikes: 0,
            hb_moved: false,
            first_rto_ms: 125.0,
            last_rto_ms,
            sum_ms,
        }
    }

    pub(in crate::infer) fn failover(t_s: f64, probe_s: Option<f64>) -> Failover {
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
            hb_strikes_seen: Default::default(),
            new_to_old_ns: None,
            hb_strikes: 0,
            policy: None,
            chain_reset_ns: None,
            to_first_seen: Vec::new(),
            moved: false,
            outrun_ns: None,
        }
    }

    #[test]
    fn one_expiry_is_pf_and_more_read_the_probe_of_the_old_path() {
        // RFC 7829: new DATA moved at the first expiry.
        assert_eq!(
            failover_policy(
                &failover(5.0, None),
                Some(chain(1, 120.0, 120.0)),
                Some(1120.0),
                &[]
            ),
            Some(FailoverPolicy::Pf { pf_retrans: 0 })
        );
        // Three expiries, the last at RTO 484 ms (lab run lk_pf0), the old path probed at `probe`
        // s (new DATA moved at 5 s), heartbeats seen `h` ms apart at the least.
        let three = |probe: Option<f64>, h: Option<f64>| {
            failover_policy(&failover(5.0, probe), Some(chain(3, 484.0, 844.0)), h, &[])
        };
        // Three expiries, the old path next probed 1.3 s later while heartbeats came 1.12 s
        // apart: an inactive destination (RFC 9260 8.2), PMR 2 (lab run lk_pf0).
        let rfc = Some(FailoverPolicy::Rfc {
            path_max_retrans: 2,
        });
        assert_eq!(three(Some(6.31), Some(1120.0)), rfc);
        // No probe at all: RFC too.
        assert_eq!(three(None, Some(1120.0)), rfc);
        // Probed within a PF probe's window (max(RTO / 2, 200 ms) + up to one RTO, timer lateness:
        // 242 to 806 ms), far sooner than any heartbeat interval: PF, pf_retrans 2.
        assert_eq!(
            three(Some(5.6), Some(5000.0)),
            Some(FailoverPolicy::Pf { pf_retrans: 2 })
        );
        // Sooner than that window opens is no PF probe, and an inactive destination's heartbeat
        // timer may fire at any time: no claim.
        assert_eq!(three(Some(5.1), Some(5000.0)), None);
        // In the window but past half the heartbeat spacing, or without a heartbeat interval to
        // compare: no claim (lab runs ho9_pf1r2_pmr4_hb300, PF, and ho9_pf0_pmr2_hb250, RFC,
        // both probed 1.1 to 1.4 RTOs after the failover with heartbeats ~400 ms apart).
        assert_eq!(three(Some(5.7), Some(1120.0)), None);
        assert_eq!(three(Some(5.6), None), None);
        // Probed later than a PF probe can come (past 806 ms): RFC.
        assert_eq!(three(Some(5.9), None), rfc);
        assert_eq!(three(Some(7.0), None), rfc);
        // The first probe as an inactive destination's would come, but the next one followed
        // it 1.28 s later, sooner than a 1.2 s-spaced heartbeat interval plus half the doubled
        // 870 ms RTO allow: PF, pf_retrans 2 (Linux lab run with pf_retrans 2, PMR 5).
        let mut pf = failover(5.472, Some(6.432));
        pf.probe2_ns = Some(7_712_000_000);
        assert_eq!(
            failover_policy(&pf, Some(chain(3, 870.0, 1480.0)), Some(1200.0), &[]),
            Some(FailoverPolicy::Pf { pf_retrans: 2 })
        );
        // Four expiries, the last at RTO 820 ms; the first probe 1.16 s on (in a PF probe's
        // window, up to 410 + 820 ms + lateness), the next 3.24 s after it: later than a PF
        // destination's (up to 820 + 1640 ms + lateness), an inactive one's (lab run
        // ho_asym_pf0_sack80, PMR 3).
        let mut inactive = failover(5.0, Some(6.16));
        inactive.probe2_ns = Some(9_400_000_000);
        assert_eq!(
            failover_policy(&inactive, Some(chain(4, 820.0, 1500.0)), Some(1200.0), &[]),
            Some(FailoverPolicy::Rfc {
                path_max_retrans: 3
            })
        );
        // Lab run lk_failback_pf0 (PMR 2): probes 1.18 s and 1.94 s apart after an expiry at
        // RTO 740 ms, both inside a PF destination's windows: no claim.
        let mut both = failover(6.251, Some(7.431));
        both.probe2_ns = Some(9_371_000_000);
        assert_eq!(
            failover_policy(&both, Some(chain(3, 740.0, 1270.0)), Some(1200.0), &[]),
            None
        );
        // An incomplete chain tells nothing.
        assert_eq!(failover_policy(&failover(5.0, None), None, None, &[]), None);
    }

    #[test]
    fn a_next_probe_sooner_than_the_heartbeat_interval_floor_allows_is_pf() {
        // Lab run ho7_pf1r2_pmr5_hb600 (Linux, pf_retrans 2, hb_interval 600 ms): three
        // expiries, new DATA moved at 4.894 s, the old path probed at 5.484 s and again at
        // 6.355 s (871 ms). The sender's idle heartbeat periods (with its tick estimate then)
        // leave an interval of at least 801 - 1.5 x 130 - 80 = 526 ms: an inactive destination's
        // next probe would have come 526 + 484 ms after the first at the soonest.
        let periods = [
            Period {
                ms: 719.971,
                est_ms: f64::NAN,
                est_ticks_ms: f64::NAN,
                from_ack_ms: f64::NAN,
                ack_est_ticks_ms: f64::NAN,
            },
            Period {
                ms: 880.083,
                est_ms: 124.776,
                est_ticks_ms: 130.0,
                from_ack_ms: f64::NAN,
                ack_est_ticks_ms: f64::NAN,
            },
            Period {
                ms: 801.195,
                est_ms: 105.266,
                est_ticks_ms: 130.0,
                from_ack_ms: f64::NAN,
                ack_est_ticks_ms: f64::NAN,
            },
        ];
        let floor = hb_interval_floor_ms(&periods, 129.863).unwrap();
        assert!((floor - 526.195).abs() < 0.01, "{floor}");
        let mut pf = failover(4.894131, Some(5.484034));
        pf.probe2_ns = Some(6_354_690_000);
        let c = Chain {
            first_rto_ms: 129.863,
            ..chain(3, 483.975, 863.0)
        };
        assert_eq!(
            failover_policy(&pf, Some(c), Some(719.355), &periods),
            Some(FailoverPolicy::Pf { pf_retrans: 2 })
        );
        // Without the periods nothing tells: the first probe, 590 ms on, lies in a PF
        // destination's probe window (up to 242 + 484 ms + a timer wheel level) and an inactive
        // destination's running heartbeat timer may fire at any time (this rule once read it as
        // RFC 9260 8.2, PMR 2: wrong).
        assert_eq!(failover_policy(&pf, Some(c), Some(719.355), &[]), None);
        // Periods with no estimate yet, or an RTO that leaves no interval, give no floor.
        assert_eq!(hb_interval_floor_ms(&periods[..1], 129.863), None);
        assert_eq!(hb_interval_floor_ms(&periods[1..], 600.0), None);
    }

    /// A Linux sender's direction whose expiries, at (`t_s`, observed RTO ms), form a chain: the
    /// first started by a SACK, each later one by the send after the one before (`expiry`).
    fn chain_dir(expiries: &[(f64, f64)]) -> DirInfer {
        let mut dir = DirInfer::default();
        dir.timeouts = expiries
            .iter()
            .enumerate()
            .map(|(k, &(t_s, rto_ms))| {
                let start = if k == 0 {
                    TimerStart::Sack
                } else {
                    TimerStart::Send
                };
                expiry(t_s, rto_ms, k as u32, start)
            })
            .collect();
        dir
    }

    /// A Linux sender's expiry on path 0 at `t_s`, `rto_ms` after its timer started, the
    /// retransmission sent to path 1.
    pub(in crate::infer) fn expiry(
        t_s: f64,
        rto_ms: f64,
        backoff: u32,
        start: TimerStart,
    ) -> Timeout {
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

    /// `f` with Linux heartbeat strikes at `times_s`.
    fn struck_at(f: &Failover, times_s: &[f64]) -> Failover {
        let mut f = f.clone();
        f.hb_strikes_seen = Default::default();
        for &t in times_s {
            f.hb_strikes_seen.push((t * 1e9) as i64);
        }
        f
    }

    #[test]
    fn heartbeat_strikes_within_the_chain_are_counted_only_where_sound() {
        let dir = chain_dir(&[(4.10, 125.0), (4.35, 250.0), (4.85, 500.0)]);
        let f = failover(4.86, None);
        let linux = Some(true);
        let strikes = |f: &Failover| {
            chain_expiries(&dir, f, None, linux).map(|c| (c.strikes, c.hb_strikes, c.last_rto_ms))
        };
        assert_eq!(strikes(&f), Some((3, 0, 500.0)));
        // A HEARTBEAT to the old path at 4.2 s went unanswered; a Linux kernel struck it when
        // it sent the next one. At 4.3 s, before the second-to-last expiry: the doubled RTO
        // would show in the last expiry's ratio, which the chain reads otherwise: no claim.
        assert_eq!(strikes(&struck_at(&f, &[4.3])), None);
        // At 4.5 s, between the last two expiries: the running timer kept its RTO, so the last
        // ratio is 2; four strikes, and the RTO doubled once more.
        assert_eq!(strikes(&struck_at(&f, &[4.5])), Some((4, 1, 1000.0)));
        assert_eq!(strikes(&struck_at(&f, &[4.5, 4.7])), Some((5, 2, 2000.0)));
        // With the failover's own DATA but no new DATA to the old path after the last expiry:
        // that expiry may have made the path inactive, no claim.
        assert_eq!(strikes(&struck_at(&f, &[4.8603])), None);
        // Not sent again before the failover: no Linux strike yet.
        assert_eq!(strikes(&struck_at(&f, &[])), Some((3, 0, 500.0)));
        // More strikes than are kept, the oldest kept within the chain: the count is unknown.
        assert_eq!(strikes(&struck_at(&f, &[4.40, 4.45, 4.5, 4.55, 4.6])), None);
        // RFC 9260 8.3 (a stack not known to be Linux): struck one RTO after it was sent, at
        // 4.325 s, within the chain; one sent at 4.8 s would be struck after the failover.
        let mut other = f.clone();
        other.hb_unanswered_ns = Some(4_200_000_000);
        assert_eq!(chain_expiries(&dir, &other, None, None), None);
        other.hb_unanswered_ns = Some(4_800_000_000);
        assert_eq!(
            chain_expiries(&dir, &other, None, None).map(|c| c.strikes),
            Some(3)
        );
    }

    #[test]
    fn a_linux_heartbeat_strike_between_the_last_two_expiries_is_counted() {
        // Lab run ho7_assocrtx4_pmr5 (Linux, PF off, Path.Max.Retrans 5, hb_interval 700 ms):
        // five expiries, the kernel's RTO 190 to 1520 ms; a HEARTBEAT sent at 9.36 s while
        // one was unanswered doubled its RTO to 6080 ms (the kernel's own record), the timer
        // running since 6.96 s kept 3040 ms and fired at 10.08 s: the sixth strike, inactive.
        let dir = chain_dir(&[
            (4.1789, 196.5),
            (4.5684, 386.6),
            (5.3583, 790.1),
            (6.9584, 1600.0),
            (10.0783, 3116.6),
        ]);
        let mut f = failover(10.1388, None);
        f.timeouts = vec![0, 1, 2, 3, 4];
        let f = struck_at(&f, &[9.3618]);
        let c = chain_expiries(&dir, &f, None, Some(true)).unwrap();
        assert_eq!((c.strikes, c.hb_strikes, c.hb_moved), (6, 1, false));
        assert_eq!(
            failover_policy(&f, Some(c), Some(1120.0), &[]),
            Some(FailoverPolicy::Rfc {
                path_max_retrans: 5
            })
        );
    }

    #[test]
    fn a_linux_heartbeat_strike_that_moved_the_data_after_the_last_expiry_is_counted() {
        // Lab run ho4_assocrtx3 (Linux, PF off, Path.Max.Retrans 5): five expiries, new DATA to
        // the old path right after the last one (7.8423 s), then nothing until the heartbeat
        // timer sent a HEARTBEAT while the one of 7.84 s was unanswered, at 10.8016 s: the
        // sixth strike made the path inactive and the DATA moved in the same event.
        let dir = chain_dir(&[
            (4.0915, 128.8),
            (4.3516, 249.3),
            (4.8517, 489.4),
            (5.8416, 989.9),
            (7.8416, 2000.1),
        ]);
        let mut f = failover(10.801579, Some(10.801602));
        f.timeouts = vec![0, 1, 2, 3, 4];
        f.hb_unanswered_ns = Some(7_841_588_000);
        f.new_to_old_ns = Some(7_842_302_000);
        let f = struck_at(&f, &[10.801602]);
        let linux = Some(true);
        let c = chain_expiries(&dir, &f, None, linux).unwrap();
        assert_eq!((c.strikes, c.hb_strikes, c.hb_moved), (6, 1, true));
        assert_eq!(c.last_rto_ms, 2.0 * 2000.1);
        // The strike's own HEARTBEAT is no probe: with no later one the path was inactive.
        assert_eq!(
            failover_policy(&f, Some(c), Some(1120.0), &[]),
            Some(FailoverPolicy::Rfc {
                path_max_retrans: 5
            })
        );
        // The path took no new DATA after the last expiry: that expiry may have made it
        // inactive as well, so the chain tells nothing.
        let mut idle = f.clone();
        idle.new_to_old_ns = Some(7_841_588_000);
        assert_eq!(chain_expiries(&dir, &idle, None, linux), None);
        // Struck after the DATA had moved, not in its event: the strike is outside the chain
        // (sparse DATA moves at the next message after the expiry that made the path inactive).
        let later = struck_at(&f, &[10.9]);
        let c = chain_expiries(&dir, &later, None, linux).unwrap();
        assert_eq!((c.strikes, c.hb_strikes), (5, 0));
        // A stack not known to be Linux: its strike timing is not known, no claim.
        assert_eq!(chain_expiries(&dir, &f, None, None), None);
    }
}
