//! The association page: endpoints, paths, the diagnosis (how the association ended, failovers),
//! the lifecycle events, timers and charts. Every figure comes from the stored `CaptureReport`.

use analyzer::infer::settings as set;
use analyzer::report::AssocReport;
use analyzer::report_infer::DirectionReport;
use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};

use crate::api::{done_report, entry, find_assoc};
use crate::error::AppError;
use crate::help::{self, Def};
use crate::hol_view::{hol_view, HolView};
use crate::lifecycle::{self, EndPanel, EventRow};
use crate::pages::{pending, table_links, TableLink};
use crate::store::Status;
use crate::streams_view::{self, StackView, StreamProblem, StreamsSection};
use crate::views::{self, ms, opt, opt_s, pct, round, secs, NONE};
use crate::AppState;

pub struct PathRow {
    pub sender: u8,
    pub src: String,
    pub dst: String,
    pub packets: u64,
    pub data_chunks: u64,
    pub new_data: u64,
    pub data_bytes: u64,
    pub rtt: String,
    pub hb_rtt: String,
    /// Heartbeat period median / inferred interval, and dead idle path time (RFC 9260 8.3).
    pub hb: String,
    pub hb_evidence: String,
    pub sack_delay: String,
    pub rto: String,
    pub timeouts: usize,
    pub rtx: u64,
    pub active: String,
}

pub struct TimeoutRow {
    pub t_s: String,
    pub path: String,
    pub to: String,
    pub observed_rto: String,
    pub backoff: u32,
    pub timer_start: String,
    pub est_rto: String,
    pub chunks: u32,
    pub tsn: u32,
    pub frame: u64,
    pub filter: String,
    /// The window "show in charts" zooms to (s): the timer's start to the expiry.
    pub zoom: (String, String),
}

pub struct FailoverRow {
    pub sender: u8,
    pub t_s: String,
    pub from: String,
    pub to: String,
    pub outage_start: String,
    /// Exactly as in the JSON.
    pub failover_ms: String,
    pub timeouts: u32,
    pub spurious: bool,
    pub cause: String,
    pub recommendation: String,
    pub evidence: Vec<String>,
    pub pmr: String,
    pub frame: u64,
    pub outage_frame: String,
    pub filter: String,
    /// The rule that moved the new DATA, in words ("" when unknown).
    pub policy: String,
    /// The T3-rtx expiries on the old destination from the outage's start to the failover,
    /// each with its observed RTO and backoff (RFC 9260 6.3.3).
    pub chain: Vec<String>,
    /// The window "show in charts" zooms to (s): the outage start to the failover.
    pub zoom: (String, String),
}

/// Cards of one sender with the same kind and cause, the first shown and the others behind
/// "show all" (issue 16 part 1): failovers (same policy too) and stalls.
pub struct CardGroup {
    /// Index in the page's list (`failovers`, `stalls`) of each card of the group, in time order.
    pub members: Vec<usize>,
    /// "9 spurious failovers of DATA sender 0, same cause: ...".
    pub heading: String,
}

/// Indices of `rows` grouped by `key`, each group in the order of its first row.
fn group_by<T, K: PartialEq>(rows: &[T], key: impl Fn(&T) -> K) -> Vec<Vec<usize>> {
    let mut groups: Vec<(K, Vec<usize>)> = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let k = key(r);
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, members)) => members.push(i),
            None => groups.push((k, vec![i])),
        }
    }
    groups.into_iter().map(|(_, m)| m).collect()
}

/// Stall cards of one sender with the same cause.
fn group_stalls(rows: &[StallRow]) -> Vec<CardGroup> {
    group_by(rows, |st| (st.sender, st.kind.clone()))
        .into_iter()
        .map(|members| {
            let st = &rows[members[0]];
            let heading = if members.len() > 1 {
                format!(
                    "{} stalls of DATA sender {}, same cause: {}",
                    members.len(),
                    st.sender,
                    st.cause
                )
            } else {
                String::new()
            };
            CardGroup { members, heading }
        })
        .collect()
}

