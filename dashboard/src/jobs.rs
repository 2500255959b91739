//! Background analysis, in two streaming passes behind a bounded number of slots (queued beyond,
//! in order): the summary pass (the CLI's `--format json` pass: associations summarised as they
//! end, no rows) publishes the report the moment it ends, possibly having started while the
//! upload still arrived (`start_during_upload`); then the table pass reads the capture again and
//! writes every table to Parquet in row groups as the pass produces them
//! (`analyzer::frames::TableStream`), into `tables.tmp/`, renamed to `tables/` once complete.
//! Memory stays flat in the capture size: the summary pass writes each association to
//! `report.json` as it ends and keeps only its list row (`digest`).

use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use analyzer::analyze::{self, Ended, Options};
use analyzer::capture::CaptureReader;
use analyzer::frames::TableStream;
use analyzer::report::CaptureReport;
use tempfile::NamedTempFile;
use tokio::sync::OwnedSemaphorePermit;
use tokio::task::JoinHandle;

use crate::digest::{Digest, DigestWriter};
use crate::progress::{Phase, Progress};
use crate::store::Store;
use crate::tail::TailReader;
use crate::AppState;

/// Captures up to this size have their compare-chart rows loaded right after their tables (a
/// larger one's rows would take memory in proportion; its page loads them on demand).
const PRELOAD_MAX_BYTES: u64 = 64 << 20;
/// The largest association's chart rows are loaded with the tables when it has this many
/// packets or more (fewer load on demand within a few tens of ms) ...
const PRELOAD_MIN_PACKETS: u64 = 100_000;
/// ... and at most this many: a 1.04 M-packet association's rows held ~120 MB (dashboard RSS
/// 17 -> 138 MB once warmed, release build), so about 250 MB at this bound; larger ones load on
/// demand only.
const PRELOAD_MAX_PACKETS: u64 = 2_000_000;

/// A summary pass started while its upload was still arriving, with its slot.
pub struct Early {
    permit: OwnedSemaphorePermit,
    pass: JoinHandle<Result<Summary, String>>,
    pub progress: Arc<Progress>,
    started: Instant,
}

/// Starts the summary pass of an upload as it arrives, when a slot is free at once (otherwise
/// the capture is queued once stored). `total` is the expected size (the request's length).
pub fn start_during_upload(
    state: &AppState,
    name: &str,
    reader: TailReader,
    total: u64,
) -> Option<Early> {
    let permit = state
        .inner
        .analysis_slots
        .clone()
        .try_acquire_owned()
        .ok()?;
    let progress = Arc::new(Progress::new(total));
    progress.set_received(0);
    progress.start(Phase::Reading);
    let (p, name) = (progress.clone(), name.to_string());
    let tmp = state.store().tmp_dir();
    let pass = tokio::task::spawn_blocking(move || {
        let reader = CaptureReader::from_read(Box::new(reader)).map_err(|e| e.to_string())?;
        summary_pass(&name, reader, &p, &tmp)
    });
    Some(Early {
        permit,
        pass,
        progress,
        started: Instant::now(),
    })
}

/// Queues the analysis of a stored capture; it starts when a slot is free. With `early`, the
/// summary pass already runs (and holds a slot).
pub fn enqueue(state: &AppState, id: String, early: Option<Early>) {
    let state = state.clone();
    tokio::spawn(async move { run(state, id, early).await });
}

/// Queues the table pass of a capture whose summary is published (tables lost at a stop).
pub fn enqueue_tables(state: &AppState, id: String) {
    let state = state.clone();
    tokio::spawn(async move {
        state.store().queue_push(&id);
        let permit = state.inner.analysis_slots.clone().acquire_owned().await;
        state.store().queue_remove(&id);
        let Ok(permit) = permit else { return };
        tables(&state, &id).await;
        drop(permit);
    });
}

