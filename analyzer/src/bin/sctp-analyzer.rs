//! `sctp-analyzer`: command-line front end of the analyzer library (thin: parse, run, print).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use analyzer::analyze::{analyze_files, udp_ports, worker_pool, CaptureAnalysis, Options};
use analyzer::frames::{self, TableFormat};
use analyzer::inputs::Grouping;
use analyzer::json_stream::{capture_object, JsonStream};
use analyzer::report::CaptureReport;
use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

// mimalloc (`analyzer::alloc`): faster at what the pass allocates than the system allocator.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: analyzer::alloc::MiMalloc = analyzer::alloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "sctp-analyzer",
    version,
    about = "SCTP trace analyzer: associations, paths, timers, failover"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Analyse one or more captures (pcap, pcapng, optionally gzip-compressed).
    Analyze(AnalyzeArgs),
    /// Compare SCTP associations and TCP connections of the same captures, metric by metric.
    Compare(CompareArgs),
    /// Aggregate the figures of folders of captures per group of parameters (n, mean, median,
    /// min, max, 95% confidence interval), e.g. failover time per SACK delay.
    Study(StudyArgs),
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum StudyFormat {
    Table,
    Json,
    Csv,
    Parquet,
}

#[derive(clap::Args)]
struct StudyArgs {
    /// Folders (searched recursively) and capture files.
    #[arg(required_unless_present = "list")]
    inputs: Vec<PathBuf>,
    /// A ready-made study (failover-vs-sack-delay, spurious-timeouts, sctp-vs-tcp-loss,
    /// link-failure, http-transfer); --by / --x / --y override its settings.
    #[arg(long)]
    template: Option<String>,
    /// Parameter grouping the rows (repeatable): from NAME_truth.json / NAME.meta.json /
    /// study.toml, else inferred (sack_delay_ms, rto_min_ms, message_interval_ms,
    /// path_delay_ms, loss_pct).
    #[arg(long)]
    by: Vec<String>,
    /// The x parameter (one row per value).
    #[arg(long)]
    x: Option<String>,
    /// Metric (repeatable; default: every metric, see --list).
    #[arg(long)]
    y: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: StudyFormat,
    /// Parquet output file (--format parquet).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Threads (default: one per core); one capture per thread.
    #[arg(long)]
    jobs: Option<usize>,
    /// Inter-arrival deadline in ms for the deadline_missed metric.
    #[arg(long)]
    deadline: Option<f64>,
    /// UDP port carrying SCTP (RFC 6951); repeatable. 9899 is always included.
    #[arg(long = "sctp-udp-port")]
    sctp_udp_ports: Vec<u16>,
    /// List the templates and metrics, then exit.
    #[arg(long)]
    list: bool,
    /// Store each capture's figures in DIR and reuse them while the capture and this
    /// executable are unchanged (sidecar parameters are read afresh).
    #[arg(long)]
    cache: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum CompareFormat {
    Text,
    Json,
    Csv,
}

#[derive(clap::Args)]
struct CompareArgs {
    /// Capture files.
    #[arg(required = true)]
    captures: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: CompareFormat,
    /// UDP port carrying SCTP (RFC 6951); repeatable. 9899 is always included.
    #[arg(long = "sctp-udp-port")]
    sctp_udp_ports: Vec<u16>,
    /// Never show a progress bar.
    #[arg(long)]
    no_progress: bool,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Format {
    Table,
    Json,
    Csv,
    Parquet,
}

#[derive(clap::Args)]
struct AnalyzeArgs {
    /// Capture files, or directories searched for capture files (*.pcap, *.pcapng, *.cap, .gz).
    #[arg(required = true)]
    captures: Vec<PathBuf>,
    /// Threads to use (default: one per core). Several captures are analysed in parallel, one
    /// per thread; a capture gets a second thread (reading and decoding ahead of the analysis)
    /// when there are more threads than captures.
    #[arg(long)]
    jobs: Option<usize>,
    /// Output format (default: table on a terminal, JSON otherwise).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Directory for csv/parquet output: one file per DataFrame.
    #[arg(long)]
    out: Option<PathBuf>,
    /// UDP port carrying SCTP (RFC 6951); repeatable. 9899 is always included.
    #[arg(long = "sctp-udp-port")]
    sctp_udp_ports: Vec<u16>,
    /// Keep one row per chunk (the `chunks` table). Default: on for csv/parquet.
    #[arg(long, overrides_with = "no_chunks")]
    chunks: bool,
    /// Do not keep per-chunk rows.
    #[arg(long)]
    no_chunks: bool,
    /// Inter-arrival deadline in ms for missed-deadline counts.
    #[arg(long)]
    deadline: Option<f64>,
    /// Never show a progress bar.
    #[arg(long)]
    no_progress: bool,
    /// Do not track TCP connections (SCTP only; TCP segments are still counted).
    #[arg(long)]
    no_tcp: bool,
    /// Read all the given files (and the capture files of the given folders) as one capture:
    /// a rotation (tcpdump -C / -G, dumpcap ring buffer) in the order of the files' first
    /// packets, frame numbers running on; a silence over 1 s at a file boundary is a capture
    /// gap, told and not inferred across.
    #[arg(long, conflicts_with = "rotated")]
    merge: bool,
    /// Like --merge, for each rotation among the files: files in one folder whose names differ
    /// only in digits (x.pcap, x.pcap1; ring_00001_2026...pcapng) are one capture.
    #[arg(long)]
    rotated: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Analyze(args) => run_analyze(args),
        Command::Compare(args) => run_compare(args),
        Command::Study(args) => run_study(args),
    }
}

fn run_study(args: StudyArgs) -> ExitCode {
    use analyzer::study;
    if args.list {
        println!("templates:");
        for (name, _) in study::TEMPLATES {
            let t = study::template(name).map(|t| t.about.unwrap_or_default());
            println!("  {name}: {}", t.unwrap_or_else(|e| e));
        }
        println!("metrics:");
        for (m, what) in study::METRICS {
            println!("  {m}: {what}");
        }
        return ExitCode::SUCCESS;
    }
    let mut spec = match &args.template {
        Some(t) => match study::template(t) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("sctp-analyzer: {e}");
                return ExitCode::from(2);
            }
        },
        None => study::StudySpec::default(),
    };
    if !args.by.is_empty() {
        spec.by = args.by.clone();
    }
    if args.x.is_some() {
        spec.x = args.x.clone();
    }
    if !args.y.is_empty() {
        spec.y = args.y.clone();
    }
    if let Some(bad) = spec
        .y
        .iter()
        .find(|y| !study::METRICS.iter().any(|m| m.0 == y.as_str()))
    {
        eprintln!("sctp-analyzer: unknown metric {bad:?} (see `study --list`)");
        return ExitCode::from(2);
    }
    if args.format == StudyFormat::Parquet && args.out.is_none() {
        eprintln!("sctp-analyzer: --format parquet needs --out FILE");
        return ExitCode::from(2);
    }
    let captures = analyzer::inputs::expand(&args.inputs);
    if captures.is_empty() {
        eprintln!("sctp-analyzer: no capture files under the inputs");
        return ExitCode::from(1);
    }
    let udp_ports = udp_ports(&args.sctp_udp_ports);
    let opts = Options {
        sctp_udp_ports: udp_ports,
        deadline_ms: args.deadline,
        ..Options::default()
    };
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    // Each capture is reduced to its samples at once (memory: one analysis per thread).
    let per_capture: Vec<Result<Vec<study::Sample>, String>> = worker_pool(jobs).install(|| {
        captures
            .par_iter()
            .map(|p| study::capture_samples(p, &opts, args.cache.as_deref()))
            .collect()
    });
    let mut failed = false;
    let mut samples = Vec::new();
    for r in per_capture {
        match r {
            Ok(s) => samples.extend(s),
            Err(e) => {
                eprintln!("sctp-analyzer: {e}");
                failed = true;
            }
        }
    }
    let report = study::aggregate(&spec, &samples);
    let mut out = std::io::stdout().lock();
    let res = match args.format {
        StudyFormat::Table => out
            .write_all(study::render_text(&report).as_bytes())
            .map_err(|e| e.to_string()),
        StudyFormat::Csv => out
            .write_all(study::render_csv(&report).as_bytes())
            .map_err(|e| e.to_string()),
        StudyFormat::Json => serde_json::to_writer(&mut out, &report)
            .map_err(|e| e.to_string())
            .and_then(|_| out.write_all(b"\n").map_err(|e| e.to_string())),
        StudyFormat::Parquet => {
            let path = args.out.as_deref().unwrap_or(Path::new("study.parquet"));
            frames::study(&report)
                .and_then(|mut df| frames::write_table(&mut df, path, TableFormat::Parquet))
                .map_err(|e| format!("{}: {e}", path.display()))
        }
    };
    exit_status(res, failed)
}

