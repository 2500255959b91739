//! Receiving captures: multipart uploads streamed to a temp file in the data dir while hashed
//! (SHA-256, the storage key), checked to be captures, then stored; and the import of the sample
//! traces at start.

use std::fs;
use std::io::{Read, Write};
use std::path::Path;

use axum::extract::multipart::{Field, MultipartError};
use axum::extract::Multipart;
use axum::http::StatusCode;
use serde::Serialize;
use sha2::{Digest, Sha256};
use tempfile::NamedTempFile;
use tokio::io::AsyncWriteExt;

use crate::error::AppError;
use crate::jobs;
use crate::store::{display_name, Status};
use crate::tail;
use crate::AppState;

/// Outcome of one uploaded file.
#[derive(Debug, Serialize)]
pub struct Received {
    pub id: Option<String>,
    pub name: String,
    pub status: String,
    pub error: Option<String>,
    /// True when the same content was stored already (its result is reused).
    pub reused: bool,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn multipart_error(e: MultipartError, limit: u64) -> AppError {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        AppError::TooLarge { limit }
    } else {
        AppError::BadRequest(format!("bad multipart upload: {}", e.body_text()))
    }
}

/// Streams every part named `file` to disk; other parts are ignored. `expected` is the
/// request's length (the size shown while a pass reads the upload as it arrives).
pub async fn receive(
    state: &AppState,
    mut mp: Multipart,
    expected: Option<u64>,
) -> Result<Vec<Received>, AppError> {
    let limit = state.config().max_upload;
    let mut out = Vec::new();
    let mut total: u64 = 0;
    while let Some(field) = mp
        .next_field()
        .await
        .map_err(|e| multipart_error(e, limit))?
    {
        if field.name() != Some("file") {
            continue;
        }
        let name = display_name(field.file_name().unwrap_or("upload"));
        let expected = expected.map(|n| n.saturating_sub(total));
        out.push(receive_one(state, field, name, &mut total, expected).await?);
    }
    if out.is_empty() {
        return Err(AppError::BadRequest(
            "no file in the upload: send multipart/form-data with one or more parts named `file`"
                .into(),
        ));
    }
    Ok(out)
}

/// Bytes written to the temp file at once (then the summary pass may read them).
const WRITE_BLOCK: usize = 1 << 20;

async fn receive_one(
    state: &AppState,
    mut field: Field<'_>,
    name: String,
    total: &mut u64,
    expected: Option<u64>,
) -> Result<Received, AppError> {
    let limit = state.config().max_upload;
    let tmp = NamedTempFile::new_in(state.store().tmp_dir())?;
    let mut file = tokio::fs::File::from_std(tmp.as_file().try_clone()?);
    // The summary pass reads the file as it is written when a slot is free now.
    let (tail, reader) = tail::tail(tmp.reopen()?);
    let early = jobs::start_during_upload(state, &name, reader, expected.unwrap_or(0));
    let mut hasher = Sha256::new();
    let mut size: u64 = 0;
    let mut block: Vec<u8> = Vec::with_capacity(WRITE_BLOCK);
    // On an error below, `tail` is dropped unfinished: the early pass fails and ends.
    while let Some(chunk) = field.chunk().await.map_err(|e| multipart_error(e, limit))? {
        size += chunk.len() as u64;
        *total += chunk.len() as u64;
        if *total > limit {
            return Err(AppError::TooLarge { limit });
        }
        hasher.update(&chunk);
        block.extend_from_slice(&chunk);
        if block.len() >= WRITE_BLOCK {
            write_block(&mut file, &mut block, &tail).await?;
            if let Some(e) = &early {
                e.progress.set_received(size);
            }
        }
    }
    write_block(&mut file, &mut block, &tail).await?;
    drop(file);
    let id = hex(&hasher.finalize());
    if state
        .store()
        .get(&id)
        .is_some_and(|e| e.meta.status != Status::Failed)
    {
        // Stored already: its result is reused, the early pass stops.
        tail.abort();
    } else {
        tail.finish();
    }
    store_checked(state, tmp, id, name, size, early).await
}

/// Writes `block` to the file (flushed, so that a reader of another handle sees it) and tells
/// the tail reader.
async fn write_block(
    file: &mut tokio::fs::File,
    block: &mut Vec<u8>,
    tail: &tail::Tail,
) -> std::io::Result<()> {
    if block.is_empty() {
        return Ok(());
    }
    file.write_all(block).await?;
    file.flush().await?;
    tail.advance(block.len() as u64);
    block.clear();
    Ok(())
}

