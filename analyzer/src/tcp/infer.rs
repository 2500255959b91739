//! End-of-pass inference for one TCP direction (METRICS.md "TCP flows, for comparison"): vantage,
//! base RTT, observed RTO per expiry (RFC 6298 5, RFC 8985 7.3), the RTO floor and the model it
//! fits, the delayed-ACK timer, spurious retransmissions, transfer times and rates.

use super::dir::{RtxKind, TcpDir, Timeout, TimerStart};
use super::flow::TcpFlow;
use crate::infer::stats::{median, Dist, Samples};
use crate::infer::summary::Vantage;

/// A request answered faster than this was answered at the capture point (µs-scale turnaround).
const NEAR_NS: i64 = 200_000;
/// Delayed-ACK timer samples needed before a delay is reported.
const MIN_DELAYED: usize = 3;
/// ...and the share of lone ACKs they must be.
const MIN_DELAYED_SHARE: f64 = 0.1;

/// RTO model names (`rto_model`).
pub const MODEL_LINUX: &str = "linux";
pub const MODEL_RFC6298: &str = "rfc6298";

#[derive(Debug, Clone, Copy)]
pub struct DelackSample {
    pub t_ns: i64,
    pub delay_ms: f64,
    pub frame_data: u64,
    pub frame_ack: u64,
}

/// Everything inferred for one direction that carried data.
#[derive(Debug, Clone)]
pub struct DirSummary {
    pub vantage: Vantage,
    pub vantage_evidence: String,
    pub base_rtt_ms: Option<f64>,
    pub rtt: Option<Dist>,
    pub ts_rtt: Option<Dist>,
    pub rtx_total: u64,
    pub rtx_fast: u64,
    pub rtx_timeout: u64,
    pub rtx_spurious: u64,
    /// Base RTO of the first expiry chain of data (fitted to its backoff).
    pub rto_first_ms: Option<f64>,
    pub rto_min_ms: Option<f64>,
    pub rto_min_evidence: u32,
    pub rto_model: Option<&'static str>,
    pub delack_samples: Vec<DelackSample>,
    pub delayed_ack: Option<Dist>,
    pub delayed_ack_share: Option<f64>,
    pub transfer: Option<Dist>,
    pub max_gap_ms: Option<f64>,
    pub throughput_bps: f64,
    pub goodput_bps: f64,
}

/// Vantage from request/response latencies, as for SCTP (`infer::summary`): the requests of the
/// endpoint holding the capture take a full RTT (SYN -> SYN-ACK, data -> ACK); the peer's are
/// answered at once (SYN-ACK -> ACK, its data -> ACK).
fn vantage(a: Option<i64>, b: Option<i64>) -> (Vantage, String) {
    let ms = |x: i64| x as f64 / 1e6;
    match (a, b) {
        (Some(a), Some(b)) => {
            let ev = format!(
                "fastest answer to the data sender's segments {:.3} ms, to the peer's {:.3} ms",
                ms(a),
                ms(b)
            );
            let v = if b.saturating_mul(5) < a && a.saturating_sub(b) > NEAR_NS {
                Vantage::Sender
            } else if a.saturating_mul(5) < b && b.saturating_sub(a) > NEAR_NS {
                Vantage::Receiver
            } else if a > NEAR_NS && b > NEAR_NS {
                Vantage::Middle
            } else {
                Vantage::Unknown
            };
            (v, ev)
        }
        (Some(a), None) if a < NEAR_NS => (
            Vantage::Receiver,
            format!(
                "the data sender's segments are answered within {:.3} ms; the peer sent nothing to answer",
                ms(a)
            ),
        ),
        _ => (
            Vantage::Unknown,
            "no answered segments in both directions (SYN, SYN-ACK, data)".to_string(),
        ),
    }
}

