//! Progress of one capture's analysis, shared between the job and the API: the phase (queued,
//! reading and analysing, writing tables), bytes of the current pass against the capture size,
//! packets and associations met, and an estimate of the time left from the current pass's rate.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

use analyzer::analyze::PassProgress;
use serde_json::{json, Value};

/// Where an analysis is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    /// Waiting for an analysis slot.
    Queued = 0,
    /// The summary pass: reading and analysing the capture (while the upload still arrives when
    /// it started during the upload).
    Reading = 1,
    /// The summary is published; the table pass reads the capture again and writes the tables.
    Tables = 2,
    Done = 3,
    Failed = 4,
}

impl Phase {
    fn from_u8(v: u8) -> Phase {
        match v {
            0 => Phase::Queued,
            1 => Phase::Reading,
            2 => Phase::Tables,
            3 => Phase::Done,
            _ => Phase::Failed,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Queued => "queued",
            Phase::Reading => "reading",
            Phase::Tables => "writing_tables",
            Phase::Done => "done",
            Phase::Failed => "failed",
        }
    }
}

/// Milliseconds since the first call (a monotonic clock the atomics can hold).
fn now_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// Figures of a running analysis (all relaxed atomics: each is read on its own).
#[derive(Debug)]
pub struct Progress {
    phase: AtomicU8,
    /// Capture size in bytes.
    total: AtomicU64,
    /// Input bytes consumed by the current pass.
    bytes: AtomicU64,
    packets: AtomicU64,
    associations: AtomicU64,
    /// Bytes of the capture received when the current pass started before the upload ended.
    received: AtomicU64,
    /// `now_ms` when the current phase started.
    started_ms: AtomicU64,
}

impl Progress {
    pub fn new(total: u64) -> Progress {
        Progress {
            phase: AtomicU8::new(Phase::Queued as u8),
            total: AtomicU64::new(total),
            bytes: AtomicU64::new(0),
            packets: AtomicU64::new(0),
            associations: AtomicU64::new(0),
            received: AtomicU64::new(total),
            started_ms: AtomicU64::new(now_ms()),
        }
    }

    pub fn phase(&self) -> Phase {
        Phase::from_u8(self.phase.load(Ordering::Relaxed))
    }

    /// Changes the phase only.
    pub fn set_phase(&self, p: Phase) {
        self.phase.store(p as u8, Ordering::Relaxed);
    }

    /// Starts a pass: the phase, its clock, and the pass's figures from zero.
    pub fn start(&self, p: Phase) {
        self.bytes.store(0, Ordering::Relaxed);
        self.packets.store(0, Ordering::Relaxed);
        self.associations.store(0, Ordering::Relaxed);
        self.started_ms.store(now_ms(), Ordering::Relaxed);
        self.set_phase(p);
    }

    pub fn set_total(&self, total: u64) {
        self.total.store(total, Ordering::Relaxed);
        self.received.store(total, Ordering::Relaxed);
    }

    /// Bytes of the upload received so far (a pass that starts during the upload).
    pub fn set_received(&self, n: u64) {
        self.received.store(n, Ordering::Relaxed);
    }

    pub fn update(&self, p: PassProgress) {
        self.bytes.store(p.bytes, Ordering::Relaxed);
        self.packets.store(p.packets, Ordering::Relaxed);
        self.associations.store(p.associations, Ordering::Relaxed);
    }

    /// The API's `progress` object. `queue_position` is 1 for the next capture to start.
    pub fn json(&self, queue_position: Option<usize>) -> Value {
        let phase = self.phase();
        let total = self.total.load(Ordering::Relaxed);
        let received = self.received.load(Ordering::Relaxed).min(total);
        let bytes = self.bytes.load(Ordering::Relaxed).min(total);
        let running = matches!(phase, Phase::Reading | Phase::Tables);
        let elapsed_s =
            now_ms().saturating_sub(self.started_ms.load(Ordering::Relaxed)) as f64 / 1e3;
        // The current pass's rate so far; nothing before a tenth of the capture or half a second.
        let eta_s =
            (running && bytes > 0 && elapsed_s >= 0.5 && bytes * 10 >= total.max(1)).then(|| {
                let rate = bytes as f64 / elapsed_s;
                ((total - bytes) as f64 / rate * 10.0).round() / 10.0
            });
        let mb = |n: u64| (n as f64 / 1e5).round() / 10.0;
        let detail = match phase {
            Phase::Queued => match queue_position {
                Some(n) => format!("queued: {n} ahead of it in line", n = n - 1),
                None => "queued".to_string(),
            },
            Phase::Reading if received < total => format!(
                "reading {} of {} MB while the upload arrives ({} MB received)",
                mb(bytes),
                mb(total),
                mb(received)
            ),
            Phase::Reading => format!("reading {} of {} MB", mb(bytes), mb(total)),
            Phase::Tables => format!("writing tables: {} of {} MB read", mb(bytes), mb(total)),
            Phase::Done => "done".to_string(),
            Phase::Failed => "failed".to_string(),
        };
        json!({
            "phase": phase.as_str(),
            "detail": detail,
            "bytes": bytes,
            "total": total,
            "received": received,
            "packets": self.packets.load(Ordering::Relaxed),
            "associations": self.associations.load(Ordering::Relaxed),
            "elapsed_s": if running { Some((elapsed_s * 10.0).round() / 10.0) } else { None },
            "eta_s": eta_s,
            "queue_position": queue_position,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_and_detail() {
        let p = Progress::new(10_000_000);
        assert_eq!(p.phase(), Phase::Queued);
        assert_eq!(p.json(Some(3))["detail"], "queued: 2 ahead of it in line");
        assert_eq!(p.json(Some(3))["queue_position"], 3);
        p.start(Phase::Reading);
        p.update(PassProgress {
            bytes: 2_500_000,
            packets: 40,
            associations: 2,
        });
        let j = p.json(None);
        assert_eq!(j["phase"], "reading");
        assert_eq!(j["detail"], "reading 2.5 of 10 MB");
        assert_eq!(j["packets"], 40);
        assert_eq!(j["associations"], 2);
        p.set_received(5_000_000);
        assert!(p.json(None)["detail"]
            .as_str()
            .unwrap()
            .contains("while the upload arrives (5 MB received)"));
        p.start(Phase::Tables);
        assert_eq!(p.json(None)["bytes"], 0);
        assert_eq!(p.json(None)["phase"], "writing_tables");
        // No estimate without a rate yet.
        assert!(p.json(None)["eta_s"].is_null());
    }
}
