//! Streams, upper layer, SCTP stacks and failover policy in words: the association page's
//! "Streams" section (upper layer, negotiated OS / MIS, one streams table per direction), the
//! stack of each endpoint, the stream problems of the diagnosis (invalid streams, missing PPIDs),
//! the failover policy of each direction and failover, and the upper-layer column / summary of the
//! captures list and the capture page. Everything comes from the analyzer's report.

use std::collections::BTreeMap;

use analyzer::report::AssocReport;
use analyzer::report_infer::DirectionReport;
use analyzer::stack::StackReport;
use analyzer::streams::StreamReport;

use crate::lifecycle::{endpoint_label, event_words, name_endpoints};
use crate::table_page::TableView;
use crate::views::{opt, pct, secs, NONE};

/// One row of a direction's streams table.
pub struct StreamRow {
    pub stream: u16,
    pub messages: u64,
    pub bytes: u64,
    pub data_chunks: u64,
    pub ppids: String,
    pub ordered: String,
    pub fragmented: u64,
    pub ssn_gaps: u64,
    /// Head-of-line blocked messages and their longest wait in ms ("12 (37.9)", "0", "—").
    pub hol: String,
    pub hol_blocked: u64,
    /// The blocked count for sorting; None without head-of-line figures.
    pub hol_sort: Option<u64>,
    pub active: String,
}

/// The streams of one direction (DATA sender).
pub struct StreamsDir {
    pub sender: u8,
    pub title: String,
    /// The rows of the page shown.
    pub rows: Vec<StreamRow>,
    pub total: usize,
    /// Page, sort and search of the table (`streams{sender}_offset`, ...).
    pub table: TableView,
}

/// What one endpoint announced: label, OS, MIS, usable outgoing streams, streams added.
pub struct NegotiatedRow {
    pub endpoint: String,
    pub os: String,
    pub mis: String,
    pub usable_out: String,
    pub added_out: u32,
}

/// The association's upper layer in words, with its evidence.
pub struct UpperView {
    pub words: String,
    pub evidence: String,
    /// The name alone ("NGAP"), empty when unknown.
    pub name: String,
}

/// An endpoint's SCTP stack in words.
pub struct StackView {
    /// The analyzer's identifier ("linux"), empty when unknown.
    pub id: String,
    pub words: String,
    pub confidence: String,
    pub evidence: String,
}

/// A stream problem of the diagnosis (an `invalid_stream` or `ppid_missing` event).
pub struct StreamProblem {
    pub kind: String,
    pub words: String,
    pub t_s: String,
    pub frame: u64,
    pub by: String,
    pub detail: String,
    pub causes: Vec<String>,
    pub filter: String,
}

/// The Streams section of the association page.
pub struct StreamsSection {
    pub upper: UpperView,
    pub negotiated: Vec<NegotiatedRow>,
    pub dirs: Vec<StreamsDir>,
}

/// "NGAP (PPID 60)", "PPID 0 (not specified)", "PPID 1234 (unregistered)".
fn ppid_words(ppid: u32, name: Option<&str>) -> String {
    match (name, ppid) {
        (Some(n), p) => format!("{n} (PPID {p})"),
        (None, 0) => "PPID 0 (not specified)".into(),
        (None, p) => format!("PPID {p} (unregistered)"),
    }
}

fn messages(n: u64) -> String {
    if n == 1 {
        "1 message".into()
    } else {
        format!("{n} messages")
    }
}

fn stream_row(s: &StreamReport) -> StreamRow {
    let mut ppids: Vec<String> = if s.ppids.len() == 1 {
        vec![ppid_words(s.ppids[0].ppid, s.ppids[0].name.as_deref())]
    } else {
        s.ppids
            .iter()
            .map(|p| {
                format!(
                    "{}: {}",
                    ppid_words(p.ppid, p.name.as_deref()),
                    messages(p.messages)
                )
            })
            .collect()
    };
    if s.ppid_other_messages > 0 {
        ppids.push(format!("other PPIDs: {}", messages(s.ppid_other_messages)));
    }
    StreamRow {
        stream: s.stream,
        messages: s.messages,
        bytes: s.bytes,
        data_chunks: s.data_chunks,
        ppids: if ppids.is_empty() {
            NONE.into()
        } else {
            ppids.join(", ")
        },
        ordered: pct(s.ordered_share),
        fragmented: s.fragmented,
        ssn_gaps: s.ssn_gaps,
        hol: crate::hol_view::stream_cell(s),
        hol_blocked: s.hol_blocked_messages.unwrap_or(0),
        hol_sort: s.hol_blocked_messages,
        // A no-break space keeps the dash with the first time when the column wraps.
        active: format!("{}\u{a0}– {}", secs(s.first_s), secs(s.last_s)),
    }
}

fn streams_dir(
    a: &AssocReport,
    d: &DirectionReport,
    (idx, table): (Vec<usize>, TableView),
) -> StreamsDir {
    StreamsDir {
        sender: d.sender,
        title: format!(
            "Streams sent by {} (to {})",
            endpoint_label(a, d.sender),
            endpoint_label(a, 1 - (d.sender & 1))
        ),
        rows: idx
            .iter()
            .filter_map(|&i| d.streams.get(i))
            .map(stream_row)
            .collect(),
        total: d.streams.len(),
        table,
    }
}

