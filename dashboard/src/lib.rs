//! sctp-dashboard: a web dashboard over the analyzer library. Uploads are stored by content hash
//! in the data dir and analysed in the background; pages show the analyzer's `CaptureReport`
//! (the CLI's JSON: its digest in memory, each association read from disk when shown) and
//! charts built from its Parquet tables. `app(state)` is the whole router.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use tokio::sync::Semaphore;
use tower_http::trace::TraceLayer;

pub mod api;
mod assets;
mod assoc_dirs;
mod assoc_list;
mod assoc_page;
mod assoc_tables;
mod bounded;
pub mod charts;
mod compare_charts;
mod compare_page;
pub mod digest;
pub mod error;
pub mod help;
mod hol_view;
mod jobs;
mod lifecycle;
mod pages;
pub mod progress;
pub mod series;
pub mod store;
mod stories;
mod streams_view;
mod studies;
mod study_chart;
mod table_page;
mod tables;
mod tail;
mod tcp_view;
mod upload;
mod views;

use analyzer::report::AssocReport;
use bounded::Bounded;
use charts::AssocData;
use digest::Digest;
use error::AppError;
use store::Store;

/// Bytes of multipart framing allowed above `max_upload` in one request.
const MULTIPART_SLACK: u64 = 1 << 20;
/// Association datasets kept in memory for chart requests.
const CACHE_ENTRIES: usize = 6;
/// Association reports read from disk kept in memory for the next request.
const ASSOC_CACHE_ENTRIES: usize = 16;
/// Cookie that carries the access token after `?token=` was given once.
pub const TOKEN_COOKIE: &str = "sctp_dashboard_token";

#[derive(Debug, Clone)]
pub struct Config {
    pub data_dir: PathBuf,
    /// Largest upload (bytes, all files of one request together).
    pub max_upload: u64,
    /// Analyses running at once (more wait in line).
    pub analysis_workers: usize,
    /// When set, every request needs this token (bearer header, cookie or `?token=`).
    pub token: Option<String>,
    /// The sample traces directory (`--samples`): its folders of captures are the Studies
    /// page's capture sets.
    pub samples: Option<PathBuf>,
    /// Bytes of association JSON `GET /api/captures/{id}` sends unless the client gives a
    /// `limit` (`api::RESULT_BUDGET`).
    pub result_budget: usize,
}

impl Config {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Config {
            data_dir: data_dir.into(),
            max_upload: 2 << 30,
            analysis_workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            token: None,
            samples: None,
            result_budget: api::RESULT_BUDGET,
        }
    }
}

type CacheKey = (String, Option<u32>);
/// (capture, association id) of a cached association report.
type AssocKey = (String, usize);
/// (capture set, study spec as JSON).
type StudyKey = (String, String);

struct Inner {
    config: Config,
    store: Store,
    analysis_slots: Arc<Semaphore>,
    cache: Bounded<CacheKey, AssocData>,
    /// Association reports read from `report.json` (capture, association id).
    assocs: Bounded<AssocKey, AssocReport>,
    /// Per capture, what the compare charts need of every association direction.
    compare_dirs: Bounded<String, Vec<compare_charts::CompareDir>>,
    /// Per capture, its report as JSON without `associations`, `tcp_flows` and `comparison`
    /// (the paginated `GET /api/captures/{id}` adds a page of each).
    heads: Bounded<String, serde_json::Value>,
    /// Studies already run (`studies`).
    studies: Bounded<StudyKey, studies::StudyResult>,
}

/// Shared state of the server: configuration, the store, the analysis queue, the chart cache.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

impl AppState {
    /// Opens the data dir (creating it), loads what is stored there and queues every unfinished
    /// analysis. Must run inside a tokio runtime.
    pub fn open(config: Config) -> io::Result<AppState> {
        let (store, requeue) = Store::open(&config.data_dir)?;
        let workers = config.analysis_workers.max(1);
        let state = AppState {
            inner: Arc::new(Inner {
                config,
                store,
                analysis_slots: Arc::new(Semaphore::new(workers)),
                cache: Bounded::new(CACHE_ENTRIES),
                assocs: Bounded::new(ASSOC_CACHE_ENTRIES),
                compare_dirs: Bounded::new(CACHE_ENTRIES),
                heads: Bounded::new(CACHE_ENTRIES),
                studies: Bounded::new(studies::CACHE_ENTRIES),
            }),
        };
        for id in requeue.full {
            jobs::enqueue(&state, id, None);
        }
        for id in requeue.tables {
            jobs::enqueue_tables(&state, id);
        }
        Ok(state)
    }

