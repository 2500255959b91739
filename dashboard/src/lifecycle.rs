//! How associations started and ended, in words: the "Ended" cells of the captures list and the
//! capture page, the end panel and the lifecycle table of the association page, the lifecycle
//! markers of the timeline chart, and the capture's accounting (association ends, ABORT causes,
//! duplicate frames, unassociated packets, the checksum verdict). Everything comes from the
//! analyzer's report (`AssocReport` lifecycle fields, `CaptureReport.accounting`); endpoints are
//! named by their addresses and port, never by their index.

use std::collections::BTreeMap;

use analyzer::report::{AssocReport, CaptureReport};
use analyzer::sctp::cause::CauseInfo;
use serde::{Deserialize, Serialize};

use crate::series::Event;
use crate::views::{secs, NONE};

/// One endpoint as users know it: its addresses and port (`10.0.0.1:2905`,
/// `10.0.0.1,10.0.0.3:2905`, `[2001:db8::1]:2905`).
pub fn endpoint_label(a: &AssocReport, i: u8) -> String {
    let Some(e) = a.endpoints.get(usize::from(i)) else {
        return format!("endpoint {i}");
    };
    let addrs: Vec<String> = e
        .addresses
        .iter()
        .map(|x| {
            if x.contains(':') {
                format!("[{x}]")
            } else {
                x.clone()
            }
        })
        .collect();
    if addrs.is_empty() {
        format!("port {}", e.port)
    } else {
        format!("{}:{}", addrs.join(","), e.port)
    }
}

fn by_label(a: &AssocReport, by: Option<u8>) -> String {
    by.map_or(NONE.to_string(), |b| endpoint_label(a, b))
}

