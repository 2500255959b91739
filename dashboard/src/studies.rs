//! The Studies page (issue 17 section 4): `GET /studies` picks a template of
//! `analyzer::study::TEMPLATES` (or by / x / several metrics by hand) and a set of captures (a
//! folder of the samples directory that holds captures, every uploaded capture, or the uploaded
//! captures picked one by one), runs the study off the async runtime and shows, per metric, an
//! interactive chart (the association pages' `charts.js`: one series per group, the mean against
//! x with the 95% CI as error bars, tooltips with n, mean and CI), the table, the JSON / CSV
//! downloads, and for every point and row the captures behind it, each linking to its capture
//! page (`GET /studies/open` loads a sample set's file into the dashboard first). Results are
//! cached in memory per (set and the state of its files, spec).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use analyzer::analyze::Options;
use analyzer::inputs::is_capture_name;
use analyzer::report::CaptureReport;
use analyzer::study::{self, Sample, StudyReport, StudySpec};
use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Json;

use crate::assoc_list::encode;
use crate::error::AppError;
use crate::series::Chart;
use crate::study_chart::{ci_text, group_text, study_charts, value_text};
use crate::views::{round, NONE};
use crate::AppState;

/// Captures analysed per study at most (the rest are left out, and the page says so).
pub const MAX_CAPTURES: usize = 500;
/// Studies kept in memory.
pub const CACHE_ENTRIES: usize = 16;
/// The set of every uploaded capture.
const UPLOADED: &str = "uploaded";
/// Folder depth searched below the samples directory.
const MAX_DEPTH: usize = 4;

/// The page's query: `y` and `capture` may repeat (`y` also takes comma-separated metrics).
#[derive(Debug, Default)]
pub struct StudyQuery {
    template: Option<String>,
    by: Option<String>,
    x: Option<String>,
    y: Vec<String>,
    set: Option<String>,
    /// Uploaded captures picked one by one (their ids): the study runs over them, not the set.
    captures: Vec<String>,
    /// "json" or "csv": the study's rows as a download instead of the page.
    format: Option<String>,
}

impl StudyQuery {
    fn parse(pairs: &[(String, String)]) -> StudyQuery {
        let mut q = StudyQuery::default();
        for (k, v) in pairs {
            let v = v.trim();
            let one = (!v.is_empty()).then(|| v.to_string());
            match k.as_str() {
                "template" => q.template = one,
                "by" => q.by = one,
                "x" => q.x = one,
                "set" => q.set = one,
                "format" => q.format = one,
                "y" => q.y.extend(
                    v.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(str::to_string),
                ),
                "capture" if !v.is_empty() => q.captures.push(v.to_string()),
                _ => {}
            }
        }
        q.y.dedup();
        q.captures.sort();
        q.captures.dedup();
        q
    }

    /// The query again (for the download links), without `format`.
    fn encoded(&self) -> String {
        let mut out: Vec<String> = Vec::new();
        for (k, v) in [
            ("template", &self.template),
            ("by", &self.by),
            ("x", &self.x),
            ("set", &self.set),
        ] {
            if let Some(v) = v {
                out.push(format!("{k}={}", encode(v)));
            }
        }
        out.extend(self.y.iter().map(|y| format!("y={}", encode(y))));
        out.extend(
            self.captures
                .iter()
                .map(|c| format!("capture={}", encode(c))),
        );
        out.join("&")
    }
}

/// A capture behind a study's rows.
#[derive(Debug, Clone)]
pub struct CaptureRef {
    /// File name (sample set) or uploaded name.
    name: String,
    /// Its id in the store (SHA-256 of the file), when known.
    id: Option<String>,
    /// The file in the sample set's folder, for `/studies/open`.
    file: Option<String>,
}

/// A study's result as shown: the report, the captures behind it, what went wrong.
pub struct StudyResult {
    report: StudyReport,
    /// Sample id (uploaded capture id or file name) -> the capture.
    captures: BTreeMap<String, CaptureRef>,
    analysed: usize,
    left_out: usize,
    errors: Vec<String>,
}

