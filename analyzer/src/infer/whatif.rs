//! The failover-time model behind the what-if figures of a real failover: how long the sender
//! would have taken to move its new DATA with other timer settings, from what the trace showed.
//!
//! Assumptions (stated with every figure):
//! * the outage is detected only by T3-rtx expiries on the old destination (RFC 9260 6.3.3);
//! * the first expiry's RTO is max(RTO.min, the estimate), the estimate being what the trace's
//!   RTT gives (RFC 9260 6.3.1; in 10 ms ticks for a Linux kernel); each later expiry doubles
//!   it (6.3.3 E2) up to RTO.max (60 s unless seen otherwise);
//! * new DATA moves after pf_retrans + 1 expiries with PF (RFC 7829), after Path.Max.Retrans + 1
//!   without (RFC 9260 8.2);
//! * the time from the outage's start to the first expiry's timer start, and the timers'
//!   lateness, stay as observed (the "lead").

use super::direction::DirInfer;
use super::events::Failover;
use crate::decimal::Fixed;

/// RFC 9260 15: RTO.Max.
const DEFAULT_RTO_MAX_MS: f64 = 60_000.0;

/// What the trace showed of one real failover.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observed {
    /// Failover time (outage start -> new DATA on the alternate), ms.
    pub failover_ms: f64,
    /// Observed RTOs of the expiry chain, summed, ms.
    pub chain_ms: f64,
    /// Expiries in the chain.
    pub expiries: u32,
    /// The RTO estimate without a floor, ms.
    pub estimate_ms: f64,
    pub rto_max_ms: Option<f64>,
}

/// Timer settings of a what-if.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    pub rto_min_ms: f64,
    /// Expiries before new DATA moves: pf_retrans + 1 with PF, Path.Max.Retrans + 1 without.
    pub expiries: u32,
}

/// The failover time the settings give, ms.
pub fn predict(o: &Observed, s: &Settings) -> f64 {
    let lead = (o.failover_ms - o.chain_ms).max(0.0);
    let rto_max = o.rto_max_ms.unwrap_or(DEFAULT_RTO_MAX_MS);
    let rto0 = s.rto_min_ms.max(o.estimate_ms).min(rto_max);
    let chain: f64 = (0..s.expiries.min(32))
        .map(|i| (rto0 * 2f64.powi(i as i32)).min(rto_max))
        .sum();
    lead + chain
}

/// How long an endpoint takes to declare a destination inactive when it dies while idle (only
/// HEARTBEATs go there), from the first HEARTBEAT that gets no answer, ms.
///
/// RFC 9260 8.3: each unanswered HEARTBEAT is a strike on the destination's error counter and
/// doubles its RTO (6.3.3 E2, up to RTO.max); the next one goes HB.interval + RTO later (the
/// jitter averages one RTO); the destination is inactive once the counter exceeds
/// Path.Max.Retrans. The RFC (and usrsctp) strike when a HEARTBEAT's RTO runs out: the
/// (PMR + 1)-th strike comes one RTO after the (PMR + 1)-th HEARTBEAT. Linux strikes when its
/// heartbeat timer fires again with the previous HEARTBEAT unanswered (`sctp_sf_sendbeat_8_3`):
/// one heartbeat period after it (`linux`).
pub fn dead_idle_path_ms(
    hb_interval_ms: f64,
    rto_ms: f64,
    path_max_retrans: u32,
    rto_max_ms: Option<f64>,
    linux: bool,
) -> f64 {
    let rto_max = rto_max_ms.unwrap_or(DEFAULT_RTO_MAX_MS);
    let rto = |k: u32| (rto_ms * 2f64.powi(k.min(32) as i32)).min(rto_max);
    let pmr = path_max_retrans.min(32);
    // HEARTBEAT k (k >= 1) goes HB.interval + RTO_k after HEARTBEAT k - 1.
    let probes: f64 = (1..=pmr).map(|k| hb_interval_ms + rto(k)).sum();
    if linux {
        probes + hb_interval_ms + rto(pmr + 1)
    } else {
        probes + rto(pmr)
    }
}

