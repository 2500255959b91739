//! Storage of uploads and results under the data dir, keyed by the SHA-256 of the content:
//! `captures/<id>/{capture, meta.json, report.json, tables/<name>.parquet}`. Every file is written
//! atomically (temp file + rename); uploaded names are only shown, never used as paths.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use analyzer::report::CaptureReport;
use serde::{Deserialize, Serialize};
use tempfile::NamedTempFile;

/// Layout version of `meta.json` + results; a stored result of another version is re-analysed.
pub const RESULT_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Queued,
    Running,
    Done,
    Failed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Queued => "queued",
            Status::Running => "running",
            Status::Done => "done",
            Status::Failed => "failed",
        }
    }
}

/// What `meta.json` holds about one stored capture.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Meta {
    pub id: String,
    /// The uploaded file name, for display only.
    pub name: String,
    pub size: u64,
    pub uploaded_unix: u64,
    pub status: Status,
    pub error: Option<String>,
    /// Analysis wall time in ms.
    pub analysis_ms: Option<u64>,
    /// `RESULT_VERSION` and the report `VERSION` the results were written with.
    pub result_version: Option<(u32, u32)>,
}

/// One capture in memory: its meta, analysis progress and (when done) its report.
#[derive(Debug, Clone)]
pub struct Entry {
    pub meta: Meta,
    /// Input bytes read so far by a running analysis.
    pub progress: Arc<AtomicU64>,
    pub report: Option<Arc<CaptureReport>>,
}

impl Entry {
    pub fn progress_bytes(&self) -> u64 {
        self.progress.load(Ordering::Relaxed)
    }
}

pub struct Store {
    dir: PathBuf,
    entries: RwLock<BTreeMap<String, Entry>>,
}

