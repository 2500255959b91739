//! Stored study samples (`study --cache DIR`): one JSON file per capture with the figures of
//! its directions and the parameters inferred from them, read back instead of analysing the
//! capture again while the capture (size, modification time) and the analyzer that stored it
//! (the running executable's size and modification time) are the same. Sidecar parameters are
//! not stored: they are read afresh each time (`params::sidecar`).

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Sample, METRICS};

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Entry {
    /// The capture and the analyzer the samples came from.
    stamp: Stamp,
    samples: Vec<Stored>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct Stamp {
    capture: String,
    size: u64,
    mtime_ns: u128,
    analyzer: (u64, u128),
    /// The analysis options that change figures (deadline, SCTP-over-UDP ports).
    options: String,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Stored {
    transport: String,
    inferred: BTreeMap<String, Value>,
    metrics: BTreeMap<String, f64>,
}

fn file_stamp(p: &Path) -> Option<(u64, u128)> {
    let m = std::fs::metadata(p).ok()?;
    let t = m.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
    Some((m.len(), t.as_nanos()))
}

fn stamp(capture: &Path, options: &str) -> Option<Stamp> {
    let (size, mtime_ns) = file_stamp(capture)?;
    let exe = std::env::current_exe().ok()?;
    Some(Stamp {
        capture: capture.display().to_string(),
        size,
        mtime_ns,
        analyzer: file_stamp(&exe)?,
        options: options.to_string(),
    })
}

/// The cache file of `capture` in `dir` (a hash of its path).
fn entry_path(dir: &Path, capture: &Path) -> PathBuf {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    capture.display().to_string().hash(&mut h);
    dir.join(format!("{:016x}.json", h.finish()))
}

/// The stored samples of `capture` (inferred parameters only), when still valid for the
/// analysis options `options`.
pub fn load(dir: &Path, capture: &Path, options: &str) -> Option<Vec<Sample>> {
    let text = std::fs::read_to_string(entry_path(dir, capture)).ok()?;
    let e: Entry = serde_json::from_str(&text).ok()?;
    if Some(&e.stamp) != stamp(capture, options).as_ref() {
        return None;
    }
    let name = |m: &str| METRICS.iter().map(|x| x.0).find(|x| *x == m);
    e.samples
        .into_iter()
        .map(|s| {
            Some(Sample {
                capture: e.stamp.capture.clone(),
                transport: match s.transport.as_str() {
                    "sctp" => "sctp",
                    "tcp" => "tcp",
                    _ => return None,
                },
                params: s.inferred,
                metrics: s
                    .metrics
                    .into_iter()
                    .map(|(k, v)| Some((name(&k)?, v)))
                    .collect::<Option<_>>()?,
            })
        })
        .collect()
}

/// Stores the samples of `capture` (made without sidecar parameters) under `options`.
pub fn store(dir: &Path, capture: &Path, options: &str, samples: &[Sample]) -> Result<(), String> {
    let Some(stamp) = stamp(capture, options) else {
        return Ok(());
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let e = Entry {
        stamp,
        samples: samples
            .iter()
            .map(|s| Stored {
                transport: s.transport.to_string(),
                inferred: s.params.clone(),
                metrics: s.metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            })
            .collect(),
    };
    let path = entry_path(dir, capture);
    let tmp = path.with_extension("tmp");
    let text = serde_json::to_string(&e).map_err(|e| e.to_string())?;
    std::fs::write(&tmp, text)
        .and_then(|_| std::fs::rename(&tmp, &path))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// `samples` with the capture's sidecar parameters over the inferred ones (as `samples` does).
pub fn with_params(samples: Vec<Sample>, params: &BTreeMap<String, Value>) -> Vec<Sample> {
    samples
        .into_iter()
        .map(|mut s| {
            s.params
                .extend(params.iter().map(|(k, v)| (k.clone(), v.clone())));
            s
        })
        .collect()
}
