//! `sctp_analyzer._native`: the analyzer library for Python. One analysis per capture, the same
//! library calls as `sctp-analyzer analyze` (no second code path): the report as the JSON of
//! `report::CaptureReport` (the CLI's `--format json` object of that capture), the tables of
//! `frames::capture_tables` as Arrow (`arrow::ArrowTable`). The Python package
//! (`python/sctp_analyzer`) wraps them in `Analysis` objects with polars DataFrames.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use analyzer::analyze::{
    analyze_files, udp_ports, worker_pool, AnalyzeError, CaptureAnalysis, Options,
};
use analyzer::inputs::Grouping;
use analyzer::report::CaptureReport;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use rayon::prelude::*;

mod arrow;
use arrow::ArrowTable;

/// What `analyze` hands to Python for one capture: the report's JSON text, its tables (none
/// when tables were not wanted).
type Outcome = (String, Vec<ArrowTable>);

/// One capture's result, or why it failed, before the GIL is taken again.
enum Failure {
    /// The capture could not be read (`AnalyzeError`: the file, the offset).
    Capture(AnalyzeError),
    /// Building the tables or writing the report failed.
    Other(String),
    /// A bug in the analyzer: its panic message.
    Panic(String),
}

/// The analysis options of `sctp-analyzer analyze`'s flags.
fn options(
    tcp: bool,
    chunks: bool,
    sctp_udp_ports: &[u16],
    deadline_ms: Option<f64>,
    tables: bool,
    pipeline: bool,
) -> Options {
    Options {
        sctp_udp_ports: udp_ports(sctp_udp_ports),
        keep_rows: tables,
        keep_chunks: chunks && tables,
        tcp,
        deadline_ms,
        pipeline,
        ..Options::default()
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The report and tables of an analysed capture (as the CLI's JSON and Parquet output).
fn outcome(c: &CaptureAnalysis) -> Result<Outcome, Failure> {
    let report = serde_json::to_string(&CaptureReport::from_analysis(c))
        .map_err(|e| Failure::Other(format!("{}: writing the report: {e}", c.file)))?;
    let tables = analyzer::frames::capture_tables(c)
        .and_then(|ts| {
            ts.into_iter()
                .map(|t| ArrowTable::new(t.name, t.df))
                .collect()
        })
        .map_err(|e| Failure::Other(format!("{}: building tables: {e}", c.file)))?;
    Ok((report, tables))
}

/// Analyses one capture (`files`: one file, or the files of one rotated capture).
fn one(files: &[PathBuf], opts: &Options, tables: bool) -> Result<Outcome, Failure> {
    if tables {
        let c = analyze_files(files, opts, &mut |_| {}).map_err(Failure::Capture)?;
        return outcome(&c);
    }
    // No tables: the CLI's own streamed JSON (flat memory whatever the capture holds).
    let (bytes, r) = analyzer::json_stream::capture_object(files, opts, &mut |_| {})
        .map_err(|e| Failure::Other(format!("writing the report: {e}")))?;
    r.map_err(Failure::Capture)?;
    String::from_utf8(bytes)
        .map(|s| (s, Vec::new()))
        .map_err(|e| Failure::Other(e.to_string()))
}

/// Runs `f`, a panic turned into `Failure::Panic` (never unwinding into Python).
fn guarded<T>(f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| Err(Failure::Panic(panic_message(&p))))
}

fn panic_message(p: &Box<dyn Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

/// The Python exception of a failure: `sctp_analyzer.CaptureError` (an `OSError` and a
/// `ValueError`, with `file` and `offset`) for a capture that cannot be read.
fn to_py(py: Python<'_>, f: Failure) -> PyErr {
    match f {
        Failure::Capture(e) => {
            let file = e.file.display().to_string();
            let made = py
                .import("sctp_analyzer")
                .and_then(|m| m.getattr("CaptureError"))
                .and_then(|cls| {
                    let reason = e.source.to_string();
                    cls.call1((e.to_string(), file, e.source.offset(), reason))
                });
            match made {
                Ok(err) => PyErr::from_value(err),
                Err(_) => PyValueError::new_err(e.to_string()),
            }
        }
        Failure::Other(msg) => PyOSError::new_err(msg),
        Failure::Panic(msg) => PyRuntimeError::new_err(format!(
            "sctp-analyzer internal error (a bug, please report it): {msg}"
        )),
    }
}

/// Analyses one capture made of `files` (several: one rotated capture, read in the order of
/// their first packets) with the GIL released; returns the report's JSON and the tables.
#[pyfunction]
#[pyo3(signature = (files, *, tcp, chunks, sctp_udp_ports, deadline_ms, tables))]
fn analyze(
    py: Python<'_>,
    files: Vec<PathBuf>,
    tcp: bool,
    chunks: bool,
    sctp_udp_ports: Vec<u16>,
    deadline_ms: Option<f64>,
    tables: bool,
) -> PyResult<Outcome> {
    let opts = options(
        tcp,
        chunks,
        &sctp_udp_ports,
        deadline_ms,
        tables,
        cores() > 1,
    );
    py.detach(|| guarded(|| one(&files, &opts, tables)))
        .map_err(|f| to_py(py, f))
}

/// The captures of `inputs` (files and folders) as `sctp-analyzer analyze` groups them:
/// `grouping` is "each" (each file a capture), "merge" (all one capture) or "rotated" (each
/// rotation one capture).
#[pyfunction]
fn captures(inputs: Vec<PathBuf>, grouping: &str) -> PyResult<Vec<Vec<PathBuf>>> {
    let g = match grouping {
        "each" => Grouping::EachFile,
        "merge" => Grouping::Merge,
        "rotated" => Grouping::Rotated,
        other => {
            return Err(PyValueError::new_err(format!(
                "grouping must be 'each', 'merge' or 'rotated', not {other:?}"
            )))
        }
    };
    Ok(analyzer::inputs::captures(&inputs, g))
}

/// Analyses several captures in parallel (`jobs` workers, one capture each), GIL released.
/// Each result is the capture's outcome or its exception (not raised: the others still count).
/// Returns a list of `(report_json, tables)` tuples and exception objects.
#[pyfunction]
#[pyo3(signature = (captures, *, tcp, chunks, sctp_udp_ports, deadline_ms, tables, jobs))]
#[allow(clippy::too_many_arguments)]
fn analyze_many(
    py: Python<'_>,
    captures: Vec<Vec<PathBuf>>,
    tcp: bool,
    chunks: bool,
    sctp_udp_ports: Vec<u16>,
    deadline_ms: Option<f64>,
    tables: bool,
    jobs: Option<usize>,
) -> PyResult<Vec<Py<PyAny>>> {
    let jobs = jobs.unwrap_or_else(cores).max(1);
    let opts = options(
        tcp,
        chunks,
        &sctp_udp_ports,
        deadline_ms,
        tables,
        jobs > captures.len(),
    );
    let results: Vec<Result<Outcome, Failure>> = py.detach(|| {
        worker_pool(jobs).install(|| {
            captures
                .par_iter()
                .map(|files| guarded(|| one(files, &opts, tables)))
                .collect()
        })
    });
    results
        .into_iter()
        .map(|r| match r {
            Ok(o) => Ok(o.into_pyobject(py)?.into_any().unbind()),
            Err(f) => Ok(to_py(py, f).into_value(py).into_any()),
        })
        .collect()
}

/// The report of a capture that could not be read, as the CLI's JSON writes it (JSON text).
#[pyfunction]
fn failed_report(file: &str, error: String) -> PyResult<String> {
    serde_json::to_string(&CaptureReport::failed(file, error))
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The partition value the CLI gives a capture in its hive-partitioned tables
/// (`capture=<value>`, `frames::partition_value`).
#[pyfunction]
fn partition_value(name: &str) -> String {
    analyzer::frames::partition_value(name)
}

/// Whether a folder's file is taken as a capture by its name (`inputs::is_capture_name`: what
/// the CLI takes from a folder).
#[pyfunction]
fn is_capture_name(name: &str) -> bool {
    analyzer::inputs::is_capture_name(std::path::Path::new(name))
}

/// The analyzer in Python: see the `sctp_analyzer` package.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(analyze_many, m)?)?;
    m.add_function(wrap_pyfunction!(captures, m)?)?;
    m.add_function(wrap_pyfunction!(failed_report, m)?)?;
    m.add_function(wrap_pyfunction!(partition_value, m)?)?;
    m.add_function(wrap_pyfunction!(is_capture_name, m)?)?;
    m.add_class::<ArrowTable>()?;
    m.add("REPORT_VERSION", analyzer::report::VERSION)?;
    m.add("UDP_PORT", analyzer::analyze::SCTP_UDP_PORT)?;
    Ok(())
}
