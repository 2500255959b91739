//! The capture page's TCP tables, typed from the report (no JSON cells such as "[2 items]"):
//! one row per connection (SYN options of both sides in words) and one per direction that sent
//! data (the TCP counterparts of the SCTP figures), each header linked to its definition.

use analyzer::report::CaptureReport;
use analyzer::tcp::report::{TcpDirReport, TcpFlowReport, TcpOptionsReport};

use crate::help::{words, Def};
use crate::views::{ms, round, secs, NONE};

/// Connections (and their directions) listed on the capture page; the rest are in the tables.
pub const MAX_ROWS: usize = 100;

pub struct TcpFlowRow {
    pub id: usize,
    pub client: String,
    pub server: String,
    pub client_rule: String,
    pub handshake: String,
    pub packets: u64,
    pub bytes: String,
    pub closed: String,
    pub options: String,
    pub span: String,
}

pub struct TcpDirRow {
    pub id: usize,
    pub sender: String,
    pub vantage: Def,
    pub segments: u64,
    pub bytes: u64,
    pub base_rtt: String,
    pub rtt: String,
    pub rtx: String,
    pub timeouts: usize,
    pub rto_min: String,
    pub rto_model: String,
    pub ack_delay: String,
    pub outages: String,
    pub max_gap: String,
    pub throughput: String,
    pub goodput: String,
}

#[derive(Default)]
pub struct TcpView {
    /// Why there is no table ("No TCP flow in this capture.").
    pub note: String,
    /// "the first 100 of 2,000 connections ..." when cut.
    pub more: String,
    pub flow_heads: Vec<Def>,
    pub flows: Vec<TcpFlowRow>,
    pub dir_heads: Vec<Def>,
    pub dirs: Vec<TcpDirRow>,
}

fn options(o: &TcpOptionsReport) -> String {
    let mut v = Vec::new();
    if let Some(m) = o.mss {
        v.push(format!("MSS {m}"));
    }
    if let Some(w) = o.wscale {
        v.push(format!("wscale {w}"));
    }
    if o.sack_permitted {
        v.push("SACK".to_string());
    }
    if o.timestamps {
        v.push("TS".to_string());
    }
    if v.is_empty() {
        NONE.to_string()
    } else {
        v.join(", ")
    }
}

fn flow_row(f: &TcpFlowReport) -> TcpFlowRow {
    TcpFlowRow {
        id: f.id,
        client: f.client.clone(),
        server: f.server.clone(),
        client_rule: format!("client told by: {}", f.client_rule),
        handshake: ms(f.handshake_ms),
        packets: f.packets,
        bytes: format!("{} / {}", f.data_bytes[0], f.data_bytes[1]),
        closed: f
            .closed
            .as_deref()
            .map_or("open at capture end".into(), |c| words("tcp_closed", c)),
        options: format!("{} / {}", options(&f.options[0]), options(&f.options[1])),
        span: format!("{} – {}", secs(f.first_s), secs(f.last_s)),
    }
}

fn dir_row(f: &TcpFlowReport, d: &TcpDirReport) -> TcpDirRow {
    let rx = &d.retransmissions;
    TcpDirRow {
        id: f.id,
        sender: if d.sender == 0 {
            "client → server".into()
        } else {
            "server → client".into()
        },
        vantage: Def::name("vantage", &d.vantage),
        segments: d.data_segments,
        bytes: d.data_bytes,
        base_rtt: ms(d.base_rtt_ms),
        rtt: d.rtt_ms.map_or(NONE.into(), |x| round(x.median, 3)),
        rtx: format!(
            "{} (fast {}, timeout {}, spurious {})",
            rx.total, rx.fast, rx.timeout, rx.spurious
        ),
        timeouts: d.timeouts.len(),
        rto_min: ms(d.rto_min_ms),
        rto_model: d.rto_model.clone().unwrap_or_else(|| NONE.into()),
        ack_delay: d.delayed_ack_ms.map_or(NONE.into(), |x| round(x.median, 3)),
        outages: if d.outages.is_empty() {
            NONE.into()
        } else {
            d.outages
                .iter()
                .map(|o| format!("{} ms at {} s", round(o.recovery_ms, 1), secs(o.start_s)))
                .collect::<Vec<_>>()
                .join(", ")
        },
        max_gap: ms(d.max_gap_ms),
        throughput: round(d.throughput_bps, 0),
        goodput: round(d.goodput_bps, 0),
    }
}

pub fn tcp_view(r: &CaptureReport) -> TcpView {
    if r.tcp_flows.is_empty() {
        return TcpView {
            note: if r.tcp_packets > 0 {
                format!(
                    "{} TCP packets, but no TCP connection carried a segment the analyzer keeps.",
                    r.tcp_packets
                )
            } else {
                "No TCP flow in this capture.".into()
            },
            ..TcpView::default()
        };
    }
    let shown = &r.tcp_flows[..r.tcp_flows.len().min(MAX_ROWS)];
    TcpView {
        note: String::new(),
        more: if shown.len() < r.tcp_flows.len() {
            format!(
                "The first {} of {} connections; every one is in the TCP tables below.",
                shown.len(),
                r.tcp_flows.len()
            )
        } else {
            String::new()
        },
        flow_heads: vec![
            Def::plain("#"),
            Def::of("tcp_client"),
            Def::new("handshake", "handshake (ms)"),
            Def::new("packets", "packets"),
            Def::new(
                "data_bytes",
                "data bytes (client → server / server → client)",
            ),
            Def::of("tcp_closed"),
            Def::of("tcp_options"),
            Def::new("first_last", "first – last (s)"),
        ],
        flows: shown.iter().map(flow_row).collect(),
        dir_heads: vec![
            Def::plain("#"),
            Def::new("sender", "data sender"),
            Def::of("vantage"),
            Def::new("packets", "data segments"),
            Def::new("data_bytes", "data bytes"),
            Def::of("base_rtt"),
            Def::of("rtt_median"),
            Def::of("retransmissions"),
            Def::of("timeouts"),
            Def::of("rto_min"),
            Def::of("tcp_rto_model"),
            Def::new("ack_delay", "delayed ACK (ms)"),
            Def::new("outage", "outages (recovery)"),
            Def::of("max_gap"),
            Def::of("throughput"),
            Def::of("goodput"),
        ],
        dirs: shown
            .iter()
            .flat_map(|f| f.directions.iter().map(move |d| dir_row(f, d)))
            .collect(),
    }
}
