//! Server-rendered pages (askama templates in the workspace's `templates/`): captures list,
//! upload, capture and compare (the association page is `assoc_page`). Every figure comes from
//! the stored `CaptureReport` (its digest, `digest`).

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};

use crate::api::entry;
use crate::assoc_list::{self, Filter, ListQuery};
use crate::digest::Digest;
use crate::error::{human_bytes, AppError};
use crate::help::Def;
use crate::lifecycle::{self, Accounting, Ended};
use crate::store::{Entry, Status};
use crate::stories::{self, StoryLink};
use crate::streams_view;
use crate::table_page::{Pager, SortHeader};
use crate::tcp_view::{self, TcpView};
use crate::views::{self, date, ms, opt, secs, NONE};
use crate::AppState;

pub struct IndexRow {
    pub id: String,
    pub name: String,
    pub size: String,
    pub size_bytes: u64,
    pub status: &'static str,
    pub error: String,
    pub packets: String,
    pub associations: String,
    pub tcp_flows: String,
    pub failovers: String,
    pub spurious: String,
    /// How the capture's associations ended ("7 aborted (User-Initiated Abort), 1 shutdown").
    pub ended: Ended,
    /// Upper layers of the associations ("NGAP", "Diameter, M3UA").
    pub upper_layer: String,
    pub date: String,
    pub uploaded: u64,
}

#[derive(Template, WebTemplate)]
#[template(path = "index.html")]
pub struct IndexPage {
    pub title: String,
    pub rows: Vec<IndexRow>,
    /// "Start here": three stories of the sample traces.
    pub stories: Vec<StoryLink>,
    pub max_upload: String,
    pub max_upload_bytes: u64,
}

fn index_row(e: &Entry) -> IndexRow {
    let d = e.digest.as_deref();
    let s = d.map(Digest::summary_json);
    let f = |k: &str| {
        s.as_ref()
            .and_then(|s| s.get(k))
            .filter(|v| !v.is_null())
            .map_or(NONE.to_string(), views::cell)
    };
    IndexRow {
        id: e.meta.id.clone(),
        name: e.meta.name.clone(),
        size: human_bytes(e.meta.size),
        size_bytes: e.meta.size,
        status: e.meta.status.as_str(),
        error: e.meta.error.clone().unwrap_or_default(),
        packets: f("packets"),
        associations: f("associations"),
        tcp_flows: f("tcp_flows"),
        failovers: f("failovers"),
        spurious: f("spurious_failovers"),
        ended: d.map_or(
            Ended {
                text: NONE.into(),
                class: "",
                title: String::new(),
            },
            |d| lifecycle::ends_summary(&d.head, &d.ends),
        ),
        upper_layer: d.map_or(NONE.into(), |d| streams_view::capture_upper(&d.uppers)),
        date: date(e.meta.uploaded_unix as f64),
        uploaded: e.meta.uploaded_unix,
    }
}

pub async fn index(State(state): State<AppState>) -> IndexPage {
    let entries = state.store().list();
    IndexPage {
        title: "Captures".into(),
        rows: entries.iter().map(index_row).collect(),
        stories: stories::story_links(&entries),
        max_upload: human_bytes(state.config().max_upload),
        max_upload_bytes: state.config().max_upload,
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "upload.html")]
pub struct UploadPage {
    pub title: String,
    pub max_upload: String,
    pub max_upload_bytes: u64,
}

pub async fn upload_page(State(state): State<AppState>) -> UploadPage {
    UploadPage {
        title: "Upload captures".into(),
        max_upload: human_bytes(state.config().max_upload),
        max_upload_bytes: state.config().max_upload,
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "pending.html")]
pub struct PendingPage {
    pub title: String,
    pub id: String,
    pub name: String,
    pub status: &'static str,
    pub error: String,
}

pub struct AssocRow {
    pub id: usize,
    pub endpoints: String,
    pub handshake: String,
    pub packets: u64,
    pub data_bytes: u64,
    pub paths: usize,
    pub rtx: u64,
    pub timeouts: usize,
    pub failovers: usize,
    pub spurious: usize,
    pub first_s: String,
    pub last_s: String,
    pub ended: Ended,
    pub upper_layer: String,
}

