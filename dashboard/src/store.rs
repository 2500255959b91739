//! Storage of uploads and results under the data dir, keyed by the SHA-256 of the content:
//! `captures/<id>/{capture, meta.json, report.json, digest.json, tables/<name>.parquet}`. Every
//! file is written atomically (temp file + rename); uploaded names are only shown, never used as
//! paths. The report (the summary) and its digest (what is kept in memory, `digest`) are
//! published first; the tables are written into `tables.tmp/` after them and renamed to
//! `tables/` whole, so a table is served only once all of them are complete.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use analyzer::report::CaptureReport;
use serde::{Deserialize, Serialize};
use tempfile::NamedTempFile;

use crate::digest::Digest;
use crate::progress::{Phase, Progress};

/// Layout version of `meta.json` + results; a stored result of another version is re-analysed
/// (2: `digest.json` beside `report.json`).
pub const RESULT_VERSION: u32 = 2;

/// A report up to this size (JSON bytes) is also kept whole in memory (`Entry::report`, for the
/// Studies page over uploaded captures); a larger one is only on disk.
pub const WHOLE_REPORT_MAX: u64 = 8 << 20;

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
    /// The tables (Parquet), written after the summary (`status` done).
    #[serde(default)]
    pub tables: Tables,
    /// Wall time of the table pass in ms.
    #[serde(default)]
    pub tables_ms: Option<u64>,
}

/// Where the tables of a capture are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tables {
    /// Not written yet (queued or being written).
    #[default]
    Pending,
    Ready,
    Failed,
}

impl Tables {
    pub fn as_str(self) -> &'static str {
        match self {
            Tables::Pending => "pending",
            Tables::Ready => "ready",
            Tables::Failed => "failed",
        }
    }
}

/// One capture in memory: its meta, analysis progress and (when done) its digest.
#[derive(Debug, Clone)]
pub struct Entry {
    pub meta: Meta,
    /// Phase and figures of a running analysis.
    pub progress: Arc<Progress>,
    /// What the pages show of the report (the associations' full reports stay on disk).
    pub digest: Option<Arc<Digest>>,
    /// The whole report, for a report of up to `WHOLE_REPORT_MAX` bytes only.
    pub report: Option<Arc<CaptureReport>>,
}

impl Entry {
    /// Whether the tables are all written (then they are served).
    pub fn tables_ready(&self) -> bool {
        self.meta.status == Status::Done && self.meta.tables == Tables::Ready
    }
}

/// What `Store::open` found unfinished.
#[derive(Debug, Default)]
pub struct Requeue {
    /// Whole analyses.
    pub full: Vec<String>,
    /// Table passes (the summary is served).
    pub tables: Vec<String>,
}