fn run_compare(args: CompareArgs) -> ExitCode {
    let udp_ports = udp_ports(&args.sctp_udp_ports);
    let opts = Options {
        sctp_udp_ports: udp_ports,
        ..Options::default()
    };
    let show_progress = !args.no_progress && std::io::stderr().is_terminal();
    let mut failed = false;
    let mut out = std::io::stdout().lock();
    let mut json = Vec::new();
    let mut tables = Vec::new();
    for path in &args.captures {
        let c = match analyze_one(std::slice::from_ref(path), &opts, show_progress) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("sctp-analyzer: {e}");
                failed = true;
                continue;
            }
        };
        let r = CaptureReport::from_analysis(&c);
        let res = match args.format {
            CompareFormat::Text => out
                .write_all(analyzer::compare::render_text(&r.file, &r.comparison).as_bytes())
                .map_err(|e| e.to_string()),
            CompareFormat::Json => {
                json.push(serde_json::json!({"file": r.file, "comparison": r.comparison}));
                Ok(())
            }
            CompareFormat::Csv => frames::capture_tables(&c)
                .map(|t| tables.push(t.into_iter().filter(|t| t.name == "comparison").collect()))
                .map_err(|e| e.to_string()),
        };
        if let Err(e) = res {
            eprintln!("sctp-analyzer: {}: {e}", path.display());
            failed = true;
        }
    }
    let res = match args.format {
        CompareFormat::Text => Ok(()),
        CompareFormat::Json => serde_json::to_writer(&mut out, &json)
            .map_err(|e| e.to_string())
            .and_then(|_| out.write_all(b"\n").map_err(|e| e.to_string())),
        CompareFormat::Csv => {
            drop(out);
            write_tables(tables, None, TableFormat::Csv)
        }
    };
    exit_status(res, failed)
}

