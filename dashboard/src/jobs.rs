//! Background analysis: each capture is analysed with the analyzer library in `spawn_blocking`,
//! behind a bounded semaphore, and its results (report JSON + Parquet tables) written atomically.

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use analyzer::analyze::{analyze_reader, Options};
use analyzer::capture::CaptureReader;
use analyzer::frames::{self, TableFormat};
use analyzer::report::CaptureReport;

use crate::store::{write_atomic, Store};
use crate::AppState;

/// Queues the analysis of a stored capture; it starts when a permit is free.
pub fn enqueue(state: &AppState, id: String) {
    let state = state.clone();
    tokio::spawn(async move {
        let Ok(permit) = state.inner.analysis_slots.clone().acquire_owned().await else {
            return;
        };
        let Some(entry) = state.store().get(&id) else {
            return;
        };
        if !state.store().set_running(&id) {
            return;
        }
        let start = Instant::now();
        let st = state.clone();
        let id2 = id.clone();
        let name = entry.meta.name.clone();
        let progress = entry.progress.clone();
        let outcome =
            tokio::task::spawn_blocking(move || analyse(st.store(), &id2, &name, &progress))
                .await
                .unwrap_or_else(|e| {
                    tracing::error!("{id}: analysis task failed: {e}");
                    Err("the analysis stopped unexpectedly".to_string())
                });
        let ms = start.elapsed().as_millis() as u64;
        match &outcome {
            Ok(_) => tracing::info!("{id}: analysed in {ms} ms"),
            Err(e) => tracing::warn!("{id}: analysis failed: {e}"),
        }
        state.invalidate_cache(&id);
        let duration = outcome.as_ref().ok().map(|r| r.duration_s);
        if let Err(e) = state.store().finish(&id, outcome, ms) {
            tracing::error!("{id}: saving the outcome: {e}");
        }
        // The compare charts read every association's rows: load them now, so that the first
        // chart request after the analysis does not wait for the tables.
        drop(permit);
        if let Some(duration) = duration {
            if let Err(e) = state.assoc_data(&id, None, duration).await {
                tracing::warn!("{id}: loading the compare chart data: {e}");
            }
        }
    });
}

/// Analyses one stored capture and writes its results; the error is shown to the user.
fn analyse(
    store: &Store,
    id: &str,
    name: &str,
    progress: &AtomicU64,
) -> Result<CaptureReport, String> {
    let reader = CaptureReader::open(&store.capture_path(id)).map_err(|e| e.to_string())?;
    let opts = Options {
        keep_chunks: true,
        ..Options::default()
    };
    let analysis = analyze_reader(name, reader, &opts, &mut |n| {
        progress.store(n, Ordering::Relaxed)
    });
    let report = CaptureReport::from_analysis(&analysis);
    let tables = frames::capture_tables(&analysis).map_err(|e| {
        tracing::error!("{id}: building tables: {e}");
        "building the tables failed".to_string()
    })?;
    drop(analysis);
    write_results(store, id, &report, tables).map_err(|e| {
        tracing::error!("{id}: writing results: {e}");
        "writing the results failed".to_string()
    })?;
    Ok(report)
}

/// Tables go to a fresh directory renamed over `tables/`; the report last, so a report on disk
/// always has its tables.
fn write_results(
    store: &Store,
    id: &str,
    report: &CaptureReport,
    tables: Vec<frames::Table>,
) -> std::io::Result<()> {
    let dir = store.capture_dir(id);
    let _ = fs::remove_file(store.report_path(id));
    let staging = dir.join("tables.tmp");
    if staging.exists() {
        fs::remove_dir_all(&staging)?;
    }
    // Not create_dir_all: when the capture was deleted meanwhile, this fails.
    fs::create_dir(&staging)?;
    for mut t in tables {
        let p = staging.join(format!("{}.parquet", t.name));
        frames::write_table(&mut t.df, &p, TableFormat::Parquet).map_err(std::io::Error::other)?;
    }
    let final_dir = store.tables_dir(id);
    if final_dir.exists() {
        fs::remove_dir_all(&final_dir)?;
    }
    fs::rename(&staging, &final_dir)?;
    let json = serde_json::to_vec(report).map_err(std::io::Error::other)?;
    write_atomic(&store.report_path(id), &json)
}

/// Checks that a file opens as a capture (pcap/pcapng, gzip or not): the analyzer's error names
/// the problem and its offset.
pub fn check_capture(path: &Path) -> Result<(), String> {
    CaptureReader::open(path)
        .map(|_| ())
        .map_err(|e| e.to_string())
}
