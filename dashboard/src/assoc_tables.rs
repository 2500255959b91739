//! The association page's long tables, paginated, sorted and searched on the server (issue 16
//! part 1): failovers, T3-rtx timeouts and failbacks of each direction, lifecycle events, paths
//! and the streams of each direction. Each table reads its page from the query (`{name}_offset`,
//! `{name}_limit`, `{name}_sort`, `{name}_order`, `{name}_q`, see `table_page`); the API gives
//! the same rows as the report's JSON (`/api/captures/{id}/associations/{n}/tables/{name}`) and
//! the association's report with each list cut (`/api/captures/{id}/associations/{n}`).

use std::collections::HashMap;

use analyzer::report::AssocReport;
use analyzer::report_infer::DirectionReport;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::Json;
use serde_json::{json, Value};

use crate::api::{done_report, find_assoc};
use crate::error::AppError;
use crate::help;
use crate::lifecycle::{endpoint_label, event_words};
use crate::table_page::{col, select, Col, Selected, SortVal, TableState};
use crate::AppState;

/// Rows of a table in the API unless `limit` says otherwise (`all` for every row).
pub const API_ROWS: usize = 100;

/// One of the association's tables.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Table {
    Failovers,
    Timeouts(u8),
    Failbacks(u8),
    Events,
    Paths,
    Streams(u8),
}

const FAILOVER_COLS: [Col; 10] = [
    col("", "sender", true, "sender", false),
    col("time (s)", "time", true, "failover", false),
    col("from → to", "path", false, "", false),
    col("", "outage", true, "outage_start", false),
    col("", "failover_ms", true, "failover_time", true),
    col("timeouts", "timeouts", true, "failover_timeouts", true),
    col("PMR", "pmr", true, "pmr", true),
    col("kind", "kind", false, "spurious_failover", true),
    col("frames", "frame", true, "", false),
    col("", "", false, "", false),
];

const TIMEOUT_COLS: [Col; 11] = [
    col("time (s)", "time", true, "timeouts", false),
    col("timer path", "path", false, "", false),
    col("sent to", "to", false, "", false),
    col("", "observed_rto", true, "observed_rto", true),
    col("", "backoff", true, "backoff", true),
    col("", "timer_start", false, "timer_start", false),
    col("", "est_rto", true, "rto_estimate", true),
    col("chunks", "chunks", true, "", true),
    col("TSN", "tsn", true, "", false),
    col("frame", "frame", true, "", false),
    col("Wireshark filter", "", false, "", false),
];

const FAILBACK_COLS: [Col; 3] = [
    col("time (s)", "time", true, "", false),
    col("back to", "to", false, "", false),
    col("frame", "frame", true, "", false),
];

const EVENT_COLS: [Col; 7] = [
    col("time (s)", "time", true, "", false),
    col("frame", "frame", true, "", false),
    col("by", "by", false, "", false),
    col("event", "event", false, "", false),
    col("detail", "", false, "", false),
    col("causes", "", false, "", false),
    col("Wireshark filter", "", false, "", false),
];

const PATH_COLS: [Col; 13] = [
    col("sender", "sender", true, "sender", false),
    col("source → destination", "path", false, "paths", false),
    col("", "packets", true, "packets", true),
    col(
        "DATA chunks (new)",
        "data_chunks",
        true,
        "retransmissions",
        true,
    ),
    col("", "data_bytes", true, "data_bytes", true),
    col("RTT min / median / p95 (n) ms", "rtt", true, "rtt", true),
    col("", "hb_rtt", true, "hb_rtt", true),
    col("", "hb", true, "hb_interval", true),
    col("", "", true, "sack_delay", false),
    col(
        "observed RTO min – max (n) ms",
        "",
        true,
        "observed_rto",
        false,
    ),
    col("", "timeouts", true, "timeouts", true),
    col("", "retransmissions", true, "retransmissions", true),
    col("", "first", true, "path_active", false),
];

