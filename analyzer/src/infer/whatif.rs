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
}
