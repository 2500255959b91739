//! The JSON contract (`--format json`, README "JSON contract"): serde types built from a
//! `CaptureAnalysis`. Later issues add fields, never rename these.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::analyze::{CaptureAnalysis, TimeBase};
use crate::assoc::Association;
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
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EndpointReport {
    pub port: u16,
    pub vtag: Option<u32>,
    pub addresses: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
}

fn ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}

impl CaptureReport {
    pub fn from_analysis(c: &CaptureAnalysis) -> Self {
        let associations: Vec<AssocReport> = c
            .associations
            .iter()
            .map(|a| AssocReport::new(c.time_base(), a))
            .collect();
        let tcp_flows: Vec<crate::tcp::TcpFlowReport> = c
            .tcp_flows
            .iter()
            .map(|f| crate::tcp::TcpFlowReport::new(c.time_base(), f))
            .collect();
        let comparison = crate::compare::rows(&associations, &tcp_flows);
        CaptureReport {
            file: c.file.clone(),
            format: Some(c.format.as_str().to_string()),
            gzip: c.gzip,
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
        }
    }

    /// The entry of a capture that could not be read.
    pub fn failed(file: &str, error: String) -> Self {
        CaptureReport {
            file: file.to_string(),
            format: None,
            gzip: false,
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
        }
    }
}

impl AssocReport {
    /// The report of one association; `c` gives the capture's time origin.
    pub fn new(c: TimeBase, a: &Association) -> Self {
        AssocReport {
            id: a.id,
            endpoints: a
                .endpoints
                .iter()
                .map(|e| EndpointReport {
                    port: e.port,
                    vtag: e.vtag,
                    addresses: e.addresses.iter().map(crate::net::ip_text).collect(),
                })
                .collect(),
            handshake_seen: a.handshake_seen,
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
            directions: directions(c, a),
        }
    }
}