/// The association list's filter form, counts and pager.
pub struct ListView {
    pub f: Filter,
    /// Associations of the capture.
    pub total: usize,
    pub port: String,
    pub counts: String,
    pub headers: Vec<SortHeader>,
    pub pager: Pager,
    pub uppers: Vec<String>,
    /// (kind, words, associations)
    pub ends: Vec<(String, String, u64)>,
    pub sort: &'static str,
    pub order: &'static str,
    pub limit: usize,
}

pub struct TableLink {
    pub name: String,
    pub size: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "capture.html")]
pub struct CapturePage {
    pub title: String,
    pub id: String,
    pub name: String,
    pub head: Vec<(Def, String)>,
    pub assocs: Vec<AssocRow>,
    /// Filter, sort, counts and pages of the association list (issue 16 part 1).
    pub list: ListView,
    /// TCP connections and their directions.
    pub tcp: TcpView,
    pub warnings: Vec<String>,
    pub tables: Vec<TableLink>,
    /// How the associations ended, duplicates, unassociated packets.
    pub acc: Accounting,
    pub ends: Ended,
}

/// (label, sort key, numeric, figure defined in `docs/definitions.toml`).
const COLUMNS: [(&str, &str, bool, &str); 14] = [
    ("#", "id", true, ""),
    ("endpoints", "endpoints", false, "endpoints"),
    ("upper layer", "upper", false, "upper_layer"),
    ("handshake (ms)", "handshake", true, "handshake"),
    ("packets", "packets", true, "packets"),
    ("DATA bytes", "data_bytes", true, "data_bytes"),
    ("paths", "paths", true, "paths"),
    (
        "retransmissions",
        "retransmissions",
        true,
        "retransmissions",
    ),
    ("timeouts", "timeouts", true, "timeouts"),
    ("failovers", "failovers", true, "failover"),
    ("spurious", "spurious", true, "spurious_failover"),
    ("first (s)", "first", true, "first_last"),
    ("last (s)", "last", true, "first_last"),
    ("ended", "ended", false, "ended"),
];

fn list_view(id: &str, d: &Digest, f: &Filter, p: &assoc_list::Page) -> ListView {
    let base = format!("/captures/{id}");
    let link = |q: String, offset: usize| {
        let mut parts: Vec<String> = Vec::new();
        if !q.is_empty() {
            parts.push(q);
        }
        if offset > 0 {
            parts.push(format!("offset={offset}"));
        }
        if parts.is_empty() {
            format!("{base}#associations")
        } else {
            format!("{base}?{}#associations", parts.join("&"))
        }
    };
    let headers = COLUMNS
        .iter()
        .map(|&(label, key, num, fig)| {
            let current = f.sort == key;
            let desc = if current { !f.desc } else { num && key != "id" };
            SortHeader::new(
                label.to_string(),
                Def::new(fig, label),
                num,
                link(f.query(Some((key, desc))), 0),
                current.then_some(f.desc),
            )
        })
        .collect();
    let limit = f.limit.unwrap_or(assoc_list::MAX_PAGE_ROWS).max(1);
    let q = f.query(None);
    let pager = Pager::new(
        "association pages",
        p.offset,
        limit,
        p.counts.matching,
        |off| link(q.clone(), off),
    );
    ListView {
        total: p.counts.total,
        port: f.port.map(|p| p.to_string()).unwrap_or_default(),
        counts: assoc_list::counts_text(p, f.filtered()),
        headers,
        pager,
        uppers: assoc_list::upper_layers(&d.rows),
        ends: lifecycle::end_counts(&d.head, &d.ends)
            .into_iter()
            .map(|(k, n)| {
                let w = lifecycle::end_words(&k);
                (k, w, n)
            })
            .collect(),
        sort: f.sort,
        order: if f.desc { "desc" } else { "asc" },
        limit,
        f: f.clone(),
    }
}

pub(crate) fn table_links(state: &AppState, id: &str) -> Vec<TableLink> {
    state
        .store()
        .table_names(id)
        .into_iter()
        .map(|name| {
            let size = state
                .store()
                .table_path(id, &name)
                .and_then(|p| std::fs::metadata(p).ok())
                .map_or(String::new(), |m| human_bytes(m.len()));
            TableLink { name, size }
        })
        .collect()
}

