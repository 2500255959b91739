//! The association page: endpoints, paths, the diagnosis (how the association ended, failovers),
//! the lifecycle events, timers and charts. Every figure comes from the stored `CaptureReport`.

use std::collections::HashMap;

use analyzer::report::AssocReport;
use askama::Template;
use askama_web::WebTemplate;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};

use crate::api::{done_report, entry, find_assoc};
use crate::assoc_dirs::{dir_view, path_rows, summary_line, DirView, PageOf, PathRow};
use crate::assoc_tables::{self, Table};
use crate::error::AppError;
use crate::help::{self, Def};
use crate::lifecycle::{self, EndPanel, EventRow};
use crate::pages::{pending, table_links, TableLink};
use crate::store::Status;
use crate::streams_view::{self, StackView, StreamProblem, StreamsSection};
use crate::table_page::{href, TableState, TableView};
use crate::views::{self, ms, opt, opt_s, round, secs, NONE};
use crate::AppState;

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
    /// Index in the page's list (`failovers`, `stalls`) of each card of the group shown, in time
    /// order: the first `GROUP_CARDS`.
    pub members: Vec<usize>,
    /// Cards of the group, those not shown too.
    pub count: usize,
    /// "9 spurious failovers of DATA sender 0, same cause: ...".
    pub heading: String,
    /// Where the cards not shown are (the failovers table searched for the cause), "" for none.
    pub more_href: String,
}

/// Cards shown per group at most (the others are counted, and listed in their table).
pub const GROUP_CARDS: usize = 10;

impl CardGroup {
    fn new(mut members: Vec<usize>, heading: String) -> CardGroup {
        let count = members.len();
        members.truncate(GROUP_CARDS);
        CardGroup {
            members,
            count,
            heading,
            more_href: String::new(),
        }
    }
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
            CardGroup::new(members, heading)
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
        CardGroup::new(members, heading)
    })
    .collect()
}

pub struct EndpointRow {
    pub i: usize,
    pub port: u16,
    pub vtag: String,
    pub addrs: String,
    pub stack: StackView,
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
    /// The page of the paths table shown.
    pub paths: Vec<PathRow>,
    pub paths_table: TableView,
    pub dirs: Vec<DirView>,
    /// Every failover (the cards), and the page of the failovers table shown (positions in it).
    pub failovers: Vec<FailoverRow>,
    pub failover_page: Vec<usize>,
    pub failovers_table: TableView,
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
    /// The page of the lifecycle events table shown.
    pub events: Vec<EventRow>,
    pub events_total: usize,
    pub events_table: TableView,
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

/// `GET /captures/{id}/associations/{n}?failovers_offset=&timeouts0_sort=&events_q=...`: each
/// long table of the page is paginated, sorted and searched here (`assoc_tables`).
pub async fn association(
    State(state): State<AppState>,
    Path((id, n)): Path<(String, String)>,
    q: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Result<Response, AppError> {
    let params = assoc_tables::query_map(q)?;
    let e = entry(&state, &id)?;
    if e.meta.status != Status::Done {
        return Ok(pending(&e));
    }
    let (e, d) = done_report(&state, &id)?;
    let r = &d.head;
    let a = &*find_assoc(&state, &id, &d, &n).await?;
    let tables = Table::all(a);
    let states: Vec<TableState> = tables
        .iter()
        .map(|t| t.page_state(&params))
        .collect::<Result<_, _>>()?;
    let base = format!("/captures/{id}/associations/{}", a.id);
    let page_of = |t: Table| -> PageOf {
        let i = tables.iter().position(|x| *x == t).unwrap_or(0);
        let sel = assoc_tables::select_rows(a, t, &states[i]);
        let view = TableView::new(&base, &states, i, &sel, t.cols(), &t.what(), COLLAPSE_ROWS);
        (sel.idx, view)
    };
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
    let mut failover_groups = group_failovers(&failovers);
    // The cards a group does not show are in the failovers table, searched for their cause.
    let items = assoc_tables::failover_items(a);
    for g in failover_groups
        .iter_mut()
        .filter(|g| g.count > g.members.len())
    {
        let f = items[g.members[0]].1;
        let q = format!(
            "{}{}",
            f.cause.as_deref().unwrap_or(""),
            if f.spurious { " spurious" } else { "" }
        );
        g.more_href = href(&base, &[("failovers_q".to_string(), q)], "failovers-table");
    }
    let (failover_page, failovers_table) = page_of(Table::Failovers);
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
    let all_events = &a.lifecycle.events;
    let events_summary = summary_line(
        all_events.len(),
        "lifecycle event",
        all_events.first().map(|e| secs(e.t_s)).as_deref(),
        all_events.last().map(|e| secs(e.t_s)).as_deref(),
    );
    let (event_idx, events_table) = page_of(Table::Events);
    let (path_idx, paths_table) = page_of(Table::Paths);
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
        paths: path_rows(a, &path_idx),
        paths_table,
        dirs: a
            .directions
            .iter()
            .map(|d| {
                dir_view(
                    a,
                    d,
                    page_of(Table::Timeouts(d.sender)),
                    page_of(Table::Failbacks(d.sender)),
                )
            })
            .collect(),
        failovers,
        failover_page,
        failovers_table,
        failover_groups,
        failover_summary,
        collapse: COLLAPSE_ROWS,
        sender: crate::charts::pick_sender(a, None),
        senders,
        tables: table_links(&state, &id),
        filter: a.lifecycle.filter.clone(),
        end: lifecycle::end_panel(a),
        events: lifecycle::event_rows(a, &event_idx),
        events_total: all_events.len(),
        events_table,
        events_summary,
        events_dropped: a.lifecycle.events_dropped,
        after_end_packets: a.lifecycle.after_end_packets,
        streams: streams_view::streams_section(a, |s| page_of(Table::Streams(s))),
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