/// The what-if recommendation of a real failover (the words of `path_failure`): PF with
/// pf_retrans 0 and a lower RTO.min, each with its predicted failover time and the condition
/// under which it holds (`lone_caveat`, spurious expiries already seen). The complete expiry
/// chain's count and summed observed RTOs come in `(n, sum)`, the outage's start (ns) and the
/// failover time (ms) in `(start_ns, failover_ms)`.
pub(super) fn recommendation(
    dir: &DirInfer,
    f: &Failover,
    (n, sum): (u32, f64),
    (start_ns, failover_ms): (i64, f64),
    (base_rtt_ms, sd_high_ms): (Option<f64>, Option<f64>),
    linux: bool,
) -> Option<String> {
    let first = f
        .timeouts
        .first()
        .and_then(|&i| dir.timeouts.get(i as usize))?;
    let estimate = match (first.est_rto_ms, first.est_rto_coarse_ms.filter(|_| linux)) {
        (Some(e), Some(c)) => e.max(c),
        (e, c) => e.or(c)?,
    };
    let r0 = first.observed_rto_ns? as f64 / 1e6 / 2f64.powi(first.backoff.min(16) as i32);
    let o = Observed {
        failover_ms,
        chain_ms: sum,
        expiries: n,
        estimate_ms: estimate,
        rto_max_ms: None,
    };
    let secs = |s: Settings| Fixed(predict(&o, &s) / 1e3, 2);
    let mut alts = Vec::new();
    if n > 1 {
        let pf = Settings {
            rto_min_ms: r0,
            expiries: 1,
        };
        let mut alt = format!(
            "with PF (pf_retrans 0: {}): about {} s",
            super::settings::pf(linux),
            secs(pf)
        );
        // With pf_retrans 0 one spurious expiry is a spurious failover.
        let spurious_expiries = dir
            .timeouts
            .iter()
            .enumerate()
            .filter(|(i, t)| t.t_ns < start_ns && spurious_timeout(dir, *i))
            .count();
        if spurious_expiries > 0 {
            alt.push_str(&format!(
                ", but T3-rtx already expired spuriously {spurious_expiries} time(s) before the outage (the retransmitted DATA had been delivered): with pf_retrans 0 each puts the path in PF until the late SACK comes back, and new DATA sent meanwhile goes to the alternate (a spurious failover), so first set the I-bit on DATA (RFC 7053) or raise RTO.min above RTT + the peer's SACK delay"
            ));
        } else if let Some(c) = lone_caveat(r0, base_rtt_ms, sd_high_ms) {
            alt.push_str(&format!(
                ", {c}: with pf_retrans 0 new DATA sent before a late SACK would go to the alternate (a spurious failover)"
            ));
        }
        alts.push(alt);
    }
    if r0 >= 3.0 * ALT_RTO_MIN_MS && r0 > 1.5 * estimate {
        let low = Settings {
            rto_min_ms: ALT_RTO_MIN_MS,
            expiries: n,
        };
        let proposed = ALT_RTO_MIN_MS.max(estimate);
        // Where the peer's SACK delay is known and the proposal is below what a lone
        // packet's SACK takes, the lowest RTO.min above it (a fifth more for RTT variation,
        // in 10 ms) comes first.
        let lone = base_rtt_ms.zip(sd_high_ms).map(|(r, d)| r + d);
        if let Some(l) = lone.filter(|&l| proposed < l) {
            let safe = (l * 1.2 / 10.0).ceil() * 10.0;
            if r0 >= 1.5 * safe.max(estimate) {
                alts.push(format!(
                    "with RTO.min {} ms instead of {} ms{} ({}; above RTT + the peer's SACK delay, {} ms): about {} s",
                    Fixed(safe, 0),
                    Fixed(r0, 0),
                    super::settings::rto_min_default(linux, r0),
                    super::settings::rto_min(linux),
                    Fixed(l, 0),
                    secs(Settings {
                        rto_min_ms: safe,
                        expiries: n,
                    })
                ));
            }
        }
        let mut alt = format!(
            "with RTO.min {} ms instead of {} ms{} ({}): about {} s",
            Fixed(ALT_RTO_MIN_MS, 0),
            Fixed(r0, 0),
            super::settings::rto_min_default(linux, r0),
            super::settings::rto_min(linux),
            secs(low)
        );
        if let Some(c) = lone_caveat(proposed, base_rtt_ms, sd_high_ms) {
            alt.push_str(&format!(", {c}"));
        }
        alts.push(alt);
    }
    (!alts.is_empty()).then(|| {
        format!(
            "failover took {} s; {} (RFC 9260 6.3 timer rules from the observed RTT; the outage's start and timer lateness as observed)",
            Fixed(failover_ms / 1e3, 2),
            alts.join("; ")
        )
    })
}