    /// Imports the capture files of `dir` (the sample traces) not imported before.
    pub async fn import_samples(&self, dir: &Path) -> io::Result<usize> {
        upload::import_samples(self, dir).await
    }

    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    pub fn data_dir(&self) -> &Path {
        &self.inner.config.data_dir
    }

    fn invalidate_cache(&self, id: &str) {
        self.inner.cache.remove_where(|k| k.0 == id);
        self.inner.assocs.remove_where(|k| k.0 == id);
        self.inner.compare_dirs.remove_where(|k| k == id);
        self.inner.heads.remove_where(|k| k == id);
    }

    /// The report of `id` as JSON without its associations, TCP flows and comparison rows
    /// (cached: made by cloning the digest's head once).
    fn report_head(&self, id: &str, d: &Digest) -> Arc<serde_json::Value> {
        if let Some(v) = self.inner.heads.get(&id.to_string(), false) {
            return v;
        }
        let head = analyzer::report::CaptureReport {
            associations: Vec::new(),
            tcp_flows: Vec::new(),
            comparison: Vec::new(),
            ..d.head.clone()
        };
        let mut v = serde_json::to_value(&head).unwrap_or(serde_json::Value::Null);
        if let Some(o) = v.as_object_mut() {
            for k in ["associations", "tcp_flows", "comparison"] {
                o.remove(k);
            }
        }
        let v = Arc::new(v);
        self.inner.heads.put(id.to_string(), v.clone());
        v
    }

    fn study_cached(&self, key: &StudyKey) -> Option<Arc<studies::StudyResult>> {
        self.inner.studies.get(key, false)
    }

    fn study_store(&self, key: StudyKey, v: Arc<studies::StudyResult>) {
        self.inner.studies.put(key, v);
    }

    /// The full report of the association at position `i` of `d` (the digest of capture
    /// `id`), read from the stored report (cached).
    async fn assoc(
        &self,
        id: &str,
        d: &Arc<Digest>,
        i: usize,
    ) -> Result<Arc<AssocReport>, AppError> {
        let n = d
            .rows
            .get(i)
            .ok_or_else(|| AppError::NotFound(format!("association at {i}")))?
            .id;
        let key = (id.to_string(), n);
        if let Some(v) = self.inner.assocs.get(&key, true) {
            return Ok(v);
        }
        let (path, d2) = (self.store().report_path(id), d.clone());
        let a = tokio::task::spawn_blocking(move || d2.read_assoc(&path, i))
            .await
            .map_err(AppError::internal)?
            .map_err(|e| {
                tracing::error!("{id}: reading association {n} from the report: {e}");
                AppError::Internal(format!(
                    "reading association {n} from the stored report failed"
                ))
            })?;
        let a = Arc::new(a);
        self.inner.assocs.put(key, a.clone());
        Ok(a)
    }

    /// Every association direction of capture `id` as the compare charts need it, read from
    /// the stored report one association at a time (cached).
    async fn compare_dirs(
        &self,
        id: &str,
        d: &Arc<Digest>,
    ) -> Result<Arc<Vec<compare_charts::CompareDir>>, AppError> {
        if let Some(v) = self.inner.compare_dirs.get(&id.to_string(), false) {
            return Ok(v);
        }
        let dirs = self
            .walk_assocs(id, d, Vec::new(), |out, a| {
                out.extend(compare_charts::compare_dirs(&a));
                true
            })
            .await?;
        let dirs = Arc::new(dirs);
        self.inner.compare_dirs.put(id.to_string(), dirs.clone());
        Ok(dirs)
    }

    /// The first associations of capture `id`, until they have `directions` directions.
    async fn first_assocs(
        &self,
        id: &str,
        d: &Arc<Digest>,
        directions: usize,
    ) -> Result<Vec<AssocReport>, AppError> {
        let (out, _) = self
            .walk_assocs(id, d, (Vec::new(), 0), move |(out, n), a| {
                *n += a.directions.len();
                out.push(a);
                *n < directions
            })
            .await?;
        Ok(out)
    }

