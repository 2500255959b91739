//! The single streaming pass over one capture: frames -> IP -> SCTP chunks -> association tracker
//! and inference (and TCP segments to the TCP tracker), then the finished `CaptureAnalysis`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use crate::assoc::accounting::CaptureAccounting;
use crate::assoc::{Association, TrackerLimits};
use crate::capture::rotation::{self, Rotation};
use crate::capture::{CaptureError, CaptureFormat, CaptureReader};
use crate::chunk_rows::ChunkRows;
use crate::report::AssocReport;
use crate::stage::{Batch, Stage};
use crate::tcp::TcpFlowReport;

mod pass;
use pass::{ended_report, Out, Pass};

/// RFC 6951 5.1: the IANA-registered UDP port for SCTP over UDP.
pub const SCTP_UDP_PORT: u16 = 9899;

/// The UDP ports that carry SCTP: 9899 (`SCTP_UDP_PORT`, always decoded), then `extra`.
pub fn udp_ports(extra: &[u16]) -> Vec<u16> {
    let mut ports = vec![SCTP_UDP_PORT];
    ports.extend_from_slice(extra);
    ports
}

/// A pool of `jobs` workers for a batch of captures, one capture per worker (the CLI's `--jobs`,
/// the Python package's `analyze_many`); the global pool's size when it cannot be had.
pub fn worker_pool(jobs: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .unwrap_or_else(|_| {
            rayon::ThreadPoolBuilder::new()
                .build()
                .expect("a thread pool")
        })
}

/// Batches read ahead of the analysis when pipelined (each up to 4096 packets or 320 KiB).
const PIPELINE_DEPTH: usize = 2;

/// Batches analysed between two progress hand-overs to the emitting thread when no association
/// ended (each hand-over wakes that thread).
const HANDOVER_BATCHES: usize = 16;

/// What to analyse and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// UDP ports that carry SCTP (RFC 6951).
    pub sctp_udp_ports: Vec<u16>,
    /// Keep one row per chunk (memory grows with the capture).
    pub keep_chunks: bool,
    /// Keep per-event rows (RTT samples, messages, SACK-delay samples) of associations that
    /// ended, for the DataFrames; off, an ended association keeps only its summary.
    pub keep_rows: bool,
    /// Inter-arrival deadline for missed-deadline counting, in ms.
    pub deadline_ms: Option<f64>,
    pub limits: TrackerLimits,
    /// Track TCP connections too (off: TCP segments are only counted).
    pub tcp: bool,
    /// Read and decode on a second thread while this one analyses (same output; off for
    /// batches that already keep every core busy with one capture each).
    pub pipeline: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            sctp_udp_ports: vec![SCTP_UDP_PORT],
            keep_chunks: false,
            keep_rows: true,
            tcp: true,
            pipeline: true,
            deadline_ms: None,
            limits: TrackerLimits::default(),
        }
    }
}

/// A capture that could not be read at all, naming the file.
#[derive(Debug)]
pub struct AnalyzeError {
    pub file: PathBuf,
    pub source: CaptureError,
}

impl fmt::Display for AnalyzeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.source)
    }
}

impl std::error::Error for AnalyzeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Everything one pass learnt from one capture.
#[derive(Debug)]
pub struct CaptureAnalysis {
    /// Associations already handed to a streaming sink (not in `associations`).
    pub emitted: u64,
    /// TCP connections already handed to a streaming sink (not in `tcp_flows`).
    pub emitted_tcp: u64,
    pub file: String,
    pub format: CaptureFormat,
    /// How the capture file was compressed (gzip, zstd, LZ4), if it was.
    pub compression: Option<crate::capture::Compression>,
    pub packets: u64,
    pub sctp_packets: u64,
    pub tcp_packets: u64,
    pub bad_checksums: u64,
    pub warnings: Vec<String>,
    /// Timestamp of the first frame: every `*_s` figure is relative to it.
    pub first_ns: Option<i64>,
    pub last_ns: Option<i64>,
    pub associations: Vec<Association>,
    pub chunks: Option<ChunkRows>,
    /// TCP connections, for the SCTP-vs-TCP comparison.
    pub tcp_flows: Vec<crate::tcp::TcpFlow>,
    /// Duplicates, unassociated packets, checksum verdict, association ends.
    pub accounting: CaptureAccounting,
    /// The files of a rotated capture, in reading order (empty for one file).
    pub files: Vec<crate::capture::rotation::MemberFile>,
    /// Capture gaps at the file boundaries of a rotated capture.
    pub gaps: Vec<crate::capture::rotation::Gap>,
}