pub fn upper_layer(a: &AssocReport) -> UpperView {
    let u = &a.stream_summary.upper_layer;
    let words = match (&u.name, u.ppid) {
        (Some(n), Some(p)) => format!("{n} (PPID {p})"),
        (Some(n), None) => n.clone(),
        (None, Some(p)) => format!("unknown (unregistered PPID {p})"),
        (None, None) => "unknown".into(),
    };
    UpperView {
        words,
        evidence: name_endpoints(a, &u.evidence),
        name: u.name.clone().unwrap_or_default(),
    }
}

/// The Streams section; `pages(sender)`: the rows (positions in the direction's list) and the
/// view of that direction's streams table.
pub fn streams_section(
    a: &AssocReport,
    mut pages: impl FnMut(u8) -> (Vec<usize>, TableView),
) -> StreamsSection {
    let opt16 = |v: Option<u16>| opt(v);
    StreamsSection {
        upper: upper_layer(a),
        negotiated: a
            .stream_summary
            .streams_negotiated
            .iter()
            .enumerate()
            .map(|(i, n)| NegotiatedRow {
                endpoint: endpoint_label(a, i as u8),
                os: opt16(n.os),
                mis: opt16(n.mis),
                usable_out: opt(n.usable_out),
                added_out: n.added_out,
            })
            .collect(),
        dirs: a
            .directions
            .iter()
            .map(|d| streams_dir(a, d, pages(d.sender)))
            .collect(),
    }
}

/// "Linux kernel SCTP", "usrsctp (FreeBSD / usrsctp / older WebRTC)", "dcsctp (WebRTC)".
fn stack_name_words(name: &str) -> String {
    match name {
        "linux" => "Linux kernel SCTP".into(),
        "usrsctp" => "usrsctp (FreeBSD / usrsctp / older WebRTC)".into(),
        "dcsctp" => "dcsctp (WebRTC)".into(),
        other => other.replace('_', " "),
    }
}

pub fn stack_view(a: &AssocReport, s: &StackReport) -> StackView {
    let words = match &s.name {
        Some(n) => format!("{} ({} confidence)", stack_name_words(n), s.confidence),
        None => "unknown".into(),
    };
    StackView {
        id: s.name.clone().unwrap_or_default(),
        words,
        confidence: s.confidence.clone(),
        evidence: if s.evidence.is_empty() {
            "no INIT or INIT-ACK of this endpoint points to one stack".into()
        } else {
            name_endpoints(a, &s.evidence)
        },
    }
}

/// A direction's failover policy in words ("potentially failed (RFC 7829), pf_retrans 0").
pub fn policy_words(policy: Option<&str>, pf_retrans: Option<u32>) -> Option<String> {
    Some(match policy? {
        "pf" => match pf_retrans {
            Some(n) => format!("potentially failed (RFC 7829), pf_retrans {n}"),
            None => "potentially failed (RFC 7829)".into(),
        },
        "rfc" => "RFC 9260 8.2: after Path.Max.Retrans + 1 expiries".into(),
        other => other.replace('_', " "),
    })
}

/// The direction's failover policy with its evidence, for its facts list.
pub fn direction_policy(a: &AssocReport, d: &DirectionReport) -> String {
    match policy_words(d.failover_policy.as_deref(), d.pf_retrans) {
        Some(w) => match d.policy_evidence.as_deref().filter(|e| !e.is_empty()) {
            Some(ev) => format!("{w} — {}", name_endpoints(a, ev)),
            None => w,
        },
        None => "unknown (no failover shows it)".into(),
    }
}

/// The stream problems of the diagnosis: invalid streams and missing PPIDs.
pub fn stream_problems(a: &AssocReport) -> Vec<StreamProblem> {
    a.lifecycle
        .events
        .iter()
        .filter(|e| matches!(e.kind.as_str(), "invalid_stream" | "ppid_missing"))
        .map(|e| StreamProblem {
            kind: e.kind.clone(),
            words: event_words(&e.kind),
            t_s: secs(e.t_s),
            frame: e.frame,
            by: e.by.map_or(NONE.into(), |b| endpoint_label(a, b)),
            detail: name_endpoints(a, &e.detail),
            causes: e
                .causes
                .iter()
                .map(|c| match &c.detail {
                    Some(d) => format!("{} (cause {}): {d}", c.name, c.code),
                    None => format!("{} (cause {})", c.name, c.code),
                })
                .collect(),
            filter: e.filter.clone(),
        })
        .collect()
}

/// The upper layers of a capture's associations, most frequent first ("Diameter, M3UA"), from
/// the associations per upper layer.
pub fn capture_upper(counts: &BTreeMap<String, usize>) -> String {
    let mut v: Vec<(&str, usize)> = counts.iter().map(|(n, c)| (n.as_str(), *c)).collect();
    v.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(y.0)));
    if v.is_empty() {
        NONE.into()
    } else {
        v.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
    }
}