async fn run(state: AppState, id: String, early: Option<Early>) {
    let (permit, start, outcome) = match early {
        Some(e) => {
            if !state.store().set_running(&id) {
                e.pass.abort();
                return;
            }
            let outcome = e.pass.await.unwrap_or_else(|e| {
                tracing::error!("analysis task failed: {e}");
                Err("the analysis stopped unexpectedly".to_string())
            });
            (e.permit, e.started, outcome)
        }
        None => {
            state.store().queue_push(&id);
            let permit = state.inner.analysis_slots.clone().acquire_owned().await;
            state.store().queue_remove(&id);
            let Ok(permit) = permit else { return };
            let Some(entry) = state.store().get(&id) else {
                return;
            };
            if !state.store().set_running(&id) {
                return;
            }
            entry.progress.start(Phase::Reading);
            let start = Instant::now();
            let st = state.clone();
            let id2 = id.clone();
            let outcome = tokio::task::spawn_blocking(move || {
                let reader = CaptureReader::open(&st.store().capture_path(&id2))
                    .map_err(|e| e.to_string())?;
                summary_pass(
                    &entry.meta.name,
                    reader,
                    &entry.progress,
                    &st.store().tmp_dir(),
                )
            })
            .await
            .unwrap_or_else(|e| {
                tracing::error!("{id}: analysis task failed: {e}");
                Err("the analysis stopped unexpectedly".to_string())
            });
            (permit, start, outcome)
        }
    };
    // The summary is published: report.json and digest.json first (atomically), then the
    // state.
    let st = state.clone();
    let id2 = id.clone();
    let outcome = tokio::task::spawn_blocking(move || {
        let summary = outcome?;
        publish(st.store(), &id2, summary).map_err(|e| {
            tracing::error!("{id2}: writing the report: {e}");
            "writing the results failed".to_string()
        })
    })
    .await
    .unwrap_or_else(|e| Err(format!("the analysis stopped unexpectedly: {e}")));
    let ms = start.elapsed().as_millis() as u64;
    match &outcome {
        Ok(_) => tracing::info!("{id}: summary in {ms} ms"),
        Err(e) => tracing::warn!("{id}: analysis failed: {e}"),
    }
    state.invalidate_cache(&id);
    let published = match state.store().finish(&id, outcome, ms) {
        Ok(ok) => ok,
        Err(e) => {
            tracing::error!("{id}: saving the outcome: {e}");
            false
        }
    };
    if published {
        tables(&state, &id).await;
    }
    drop(permit);
}

/// Runs the table pass of `id` (its slot held by the caller) and records the outcome.
async fn tables(state: &AppState, id: &str) {
    let Some(entry) = state.store().get(id) else {
        return;
    };
    entry.progress.start(Phase::Tables);
    let start = Instant::now();
    let st = state.clone();
    let id2 = id.to_string();
    let outcome = tokio::task::spawn_blocking(move || {
        table_pass(st.store(), &id2, &entry.meta.name, &entry.progress)
    })
    .await
    .unwrap_or_else(|e| {
        tracing::error!("{id}: table task failed: {e}");
        Err("writing the tables stopped unexpectedly".to_string())
    });
    let ms = start.elapsed().as_millis() as u64;
    match &outcome {
        Ok(()) => tracing::info!("{id}: tables in {ms} ms"),
        Err(e) => tracing::warn!("{id}: tables failed: {e}"),
    }
    state.invalidate_cache(id);
    if outcome.is_ok() {
        warm(state, id).await;
    }
    if let Err(e) = state.store().tables_finished(id, outcome, ms) {
        tracing::error!("{id}: saving the outcome: {e}");
    }
}

/// Loads what the first charts of a capture read, before its tables are declared ready (so no
/// chart request can come first and wait for it, issue 16 part 1: every answer within 200 ms
/// after the analysis): for a small capture the compare charts' rows and every association's
/// directions (the compare page); for any capture, the rows of its largest association when it
/// is large enough for their loading to take noticeable time (a 1 M-packet association's take
/// about half a second), and not so large that holding them would take the memory of a large
/// capture's pages.
async fn warm(state: &AppState, id: &str) {
    let Some(e) = state.store().get(id) else {
        return;
    };
    let Some(d) = &e.digest else {
        return;
    };
    let start = Instant::now();
    if e.meta.size <= PRELOAD_MAX_BYTES {
        if let Err(err) = state.assoc_data(id, None, d.head.duration_s).await {
            tracing::warn!("{id}: loading the compare chart data: {err}");
        }
        if let Err(err) = state.compare_dirs(id, d).await {
            tracing::warn!("{id}: loading the compare directions: {err}");
        }
    }
    if let Some(big) = d
        .rows
        .iter()
        .filter(|r| (PRELOAD_MIN_PACKETS..=PRELOAD_MAX_PACKETS).contains(&r.packets))
        .max_by_key(|r| r.packets)
    {
        if let Err(err) = state
            .assoc_data(id, Some(big.id as u32), d.head.duration_s)
            .await
        {
            tracing::warn!("{id}: loading association {}'s chart rows: {err}", big.id);
        }
    }
    tracing::info!(
        "{id}: first charts' rows loaded in {} ms",
        start.elapsed().as_millis()
    );
}