/// Tables of the association page longer than this are collapsed behind their summary line.
pub const COLLAPSE_ROWS: usize = 20;

fn group_failovers(rows: &[FailoverRow]) -> Vec<CardGroup> {
    // Recommendations carry each failover's own figures (its RTO): not part of the key.
    group_by(rows, |f| {
        (f.spurious, f.sender, f.cause.clone(), f.policy.clone())
    })
    .into_iter()
    .map(|members| {
        let f = &rows[members[0]];
        let heading = if members.len() > 1 {
            format!(
                "{} {}failovers of DATA sender {}, same cause: {}",
                members.len(),
                if f.spurious { "spurious " } else { "" },
                f.sender,
                f.cause
            )
        } else {
            String::new()
        };
        CardGroup { members, heading }
    })
    .collect()
}

/// "96 failovers from 1.2 s to 500.1 s".
fn summary_line(n: usize, what: &str, first: Option<&str>, last: Option<&str>) -> String {
    let plural = if n == 1 { "" } else { "s" };
    match (first, last) {
        (Some(a), Some(b)) if n > 1 => format!("{n} {what}{plural} from {a} s to {b} s"),
        (Some(a), _) => format!("{n} {what}{plural} at {a} s"),
        _ => format!("{n} {what}{plural}"),
    }
}

pub struct EndpointRow {
    pub i: usize,
    pub port: u16,
    pub vtag: String,
    pub addrs: String,
    pub stack: StackView,
}

pub struct DirView {
    pub sender: u8,
    pub title: String,
    pub items: Vec<(Def, String)>,
    pub timeouts: Vec<TimeoutRow>,
    /// "647 T3-rtx timeouts from 1.2 s to 300.0 s, backoff up to 6".
    pub timeouts_summary: String,
    pub failbacks: Vec<(String, String, u64)>,
    /// Head-of-line blocking (issue 15 section 2); None when the direction carried no DATA.
    pub hol: Option<HolView>,
}

#[derive(Template, WebTemplate)]
#[template(path = "association.html")]
pub struct AssocPage {
    pub title: String,
    pub id: String,
    pub name: String,
    pub n: usize,
    pub head: Vec<(Def, String)>,
    pub endpoints: Vec<EndpointRow>,
    pub paths: Vec<PathRow>,
    pub dirs: Vec<DirView>,
    pub failovers: Vec<FailoverRow>,
    /// The failover cards, those of one sender with the same kind, cause and policy grouped:
    /// the first shown, the others behind "show all".
    pub failover_groups: Vec<CardGroup>,
    /// "96 failovers from 1.2 s to 500.1 s, 9 spurious" (the collapsed table's summary).
    pub failover_summary: String,
    /// Tables longer than this are collapsed behind their summary line.
    pub collapse: usize,
    pub senders: Vec<u8>,
    pub sender: u8,
    pub tables: Vec<TableLink>,
    /// Wireshark display filter of the whole association ("Filter this association").
    pub filter: String,
    pub end: EndPanel,
    pub events: Vec<EventRow>,
    /// "647 lifecycle events from 0.1 s to 300.2 s".
    pub events_summary: String,
    pub events_dropped: u64,
    pub after_end_packets: u64,
    /// Upper layer, negotiated streams, the streams of each direction.
    pub streams: StreamsSection,
    /// Invalid streams and missing PPIDs (diagnosis).
    pub problems: Vec<StreamProblem>,
    /// Zero windows, path MTU black holes, frozen cumulative acks (issue 15), in words.
    pub stalls: Vec<StallRow>,
    pub stall_groups: Vec<CardGroup>,
    /// Why there are no charts (no DATA captured), "" when there are.
    pub no_data: String,
}