fn capture_head(d: &Digest) -> Vec<(Def, String)> {
    let r = &d.head;
    let s = d.summary_json();
    vec![
        (
            Def::of("format"),
            opt(r.format.clone())
                + &r.compressed_with()
                    .map_or(String::new(), |z| format!(" ({z})")),
        ),
        (Def::of("packets"), r.packets.to_string()),
        (Def::of("sctp_packets"), r.sctp_packets.to_string()),
        (Def::of("tcp_packets"), r.tcp_packets.to_string()),
        (Def::of("bad_checksums"), lifecycle::checksum_words(r)),
        (
            Def::of("duplicate_frames"),
            r.accounting.duplicate_frames.to_string(),
        ),
        (
            Def::of("unassociated"),
            r.accounting.unassociated.packets.to_string(),
        ),
        (Def::of("start"), r.start_epoch_s.map_or(NONE.into(), date)),
        (Def::of("duration"), secs(r.duration_s)),
        (Def::of("associations"), d.associations().to_string()),
        (
            Def::of("upper_layer"),
            streams_view::capture_upper(&d.uppers),
        ),
        (Def::of("tcp_flows"), views::cell(&s["tcp_flows"])),
        (Def::of("retransmissions"), d.retransmissions.to_string()),
        (Def::of("failover"), views::cell(&s["failovers"])),
        (
            Def::of("spurious_failover"),
            views::cell(&s["spurious_failovers"]),
        ),
    ]
}

pub(crate) fn pending(e: &Entry) -> Response {
    PendingPage {
        title: e.meta.name.clone(),
        id: e.meta.id.clone(),
        name: e.meta.name.clone(),
        status: e.meta.status.as_str(),
        error: e.meta.error.clone().unwrap_or_default(),
    }
    .into_response()
}

/// `GET /captures/{id}?offset=&limit=&sort=&order=&q=&addr=&port=&upper=&end=&failover=&...`:
/// the association list is filtered, sorted and paginated here (`assoc_list`).
pub async fn capture(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Response, AppError> {
    let e = entry(&state, &id)?;
    let Some(d) = e.digest.clone().filter(|_| e.meta.status == Status::Done) else {
        return Ok(pending(&e));
    };
    let r = &d.head;
    let q = q
        .map(|Query(q)| q)
        .map_err(|e| AppError::BadRequest(format!("bad list parameters: {}", e.body_text())))?;
    let f = Filter::parse(&q, assoc_list::PAGE_ROWS, Some(assoc_list::MAX_PAGE_ROWS))?;
    let p = assoc_list::page(&d.rows, &f);
    let assocs = p
        .rows
        .iter()
        .map(|s| AssocRow {
            id: s.id,
            endpoints: s.endpoints.clone(),
            handshake: ms(s.handshake_ms),
            packets: s.packets,
            data_bytes: s.data_bytes,
            paths: s.paths,
            rtx: s.retransmissions,
            timeouts: s.timeouts,
            failovers: s.failovers,
            spurious: s.spurious_failovers,
            first_s: secs(s.first_s),
            last_s: secs(s.last_s),
            ended: Ended {
                text: s.ended.clone(),
                class: lifecycle::end_class(&s.end_kind),
                title: d
                    .position(s.id)
                    .and_then(|i| d.end_titles.get(i))
                    .cloned()
                    .unwrap_or_default(),
            },
            upper_layer: assoc_list::upper_cell(s),
        })
        .collect();
    let list = list_view(&id, &d, &f, &p);
    Ok(CapturePage {
        title: e.meta.name.clone(),
        id: id.clone(),
        name: e.meta.name.clone(),
        head: capture_head(&d),
        assocs,
        list,
        tcp: tcp_view::tcp_view(r),
        warnings: r.warnings.clone(),
        tables: table_links(&state, &id),
        acc: lifecycle::accounting(r, &d.ends),
        ends: lifecycle::ends_summary(r, &d.ends),
    }
    .into_response())
}