/// When a what-if's first RTO `rto_ms` could expire before a lone packet's delayed SACK comes
/// back (RFC 9260 6.3.3: a spurious timeout; RFC 7053: the I-bit asks the peer to SACK at once),
/// the condition in words: the peer's SACK delay as seen (p95), or, not seen, the default the
/// RFC allows (RFC 9260 6.2: 200 ms). `None` when the RTO is above RTT + that delay.
fn lone_caveat(rto_ms: f64, base_rtt_ms: Option<f64>, sd_high_ms: Option<f64>) -> Option<String> {
    let rtt = base_rtt_ms?;
    match sd_high_ms {
        Some(sd) => (rto_ms < rtt + sd).then(|| {
            format!(
                "but only with the I-bit on DATA (RFC 7053) or a peer SACK delay below {} ms: an RTO of {} ms expires before a lone packet's SACK comes back (RTT + the peer's SACK delay: {} ms), a spurious timeout",
                Fixed((rto_ms - rtt).max(0.0), 0),
                Fixed(rto_ms, 0),
                Fixed(rtt + sd, 0)
            )
        }),
        None => (rto_ms < rtt + DEFAULT_SACK_DELAY_MS).then(|| {
            format!(
                "provided the peer SACKs a lone packet within {} ms or DATA carries the I-bit (RFC 7053): its SACK delay was not seen here and may be up to 200 ms (RFC 9260 6.2 default), which an RTO of {} ms would not wait for",
                Fixed((rto_ms - rtt).max(0.0), 0),
                Fixed(rto_ms, 0)
            )
        }),
    }
}

/// Whether expiry `i` of `dir` retransmitted only DATA that had been delivered (a spurious
/// timeout: RFC 9260 6.3.3 fired while the SACK was on its way).
fn spurious_timeout(dir: &DirInfer, i: usize) -> bool {
    let mut rtx = dir
        .retransmissions
        .iter()
        .filter(|r| r.timeout == Some(i as u32))
        .peekable();
    rtx.peek().is_some() && rtx.all(|r| r.spurious.is_some())
}

/// RFC 9260 6.2: the delayed-SACK timer's usual value (the Linux and FreeBSD default).
const DEFAULT_SACK_DELAY_MS: f64 = 200.0;

