//! Streaming writer of the JSON contract: each association is written the moment it ends and then
//! dropped, and each TCP connection once it is retired is set aside (`Spill`: in memory up to
//! 1 MiB, then in a temporary file), so that memory stays flat however many associations and
//! connections a capture holds. The document is the
//! same as `report::Report` (a capture object's keys come in another order: `associations`
//! first, then the capture's counters, known only at its end), except that `tcp_flows` lists the
//! connections retired during the pass first, in the order they were retired, then the others by
//! id.

use std::io::{self, Write};
use std::path::PathBuf;

use crate::analyze::{analyze_files_streaming, AnalyzeError, Ended, Options};
use std::collections::BTreeMap;

use crate::report::{AssocReport, CaptureReport, VERSION};

/// Bytes reserved for one capture's object (`capture_object`).
const OBJECT_CAPACITY: usize = 512 << 10;

/// One capture's JSON object on its own (for a parallel batch; see `JsonStream::push_object`).
pub fn capture_object(
    files: &[PathBuf],
    opts: &Options,
    progress: &mut dyn FnMut(u64),
) -> io::Result<(Vec<u8>, Result<(), AnalyzeError>)> {
    // Room for a typical object at once (a 1 MB capture of the lab traffic makes ~300 KB of
    // JSON): growing from empty copied it ~12 times over.
    let mut s = JsonStream {
        out: Vec::with_capacity(OBJECT_CAPACITY),
        captures: 0,
    };
    let r = s.capture(files, opts, progress)?;
    Ok((s.out, r))
}

/// Writes `{"version": 1, "captures": [...]}` capture by capture.
pub struct JsonStream<W: Write> {
    out: W,
    captures: usize,
}

impl<W: Write> JsonStream<W> {
    pub fn begin(mut out: W) -> io::Result<Self> {
        write!(out, "{{\"version\":{VERSION},\"captures\":[")?;
        Ok(JsonStream { out, captures: 0 })
    }

    /// Analyses one capture and writes its object. An unreadable capture is written with its
    /// `error` and returned as `Ok(Err(..))`; `Err` is an output (I/O) failure.
    pub fn capture(
        &mut self,
        files: &[PathBuf],
        opts: &Options,
        progress: &mut dyn FnMut(u64),
    ) -> io::Result<Result<(), AnalyzeError>> {
        if self.captures > 0 {
            self.out.write_all(b",")?;
        }
        self.captures += 1;
        self.out.write_all(b"{\"associations\":[")?;
        // Associations are written in id order (the order of their first packet, as the
        // non-streamed report lists them): one that ends before an earlier one waits.
        let mut written = 0usize;
        let mut next = 0usize;
        // Comparison rows of the written associations wait in a spill file, not in memory; so do
        // retired TCP connections and their comparison rows (written after every SCTP row).
        let mut spill = Spill::default();
        let mut tcp_spill = Spill::default();
        let mut tcp_rows_spill = Spill::default();
        let mut pending: BTreeMap<usize, AssocReport> = BTreeMap::new();
        let mut io_err: Option<io::Error> = None;
        let out = &mut self.out;
        let mut flush = |pending: &mut BTreeMap<usize, AssocReport>,
                         next: &mut usize,
                         all: bool|
         -> io::Result<()> {
            while let Some(entry) = pending.first_entry() {
                if !all && *entry.key() != *next {
                    break;
                }
                let a = entry.remove();
                *next = a.id + 1;
                for row in crate::compare::rows(std::slice::from_ref(&a), &[]) {
                    spill.push(&row)?;
                }
                element(&mut *out, &mut written, &a)?;
            }
            Ok(())
        };
        let result = {
            let mut emit = |e: Ended| {
                if io_err.is_some() {
                    return;
                }
                let r = match e {
                    Ended::Assoc(a) => {
                        pending.insert(a.id, a);
                        flush(&mut pending, &mut next, false)
                    }
                    Ended::Tcp(f) => (|| {
                        for row in crate::compare::rows(&[], std::slice::from_ref(&f)) {
                            tcp_rows_spill.push(&row)?;
                        }
                        tcp_spill.push(&f)
                    })(),
                };
                if let Err(e) = r {
                    io_err = Some(e);
                }
            };
            analyze_files_streaming(files, opts, progress, &mut emit)
        };
        if let Some(e) = io_err {
            return Err(e);
        }
        let (mut report, outcome) = match result {
            Ok(c) => (CaptureReport::from_analysis(&c), Ok(())),
            Err(e) => (
                CaptureReport::failed(&e.file.display().to_string(), e.source.to_string()),
                Err(e),
            ),
        };
        for a in std::mem::take(&mut report.associations) {
            pending.insert(a.id, a);
        }
        flush(&mut pending, &mut next, true)?;
        self.out.write_all(b"]")?;
        // SCTP rows of the associations written above (spilled), then the TCP flows' rows.
        self.out.write_all(b",\"comparison\":[")?;
        let mut n = 0;
        spill.replay(&mut self.out, &mut n)?;
        tcp_rows_spill.replay(&mut self.out, &mut n)?;
        for row in crate::compare::rows(&[], &report.tcp_flows) {
            element(&mut self.out, &mut n, &row)?;
        }
        self.out.write_all(b"]")?;
        // The remaining fields, serialised straight from the report (no intermediate Value).
        let rest = Rest {
            file: &report.file,
            format: &report.format,
            gzip: report.gzip,
            compression: &report.compression,
            packets: report.packets,
            sctp_packets: report.sctp_packets,
            tcp_packets: report.tcp_packets,
            bad_checksums: report.bad_checksums,
            warnings: &report.warnings,
            error: &report.error,
            start_epoch_s: report.start_epoch_s,
            duration_s: report.duration_s,
            accounting: &report.accounting,
            files: &report.files,
        };
        let body = crate::json_write::to_vec(&rest).map_err(io::Error::other)?;
        // `{"file":...}` -> `,"file":...` appended to the open capture object.
        self.out.write_all(b",")?;
        self.out.write_all(&body[1..body.len() - 1])?;
        // The retired connections (spilled), then those open at the end.
        self.out.write_all(b",\"tcp_flows\":[")?;
        let mut n = 0;
        tcp_spill.replay(&mut self.out, &mut n)?;
        for f in &report.tcp_flows {
            element(&mut self.out, &mut n, f)?;
        }
        self.out.write_all(b"]}")?;
        Ok(outcome)
    }