const STREAM_COLS: [Col; 10] = [
    col("stream", "stream", true, "", false),
    col("messages", "messages", true, "stream_messages", true),
    col("bytes", "bytes", true, "stream_bytes", true),
    col("DATA chunks", "chunks", true, "stream_chunks", true),
    col("PPIDs", "", false, "ppids", false),
    col("ordered", "ordered", true, "ordered_share", true),
    col(
        "frag\u{AD}mented messages",
        "fragmented",
        true,
        "fragmented",
        true,
    ),
    col("SSN gaps", "ssn_gaps", true, "ssn_gaps", true),
    col("HOL blocked (max ms)", "hol", true, "hol_blocked", true),
    col("active (s)", "first", true, "first_last", false),
];

impl Table {
    /// The table's name in URLs and query parameters ("timeouts0").
    pub fn name(self) -> String {
        match self {
            Table::Failovers => "failovers".into(),
            Table::Timeouts(s) => format!("timeouts{s}"),
            Table::Failbacks(s) => format!("failbacks{s}"),
            Table::Events => "events".into(),
            Table::Paths => "paths".into(),
            Table::Streams(s) => format!("streams{s}"),
        }
    }

    /// What its rows are, in words.
    pub fn what(self) -> String {
        match self {
            Table::Failovers => "failovers".into(),
            Table::Timeouts(s) => format!("T3-rtx timeouts of DATA sender {s}"),
            Table::Failbacks(s) => format!("failbacks of DATA sender {s}"),
            Table::Events => "lifecycle events".into(),
            Table::Paths => "paths".into(),
            Table::Streams(s) => format!("streams of DATA sender {s}"),
        }
    }

    pub fn cols(self) -> &'static [Col] {
        match self {
            Table::Failovers => &FAILOVER_COLS,
            Table::Timeouts(_) => &TIMEOUT_COLS,
            Table::Failbacks(_) => &FAILBACK_COLS,
            Table::Events => &EVENT_COLS,
            Table::Paths => &PATH_COLS,
            Table::Streams(_) => &STREAM_COLS,
        }
    }

    /// The order of the report (every table's rows come in it).
    pub fn default_sort(self) -> &'static str {
        match self {
            Table::Paths => "sender",
            Table::Streams(_) => "stream",
            _ => "time",
        }
    }

    /// Every table of association `a`, in the page's order.
    pub fn all(a: &AssocReport) -> Vec<Table> {
        let mut v = vec![Table::Failovers, Table::Events, Table::Paths];
        for d in &a.directions {
            v.extend([
                Table::Streams(d.sender),
                Table::Timeouts(d.sender),
                Table::Failbacks(d.sender),
            ]);
        }
        v
    }

    /// The table called `name` in association `a`.
    pub fn of(a: &AssocReport, name: &str) -> Option<Table> {
        Table::all(a).into_iter().find(|t| t.name() == name)
    }

    /// The table's state from a page's query (`{name}_offset`, ...).
    pub fn page_state(self, params: &HashMap<String, String>) -> Result<TableState, AppError> {
        let name = self.name();
        TableState::parse(
            params,
            &format!("{name}_"),
            &name,
            self.cols(),
            self.default_sort(),
            crate::table_page::TABLE_ROWS,
            Some(crate::table_page::MAX_TABLE_ROWS),
        )
    }
}

fn dir(a: &AssocReport, s: u8) -> Option<&DirectionReport> {
    a.directions.iter().find(|d| d.sender == s)
}

/// Every failover of the association with its direction, in the page's order.
pub fn failover_items(
    a: &AssocReport,
) -> Vec<(&DirectionReport, &analyzer::report_infer::FailoverReport)> {
    a.directions
        .iter()
        .flat_map(|d| d.failovers.iter().map(move |f| (d, f)))
        .collect()
}

fn n(v: f64) -> SortVal {
    SortVal::N(Some(v))
}

fn s(v: impl Into<String>) -> SortVal {
    SortVal::S(v.into())
}