/// Why an association has no charts: every chart plots DATA (TSNs, RTT samples, throughput,
/// SACK delays, the paths DATA took).
fn no_data_words(a: &AssocReport, chunks: &str) -> String {
    let data: u64 = a
        .chunks
        .iter()
        .filter(|(k, _)| k.as_str() == "DATA" || k.as_str() == "I-DATA")
        .map(|(_, v)| *v)
        .sum();
    if data > 0 {
        return String::new();
    }
    format!(
        "No charts: the capture holds no DATA chunk of this association ({} packet{}: {}). \
         Every chart plots DATA — TSNs, RTT samples, throughput, SACK delays and the paths the \
         DATA took — so there is nothing to draw; the lifecycle table above tells what happened.",
        a.packets,
        if a.packets == 1 { "" } else { "s" },
        if chunks.is_empty() {
            "no chunk"
        } else {
            chunks
        }
    )
}

pub struct StallRow {
    pub sender: u8,
    pub cause: String,
    /// The cause's identifier (`data-cause`).
    pub kind: String,
    pub when: String,
    pub evidence: String,
    pub filter: String,
    /// The window "show in charts" zooms to (s).
    pub zoom: (String, String),
}

fn stall_words(cause: &str) -> String {
    help::words("stall_cause", cause)
}

fn dir_label(a: &AssocReport, s: u8) -> String {
    let port = |i: usize| a.endpoints.get(i).map_or(0, |e| e.port);
    format!(
        "DATA sender {s} (port {} → port {})",
        port(s as usize),
        port(1 - s as usize)
    )
}

/// The RTO RFC 9260 6.3.1 gives at a timeout: max(RTO.min, SRTT + 4 RTTVAR) (at most RTO.max)
/// with the direction's inferred RTO.min, the raw SRTT + 4 RTTVAR beside it; without an
/// inferred RTO.min only the raw estimate, named as what it is.
pub(crate) fn rfc_rto(est: Option<f64>, d: &DirectionReport) -> String {
    let Some(e) = est else {
        return NONE.into();
    };
    match d.rto_min_ms {
        Some(min) => {
            let rto = e.max(min).min(d.rto_max_ms.unwrap_or(f64::INFINITY));
            format!("{} (SRTT + 4 RTTVAR {})", round(rto, 1), round(e, 1))
        }
        None => format!("SRTT + 4 RTTVAR {} (RTO.min unknown)", round(e, 1)),
    }
}