/// The analyzer's words with "endpoint 0" / "endpoint 1" replaced by the endpoint's addresses
/// and port.
pub fn name_endpoints(a: &AssocReport, text: &str) -> String {
    const KEY: &str = "endpoint ";
    let mut out = String::with_capacity(text.len() + 32);
    let mut rest = text;
    while let Some(pos) = rest.find(KEY) {
        let after = &rest[pos + KEY.len()..];
        let mut digits = after.chars();
        let idx = match (digits.next(), digits.next()) {
            (Some(d @ ('0' | '1')), next) if !next.is_some_and(|c| c.is_alphanumeric()) => {
                Some(d as u8 - b'0')
            }
            _ => None,
        };
        match idx {
            Some(i) if usize::from(i) < a.endpoints.len() => {
                out.push_str(&rest[..pos]);
                out.push_str(&endpoint_label(a, i));
                rest = &after[1..];
            }
            _ => {
                out.push_str(&rest[..pos + KEY.len()]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// An event kind (`init_retransmitted`) in words ("INIT retransmitted").
pub fn event_words(kind: &str) -> String {
    match kind {
        "init" => "INIT",
        "init_retransmitted" => "INIT retransmitted",
        "init_ack" => "INIT-ACK",
        "cookie_echo" => "COOKIE-ECHO",
        "cookie_echo_retransmitted" => "COOKIE-ECHO retransmitted",
        "cookie_ack" => "COOKIE-ACK",
        "init_collision" => "INIT collision",
        "restart" => "restart",
        "stale_cookie" => "Stale Cookie Error",
        "shutdown" => "SHUTDOWN",
        "shutdown_ack" => "SHUTDOWN-ACK",
        "shutdown_complete" => "SHUTDOWN-COMPLETE",
        "abort" => "ABORT",
        "error" => "ERROR",
        "heartbeat_loss" => "HEARTBEATs unanswered",
        "after_end" => "packet after the end",
        "invalid_stream" => "DATA on an invalid stream",
        "ppid_missing" => "PPID missing (0 instead of the port's)",
        "stream_reset" => "stream reset (RE-CONFIG)",
        "streams_added" => "streams added (RE-CONFIG)",
        other => return other.replace('_', " "),
    }
    .to_string()
}

/// An end kind (`open_at_capture_end`) in words ("open at capture end", `docs/definitions.toml`).
pub fn end_words(kind: &str) -> String {
    crate::help::words("end_kind", kind)
}

/// CSS class of an end: an ABORT or a failed handshake is `bad`, a restart `warn`, a shutdown
/// `ok`, an association still open nothing.
pub fn end_class(kind: &str) -> &'static str {
    match kind {
        "abort" | "handshake_failed" => "bad",
        "restarted" => "warn",
        "shutdown" => "ok",
        _ => "",
    }
}

/// Unassociated-packet reasons in words.
fn reason_words(reason: &str) -> String {
    match reason {
        "ootb_abort" => "out-of-the-blue ABORT (no association matches; RFC 9260 8.4)",
        "ootb_shutdown_complete" => "out-of-the-blue SHUTDOWN-COMPLETE (RFC 9260 8.4)",
        "ootb_shutdown_ack" => "out-of-the-blue SHUTDOWN-ACK (RFC 9260 8.4)",
        "bad_vtag" => {
            "verification tag of no association on these addresses and ports (RFC 9260 8.5)"
        }
        "no_chunk" => "no decodable chunk",
        "after_reported_end" => "late packet of an association already reported",
        "limit" => "past the bound on associations tracked at once",
        other => return other.replace('_', " "),
    }
    .to_string()
}

/// "User-Initiated Abort (cause 12)".
fn cause_name(c: &CauseInfo) -> String {
    format!("{} (cause {})", c.name, c.code)
}

pub struct CauseRow {
    pub code: u16,
    pub name: String,
    pub detail: String,
}

fn cause_rows(causes: &[CauseInfo]) -> Vec<CauseRow> {
    causes
        .iter()
        .map(|c| CauseRow {
            code: c.code,
            name: c.name.clone(),
            detail: c.detail.clone().unwrap_or_default(),
        })
        .collect()
}

/// The "Ended" cell of an association: short words, CSS class, the analyzer's full words.
pub struct Ended {
    pub text: String,
    pub class: &'static str,
    pub title: String,
}

/// "shutdown by A", "aborted by B: User-Initiated Abort", "handshake failed", "open at capture
/// end", "restarted".
pub fn ended(a: &AssocReport) -> Ended {
    let end = &a.lifecycle.end;
    let by = end.by.map(|b| endpoint_label(a, b));
    let causes: Vec<&str> = end.causes.iter().map(|c| c.name.as_str()).collect();
    let with_causes = |s: String| {
        if causes.is_empty() {
            s
        } else {
            format!("{s}: {}", causes.join(", "))
        }
    };
    let text = match (end.kind.as_str(), by) {
        ("shutdown", Some(b)) => format!("shutdown by {b}"),
        ("abort", Some(b)) => with_causes(format!("aborted by {b}")),
        ("abort", None) => with_causes("aborted".into()),
        ("handshake_failed", Some(b)) => with_causes(format!("handshake failed, ABORT by {b}")),
        ("restarted", Some(b)) => format!("restarted by {b}"),
        (k, _) => end_words(k),
    };
    Ended {
        text,
        class: end_class(&end.kind),
        title: name_endpoints(a, &end.detail),
    }
}

const END_ORDER: [&str; 5] = [
    "abort",
    "handshake_failed",
    "restarted",
    "open_at_capture_end",
    "shutdown",
];

/// End kinds of a capture's associations and, per kind, the causes of those that ended that
/// way (first seen first): what `end_counts` and `ends_summary` need, gathered association by
/// association.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EndsAcc {
    kinds: BTreeMap<String, u64>,
    causes: BTreeMap<String, Vec<String>>,
}

impl EndsAcc {
    pub fn add(&mut self, a: &AssocReport) {
        let end = &a.lifecycle.end;
        *self.kinds.entry(end.kind.clone()).or_insert(0) += 1;
        let causes = self.causes.entry(end.kind.clone()).or_default();
        for c in &end.causes {
            if !causes.contains(&c.name) {
                causes.push(c.name.clone());
            }
        }
    }

    pub fn of(r: &CaptureReport) -> EndsAcc {
        let mut acc = EndsAcc::default();
        for a in &r.associations {
            acc.add(a);
        }
        acc
    }
}

/// Associations per end kind: the analyzer's `association_ends`, else counted from the
/// associations.
pub fn end_counts(r: &CaptureReport, acc: &EndsAcc) -> Vec<(String, u64)> {
    let mut m: BTreeMap<String, u64> = r.accounting.association_ends.clone();
    if m.is_empty() {
        m = acc.kinds.clone();
    }
    let rank = |k: &str| {
        END_ORDER
            .iter()
            .position(|x| *x == k)
            .unwrap_or(END_ORDER.len())
    };
    let mut v: Vec<(String, u64)> = m.into_iter().filter(|(_, n)| *n > 0).collect();
    v.sort_by_key(|(k, _)| rank(k));
    v
}

/// The capture's ends in one line ("7 aborted (User-Initiated Abort), 1 shutdown") and its
/// class; the causes are those of the associations that ended that way.
pub fn ends_summary(r: &CaptureReport, acc: &EndsAcc) -> Ended {
    let counts = end_counts(r, acc);
    let parts: Vec<String> = counts
        .iter()
        .map(|(k, n)| {
            let causes = acc.causes.get(k).map_or(&[][..], Vec::as_slice);
            let mut s = format!("{n} {}", end_words(k));
            if !causes.is_empty() {
                s.push_str(&format!(" ({})", causes.join(", ")));
            }
            s
        })
        .collect();
    let classes: Vec<&str> = counts.iter().map(|(k, _)| end_class(k)).collect();
    let class = ["bad", "warn"]
        .into_iter()
        .find(|c| classes.contains(c))
        .unwrap_or("");
    Ended {
        text: if parts.is_empty() {
            NONE.into()
        } else {
            parts.join(", ")
        },
        class,
        title: String::new(),
    }
}

/// One row of the association page's lifecycle table.
pub struct EventRow {
    pub t_s: String,
    pub frame: u64,
    pub by: String,
    pub kind: String,
    pub words: String,
    pub detail: String,
    pub causes: Vec<String>,
    pub filter: String,
    pub class: &'static str,
}

fn event_class(kind: &str) -> &'static str {
    match kind {
        "abort" => "bad",
        "error"
        | "stale_cookie"
        | "heartbeat_loss"
        | "init_retransmitted"
        | "cookie_echo_retransmitted"
        | "init_collision"
        | "restart"
        | "after_end"
        | "invalid_stream"
        | "ppid_missing" => "warn",
        _ => "",
    }
}

/// The rows of the lifecycle events `idx` (positions in the report's list, a page of it).
pub fn event_rows(a: &AssocReport, idx: &[usize]) -> Vec<EventRow> {
    idx.iter()
        .filter_map(|&i| a.lifecycle.events.get(i))
        .map(|e| {
            let mut words = event_words(&e.kind);
            if e.kind == "after_end" && !e.chunks.is_empty() {
                words.push_str(&format!(" ({})", e.chunks.join(", ")));
            }
            EventRow {
                t_s: secs(e.t_s),
                frame: e.frame,
                by: by_label(a, e.by),
                kind: e.kind.clone(),
                words,
                detail: name_endpoints(a, &e.detail),
                causes: e
                    .causes
                    .iter()
                    .map(|c| match &c.detail {
                        Some(d) => format!("{}: {d}", cause_name(c)),
                        None => cause_name(c),
                    })
                    .collect(),
                filter: e.filter.clone(),
                class: event_class(&e.kind),
            }
        })
        .collect()
}

/// The "Ended" panel of the association page's diagnosis.
pub struct EndPanel {
    pub kind: String,
    /// The kind in words ("aborted").
    pub words: String,
    pub class: &'static str,
    pub title: String,
    pub by: String,
    pub when: String,
    pub frame: String,
    pub detail: String,
    pub causes: Vec<CauseRow>,
    /// The filter of the chunk that ended it, else the association's.
    pub filter: String,
    pub filter_label: &'static str,
}

impl EndPanel {
    /// An ABORT or a failed handshake: never shown as a plain "no failover".
    pub fn is_bad(&self) -> bool {
        self.class == "bad"
    }
}

pub fn end_panel(a: &AssocReport) -> EndPanel {
    let end = &a.lifecycle.end;
    let ended = ended(a);
    let mut title = ended.text;
    if let Some(c) = title.get(..1) {
        title = c.to_uppercase() + &title[1..];
    }
    if let Some(t) = end.t_s {
        title.push_str(&format!(" at {} s", secs(t)));
    }
    if let Some(f) = end.frame {
        title.push_str(&format!(" (frame {f})"));
    }
    let event = end.frame.and_then(|f| {
        a.lifecycle
            .events
            .iter()
            .rev()
            .find(|e| e.frame == f && e.kind != "after_end")
    });
    let (filter, filter_label) = match event {
        Some(e) => (
            e.filter.clone(),
            "Wireshark filter (the chunk that ended it)",
        ),
        None => (a.lifecycle.filter.clone(), "Filter this association"),
    };
    EndPanel {
        kind: end.kind.clone(),
        words: end_words(&end.kind),
        class: end_class(&end.kind),
        title,
        by: by_label(a, end.by),
        when: end.t_s.map_or(NONE.into(), |t| format!("{} s", secs(t))),
        frame: end.frame.map_or(NONE.into(), |f| f.to_string()),
        detail: name_endpoints(a, &end.detail),
        causes: cause_rows(&end.causes),
        filter,
        filter_label,
    }
}

/// Chart marker kind of a lifecycle event (its colour in `charts.js`).
fn marker_kind(kind: &str) -> &'static str {
    match kind {
        "abort" => "abort",
        "error" | "stale_cookie" | "heartbeat_loss" | "invalid_stream" | "ppid_missing" => "error",
        "shutdown" | "shutdown_ack" | "shutdown_complete" => "shutdown",
        "after_end" => "after_end",
        _ => "handshake",
    }
}

/// The lifecycle events as markers of the timeline chart (label: what happened, by whom).
pub fn chart_events(a: &AssocReport) -> Vec<Event> {
    a.lifecycle
        .events
        .iter()
        .map(|e| {
            let by =
                e.by.map_or(String::new(), |b| format!(" from {}", endpoint_label(a, b)));
            let causes: Vec<&str> = e.causes.iter().map(|c| c.name.as_str()).collect();
            let causes = if causes.is_empty() {
                String::new()
            } else {
                format!(": {}", causes.join(", "))
            };
            Event {
                t: e.t_s,
                kind: marker_kind(&e.kind),
                label: format!("{}{by}{causes}", event_words(&e.kind)),
                frame: Some(e.frame),
                short: Some(event_words(&e.kind)),
            }
        })
        .collect()
}

/// "N bad checksums — checksum offload at the capturing host (all sent by X; peers valid)" or
/// "— corruption"; the count alone when the report has no verdict.
pub fn checksum_words(r: &CaptureReport) -> String {
    let acc = &r.accounting;
    let n = acc
        .checksum_evidence
        .as_ref()
        .map_or(r.bad_checksums, |e| e.bad.max(r.bad_checksums));
    let plural = if n == 1 { "" } else { "s" };
    match acc.checksum_offload {
        Some(true) => {
            let side = acc
                .checksum_evidence
                .as_ref()
                .map(|e| e.bad_side.clone())
                .unwrap_or_default();
            let who = if side.is_empty() {
                String::new()
            } else {
                format!(" (all sent by {}; peers valid)", side.join(", "))
            };
            format!("{n} bad checksum{plural} — checksum offload at the capturing host{who}")
        }
        Some(false) => {
            let mixed = acc
                .checksum_evidence
                .as_ref()
                .map_or(0, |e| e.mixed_associations);
            let how = if mixed > 0 {
                format!(" ({mixed} associations with bad checksums from both sides or among valid ones)")
            } else {
                String::new()
            };
            format!("{n} bad checksum{plural} — corruption{how}")
        }
        None => n.to_string(),
    }
}

/// The verdict alone, for an association's own bad checksums.
pub fn checksum_verdict(r: &CaptureReport) -> Option<&'static str> {
    match r.accounting.checksum_offload {
        Some(true) => Some("checksum offload at the capturing host"),
        Some(false) => Some("corruption"),
        None => None,
    }
}