pub fn summarise(f: &mut TcpFlow) {
    let resp = [f.dirs[0].resp_min_ns, f.dirs[1].resp_min_ns];
    let dur_s = (f.last_ns - f.first_ns) as f64 / 1e9;
    for s in 0..2 {
        // Directions that carried data, or at least retransmitted (a SYN, a FIN).
        if !f.dirs[s].has_data() && f.dirs[s].retransmissions.is_empty() {
            continue;
        }
        let (v, ev) = vantage(resp[s], resp[1 - s]);
        f.summary[s] = Some(Box::new(summarise_dir(&mut f.dirs[s], v, ev, dur_s)));
    }
}

/// A connection summarised when it settled (`TcpTracker::segment`) and seen again since (a late
/// ACK): the figures that come from live counters follow them (duration, rates, largest gap).
pub fn refresh(f: &mut TcpFlow) {
    let dur_s = (f.last_ns - f.first_ns) as f64 / 1e9;
    let rate = |b: u64| {
        if dur_s > 0.0 {
            8.0 * b as f64 / dur_s
        } else {
            0.0
        }
    };
    for s in 0..2 {
        let d = &f.dirs[s];
        if let Some(sum) = f.summary[s].as_deref_mut() {
            sum.throughput_bps = rate(d.data_bytes);
            sum.goodput_bps = rate(d.new_bytes);
            sum.max_gap_ms = (d.max_gap_ns > 0).then(|| d.max_gap_ns as f64 / 1e6);
        }
    }
}

/// Bytes over the connection's duration as bits per second (0 for a zero duration).
fn bits_per_s(bytes: u64, dur_s: f64) -> f64 {
    if dur_s > 0.0 {
        8.0 * bytes as f64 / dur_s
    } else {
        0.0
    }
}