fn dir_view(a: &AssocReport, d: &DirectionReport) -> DirView {
    let dist = |x: Option<analyzer::infer::stats::Dist>| {
        x.map_or(NONE.to_string(), |d| {
            format!(
                "median {} (min {}, p95 {}, max {}, n {})",
                round(d.median, 3),
                round(d.min, 3),
                round(d.p95, 3),
                round(d.max, 3),
                d.n
            )
        })
    };
    let ev = |v: Option<f64>, n: u32| match v {
        Some(v) => format!("{} ({n} evidence)", round(v, 3)),
        None => NONE.to_string(),
    };
    let rx = &d.retransmissions;
    // Linux defaults named with their knobs (analyzer::infer::settings).
    let is_linux = |e: usize| {
        a.endpoints
            .get(e)
            .is_some_and(|x| x.stack.name.as_deref() == Some("linux"))
    };
    let (me, peer) = (usize::from(d.sender), 1 - usize::from(d.sender & 1));
    let sack_delay = match d.sack_delay_ms {
        Some(x) => format!(
            "{}{} — {}",
            dist(Some(x)),
            set::sack_delay_default(is_linux(peer), x.median),
            set::sack_delay(is_linux(peer))
        ),
        None => NONE.into(),
    };
    let rto_min = match d.rto_min_ms {
        Some(v) => format!(
            "{}{} — {}",
            ev(Some(v), d.rto_min_evidence),
            set::rto_min_default(is_linux(me), v),
            set::rto_min(is_linux(me))
        ),
        None => NONE.into(),
    };
    DirView {
        sender: d.sender,
        title: dir_label(a, d.sender),
        items: vec![
            (
                Def::of("vantage"),
                format!(
                    "{} — {}",
                    help::words("vantage", &d.vantage),
                    d.vantage_evidence
                ),
            ),
            (
                Def::new("packets", "DATA chunks / packets"),
                format!("{} / {}", d.data_chunks, d.data_packets),
            ),
            (
                Def::of("retransmissions"),
                format!(
                    "{} (fast {}, timeout {}, spurious {})",
                    rx.total, rx.fast, rx.timeout, rx.spurious
                ),
            ),
            (Def::of("base_rtt"), ms(d.base_rtt_ms)),
            (Def::of("sack_delay"), sack_delay),
            (
                Def::of("sack_every"),
                d.sack_every.map_or(NONE.into(), |v| round(v, 2)),
            ),
            (Def::of("delayed_sack_share"), pct(d.delayed_sack_share)),
            (
                Def::of("sacks_per_data_packet"),
                d.sacks_per_data_packet.map_or(NONE.into(), |v| round(v, 3)),
            ),
            (Def::of("ibit_share"), pct(Some(d.ibit_share))),
            (Def::of("rto_min"), rto_min),
            (Def::of("rto_max"), ev(d.rto_max_ms, d.rto_max_evidence)),
            (
                Def::of("rto_initial"),
                ev(d.rto_initial_ms, d.rto_initial_evidence),
            ),
            (
                Def::of("pmr"),
                match d.path_max_retrans {
                    Some(p) => format!("{p} ({} evidence)", d.pmr_evidence),
                    None => NONE.into(),
                },
            ),
            (
                Def::of("failover_policy"),
                streams_view::direction_policy(a, d),
            ),
            (
                Def::of("transfer"),
                format!("{} / {}", ms(d.max_transfer_ms), ms(d.p95_transfer_ms)),
            ),
            (Def::of("message_interval"), ms(d.message_interval_ms)),
            (
                Def::of("burstiness"),
                d.burstiness
                    .as_deref()
                    .map_or(NONE.into(), |b| help::words("burstiness", b)),
            ),
            (Def::of("max_gap"), ms(d.max_gap_ms)),
            (Def::of("deadline_missed"), opt(d.deadline_missed)),
        ],
        timeouts: d
            .timeouts
            .iter()
            .map(|t| TimeoutRow {
                t_s: secs(t.t_s),
                path: t.path.clone(),
                to: t.to.clone(),
                observed_rto: ms(t.observed_rto_ms),
                backoff: t.backoff,
                timer_start: help::words("timer_start", &t.timer_start),
                est_rto: rfc_rto(t.est_rto_ms, d),
                chunks: t.chunks,
                tsn: t.tsn,
                frame: t.frame,
                filter: t.filter.clone(),
                zoom: (
                    secs(t.t_s - t.observed_rto_ms.unwrap_or(0.0) / 1000.0),
                    secs(t.t_s),
                ),
            })
            .collect(),
        timeouts_summary: summary_line(
            d.timeouts.len(),
            "T3-rtx timeout",
            d.timeouts.first().map(|t| secs(t.t_s)).as_deref(),
            d.timeouts.last().map(|t| secs(t.t_s)).as_deref(),
        ) + &d
            .timeouts
            .iter()
            .map(|t| t.backoff)
            .max()
            .filter(|b| *b > 0)
            .map(|b| format!(", backoff up to {b}"))
            .unwrap_or_default(),
        failbacks: d
            .failbacks
            .iter()
            .map(|b| (secs(b.t_s), b.to.clone(), b.frame))
            .collect(),
        hol: hol_view(d),
    }
}

