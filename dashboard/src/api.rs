//! JSON API (also used by the upload page and the charts) and the table downloads.

use std::sync::Arc;

use analyzer::report::AssocReport;
use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Multipart, Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::charts;
use crate::digest::Digest;
use crate::error::AppError;
use crate::store::{valid_table_name, Entry, Status};
use crate::upload;
use crate::AppState;

/// The stored entry of `id`, or 404.
pub(crate) fn entry(state: &AppState, id: &str) -> Result<Entry, AppError> {
    state
        .store()
        .get(id)
        .ok_or_else(|| AppError::NotFound(format!("capture {id}")))
}

/// The digest of a finished analysis; 409 while it runs, with the failure when it failed.
pub(crate) fn done_report(state: &AppState, id: &str) -> Result<(Entry, Arc<Digest>), AppError> {
    let e = entry(state, id)?;
    match (&e.meta.status, &e.digest) {
        (Status::Done, Some(r)) => {
            let r = r.clone();
            Ok((e, r))
        }
        (Status::Failed, _) => Err(AppError::NotReady(format!(
            "the analysis of {} failed: {}",
            e.meta.name,
            e.meta.error.as_deref().unwrap_or("unknown error")
        ))),
        (s, _) => Err(AppError::NotReady(format!(
            "the analysis of {} is {}",
            e.meta.name,
            s.as_str()
        ))),
    }
}

/// The full report of association `n` (its id, as in the URL) of capture `id`, read from the
/// stored report.
pub(crate) async fn find_assoc(
    state: &AppState,
    id: &str,
    d: &Arc<Digest>,
    n: &str,
) -> Result<Arc<AssocReport>, AppError> {
    let i = n
        .parse::<usize>()
        .ok()
        .and_then(|n| d.position(n))
        .ok_or_else(|| AppError::NotFound(format!("association {n}")))?;
    state.assoc(id, d, i).await
}

/// The `progress` object of a capture: phase, bytes of the current pass, packets and
/// associations so far, time left, queue position.
pub(crate) fn progress_json(state: &AppState, e: &Entry) -> Value {
    e.progress.json(state.store().queue_position(&e.meta.id))
}

/// The tables of a capture, or 409 while they are being written (with how far).
pub(crate) fn ready_tables(state: &AppState, e: &Entry) -> Result<(), AppError> {
    if e.tables_ready() {
        return Ok(());
    }
    if e.meta.tables == crate::store::Tables::Failed {
        return Err(AppError::NotReady(format!(
            "the tables of {} could not be written: {}",
            e.meta.name,
            e.meta.error.as_deref().unwrap_or("unknown error")
        )));
    }
    let p = progress_json(state, e);
    Err(AppError::NotReady(format!(
        "the tables of {} are not written yet ({}); this page refreshes by itself",
        e.meta.name,
        p["detail"].as_str().unwrap_or("queued")
    )))
}

fn entry_json(state: &AppState, e: &Entry, with_result: bool) -> Value {
    let mut v = json!({
        "id": e.meta.id,
        "name": e.meta.name,
        "status": e.meta.status.as_str(),
        "error": e.meta.error,
        "size": e.meta.size,
        "uploaded_unix": e.meta.uploaded_unix,
        "analysis_ms": e.meta.analysis_ms,
        "progress": progress_json(state, e),
        "tables": {
            "status": if e.meta.status == Status::Done { e.meta.tables.as_str() } else { "pending" },
            "ms": e.meta.tables_ms,
        },
    });
    if let Some(d) = &e.digest {
        v["summary"] = d.summary_json();
    }
    if with_result {
        // Without a digest (not analysed yet); `get` splices the stored report otherwise.
        v["result"] = Value::Null;
    }
    v
}