impl CaptureAnalysis {
    /// Seconds since the capture's first frame.
    pub fn rel_s(&self, ts_ns: i64) -> f64 {
        self.time_base().rel_s(ts_ns)
    }

    pub fn time_base(&self) -> TimeBase {
        TimeBase {
            first_ns: self.first_ns,
        }
    }
}

pub use crate::packet::TimeBase;
pub use crate::pass_sink::{PassProgress, RowSink, CHUNK_BATCH};

/// Opens and analyses one capture file.
pub fn analyze_file(
    path: &Path,
    opts: &Options,
    progress: &mut dyn FnMut(u64),
) -> Result<CaptureAnalysis, AnalyzeError> {
    analyze_files(&[path.to_path_buf()], opts, progress)
}

/// Opens and analyses one capture made of `files`: one file as it is, several as one rotated
/// capture (`capture::rotation`: in the order of their first packet, frame numbers running on,
/// gaps at file boundaries told and not inferred across).
pub fn analyze_files(
    files: &[PathBuf],
    opts: &Options,
    progress: &mut dyn FnMut(u64),
) -> Result<CaptureAnalysis, AnalyzeError> {
    run_files(files, opts, progress, Emit::None)
}

/// Opens the files of one capture (`open_files`) and runs the pass over them.
fn run_files(
    files: &[PathBuf],
    opts: &Options,
    progress: &mut dyn FnMut(u64),
    emit: Emit<'_>,
) -> Result<CaptureAnalysis, AnalyzeError> {
    let (name, reader, rotation) = open_files(files)?;
    Ok(run(
        &name,
        (reader, rotation),
        opts,
        &mut |p: PassProgress| progress(p.bytes),
        emit,
    ))
}

/// Opens the files of one capture: the first readable one by first packet, and the rotation of
/// the others (None for one file). The capture is named after the file read first.
fn open_files(
    files: &[PathBuf],
) -> Result<(String, CaptureReader, Option<Rotation>), AnalyzeError> {
    let err = |file: &Path, source| AnalyzeError {
        file: file.to_path_buf(),
        source,
    };
    if let [path] = files {
        let reader = CaptureReader::open(path).map_err(|e| err(path, e))?;
        return Ok((path.display().to_string(), reader, None));
    }
    let Some(first_path) = files.first() else {
        return Err(err(
            Path::new(""),
            crate::capture::CaptureError::Io {
                offset: 0,
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no capture file given"),
            },
        ));
    };
    let mut ordered: std::collections::VecDeque<_> = rotation::order_by_first_packet(files)
        .map_err(|(p, e)| err(&p, e))?
        .into();
    let mut skipped = Vec::new();
    while let Some((path, first_ns)) = ordered.pop_front() {
        match CaptureReader::open(&path) {
            Ok(reader) => {
                let mut rot = Rotation::new(&path, first_ns, ordered.into());
                rot.warnings.extend(skipped);
                return Ok((path.display().to_string(), reader, Some(rot)));
            }
            Err(e) => skipped.push(format!(
                "{}: {e}: file skipped, the others read",
                path.display()
            )),
        }
    }
    Err(err(
        first_path,
        crate::capture::CaptureError::Io {
            offset: 0,
            source: std::io::Error::other("no file of the rotated capture could be opened"),
        },
    ))
}

/// Analyses an opened capture. Never fails: problems past the header become warnings.
pub fn analyze_reader(
    name: &str,
    reader: CaptureReader,
    opts: &Options,
    progress: &mut dyn FnMut(u64),
) -> CaptureAnalysis {
    analyze_reader_streaming(name, reader, opts, progress, None)
}