/// Timeouts of direction `d` on path `dst`.
fn path_timeouts(d: Option<&DirectionReport>, dst: &str) -> usize {
    d.iter()
        .flat_map(|d| &d.timeouts)
        .filter(|t| t.path == dst)
        .count()
}

/// The page of table `t` of association `a` that `st` asks for.
pub fn select_rows(a: &AssocReport, t: Table, st: &TableState) -> Selected {
    match t {
        Table::Failovers => select(
            &failover_items(a),
            st,
            |k, (d, f)| match k {
                "sender" => n(f64::from(d.sender)),
                "path" => s(format!("{} → {}", f.from, f.to)),
                "outage" => SortVal::N(f.outage_start_s),
                "failover_ms" => SortVal::N(f.failover_ms),
                "timeouts" => n(f64::from(f.timeouts)),
                "pmr" => SortVal::N(f.path_max_retrans.map(f64::from)),
                "kind" => n(f64::from(u8::from(f.spurious))),
                "frame" => n(f.frame as f64),
                _ => n(f.t_s),
            },
            |(d, f)| {
                format!(
                    "sender {} {} → {} {} {} {} {} frame {}",
                    d.sender,
                    f.from,
                    f.to,
                    if f.spurious { "spurious" } else { "failover" },
                    f.cause.as_deref().unwrap_or(""),
                    f.cause
                        .as_deref()
                        .map_or(String::new(), |c| help::words("failover_cause", c)),
                    f.policy.as_deref().unwrap_or(""),
                    f.frame
                )
            },
        ),
        Table::Timeouts(x) => {
            let items = dir(a, x).map_or(&[][..], |d| &d.timeouts[..]);
            select(
                items,
                st,
                |k, t| match k {
                    "path" => s(&t.path),
                    "to" => s(&t.to),
                    "observed_rto" => SortVal::N(t.observed_rto_ms),
                    "backoff" => n(f64::from(t.backoff)),
                    "timer_start" => s(&t.timer_start),
                    "est_rto" => SortVal::N(t.est_rto_ms),
                    "chunks" => n(f64::from(t.chunks)),
                    "tsn" => n(f64::from(t.tsn)),
                    "frame" => n(t.frame as f64),
                    _ => n(t.t_s),
                },
                |t| {
                    format!(
                        "{} {} {} {} tsn {} frame {}",
                        t.path,
                        t.to,
                        t.timer_start,
                        help::words("timer_start", &t.timer_start),
                        t.tsn,
                        t.frame
                    )
                },
            )
        }
        Table::Failbacks(x) => {
            let items = dir(a, x).map_or(&[][..], |d| &d.failbacks[..]);
            select(
                items,
                st,
                |k, b| match k {
                    "to" => s(&b.to),
                    "frame" => n(b.frame as f64),
                    _ => n(b.t_s),
                },
                |b| format!("{} frame {}", b.to, b.frame),
            )
        }
        Table::Events => {
            let by = |b: Option<u8>| b.map_or(String::new(), |b| endpoint_label(a, b));
            select(
                &a.lifecycle.events,
                st,
                |k, e| match k {
                    "frame" => n(e.frame as f64),
                    "by" => s(by(e.by)),
                    "event" => s(event_words(&e.kind)),
                    _ => n(e.t_s),
                },
                |e| {
                    let causes: Vec<&str> = e.causes.iter().map(|c| c.name.as_str()).collect();
                    format!(
                        "{} {} {} {} {} frame {}",
                        e.kind,
                        event_words(&e.kind),
                        by(e.by),
                        e.detail,
                        causes.join(" "),
                        e.frame
                    )
                },
            )
        }
        Table::Paths => select(
            &a.paths,
            st,
            |k, p| match k {
                "path" => s(format!("{} → {}", p.src, p.dst)),
                "packets" => n(p.packets as f64),
                "data_chunks" => n(p.data_chunks as f64),
                "data_bytes" => n(p.data_bytes as f64),
                "rtt" => SortVal::N(p.infer.rtt_ms.map(|d| d.median)),
                "hb_rtt" => SortVal::N(p.infer.hb_rtt_ms.map(|d| d.median)),
                "hb" => SortVal::N(p.infer.hb_period_ms.map(|d| d.median)),
                "timeouts" => n(path_timeouts(dir(a, p.sender), &p.dst) as f64),
                "retransmissions" => n(p.infer.retransmissions as f64),
                "first" => n(p.first_s),
                _ => n(f64::from(p.sender)),
            },
            |p| format!("sender {} {} → {}", p.sender, p.src, p.dst),
        ),
        Table::Streams(x) => {
            let items = dir(a, x).map_or(&[][..], |d| &d.streams[..]);
            select(
                items,
                st,
                |k, r| match k {
                    "messages" => n(r.messages as f64),
                    "bytes" => n(r.bytes as f64),
                    "chunks" => n(r.data_chunks as f64),
                    "ordered" => SortVal::N(r.ordered_share),
                    "fragmented" => n(r.fragmented as f64),
                    "ssn_gaps" => n(r.ssn_gaps as f64),
                    "hol" => SortVal::N(r.hol_blocked_messages.map(|v| v as f64)),
                    "first" => n(r.first_s),
                    _ => n(f64::from(r.stream)),
                },
                |r| {
                    let ppids: Vec<String> = r
                        .ppids
                        .iter()
                        .map(|p| format!("ppid {} {}", p.ppid, p.name.as_deref().unwrap_or("")))
                        .collect();
                    format!("stream {} {}", r.stream, ppids.join(" "))
                },
            )
        }
    }
}