/// `POST /api/captures`: multipart, one or more parts named `file`. 202 with the queued (or
/// reused) captures; 422 when no file was a capture; 413 above `--max-upload`.
pub async fn upload(
    State(state): State<AppState>,
    headers: HeaderMap,
    mp: Result<Multipart, axum::extract::multipart::MultipartRejection>,
) -> Result<Response, AppError> {
    let limit = state.config().max_upload;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit.saturating_add(crate::MULTIPART_SLACK)) {
        return Err(AppError::TooLarge { limit });
    }
    let mp = mp.map_err(|e| AppError::BadRequest(format!("expected multipart/form-data: {e}")))?;
    let received = upload::receive(&state, mp, declared).await?;
    if received.iter().all(|r| r.id.is_none()) {
        let msg = received
            .iter()
            .map(|r| {
                format!(
                    "{}: not a capture: {}",
                    r.name,
                    r.error.as_deref().unwrap_or("")
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        return Err(AppError::NotCapture(msg));
    }
    Ok((StatusCode::ACCEPTED, Json(json!({ "captures": received }))).into_response())
}

/// `?offset=&limit=` of the API (a number, or `all` for `limit`); empty values are absent.
#[derive(Debug, Default, Deserialize)]
pub struct PageParams {
    pub offset: Option<String>,
    pub limit: Option<String>,
}

/// Captures listed by `GET /api/captures` unless `limit` says otherwise.
pub const LIST_LIMIT: usize = 100;
/// Associations of `GET /api/captures/{id}` unless `limit` says otherwise (fewer when they pass
/// `RESULT_BUDGET` bytes).
pub const RESULT_LIMIT: usize = 50;
/// Bytes of association JSON `GET /api/captures/{id}` sends unless `limit` is given (the
/// default of `Config::result_budget`).
pub const RESULT_BUDGET: usize = 768 << 10;

/// (offset, limit: None for `all`, whether the client gave a limit).
fn page_params(
    q: Result<Query<PageParams>, QueryRejection>,
    default: usize,
) -> Result<(usize, Option<usize>, bool), AppError> {
    let p = q
        .map(|Query(p)| p)
        .map_err(|e| AppError::BadRequest(format!("bad page parameters: {}", e.body_text())))?;
    let some = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
    };
    let offset = match some(&p.offset) {
        Some(v) => v
            .parse()
            .map_err(|_| AppError::BadRequest(format!("bad offset: {v:?}")))?,
        None => 0,
    };
    let (limit, given) = match some(&p.limit).as_deref() {
        Some("all") => (None, true),
        Some(v) => (
            Some(
                v.parse()
                    .map_err(|_| AppError::BadRequest(format!("bad limit: {v:?}")))?,
            ),
            true,
        ),
        None => (Some(default), false),
    };
    Ok((offset, limit, given))
}

/// `GET /api/captures?offset=&limit=`: the captures (newest first), `limit` (default 100) from
/// `offset`, with `total`, `offset` and `limit`.
pub async fn list(
    State(state): State<AppState>,
    q: Result<Query<PageParams>, QueryRejection>,
) -> Result<Json<Value>, AppError> {
    let (offset, limit, _) = page_params(q, LIST_LIMIT)?;
    let all = state.store().list();
    let total = all.len();
    let v: Vec<Value> = all
        .iter()
        .skip(offset)
        .take(limit.unwrap_or(usize::MAX))
        .map(|e| entry_json(&state, e, false))
        .collect();
    Ok(Json(json!({
        "captures": v,
        "total": total,
        "offset": offset,
        "limit": limit,
    })))
}

/// `GET /api/captures/{id}/associations?offset=&limit=&sort=&order=&q=&addr=&port=&upper=&end=
/// &failover=&spurious=&stall=&abort=`: one summary row per association (not the reports),
/// filtered, sorted and paginated as the capture page's list (`limit` default 100, `all` for
/// every row), with the counts.
pub async fn associations(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: Result<Query<crate::assoc_list::ListQuery>, QueryRejection>,
) -> Result<Json<Value>, AppError> {
    let q = q
        .map(|Query(q)| q)
        .map_err(|e| AppError::BadRequest(format!("bad list parameters: {}", e.body_text())))?;
    let f = crate::assoc_list::Filter::parse(&q, crate::assoc_list::API_ROWS, None)?;
    let (_, d) = done_report(&state, &id)?;
    let p = crate::assoc_list::page(&d.rows, &f);
    Ok(Json(json!({
        "id": id,
        "offset": p.offset,
        "limit": f.limit,
        "sort": f.sort,
        "order": if f.desc { "desc" } else { "asc" },
        "counts": p.counts,
        "associations": p.rows,
    })))
}

/// `GET /api/captures/{id}?offset=&limit=`: status, and `result`, the CaptureReport, once done.
/// A report of up to `RESULT_LIMIT` associations, TCP flows and comparison rows is sent whole:
/// the stored `report.json` is spliced into the answer as it is (a large capture's report is
/// megabytes; parsing and writing it again took hundreds of ms). A larger one is paginated:
/// `result.associations` and `result.tcp_flows` hold `limit` (default 50, fewer past 768 KB
/// unless `limit` is given; `all` for everything) from `offset`, `result.comparison` the rows of
/// those, and `page` says which (`offset`, `limit`, `returned`, `total`, `next_offset`). A report
/// past `RESULT_BUDGET` bytes is paginated whatever its number of associations, and without a
/// `limit` an association alone past it is skipped (`page.skipped`, `page.note`: ask with
/// `offset=N&limit=1`), so that no answer passes 1 MB unless the client asks for more.
pub async fn get(
    State(state): State<AppState>,
    Path(id): Path<String>,
    q: Result<Query<PageParams>, QueryRejection>,
) -> Result<Response, AppError> {
    let (offset, limit, given) = page_params(q, RESULT_LIMIT)?;
    let e = entry(&state, &id)?;
    if let Some(d) = &e.digest {
        let fits = |n: usize| limit.is_none_or(|l| n <= l);
        // The comparison rows follow the associations and flows (two at most per direction).
        let path = state.store().report_path(&e.meta.id);
        // Unless the client asked for a number, a report past the budget is paged even with few
        // associations (one association of a long outage can hold thousands of timeouts).
        let small = given
            || tokio::fs::metadata(&path)
                .await
                .is_ok_and(|m| m.len() <= state.config().result_budget as u64);
        let whole = offset == 0 && small && fits(d.associations()) && fits(d.head.tcp_flows.len());
        if !whole {
            let st = state.clone();
            let (e2, d2) = (e.clone(), d.clone());
            return tokio::task::spawn_blocking(move || {
                paged_result(&st, &e2, &d2, offset, limit, given)
            })
            .await
            .map_err(AppError::internal)?;
        }
        let report = tokio::fs::read(&path).await.map_err(|err| {
            tracing::error!("{id}: reading the stored report: {err}");
            AppError::Internal("reading the stored report failed".into())
        })?;
        let head =
            serde_json::to_vec(&entry_json(&state, &e, false)).map_err(AppError::internal)?;
        if head.last() != Some(&b'}') || head.len() <= 2 || report.is_empty() {
            return Err(AppError::Internal("the stored report is empty".into()));
        }
        let mut body = Vec::with_capacity(head.len() + report.len() + 16);
        body.extend_from_slice(&head[..head.len() - 1]);
        body.extend_from_slice(b",\"result\":");
        body.extend_from_slice(&report);
        body.push(b'}');
        return Ok((
            [(header::CONTENT_TYPE, "application/json")],
            Body::from(body),
        )
            .into_response());
    }
    Ok(Json(entry_json(&state, &e, true)).into_response())
}

/// The paginated answer of `get` (see there).
fn paged_result(
    state: &AppState,
    e: &Entry,
    d: &Digest,
    offset: usize,
    limit: Option<usize>,
    given: bool,
) -> Result<Response, AppError> {
    let r = &d.head;
    let head = state.report_head(&e.meta.id, d);
    let range = |n: usize| {
        let a = offset.min(n);
        (a, limit.map_or(n, |l| a.saturating_add(l).min(n)))
    };
    let (a0, a1) = range(d.associations());
    let mut assocs: Vec<u8> = Vec::new();
    let mut returned = 0;
    // Each association's JSON as stored (read in steps: the budget may end the page early).
    let path = state.store().report_path(&e.meta.id);
    let read_err = |err: std::io::Error| {
        tracing::error!("{}: reading the stored report: {err}", e.meta.id);
        AppError::Internal("reading the stored report failed".into())
    };
    let mut stored = Vec::new().into_iter();
    // The association (index, bytes) that alone passes the budget, when the page stops at it.
    let mut over: Option<(usize, usize)> = None;
    for i in a0..a1 {
        let bytes = match stored.next() {
            Some(b) => b,
            None => {
                let batch = d.read_raw(&path, i..a1.min(i + 64)).map_err(read_err)?;
                stored = batch.into_iter();
                stored
                    .next()
                    .ok_or_else(|| AppError::Internal("empty read".into()))?
            }
        };
        if !given && assocs.len() + bytes.len() > state.config().result_budget {
            // Even the first: the page then holds none and says which one to ask for alone.
            if returned == 0 {
                over = Some((i, bytes.len()));
            }
            break;
        }
        if returned > 0 {
            assocs.push(b',');
        }
        assocs.extend_from_slice(&bytes);
        returned += 1;
    }
    let ids: std::collections::HashSet<usize> =
        d.rows[a0..a0 + returned].iter().map(|a| a.id).collect();
    let (t0, t1) = range(r.tcp_flows.len());
    let flows = &r.tcp_flows[t0..t1];
    let flow_ids: std::collections::HashSet<usize> = flows.iter().map(|f| f.id).collect();
    let rows: Vec<_> = r
        .comparison
        .iter()
        .filter(|c| {
            if c.transport == "tcp" {
                flow_ids.contains(&c.id)
            } else {
                ids.contains(&c.id)
            }
        })
        .collect();
    // An association alone past the budget is skipped (named in `note`, `skipped`): paging on
    // goes past it instead of asking for it again.
    let next = a0 + returned + usize::from(over.is_some());
    let mut page = json!({
        "offset": offset,
        "limit": limit,
        "returned": {
            "associations": returned,
            "tcp_flows": flows.len(),
            "comparison": rows.len(),
        },
        "total": {
            "associations": d.associations(),
            "tcp_flows": r.tcp_flows.len(),
            "comparison": r.comparison.len(),
        },
        "next_offset": (next < d.associations() || t1 < r.tcp_flows.len())
            .then_some(next.max(t1)),
    });
    if let Some((i, bytes)) = over {
        page["skipped"] = json!([i]);
        page["note"] = json!(format!(
            "association at offset {i} is {bytes} bytes of JSON, past the {}-byte page: ask \
             for it with offset={i}&limit=1",
            state.config().result_budget
        ));
    }
    let mut out = serde_json::to_vec(&entry_json(state, e, false)).map_err(AppError::internal)?;
    out.pop(); // '}'
    let mut v = serde_json::to_vec(&*head).map_err(AppError::internal)?;
    v.pop();
    out.extend_from_slice(b",\"page\":");
    out.extend_from_slice(&serde_json::to_vec(&page).map_err(AppError::internal)?);
    out.extend_from_slice(b",\"result\":");
    out.extend_from_slice(&v);
    out.extend_from_slice(if v.len() > 1 { b"," } else { b"" });
    out.extend_from_slice(b"\"associations\":[");
    out.extend_from_slice(&assocs);
    out.extend_from_slice(b"],\"tcp_flows\":");
    out.extend_from_slice(&serde_json::to_vec(flows).map_err(AppError::internal)?);
    out.extend_from_slice(b",\"comparison\":");
    out.extend_from_slice(&serde_json::to_vec(&rows).map_err(AppError::internal)?);
    out.extend_from_slice(b"}}");
    Ok((
        [(header::CONTENT_TYPE, "application/json")],
        Body::from(out),
    )
        .into_response())
}

/// `DELETE /api/captures/{id}`
pub async fn delete(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, AppError> {
    let st = state.clone();
    let id2 = id.clone();
    let removed = tokio::task::spawn_blocking(move || st.store().delete(&id2))
        .await
        .map_err(AppError::internal)??;
    if !removed {
        return Err(AppError::NotFound(format!("capture {id}")));
    }
    state.invalidate_cache(&id);
    Ok(Json(json!({ "id": id, "deleted": true })))
}

#[derive(Debug, Deserialize)]
pub struct ChartParams {
    pub from: Option<f64>,
    pub to: Option<f64>,
    pub width: Option<u32>,
    pub sender: Option<u8>,
}

fn params(q: Result<Query<ChartParams>, QueryRejection>) -> Result<ChartParams, AppError> {
    q.map(|Query(p)| p)
        .map_err(|e| AppError::BadRequest(format!("bad chart parameters: {}", e.body_text())))
}

/// `GET /api/captures/{id}/associations/{n}/charts/{kind}?from=&to=&width=&sender=`
pub async fn assoc_chart(
    State(state): State<AppState>,
    Path((id, n, kind)): Path<(String, String, String)>,
    q: Result<Query<ChartParams>, QueryRejection>,
) -> Result<Response, AppError> {
    let p = params(q)?;
    let (e, d) = done_report(&state, &id)?;
    ready_tables(&state, &e)?;
    let a = find_assoc(&state, &id, &d, &n).await?;
    if !charts::KINDS.contains(&kind.as_str()) {
        return Err(AppError::NotFound(format!("chart {kind}")));
    }
    let data = state
        .assoc_data(&id, Some(a.id as u32), d.head.duration_s)
        .await?;
    let sender = charts::pick_sender(&a, p.sender);
    let mut chart = charts::assoc_chart(&kind, &data, &a, sender, p.from, p.to, p.width)
        .ok_or_else(|| AppError::NotFound(format!("chart {kind}")))?;
    chart.fit_marks();
    Ok(Json(chart).into_response())
}

/// `GET /api/captures/{id}/compare/charts/{throughput|gaps}?from=&to=&width=`
pub async fn compare_chart(
    State(state): State<AppState>,
    Path((id, kind)): Path<(String, String)>,
    q: Result<Query<ChartParams>, QueryRejection>,
) -> Result<Response, AppError> {
    let p = params(q)?;
    let (e, d) = done_report(&state, &id)?;
    ready_tables(&state, &e)?;
    if kind != "throughput" && kind != "gaps" {
        return Err(AppError::NotFound(format!("chart {kind}")));
    }
    let data = state.assoc_data(&id, None, d.head.duration_s).await?;
    let dirs = state.compare_dirs(&id, &d).await?;
    let mut chart =
        crate::compare_charts::compare_chart(&kind, &data, &dirs, &d.head, p.from, p.to, p.width)
            .ok_or_else(|| AppError::NotFound(format!("chart {kind}")))?;
    chart.fit_marks();
    Ok(Json(chart).into_response())
}

/// `GET /captures/{id}/tables/{name}.csv|.parquet`: streamed from disk (CSV made once, kept).
pub async fn table_download(
    State(state): State<AppState>,
    Path((id, file)): Path<(String, String)>,
) -> Result<Response, AppError> {
    let (e, _) = done_report(&state, &id)?;
    ready_tables(&state, &e)?;
    let (name, ext) = file
        .rsplit_once('.')
        .ok_or_else(|| AppError::NotFound(format!("table {file}")))?;
    if !valid_table_name(name) || !matches!(ext, "csv" | "parquet") {
        return Err(AppError::NotFound(format!("table {file}")));
    }
    let parquet = state
        .store()
        .table_path(&e.meta.id, name)
        .ok_or_else(|| AppError::NotFound(format!("table {name}")))?;
    let (path, mime) = if ext == "parquet" {
        (parquet, "application/vnd.apache.parquet")
    } else {
        let csv = parquet.with_extension("csv");
        if !csv.is_file() {
            let (p, c) = (parquet.clone(), csv.clone());
            tokio::task::spawn_blocking(move || crate::tables::parquet_to_csv(&p, &c))
                .await
                .map_err(AppError::internal)?
                .map_err(AppError::Internal)?;
        }
        (csv, "text/csv; charset=utf-8")
    };
    let file = tokio::fs::File::open(&path).await?;
    let len = file.metadata().await?.len();
    let body = Body::from_stream(tokio_util::io::ReaderStream::with_capacity(file, 1 << 16));
    let disposition = format!("attachment; filename=\"{name}.{ext}\"");
    Ok((
        [
            (header::CONTENT_TYPE, mime.to_string()),
            (header::CONTENT_LENGTH, len.to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        body,
    )
        .into_response())
}