/// What a streaming pass hands on before its end.
#[derive(Debug)]
pub enum Ended {
    /// An association that ended (SHUTDOWN-COMPLETE or ABORT).
    Assoc(AssocReport),
    /// A TCP connection retired (over and silent, `tcp::RETIRE_NS`; only without rows).
    Tcp(TcpFlowReport),
}

/// Where a streaming pass sends what ended before the end of the capture.
enum Emit<'a> {
    None,
    Reports(&'a mut dyn FnMut(Ended)),
    Rows(&'a mut dyn RowSink),
}

/// A pass that hands every association to `sink` as it ends (with its rows, for tables) and
/// the chunk rows in batches (see `RowSink`): memory holds only what is open, one chunk batch
/// and the ended associations held for their late packets. The returned analysis holds the
/// rest (open associations and connections, the last chunk rows, the capture's counters).
pub fn analyze_reader_rows(
    name: &str,
    reader: CaptureReader,
    opts: &Options,
    sink: &mut dyn RowSink,
) -> CaptureAnalysis {
    run(name, (reader, None), opts, &mut |_| {}, Emit::Rows(sink))
}

/// `analyze_reader_streaming` with progress in packets and associations as well as bytes.
pub fn analyze_reader_progress(
    name: &str,
    reader: CaptureReader,
    opts: &Options,
    progress: &mut dyn FnMut(PassProgress),
    emit: &mut dyn FnMut(Ended),
) -> CaptureAnalysis {
    run(name, (reader, None), opts, progress, Emit::Reports(emit))
}

/// Opens and analyses one capture, handing each association to `emit` as soon as it ends
/// (SHUTDOWN-COMPLETE or ABORT), and each TCP connection once it is retired, and dropping them:
/// memory then stays flat however many associations and connections a capture holds. The
/// returned analysis holds the associations and connections still open at the end; the emitted
/// associations are counted in `emitted`, the connections in `emitted_tcp`.
pub fn analyze_file_streaming(
    path: &Path,
    opts: &Options,
    progress: &mut dyn FnMut(u64),
    emit: &mut dyn FnMut(Ended),
) -> Result<CaptureAnalysis, AnalyzeError> {
    analyze_files_streaming(&[path.to_path_buf()], opts, progress, emit)
}

/// `analyze_file_streaming` for one capture made of `files` (see `analyze_files`).
pub fn analyze_files_streaming(
    files: &[PathBuf],
    opts: &Options,
    progress: &mut dyn FnMut(u64),
    emit: &mut dyn FnMut(Ended),
) -> Result<CaptureAnalysis, AnalyzeError> {
    run_files(files, opts, progress, Emit::Reports(emit))
}

/// `analyze_reader`, with ended associations handed to `emit` (see `analyze_file_streaming`).
///
/// With `opts.pipeline` the pass runs on three threads, each a stage of one stream in capture
/// order: reading and decoding (`stage`), then the analysis, then (on the calling thread)
/// summarising and emitting the associations that ended, and progress. The output is the same
/// as with one thread.
pub fn analyze_reader_streaming(
    name: &str,
    reader: CaptureReader,
    opts: &Options,
    progress: &mut dyn FnMut(u64),
    emit: Option<&mut dyn FnMut(Ended)>,
) -> CaptureAnalysis {
    let emit = match emit {
        Some(e) => Emit::Reports(e),
        None => Emit::None,
    };
    run(
        name,
        (reader, None),
        opts,
        &mut |p: PassProgress| progress(p.bytes),
        emit,
    )
}

/// The pass behind every entry point above.
fn run(
    name: &str,
    (reader, rotation): (CaptureReader, Option<Rotation>),
    opts: &Options,
    progress: &mut dyn FnMut(PassProgress),
    mut emit: Emit<'_>,
) -> CaptureAnalysis {
    let rows = matches!(emit, Emit::Rows(_));
    let mut pass = Pass::new(opts, !matches!(emit, Emit::None));
    pass.stream_chunks = rows;
    let mut stage = Stage::new(reader, opts.sctp_udp_ports.clone(), opts.tcp, opts.pipeline)
        .with_rotation(rotation);
    let mut out = |o: Out| match (o, &mut emit) {
        (Out::Ended(first_ns, assoc), Emit::Reports(emit)) => {
            emit(Ended::Assoc(ended_report(assoc, first_ns, opts.keep_rows)));
        }
        (Out::Ended(first_ns, mut assoc), Emit::Rows(sink)) => {
            assoc.timer_model_from_stack();
            assoc.infer.finish_ended(opts.keep_rows);
            sink.association(TimeBase { first_ns }, assoc);
        }
        (Out::TcpRetired(first_ns, flow), Emit::Reports(emit)) => {
            emit(Ended::Tcp(TcpFlowReport::new(TimeBase { first_ns }, &flow)));
        }
        (Out::TcpRetired(first_ns, flow), Emit::Rows(sink)) => {
            sink.tcp_flow(TimeBase { first_ns }, flow);
        }
        (Out::Chunks(first_ns, rows), Emit::Rows(sink)) => {
            sink.chunks(TimeBase { first_ns }, *rows);
        }
        (Out::Progress(p), Emit::Rows(sink)) => {
            sink.progress(p);
            progress(p);
        }
        (Out::Progress(p), _) => progress(p),
        (Out::Ended(..) | Out::TcpRetired(..) | Out::Chunks(..), _) => {}
    };
    let (pass, end) = if opts.pipeline {
        std::thread::scope(|s| {
            let (full_tx, full_rx) = mpsc::sync_channel::<Batch>(PIPELINE_DEPTH);
            let (empty_tx, empty_rx) = mpsc::channel::<Batch>();
            let (out_tx, out_rx) = mpsc::sync_channel::<Vec<Out>>(PIPELINE_DEPTH);
            // Named threads (profilers and debuggers show them by name).
            let spawn = |name: &str| std::thread::Builder::new().name(name.into());
            let reading = spawn("capture-read")
                .spawn_scoped(s, move || {
                    loop {
                        let mut b = empty_rx.try_recv().unwrap_or_default();
                        let more = stage.fill(&mut b);
                        if full_tx.send(b).is_err() || !more {
                            break;
                        }
                    }
                    stage.finish()
                })
                .expect("the system could not start a thread");
            let analysing = spawn("capture-analyse")
                .spawn_scoped(s, move || {
                    let (mut held, mut bytes) = (0, 0);
                    for mut b in full_rx {
                        pass.batch(&mut b);
                        bytes = b.input_bytes;
                        // The reader may have finished already: then the batch is simply dropped.
                        let _ = empty_tx.send(b);
                        // Each hand-over wakes the emitting thread: progress alone waits for a
                        // few batches, ended associations go at once.
                        held += 1;
                        if held < HANDOVER_BATCHES && !pass.handover_due() {
                            continue;
                        }
                        held = 0;
                        if out_tx.send(pass.drain(bytes).collect()).is_err() {
                            return pass;
                        }
                    }
                    pass.release_all();
                    if held > 0 || !pass.out.is_empty() {
                        let _ = out_tx.send(pass.drain(bytes).collect());
                    }
                    pass
                })
                .expect("the system could not start a thread");
            for outs in out_rx {
                outs.into_iter().for_each(&mut out);
            }
            let pass = analysing.join();
            let end = reading.join();
            match (pass, end) {
                (Ok(p), Ok(e)) => (p, e),
                (Err(panic), _) | (_, Err(panic)) => std::panic::resume_unwind(panic),
            }
        })
    } else {
        let mut b = Batch::default();
        loop {
            let more = stage.fill(&mut b);
            pass.batch(&mut b);
            for o in pass.drain(b.input_bytes) {
                out(o);
            }
            if !more {
                pass.release_all();
                for o in pass.drain(b.input_bytes) {
                    out(o);
                }
                break;
            }
        }
        (pass, stage.finish())
    };
    let (mut pass, mut end) = (pass, end);
    let mut warnings = std::mem::take(&mut end.warnings);
    if let Some(w) = pass.tracker.limit_warning.take() {
        pass.warnings.push(|| w);
    }
    if let Some(w) = pass.tracker.unpaired_warning.take() {
        pass.warnings.push(|| w);
    }
    // Fragment trouble is counted per frame, told once: overlaps (RFC 791 3.2: IPv4 keeps the
    // first data; RFC 5722: IPv6 drops the datagram) and datagrams never completed.
    let ns = end.net.stats().clone();
    if ns.frag_overlaps > 0 {
        let n = ns.frag_overlaps;
        pass.warnings.push(|| {
            format!("{n} IP fragments overlapped earlier ones (IPv4: first data kept; IPv6: datagram dropped, RFC 5722)")
        });
    }
    // Tunnelled traffic (a mirror's VXLAN / GENEVE / ERSPAN, GRE, IP in IP, MPLS): analysed by
    // the packets inside, told once.
    let tunnelled: Vec<String> = crate::net::tunnel::Kind::ALL
        .iter()
        .zip(ns.tunnels)
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{n} {}", k.name()))
        .chain((ns.mpls > 0).then(|| format!("{} under MPLS labels", ns.mpls)))
        .collect();
    if !tunnelled.is_empty() {
        let list = tunnelled.join(", ");
        // The tunnels themselves, the busiest first (a mirror session, a VNI, a GRE key).
        let mut sessions = ns.sessions;
        sessions.sort_by_key(|s| std::cmp::Reverse(s.packets));
        let shown: Vec<String> = sessions.iter().take(4).map(|s| s.describe()).collect();
        let more = match sessions.len().saturating_sub(4) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        let which = if shown.is_empty() {
            String::new()
        } else {
            format!("; {}{more}", shown.join(", "))
        };
        pass.warnings.push(|| {
            format!("packets taken out of tunnels ({list}{which}): analysed as the packets inside (their addresses, hop limits and lengths; the outer headers are not analysed)")
        });
    }
    // What the reading stage saw beside the packets: encrypted traffic that may carry SCTP
    // (DTLS, IPsec ESP), timestamps that step back, NFLOG frames and their times.
    for w in end
        .encrypted
        .warnings()
        .into_iter()
        .chain(end.order.warning())
        .chain(end.nflog.warnings())
    {
        pass.warnings.push(|| w);
    }
    let pending = end.net.pending_fragments() as u64;
    let incomplete = ns.reassembly_timeouts + ns.reassembly_evictions + pending;
    if incomplete > 0 {
        let (timed_out, evicted) = (ns.reassembly_timeouts, ns.reassembly_evictions);
        pass.warnings.push(|| {
            format!("{incomplete} fragmented IP datagrams never completed ({timed_out} timed out after 30 s, {evicted} evicted at the bound of 1024 pending, {pending} pending at the end)")
        });
    }
    let tcp = pass.tcp.finish();
    for w in tcp.warnings {
        pass.warnings.push(|| w);
    }
    let mut associations = pass.tracker.into_associations();
    for a in &mut associations {
        a.timer_model_from_stack();
        a.infer.finish();
        match end.last_ns {
            Some(t) => a.lifecycle.finish_at(t),
            None => a.lifecycle.finish(),
        }
        pass.acct.association_done(a);
    }
    for w in pass.acct.warnings() {
        pass.warnings.push(|| w);
    }
    warnings.extend(pass.warnings.finish());
    CaptureAnalysis {
        file: name.to_string(),
        format: end.reader.format(),
        compression: end.reader.compression(),
        packets: end.frames,
        sctp_packets: pass.sctp_packets,
        tcp_packets: end.tcp_packets,
        bad_checksums: pass.bad_checksums,
        warnings,
        first_ns: end.first_ns,
        last_ns: end.last_ns,
        associations,
        chunks: pass.chunks,
        tcp_flows: tcp.flows,
        emitted: pass.emitted,
        emitted_tcp: pass.emitted_tcp,
        accounting: pass.acct,
        files: end.members,
        gaps: pass.gaps,
    }
}