pub struct Choice {
    pub value: String,
    pub label: String,
    pub selected: bool,
}

/// A capture of a row as listed: name, link, whether the dashboard holds it already.
pub struct CaptureLink {
    pub name: String,
    pub href: String,
    pub loaded: bool,
}

pub struct RowView {
    /// Index of the row (`study-row-N`, what a chart point refers to).
    pub index: usize,
    pub group: String,
    pub x: String,
    pub metric: String,
    pub transport: String,
    pub n: u64,
    pub mean: String,
    pub median: String,
    pub min: String,
    pub max: String,
    pub ci95: String,
    pub captures: Vec<CaptureLink>,
}

pub struct ChartView {
    pub metric: String,
    /// Why there is no chart (x not numeric, no x), else empty.
    pub why: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "studies.html")]
pub struct StudiesPage {
    pub title: String,
    pub templates: Vec<Choice>,
    pub metrics: Vec<Choice>,
    pub sets: Vec<Choice>,
    /// The uploaded captures that can be picked one by one.
    pub uploads: Vec<Choice>,
    pub uploads_picked: usize,
    pub by: String,
    pub x: String,
    pub max_captures: usize,
    pub ran: bool,
    pub about: String,
    pub spec_text: String,
    pub set_label: String,
    pub analysed: usize,
    pub left_out: usize,
    pub errors: Vec<String>,
    pub rows: Vec<RowView>,
    pub charts: Vec<ChartView>,
    /// Every chart's data (charts.js), JSON safe inside `<script>`.
    pub charts_json: String,
    /// The query of this study (for the JSON / CSV download links).
    pub query: String,
}

/// Folders below `root` (itself included, as ".") that directly contain capture files, by
/// their path relative to `root` ("studies/eklund").
pub fn sample_sets(root: &Path) -> Vec<(String, PathBuf)> {
    fn walk(root: &Path, dir: &Path, depth: usize, out: &mut Vec<(String, PathBuf)>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut has = false;
        let mut subs = Vec::new();
        for e in rd.filter_map(|e| e.ok()) {
            let p = e.path();
            if p.is_dir() {
                subs.push(p);
            } else if p.is_file() && is_capture_name(&p) {
                has = true;
            }
        }
        if has {
            let rel = dir.strip_prefix(root).unwrap_or(dir);
            let name = if rel.as_os_str().is_empty() {
                ".".to_string()
            } else {
                rel.to_string_lossy().replace('\\', "/")
            };
            out.push((name, dir.to_path_buf()));
        }
        if depth < MAX_DEPTH {
            subs.sort();
            for s in subs {
                walk(root, &s, depth + 1, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, 0, &mut out);
    out.sort();
    out
}

/// The capture files directly in `dir`, sorted.
fn captures_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.is_file() && is_capture_name(p))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// One capture file's samples, with its sidecar parameters (the CLI's `study`); the samples
/// are named by the file name.
fn file_samples(p: &Path) -> Result<Vec<Sample>, String> {
    let own = study::capture_samples(p, &Options::default(), None)?;
    let name = file_name(p);
    Ok(own
        .into_iter()
        .map(|mut s| {
            s.capture = name.clone();
            s
        })
        .collect())
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
}

/// Every file of a sample set's folder (captures and sidecars) with its size and modification
/// time: a study of the set is run again when this changes.
fn fingerprint(dir: &Path) -> String {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let m = e.metadata().ok()?;
                    let t = m
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map_or(0, |d| d.as_nanos());
                    Some(format!(
                        "{}:{}:{t}",
                        e.file_name().to_string_lossy(),
                        m.len()
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v.join("/")
}

/// Runs the study over the files, in a few threads at once.
fn run_files(spec: &StudySpec, files: Vec<PathBuf>, left_out: usize) -> StudyResult {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    let chunk = files.len().div_ceil(threads).max(1);
    type One = (Result<Vec<Sample>, String>, Option<String>);
    let results: Vec<One> = std::thread::scope(|s| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|p| (file_samples(p), crate::upload::file_id(p).ok()))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|_| vec![(Err("analysis panicked".to_string()), None)])
            })
            .collect()
    });
    let mut samples = Vec::new();
    let mut errors = Vec::new();
    let mut captures = BTreeMap::new();
    for (p, (r, id)) in files.iter().zip(results) {
        let name = file_name(p);
        captures.insert(
            name.clone(),
            CaptureRef {
                name: name.clone(),
                id,
                file: Some(name),
            },
        );
        match r {
            Ok(s) => samples.extend(s),
            Err(e) => errors.push(e),
        }
    }
    StudyResult {
        report: study::aggregate(spec, &samples),
        captures,
        analysed: files.len(),
        left_out,
        errors,
    }
}

