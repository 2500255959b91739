//! The single streaming pass over one capture: frames -> IP -> SCTP chunks -> association tracker
//! and inference (and TCP segments to the TCP tracker), then the finished `CaptureAnalysis`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use std::collections::VecDeque;

use crate::assoc::accounting::{chunk_types, CaptureAccounting, DupKey, FirstCopy};
use crate::assoc::{Association, Classified, PacketCtx, Tracker, TrackerLimits};
use crate::capture::rotation::{self, Gap, Rotation};
use crate::capture::{CaptureError, CaptureFormat, CaptureReader};
use crate::chunk_rows::ChunkRows;
use crate::report::AssocReport;
use crate::sctp::{self, SctpPacket};
use crate::stage::{Batch, Item, ItemKind, Stage};
use crate::tcp::TcpFlowReport;

/// RFC 6951 5.1: the IANA-registered UDP port for SCTP over UDP.
pub const SCTP_UDP_PORT: u16 = 9899;

/// Batches read ahead of the analysis when pipelined (each up to 4096 packets or 320 KiB).
const PIPELINE_DEPTH: usize = 2;

/// Batches analysed between two progress hand-overs to the emitting thread when no association
/// ended (each hand-over wakes that thread).
const HANDOVER_BATCHES: usize = 16;

/// Retired TCP connections held before a hand-over (each is small; handing them on one by one
/// woke the emitting thread thousands of times a second on TCP-heavy captures).
const HANDOVER_TCP: usize = 16;

/// Warnings kept per capture; further ones are only counted.
const MAX_WARNINGS: usize = 50;

/// An association that ended stays with the tracker this long (capture time) before it is
/// handed on, so that its late packets (a repeated ABORT or SHUTDOWN-COMPLETE, late SACKs) are
/// counted with it: RFC 9260 9.2, the T5-shutdown-guard timer, 5 x RTO.Max (5 x 60 s).
const HOLD_ENDED_NS: i64 = 300_000_000_000;
/// Ended associations held at most (the oldest is handed on earlier): each keeps its detail
/// until it is summarised, so memory stays bounded.
const MAX_HELD: usize = 8;

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
    pub gzip: bool,
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

/// Collects warnings up to a bound, counting the rest.
#[derive(Debug, Default)]
struct Warnings {
    list: Vec<String>,
    suppressed: u64,
}

impl Warnings {
    fn push(&mut self, w: impl FnOnce() -> String) {
        if self.list.len() < MAX_WARNINGS {
            self.list.push(w());
        } else {
            self.suppressed += 1;
        }
    }