/// What the summary pass leaves: `report.json` written to a temp file, and its digest.
pub struct Summary {
    report: NamedTempFile,
    digest: Digest,
}

/// The summary pass: the CLI's JSON streaming pass (no rows kept); each association is written
/// to the report (a temp file in `tmp`) in id order as it ends, as the CLI writes them, and
/// only its digest row is kept.
fn summary_pass(
    name: &str,
    reader: CaptureReader,
    progress: &Progress,
    tmp: &Path,
) -> Result<Summary, String> {
    let fail = |e: std::io::Error| {
        tracing::error!("{name}: writing the report: {e}");
        "writing the results failed".to_string()
    };
    let opts = Options {
        keep_rows: false,
        keep_chunks: false,
        ..Options::default()
    };
    let file = NamedTempFile::new_in(tmp).map_err(fail)?;
    let mut w = DigestWriter::new(file);
    let mut flows = Vec::new();
    let analysis = analyze::analyze_reader_progress(
        name,
        reader,
        &opts,
        &mut |p| progress.update(p),
        &mut |e| match e {
            Ended::Assoc(a) => w.ended(a),
            Ended::Tcp(f) => flows.push(f),
        },
    );
    let (report, digest) = w
        .finish(CaptureReport::from_streamed(&analysis, Vec::new(), flows))
        .map_err(fail)?;
    Ok(Summary { report, digest })
}

/// Moves the report in place (synced, renamed) and writes its digest beside it; stale tables of
/// an earlier analysis go. Returns the digest and, when small, the whole report.
fn publish(
    store: &Store,
    id: &str,
    s: Summary,
) -> std::io::Result<(Digest, Option<CaptureReport>)> {
    s.report.as_file().sync_all()?;
    s.report
        .persist(store.report_path(id))
        .map_err(|e| e.error)?;
    let digest = serde_json::to_vec(&s.digest).map_err(std::io::Error::other)?;
    crate::store::write_atomic(&store.digest_path(id), &digest)?;
    let old = store.tables_dir(id);
    if old.exists() {
        fs::remove_dir_all(&old)?;
    }
    Ok((s.digest, store.read_small_report(id)))
}

/// The table pass: every table streamed to `tables.tmp/`, each file synced, the directory
/// renamed to `tables/` at the end (a table is served only once all are complete).
fn table_pass(store: &Store, id: &str, name: &str, progress: &Arc<Progress>) -> Result<(), String> {
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        tracing::error!("{id}: {what}: {e}");
        format!("{what} failed")
    };
    let staging = store.tables_staging(id);
    if staging.exists() {
        fs::remove_dir_all(&staging).map_err(|e| fail("clearing old tables", &e))?;
    }
    // Not create_dir_all: when the capture was deleted meanwhile, this fails.
    fs::create_dir(&staging).map_err(|e| fail("writing the tables", &e))?;
    let reader = CaptureReader::open(&store.capture_path(id))
        .map_err(|e| fail("reading the capture", &e))?;
    // The CLI's options for `--format parquet`.
    let opts = Options {
        keep_rows: true,
        keep_chunks: true,
        ..Options::default()
    };
    let mut sink = TableStream::new(&staging, name);
    let p = progress.clone();
    sink.on_progress(move |x| p.update(x));
    let analysis = analyze::analyze_reader_rows(name, reader, &opts, &mut sink);
    sink.finish(&analysis)
        .map_err(|e| fail("writing the tables", &e))?;
    drop(analysis);
    sync_dir_files(&staging).map_err(|e| fail("writing the tables", &e))?;
    fs::rename(&staging, store.tables_dir(id)).map_err(|e| fail("writing the tables", &e))?;
    Ok(())
}

/// Syncs every file of `dir` and the directory itself.
fn sync_dir_files(dir: &Path) -> std::io::Result<()> {
    for e in fs::read_dir(dir)? {
        fs::File::open(e?.path())?.sync_all()?;
    }
    fs::File::open(dir)?.sync_all()
}

/// Checks that a file opens as a capture (pcap / pcapng / ERF, plain or gzip / zstd / LZ4): the analyzer's error names
/// the problem and its offset.
pub fn check_capture(path: &Path) -> Result<(), String> {
    CaptureReader::open(path)
        .map(|_| ())
        .map_err(|e| e.to_string())
}
