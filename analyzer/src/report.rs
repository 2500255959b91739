//! The JSON contract (`--format json`, README "JSON contract"): serde types built from a
//! `CaptureAnalysis`. Later issues add fields, never rename these.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::analyze::{CaptureAnalysis, TimeBase};
use crate::assoc::Association;
use crate::lifecycle::LifecycleReport;
use crate::report_infer::{directions, path_infer, DirectionReport, PathInfer};
use crate::sctp::chunk_type_name;

/// Version of the JSON document layout.
pub const VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Report {
    pub version: u32,
    pub captures: Vec<CaptureReport>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CaptureReport {
    pub file: String,
    /// `pcap` or `pcapng`; null when the file could not be read.
    pub format: Option<String>,
    pub gzip: bool,
    /// `gzip`, `zstd` or `lz4` when the file was compressed (decompressed as it was read).
    #[serde(default)]
    pub compression: Option<String>,
    pub packets: u64,
    pub sctp_packets: u64,
    pub tcp_packets: u64,
    pub bad_checksums: u64,
    pub warnings: Vec<String>,
    /// Why the capture could not be read at all (then everything else is empty).
    pub error: Option<String>,
    /// Absolute time of the first frame (Unix seconds); every `*_s` is relative to it.
    pub start_epoch_s: Option<f64>,
    pub duration_s: f64,
    pub associations: Vec<AssocReport>,
    /// TCP connections (issue "TCP comparison").
    #[serde(default)]
    pub tcp_flows: Vec<crate::tcp::TcpFlowReport>,
    /// SCTP association and TCP flow directions side by side, same units.
    #[serde(default)]
    pub comparison: Vec<crate::compare::ComparisonRow>,
    /// Every SCTP packet accounted for once (issue "Real captures").
    #[serde(flatten)]
    pub accounting: AccountingReport,
    /// The files of a rotated capture read as one (`analyze --merge` / `--rotated`), in reading
    /// order; absent for a capture of one file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<crate::capture::rotation::MemberFile>,
}

/// Capture-level accounting: `sctp_packets` is the packets of the associations plus
/// `unassociated.packets` plus `duplicate_frames`; `chunk_totals` is the associations' chunks
/// plus the unassociated ones plus the duplicates' (what tshark counts over all frames).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct AccountingReport {
    #[serde(default)]
    pub duplicate_frames: u64,
    #[serde(default)]
    pub duplicate_chunks: BTreeMap<String, u64>,
    #[serde(default)]
    pub chunk_totals: BTreeMap<String, u64>,
    /// Chunks whose length field was below 4 or past the packet end, over all packets.
    #[serde(default)]
    pub malformed_chunks: u64,
    #[serde(default)]
    pub unassociated: UnassociatedReport,
    /// true: bad checksums are checksum offload at the capturing host; false: corruption; null:
    /// no bad checksum.
    #[serde(default)]
    pub checksum_offload: Option<bool>,
    #[serde(default)]
    pub checksum_evidence: Option<ChecksumEvidence>,
    /// Packets with a valid Adler-32 checksum (RFC 2960, before CRC32c): valid, not bad.
    #[serde(default)]
    pub adler32_checksums: u64,
    /// Associations by how they ended (`end.kind`).
    #[serde(default)]
    pub association_ends: BTreeMap<String, u64>,
    /// ABORT causes over the associations ended by ABORT (or whose handshake an ABORT failed).
    #[serde(default)]
    pub abort_causes: Vec<AbortCauseCount>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct UnassociatedReport {
    pub packets: u64,
    pub chunks: BTreeMap<String, u64>,
    /// Packets per reason (README "Accounting"): ootb_abort, ootb_shutdown_complete,
    /// ootb_shutdown_ack, bad_vtag, no_chunk, after_reported_end, limit.
    pub reasons: BTreeMap<String, u64>,
    /// "source -> destination" address pairs seen (at most 64).
    pub addresses: Vec<String>,
    /// [source port, destination port] pairs seen (at most 64).
    pub ports: Vec<[u16; 2]>,
    pub first_frame: Option<u64>,
    pub last_frame: Option<u64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ChecksumEvidence {
    pub bad: u64,
    /// Share of the bad checksums whose field is 0.
    pub zero_share: f64,
    /// Associations whose bad checksums all came from one endpoint (all of its packets) while
    /// the peer's were valid, and the others.
    pub one_sided_associations: u64,
    pub mixed_associations: u64,
    /// Addresses of the endpoints whose packets were all bad.
    pub bad_side: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AbortCauseCount {
    pub code: u16,
    pub name: String,
    pub associations: u64,
}

fn tally_map(counts: &[(u8, u64)]) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for &(t, n) in counts {
        *m.entry(chunk_type_name(t).into_owned()).or_insert(0) += n;
    }
    m
}

impl AccountingReport {
    pub fn new(a: &crate::assoc::accounting::CaptureAccounting) -> Self {
        let u = &a.unassociated;
        let mut totals = a.assoc_chunks.clone();
        for t in [&u.chunks, &a.duplicate_chunks] {
            for &(k, n) in &t.counts {
                totals.add_n(k, n);
            }
            totals.malformed += t.malformed;
        }
        let c = &a.checksums;
        AccountingReport {
            duplicate_frames: a.duplicates,
            duplicate_chunks: tally_map(&a.duplicate_chunks.counts),
            chunk_totals: tally_map(&totals.counts),
            malformed_chunks: totals.malformed,
            unassociated: UnassociatedReport {
                packets: u.packets,
                chunks: tally_map(&u.chunks.counts),
                reasons: u
                    .reasons
                    .iter()
                    .map(|(r, n)| (r.as_str().to_string(), *n))
                    .collect(),
                addresses: u
                    .addresses
                    .iter()
                    .map(|(s, d)| {
                        format!("{} -> {}", crate::net::ip_text(s), crate::net::ip_text(d))
                    })
                    .collect(),
                ports: u.ports.iter().map(|&(s, d)| [s, d]).collect(),
                first_frame: u.first_frame,
                last_frame: u.last_frame,
            },
            checksum_offload: c.offload(),
            adler32_checksums: c.adler32,
            checksum_evidence: (c.bad > 0).then(|| ChecksumEvidence {
                bad: c.bad,
                zero_share: c.bad_zero as f64 / c.bad as f64,
                one_sided_associations: c.one_sided,
                mixed_associations: c.mixed,
                bad_side: c.bad_side.iter().map(crate::net::ip_text).collect(),
            }),
            association_ends: a
                .ends
                .iter()
                .map(|(k, n)| (k.as_str().to_string(), *n))
                .collect(),
            abort_causes: a
                .abort_causes
                .iter()
                .map(|(code, name, n)| AbortCauseCount {
                    code: *code,
                    name: name.clone(),
                    associations: *n,
                })
                .collect(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EndpointReport {
    pub port: u16,
    pub vtag: Option<u32>,
    pub addresses: Vec<String>,
    /// The endpoint's SCTP implementation from its INIT / INIT-ACK (`crate::stack`).
    #[serde(default)]
    pub stack: crate::stack::StackReport,
}

/// `Serialize` below: written as a struct with `infer`'s fields inline (`crate::inline_fields`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct PathReport {
    pub sender: u8,
    pub src: String,
    pub dst: String,
    pub packets: u64,
    pub data_chunks: u64,
    pub data_bytes: u64,
    pub first_s: f64,
    pub last_s: f64,
    #[serde(flatten)]
    pub infer: PathInfer,
}

/// `Serialize` below: written as a struct with `lifecycle`'s and `stream_summary`'s fields
/// inline (`crate::inline_fields`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct AssocReport {
    pub id: usize,
    pub endpoints: Vec<EndpointReport>,
    pub handshake_seen: bool,
    pub first_s: f64,
    pub last_s: f64,
    pub first_frame: u64,
    pub packets: u64,
    pub chunks: BTreeMap<String, u64>,
    pub data_bytes: u64,
    pub bad_checksums: u64,
    pub malformed_chunks: u64,
    /// INIT -> COOKIE-ACK at the vantage point (RFC 9260 5.1).
    pub handshake_ms: Option<f64>,
    /// SHUTDOWN -> SHUTDOWN-COMPLETE (RFC 9260 9.2).
    pub shutdown_ms: Option<f64>,
    pub aborted: bool,
    pub paths: Vec<PathReport>,
    /// Per DATA-sending endpoint: timer inference (issue "Timer inference").
    pub directions: Vec<DirectionReport>,
    /// Capture duplicates of this association's packets: counted, not analysed.
    #[serde(default)]
    pub duplicate_frames: u64,
    /// How it started and ended: `handshake_started`, `events`, `events_dropped`,
    /// `after_end_packets`, `end`, `filter`.
    #[serde(flatten)]
    pub lifecycle: LifecycleReport,
    /// Issue 15: `upper_layer` (from PPIDs and well-known ports) and `streams_negotiated` (per
    /// endpoint OS / MIS and the streams it may use). Boxed: the report stays small.
    #[serde(flatten)]
    pub stream_summary: Box<crate::streams::AssocStreamsReport>,
    /// A stall (`directions[i].stalls`) lasted to the association's last packet (issue 15):
    /// derived from those stalls, so the headline never names one the report leaves out.
    #[serde(default)]
    pub stalled: bool,
}

/// The `#[serde(flatten)]` JSON, field for field in declaration order; the rows are most of the
/// report, and flatten writes them as maps (`crate::inline_fields`). `reports_round_trip`
/// (`tests/report_json.rs`) reads the JSON of every sample capture back into equal reports.
impl Serialize for PathReport {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("PathReport", 8)?;
        st.serialize_field("sender", &self.sender)?;
        st.serialize_field("src", &self.src)?;
        st.serialize_field("dst", &self.dst)?;
        st.serialize_field("packets", &self.packets)?;
        st.serialize_field("data_chunks", &self.data_chunks)?;
        st.serialize_field("data_bytes", &self.data_bytes)?;
        st.serialize_field("first_s", &self.first_s)?;
        st.serialize_field("last_s", &self.last_s)?;
        crate::inline_fields::inline(&mut st, &self.infer)?;
        st.end()
    }
}

/// As `PathReport`'s.
impl Serialize for AssocReport {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("AssocReport", 18)?;
        st.serialize_field("id", &self.id)?;
        st.serialize_field("endpoints", &self.endpoints)?;
        st.serialize_field("handshake_seen", &self.handshake_seen)?;
        st.serialize_field("first_s", &self.first_s)?;
        st.serialize_field("last_s", &self.last_s)?;
        st.serialize_field("first_frame", &self.first_frame)?;
        st.serialize_field("packets", &self.packets)?;
        st.serialize_field("chunks", &self.chunks)?;
        st.serialize_field("data_bytes", &self.data_bytes)?;
        st.serialize_field("bad_checksums", &self.bad_checksums)?;
        st.serialize_field("malformed_chunks", &self.malformed_chunks)?;
        st.serialize_field("handshake_ms", &self.handshake_ms)?;
        st.serialize_field("shutdown_ms", &self.shutdown_ms)?;
        st.serialize_field("aborted", &self.aborted)?;
        st.serialize_field("paths", &self.paths)?;
        st.serialize_field("directions", &self.directions)?;
        st.serialize_field("duplicate_frames", &self.duplicate_frames)?;
        crate::inline_fields::inline(&mut st, &self.lifecycle)?;
        crate::inline_fields::inline(&mut st, &*self.stream_summary)?;
        st.serialize_field("stalled", &self.stalled)?;
        st.end()
    }
}

/// The lifecycle report of an association with the stream events (`invalid_stream`,
/// `ppid_missing`, `stream_reset`, `streams_added`) merged into `events` in capture order (for
/// the JSON and the `events` table alike).
pub fn lifecycle_report(c: TimeBase, a: &Association) -> LifecycleReport {
    let mut l = a.lifecycle.report(
        c,
        [a.endpoints[0].port, a.endpoints[1].port],
        [a.endpoints[0].vtag, a.endpoints[1].vtag],
    );
    let extra = a.streams.events(c);
    if !extra.is_empty() {
        let mut merged = Vec::with_capacity(l.events.len() + extra.len());
        let mut extra = extra.into_iter().peekable();
        for e in std::mem::take(&mut l.events) {
            // Stable: at equal frames the lifecycle's event comes first.
            while let Some(x) = extra.next_if(|x| x.frame < e.frame) {
                merged.push(stream_event(x));
            }
            merged.push(e);
        }
        merged.extend(extra.map(stream_event));
        l.events = merged;
    }
    l.events_dropped += a.streams.events_dropped();
    l
}

fn stream_event(e: crate::streams::StreamEvent) -> crate::lifecycle::EventReport {
    crate::lifecycle::EventReport {
        t_s: e.t_s,
        frame: e.frame,
        by: e.by,
        kind: e.kind.to_string(),
        detail: e.detail,
        causes: e.causes,
        delay_ms: e.delay_ms,
        chunks: e.chunks,
        filter: e.filter,
    }
}

fn ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}

impl CaptureReport {
    pub fn from_analysis(c: &CaptureAnalysis) -> Self {
        Self::from_streamed(c, Vec::new(), Vec::new())
    }

    /// The report of a streaming pass (`analyze::analyze_reader_streaming`): the associations
    /// and TCP connections it handed on as they ended (`ended`, `retired`) with those the
    /// analysis still held at its end; associations in id order, connections retired first
    /// (in the order they were retired), as the CLI's JSON lists them.
    pub fn from_streamed(
        c: &CaptureAnalysis,
        mut ended: Vec<AssocReport>,
        mut retired: Vec<crate::tcp::TcpFlowReport>,
    ) -> Self {
        let sort = !ended.is_empty();
        ended.extend(
            c.associations
                .iter()
                .map(|a| AssocReport::new(c.time_base(), a)),
        );
        if sort {
            ended.sort_by_key(|a| a.id);
        }
        let associations = ended;
        retired.extend(
            c.tcp_flows
                .iter()
                .map(|f| crate::tcp::TcpFlowReport::new(c.time_base(), f)),
        );
        let tcp_flows = retired;
        let comparison = crate::compare::rows(&associations, &tcp_flows);
        CaptureReport {
            file: c.file.clone(),
            format: Some(c.format.as_str().to_string()),
            gzip: c.compression == Some(crate::capture::Compression::Gzip),
            compression: c.compression.map(|z| z.name().to_string()),
            packets: c.packets,
            sctp_packets: c.sctp_packets,
            tcp_packets: c.tcp_packets,
            bad_checksums: c.bad_checksums,
            warnings: c.warnings.clone(),
            error: None,
            start_epoch_s: c.first_ns.map(|t| t as f64 / 1e9),
            duration_s: match (c.first_ns, c.last_ns) {
                (Some(a), Some(b)) => (b - a) as f64 / 1e9,
                _ => 0.0,
            },
            associations,
            tcp_flows,
            comparison,
            accounting: AccountingReport::new(&c.accounting),
            files: c.files.clone(),
        }
    }

    /// How the file was compressed, if it was (a report written before `compression` existed
    /// has only `gzip`).
    pub fn compressed_with(&self) -> Option<&str> {
        self.compression.as_deref().or(self.gzip.then_some("gzip"))
    }

    /// The entry of a capture that could not be read.
    pub fn failed(file: &str, error: String) -> Self {
        CaptureReport {
            file: file.to_string(),
            format: None,
            gzip: false,
            compression: None,
            packets: 0,
            sctp_packets: 0,
            tcp_packets: 0,
            bad_checksums: 0,
            warnings: Vec::new(),
            error: Some(error),
            start_epoch_s: None,
            duration_s: 0.0,
            associations: Vec::new(),
            tcp_flows: Vec::new(),
            comparison: Vec::new(),
            accounting: AccountingReport::default(),
            files: Vec::new(),
        }
    }
}

impl AssocReport {
    /// The report of one association; `c` gives the capture's time origin.
    pub fn new(c: TimeBase, a: &Association) -> Self {
        let directions = directions(c, a);
        AssocReport {
            id: a.id,
            endpoints: a
                .endpoints
                .iter()
                .enumerate()
                .map(|(i, e)| EndpointReport {
                    port: e.port,
                    vtag: e.vtag,
                    addresses: e.addresses.iter().map(crate::net::ip_text).collect(),
                    stack: a.stack.report(i).clone(),
                })
                .collect(),
            // The four-way handshake completed (an INIT answered by ABORT was not "seen").
            handshake_seen: a.lifecycle.handshake_completed(),
            first_s: c.rel_s(a.first_ns),
            last_s: c.rel_s(a.last_ns),
            first_frame: a.first_frame,
            packets: a.packets,
            chunks: a
                .chunk_counts
                .iter()
                .map(|(t, n)| (chunk_type_name(*t).into_owned(), *n))
                .collect(),
            data_bytes: a.data_bytes,
            bad_checksums: a.bad_checksums,
            malformed_chunks: a.malformed_chunks,
            handshake_ms: a.handshake_ns().map(ms),
            shutdown_ms: match (a.shutdown_ns, a.shutdown_complete_ns) {
                (Some(s), Some(c)) if c >= s => Some(ms(c - s)),
                _ => None,
            },
            aborted: a.aborted,
            paths: a
                .paths
                .iter()
                .map(|p| PathReport {
                    sender: p.sender,
                    src: crate::net::ip_text(&p.src),
                    dst: crate::net::ip_text(&p.dst),
                    packets: p.packets,
                    data_chunks: p.data_chunks,
                    data_bytes: p.data_bytes,
                    first_s: c.rel_s(p.first_ns),
                    last_s: c.rel_s(p.last_ns),
                    infer: path_infer(a, p.sender, p.dst),
                })
                .collect(),
            stalled: directions
                .iter()
                .any(|d| d.stalls.iter().any(|s| s.end_s.is_none())),
            directions,
            duplicate_frames: a.duplicate_frames,
            lifecycle: lifecycle_report(c, a),
            stream_summary: Box::new(
                a.streams
                    .assoc_report([a.endpoints[0].port, a.endpoints[1].port]),
            ),
        }
    }
}
