//! The compare page: the top N directions of a capture (SCTP and TCP) by a chosen metric, side
//! by side, each metric's name linked to its definition (`help`), and the overlaid charts.

use analyzer::compare::ComparisonRow;
use analyzer::report::{AssocReport, CaptureReport};
use askama::Template;
use askama_web::WebTemplate;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};

use crate::api::{done_report, entry};
use crate::assoc_list;
use crate::error::AppError;
use crate::help::{self, Def};
use crate::pages::pending;
use crate::store::Status;
use crate::views::{self, ms, round, JsonTable, NONE};
use crate::AppState;

#[derive(Template, WebTemplate)]
#[template(path = "compare.html")]
pub struct ComparePage {
    pub title: String,
    pub id: String,
    pub name: String,
    pub sctp: JsonTable,
    /// `sctp`'s rows: the metric linked to its definition, the values.
    pub sctp_rows: Vec<(Def, Vec<String>)>,
    pub tcp: Vec<JsonTable>,
    pub comparison: Vec<CompareTable>,
    pub note: String,
    /// Metric, number and order of the directions shown.
    pub select: CompareSelect,
    /// Directions of the capture (of the chosen transport).
    pub directions: usize,
}

/// Rows of the SCTP side without comparison rows: (figure, words).
const SCTP_METRICS: [(&str, &str); 12] = [
    ("handshake", "handshake (ms)"),
    ("data_bytes", "DATA bytes"),
    ("throughput", "throughput (kbit/s)"),
    ("base_rtt", "base RTT (ms)"),
    ("ack_delay", "SACK / delayed-ACK delay (ms)"),
    ("retransmissions", "retransmissions (fast/timeout/spurious)"),
    ("timeouts", "timeouts"),
    ("rto_min", "RTO.min (ms)"),
    ("max_transfer", "max transfer (ms)"),
    ("max_gap", "max delivery gap (ms)"),
    ("failover", "failovers (spurious)"),
    ("outage", "failover / outage recovery (ms)"),
];

/// The side-by-side table with each metric's label linked to its definition and identifiers
/// (vantage, recovery) in words.
pub struct CompareTable {
    pub title: String,
    pub columns: Vec<String>,
    /// (metric, the JSON key, one value per column).
    pub rows: Vec<(Def, String, Vec<String>)>,
}

fn compare_table(t: JsonTable) -> CompareTable {
    let rows = t
        .rows
        .into_iter()
        .map(|mut r| {
            let key = r.remove(0);
            let def = match help::figure_by_key(&key) {
                Some(f) => Def::of(&f.id),
                None => Def::plain(key.replace('_', " ")),
            };
            let kind = match key.as_str() {
                "vantage" => Some("vantage"),
                "recovery" => Some("recovery"),
                _ => None,
            };
            if let Some(kind) = kind {
                for v in &mut r {
                    if v != NONE {
                        *v = help::words(kind, v);
                    }
                }
            }
            (def, key, r)
        })
        .collect();
    CompareTable {
        title: t.title,
        columns: t.columns,
        rows,
    }
}

/// SCTP side of the comparison: one column per association direction (the first `top`),
/// metric by metric.
fn sctp_metrics(assocs: &[AssocReport], top: usize) -> JsonTable {
    let mut cols = Vec::new();
    let mut rows: Vec<Vec<String>> = SCTP_METRICS
        .iter()
        .map(|(_, s)| vec![s.to_string()])
        .collect();
    let dirs = assocs
        .iter()
        .flat_map(|a| a.directions.iter().map(move |d| (a, d)))
        .take(top);
    for (a, d) in dirs {
        {
            cols.push(format!("SCTP #{} sender {}", a.id, d.sender));
            let bytes: u64 = a
                .paths
                .iter()
                .filter(|p| p.sender == d.sender)
                .map(|p| p.data_bytes)
                .sum();
            let span = (a.last_s - a.first_s).max(1e-9);
            let rx = &d.retransmissions;
            let fo: Vec<String> = d
                .failovers
                .iter()
                .map(|f| f.failover_ms.map_or(NONE.into(), views::exact))
                .collect();
            let vals = [
                ms(a.handshake_ms),
                bytes.to_string(),
                round(bytes as f64 * 8.0 / span / 1000.0, 1),
                ms(d.base_rtt_ms),
                d.sack_delay_ms.map_or(NONE.into(), |x| round(x.median, 3)),
                format!("{}/{}/{}", rx.fast, rx.timeout, rx.spurious),
                d.timeouts.len().to_string(),
                ms(d.rto_min_ms),
                ms(d.max_transfer_ms),
                ms(d.max_gap_ms),
                format!(
                    "{} ({})",
                    d.failovers.len(),
                    d.failovers.iter().filter(|f| f.spurious).count()
                ),
                if fo.is_empty() {
                    NONE.into()
                } else {
                    fo.join(", ")
                },
            ];
            for (row, v) in rows.iter_mut().zip(vals) {
                row.push(v);
            }
        }
    }
    JsonTable {
        title: "SCTP associations".into(),
        columns: cols,
        rows,
    }
}

