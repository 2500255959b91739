//! The association list of a capture, filtered, sorted and paginated on the server (issue 16
//! part 1): the capture page's table and `GET /api/captures/{id}/associations` share the query
//! (`offset`, `limit`, `sort`, `order`, `q`, `addr`, `port`, `upper`, `end`, `failover`,
//! `spurious`, `stall`, `abort`) and the counts.

use std::cmp::Ordering;

use analyzer::report::AssocReport;
use serde::{Deserialize, Serialize};

use crate::error::AppError;
use crate::lifecycle;

/// Rows per page of the capture page unless `limit` says otherwise.
pub const PAGE_ROWS: usize = 50;
/// Most rows the capture page renders at once.
pub const MAX_PAGE_ROWS: usize = 500;
/// Rows of `GET /api/captures/{id}/associations` unless `limit` says otherwise.
pub const API_ROWS: usize = 100;

/// Query parameters (all optional; an empty one, as an HTML form sends it, is no filter).
#[derive(Debug, Default, Clone, Deserialize)]
pub struct ListQuery {
    pub offset: Option<String>,
    pub limit: Option<String>,
    /// A column: id, endpoints, upper, handshake, packets, data_bytes, paths, retransmissions,
    /// timeouts, failovers, spurious, stalls, first, last, ended.
    pub sort: Option<String>,
    /// asc or desc.
    pub order: Option<String>,
    /// Text search: endpoints (addresses and ports), upper layer, how it ended, the id.
    pub q: Option<String>,
    /// An address (or a part of one) of either endpoint.
    pub addr: Option<String>,
    /// A port of either endpoint.
    pub port: Option<String>,
    /// Upper layer name ("NGAP"; "none" for associations without one).
    pub upper: Option<String>,
    /// End kind (shutdown, abort, handshake_failed, restarted, open_at_capture_end).
    pub end: Option<String>,
    /// Any non-empty value but "0": only associations with a failover / a spurious failover /
    /// a stall / an ABORT.
    pub failover: Option<String>,
    pub spurious: Option<String>,
    pub stall: Option<String>,
    pub abort: Option<String>,
}

fn some(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

fn flag(v: &Option<String>) -> bool {
    some(v).is_some_and(|s| s != "0" && s != "false" && s != "no")
}

pub const SORTS: [&str; 15] = [
    "id",
    "endpoints",
    "upper",
    "handshake",
    "packets",
    "data_bytes",
    "paths",
    "retransmissions",
    "timeouts",
    "failovers",
    "spurious",
    "stalls",
    "first",
    "last",
    "ended",
];

/// The parsed query.
#[derive(Debug, Clone)]
pub struct Filter {
    pub offset: usize,
    /// None: every row (`limit=all`).
    pub limit: Option<usize>,
    pub sort: &'static str,
    pub desc: bool,
    pub q: String,
    pub addr: String,
    pub port: Option<u16>,
    pub upper: String,
    pub end: String,
    pub failover: bool,
    pub spurious: bool,
    pub stall: bool,
    pub abort: bool,
}

impl Filter {
    /// `default_limit` rows unless the query says; `max_limit` caps what it may say (pages).
    pub fn parse(
        q: &ListQuery,
        default_limit: usize,
        max_limit: Option<usize>,
    ) -> Result<Filter, AppError> {
        let bad = |what: &str, v: &str| AppError::BadRequest(format!("bad {what}: {v:?}"));
        let offset = match some(&q.offset) {
            Some(v) => v.parse().map_err(|_| bad("offset", v))?,
            None => 0,
        };
        let limit = match some(&q.limit) {
            Some("all") => max_limit,
            Some(v) => Some(v.parse::<usize>().map_err(|_| bad("limit", v))?),
            None => Some(default_limit),
        };
        let limit = match (limit, max_limit) {
            (Some(l), Some(m)) => Some(l.min(m)),
            (l, _) => l,
        };
        let sort = match some(&q.sort) {
            Some(s) => *SORTS
                .iter()
                .find(|x| **x == s)
                .ok_or_else(|| bad("sort", s))?,
            None => "id",
        };
        let desc = match some(&q.order) {
            Some("desc") => true,
            Some("asc") | None => false,
            Some(o) => return Err(bad("order", o)),
        };
        let port = match some(&q.port) {
            Some(p) => Some(p.parse().map_err(|_| bad("port", p))?),
            None => None,
        };
        let low = |v: &Option<String>| some(v).unwrap_or("").to_lowercase();
        Ok(Filter {
            offset,
            limit,
            sort,
            desc,
            q: low(&q.q),
            addr: low(&q.addr),
            port,
            upper: low(&q.upper),
            end: low(&q.end),
            failover: flag(&q.failover),
            spurious: flag(&q.spurious),
            stall: flag(&q.stall),
            abort: flag(&q.abort),
        })
    }

    /// Whether any filter is set (sorting and paging aside).
    pub fn filtered(&self) -> bool {
        !self.q.is_empty()
            || !self.addr.is_empty()
            || self.port.is_some()
            || !self.upper.is_empty()
            || !self.end.is_empty()
            || self.failover
            || self.spurious
            || self.stall
            || self.abort
    }

    /// The query string of this filter and sort (without offset), for links: `k=v&...`.
    pub fn query(&self, sort: Option<(&str, bool)>) -> String {
        let (s, desc) = sort.unwrap_or((self.sort, self.desc));
        let mut parts: Vec<(&str, String)> = Vec::new();
        let port = self.port.map(|p| p.to_string()).unwrap_or_default();
        for (k, v) in [
            ("q", &self.q),
            ("addr", &self.addr),
            ("port", &port),
            ("upper", &self.upper),
            ("end", &self.end),
        ] {
            if !v.is_empty() {
                parts.push((k, v.clone()));
            }
        }
        for (k, v) in [
            ("failover", self.failover),
            ("spurious", self.spurious),
            ("stall", self.stall),
            ("abort", self.abort),
        ] {
            if v {
                parts.push((k, "1".into()));
            }
        }
        if s != "id" || desc {
            parts.push(("sort", s.into()));
            parts.push(("order", if desc { "desc" } else { "asc" }.into()));
        }
        if let Some(l) = self.limit.filter(|l| *l != PAGE_ROWS) {
            parts.push(("limit", l.to_string()));
        }
        parts
            .iter()
            .map(|(k, v)| format!("{k}={}", encode(v)))
            .collect::<Vec<_>>()
            .join("&")
    }
}

/// Percent-encoding of a query value.
pub fn encode(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for b in v.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b':') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// What one association is filtered and sorted by, and what a row shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssocSummary {
    pub id: usize,
    /// "10.0.0.1,10.0.1.1:5000 ↔ 10.0.0.2:5001"
    pub endpoints: String,
    pub ports: Vec<u16>,
    pub addresses: Vec<Vec<String>>,
    pub upper_layer: Option<String>,
    pub handshake_ms: Option<f64>,
    pub packets: u64,
    pub data_bytes: u64,
    pub paths: usize,
    pub retransmissions: u64,
    pub timeouts: usize,
    pub failovers: usize,
    pub spurious_failovers: usize,
    pub stalls: usize,
    pub stalled: bool,
    pub aborted: bool,
    pub first_s: f64,
    pub last_s: f64,
    pub end_kind: String,
    /// How it ended, in words ("shutdown by 10.0.0.1:5000").
    pub ended: String,
}