/// The study over the uploaded captures' stored reports (analysed at upload; no sidecar files,
/// so the parameters are the inferred ones).
fn run_uploaded(
    spec: &StudySpec,
    reports: Vec<(String, String, StoredReport)>,
    left_out: usize,
) -> StudyResult {
    let mut samples = Vec::new();
    let mut captures = BTreeMap::new();
    let mut errors = Vec::new();
    for (id, name, r) in &reports {
        let mut add = |s: Vec<Sample>| {
            for mut s in s {
                s.capture = id.clone();
                samples.push(s);
            }
        };
        match r {
            StoredReport::Whole(r) => add(study::samples(r, &Default::default())),
            StoredReport::OnDisk { digest, path } => {
                if let Err(e) = disk_samples(digest, path, &mut add) {
                    errors.push(format!("{name}: reading its stored report: {e}"));
                }
            }
        }
        captures.insert(
            id.clone(),
            CaptureRef {
                name: name.clone(),
                id: Some(id.clone()),
                file: None,
            },
        );
    }
    StudyResult {
        report: study::aggregate(spec, &samples),
        captures,
        analysed: reports.len(),
        left_out,
        errors,
    }
}

/// An uploaded capture's report for a study: whole in memory when small, else on disk (read
/// association by association: a large capture's report is never all in memory).
enum StoredReport {
    Whole(Arc<CaptureReport>),
    OnDisk {
        digest: Arc<crate::digest::Digest>,
        path: PathBuf,
    },
}

/// Associations of a stored report read at once for its study samples.
const STUDY_BATCH: usize = 256;

/// The study samples of a report on disk: the same as `study::samples` of the whole report,
/// its associations taken `STUDY_BATCH` at a time with their comparison rows, then the TCP
/// connections with theirs.
pub(crate) fn disk_samples(
    digest: &crate::digest::Digest,
    path: &Path,
    add: &mut dyn FnMut(Vec<Sample>),
) -> std::io::Result<()> {
    let head = &digest.head;
    let mut rows: std::collections::HashMap<usize, Vec<&analyzer::compare::ComparisonRow>> =
        std::collections::HashMap::new();
    for r in head.comparison.iter().filter(|r| r.transport == "sctp") {
        rows.entry(r.id).or_default().push(r);
    }
    // The capture's head; associations, their rows and the TCP connections go in per call.
    let mut part = CaptureReport {
        associations: Vec::new(),
        comparison: Vec::new(),
        tcp_flows: Vec::new(),
        ..head.clone()
    };
    let mut flush = |batch: &mut Vec<analyzer::report::AssocReport>| {
        part.comparison = batch
            .iter()
            .flat_map(|a| rows.get(&a.id).into_iter().flatten().map(|r| (*r).clone()))
            .collect();
        part.associations = std::mem::take(batch);
        add(study::samples(&part, &Default::default()));
    };
    let mut batch = Vec::with_capacity(STUDY_BATCH);
    digest.each_assoc(path, |a| {
        batch.push(a);
        if batch.len() >= STUDY_BATCH {
            flush(&mut batch);
        }
        true
    })?;
    flush(&mut batch);
    // The TCP connections (their reports are in the digest).
    part.associations = Vec::new();
    part.comparison = head
        .comparison
        .iter()
        .filter(|r| r.transport != "sctp")
        .cloned()
        .collect();
    part.tcp_flows = head.tcp_flows.clone();
    add(study::samples(&part, &Default::default()));
    Ok(())
}