/// The capture page's accounting section.
pub struct Accounting {
    pub ends: Vec<(String, u64, &'static str)>,
    pub abort_causes: Vec<(u16, String, u64)>,
    pub duplicate_frames: u64,
    pub duplicate_chunks: String,
    pub unassociated: u64,
    pub reasons: Vec<(String, u64)>,
    pub unassociated_chunks: String,
    pub addresses: Vec<String>,
    pub ports: String,
    pub frames: String,
    pub malformed_chunks: u64,
}

fn counts_text(m: &BTreeMap<String, u64>) -> String {
    if m.is_empty() {
        return NONE.to_string();
    }
    m.iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn accounting(r: &CaptureReport, ends: &EndsAcc) -> Accounting {
    let acc = &r.accounting;
    let u = &acc.unassociated;
    Accounting {
        ends: end_counts(r, ends)
            .into_iter()
            .map(|(k, n)| (end_words(&k), n, end_class(&k)))
            .collect(),
        abort_causes: acc
            .abort_causes
            .iter()
            .map(|c| (c.code, c.name.clone(), c.associations))
            .collect(),
        duplicate_frames: acc.duplicate_frames,
        duplicate_chunks: counts_text(&acc.duplicate_chunks),
        unassociated: u.packets,
        reasons: u
            .reasons
            .iter()
            .map(|(k, n)| (reason_words(k), *n))
            .collect(),
        unassociated_chunks: counts_text(&u.chunks),
        addresses: u.addresses.iter().map(|s| s.replace("->", "→")).collect(),
        ports: u
            .ports
            .iter()
            .map(|[s, d]| format!("{s} → {d}"))
            .collect::<Vec<_>>()
            .join(", "),
        frames: match (u.first_frame, u.last_frame) {
            (Some(a), Some(b)) if a != b => format!("{a} – {b}"),
            (Some(a), _) | (None, Some(a)) => a.to_string(),
            (None, None) => NONE.into(),
        },
        malformed_chunks: acc.malformed_chunks,
    }
}