pub struct Store {
    dir: PathBuf,
    entries: RwLock<BTreeMap<String, Entry>>,
    /// Captures waiting for an analysis slot, in the order they will get one.
    queue: Mutex<Vec<String>>,
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
    /// whose analysis must (re)start: unfinished at the last stop, or results missing or stale;
    /// and those whose summary is published but whose tables are not written.
    pub fn open(dir: &Path) -> io::Result<(Store, Requeue)> {
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
            queue: Mutex::new(Vec::new()),
        };
        let mut requeue = Vec::new();
        let mut tables_requeue = Vec::new();
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
            let (mut digest, mut report) = (None, None);
            if meta.status == Status::Done {
                let current = Some((RESULT_VERSION, analyzer::report::VERSION));
                digest = (meta.result_version == current)
                    .then(|| store.read_digest(&id))
                    .flatten();
                if digest.is_none() || !store.report_path(&id).is_file() {
                    meta.status = Status::Queued;
                    digest = None;
                } else {
                    report = store.read_small_report(&id);
                }
            }
            if matches!(meta.status, Status::Queued | Status::Running) {
                meta.status = Status::Queued;
                requeue.push(id.clone());
            }
            // Tables exist only whole (`tables/`, renamed from `tables.tmp/` when complete):
            // a stop while writing them leaves the summary, and they are written again.
            let staging = store.capture_dir(&id).join("tables.tmp");
            if staging.exists() {
                fs::remove_dir_all(&staging)?;
            }
            if meta.status == Status::Done {
                let have = store.tables_dir(&id).is_dir();
                if meta.tables == Tables::Ready && !have {
                    meta.tables = Tables::Pending;
                }
                if meta.tables == Tables::Pending && have {
                    // Renamed in place, the meta not yet saved: complete.
                    meta.tables = Tables::Ready;
                }
                if meta.tables == Tables::Pending {
                    tables_requeue.push(id.clone());
                }
            }
            let progress = Progress::new(meta.size);
            progress.set_phase(match (meta.status, meta.tables) {
                (Status::Done, Tables::Ready) => Phase::Done,
                (Status::Failed, _) | (Status::Done, Tables::Failed) => Phase::Failed,
                _ => Phase::Queued,
            });
            let entry = Entry {
                meta,
                progress: Arc::new(progress),
                digest: digest.map(Arc::new),
                report: report.map(Arc::new),
            };
            store.write().insert(id, entry);
        }
        Ok((
            store,
            Requeue {
                full: requeue,
                tables: tables_requeue,
            },
        ))
    }

    /// 1-based position of `id` among the captures waiting for a slot.
    pub fn queue_position(&self, id: &str) -> Option<usize> {
        let q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        q.iter().position(|x| x == id).map(|i| i + 1)
    }

    pub fn queue_push(&self, id: &str) {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        q.push(id.to_string());
    }

    pub fn queue_remove(&self, id: &str) {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = q.iter().position(|x| x == id) {
            q.remove(i);
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Entry>> {
        self.entries.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, Entry>> {
        self.entries.write().unwrap_or_else(|e| e.into_inner())
    }

    /// The stored digest, when it reads back whole (else the capture is analysed again).
    fn read_digest(&self, id: &str) -> Option<Digest> {
        let bytes = fs::read(self.digest_path(id)).ok()?;
        serde_json::from_slice::<Digest>(&bytes)
            .ok()
            .filter(Digest::consistent)
    }

    /// The whole report when its JSON is at most `WHOLE_REPORT_MAX` bytes.
    pub fn read_small_report(&self, id: &str) -> Option<CaptureReport> {
        let path = self.report_path(id);
        if fs::metadata(&path).ok()?.len() > WHOLE_REPORT_MAX {
            return None;
        }
        serde_json::from_slice(&fs::read(path).ok()?).ok()
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

    pub fn digest_path(&self, id: &str) -> PathBuf {
        self.capture_dir(id).join("digest.json")
    }

    pub fn tables_dir(&self, id: &str) -> PathBuf {
        self.capture_dir(id).join("tables")
    }

    /// Where a table pass writes before its tables are complete.
    pub fn tables_staging(&self, id: &str) -> PathBuf {
        self.capture_dir(id).join("tables.tmp")
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
    /// `progress` is that of a pass started during the upload, if one was.
    pub fn insert(
        &self,
        tmp: NamedTempFile,
        id: &str,
        name: &str,
        size: u64,
        progress: Option<Arc<Progress>>,
    ) -> io::Result<(Entry, bool)> {
        let progress = progress.unwrap_or_else(|| Arc::new(Progress::new(size)));
        progress.set_total(size);
        // Sync before taking the lock: readers must not wait for the disk.
        tmp.as_file().sync_all()?;
        let mut map = self.write();
        if let Some(e) = map.get_mut(id) {
            if e.meta.status != Status::Failed {
                return Ok((e.clone(), false));
            }
            e.meta.status = Status::Queued;
            e.meta.error = None;
            e.progress = progress;
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
            tables: Tables::Pending,
            tables_ms: None,
        };
        self.save_meta(&meta)?;
        let entry = Entry {
            meta,
            progress,
            digest: None,
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
        // Running is not persisted: a stop while running re-queues from `Queued` anyway.
        true
    }

    /// Records the outcome of the summary pass (`report.json` and `digest.json` are written
    /// already; `report` is the whole report when small); the tables are pending after a
    /// success. False when the capture was deleted meanwhile.
    pub fn finish(
        &self,
        id: &str,
        outcome: Result<(Digest, Option<CaptureReport>), String>,
        analysis_ms: u64,
    ) -> io::Result<bool> {
        let mut map = self.write();
        let Some(e) = map.get_mut(id) else {
            // Deleted while running: remove what the analysis wrote.
            let _ = fs::remove_dir_all(self.capture_dir(id));
            return Ok(false);
        };
        e.meta.analysis_ms = Some(analysis_ms);
        let ok = outcome.is_ok();
        match outcome {
            Ok((digest, report)) => {
                e.meta.status = Status::Done;
                e.meta.error = None;
                e.meta.result_version = Some((RESULT_VERSION, analyzer::report::VERSION));
                e.meta.tables = Tables::Pending;
                e.meta.tables_ms = None;
                e.digest = Some(Arc::new(digest));
                e.report = report.map(Arc::new);
            }
            Err(msg) => {
                e.meta.status = Status::Failed;
                e.meta.error = Some(msg);
                e.digest = None;
                e.report = None;
                e.progress.set_phase(Phase::Failed);
            }
        }
        self.save_meta(&e.meta)?;
        Ok(ok)
    }

    /// Records the outcome of the table pass (the tables are in place already when it
    /// succeeded).
    pub fn tables_finished(
        &self,
        id: &str,
        outcome: Result<(), String>,
        tables_ms: u64,
    ) -> io::Result<()> {
        let mut map = self.write();
        let Some(e) = map.get_mut(id) else {
            let _ = fs::remove_dir_all(self.capture_dir(id));
            return Ok(());
        };
        e.meta.tables_ms = Some(tables_ms);
        match outcome {
            Ok(()) => {
                e.meta.tables = Tables::Ready;
                e.progress.set_phase(Phase::Done);
            }
            Err(msg) => {
                e.meta.tables = Tables::Failed;
                e.meta.error = Some(msg);
                e.progress.set_phase(Phase::Failed);
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