/// JSON that is safe inside a `<script>` element.
fn script_json(v: &impl serde::Serialize) -> Result<String, AppError> {
    Ok(serde_json::to_string(v)
        .map_err(AppError::internal)?
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026"))
}

/// The set named `set` of the samples directory: its folder.
async fn sample_set_dir(state: &AppState, set: &str) -> Result<PathBuf, AppError> {
    let root = state.config().samples.clone();
    let sets = match root {
        Some(root) => tokio::task::spawn_blocking(move || sample_sets(&root))
            .await
            .map_err(AppError::internal)?,
        None => Vec::new(),
    };
    sets.into_iter()
        .find(|(n, _)| n == set)
        .map(|x| x.1)
        .ok_or_else(|| AppError::BadRequest(format!("no capture set {set:?}")))
}

/// `GET /studies/open?set=SET&file=NAME`: the capture page of a sample set's file, storing
/// the file (and queueing its analysis) first when the dashboard does not hold it yet.
pub async fn open_capture(
    State(state): State<AppState>,
    Query(q): Query<Vec<(String, String)>>,
) -> Result<Response, AppError> {
    let get = |k: &str| q.iter().find(|p| p.0 == k).map(|p| p.1.clone());
    let (Some(set), Some(file)) = (get("set"), get("file")) else {
        return Err(AppError::BadRequest("set and file are needed".into()));
    };
    let dir = sample_set_dir(&state, &set).await?;
    let d = dir.clone();
    let path = tokio::task::spawn_blocking(move || {
        captures_in(&d)
            .into_iter()
            .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy() == file))
    })
    .await
    .map_err(AppError::internal)?
    .ok_or_else(|| AppError::NotFound("no such capture in the set".into()))?;
    let p = path.clone();
    let id = tokio::task::spawn_blocking(move || crate::upload::file_id(&p))
        .await
        .map_err(AppError::internal)??;
    let id = if state.store().get(&id).is_some() {
        id
    } else {
        crate::upload::import_file(&state, &path).await?
    };
    Ok(Redirect::to(&format!("/captures/{id}")).into_response())
}