    fn finish(mut self) -> Vec<String> {
        if self.suppressed > 0 {
            self.list
                .push(format!("{} more warnings not shown", self.suppressed));
        }
        self.list
    }
}

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
    let (name, reader, rotation) = open_files(files)?;
    Ok(run(
        &name,
        (reader, rotation),
        opts,
        &mut |p: PassProgress| progress(p.bytes),
        Emit::None,
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
    let (name, reader, rotation) = open_files(files)?;
    Ok(run(
        &name,
        (reader, rotation),
        opts,
        &mut |p: PassProgress| progress(p.bytes),
        Emit::Reports(emit),
    ))
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
        gzip: end.reader.gzip(),
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

/// What the analysis hands on to the emitting stage, in capture order.
enum Out {
    /// An association that ended (SHUTDOWN-COMPLETE or ABORT), with the capture's time base.
    Ended(Option<i64>, Box<Association>),
    /// A TCP connection retired, with the capture's time base.
    TcpRetired(Option<i64>, Box<crate::tcp::TcpFlow>),
    /// How far the pass is.
    Progress(PassProgress),
    /// Chunk rows of the packets analysed since the last hand-over (`RowSink` passes only).
    Chunks(Option<i64>, Box<ChunkRows>),
}

/// The report of an association that ended (`AssocInfer::finish_ended`, as `Pass::chunk` does
/// for associations that stay in the tracker).
fn ended_report(
    mut assoc: Box<Association>,
    first_ns: Option<i64>,
    keep_rows: bool,
) -> AssocReport {
    assoc.timer_model_from_stack();
    assoc.infer.finish_ended(keep_rows);
    AssocReport::new(TimeBase { first_ns }, &assoc)
}

/// State of the pass over one capture.
struct Pass<'o> {
    opts: &'o Options,
    /// Streaming mode: associations are handed on (`Out::Ended`) as they end.
    streaming: bool,
    /// An association that ended in the current packet, retired once the packet is done.
    ended: Option<u32>,
    /// Ended associations still with the tracker (end time, id), oldest first (`HOLD_ENDED_NS`).
    held: VecDeque<(i64, u32)>,
    acct: CaptureAccounting,
    /// Retired associations and progress not yet handed on (see `drain`).
    out: Vec<Out>,
    emitted: u64,
    emitted_tcp: u64,
    tracker: Tracker,
    tcp: crate::tcp::TcpTracker,
    chunks: Option<ChunkRows>,
    /// Hand the chunk rows on in batches (`Out::Chunks`) instead of keeping them all.
    stream_chunks: bool,
    warnings: Warnings,
    /// Timestamp of the capture's first frame (the time base of emitted reports).
    first_ns: Option<i64>,
    sctp_packets: u64,
    bad_checksums: u64,
    /// SCTP and TCP packets analysed (progress).
    packets: u64,
    /// Capture gaps met (rotated captures), and the end of the latest one.
    gaps: Vec<Gap>,
    gap_end_ns: i64,
}

impl<'o> Pass<'o> {
    fn new(opts: &'o Options, streaming: bool) -> Self {
        Pass {
            opts,
            streaming,
            ended: None,
            held: VecDeque::new(),
            acct: CaptureAccounting::default(),
            out: Vec::new(),
            emitted: 0,
            emitted_tcp: 0,
            tracker: {
                let mut t = Tracker::new(opts.limits);
                t.skip_table_rows = !opts.keep_rows;
                t.release_ended = streaming;
                t
            },
            tcp: {
                let mut t = crate::tcp::TcpTracker::new();
                t.keep_rows = opts.keep_rows;
                t
            },
            chunks: opts.keep_chunks.then(ChunkRows::default),
            stream_chunks: false,
            warnings: Warnings::default(),
            first_ns: None,
            sctp_packets: 0,
            bad_checksums: 0,
            packets: 0,
            gaps: Vec::new(),
            gap_end_ns: i64::MIN,
        }
    }

    /// Analyses a batch of packets from `stage`, in order, with the warnings met between them.
    fn batch(&mut self, b: &mut Batch) {
        if self.first_ns.is_none() {
            self.first_ns = b.first_ns;
        }
        self.packets += b.items.len() as u64;
        let mut warnings = std::mem::take(&mut b.warnings).into_iter().peekable();
        let mut gaps = b.gaps.iter().peekable();
        // Index of the item before which the next warning or capture gap was met (one
        // comparison per item).
        let next_mark = |w: Option<&(usize, String)>, g: Option<&&(usize, Gap)>| {
            w.map_or(usize::MAX, |w| w.0)
                .min(g.map_or(usize::MAX, |g| g.0))
        };
        let mut next = next_mark(warnings.peek(), gaps.peek());
        for (i, item) in b.items.iter().enumerate() {
            if i >= next {
                while let Some((_, w)) = warnings.next_if(|(at, _)| *at <= i) {
                    self.warnings.push(|| w);
                }
                while let Some((_, g)) = gaps.next_if(|(at, _)| *at <= i) {
                    self.gap(*g);
                }
                next = next_mark(warnings.peek(), gaps.peek());
            }
            match item.kind {
                ItemKind::Sctp { .. } => self.sctp_packet(item, &b.arena),
                ItemKind::Tcp => {
                    let (src, dst, bytes) = item.raw(&b.arena);
                    let addrs = crate::tcp::RawAddrs { src, dst };
                    self.tcp.segment_raw(
                        item.frame,
                        item.ts_ns,
                        addrs,
                        bytes,
                        item.missing as usize,
                    );
                    if self.streaming && self.tcp.has_retired() {
                        let first_ns = self.first_ns;
                        for f in self.tcp.take_retired() {
                            self.emitted_tcp += 1;
                            self.out.push(Out::TcpRetired(first_ns, Box::new(f)));
                        }
                    }
                }
            }
        }
        for (_, w) in warnings {
            self.warnings.push(|| w);
        }
        for (_, g) in gaps {
            self.gap(*g);
        }
    }

    /// A capture gap at a file boundary of a rotated capture: kept, and from here on no figure
    /// is measured across it (`PacketCtx::gap_end_ns`).
    #[cold]
    fn gap(&mut self, g: Gap) {
        self.gap_end_ns = g.end_ns;
        self.tcp.capture_gap(g.end_ns);
        self.gaps.push(g);
    }

    /// Whether what the pass holds should be handed on now rather than with the next progress:
    /// an ended association goes at once (holding them measured slower), retired TCP
    /// connections in groups.
    fn handover_due(&self) -> bool {
        self.out.len() >= HANDOVER_TCP
            || self.out.iter().any(|o| matches!(o, Out::Ended(..)))
            || (self.stream_chunks && self.chunks.as_ref().is_some_and(|c| c.len() >= CHUNK_BATCH))
    }

    /// What the pass hands on after a batch: retired associations, chunk rows (`RowSink`
    /// passes, once a batch is full), then progress.
    fn drain(&mut self, input_bytes: u64) -> std::vec::Drain<'_, Out> {
        if self.stream_chunks {
            if let Some(rows) = self.chunks.as_mut().filter(|c| c.len() >= CHUNK_BATCH) {
                let rows = std::mem::take(rows);
                self.out.push(Out::Chunks(self.first_ns, Box::new(rows)));
            }
        }
        self.out.push(Out::Progress(PassProgress {
            bytes: input_bytes,
            packets: self.packets,
            associations: self.tracker.created(),
        }));
        self.out.drain(..)
    }

    /// One SCTP packet (checksum already verified by `stage`).
    fn sctp_packet(&mut self, item: &Item, arena: &[u8]) {
        let (frame, ts_ns, offset) = (item.frame, item.ts_ns, item.offset);
        let (src, dst, bytes) = item.raw(arena);
        let missing = item.missing as usize;
        let pkt = match SctpPacket::new_checked(bytes) {
            Ok(p) => p,
            Err(e) => {
                self.warnings
                    .push(|| format!("frame {frame} (offset {offset}): SCTP common header: {e}"));
                return;
            }
        };
        self.sctp_packets += 1;
        let mut checksum_ok = item.checksum_ok;
        if checksum_ok == Some(false) && sctp::adler32::verify(bytes) {
            // RFC 2960 6.8: an old stack's Adler-32 (CRC32c since RFC 3309): valid.
            self.acct.checksums.adler32 += 1;
            checksum_ok = Some(true);
        }
        if checksum_ok == Some(false) {
            self.bad_checksums += 1;
            self.acct.checksums.bad += 1;
            if sctp::crc32c::stored(bytes) == Some(0) {
                self.acct.checksums.bad_zero += 1;
            }
        }
        let ctx = PacketCtx {
            frame,
            ts_ns,
            src: crate::net::ip_from_octets(src),
            dst: crate::net::ip_from_octets(dst),
            src_port: pkt.src_port(),
            dst_port: pkt.dst_port(),
            vtag: pkt.verification_tag(),
            checksum_ok,
            udp_encap: item.kind == (ItemKind::Sctp { udp: true }),
            ttl: item.ttl,
            len: bytes.len() as u32 + item.missing,
            gap_end_ns: self.gap_end_ns,
        };
        self.release_held(ts_ns);
        // A capture duplicate is counted, never analysed again (METRICS.md "Accounting").
        let key = DupKey::new(bytes, item.missing, checksum_ok, ctx.src, ctx.dst);
        let link = item.link_packet_type();
        let tracker = &self.tracker;
        if let Some(first) = self
            .acct
            .dups
            .find(&key, ts_ns, |a, s| tracker.peer_sent(a, s))
        {
            self.duplicate(first, link, &pkt, missing, bytes);
            return;
        }
        let mut iter = pkt.chunks(missing);
        let mut first_err = None;
        let first_view = match iter.next() {
            Some(Ok(v)) => Some(v),
            Some(Err(e)) => {
                self.warnings
                    .push(|| format!("frame {frame} (offset {offset}): {e}"));
                first_err = Some(e);
                None
            }
            None => None,
        };
        // Decoded once: the tracker classifies the packet by it, then the analysis reads it.
        let first_parsed = first_view.as_ref().map(|v| v.parse());
        let first_chunk = first_parsed.as_ref().and_then(|r| r.as_ref().ok());
        let classified = self.tracker.classify(&ctx, first_chunk);
        if let Some(old) = self.tracker.take_restarted() {
            self.end_association(old, ts_ns);
        }
        let (a, sender, path, ended) = match classified {
            Classified::Assoc {
                a,
                sender,
                path,
                ended,
            } => (a, sender, path, ended),
            Classified::Unassociated(why) => {
                let first = FirstCopy {
                    assoc: None,
                    peer_seen: 0,
                    link,
                };
                self.acct.dups.insert(key, ts_ns, first);
                if checksum_ok == Some(false) {
                    self.acct.checksums.unattributed += 1;
                }
                let u = &mut self.acct.unassociated;
                u.chunks.packet(pkt.chunks(missing), bytes);
                u.packet(frame, ctx.src, ctx.dst, (ctx.src_port, ctx.dst_port), why);
                return;
            }
        };
        let assoc = self.tracker.get_mut(a);
        let first = FirstCopy {
            assoc: Some((a, sender)),
            peer_seen: assoc.sent[1 - sender as usize],
            link,
        };
        self.acct.dups.insert(key, ts_ns, first);
        if ended {
            // After its end (until the T5 guard): counted with it, not analysed.
            let mut types = Vec::new();
            chunk_types(pkt.chunks(missing), bytes, |t, malformed| {
                if malformed {
                    assoc.count_malformed(t);
                } else if let Some(t) = t {
                    assoc.count_type(t);
                }
                types.extend(t);
            });
            assoc.lifecycle.after_end(&ctx, sender, &types);
            return;
        }
        let infer = &mut assoc.infer;
        if infer.deadline_ns.is_none() {
            infer.deadline_ns = self.opts.deadline_ms.map(|d| (d * 1e6) as i64);
        }
        infer.packet_start(&ctx, sender);
        if let Some(e) = first_err {
            self.malformed(a, bytes, &e);
        }
        if let (Some(v), Some(parsed)) = (&first_view, &first_parsed) {
            self.chunk(a, &ctx, sender, path, offset, v, parsed);
            for item in iter {
                match item {
                    Ok(v) => {
                        self.chunk(a, &ctx, sender, path, offset, &v, &v.parse());
                    }
                    Err(e) => {
                        self.warnings
                            .push(|| format!("frame {frame} (offset {offset}): {e}"));
                        self.malformed(a, bytes, &e);
                        break;
                    }
                }
            }
        }
        self.tracker.get_mut(a).infer.packet_end(&ctx, sender);
        if let Some(ended) = self.ended.take() {
            self.end_association(ended, ts_ns);
        }
    }

    /// A capture duplicate: counted for the capture and its first copy's association.
    fn duplicate(
        &mut self,
        first: FirstCopy,
        link: Option<u8>,
        pkt: &SctpPacket<&[u8]>,
        missing: usize,
        bytes: &[u8],
    ) {
        self.acct.duplicates += 1;
        self.acct.dups.note_link(first.link, link);
        self.acct
            .duplicate_chunks
            .packet(pkt.chunks(missing), bytes);
        if let Some(assoc) = first.assoc.and_then(|(a, _)| self.tracker.live_mut(a)) {
            assoc.duplicate_frames += 1;
        }
    }

    /// An association ended (SHUTDOWN-COMPLETE, ABORT, restart). Streaming, it is held for its
    /// late packets and handed on later (`release_held`); otherwise it is summarised now, so
    /// that its detail can go (bounded memory over long captures).
    fn end_association(&mut self, a: u32, now_ns: i64) {
        if self.streaming {
            self.held.push_back((now_ns, a));
            if self.held.len() > MAX_HELD {
                if let Some((_, old)) = self.held.pop_front() {
                    self.emit_ended(old, now_ns);
                }
            }
        } else {
            let assoc = self.tracker.get_mut(a);
            assoc.timer_model_from_stack();
            assoc.infer.finish_ended(self.opts.keep_rows);
        }
    }

    /// Hands on the held associations whose T5 guard has passed.
    #[inline]
    fn release_held(&mut self, now_ns: i64) {
        while let Some(&(at, a)) = self.held.front() {
            if now_ns.saturating_sub(at) <= HOLD_ENDED_NS {
                break;
            }
            self.held.pop_front();
            self.emit_ended(a, now_ns);
        }
    }

    /// At the capture's end: hands on every held association (streaming).
    fn release_all(&mut self) {
        while let Some((at, a)) = self.held.pop_front() {
            self.emit_ended(a, at);
        }
    }

    /// Retires an ended association: handed on whole, summarised by the receiving stage.
    fn emit_ended(&mut self, a: u32, now_ns: i64) {
        if let Some(mut assoc) = self.tracker.retire(a, now_ns) {
            assoc.lifecycle.finish();
            self.acct.association_done(&assoc);
            self.emitted += 1;
            self.out.push(Out::Ended(self.first_ns, assoc));
        }
    }

    /// A chunk whose header is present but whose length is impossible (RFC 9260 3.2): counted
    /// as tshark counts it (`accounting::chunk_types`); the walk of that packet ends there.
    fn malformed(&mut self, a: u32, bytes: &[u8], e: &sctp::ChunkError) {
        if let Some(ctype) = crate::assoc::accounting::malformed_type(e, bytes) {
            self.tracker.get_mut(a).count_malformed(ctype);
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn chunk(
        &mut self,
        a: u32,
        ctx: &PacketCtx,
        sender: u8,
        path: usize,
        offset: u64,
        view: &sctp::ChunkView<'_>,
        parsed: &Result<sctp::Chunk<'_>, sctp::ChunkError>,
    ) {
        // By reference: moving a decoded chunk out of its result copies it.
        let chunk = match parsed {
            Ok(c) => Some(c),
            Err(e) => {
                let frame = ctx.frame;
                self.warnings
                    .push(|| format!("frame {frame} (offset {offset}): {e}"));
                None
            }
        };
        if let Some(sctp::Chunk::Sack(s)) = chunk {
            // RFC 9260 3.3.4: a gap block's start is not above its end; inference skips one that is.
            if let Some(g) = s
                .gap_blocks()
                .chain(s.nr_gap_blocks())
                .find(|g| g.start > g.end)
            {
                let frame = ctx.frame;
                self.warnings.push(|| {
                    format!(
                        "frame {frame} (offset {offset}): SACK gap block start {} > end {} ignored",
                        g.start, g.end
                    )
                });
            }
        }
        self.tracker.chunk(a, ctx, sender, path, view, chunk);
        if chunk.is_none() {
            // An ABORT whose causes are malformed still ends the association.
            self.tracker
                .get_mut(a)
                .lifecycle
                .unparsed(ctx, sender, view);
        }
        if let Some(c) = chunk {
            let assoc = self.tracker.get_mut(a);
            assoc.infer.chunk(ctx, sender, view, c);
            assoc.lifecycle.chunk(ctx, sender, view, c);
            if let sctp::Chunk::Init(init) = c {
                assoc.stack.init(sender, ctx.vtag, view, init);
            }
            if crate::streams::Streams::wants(view.ctype) {
                assoc.streams.chunk(ctx, sender, view, c);
            }
            if crate::stalls::Stalls::wants(view.ctype) {
                assoc.stalls.chunk(ctx, sender, c);
            }
            if crate::hol::Hol::wants(view.ctype) {
                let epoch = assoc.streams.epoch(sender);
                assoc.hol.chunk(ctx, sender, c, epoch);
            }
        }
        if matches!(
            view.ctype,
            sctp::types::SHUTDOWN_COMPLETE | sctp::types::ABORT
        ) {
            // RFC 9260 9.2 / 9.1: the association is over (`end_association`).
            self.ended = Some(a);
        }
        if let Some(rows) = &mut self.chunks {
            rows.push(ctx, a, sender, view, chunk);
        }
    }
}