pub fn endpoints_text(a: &AssocReport) -> String {
    a.endpoints
        .iter()
        .map(|e| format!("{}:{}", e.addresses.join(","), e.port))
        .collect::<Vec<_>>()
        .join(" ↔ ")
}

pub fn summary(a: &AssocReport) -> AssocSummary {
    let fo = a.directions.iter().flat_map(|d| &d.failovers);
    AssocSummary {
        id: a.id,
        endpoints: endpoints_text(a),
        ports: a.endpoints.iter().map(|e| e.port).collect(),
        addresses: a.endpoints.iter().map(|e| e.addresses.clone()).collect(),
        upper_layer: a.stream_summary.upper_layer.name.clone(),
        handshake_ms: a.handshake_ms,
        packets: a.packets,
        data_bytes: a.data_bytes,
        paths: a.paths.len(),
        retransmissions: a.directions.iter().map(|d| d.retransmissions.total).sum(),
        timeouts: a.directions.iter().map(|d| d.timeouts.len()).sum(),
        failovers: fo.clone().count(),
        spurious_failovers: fo.filter(|f| f.spurious).count(),
        stalls: a.directions.iter().map(|d| d.stalls.len()).sum(),
        stalled: a.stalled,
        aborted: a.aborted || a.lifecycle.end.kind == "abort",
        first_s: a.first_s,
        last_s: a.last_s,
        end_kind: a.lifecycle.end.kind.clone(),
        ended: lifecycle::ended(a).text,
    }
}

fn matches(f: &Filter, s: &AssocSummary) -> bool {
    if let Some(p) = f.port {
        if !s.ports.contains(&p) {
            return false;
        }
    }
    if !f.end.is_empty() && s.end_kind != f.end {
        return false;
    }
    if (f.failover && s.failovers == 0)
        || (f.spurious && s.spurious_failovers == 0)
        || (f.stall && s.stalls == 0 && !s.stalled)
        || (f.abort && !s.aborted)
    {
        return false;
    }
    if !f.upper.is_empty() {
        let u = s.upper_layer.as_deref().unwrap_or("none").to_lowercase();
        if u != f.upper {
            return false;
        }
    }
    if !f.addr.is_empty()
        && !s
            .addresses
            .iter()
            .flatten()
            .any(|x| x.to_lowercase().contains(&f.addr))
    {
        return false;
    }
    if !f.q.is_empty() {
        let hay = format!(
            "#{} {} {} {} {}",
            s.id,
            s.endpoints,
            s.upper_layer.as_deref().unwrap_or(""),
            lifecycle::end_words(&s.end_kind),
            s.ended
        )
        .to_lowercase();
        if !f.q.split_whitespace().all(|w| hay.contains(w)) {
            return false;
        }
    }
    true
}