/// A capture id: 64 lowercase hex digits (anything else is rejected before touching the disk).
pub fn valid_id(id: &str) -> bool {
    id.len() == 64
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A table name: ASCII letters, digits and `_` only.
pub fn valid_table_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

pub fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Writes `bytes` to `path` atomically: a temp file in the same directory, synced, renamed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Display form of an uploaded file name: its last path component, control characters dropped,
/// at most 200 characters.
pub fn display_name(raw: &str) -> String {
    let base = raw.rsplit(['/', '\\']).next().unwrap_or(raw);
    let clean: String = base.chars().filter(|c| !c.is_control()).take(200).collect();
    let clean = clean.trim().to_string();
    if clean.is_empty() {
        "upload".to_string()
    } else {
        clean
    }
}

impl Store {
    /// Opens (creating) the data dir and loads every stored capture. Returns the store and the ids
    /// whose analysis must (re)start: unfinished at the last stop, or results missing or stale.
    pub fn open(dir: &Path) -> io::Result<(Store, Vec<String>)> {
        fs::create_dir_all(dir.join("captures"))?;
        let tmp = dir.join("tmp");
        if tmp.exists() {
            // Leftovers of uploads interrupted by a stop.
            fs::remove_dir_all(&tmp)?;
        }
        fs::create_dir_all(&tmp)?;
        let store = Store {
            dir: dir.to_path_buf(),
            entries: RwLock::new(BTreeMap::new()),
        };
        let mut requeue = Vec::new();
        let mut ids: Vec<String> = fs::read_dir(dir.join("captures"))?
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| valid_id(n))
            .collect();
        ids.sort();
        for id in ids {
            let Some(mut meta) = fs::read(store.meta_path(&id))
                .ok()
                .and_then(|b| serde_json::from_slice::<Meta>(&b).ok())
            else {
                tracing::warn!("{id}: no readable meta.json, skipped");
                continue;
            };
            if !store.capture_path(&id).exists() {
                tracing::warn!("{id}: capture file missing, skipped");
                continue;
            }
            meta.id = id.clone();
            let mut report = None;
            if meta.status == Status::Done {
                report = store.read_report(&id);
                let current = Some((RESULT_VERSION, analyzer::report::VERSION));
                if report.is_none() || meta.result_version != current {
                    meta.status = Status::Queued;
                    report = None;
                }
            }
            if matches!(meta.status, Status::Queued | Status::Running) {
                meta.status = Status::Queued;
                requeue.push(id.clone());
            }
            let entry = Entry {
                meta,
                progress: Arc::new(AtomicU64::new(0)),
                report: report.map(Arc::new),
            };
            store.write().insert(id, entry);
        }
        Ok((store, requeue))
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Entry>> {
        self.entries.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, Entry>> {
        self.entries.write().unwrap_or_else(|e| e.into_inner())
    }

    fn read_report(&self, id: &str) -> Option<CaptureReport> {
        let bytes = fs::read(self.report_path(id)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    pub fn tmp_dir(&self) -> PathBuf {
        self.dir.join("tmp")
    }

    pub fn capture_dir(&self, id: &str) -> PathBuf {
        debug_assert!(valid_id(id));
        self.dir.join("captures").join(id)
    }

    pub fn capture_path(&self, id: &str) -> PathBuf {
        self.capture_dir(id).join("capture")
    }

    fn meta_path(&self, id: &str) -> PathBuf {
        self.capture_dir(id).join("meta.json")
    }

    pub fn report_path(&self, id: &str) -> PathBuf {
        self.capture_dir(id).join("report.json")
    }

    pub fn tables_dir(&self, id: &str) -> PathBuf {
        self.capture_dir(id).join("tables")
    }

    /// The Parquet file of table `name` (validated), if it exists.
    pub fn table_path(&self, id: &str, name: &str) -> Option<PathBuf> {
        if !valid_id(id) || !valid_table_name(name) {
            return None;
        }
        let p = self.tables_dir(id).join(format!("{name}.parquet"));
        p.is_file().then_some(p)
    }

    /// Names of the stored tables of a capture, sorted.
    pub fn table_names(&self, id: &str) -> Vec<String> {
        let mut out: Vec<String> = fs::read_dir(self.tables_dir(id))
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter_map(|n| n.strip_suffix(".parquet").map(str::to_string))
            .filter(|n| valid_table_name(n))
            .collect();
        out.sort();
        out
    }

    pub fn get(&self, id: &str) -> Option<Entry> {
        if !valid_id(id) {
            return None;
        }
        self.read().get(id).cloned()
    }

    pub fn list(&self) -> Vec<Entry> {
        let mut v: Vec<Entry> = self.read().values().cloned().collect();
        v.sort_by(|a, b| {
            b.meta
                .uploaded_unix
                .cmp(&a.meta.uploaded_unix)
                .then_with(|| a.meta.name.cmp(&b.meta.name))
        });
        v
    }

    fn save_meta(&self, meta: &Meta) -> io::Result<()> {
        let bytes = serde_json::to_vec_pretty(meta).map_err(io::Error::other)?;
        write_atomic(&self.meta_path(&meta.id), &bytes)
    }

    /// Stores an uploaded (already hashed and checked) temp file under `id`. When the content is
    /// stored already, the temp file is dropped and `false` returned with the existing entry
    /// (a failed analysis is queued again).
    pub fn insert(
        &self,
        tmp: NamedTempFile,
        id: &str,
        name: &str,
        size: u64,
    ) -> io::Result<(Entry, bool)> {
        // Sync before taking the lock: readers must not wait for the disk.
        tmp.as_file().sync_all()?;
        let mut map = self.write();
        if let Some(e) = map.get_mut(id) {
            if e.meta.status != Status::Failed {
                return Ok((e.clone(), false));
            }
            e.meta.status = Status::Queued;
            e.meta.error = None;
            self.save_meta(&e.meta)?;
            return Ok((e.clone(), true));
        }
        let dir = self.capture_dir(id);
        if dir.exists() {
            // An unlisted leftover (e.g. unreadable meta): start over.
            fs::remove_dir_all(&dir)?;
        }
        fs::create_dir_all(&dir)?;
        tmp.persist(self.capture_path(id)).map_err(|e| e.error)?;
        let meta = Meta {
            id: id.to_string(),
            name: name.to_string(),
            size,
            uploaded_unix: now_unix(),
            status: Status::Queued,
            error: None,
            analysis_ms: None,
            result_version: None,
        };
        self.save_meta(&meta)?;
        let entry = Entry {
            meta,
            progress: Arc::new(AtomicU64::new(0)),
            report: None,
        };
        map.insert(id.to_string(), entry.clone());
        Ok((entry, true))
    }

    /// Marks a capture running; false when it was deleted meanwhile.
    pub fn set_running(&self, id: &str) -> bool {
        let mut map = self.write();
        let Some(e) = map.get_mut(id) else {
            return false;
        };
        e.meta.status = Status::Running;
        e.progress.store(0, Ordering::Relaxed);
        // Running is not persisted: a stop while running re-queues from `Queued` anyway.
        true
    }

    /// Records the outcome of an analysis (the result files are written already).
    pub fn finish(
        &self,
        id: &str,
        outcome: Result<CaptureReport, String>,
        analysis_ms: u64,
    ) -> io::Result<()> {
        let mut map = self.write();
        let Some(e) = map.get_mut(id) else {
            // Deleted while running: remove what the analysis wrote.
            let _ = fs::remove_dir_all(self.capture_dir(id));
            return Ok(());
        };
        e.meta.analysis_ms = Some(analysis_ms);
        match outcome {
            Ok(report) => {
                e.meta.status = Status::Done;
                e.meta.error = None;
                e.meta.result_version = Some((RESULT_VERSION, analyzer::report::VERSION));
                e.report = Some(Arc::new(report));
            }
            Err(msg) => {
                e.meta.status = Status::Failed;
                e.meta.error = Some(msg);
                e.report = None;
            }
        }
        self.save_meta(&e.meta)
    }

    /// Removes a capture and its results; false when unknown.
    pub fn delete(&self, id: &str) -> io::Result<bool> {
        if !valid_id(id) {
            return Ok(false);
        }
        let removed = self.write().remove(id).is_some();
        if removed {
            fs::remove_dir_all(self.capture_dir(id))?;
        }
        Ok(removed)
    }
}