fn path_rows(a: &AssocReport) -> Vec<PathRow> {
    a.paths
        .iter()
        .map(|p| {
            let dir = a.directions.iter().find(|d| d.sender == p.sender);
            let tos: Vec<f64> = dir
                .iter()
                .flat_map(|d| &d.timeouts)
                .filter(|t| t.path == p.dst)
                .filter_map(|t| t.observed_rto_ms)
                .collect();
            let rto = match (
                tos.iter().copied().reduce(f64::min),
                tos.iter().copied().reduce(f64::max),
            ) {
                (Some(lo), Some(hi)) if tos.len() > 1 => {
                    format!("{} – {} ({})", round(lo, 1), round(hi, 1), tos.len())
                }
                (Some(v), _) => round(v, 1),
                _ => NONE.to_string(),
            };
            PathRow {
                sender: p.sender,
                src: p.src.clone(),
                dst: p.dst.clone(),
                packets: p.packets,
                data_chunks: p.data_chunks,
                new_data: p.infer.new_data_chunks,
                data_bytes: p.data_bytes,
                rtt: p.infer.rtt_ms.map_or(NONE.into(), |d| {
                    format!(
                        "{} / {} / {} ({})",
                        round(d.min, 3),
                        round(d.median, 3),
                        round(d.p95, 3),
                        d.n
                    )
                }),
                hb_rtt: p
                    .infer
                    .hb_rtt_ms
                    .map_or(NONE.into(), |d| round(d.median, 3)),
                hb: match (p.infer.hb_period_ms, p.infer.hb_interval_ms) {
                    (None, _) => NONE.into(),
                    (Some(d), None) => format!("{} / {NONE}", round(d.median, 0)),
                    (Some(d), Some(h)) => {
                        let dead = p
                            .infer
                            .dead_path_detect_s
                            .map(|t| format!(" (dead idle path noticed in ~{t:.1} s)"))
                            .unwrap_or_default();
                        format!("{} / {}{dead}", round(d.median, 0), round(h, 0))
                    }
                },
                hb_evidence: p.infer.hb_evidence.clone().unwrap_or_default(),
                sack_delay: dir
                    .and_then(|d| d.sack_delay_ms)
                    .filter(|_| p.data_chunks > 0)
                    .map_or(NONE.into(), |d| round(d.median, 3)),
                rto,
                timeouts: dir
                    .iter()
                    .flat_map(|d| &d.timeouts)
                    .filter(|t| t.path == p.dst)
                    .count(),
                rtx: p.infer.retransmissions,
                active: format!("{} – {}", secs(p.first_s), secs(p.last_s)),
            }
        })
        .collect()
}