fn run_analyze(args: AnalyzeArgs) -> ExitCode {
    let format = args.format.unwrap_or(if std::io::stdout().is_terminal() {
        Format::Table
    } else {
        Format::Json
    });
    if format == Format::Parquet && args.out.is_none() {
        eprintln!("sctp-analyzer: --format parquet needs --out DIR");
        return ExitCode::from(2);
    }
    let udp_ports = udp_ports(&args.sctp_udp_ports);
    let tables_wanted = matches!(format, Format::Csv | Format::Parquet);
    let opts = Options {
        sctp_udp_ports: udp_ports,
        keep_rows: tables_wanted,
        tcp: !args.no_tcp,
        keep_chunks: if args.no_chunks {
            false
        } else {
            args.chunks || tables_wanted
        },
        deadline_ms: args.deadline,
        ..Options::default()
    };
    let show_progress = !args.no_progress && std::io::stderr().is_terminal();
    // Each capture is one file, or the files of one rotation.
    let grouping = if args.merge {
        Grouping::Merge
    } else if args.rotated {
        Grouping::Rotated
    } else {
        Grouping::EachFile
    };
    let captures = analyzer::inputs::captures(&args.captures, grouping);
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let opts = Options {
        pipeline: jobs > captures.len(),
        ..opts
    };
    #[cfg(feature = "mimalloc")]
    analyzer::alloc::tune(captures.len() > 1);
    if format == Format::Json {
        return run_json(&captures, &opts, show_progress, jobs);
    }

    let mut failed = false;
    let mut reports = Vec::new();
    let mut tables: Vec<Vec<frames::Table>> = Vec::new();
    let mut table_names: Vec<String> = Vec::new();
    let analyses = analyze_all(&captures, &opts, show_progress, jobs);
    for analysis in analyses {
        match analysis {
            Ok(c) => {
                reports.push(CaptureReport::from_analysis(&c));
                if tables_wanted {
                    match frames::capture_tables(&c) {
                        Ok(t) => {
                            tables.push(t);
                            table_names.push(c.file.clone());
                        }
                        Err(e) => {
                            eprintln!("sctp-analyzer: {}: building tables: {e}", c.file);
                            failed = true;
                        }
                    }
                }
            }
            Err(e) => {
                eprintln!("sctp-analyzer: {e}");
                failed = true;
                reports.push(CaptureReport::failed(
                    &e.file.display().to_string(),
                    e.source.to_string(),
                ));
            }
        }
    }

    let result = match format {
        // Written as a stream by `run_json` before this point.
        Format::Json => Ok(()),
        Format::Table => {
            let mut out = std::io::stdout().lock();
            reports
                .iter()
                .try_for_each(|r| out.write_all(analyzer::text::render_capture(r).as_bytes()))
                .map_err(|e| e.to_string())
        }
        Format::Parquet if tables.len() > 1 => match args.out.as_deref() {
            Some(dir) => write_fleet(tables, &table_names, &reports, dir),
            None => Err("--format parquet needs --out DIR".to_string()),
        },
        Format::Csv | Format::Parquet => {
            let fmt = if format == Format::Csv {
                TableFormat::Csv
            } else {
                TableFormat::Parquet
            };
            write_tables(tables, args.out.as_deref(), fmt)
        }
    };
    exit_status(result, failed)
}