/// `?metric=&top=&order=&transport=` of the compare page.
#[derive(Debug, Default, serde::Deserialize)]
pub struct CompareQuery {
    pub metric: Option<String>,
    pub top: Option<String>,
    pub order: Option<String>,
    pub transport: Option<String>,
}

type Metric = fn(&ComparisonRow) -> Option<f64>;

/// The metrics the compare page ranks directions by: (key, words, value).
pub const COMPARE_METRICS: [(&str, &str, Metric); 17] = [
    ("throughput_bps", "throughput (bit/s)", |r| {
        Some(r.throughput_bps)
    }),
    ("goodput_bps", "goodput (bit/s)", |r| Some(r.goodput_bps)),
    ("retransmissions", "retransmissions", |r| {
        Some(r.retransmissions as f64)
    }),
    ("retransmission_rate", "retransmission rate", |r| {
        r.retransmission_rate
    }),
    ("timeouts", "timeouts", |r| Some(r.timeouts as f64)),
    ("max_gap_ms", "max delivery gap (ms)", |r| r.max_gap_ms),
    ("outage_ms", "outage (ms)", |r| r.outage_ms),
    ("max_transfer_ms", "max transfer (ms)", |r| {
        r.max_transfer_ms
    }),
    ("rtt_median_ms", "RTT median (ms)", |r| r.rtt_median_ms),
    ("rtt_p95_ms", "RTT p95 (ms)", |r| r.rtt_p95_ms),
    ("observed_rto_median_ms", "observed RTO median (ms)", |r| {
        r.observed_rto_median_ms
    }),
    ("rto_min_ms", "RTO.min (ms)", |r| r.rto_min_ms),
    ("ack_delay_ms", "SACK / ACK delay (ms)", |r| r.ack_delay_ms),
    ("handshake_ms", "handshake (ms)", |r| r.handshake_ms),
    ("duration_s", "duration (s)", |r| Some(r.duration_s)),
    (
        "hol_blocked_messages",
        "head-of-line blocked messages",
        |r| r.hol_blocked_messages.map(|v| v as f64),
    ),
    ("hol_delay_sum_ms", "head-of-line wait, sum (ms)", |r| {
        r.hol_delay_sum_ms
    }),
];

/// Directions shown on the compare page unless `top` says otherwise, and the most it may say.
pub const COMPARE_TOP: usize = 10;
pub const COMPARE_TOP_MAX: usize = 100;

/// The compare page's selector: which metric ranks the directions, how many are shown.
pub struct CompareSelect {
    pub metric: &'static str,
    pub metrics: Vec<(&'static str, &'static str)>,
    pub top: usize,
    pub tops: Vec<usize>,
    pub desc: bool,
    pub transport: String,
    /// "the 10 of 10,000 directions with the highest throughput (bit/s)".
    pub text: String,
}

fn compare_select(q: &CompareQuery) -> Result<(CompareSelect, Metric), AppError> {
    let some = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let (metric, _, f) = match some(&q.metric) {
        Some(m) => *COMPARE_METRICS
            .iter()
            .find(|x| x.0 == m)
            .ok_or_else(|| AppError::BadRequest(format!("bad metric: {m:?}")))?,
        None => COMPARE_METRICS[0],
    };
    let top = match some(&q.top) {
        Some(t) => t
            .parse::<usize>()
            .map_err(|_| AppError::BadRequest(format!("bad top: {t:?}")))?
            .clamp(1, COMPARE_TOP_MAX),
        None => COMPARE_TOP,
    };
    let desc = match some(&q.order).as_deref() {
        Some("asc") => false,
        Some("desc") | None => true,
        Some(o) => return Err(AppError::BadRequest(format!("bad order: {o:?}"))),
    };
    let transport = match some(&q.transport).as_deref() {
        Some(t @ ("sctp" | "tcp")) => t.to_string(),
        None | Some("any") => String::new(),
        Some(t) => return Err(AppError::BadRequest(format!("bad transport: {t:?}"))),
    };
    Ok((
        CompareSelect {
            metric,
            metrics: COMPARE_METRICS.iter().map(|m| (m.0, m.1)).collect(),
            top,
            tops: vec![5, 10, 25, 50, 100],
            desc,
            transport,
            text: String::new(),
        },
        f,
    ))
}

