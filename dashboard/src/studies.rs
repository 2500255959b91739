//! The Studies page (issue 17 section 4, a first version): `GET /studies` picks a template of
//! `analyzer::study::TEMPLATES` (or by / x / y by hand) and a set of captures (a folder of the
//! samples directory that holds captures, or every uploaded capture), runs the study off the
//! async runtime and shows its table and, per metric, an SVG chart of the mean against x with
//! the 95% CI as error bars. Results are cached in memory per (set, spec).

use crate::help::escape;
use std::collections::BTreeMap;
use std::fmt::Write as _;
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
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::Value;

use crate::error::AppError;
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

#[derive(Debug, Default, Deserialize)]
pub struct StudyQuery {
    #[serde(default)]
    template: Option<String>,
    #[serde(default)]
    by: Option<String>,
    #[serde(default)]
    x: Option<String>,
    #[serde(default)]
    y: Option<String>,
    #[serde(default)]
    set: Option<String>,
    /// "json" or "csv": the study's rows as a download instead of the page.
    #[serde(default)]
    format: Option<String>,
}

/// A study's result as shown: the report, the captures behind it, what went wrong.
pub struct StudyResult {
    report: StudyReport,
    /// Sample id (uploaded capture id or file name) -> (display name, link).
    captures: BTreeMap<String, (String, Option<String>)>,
    analysed: usize,
    left_out: usize,
    errors: Vec<String>,
}

pub struct Choice {
    pub value: String,
    pub label: String,
    pub selected: bool,
}

pub struct RowView {
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
    pub captures_count: usize,
    /// (name, link) of the captures behind the row.
    pub captures: Vec<(String, String)>,
}

pub struct ChartView {
    pub metric: String,
    pub svg: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "studies.html")]
pub struct StudiesPage {
    pub title: String,
    pub templates: Vec<Choice>,
    pub metrics: Vec<Choice>,
    pub sets: Vec<Choice>,
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
    /// The query of this study (for the JSON / CSV download links).
    pub query: String,
}

fn nonempty(s: &Option<String>) -> Option<String> {
    s.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
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
    let name = p
        .file_name()
        .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into());
    Ok(own
        .into_iter()
        .map(|mut s| {
            s.capture = name.clone();
            s
        })
        .collect())
}

/// Runs the study over the files, in a few threads at once.
fn run_files(spec: &StudySpec, files: Vec<PathBuf>, left_out: usize) -> StudyResult {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    let chunk = files.len().div_ceil(threads).max(1);
    let results: Vec<Result<Vec<Sample>, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(|p| file_samples(p)).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|_| vec![Err("analysis panicked".to_string())])
            })
            .collect()
    });
    let mut samples = Vec::new();
    let mut errors = Vec::new();
    for r in results {
        match r {
            Ok(s) => samples.extend(s),
            Err(e) => errors.push(e),
        }
    }
    let captures = files
        .iter()
        .filter_map(|p| p.file_name())
        .map(|n| {
            let n = n.to_string_lossy().to_string();
            (n.clone(), (n, None))
        })
        .collect();
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
    reports: Vec<(String, String, Arc<CaptureReport>)>,
    left_out: usize,
) -> StudyResult {
    let mut samples = Vec::new();
    let mut captures = BTreeMap::new();
    for (id, name, r) in &reports {
        for mut s in study::samples(r, &Default::default()) {
            s.capture = id.clone();
            samples.push(s);
        }
        captures.insert(id.clone(), (name.clone(), Some(format!("/captures/{id}"))));
    }
    StudyResult {
        report: study::aggregate(spec, &samples),
        captures,
        analysed: reports.len(),
        left_out,
        errors: Vec::new(),
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::Null => NONE.to_string(),
        Value::String(s) => s.clone(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), |f| round(f, 3)),
        other => other.to_string(),
    }
}

