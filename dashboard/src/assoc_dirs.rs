//! What the association page shows of each direction (its facts, T3-rtx timeouts and
//! failbacks, a page of each) and of each path, from the stored `AssocReport`.

use analyzer::infer::settings as set;
use analyzer::report::AssocReport;
use analyzer::report_infer::DirectionReport;

use crate::help::{self, Def};
use crate::hol_view::{hol_view, HolView};
use crate::streams_view;
use crate::table_page::TableView;
use crate::views::{ms, opt, pct, round, secs, NONE};

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

pub struct DirView {
    pub sender: u8,
    pub title: String,
    pub items: Vec<(Def, String)>,
    /// The page of the timeouts table shown.
    pub timeouts: Vec<TimeoutRow>,
    pub timeouts_total: usize,
    /// Page, sort and search of the timeouts table (`timeouts{sender}_offset`, ...).
    pub timeouts_table: TableView,
    /// "647 T3-rtx timeouts from 1.2 s to 300.0 s, backoff up to 6".
    pub timeouts_summary: String,
    /// The page of the failbacks table shown: (time, to, frame).
    pub failbacks: Vec<(String, String, u64)>,
    pub failbacks_total: usize,
    pub failbacks_table: TableView,
    /// Head-of-line blocking (issue 15 section 2); None when the direction carried no DATA.
    pub hol: Option<HolView>,
}

/// "96 failovers from 1.2 s to 500.1 s".
pub(crate) fn summary_line(
    n: usize,
    what: &str,
    first: Option<&str>,
    last: Option<&str>,
) -> String {
    let plural = if n == 1 { "" } else { "s" };
    match (first, last) {
        (Some(a), Some(b)) if n > 1 => format!("{n} {what}{plural} from {a} s to {b} s"),
        (Some(a), _) => format!("{n} {what}{plural} at {a} s"),
        _ => format!("{n} {what}{plural}"),
    }
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

/// A page of rows: positions in the report's list and the table's view.
pub type PageOf = (Vec<usize>, TableView);

/// The view of direction `d`, with the pages of its timeouts and failbacks tables.
pub(crate) fn dir_view(
    a: &AssocReport,
    d: &DirectionReport,
    (to_idx, timeouts_table): PageOf,
    (fb_idx, failbacks_table): PageOf,
) -> DirView {
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
        timeouts: to_idx
            .iter()
            .filter_map(|&i| d.timeouts.get(i))
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
        failbacks: fb_idx
            .iter()
            .filter_map(|&i| d.failbacks.get(i))
            .map(|b| (secs(b.t_s), b.to.clone(), b.frame))
            .collect(),
        failbacks_total: d.failbacks.len(),
        failbacks_table,
        timeouts_total: d.timeouts.len(),
        timeouts_table,
        hol: hol_view(d),
    }
}

/// The rows of the paths `idx` (positions in the report's list, a page of it).
pub(crate) fn path_rows(a: &AssocReport, idx: &[usize]) -> Vec<PathRow> {
    idx.iter()
        .filter_map(|&i| a.paths.get(i))
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
}