pub async fn studies(
    State(state): State<AppState>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Result<Response, AppError> {
    let q = StudyQuery::parse(&pairs);
    let template = q.template.clone();
    let samples_root = state.config().samples.clone();
    let sample_sets = match samples_root.clone() {
        Some(root) => tokio::task::spawn_blocking(move || sample_sets(&root))
            .await
            .map_err(AppError::internal)?,
        None => Vec::new(),
    };
    let set = q.set.clone();
    let mut sets: Vec<Choice> = sample_sets
        .iter()
        .map(|(name, _)| Choice {
            value: name.clone(),
            label: format!("samples: {name}"),
            selected: set.as_deref() == Some(name.as_str()),
        })
        .collect();
    sets.push(Choice {
        value: UPLOADED.into(),
        label: "all uploaded captures".into(),
        selected: set.as_deref() == Some(UPLOADED),
    });
    let templates = study::TEMPLATES
        .iter()
        .map(|(n, _)| Choice {
            value: n.to_string(),
            label: n.to_string(),
            selected: template.as_deref() == Some(*n),
        })
        .collect();
    let metrics = study::METRICS
        .iter()
        .map(|(n, what)| Choice {
            value: n.to_string(),
            label: format!("{n}: {what}"),
            selected: q.y.iter().any(|y| y == n),
        })
        .collect();
    let mut stored: Vec<crate::store::Entry> = state.store().list();
    stored.sort_by(|a, b| {
        a.meta
            .name
            .cmp(&b.meta.name)
            .then(a.meta.id.cmp(&b.meta.id))
    });
    let uploads: Vec<Choice> = stored
        .iter()
        .filter(|e| e.report.is_some())
        .take(MAX_CAPTURES)
        .map(|e| Choice {
            value: e.meta.id.clone(),
            label: e.meta.name.clone(),
            selected: q.captures.contains(&e.meta.id),
        })
        .collect();
    let mut page = StudiesPage {
        title: "Studies".into(),
        templates,
        metrics,
        sets,
        uploads_picked: uploads.iter().filter(|u| u.selected).count(),
        uploads,
        by: q.by.clone().unwrap_or_default(),
        x: q.x.clone().unwrap_or_default(),
        max_captures: MAX_CAPTURES,
        ran: false,
        about: String::new(),
        spec_text: String::new(),
        set_label: String::new(),
        analysed: 0,
        left_out: 0,
        errors: Vec::new(),
        rows: Vec::new(),
        charts: Vec::new(),
        charts_json: String::new(),
        query: String::new(),
    };
    let format = q.format.clone();
    if !matches!(format.as_deref(), None | Some("json") | Some("csv")) {
        return Err(AppError::BadRequest(format!(
            "format {:?}: json or csv",
            format.unwrap_or_default()
        )));
    }
    // Captures picked one by one take the place of the set.
    let set = match (&set, q.captures.is_empty()) {
        (_, false) => UPLOADED.to_string(),
        (Some(s), true) => s.clone(),
        (None, true) => return Ok(page.into_response()),
    };
    page.query = q.encoded();
    let mut spec = match &template {
        Some(t) => study::template(t).map_err(AppError::BadRequest)?,
        None => StudySpec::default(),
    };
    if let Some(by) = &q.by {
        spec.by = by
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
    }
    if q.x.is_some() {
        spec.x = q.x.clone();
    }
    if !q.y.is_empty() {
        if let Some(y) =
            q.y.iter()
                .find(|y| !study::METRICS.iter().any(|m| m.0 == y.as_str()))
        {
            return Err(AppError::BadRequest(format!("unknown metric {y:?}")));
        }
        spec.y = q.y.clone();
    }
    let spec_key = serde_json::to_string(&spec).map_err(AppError::internal)?;
    let result = if set == UPLOADED {
        if let Some(c) = q
            .captures
            .iter()
            .find(|c| !stored.iter().any(|e| e.meta.id == **c))
        {
            return Err(AppError::BadRequest(format!("no uploaded capture {c:?}")));
        }
        let mut reports: Vec<(String, String, StoredReport)> = Vec::new();
        // What the study depends on: each capture and the analysis it has now.
        let mut state_key = Vec::new();
        for e in stored {
            if !q.captures.is_empty() && !q.captures.contains(&e.meta.id) {
                continue;
            }
            // Small reports are in memory; larger ones are read from disk (issue 19's digest).
            let r = match (e.report, e.digest) {
                (Some(r), _) => StoredReport::Whole(r),
                (None, Some(digest)) => StoredReport::OnDisk {
                    digest,
                    path: state.store().report_path(&e.meta.id),
                },
                (None, None) => continue,
            };
            state_key.push(format!(
                "{}@{:?}{:?}{}",
                e.meta.id, e.meta.analysis_ms, e.meta.result_version, e.meta.uploaded_unix
            ));
            reports.push((e.meta.id, e.meta.name, r));
        }
        reports.sort_by(|a, b| a.0.cmp(&b.0));
        state_key.sort();
        let left_out = reports.len().saturating_sub(MAX_CAPTURES);
        reports.truncate(MAX_CAPTURES);
        let key = (format!("{UPLOADED} {}", state_key.join(",")), spec_key);
        match state.study_cached(&key) {
            Some(r) => r,
            None => {
                let s = spec.clone();
                let r = Arc::new(
                    tokio::task::spawn_blocking(move || run_uploaded(&s, reports, left_out))
                        .await
                        .map_err(AppError::internal)?,
                );
                state.study_store(key, r.clone());
                r
            }
        }
    } else {
        let Some((_, dir)) = sample_sets.iter().find(|(n, _)| *n == set) else {
            return Err(AppError::BadRequest(format!("no capture set {set:?}")));
        };
        let d = dir.clone();
        let print = tokio::task::spawn_blocking(move || fingerprint(&d))
            .await
            .map_err(AppError::internal)?;
        let key = (format!("samples {set} {print}"), spec_key);
        match state.study_cached(&key) {
            Some(r) => r,
            None => {
                let dir = dir.clone();
                let s = spec.clone();
                let r = Arc::new(
                    tokio::task::spawn_blocking(move || {
                        let mut files = captures_in(&dir);
                        let left_out = files.len().saturating_sub(MAX_CAPTURES);
                        files.truncate(MAX_CAPTURES);
                        run_files(&s, files, left_out)
                    })
                    .await
                    .map_err(AppError::internal)?,
                );
                state.study_store(key, r.clone());
                r
            }
        }
    };
    page.ran = true;
    page.about = spec.about.clone().unwrap_or_default();
    page.spec_text = format!(
        "{}by {}, x {}, metrics {}",
        spec.name
            .as_deref()
            .map_or(String::new(), |n| format!("template {n}: ")),
        if spec.by.is_empty() {
            NONE.to_string()
        } else {
            spec.by.join(", ")
        },
        spec.x.as_deref().unwrap_or(NONE),
        if spec.y.is_empty() {
            "all".to_string()
        } else {
            spec.y.join(", ")
        }
    );
    page.set_label = if !q.captures.is_empty() {
        format!("{} uploaded captures picked", q.captures.len())
    } else if set == UPLOADED {
        "all uploaded captures".into()
    } else {
        format!("samples: {set}")
    };
    page.analysed = result.analysed;
    page.left_out = result.left_out;
    page.errors = result.errors.clone();
    // Each capture's link, now: the store may hold a sample set's file since the study ran.
    let links: BTreeMap<&str, (String, bool)> = result
        .captures
        .iter()
        .map(|(k, c)| {
            let loaded = c.id.as_deref().filter(|id| state.store().get(id).is_some());
            let link = match (loaded, &c.file) {
                (Some(id), _) => (format!("/captures/{id}"), true),
                (None, Some(f)) => (
                    format!("/studies/open?set={}&file={}", encode(&set), encode(f)),
                    false,
                ),
                (None, None) => (String::new(), false),
            };
            (k.as_str(), link)
        })
        .collect();
    let f = |v: f64| round(v, 3);
    page.rows = result
        .report
        .rows
        .iter()
        .enumerate()
        .map(|(index, r)| RowView {
            index,
            group: group_text(&r.group),
            x: value_text(&r.x),
            metric: r.metric.clone(),
            transport: r.transport.clone(),
            n: r.n,
            mean: f(r.mean),
            median: f(r.median),
            min: f(r.min),
            max: f(r.max),
            ci95: ci_text(r.ci95),
            captures: r
                .captures
                .iter()
                .map(|c| {
                    let name = result
                        .captures
                        .get(c)
                        .map_or_else(|| c.clone(), |x| x.name.clone());
                    let (href, loaded) = links.get(c.as_str()).cloned().unwrap_or_default();
                    CaptureLink { name, href, loaded }
                })
                .collect(),
        })
        .collect();
    let charts = study_charts(&result.report);
    let data: BTreeMap<&str, &Chart> = charts
        .iter()
        .filter_map(|(m, c)| c.as_ref().ok().map(|c| (m.as_str(), c)))
        .collect();
    page.charts_json = script_json(&data)?;
    page.charts = charts
        .iter()
        .map(|(m, c)| ChartView {
            metric: m.clone(),
            why: c.as_ref().err().cloned().unwrap_or_default(),
        })
        .collect();
    Ok(match format.as_deref() {
        // The CLI's `study --format json` / `--format csv` rows.
        Some("json") => Json(&result.report).into_response(),
        Some("csv") => (
            [
                (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
                (
                    header::CONTENT_DISPOSITION,
                    "attachment; filename=\"study.csv\"",
                ),
            ],
            study::render_csv(&result.report),
        )
            .into_response(),
        _ => page.into_response(),
    })
}