/// The rows `idx` of table `t` as the report's JSON (a failover with its `sender`).
fn rows_json(a: &AssocReport, t: Table, idx: &[usize]) -> Result<Vec<Value>, AppError> {
    let pick = |v: Value| -> Vec<Value> {
        let arr = v.as_array().cloned().unwrap_or_default();
        idx.iter().filter_map(|&i| arr.get(i).cloned()).collect()
    };
    let v = match t {
        Table::Failovers => {
            let items = failover_items(a);
            return idx
                .iter()
                .map(|&i| {
                    let (d, f) = items[i];
                    let mut v = serde_json::to_value(f).map_err(AppError::internal)?;
                    v["sender"] = d.sender.into();
                    Ok(v)
                })
                .collect();
        }
        Table::Timeouts(x) => dir(a, x).map(|d| to(&d.timeouts)),
        Table::Failbacks(x) => dir(a, x).map(|d| to(&d.failbacks)),
        Table::Events => Some(to(&a.lifecycle.events)),
        Table::Paths => Some(to(&a.paths)),
        Table::Streams(x) => dir(a, x).map(|d| to(&d.streams)),
    };
    Ok(v.map(pick).unwrap_or_default())
}

fn to<T: serde::Serialize>(x: &T) -> Value {
    serde_json::to_value(x).unwrap_or(Value::Null)
}