/// The lower RTO.min a what-if proposes (what the labs use; above typical path RTTs).
const ALT_RTO_MIN_MS: f64 = 100.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_idle_path_is_declared_after_pmr_plus_one_strikes() {
        // Linux defaults (hb_interval 30 s, RTO.min 1 s, PMR 5): about five minutes.
        let linux = dead_idle_path_ms(30_000.0, 1000.0, 5, None, true);
        assert!((linux - (6.0 * 30_000.0 + 2e3 + 4e3 + 8e3 + 16e3 + 32e3 + 60e3)).abs() < 1.0);
        // The RFC rule strikes one RTO after the last HEARTBEAT, not a period after it.
        let rfc = dead_idle_path_ms(30_000.0, 1000.0, 5, None, false);
        assert!((rfc - (5.0 * 30_000.0 + 2e3 + 4e3 + 8e3 + 16e3 + 32e3 + 32e3)).abs() < 1.0);
        // The lab's settings (1 s, RTO 100 ms, PMR 2).
        let lab = dead_idle_path_ms(1000.0, 100.0, 2, None, true);
        assert!((lab - (3000.0 + 200.0 + 400.0 + 800.0)).abs() < 1e-6);
    }

    #[test]
    fn predictions_follow_the_rfc_timer_rules() {
        // Lab run lk_pf0 (Linux, RTO.min 100, PMR 2, PF off): 3 expiries of 120, 240, 480 ms,
        // failover 880 ms, estimate 120 ms in ticks.
        let o = Observed {
            failover_ms: 880.0,
            chain_ms: 844.0,
            expiries: 3,
            estimate_ms: 120.0,
            rto_max_ms: None,
        };
        // The same settings give back the observed figure.
        let same = Settings {
            rto_min_ms: 100.0,
            expiries: 3,
        };
        assert!((predict(&o, &same) - 876.0).abs() < 1.0);
        // PF with pf_retrans 0: one expiry (lab run lk_pf1 took 135 ms).
        let pf = Settings {
            rto_min_ms: 100.0,
            expiries: 1,
        };
        assert!((predict(&o, &pf) - 156.0).abs() < 1.0);
        // RTO.min 1 s with PF (Linux defaults; lab run lk_default_cut took 1040 ms).
        let linux = Settings {
            rto_min_ms: 1000.0,
            expiries: 1,
        };
        assert!((predict(&o, &linux) - 1036.0).abs() < 1.0);
        // RTO.max caps the doubling.
        let capped = Observed {
            rto_max_ms: Some(300.0),
            ..o
        };
        assert!((predict(&capped, &same) - (36.0 + 120.0 + 240.0 + 300.0)).abs() < 1.0);
    }

    #[test]
    fn an_rto_below_rtt_plus_the_peers_sack_delay_is_a_condition() {
        // Seen: RTT 40 ms, the peer delays a lone packet's SACK up to 209 ms (lab run
        // lk_sparse_sack200): 125 ms expires first.
        let c = lone_caveat(125.0, Some(40.0), Some(209.0)).unwrap();
        assert!(
            c.contains("I-bit") && c.contains("below 85 ms") && c.contains("249 ms"),
            "{c}"
        );
        // Above RTT + SACK delay: nothing to say.
        assert_eq!(lone_caveat(300.0, Some(40.0), Some(209.0)), None);
        // Not seen (dense traffic: every second packet SACKed at once): the RFC default.
        let c = lone_caveat(130.0, Some(40.0), None).unwrap();
        assert!(c.contains("not seen") && c.contains("within 90 ms"), "{c}");
        assert_eq!(lone_caveat(250.0, Some(40.0), None), None);
        // No RTT, no claim.
        assert_eq!(lone_caveat(100.0, None, Some(200.0)), None);
    }

    #[test]
    fn a_spurious_expiry_retransmitted_only_delivered_data() {
        use super::super::events::{Retransmission, RtxKind};
        let rtx = |timeout: Option<u32>, spurious: Option<&'static str>| Retransmission {
            tsn: 1,
            t_ns: 0,
            frame: 1,
            orig_t_ns: 0,
            orig_frame: 1,
            orig_path: 0,
            path: 0,
            kind: RtxKind::Timeout,
            timeout,
            spurious,
            acked_ns: None,
            peer_discarded: None,
            orig_passed_over: false,
        };
        let mut dir = DirInfer::default();
        dir.retransmissions = vec![
            rtx(Some(0), Some("reported as duplicate TSN by the peer")),
            rtx(Some(1), Some("reported as duplicate TSN by the peer")),
            rtx(Some(1), None),
        ];
        assert!(spurious_timeout(&dir, 0));
        // One chunk of expiry 1 was really lost.
        assert!(!spurious_timeout(&dir, 1));
        // No retransmission seen for expiry 2: no claim.
        assert!(!spurious_timeout(&dir, 2));
    }
}