fn cmp_f(x: Option<f64>, y: Option<f64>) -> Ordering {
    match (x, y) {
        (Some(a), Some(b)) => a.total_cmp(&b),
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

fn compare(sort: &str, x: &AssocSummary, y: &AssocSummary) -> Ordering {
    let o = match sort {
        "endpoints" => x.endpoints.cmp(&y.endpoints),
        "upper" => x.upper_layer.cmp(&y.upper_layer),
        "handshake" => cmp_f(x.handshake_ms, y.handshake_ms),
        "packets" => x.packets.cmp(&y.packets),
        "data_bytes" => x.data_bytes.cmp(&y.data_bytes),
        "paths" => x.paths.cmp(&y.paths),
        "retransmissions" => x.retransmissions.cmp(&y.retransmissions),
        "timeouts" => x.timeouts.cmp(&y.timeouts),
        "failovers" => x.failovers.cmp(&y.failovers),
        "spurious" => x.spurious_failovers.cmp(&y.spurious_failovers),
        "stalls" => x.stalls.cmp(&y.stalls),
        "first" => x.first_s.total_cmp(&y.first_s),
        "last" => x.last_s.total_cmp(&y.last_s),
        "ended" => x.ended.cmp(&y.ended),
        _ => Ordering::Equal,
    };
    o.then(x.id.cmp(&y.id))
}

/// Counts over the associations that match the filter.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Counts {
    /// Associations of the capture.
    pub total: usize,
    /// Associations that match the filter.
    pub matching: usize,
    pub with_failovers: usize,
    pub with_spurious_failovers: usize,
    pub with_stalls: usize,
    pub aborted: usize,
}

/// One page of the list.
pub struct Page {
    pub rows: Vec<AssocSummary>,
    pub counts: Counts,
    pub offset: usize,
}

/// Filters, sorts and cuts the association rows of a capture (`all`, in id order).
pub fn page(all: &[AssocSummary], f: &Filter) -> Page {
    let mut rows: Vec<AssocSummary> = Vec::new();
    let mut c = Counts {
        total: all.len(),
        ..Counts::default()
    };
    for s in all {
        if !matches(f, s) {
            continue;
        }
        c.matching += 1;
        c.with_failovers += usize::from(s.failovers > 0);
        c.with_spurious_failovers += usize::from(s.spurious_failovers > 0);
        c.with_stalls += usize::from(s.stalls > 0 || s.stalled);
        c.aborted += usize::from(s.aborted);
        rows.push(s.clone());
    }
    if f.sort != "id" || f.desc {
        rows.sort_by(|x, y| {
            let o = compare(f.sort, x, y);
            if f.desc {
                o.reverse()
            } else {
                o
            }
        });
    }
    let offset = f.offset.min(rows.len());
    let end = match f.limit {
        Some(l) => offset.saturating_add(l).min(rows.len()),
        None => rows.len(),
    };
    rows.truncate(end);
    rows.drain(..offset);
    Page {
        rows,
        counts: c,
        offset,
    }
}

/// "showing 1–50 of 10,000 associations, 37 with failovers (12 spurious), 20 aborted".
pub fn counts_text(p: &Page, filtered: bool) -> String {
    let c = &p.counts;
    let n = |v: usize| thousands(v as u64);
    let mut s = if p.rows.is_empty() {
        format!("showing none of {}", n(c.matching))
    } else {
        format!(
            "showing {}–{} of {}",
            n(p.offset + 1),
            n(p.offset + p.rows.len()),
            n(c.matching)
        )
    };
    s.push_str(if c.matching == 1 {
        " association"
    } else {
        " associations"
    });
    if filtered {
        s.push_str(&format!(" that match (of {} in the capture)", n(c.total)));
    }
    s.push_str(&format!(
        ", {} with failovers ({} with spurious failovers), {} with stalls, {} aborted",
        n(c.with_failovers),
        n(c.with_spurious_failovers),
        n(c.with_stalls),
        n(c.aborted)
    ));
    s
}

/// 10000 -> "10,000".
pub fn thousands(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Upper layers present (for the filter's choices).
pub fn upper_layers(rows: &[AssocSummary]) -> Vec<String> {
    let mut v: Vec<String> = rows
        .iter()
        .map(|s| s.upper_layer.clone().unwrap_or_else(|| "none".into()))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The upper layer column of a row.
pub fn upper_cell(s: &AssocSummary) -> String {
    s.upper_layer
        .clone()
        .unwrap_or_else(|| crate::views::NONE.into())
}