pub(crate) fn query_map(
    q: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Result<HashMap<String, String>, AppError> {
    q.map(|Query(m)| m)
        .map_err(|e| AppError::BadRequest(format!("bad parameters: {}", e.body_text())))
}

/// `GET /api/captures/{id}/associations/{n}/tables/{name}?offset=&limit=&sort=&order=&q=`: one
/// page of an association's table (failovers, timeouts0, failbacks0, events, paths, streams0,
/// ... the names of the page's tables) as the report's JSON, `limit` rows (default 100, `all`
/// for every one) from `offset`, sorted by a column key, searched; with the counts.
pub async fn table_api(
    State(state): State<AppState>,
    Path((id, n, name)): Path<(String, String, String)>,
    q: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Result<Json<Value>, AppError> {
    let params = query_map(q)?;
    let (_, d) = done_report(&state, &id)?;
    let a = find_assoc(&state, &id, &d, &n).await?;
    let t = Table::of(&a, &name).ok_or_else(|| {
        let names: Vec<String> = Table::all(&a).into_iter().map(Table::name).collect();
        AppError::NotFound(format!(
            "table {name} of association {n} (its tables: {})",
            names.join(", ")
        ))
    })?;
    let st = TableState::parse(
        &params,
        "",
        &name,
        t.cols(),
        t.default_sort(),
        API_ROWS,
        None,
    )?;
    let sel = select_rows(&a, t, &st);
    let rows = rows_json(&a, t, &sel.idx)?;
    let next = sel.offset + sel.idx.len();
    Ok(Json(json!({
        "id": id,
        "association": a.id,
        "table": name,
        "offset": sel.offset,
        "limit": st.limit,
        "sort": st.sort,
        "order": if st.desc { "desc" } else { "asc" },
        "q": st.q,
        "sorts": t.cols().iter().map(|c| c.key).filter(|k| !k.is_empty()).collect::<Vec<_>>(),
        "total": sel.total,
        "matching": sel.matching,
        "returned": rows.len(),
        "next_offset": (next < sel.matching).then_some(next),
        "rows": rows,
    })))
}

/// `GET /api/captures/{id}/associations/{n}?limit=`: the association's report, each of its
/// lists that can grow with the association (a direction's timeouts, failovers, failbacks,
/// streams and stalls, the lifecycle events, the paths) cut to its first `limit` entries
/// (default 100, `all` for whole lists); `lists` tells, per table, how many there are and where
/// the rest is.
pub async fn assoc_api(
    State(state): State<AppState>,
    Path((id, n)): Path<(String, String)>,
    q: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Result<Json<Value>, AppError> {
    let params = query_map(q)?;
    let limit = match params
        .get("limit")
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
    {
        Some("all") => None,
        Some(v) => Some(v.parse::<usize>().map_err(|_| {
            AppError::BadRequest(format!("bad limit: {v:?} (a number of rows, or all)"))
        })?),
        None => Some(API_ROWS),
    };
    let (_, d) = done_report(&state, &id)?;
    let a = find_assoc(&state, &id, &d, &n).await?;
    let mut v = serde_json::to_value(&*a).map_err(AppError::internal)?;
    let mut lists = serde_json::Map::new();
    let mut cut = |v: Option<&mut Value>, name: String, table: bool| {
        let Some(arr) = v.and_then(Value::as_array_mut) else {
            return;
        };
        let total = arr.len();
        if let Some(l) = limit {
            arr.truncate(l);
        }
        let more = (arr.len() < total && table).then(|| {
            format!(
                "/api/captures/{id}/associations/{}/tables/{name}?offset={}",
                a.id,
                arr.len()
            )
        });
        lists.insert(
            name,
            json!({ "total": total, "returned": arr.len(), "more": more }),
        );
    };
    if let Some(dirs) = v.get_mut("directions").and_then(Value::as_array_mut) {
        for dv in dirs.iter_mut() {
            let s = dv["sender"].as_u64().unwrap_or(0);
            for (k, table) in [
                ("timeouts", true),
                ("failovers", false),
                ("failbacks", true),
                ("streams", true),
                ("stalls", false),
            ] {
                cut(dv.get_mut(k), format!("{k}{s}"), table);
            }
        }
    }
    // The lifecycle's fields are the association's own in the JSON (flattened).
    cut(v.get_mut("events"), "events".into(), true);
    cut(v.get_mut("paths"), "paths".into(), true);
    // The failovers table spans both directions: its link starts at the first one cut.
    let shown: usize = (0..2)
        .filter_map(|s| lists.get(&format!("failovers{s}")))
        .map(|x| x["returned"].as_u64().unwrap_or(0) as usize)
        .sum();
    let all_fo = failover_items(&a).len();
    lists.insert(
        "failovers".into(),
        json!({
            "total": all_fo,
            "returned": shown,
            "more": (shown < all_fo).then(|| format!(
                "/api/captures/{id}/associations/{}/tables/failovers",
                a.id
            )),
        }),
    );
    Ok(Json(json!({
        "id": id,
        "limit": limit,
        "lists": lists,
        "association": v,
    })))
}