/// Checks that the temp file is a capture, then stores it and queues its analysis (`early`:
/// the summary pass already started during the upload; dropped when the content was stored
/// already or is no capture).
async fn store_checked(
    state: &AppState,
    tmp: NamedTempFile,
    id: String,
    name: String,
    size: u64,
    early: Option<jobs::Early>,
) -> Result<Received, AppError> {
    let st = state.clone();
    let shown = name.clone();
    let progress = early.as_ref().map(|e| e.progress.clone());
    let res = tokio::task::spawn_blocking(move || {
        if let Err(e) = jobs::check_capture(tmp.path()) {
            return Ok(Err(e));
        }
        st.store().insert(tmp, &id, &name, size, progress).map(Ok)
    })
    .await
    .map_err(AppError::internal)??;
    match res {
        Err(error) => Ok(Received {
            id: None,
            name: shown,
            status: "rejected".into(),
            error: Some(error),
            reused: false,
        }),
        Ok((entry, queued)) => {
            let status = match (queued, early.is_some()) {
                (true, true) => Status::Running,
                (true, false) => Status::Queued,
                (false, _) => entry.meta.status,
            };
            if queued {
                jobs::enqueue(state, entry.meta.id.clone(), early);
            }
            Ok(Received {
                id: Some(entry.meta.id.clone()),
                name: entry.meta.name.clone(),
                status: status.as_str().into(),
                error: None,
                reused: !queued,
            })
        }
    }
}

/// Imports every capture file of `dir` not imported before (a sample the user deleted stays
/// deleted: `samples.json` in the data dir remembers what was imported). Non-captures are
/// skipped with a warning.
pub async fn import_samples(state: &AppState, dir: &Path) -> std::io::Result<usize> {
    let Ok(rd) = fs::read_dir(dir) else {
        tracing::info!("no sample traces at {}", dir.display());
        return Ok(0);
    };
    let mut files: Vec<_> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        // The capture names the CLI takes from a folder (a compressed text log is not one).
        .filter(|p| p.is_file() && analyzer::inputs::is_capture_name(p))
        .collect();
    files.sort();
    let record = state.data_dir().join("samples.json");
    let mut done: Vec<String> = fs::read(&record)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let mut n = 0;
    for path in files {
        let p = path.clone();
        let id = tokio::task::spawn_blocking(move || copy_hashed(&p, None))
            .await
            .map_err(std::io::Error::other)??
            .1;
        if done.contains(&id) {
            continue;
        }
        let st = state.clone();
        let p = path.clone();
        let tmp_dir = st.store().tmp_dir();
        let (tmp, id, size) = tokio::task::spawn_blocking(move || copy_hashed(&p, Some(&tmp_dir)))
            .await
            .map_err(std::io::Error::other)??;
        let Some(tmp) = tmp else { continue };
        let name = display_name(&path.file_name().unwrap_or_default().to_string_lossy());
        match store_checked(state, tmp, id.clone(), name, size, None).await {
            Ok(r) if r.error.is_none() => {
                n += 1;
                done.push(id);
            }
            Ok(r) => tracing::warn!(
                "sample {} skipped: {}",
                path.display(),
                r.error.unwrap_or_default()
            ),
            Err(e) => tracing::warn!("sample {} skipped: {e}", path.display()),
        }
    }
    let bytes = serde_json::to_vec_pretty(&done).map_err(std::io::Error::other)?;
    crate::store::write_atomic(&record, &bytes)?;
    Ok(n)
}

/// The id a capture file has in the store (the SHA-256 of its bytes), whether stored or not.
pub(crate) fn file_id(path: &Path) -> std::io::Result<String> {
    copy_hashed(path, None).map(|r| r.1)
}

/// Stores the capture file at `path` (a sample set's, the Studies page) and queues its analysis
/// unless it is stored already; its id.
pub(crate) async fn import_file(state: &AppState, path: &Path) -> Result<String, AppError> {
    let p = path.to_path_buf();
    let tmp_dir = state.store().tmp_dir();
    let (tmp, id, size) = tokio::task::spawn_blocking(move || copy_hashed(&p, Some(&tmp_dir)))
        .await
        .map_err(AppError::internal)??;
    let Some(tmp) = tmp else {
        return Err(AppError::internal("no temp file"));
    };
    let name = display_name(&path.file_name().unwrap_or_default().to_string_lossy());
    let r = store_checked(state, tmp, id, name, size, None).await?;
    match (r.id, r.error) {
        (Some(id), None) => Ok(id),
        (_, e) => Err(AppError::BadRequest(format!(
            "{}: {}",
            r.name,
            e.unwrap_or_else(|| "not stored".into())
        ))),
    }
}

/// Hashes a file, copying it into a temp file of `tmp_dir` on the way when one is given.
fn copy_hashed(
    src: &Path,
    tmp_dir: Option<&Path>,
) -> std::io::Result<(Option<NamedTempFile>, String, u64)> {
    let mut input = fs::File::open(src)?;
    let mut tmp = tmp_dir.map(NamedTempFile::new_in).transpose()?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = input.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        if let Some(t) = &mut tmp {
            t.write_all(&buf[..n])?;
        }
        size += n as u64;
    }
    if let Some(t) = &mut tmp {
        t.flush()?;
    }
    Ok((tmp, hex(&hasher.finalize()), size))
}