fn group_text(g: &BTreeMap<String, Value>) -> String {
    if g.is_empty() {
        return "all".to_string();
    }
    g.iter()
        .map(|(k, v)| format!("{k}={}", value_text(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// (x, mean, 95% CI) of one chart point.
type Point = (f64, f64, Option<[f64; 2]>);

const COLORS: &[&str] = &[
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// Per metric, an SVG of the mean against x (numeric x only), one series per group and
/// transport, the 95% CI as error bars.
fn charts(r: &StudyReport) -> Vec<ChartView> {
    let mut metrics: Vec<&str> = Vec::new();
    for row in &r.rows {
        if !metrics.contains(&row.metric.as_str()) {
            metrics.push(&row.metric);
        }
    }
    let transports: std::collections::BTreeSet<&str> =
        r.rows.iter().map(|x| x.transport.as_str()).collect();
    let mut out = Vec::new();
    for m in metrics {
        let mut series: Vec<(String, Vec<Point>)> = Vec::new();
        for row in r.rows.iter().filter(|x| x.metric == m) {
            let Some(x) = row.x.as_f64() else { continue };
            let mut name = group_text(&row.group);
            if transports.len() > 1 {
                name = format!("{name} ({})", row.transport);
            }
            let pt = (x, row.mean, row.ci95);
            match series.iter_mut().find(|s| s.0 == name) {
                Some(s) => s.1.push(pt),
                None => series.push((name, vec![pt])),
            }
        }
        if series.is_empty() {
            continue;
        }
        let pts = series.iter().flat_map(|s| s.1.iter());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, 0f64, f64::MIN);
        for &(x, y, ci) in pts {
            x0 = x0.min(x);
            x1 = x1.max(x);
            let (lo, hi) = ci.map_or((y, y), |c| (c[0], c[1]));
            y0 = y0.min(lo).min(y);
            y1 = y1.max(hi).max(y);
        }
        if x1 <= x0 {
            x0 -= 1.0;
            x1 += 1.0;
        }
        if y1 <= y0 {
            y1 = y0 + 1.0;
        }
        let (w, h, l, rt, t, b) = (640.0, 320.0, 70.0, 200.0, 15.0, 40.0);
        let px = |x: f64| l + (x - x0) / (x1 - x0) * (w - l - rt);
        let py = |y: f64| t + (1.0 - (y - y0) / (y1 - y0)) * (h - t - b);
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg class="study-chart" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{} against x">"#,
            escape(m)
        );
        let _ = write!(
            s,
            r##"<line x1="{l}" y1="{}" x2="{}" y2="{}" stroke="#888"/><line x1="{l}" y1="{t}" x2="{l}" y2="{}" stroke="#888"/>"##,
            h - b,
            w - rt,
            h - b,
            h - b
        );
        for i in 0..=4 {
            let yv = y0 + (y1 - y0) * i as f64 / 4.0;
            let xv = x0 + (x1 - x0) * i as f64 / 4.0;
            let _ = write!(
                s,
                r##"<text x="{}" y="{}" font-size="11" text-anchor="end">{}</text><text x="{}" y="{}" font-size="11" text-anchor="middle">{}</text>"##,
                l - 4.0,
                py(yv) + 4.0,
                round(yv, 1),
                px(xv),
                h - b + 15.0,
                round(xv, 1)
            );
        }
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" font-size="12" text-anchor="middle">{}</text>"#,
            (l + w - rt) / 2.0,
            h - 5.0,
            escape(r.x.as_deref().unwrap_or("x"))
        );
        for (i, (name, pts)) in series.iter_mut().enumerate() {
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let c = COLORS[i % COLORS.len()];
            let line: Vec<String> = pts
                .iter()
                .map(|p| format!("{:.1},{:.1}", px(p.0), py(p.1)))
                .collect();
            let _ = write!(
                s,
                r#"<polyline fill="none" stroke="{c}" stroke-width="2" points="{}"/>"#,
                line.join(" ")
            );
            for &(x, y, ci) in pts.iter() {
                if let Some([lo, hi]) = ci {
                    let _ = write!(
                        s,
                        r#"<line x1="{0:.1}" y1="{1:.1}" x2="{0:.1}" y2="{2:.1}" stroke="{c}"/><line x1="{3:.1}" y1="{1:.1}" x2="{4:.1}" y2="{1:.1}" stroke="{c}"/><line x1="{3:.1}" y1="{2:.1}" x2="{4:.1}" y2="{2:.1}" stroke="{c}"/>"#,
                        px(x),
                        py(lo),
                        py(hi),
                        px(x) - 4.0,
                        px(x) + 4.0
                    );
                }
                let _ = write!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"><title>{}: x {} mean {}</title></circle>"#,
                    px(x),
                    py(y),
                    escape(name),
                    round(x, 3),
                    round(y, 3)
                );
            }
            let ly = t + 10.0 + 16.0 * i as f64;
            let _ = write!(
                s,
                r#"<rect x="{}" y="{}" width="12" height="3" fill="{c}"/><text x="{}" y="{}" font-size="11">{}</text>"#,
                w - rt + 10.0,
                ly - 4.0,
                w - rt + 26.0,
                ly,
                escape(name)
            );
        }
        s.push_str("</svg>");
        out.push(ChartView {
            metric: m.to_string(),
            svg: s,
        });
    }
    out
}

pub async fn studies(
    State(state): State<AppState>,
    Query(q): Query<StudyQuery>,
) -> Result<Response, AppError> {
    let template = nonempty(&q.template);
    let by = nonempty(&q.by);
    let x = nonempty(&q.x);
    let y = nonempty(&q.y);
    let samples_root = state.config().samples.clone();
    let sample_sets = match samples_root.clone() {
        Some(root) => tokio::task::spawn_blocking(move || sample_sets(&root))
            .await
            .map_err(AppError::internal)?,
        None => Vec::new(),
    };
    let set = nonempty(&q.set);
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
            selected: y.as_deref() == Some(*n),
        })
        .collect();
    let mut page = StudiesPage {
        title: "Studies".into(),
        templates,
        metrics,
        sets,
        by: by.clone().unwrap_or_default(),
        x: x.clone().unwrap_or_default(),
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
        query: String::new(),
    };
    let format = nonempty(&q.format);
    if !matches!(format.as_deref(), None | Some("json") | Some("csv")) {
        return Err(AppError::BadRequest(format!(
            "format {:?}: json or csv",
            format.unwrap_or_default()
        )));
    }
    let Some(set) = set else {
        return Ok(page.into_response());
    };
    page.query = [
        ("template", &template),
        ("by", &by),
        ("x", &x),
        ("y", &y),
        ("set", &Some(set.clone())),
    ]
    .iter()
    .filter_map(|(k, v)| {
        v.as_deref()
            .map(|v| format!("{k}={}", crate::assoc_list::encode(v)))
    })
    .collect::<Vec<_>>()
    .join("&");
    let mut spec = match &template {
        Some(t) => study::template(t).map_err(AppError::BadRequest)?,
        None => StudySpec::default(),
    };
    if let Some(by) = &by {
        spec.by = by
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
    }
    if x.is_some() {
        spec.x = x.clone();
    }
    if let Some(y) = &y {
        if !study::METRICS.iter().any(|m| m.0 == y.as_str()) {
            return Err(AppError::BadRequest(format!("unknown metric {y:?}")));
        }
        spec.y = vec![y.clone()];
    }
    let spec_key = serde_json::to_string(&spec).map_err(AppError::internal)?;
    let result = if set == UPLOADED {
        let mut reports: Vec<(String, String, Arc<CaptureReport>)> = state
            .store()
            .list()
            .into_iter()
            .filter_map(|e| e.report.map(|r| (e.meta.id, e.meta.name, r)))
            .collect();
        reports.sort_by(|a, b| a.0.cmp(&b.0));
        let left_out = reports.len().saturating_sub(MAX_CAPTURES);
        reports.truncate(MAX_CAPTURES);
        let ids: Vec<&str> = reports.iter().map(|r| r.0.as_str()).collect();
        let key = (format!("{UPLOADED} {}", ids.join(",")), spec_key);
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
        let key = (format!("samples {set}"), spec_key);
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
    page.set_label = if set == UPLOADED {
        "all uploaded captures".into()
    } else {
        format!("samples: {set}")
    };
    page.analysed = result.analysed;
    page.left_out = result.left_out;
    page.errors = result.errors.clone();
    let f = |v: f64| round(v, 3);
    page.rows = result
        .report
        .rows
        .iter()
        .map(|r| RowView {
            group: group_text(&r.group),
            x: value_text(&r.x),
            metric: r.metric.clone(),
            transport: r.transport.clone(),
            n: r.n,
            mean: f(r.mean),
            median: f(r.median),
            min: f(r.min),
            max: f(r.max),
            ci95: r
                .ci95
                .map_or(NONE.to_string(), |c| format!("[{}, {}]", f(c[0]), f(c[1]))),
            captures_count: r.captures.len(),
            captures: r
                .captures
                .iter()
                .map(|c| match result.captures.get(c) {
                    Some((name, link)) => (name.clone(), link.clone().unwrap_or_default()),
                    None => (c.clone(), String::new()),
                })
                .collect(),
        })
        .collect();
    page.charts = charts(&result.report);
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