    /// Writes a capture object made by `capture_object` (parallel batches keep input order).
    pub fn push_object(&mut self, object: &[u8]) -> io::Result<()> {
        if self.captures > 0 {
            self.out.write_all(b",")?;
        }
        self.captures += 1;
        self.out.write_all(object)
    }

    pub fn finish(mut self) -> io::Result<W> {
        self.out.write_all(b"]}\n")?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// The fields of a `CaptureReport` other than the streamed `associations`, `comparison` and
/// `tcp_flows`.
#[derive(serde::Serialize)]
struct Rest<'a> {
    file: &'a String,
    format: &'a Option<String>,
    gzip: bool,
    compression: &'a Option<String>,
    packets: u64,
    sctp_packets: u64,
    tcp_packets: u64,
    bad_checksums: u64,
    warnings: &'a Vec<String>,
    error: &'a Option<String>,
    start_epoch_s: Option<f64>,
    duration_s: f64,
    #[serde(flatten)]
    accounting: &'a crate::report::AccountingReport,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    files: &'a Vec<crate::capture::rotation::MemberFile>,
}

/// Writes `v` as the next element of a JSON array of which `n` elements are written already.
fn element(out: &mut impl Write, n: &mut usize, v: &impl serde::Serialize) -> io::Result<()> {
    if *n > 0 {
        out.write_all(b",")?;
    }
    crate::json_write::to_writer(out, v)?;
    *n += 1;
    Ok(())
}

/// JSON values (comparison rows, TCP connections) set aside while the associations stream out:
/// in memory up to `SPILL_IN_MEMORY` bytes, then in a temporary file, so memory stays flat. Most
/// captures need no file at all (making, reading back and deleting one per capture cost the
/// file system's locks in a parallel batch of thousands).
#[derive(Default)]
struct Spill {
    mem: Vec<u8>,
    file: Option<(std::path::PathBuf, io::BufWriter<std::fs::File>)>,
    rows: usize,
}

/// Bytes a `Spill` holds in memory before it moves them to a file.
const SPILL_IN_MEMORY: usize = 1 << 20;

impl Spill {
    fn push(&mut self, v: &impl serde::Serialize) -> io::Result<()> {
        match &mut self.file {
            Some((_, f)) => element(f, &mut self.rows, v),
            None => {
                element(&mut self.mem, &mut self.rows, v)?;
                if self.mem.len() > SPILL_IN_MEMORY {
                    self.move_to_file()?;
                }
                Ok(())
            }
        }
    }

    /// Moves what is held in memory to a new temporary file that takes the next values.
    #[cold]
    fn move_to_file(&mut self) -> io::Result<()> {
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("sctp-analyzer-{}-{n}.json", std::process::id()));
        let f = io::BufWriter::new(std::fs::File::create(&path)?);
        // Kept before the write: a failed write still deletes the file (Drop).
        let f = &mut self.file.insert((path, f)).1;
        f.write_all(&self.mem)?;
        self.mem = Vec::new();
        Ok(())
    }

    /// Copies the values into the JSON array being written to `out`, of which `n` elements are
    /// written already (`n` counts them in).
    fn replay(&mut self, out: &mut impl Write, n: &mut usize) -> io::Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        if *n > 0 {
            out.write_all(b",")?;
        }
        match &mut self.file {
            Some((path, file)) => {
                file.flush()?;
                io::copy(&mut std::fs::File::open(path)?, out)?;
            }
            None => out.write_all(&self.mem)?,
        }
        *n += self.rows;
        Ok(())
    }
}

impl Drop for Spill {
    fn drop(&mut self) {
        if let Some((path, _)) = &self.file {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Replays `rows` values pushed through a `Spill`, as the array `[first, ...]`.
    fn replayed(rows: usize) -> (Vec<u8>, bool) {
        let mut s = Spill::default();
        for i in 0..rows {
            s.push(&serde_json::json!({ "row": i, "pad": "x".repeat(90) }))
                .unwrap();
        }
        let in_file = s.file.is_some();
        let mut out = b"[0".to_vec();
        let mut n = 1;
        s.replay(&mut out, &mut n).unwrap();
        out.push(b']');
        assert_eq!(n, rows + 1);
        (out, in_file)
    }

    #[test]
    fn spill_keeps_small_sets_in_memory_and_moves_large_ones_to_a_file() {
        for rows in [0, 1, 3, 20_000] {
            let (out, in_file) = replayed(rows);
            assert_eq!(in_file, rows == 20_000, "{rows} rows");
            let v: Vec<serde_json::Value> = serde_json::from_slice(&out).unwrap();
            assert_eq!(v.len(), rows + 1);
            for (i, x) in v[1..].iter().enumerate() {
                assert_eq!(x["row"], i, "{rows} rows");
            }
        }
    }
}