pub async fn association(
    State(state): State<AppState>,
    Path((id, n)): Path<(String, String)>,
) -> Result<Response, AppError> {
    let e = entry(&state, &id)?;
    if e.meta.status != Status::Done {
        return Ok(pending(&e));
    }
    let (e, d) = done_report(&state, &id)?;
    let r = &d.head;
    let a = &*find_assoc(&state, &id, &d, &n).await?;
    let chunks = a
        .chunks
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    let no_data = no_data_words(a, &chunks);
    let yes = |b: bool| if b { "yes" } else { "no" }.to_string();
    let ended = lifecycle::ended(a);
    let bad_checksums = match lifecycle::checksum_verdict(r).filter(|_| a.bad_checksums > 0) {
        Some(v) => format!("{} — {v}", a.bad_checksums),
        None => a.bad_checksums.to_string(),
    };
    let stall_count: usize = a.directions.iter().map(|d| d.stalls.len()).sum();
    let head = vec![
        (Def::of("ended"), ended.text),
        (
            Def::of("stalls"),
            match (a.stalled, stall_count) {
                (true, n) => format!("STALLED at the end ({n} stall(s))"),
                (false, 0) => "none".into(),
                (false, n) => format!("{n}, all over before the end"),
            },
        ),
        (
            Def::new("handshake", "handshake started"),
            yes(a.lifecycle.handshake_started),
        ),
        (
            Def::new("handshake", "handshake completed"),
            yes(a.handshake_seen),
        ),
        (Def::of("handshake"), ms(a.handshake_ms)),
        (Def::of("shutdown"), ms(a.shutdown_ms)),
        (
            Def::of("first_last"),
            format!("{} / {}", secs(a.first_s), secs(a.last_s)),
        ),
        (Def::of("first_frame"), a.first_frame.to_string()),
        (Def::of("packets"), a.packets.to_string()),
        (Def::of("data_bytes"), a.data_bytes.to_string()),
        (Def::of("bad_checksums"), bad_checksums),
        (Def::of("duplicate_frames"), a.duplicate_frames.to_string()),
        (Def::of("chunks"), chunks),
        (Def::of("upper_layer"), streams_view::upper_layer(a).words),
    ];
    let failovers: Vec<FailoverRow> = a
        .directions
        .iter()
        .flat_map(|d| d.failovers.iter().map(move |f| (d, f)))
        .map(|(d, f)| FailoverRow {
            policy: streams_view::policy_words(f.policy.as_deref(), d.pf_retrans)
                .unwrap_or_default(),
            sender: d.sender,
            t_s: secs(f.t_s),
            from: f.from.clone(),
            to: f.to.clone(),
            outage_start: opt_s(f.outage_start_s),
            failover_ms: f.failover_ms.map_or(NONE.into(), views::exact),
            timeouts: f.timeouts,
            spurious: f.spurious,
            cause: f.cause.as_deref().map_or(NONE.into(), cause_words),
            recommendation: f.recommendation.clone().unwrap_or_default(),
            evidence: f.evidence.clone(),
            pmr: opt(f.path_max_retrans),
            frame: f.frame,
            outage_frame: opt(f.outage_frame),
            filter: f.filter.clone(),
            zoom: (
                secs(f.outage_start_s.unwrap_or(f.t_s).min(f.t_s)),
                secs(f.t_s),
            ),
            chain: d
                .timeouts
                .iter()
                .filter(|t| t.path == f.from && t.t_s <= f.t_s)
                .filter(|t| f.outage_start_s.is_none_or(|o| t.t_s >= o))
                .map(|t| {
                    format!(
                        "{} s: RTO {} ms (backoff {}, timer: {}), {} chunk{} resent to {}",
                        secs(t.t_s),
                        t.observed_rto_ms.map_or(NONE.into(), |r| round(r, 1)),
                        t.backoff,
                        help::words("timer_start", &t.timer_start),
                        t.chunks,
                        if t.chunks == 1 { "" } else { "s" },
                        t.to
                    )
                })
                .collect(),
        })
        .collect();
    let failover_groups = group_failovers(&failovers);
    let stalls: Vec<StallRow> = a
        .directions
        .iter()
        .flat_map(|d| {
            d.stalls.iter().map(move |st| StallRow {
                sender: d.sender,
                cause: stall_words(&st.cause),
                kind: st.cause.clone(),
                when: match st.end_s {
                    Some(e) => format!("{} s to {} s", secs(st.t_s), secs(e)),
                    None => format!("from {} s to the end", secs(st.t_s)),
                },
                evidence: st.evidence.clone(),
                filter: st.filter.clone(),
                zoom: (secs(st.t_s), secs(st.end_s.unwrap_or(a.last_s).max(st.t_s))),
            })
        })
        .collect();
    let failover_summary = summary_line(
        failovers.len(),
        "failover",
        failovers.first().map(|f| f.t_s.as_str()),
        failovers.last().map(|f| f.t_s.as_str()),
    ) + &match failovers.iter().filter(|f| f.spurious).count() {
        0 => String::new(),
        n => format!(", {n} spurious"),
    };
    let events = lifecycle::event_rows(a);
    let events_summary = summary_line(
        events.len(),
        "lifecycle event",
        events.first().map(|e| e.t_s.as_str()),
        events.last().map(|e| e.t_s.as_str()),
    );
    let senders: Vec<u8> = a.directions.iter().map(|d| d.sender).collect();
    Ok(AssocPage {
        title: format!("{} — association {}", e.meta.name, a.id),
        id: id.clone(),
        name: e.meta.name.clone(),
        n: a.id,
        head,
        endpoints: a
            .endpoints
            .iter()
            .enumerate()
            .map(|(i, ep)| EndpointRow {
                i,
                port: ep.port,
                vtag: ep.vtag.map_or(NONE.into(), |v| format!("0x{v:08x}")),
                addrs: ep.addresses.join(", "),
                stack: streams_view::stack_view(a, &ep.stack),
            })
            .collect(),
        paths: path_rows(a),
        dirs: a.directions.iter().map(|d| dir_view(a, d)).collect(),
        failovers,
        failover_groups,
        failover_summary,
        collapse: COLLAPSE_ROWS,
        sender: crate::charts::pick_sender(a, None),
        senders,
        tables: table_links(&state, &id),
        filter: a.lifecycle.filter.clone(),
        end: lifecycle::end_panel(a),
        events,
        events_summary,
        events_dropped: a.lifecycle.events_dropped,
        after_end_packets: a.lifecycle.after_end_packets,
        streams: streams_view::streams_section(a),
        problems: streams_view::stream_problems(a),
        no_data,
        stall_groups: group_stalls(&stalls),
        stalls,
    }
    .into_response())
}