/// 0 when every capture was read and written, 1 otherwise (output errors are reported here).
fn exit_status(output: Result<(), String>, failed: bool) -> ExitCode {
    if let Err(e) = output {
        eprintln!("sctp-analyzer: {e}");
        return ExitCode::from(1);
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// JSON output, streamed: each association is written when it ends (flat memory).
/// Standard output without its line buffer: the JSON goes out in 64 KiB blocks through a
/// `BufWriter`, and stdout's own `LineWriter` would scan every block for a newline again.
fn unbuffered_stdout() -> Box<dyn std::io::Write> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Ok(fd) = std::io::stdout().as_fd().try_clone_to_owned() {
            return Box::new(std::fs::File::from(fd));
        }
    }
    Box::new(std::io::stdout())
}

fn run_json(
    captures: &[Vec<PathBuf>],
    opts: &Options,
    show_progress: bool,
    jobs: usize,
) -> ExitCode {
    let out = std::io::BufWriter::with_capacity(1 << 16, unbuffered_stdout());
    let mut failed = false;
    // Several captures in parallel: each capture object is built in memory, then written in
    // input order. One capture is streamed straight out (flat memory, its own reading thread).
    if jobs > 1 && captures.len() > 1 {
        let result = (|| -> std::io::Result<()> {
            let mut stream = JsonStream::begin(out)?;
            let bar = batch_bar(captures.len(), show_progress);
            // Bounded memory: at most `jobs * 16` capture objects wait, written in input order;
            // no worker waits for another's slow capture (no groups).
            analyzer::ordered::for_each_ordered(
                captures,
                jobs,
                jobs * 16,
                |p| {
                    let r = capture_object(p, opts, &mut |_| {});
                    if let Some(b) = &bar {
                        b.inc(1);
                    }
                    r
                },
                |o| {
                    let (bytes, outcome) = o?;
                    if let Err(e) = outcome {
                        eprintln!("sctp-analyzer: {e}");
                        failed = true;
                    }
                    stream.push_object(&bytes)
                },
            )?;
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            stream.finish().map(|_| ())
        })();
        return exit_status(result.map_err(|e| format!("writing output: {e}")), failed);
    }
    let result = (|| -> std::io::Result<()> {
        let mut stream = JsonStream::begin(out)?;
        for files in captures {
            let bar = progress_bar(files, show_progress);
            let mut progress = |n: u64| {
                if let Some(b) = &bar {
                    b.set_position(n);
                }
            };
            if let Err(e) = stream.capture(files, opts, &mut progress)? {
                eprintln!("sctp-analyzer: {e}");
                failed = true;
            }
            if let Some(b) = bar {
                b.finish_and_clear();
            }
        }
        stream.finish().map(|_| ())
    })();
    if let Err(e) = result {
        eprintln!("sctp-analyzer: writing output: {e}");
        return ExitCode::from(1);
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// One overall progress bar (captures done) for a batch, when stderr is a terminal.
fn batch_bar(n: usize, show_progress: bool) -> Option<ProgressBar> {
    (show_progress && n > 1).then(|| {
        let b = ProgressBar::new(n as u64);
        b.set_style(
            ProgressStyle::with_template("[{bar:40}] {pos}/{len} captures, eta {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    })
}

/// Analyses every capture, on `jobs` workers when more than one, results in input order.
fn analyze_all(
    captures: &[Vec<PathBuf>],
    opts: &Options,
    show_progress: bool,
    jobs: usize,
) -> Vec<Result<CaptureAnalysis, analyzer::analyze::AnalyzeError>> {
    if jobs <= 1 {
        return captures
            .iter()
            .map(|p| analyze_one(p, opts, show_progress))
            .collect();
    }
    let bar = batch_bar(captures.len(), show_progress);
    let out = worker_pool(jobs).install(|| {
        captures
            .par_iter()
            .map(|p| {
                let r = analyze_files(p, opts, &mut |_| {});
                if let Some(b) = &bar {
                    b.inc(1);
                }
                r
            })
            .collect()
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    out
}

/// A progress bar on stderr for large captures when stderr is a terminal.
fn progress_bar(files: &[PathBuf], show_progress: bool) -> Option<ProgressBar> {
    let size: u64 = files
        .iter()
        .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
        .sum();
    (show_progress && size > 32 << 20).then(|| {
        let b = ProgressBar::new(size);
        b.set_style(
            ProgressStyle::with_template(
                "{msg} [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let name = files.first().map(|p| p.display().to_string());
        b.set_message(match files.len() {
            1 => name.unwrap_or_default(),
            n => format!("{} (+{} files)", name.unwrap_or_default(), n - 1),
        });
        b
    })
}

fn analyze_one(
    files: &[PathBuf],
    opts: &Options,
    show_progress: bool,
) -> Result<CaptureAnalysis, analyzer::analyze::AnalyzeError> {
    let bar = progress_bar(files, show_progress);
    let mut progress = |n: u64| {
        if let Some(b) = &bar {
            b.set_position(n);
        }
    };
    let r = analyze_files(files, opts, &mut progress);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    r
}

/// Writes every table (all captures stacked, with a `capture` column) to `out`, or CSV to stdout.
/// Several captures as Parquet: hive-partitioned tables (`DIR/<table>/capture=<name>/part.parquet`)
/// plus one merged summary (`DIR/summary.json`, the JSON contract of every capture).
fn write_fleet(
    per_capture: Vec<Vec<frames::Table>>,
    names: &[String],
    reports: &[CaptureReport],
    dir: &Path,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (tables, name) in per_capture.into_iter().zip(names) {
        frames::write_partitioned(tables, name, dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let doc = analyzer::report::Report {
        version: analyzer::report::VERSION,
        captures: reports.to_vec(),
    };
    let path = dir.join("summary.json");
    let f = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::to_writer(std::io::BufWriter::new(f), &doc)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!(
        "wrote {} (hive-partitioned by capture) and {}",
        dir.display(),
        path.display()
    );
    Ok(())
}

fn write_tables(
    per_capture: Vec<Vec<frames::Table>>,
    out: Option<&Path>,
    fmt: TableFormat,
) -> Result<(), String> {
    let merged = frames::stack(per_capture).map_err(|e| e.to_string())?;
    match out {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            for mut t in merged {
                let p = dir.join(format!("{}.{}", t.name, fmt.extension()));
                frames::write_table(&mut t.df, &p, fmt)
                    .map_err(|e| format!("{}: {e}", p.display()))?;
                eprintln!("wrote {} ({} rows)", p.display(), t.df.height());
            }
            Ok(())
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            for mut t in merged {
                writeln!(stdout, "# table: {}", t.name).map_err(|e| e.to_string())?;
                frames::write_csv_to(&mut t.df, &mut stdout).map_err(|e| e.to_string())?;
            }
            Ok(())
        }
    }
}