fn summarise_dir(
    d: &mut TcpDir,
    vantage: Vantage,
    vantage_evidence: String,
    dur_s: f64,
) -> DirSummary {
    let at_sender = vantage == Vantage::Sender;
    // Base RTT (METRICS.md "RTT"): answers that are not delayed: the handshake, and ACKs of
    // two or more segments. Only at the sender is it a round trip.
    let base_rtt_ms = if at_sender {
        match (d.handshake_rtt_min, d.rtt_multi_min) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    } else {
        None
    };
    resolve_timeouts(&mut d.timeouts, at_sender);
    // Where the sender is visible, an outage starts when data was outstanding; at a receiver
    // only the last delivery is seen.
    if matches!(vantage, Vantage::Sender | Vantage::Middle) {
        for o in &mut d.outages {
            o.start_ns = o.data_since_ns;
            o.start_frame = o.data_since_frame;
        }
    }
    let (rto_min_ms, rto_min_evidence, rto_model) = if at_sender {
        rto_floor(&d.timeouts)
    } else {
        (None, 0, None)
    };
    let rto_first_ms = if at_sender {
        d.timeouts
            .iter()
            .find(|t| !t.handshake && t.backoff == 0)
            .and_then(|t| t.chain_rto_ms)
    } else {
        None
    };

    // Delayed ACK, as SACK delay in METRICS.md: lone ACKs; at the receiver the ACK latency, at
    // the sender that latency minus the base RTT.
    let mut delack_samples = Vec::new();
    for l in &d.lone_acks {
        let lat = l.latency_ns as f64 / 1e6;
        let delay = match vantage {
            Vantage::Receiver => Some(lat),
            Vantage::Sender => base_rtt_ms.map(|b| (lat - b).max(0.0)),
            _ => None,
        };
        if let Some(delay_ms) = delay {
            delack_samples.push(DelackSample {
                t_ns: l.t_ns,
                delay_ms,
                frame_data: l.frame_data,
                frame_ack: l.frame_ack,
            });
        }
    }
    // An ACK later than this was held by the delayed-ACK timer (RFC 9293 3.8.6.3).
    let threshold = 2.0f64.max(0.25 * base_rtt_ms.unwrap_or(0.0));
    let mut delayed = Samples::default();
    for x in delack_samples.iter().filter(|x| x.delay_ms > threshold) {
        delayed.push(x.delay_ms);
    }
    let delayed_ack_share =
        (!delack_samples.is_empty()).then(|| delayed.len() as f64 / delack_samples.len() as f64);
    // A few late ACKs are scheduling noise, not a timer: a delay is reported when enough lone
    // ACKs waited for it.
    let delayed_ack = if delayed.len() as usize >= MIN_DELAYED
        && delayed_ack_share.is_some_and(|x| x >= MIN_DELAYED_SHARE)
    {
        delayed.dist()
    } else {
        None
    };

    // Spurious retransmissions that need the vantage (METRICS.md "Retransmissions").
    for r in &mut d.retransmissions {
        if r.spurious.is_some() {
            continue;
        }
        match vantage {
            Vantage::Sender => {
                if let (Some(a), Some(b)) = (r.ack_delay_ns, base_rtt_ms) {
                    if (a as f64 / 1e6) < 0.8 * b {
                        r.spurious = Some(
                            "acknowledged sooner after the retransmission than the base RTT allows",
                        );
                    }
                }
            }
            Vantage::Receiver if r.orig_seen => {
                r.spurious = Some("original seen arriving at the receiver");
            }
            _ => {}
        }
    }
    let rtx = &d.retransmissions;
    let rtx_fast = rtx.iter().filter(|r| r.kind == RtxKind::Fast).count() as u64;
    let rtx_spurious = rtx.iter().filter(|r| r.spurious.is_some()).count() as u64;
    let rate = |b: u64| bits_per_s(b, dur_s);
    DirSummary {
        vantage,
        vantage_evidence,
        base_rtt_ms,
        rtt: if at_sender { d.rtt.dist() } else { None },
        ts_rtt: if at_sender { d.ts_rtt.dist() } else { None },
        rtx_total: rtx.len() as u64,
        rtx_fast,
        rtx_timeout: rtx.len() as u64 - rtx_fast,
        rtx_spurious,
        rto_first_ms,
        rto_min_ms,
        rto_min_evidence,
        rto_model,
        delack_samples,
        delayed_ack,
        delayed_ack_share,
        transfer: if at_sender || vantage == Vantage::Receiver {
            d.transfer_ms.dist()
        } else {
            None
        },
        max_gap_ms: (d.max_gap_ns > 0).then(|| d.max_gap_ns as f64 / 1e6),
        throughput_bps: rate(d.data_bytes),
        goodput_bps: rate(d.new_bytes),
    }
}