/// The `top` comparison rows by the chosen metric (rows without a value last), and how many
/// there were.
fn top_rows<'a>(
    r: &'a CaptureReport,
    sel: &CompareSelect,
    f: Metric,
) -> (Vec<&'a ComparisonRow>, usize) {
    let mut rows: Vec<(&ComparisonRow, Option<f64>)> = r
        .comparison
        .iter()
        .filter(|c| sel.transport.is_empty() || c.transport == sel.transport)
        .map(|c| (c, f(c).filter(|v| v.is_finite())))
        .collect();
    let n = rows.len();
    rows.sort_by(|a, b| match (a.1, b.1) {
        (Some(x), Some(y)) => {
            let o = x.total_cmp(&y);
            if sel.desc {
                o.reverse()
            } else {
                o
            }
        }
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    rows.truncate(sel.top);
    (rows.into_iter().map(|x| x.0).collect(), n)
}

/// `GET /captures/{id}/compare?metric=&top=&order=&transport=`: the `top` (default 10)
/// directions by `metric` (default throughput), not a column per direction of the capture.
pub async fn compare(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: Result<Query<CompareQuery>, QueryRejection>,
) -> Result<Response, AppError> {
    let e = entry(&state, &id)?;
    if e.meta.status != Status::Done {
        return Ok(pending(&e));
    }
    let (e, d) = done_report(&state, &id)?;
    let r = &d.head;
    let q = q
        .map(|Query(q)| q)
        .map_err(|e| AppError::BadRequest(format!("bad compare parameters: {}", e.body_text())))?;
    let (mut sel, metric) = compare_select(&q)?;
    let (rows, n) = top_rows(r, &sel, metric);
    let words = COMPARE_METRICS
        .iter()
        .find(|m| m.0 == sel.metric)
        .map_or("", |m| m.1);
    let kind = match sel.transport.as_str() {
        "sctp" => "SCTP ",
        "tcp" => "TCP ",
        _ => "",
    };
    sel.text = format!(
        "the {} of {} {kind}directions with the {} {words}",
        rows.len(),
        assoc_list::thousands(n as u64),
        if sel.desc { "highest" } else { "lowest" },
    );
    let rows_value = serde_json::to_value(&rows).unwrap_or(serde_json::Value::Null);
    let comparison: Vec<CompareTable> = views::comparison_table(&rows_value)
        .map(|t| vec![compare_table(t)])
        .unwrap_or_default();
    let tcp: Vec<JsonTable> = if r.comparison.is_empty() {
        let flows: Vec<_> = r.tcp_flows.iter().take(sel.top).collect();
        let v = serde_json::to_value(&flows).unwrap_or(serde_json::Value::Null);
        views::array_table("TCP flows", &v, 40)
            .map(|t| views::transpose(&t, Some("id")))
            .into_iter()
            .collect()
    } else {
        Vec::new()
    };
    let sctp = if r.comparison.is_empty() {
        sctp_metrics(&state.first_assocs(&id, &d, sel.top).await?, sel.top)
    } else {
        JsonTable::default()
    };
    let note = if r.comparison.is_empty() {
        "Neither an SCTP association nor a TCP connection carried data.".into()
    } else if rows.is_empty() {
        format!("No {kind}direction to compare.")
    } else {
        String::new()
    };
    Ok(ComparePage {
        title: format!("{} — SCTP vs TCP", e.meta.name),
        id: id.clone(),
        name: e.meta.name.clone(),
        sctp_rows: sctp
            .rows
            .iter()
            .zip(SCTP_METRICS)
            .map(|(r, (f, w))| (Def::new(f, w), r[1..].to_vec()))
            .collect(),
        sctp,
        tcp,
        comparison,
        note,
        select: sel,
        directions: n,
    }
    .into_response())
}
