//! JSON contract of the timer inference (issue "Timer inference"): per-direction figures and
//! per-path RTT, built from `infer::AssocInfer` after the pass.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::assoc::Association;
use crate::decimal::Fixed;
use crate::infer::direction::{DirInfer, DstState};
use crate::infer::stats::Dist;
use crate::infer::summary::Vantage;
use crate::packet::TimeBase;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RtxCounts {
    pub total: u64,
    pub fast: u64,
    pub timeout: u64,
    pub spurious: u64,
    /// Resent chunks whose earlier copy reached the peer, which discarded it (another chunk of
    /// its packet was acknowledged; at the receiver vantage also: TSNs that arrived after it were
    /// acknowledged, not it): needed retransmissions caused by the receiver, not the path.
    /// SCTP only (a TCP segment is one unit): absent for TCP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_discarded: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TimeoutReport {
    pub t_s: f64,
    /// Destination whose T3-rtx timer expired.
    pub path: String,
    /// Destination the retransmission was sent to.
    pub to: String,
    pub observed_rto_ms: Option<f64>,
    pub backoff: u32,
    /// How the expired timer had been started: send, sack, expiry, unknown.
    pub timer_start: String,
    pub est_rto_ms: Option<f64>,
    pub chunks: u32,
    pub tsn: u32,
    pub frame: u64,
    pub filter: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FailoverReport {
    pub t_s: f64,
    pub from: String,
    pub to: String,
    pub outage_start_s: Option<f64>,
    pub failover_ms: Option<f64>,
    pub timeouts: u32,
    pub spurious: bool,
    pub cause: Option<String>,
    pub recommendation: Option<String>,
    pub evidence: Vec<String>,
    pub path_max_retrans: Option<u32>,
    pub frame: u64,
    pub outage_frame: Option<u64>,
    pub filter: String,
    /// Which rule moved the new DATA: "rfc" (RFC 9260 8.2) or "pf" (RFC 7829); null unknown.
    #[serde(default)]
    pub policy: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FailbackReport {
    pub t_s: f64,
    pub to: String,
    pub frame: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DirectionReport {
    pub sender: u8,
    pub vantage: String,
    pub vantage_evidence: String,
    pub data_chunks: u64,
    pub data_packets: u64,
    pub retransmissions: RtxCounts,
    pub base_rtt_ms: Option<f64>,
    pub sack_delay_ms: Option<Dist>,
    pub sack_every: Option<f64>,
    pub delayed_sack_share: Option<f64>,
    pub sacks_per_data_packet: Option<f64>,
    pub ibit_share: f64,
    pub timeouts: Vec<TimeoutReport>,
    /// Whether the sender restarts T3-rtx when a SACK advances the cumulative ack (RFC 9260
    /// 6.3.2 R3); false for FreeBSD/usrsctp-like stacks; null without evidence.
    pub t3_restart_on_sack: Option<bool>,
    pub rto_min_ms: Option<f64>,
    pub rto_min_evidence: u32,
    pub rto_max_ms: Option<f64>,
    pub rto_max_evidence: u32,
    pub rto_initial_ms: Option<f64>,
    pub rto_initial_evidence: u32,
    pub path_max_retrans: Option<u32>,
    pub pmr_evidence: u32,
    /// "pf" (RFC 7829: new DATA moved before the path could be inactive) or "rfc" (after
    /// Path.Max.Retrans + 1 expiries, RFC 9260 8.2); null without evidence.
    #[serde(default)]
    pub failover_policy: Option<String>,
    #[serde(default)]
    pub pf_retrans: Option<u32>,
    #[serde(default)]
    pub policy_evidence: Option<String>,
    pub max_transfer_ms: Option<f64>,
    pub p95_transfer_ms: Option<f64>,
    pub message_interval_ms: Option<f64>,
    pub burstiness: Option<String>,
    pub max_gap_ms: Option<f64>,
    pub deadline_missed: Option<u64>,
    pub failovers: Vec<FailoverReport>,
    pub failbacks: Vec<FailbackReport>,
    /// Per stream of this direction, by stream id (issue 15, `streams::Streams::direction`).
    #[serde(default)]
    pub streams: Vec<crate::streams::StreamReport>,
    /// Messages on streams past the 1024 tracked per direction.
    #[serde(default)]
    pub streams_untracked_messages: u64,
    /// Zero windows, path MTU black holes and frozen cumulative acks of this direction
    /// (`stalls`, issue 15).
    #[serde(default)]
    pub stalls: Vec<crate::stalls::StallReport>,
    /// Head-of-line blocking of this direction and its one-stream counterfactual (`hol`,
    /// issue 15); null without DATA or without the times its vantage needs.
    #[serde(default)]
    pub hol: Option<Box<crate::hol::HolReport>>,
    /// Why `hol` is null although the direction carried DATA; null otherwise.
    #[serde(default)]
    pub hol_missing: Option<String>,
}

/// Per-path inference figures, merged into the path rows.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct PathInfer {
    pub rtt_ms: Option<Dist>,
    pub hb_rtt_ms: Option<Dist>,
    pub retransmissions: u64,
    pub new_data_chunks: u64,
    /// Time between two HEARTBEATs the path's sender sent to its destination while it was idle
    /// and answering (RFC 9260 8.3; `infer::heartbeat`).
    #[serde(default)]
    pub hb_period_ms: Option<Dist>,
    /// The heartbeat interval those periods show: their median minus the destination's RTO;
    /// null when the RTO is not known from the capture or fewer than two periods were seen.
    #[serde(default)]
    pub hb_interval_ms: Option<f64>,
    /// How the heartbeat figures were found, in words.
    #[serde(default)]
    pub hb_evidence: Option<String>,
    /// How long the sender would take to declare this destination inactive if it died while
    /// idle (`infer::whatif::dead_idle_path_ms`), seconds.
    #[serde(default)]
    pub dead_path_detect_s: Option<f64>,
}

fn ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}

/// Wireshark display filter for one DATA chunk (raw TSN, so relative TSNs do not matter).
fn tsn_filter(tsn: u32, vtag: Option<u32>) -> String {
    let mut f = String::with_capacity(72);
    f.push_str("sctp.data_tsn_raw == ");
    f.push_str(itoa::Buffer::new().format(tsn));
    if let Some(v) = vtag {
        f.push_str(" && sctp.verification_tag == 0x");
        f.push_str(crate::decimal::Hex8::new(v).as_str());
    }
    f
}

/// The directions of an association that carried DATA.
pub fn directions(c: TimeBase, a: &Association) -> Vec<DirectionReport> {
    let mut out = Vec::new();
    for s in 0..2usize {
        let Some(sum) = &a.infer.summary[s] else {
            continue;
        };
        let dir = &a.infer.dirs[s];
        let peer_tag = a.endpoints[1 - s].vtag;
        // Each destination's text once; rows (timeouts, failovers) clone it.
        let names: Vec<String> = dir
            .dsts
            .iter()
            .map(|d| crate::net::ip_text(&d.addr))
            .collect();
        let addr = |p: u16| names.get(p as usize).cloned().unwrap_or_default();
        let (spurious, peer_discarded) =
            dir.retransmissions.iter().fold((0u64, 0u64), |(s, d), r| {
                (
                    s + u64::from(r.spurious.is_some()),
                    d + u64::from(r.peer_discarded.is_some()),
                )
            });
        out.push(DirectionReport {
            sender: s as u8,
            vantage: sum.vantage.as_str().to_string(),
            vantage_evidence: sum.vantage_evidence.clone(),
            data_chunks: dir.data_chunks,
            data_packets: dir.data_packets,
            retransmissions: RtxCounts {
                total: dir.rtx_fast + dir.rtx_timeout,
                fast: dir.rtx_fast,
                timeout: dir.rtx_timeout,
                spurious,
                peer_discarded: Some(peer_discarded),
            },
            base_rtt_ms: sum.base_rtt_ms,
            sack_delay_ms: sum.sack_delay,
            sack_every: sum.sack_every,
            delayed_sack_share: sum.delayed_sack_share,
            sacks_per_data_packet: sum.sacks_per_data_packet,
            ibit_share: sum.ibit_share,
            timeouts: dir
                .timeouts
                .iter()
                .map(|t| TimeoutReport {
                    t_s: c.rel_s(t.t_ns),
                    path: addr(t.path),
                    to: addr(t.to_path),
                    observed_rto_ms: t.observed_rto_ns.map(ms),
                    backoff: t.backoff,
                    timer_start: t.timer_start.as_str().to_string(),
                    est_rto_ms: t.est_rto_ms,
                    chunks: t.chunks,
                    tsn: t.first_tsn,
                    frame: t.frame,
                    filter: tsn_filter(t.first_tsn, peer_tag),
                })
                .collect(),
            t3_restart_on_sack: sum.t3_restart_on_sack,
            rto_min_ms: sum.rto_min_ms,
            rto_min_evidence: sum.rto_min_evidence,
            rto_max_ms: sum.rto_max_ms,
            rto_max_evidence: sum.rto_max_evidence,
            rto_initial_ms: sum.rto_initial_ms,
            rto_initial_evidence: sum.rto_initial_evidence,
            path_max_retrans: sum.path_max_retrans,
            pmr_evidence: sum.pmr_evidence,
            failover_policy: sum.failover_policy.map(str::to_string),
            pf_retrans: sum.pf_retrans,
            policy_evidence: sum.policy_evidence.clone(),
            max_transfer_ms: sum.transfer_ms.map(|d| d.max),
            p95_transfer_ms: sum.transfer_ms.map(|d| d.p95),
            message_interval_ms: sum.message_interval_ms,
            burstiness: sum.burstiness.map(str::to_string),
            max_gap_ms: sum.max_gap_ms,
            deadline_missed: sum.deadline_missed,
            failovers: dir
                .failovers
                .iter()
                .map(|f| FailoverReport {
                    t_s: c.rel_s(f.t_ns),
                    from: addr(f.from),
                    to: addr(f.to),
                    outage_start_s: f.outage_start_ns.map(|t| c.rel_s(t)),
                    failover_ms: f.outage_start_ns.map(|t| ms(f.t_ns - t)),
                    timeouts: f.timeouts.len() as u32,
                    spurious: f.spurious,
                    cause: f.cause.map(str::to_string),
                    recommendation: f.recommendation.clone(),
                    evidence: f.evidence.clone(),
                    path_max_retrans: f.pmr,
                    frame: f.frame,
                    outage_frame: f.outage_frame,
                    filter: match f.outage_frame {
                        Some(o) => {
                            format!("frame.number >= {o} && frame.number <= {} && sctp", f.frame)
                        }
                        None => format!("frame.number == {}", f.frame),
                    },
                    policy: f.policy.map(|p| p.as_str().to_string()),
                })
                .collect(),
            failbacks: dir
                .failbacks
                .iter()
                .map(|b| FailbackReport {
                    t_s: c.rel_s(b.t_ns),
                    to: addr(b.to),
                    frame: b.frame,
                })
                .collect(),
            streams: stream_reports(c, a, s as u8),
            streams_untracked_messages: a.streams.untracked_messages(s as u8),
            stalls: stall_reports(c, a, s as u8),
            hol: a.hol.report(s as u8, sum.vantage, a.last_ns).map(Box::new),
            hol_missing: a
                .hol
                .missing_reason(s as u8, sum.vantage)
                .map(str::to_string),
        });
    }
    out
}

/// Inference figures of the path row (sender, dst); RTTs only where the vantage supports them.
pub fn path_infer(a: &Association, sender: u8, dst: std::net::IpAddr) -> PathInfer {
    let dir: &DirInfer = &a.infer.dirs[sender as usize];
    let Some(d) = dir.dsts.iter().find(|d| d.addr == dst) else {
        return PathInfer::default();
    };
    let data_vantage = a.infer.summary[sender as usize].as_ref().map(|s| s.vantage);
    let at_sender = a.infer.capture_at(sender as usize);
    PathInfer {
        rtt_ms: if data_vantage == Some(Vantage::Sender) {
            d.rtt.dist()
        } else {
            None
        },
        hb_rtt_ms: if at_sender { d.hb_rtt.dist() } else { None },
        retransmissions: d.retransmissions,
        new_data_chunks: d.new_data_chunks,
        ..heartbeat_figures(a, sender, d)
    }
}

/// The streams of DATA sender `s` with their head-of-line figures (`directions[i].streams`, the
/// `streams` DataFrame): the HOL fields stay null without the direction's summary (no DATA).
pub(crate) fn stream_reports(
    c: TimeBase,
    a: &Association,
    s: u8,
) -> Vec<crate::streams::StreamReport> {
    let mut rows = a.streams.direction(c, s);
    if let Some(sum) = &a.infer.summary[usize::from(s)] {
        for r in &mut rows {
            if let Some((blocked, delay)) = a.hol.stream(s, sum.vantage, r.stream) {
                r.hol_blocked_messages = Some(blocked);
                r.hol_delay_ms = delay;
            }
        }
    }
    rows
}

/// The stalls of DATA sender `s` (`directions[i].stalls`, the `stalls` DataFrame).
pub(crate) fn stall_reports(
    c: TimeBase,
    a: &Association,
    s: u8,
) -> Vec<crate::stalls::StallReport> {
    a.stalls.report(
        c,
        s,
        stall_rto_ms(a, usize::from(s)),
        a.last_ns,
        [a.endpoints[0].vtag, a.endpoints[1].vtag],
    )
}

/// The sender's RTO for the max(1 s, 3 RTO) of a frozen cumulative ack: its longest observed
/// first-expiry RTO, else the claimed RTO.min with its destinations' largest estimate.
fn stall_rto_ms(a: &Association, s: usize) -> Option<f64> {
    let dir = &a.infer.dirs[s];
    let observed = dir
        .timeouts
        .iter()
        .filter(|t| t.backoff == 0)
        .filter_map(|t| t.observed_rto_ns)
        .max()
        .map(ms);
    observed.or_else(|| {
        let min = a.infer.summary[s].as_ref()?.rto_min_ms?;
        let est = dir
            .dsts
            .iter()
            .filter_map(|d| d.est_rto_ms())
            .fold(0.0, f64::max);
        Some(min.max(est))
    })
}

/// The floor of the sender's RTO (RTO.min) as far as the trace tells: the claimed RTO.min, else
/// the shortest observed RTO of a first expiry (backoff 0, max(RTO.min, estimate) then). With
/// where it came from.
fn rto_floor_ms(a: &Association, sender: u8) -> Option<(f64, String)> {
    let s = usize::from(sender & 1);
    let sum = a.infer.summary[s].as_ref();
    if let Some(min) = sum.and_then(|x| x.rto_min_ms) {
        return Some((min, format!("the inferred RTO.min {} ms", Fixed(min, 0))));
    }
    // Expiries are timed where the timer runs: at the sender only.
    if sum.is_none_or(|x| x.vantage != Vantage::Sender) {
        return None;
    }
    // `observed_rto_ns` holds what the stack's timer model gives (`summary::apply_timer_model`:
    // FreeBSD / usrsctp do not restart T3-rtx on a SACK).
    a.infer.dirs[s]
        .timeouts
        .iter()
        .filter(|t| t.backoff == 0)
        .filter_map(|t| {
            let o = t.observed_rto_ns?;
            // An RTO is at least the RFC 9260 6.3.1 estimate: an expiry sooner than that is no
            // T3-rtx measure (a window probe of a closed window, RFC 9260 6.1 A).
            t.est_rto_ms
                .is_some_and(|e| o as f64 / 1e6 >= 0.9 * e)
                .then_some(o)
        })
        .min()
        .map(|r| {
            let r = ms(r);
            (
                r,
                format!(
                    "the shortest RTO of the sender's first T3-rtx expiries, {} ms, as its floor",
                    Fixed(r, 0)
                ),
            )
        })
}

/// Heartbeat period, interval and dead idle path time of one path (RFC 9260 8.3).
pub(crate) fn heartbeat_figures(a: &Association, sender: u8, d: &DstState) -> PathInfer {
    let Some(period) = d.hb_period.dist() else {
        return PathInfer::default();
    };
    let s = usize::from(sender & 1);
    let mut ev = format!(
        "{} HEARTBEATs to {}; {} idle period{} between answered ones (median {} ms, {}-{} ms)",
        d.hb_period.sent,
        crate::net::Ip(d.addr),
        period.n,
        if period.n == 1 { "" } else { "s" },
        Fixed(period.median, 0),
        Fixed(period.min, 0),
        Fixed(period.max, 0)
    );
    let floor = rto_floor_ms(a, sender);
    let ticks = a.infer.tick_estimator[s] == Some(true);
    let periods = d.hb_period.periods();
    let found = floor
        .as_ref()
        .and_then(|(f, _)| crate::infer::heartbeat::interval_ms(periods, *f, ticks));
    // The interval must dominate the jitter (HB.interval >= RTO): below that, period - RTO says
    // more of the RTO assumed than of the interval (a floor taken from expiries may be far off).
    let found = found.filter(|i| floor.as_ref().is_some_and(|(f, _)| i.ms >= *f));
    // Without a claimed RTO.min the floor is a first expiry's RTO: RTO.min is at most that, so
    // the idle destination's RTO lies between its own estimate and it. When the intervals the
    // two give differ by more than a tenth, the capture does not tell the interval: `apart`
    // holds both (with the floor, with the estimate alone).
    let claimed = a.infer.summary[s]
        .as_ref()
        .is_some_and(|x| x.rto_min_ms.is_some());
    let apart =
        found.filter(|_| !claimed).and_then(|i| {
            match crate::infer::heartbeat::interval_ms(periods, 0.0, ticks) {
                Some(high) if high.ms - i.ms <= 0.1 * i.ms => None,
                high => Some((i.ms, high.map(|x| x.ms))),
            }
        });
    let found = found.filter(|_| apart.is_none());
    // Too few periods for the RTO's jitter: the interval is told in words, with its error, and
    // not claimed.
    let imprecise = found.filter(|i| !i.precise());
    let found = found.filter(|i| i.precise());
    let interval = found.map(|i| i.ms);
    // The 10 ms tick estimator is set for a Linux stack, and only for one
    // (`Association::timer_model_from_stack`): its knob names are Linux's.
    let linux = ticks;
    match (&floor, found) {
        (Some((_, from)), Some(crate::infer::heartbeat::Interval { ms: h, n: kept, .. })) => {
            let _ = write!(
                ev,
                ": heartbeat interval about {} ms{} ({}), the median of period - RTO{}, the RTO being max(RTO.min, the destination's estimate{}) with {from} (RFC 9260 8.3: a HEARTBEAT every RTO + HB.interval, the RTO jittered by 50% either way)",
                Fixed(h, 0),
                crate::infer::settings::hb_interval_default(linux, h),
                crate::infer::settings::hb_interval(linux),
                if kept < periods.len() {
                    format!(
                        " over {kept} of them (the others lost or skipped a probe: more than one RTO longer)"
                    )
                } else {
                    String::new()
                },
                if ticks { " in 10 ms ticks" } else { "" }
            );
        }
        (Some((f, from)), None) => match apart {
            Some((low, high)) => {
                let _ = write!(
                    ev,
                    ": no heartbeat interval: the sender's RTO.min is not known, only that it is at most {from}; with the destination's own estimate as its RTO the periods give {}, with that floor {} ms (RFC 9260 8.3: a HEARTBEAT every RTO + HB.interval)",
                    high.map_or("no interval".to_string(), |x| format!("{} ms", Fixed(x, 0))),
                    Fixed(low, 0),
                );
            }
            None => match imprecise {
                Some(i) => {
                    let _ = write!(
                        ev,
                        ": no heartbeat interval: {} period{} of an RTO of about {} ms or more, each jittered by a random part of one RTO, give {} ms give or take {} ms (two standard errors), more than a tenth (RFC 9260 8.3: a HEARTBEAT every RTO + HB.interval, the RTO jittered by 50% either way)",
                        i.n,
                        if i.n == 1 { "" } else { "s" },
                        Fixed(*f, 0),
                        Fixed(i.ms, 0),
                        Fixed(2.0 * i.se_ms, 0),
                    );
                }
                None => {
                    let _ = write!(
                        ev,
                        ": no heartbeat interval: too few periods, or periods that an RTO of {} ms does not leave an interval of at least one RTO in",
                        Fixed(*f, 0)
                    );
                }
            },
        },
        (None, _) => ev.push_str(
            ": no heartbeat interval, the sender's RTO.min is not known from the capture (no T3-rtx expiry, none claimed); the period is HB.interval + RTO (RFC 9260 8.3)",
        ),
    }
    let mut dead = None;
    if let (Some((f, _)), Some(h)) = (&floor, interval) {
        let sum = a.infer.summary[s].as_ref();
        let est = if ticks {
            d.est_rto_coarse_ms()
        } else {
            d.est_rto_ms()
        };
        let rto = f.max(est.unwrap_or(0.0));
        let (pmr, pmr_from) = match sum.and_then(|x| x.path_max_retrans) {
            Some(p) => (p, "the inferred Path.Max.Retrans"),
            None => (
                5,
                "Path.Max.Retrans assumed at 5, the RFC, Linux and usrsctp default,",
            ),
        };
        let rto_max = sum.and_then(|x| x.rto_max_ms);
        let t = crate::infer::whatif::dead_idle_path_ms(h, rto, pmr, rto_max, linux) / 1e3;
        dead = Some(t);
        let _ = write!(
            ev,
            ". Dead while idle, it would be declared inactive about {} s after its first unanswered HEARTBEAT: {} strikes ({pmr_from} {pmr}, + 1) from an RTO of {} ms, each doubling it{}",
            Fixed(t, 1),
            pmr + 1,
            Fixed(rto, 0),
            if linux {
                ", a Linux strike coming when the next heartbeat timer fires"
            } else {
                ""
            }
        );
    }
    PathInfer {
        hb_period_ms: Some(period),
        hb_interval_ms: interval,
        hb_evidence: Some(ev),
        dead_path_detect_s: dead,
        ..PathInfer::default()
    }
}