/// Observed RTO of each expiry (METRICS.md "RTO"): retransmission time minus the start of the
/// timer that expired. Only at the sender vantage; elsewhere the start is not visible.
///
/// For the first expiry of a chain two starts compete: RFC 6298 (5.1 send from idle, 5.3 ACK of
/// new data) and, with RACK-TLP (RFC 8985 7.3), the tail loss probe after which the timer is
/// re-armed. The backoff chain decides when there is one (the next expiry comes after twice the
/// RTO, RFC 6298 5.5); otherwise the probe is taken when it came after a silence of 1.5 SRTT
/// and implies an RTO of at least half the RFC 6298 one.
pub fn resolve_timeouts(ts: &mut [Timeout], at_sender: bool) {
    if !at_sender {
        for t in ts.iter_mut() {
            t.observed_rto_ns = None;
        }
        return;
    }
    for i in 0..ts.len() {
        let t = ts[i];
        if t.backoff > 0 {
            ts[i].observed_rto_ns = t.start_ns.map(|s| t.t_ns - s);
            continue;
        }
        let rfc = t.start_ns.map(|s| t.t_ns - s);
        let probe = t.probe.and_then(|(p, quiet)| {
            let r = t.t_ns - p;
            (rfc.is_none_or(|a| 2 * r >= a)).then_some((r, quiet))
        });
        let next = ts
            .get(i + 1)
            .filter(|n| n.backoff == 1 && n.start_ns == Some(t.t_ns));
        let take_probe = match (probe, next) {
            (Some((r, _)), Some(n)) => {
                let half = (n.t_ns - t.t_ns) / 2;
                rfc.is_none_or(|a| (r - half).abs() < (a - half).abs())
            }
            (Some((_, quiet)), None) => t.srtt_ms.is_some_and(|s| quiet as f64 / 1e6 >= 1.5 * s),
            (None, _) => false,
        };
        if take_probe {
            ts[i].observed_rto_ns = probe.map(|p| p.0);
            ts[i].timer_start = TimerStart::Probe;
        } else {
            ts[i].observed_rto_ns = rfc;
        }
    }
    // Fit each chain's base RTO: observed RTO k of a chain is base x 2^k (RFC 6298 5.5), with
    // the timer's own slack on each; summing all of them averages that slack out. A chain whose
    // intervals do not double keeps its first observation.
    let mut i = 0;
    while i < ts.len() {
        let mut j = i + 1;
        while j < ts.len() && ts[j].backoff == ts[j - 1].backoff + 1 {
            j += 1;
        }
        let obs: Vec<f64> = ts[i..j]
            .iter()
            .map_while(|t| t.observed_rto_ns.map(|n| n as f64 / 1e6))
            .collect();
        let doubles = obs.windows(2).all(|w| (1.6..=2.5).contains(&(w[1] / w[0])));
        ts[i].chain_rto_ms = match obs.len() {
            0 => None,
            1 => Some(obs[0]),
            2..=16 if doubles && ts[i].backoff == 0 => {
                let w: f64 = (0..obs.len()).map(|k| (1u64 << k) as f64).sum();
                Some(obs.iter().sum::<f64>() / w)
            }
            _ => Some(obs[0]),
        };
        i = j;
    }
}

/// The RTO floor (RTO.min) from first expiries of data whose RTO stayed well above the RFC 6298
/// estimate SRTT + 4 RTTVAR. Two models: Linux (`tcp_set_rto`) RTO = SRTT + max(4 RTTVAR,
/// rto_min), so rto_min = RTO - SRTT; RFC 6298 2.4 RTO = max(RTO.min, SRTT + 4 RTTVAR), so
/// RTO.min = RTO. With expiries at different SRTTs the model whose floor varies less wins;
/// otherwise a floor below 900 ms is taken as Linux (RFC 6298's floor is 1 s).
fn rto_floor(ts: &[Timeout]) -> (Option<f64>, u32, Option<&'static str>) {
    let mut ev: Vec<(f64, f64, f64)> = Vec::new();
    for t in ts.iter().filter(|t| t.backoff == 0 && !t.handshake) {
        let (Some(rto), Some(srtt)) = (t.chain_rto_ms, t.srtt_ms) else {
            continue;
        };
        let est = srtt + 4.0 * t.rttvar_ms;
        if rto > 1.25 * est + 5.0 {
            ev.push((srtt, rto - srtt, rto));
        }
    }
    if ev.is_empty() {
        return (None, 0, None);
    }
    let spread = |v: &[f64]| {
        v.iter().cloned().fold(f64::MIN, f64::max) - v.iter().cloned().fold(f64::MAX, f64::min)
    };
    let lin: Vec<f64> = ev.iter().map(|e| e.1).collect();
    let rfc: Vec<f64> = ev.iter().map(|e| e.2).collect();
    let srtts: Vec<f64> = ev.iter().map(|e| e.0).collect();
    let use_rfc = if ev.len() >= 2 && spread(&srtts) > 20.0 {
        spread(&rfc) < spread(&lin)
    } else {
        median(&rfc).is_some_and(|m| m >= 900.0)
    };
    let (vals, model) = if use_rfc {
        (rfc, MODEL_RFC6298)
    } else {
        (lin, MODEL_LINUX)
    };
    (median(&vals), ev.len() as u32, Some(model))
}