    /// Folds the associations of capture `id`'s stored report into `acc`, one at a time on a
    /// blocking thread, while `f` returns true.
    async fn walk_assocs<T: Send + 'static>(
        &self,
        id: &str,
        d: &Arc<Digest>,
        mut acc: T,
        mut f: impl FnMut(&mut T, AssocReport) -> bool + Send + 'static,
    ) -> Result<T, AppError> {
        let (path, d2) = (self.store().report_path(id), d.clone());
        tokio::task::spawn_blocking(move || d2.each_assoc(&path, |a| f(&mut acc, a)).map(|()| acc))
            .await
            .map_err(AppError::internal)?
            .map_err(|e| {
                tracing::error!("{id}: reading the associations from the report: {e}");
                AppError::Internal("reading the stored report failed".into())
            })
    }

    /// The chart rows of association `assoc` (all associations when `None`), cached.
    async fn assoc_data(
        &self,
        id: &str,
        assoc: Option<u32>,
        duration_s: f64,
    ) -> Result<Arc<AssocData>, AppError> {
        let key = (id.to_string(), assoc);
        if let Some(v) = self.inner.cache.get(&key, true) {
            return Ok(v);
        }
        let dir = self.store().tables_dir(id);
        let data = tokio::task::spawn_blocking(move || tables::load(&dir, assoc, duration_s))
            .await
            .map_err(AppError::internal)?
            .map_err(AppError::Internal)?;
        let data = Arc::new(data);
        self.inner.cache.put(key, data.clone());
        Ok(data)
    }
}

/// The whole router: pages, JSON API, table downloads and the embedded assets.
pub fn app(state: AppState) -> Router {
    let body_limit = state
        .config()
        .max_upload
        .saturating_add(MULTIPART_SLACK)
        .min(usize::MAX as u64) as usize;
    Router::new()
        .route("/", get(pages::index))
        .route("/upload", get(pages::upload_page))
        .route("/studies", get(studies::studies))
        .route("/studies/open", get(studies::open_capture))
        .route("/help", get(help::help))
        .route("/captures/{id}", get(pages::capture))
        .route(
            "/captures/{id}/associations/{n}",
            get(assoc_page::association),
        )
        .route("/captures/{id}/compare", get(compare_page::compare))
        .route("/captures/{id}/tables/{file}", get(api::table_download))
        .route(
            "/api/captures",
            get(api::list)
                .post(api::upload)
                .layer(DefaultBodyLimit::max(body_limit)),
        )
        .route("/api/captures/{id}", get(api::get).delete(api::delete))
        .route("/api/captures/{id}/associations", get(api::associations))
        .route(
            "/api/captures/{id}/associations/{n}",
            get(assoc_tables::assoc_api),
        )
        .route(
            "/api/captures/{id}/associations/{n}/tables/{name}",
            get(assoc_tables::table_api),
        )
        .route(
            "/api/captures/{id}/associations/{n}/charts/{kind}",
            get(api::assoc_chart),
        )
        .route(
            "/api/captures/{id}/compare/charts/{kind}",
            get(api::compare_chart),
        )
        .route("/assets/{file}", get(assets::serve))
        .fallback(fallback)
        .layer(middleware::from_fn_with_state(state.clone(), auth))
        .layer(middleware::from_fn(error::html_errors))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

async fn fallback() -> AppError {
    AppError::NotFound("page".into())
}

/// Constant-time comparison of the token.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// Access token check (`--token`): `Authorization: Bearer`, the cookie, or `?token=` once (which
/// sets the cookie and redirects to the same page without it).
async fn auth(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let Some(token) = state.config().token.as_deref() else {
        return next.run(req).await;
    };
    let headers = req.headers();
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| same(t.trim(), token));
    let cookie = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .any(|(k, v)| k == TOKEN_COOKIE && same(v, token));
    if bearer || cookie {
        return next.run(req).await;
    }
    let query = req.uri().query().unwrap_or("");
    let given = query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .any(|(k, v)| k == "token" && same(v, token));
    if given {
        let rest: Vec<&str> = query
            .split('&')
            .filter(|kv| !kv.starts_with("token="))
            .collect();
        let path = req.uri().path();
        let target = if rest.is_empty() {
            path.to_string()
        } else {
            format!("{path}?{}", rest.join("&"))
        };
        let mut resp = Redirect::to(&target).into_response();
        let cookie = format!("{TOKEN_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict");
        if let Ok(v) = header::HeaderValue::from_str(&cookie) {
            resp.headers_mut().insert(header::SET_COOKIE, v);
        }
        return resp;
    }
    let mut r = AppError::Unauthorized.into_response();
    *r.status_mut() = StatusCode::UNAUTHORIZED;
    r
}