/// A failover cause in words (the JSON keeps the identifier: `docs/definitions.toml`).
fn cause_words(cause: &str) -> String {
    help::words("failover_cause", cause)
}

#[cfg(test)]
mod tests {
    use super::*;
    use analyzer::analyze::{analyze_file, Options};
    use analyzer::report::CaptureReport;

    /// The case: SRTT + 4 RTTVAR 44 ms beside an observed 130 ms reads as the RFC RTO
    /// once the RTO.min floor (here 100 ms) is applied, and stays named as what it is without one.
    #[test]
    fn rfc_rto_is_floored_at_the_inferred_rto_min() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../sample-traces/cut_p20_sack40_sender.pcap");
        let a = analyze_file(&p, &Options::default(), &mut |_| {}).expect("analyse");
        let r = CaptureReport::from_analysis(&a);
        let mut d = r.associations[0].directions[0].clone();
        d.rto_min_ms = None;
        assert_eq!(
            rfc_rto(Some(44.0), &d),
            "SRTT + 4 RTTVAR 44 (RTO.min unknown)"
        );
        d.rto_min_ms = Some(100.0);
        d.rto_max_ms = None;
        assert_eq!(rfc_rto(Some(44.0), &d), "100 (SRTT + 4 RTTVAR 44)");
        assert_eq!(rfc_rto(Some(130.26), &d), "130.3 (SRTT + 4 RTTVAR 130.3)");
        d.rto_max_ms = Some(60_000.0);
        assert_eq!(rfc_rto(Some(90_000.0), &d), "60000 (SRTT + 4 RTTVAR 90000)");
        assert_eq!(rfc_rto(None, &d), NONE);
    }

    /// Identical stall cards (same sender and cause) are one group, its heading counting them;
    /// another cause or sender is a group of its own, in the order of their first card.
    #[test]
    fn stall_cards_of_one_sender_and_cause_are_grouped() {
        let row = |sender: u8, kind: &str, t: &str| StallRow {
            sender,
            cause: format!("{kind} in words"),
            kind: kind.to_string(),
            when: format!("{t} s to the end"),
            evidence: String::new(),
            filter: String::new(),
            zoom: (t.to_string(), t.to_string()),
        };
        let rows = vec![
            row(0, "zero_window", "1"),
            row(0, "no_sack", "2"),
            row(0, "zero_window", "3"),
            row(1, "zero_window", "4"),
            row(0, "zero_window", "5"),
        ];
        let g = group_stalls(&rows);
        assert_eq!(
            g.iter().map(|g| g.members.clone()).collect::<Vec<_>>(),
            vec![vec![0, 2, 4], vec![1], vec![3]]
        );
        assert_eq!(
            g[0].heading,
            "3 stalls of DATA sender 0, same cause: zero_window in words"
        );
        assert!(g[1].heading.is_empty() && g[2].heading.is_empty());
    }
}
