//! The streams' JSON contract (`StreamReport`, `UpperLayer`, `NegotiatedReport`) and their events
//! in words (`StreamEvent`, merged by the report into the association's `events`).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::{ppid, Answer, Event, Streams, What};
use crate::decimal::plural;
use crate::infer::stats::Dist;
use crate::packet::TimeBase;
use crate::sctp::cause::{reconfig_result_name, CauseInfo};
use crate::sctp::chunk_type_name;

/// The association-level streams fields of the JSON contract (flattened into the association).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct AssocStreamsReport {
    /// Upper-layer protocol from PPIDs and well-known ports.
    #[serde(default)]
    pub upper_layer: UpperLayer,
    /// Per endpoint: OS / MIS of its INIT or INIT-ACK and the streams it may use.
    #[serde(default)]
    pub streams_negotiated: Vec<NegotiatedReport>,
}

/// One stream of one direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamReport {
    pub stream: u16,
    /// Messages (B fragments; each TSN counted once).
    pub messages: u64,
    /// User data bytes of the stream's DATA / I-DATA chunks (each TSN once).
    pub bytes: u64,
    /// Share of the messages sent ordered (U bit clear); null without a message.
    pub ordered_share: Option<f64>,
    /// Messages sent in more than one fragment (B without E).
    pub fragmented: u64,
    /// PPIDs of the messages, most frequent first.
    pub ppids: Vec<PpidCount>,
    pub first_s: f64,
    pub last_s: f64,
    /// Head-of-line blocking (`crate::hol`, filled by `report_infer::stream_reports`): ordered
    /// messages that waited for an earlier one of the stream, and how long (ms); null where the
    /// direction's vantage gives no times.
    pub hol_blocked_messages: Option<u64>,
    pub hol_delay_ms: Option<Dist>,
    /// DATA / I-DATA chunks (each TSN once).
    #[serde(default)]
    pub data_chunks: u64,
    /// Ordered stream sequence numbers (SSN, I-DATA MID) never seen below the stream's highest.
    #[serde(default)]
    pub ssn_gaps: u64,
    /// Messages whose PPID was past the first four distinct ones of the stream.
    #[serde(default)]
    pub ppid_other_messages: u64,
}

/// Messages of one PPID.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PpidCount {
    pub ppid: u32,
    /// IANA registry name; null for 0 (not specified) and unregistered values.
    pub name: Option<String>,
    pub messages: u64,
}

/// The association's upper-layer protocol and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct UpperLayer {
    /// "NGAP", "S1AP", "Diameter", "M3UA", ...; null when neither PPIDs nor ports tell.
    pub name: Option<String>,
    /// The PPID that names it; null when named by port or not at all (an unregistered PPID
    /// carried by most messages is given with a null name).
    pub ppid: Option<u32>,
    pub evidence: String,
}

/// What one endpoint announced (RFC 9260 3.3.2: its INIT or INIT-ACK) and may use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct NegotiatedReport {
    /// Number of Outbound Streams; null when its INIT / INIT-ACK was not captured.
    pub os: Option<u16>,
    /// Number of Inbound Streams (MIS).
    pub mis: Option<u16>,
    /// Streams it may send on: min(its OS, the peer's MIS) (RFC 9260 5.1.1) plus the streams
    /// RE-CONFIG added; null unless both INIT and INIT-ACK were captured.
    pub usable_out: Option<u32>,
    /// Outgoing streams added by RE-CONFIG Add Outgoing Streams that the peer performed.
    pub added_out: u32,
}

/// A stream event in the shape of the association's `events` (the report merges them).
#[derive(Debug, Clone, PartialEq)]
pub struct StreamEvent {
    pub t_s: f64,
    pub frame: u64,
    pub by: Option<u8>,
    pub kind: &'static str,
    pub detail: String,
    pub causes: Vec<CauseInfo>,
    pub delay_ms: Option<f64>,
    pub chunks: Vec<String>,
    pub filter: String,
}

impl Streams {
    /// The streams of the direction whose DATA endpoint `sender` sends, by stream id.
    pub fn direction(&self, tb: TimeBase, sender: u8) -> Vec<StreamReport> {
        let dir = &self.dirs[usize::from(sender & 1)];
        let mut rows: Vec<&super::StreamRow> = dir.rows.iter().collect();
        rows.sort_by_key(|r| r.sid);
        rows.into_iter()
            .map(|r| {
                let mut ppids: Vec<PpidCount> = r.ppids[..usize::from(r.n_ppids)]
                    .iter()
                    .map(|&(p, n)| PpidCount {
                        ppid: p,
                        name: ppid::name(p).map(str::to_string),
                        messages: n,
                    })
                    .collect();
                ppids.sort_by(|a, b| b.messages.cmp(&a.messages).then(a.ppid.cmp(&b.ppid)));
                StreamReport {
                    stream: r.sid,
                    messages: r.messages,
                    bytes: r.bytes,
                    ordered_share: (r.messages > 0)
                        .then(|| (r.messages - r.unordered) as f64 / r.messages as f64),
                    fragmented: r.fragmented,
                    ppids,
                    first_s: tb.rel_s(r.first_ns),
                    last_s: tb.rel_s(r.last_ns),
                    hol_blocked_messages: None,
                    hol_delay_ms: None,
                    data_chunks: r.chunks,
                    ssn_gaps: r.ssn.total_gaps(),
                    ppid_other_messages: r.other_ppids,
                }
            })
            .collect()
    }

    /// The association-level fields; `ports` are the endpoints' ports.
    pub fn assoc_report(&self, ports: [u16; 2]) -> AssocStreamsReport {
        AssocStreamsReport {
            upper_layer: self.upper_layer(ports),
            streams_negotiated: self.negotiated(),
        }
    }

    /// Messages on streams past `MAX_STREAMS` in the direction of endpoint `sender`.
    pub fn untracked_messages(&self, sender: u8) -> u64 {
        self.dirs[usize::from(sender & 1)].untracked_messages
    }

    /// Each endpoint's OS / MIS and the streams it may use.
    pub fn negotiated(&self) -> Vec<NegotiatedReport> {
        (0..2)
            .map(|s| {
                let (me, peer) = (self.neg[s], self.neg[1 - s]);
                NegotiatedReport {
                    os: me.os,
                    mis: me.mis,
                    usable_out: me
                        .os
                        .zip(peer.mis)
                        .map(|(os, mis)| u32::from(os.min(mis)).saturating_add(me.added_out)),
                    added_out: me.added_out,
                }
            })
            .collect()
    }

    /// Messages per PPID over both directions (tracked streams), most first.
    fn ppid_tally(&self) -> Vec<(u32, u64)> {
        let mut t: Vec<(u32, u64)> = Vec::new();
        for r in self.dirs.iter().flat_map(|d| &d.rows) {
            for &(p, n) in &r.ppids[..usize::from(r.n_ppids)] {
                match t.iter_mut().find(|e| e.0 == p) {
                    Some(e) => e.1 += n,
                    None => t.push((p, n)),
                }
            }
        }
        t.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        t
    }

    /// The upper-layer protocol: from the registered PPIDs the messages carry (the protocol of
    /// the most messages), else from a well-known port of `ports` (the endpoints' ports).
    pub fn upper_layer(&self, ports: [u16; 2]) -> UpperLayer {
        let tally = self.ppid_tally();
        let total: u64 = tally.iter().map(|e| e.1).sum();
        let port = ppid::assoc_port(ports);
        // Messages per protocol, with its most frequent PPID.
        let mut protos: Vec<(&'static str, u64, u32)> = Vec::new();
        for &(p, n) in &tally {
            let Some(e) = ppid::lookup(p) else { continue };
            match protos.iter_mut().find(|x| x.0 == e.protocol) {
                Some(x) => x.1 += n,
                None => protos.push((e.protocol, n, p)),
            }
        }
        protos.sort_by_key(|x| std::cmp::Reverse(x.1));
        let describe = |p: u32, n: u64| {
            let name = ppid::name(p).map_or_else(
                || {
                    if p == 0 {
                        "not specified".to_string()
                    } else {
                        "not in the IANA registry".to_string()
                    }
                },
                str::to_string,
            );
            format!("PPID {p} ({name}) on {n} of {total} messages")
        };
        if let Some(&(proto, _, top)) = protos.first() {
            let mut ev = describe(top, tally.iter().find(|e| e.0 == top).map_or(0, |e| e.1));
            for &(p, n) in tally.iter().filter(|e| e.0 != top).take(3) {
                ev.push_str("; ");
                ev.push_str(&describe(p, n));
            }
            if let Some(port) = port {
                if port.protocol == proto {
                    let _ = write!(
                        ev,
                        "; SCTP port {} is {proto}'s ({})",
                        port.port, port.reference
                    );
                } else {
                    let _ = write!(
                        ev,
                        "; SCTP port {} is registered for {} ({}), the PPIDs say otherwise",
                        port.port, port.protocol, port.reference
                    );
                }
            }
            return UpperLayer {
                name: Some(proto.to_string()),
                ppid: Some(top),
                evidence: ev,
            };
        }
        let data = if total == 0 {
            "no DATA message captured".to_string()
        } else if tally.iter().all(|e| e.0 == 0) {
            if total == 1 {
                "the one message carries PPID 0 (not specified)".to_string()
            } else {
                format!("all {total} messages carry PPID 0 (not specified)")
            }
        } else {
            let mut s = "no registered PPID: ".to_string();
            let parts: Vec<String> = tally.iter().take(3).map(|&(p, n)| describe(p, n)).collect();
            s.push_str(&parts.join("; "));
            s
        };
        if let Some(port) = port {
            let mut ev = format!(
                "{data}; SCTP port {} is registered for {} ({})",
                port.port, port.protocol, port.reference
            );
            if let Some(p) = port.ppid {
                let _ = write!(ev, ", whose PPID is {p}");
            }
            return UpperLayer {
                name: Some(port.protocol.to_string()),
                ppid: None,
                evidence: ev,
            };
        }
        UpperLayer {
            name: None,
            ppid: tally.iter().find(|e| e.0 != 0).map(|e| e.0),
            evidence: format!(
                "{data}; ports {} and {} are not well-known SCTP ports",
                ports[0], ports[1]
            ),
        }
    }

    /// The events in words, in capture order.
    pub fn events(&self, tb: TimeBase) -> Vec<StreamEvent> {
        self.events.iter().map(|e| self.event(tb, e)).collect()
    }

    fn event(&self, tb: TimeBase, e: &Event) -> StreamEvent {
        let by = e.by;
        let peer = 1 - by;
        let chunk = chunk_type_name(e.ctype).into_owned();
        let chunk_filter = format!(
            "frame.number == {} && sctp.chunk_type == {}",
            e.frame, e.ctype
        );
        let mut causes = Vec::new();
        let mut delay_ms = None;
        let (kind, detail, filter) = match &e.what {
            What::InvalidStream {
                sid,
                limit,
                os,
                peer_mis,
                added,
                chunks,
                rejected,
            } => {
                let mut bound = format!(
                    "endpoint {peer}'s MIS {}",
                    peer_mis.map_or("?".to_string(), |m| m.to_string())
                );
                if let Some(os) = os.filter(|&o| Some(o) < *peer_mis) {
                    bound = format!("endpoint {by}'s own OS {os} (below {bound})");
                }
                if *added > 0 {
                    let _ = write!(bound, " plus {added} added by RE-CONFIG");
                }
                let mut d = format!(
                    "endpoint {by} sent {} on stream {sid}, not below the {limit} streams usable in this direction ({bound}; RFC 9260 5.1.1): the receiver must reject it (RFC 9260 6.5)",
                    plural(*chunks, &format!("{chunk} chunk"), &format!("{chunk} chunks")),
                );
                match rejected {
                    Some(r) => {
                        let _ = write!(
                            d,
                            "; endpoint {peer} answered with an {} (Invalid Stream Identifier) in frame {}",
                            chunk_type_name(r.ctype),
                            r.frame
                        );
                        causes.push(r.cause.clone());
                        delay_ms = Some((r.ts_ns - e.ts_ns) as f64 / 1e6);
                    }
                    None => {
                        let _ = write!(
                            d,
                            "; no ERROR or ABORT from endpoint {peer} naming it was captured"
                        );
                    }
                }
                (
                    "invalid_stream",
                    d,
                    format!("frame.number == {} && sctp.data_sid == {sid}", e.frame),
                )
            }
            What::InvalidStreamReported {
                sid,
                data_frame,
                reports,
                cause,
            } => {
                causes.push(cause.clone());
                let mut d = format!(
                    "endpoint {by} reported DATA of endpoint {peer} on invalid stream {sid} ({chunk} cause Invalid Stream Identifier, RFC 9260 6.5)"
                );
                if *reports > 1 {
                    let _ = write!(d, ", {reports} times");
                }
                match data_frame {
                    Some(f) => {
                        let _ = write!(
                            d,
                            "; endpoint {peer}'s first DATA on stream {sid} is frame {f}"
                        );
                    }
                    None => {
                        let _ = write!(
                            d,
                            "; no DATA of endpoint {peer} on stream {sid} was captured"
                        );
                    }
                }
                let _ = write!(
                    d,
                    "; endpoint {by}'s inbound stream count (MIS) was not captured"
                );
                ("invalid_stream", d, chunk_filter)
            }
            What::PpidMissing { port, messages } => {
                let expected = port.ppid.unwrap_or(0);
                let d = format!(
                    "endpoint {by} sent {} with PPID 0 (not specified) on SCTP port {} of {}, which registers PPID {expected} ({}; {}): expected {expected}",
                    plural(*messages, "message", "messages"),
                    port.port,
                    port.protocol,
                    ppid::name(expected).unwrap_or("?"),
                    port.reference
                );
                (
                    "ppid_missing",
                    d,
                    format!(
                        "frame.number == {} && sctp.data_payload_proto_id == 0",
                        e.frame
                    ),
                )
            }
            What::StreamReset {
                ptype,
                streams,
                seq,
                answer,
            } => {
                let which = if *streams == 0 {
                    "all its outgoing streams".to_string()
                } else {
                    format!("{streams} of its outgoing streams")
                };
                let mut d = match *ptype {
                    super::ptype::OUT_SSN_RESET => format!(
                        "endpoint {by} resets {which} (Outgoing SSN Reset Request {seq}, RFC 6525 5.1.2): their sequence numbers start again at 0"
                    ),
                    super::ptype::IN_SSN_RESET => format!(
                        "endpoint {by} asks endpoint {peer} to reset {which} (Incoming SSN Reset Request {seq}, RFC 6525 5.1.3)"
                    ),
                    _ => format!(
                        "endpoint {by} resets the SSNs and TSNs of all streams in both directions (SSN/TSN Reset Request {seq}, RFC 6525 5.1.4)"
                    ),
                };
                d.push_str(&answer_words(answer, peer));
                ("stream_reset", d, chunk_filter)
            }
            What::StreamsAdded {
                outgoing,
                n,
                seq,
                answer,
            } => {
                let mut d = if *outgoing {
                    format!(
                        "endpoint {by} adds {} to its outgoing streams (Add Outgoing Streams Request {seq}, RFC 6525 5.1.5)",
                        plural(u64::from(*n), "stream", "streams")
                    )
                } else {
                    format!(
                        "endpoint {by} asks endpoint {peer} to add {} to its outgoing streams (Add Incoming Streams Request {seq}, RFC 6525 5.1.6)",
                        plural(u64::from(*n), "stream", "streams")
                    )
                };
                d.push_str(&answer_words(answer, peer));
                if *outgoing {
                    let neg = &self.neg[usize::from(by)];
                    let usable = neg
                        .os
                        .zip(self.neg[usize::from(peer)].mis)
                        .map(|(os, mis)| u32::from(os.min(mis)) + neg.added_out);
                    if let Some(u) = usable {
                        let _ = write!(
                            d,
                            "; endpoint {by} may send on {u} streams at the capture's end"
                        );
                    }
                }
                ("streams_added", d, chunk_filter)
            }
        };
        StreamEvent {
            t_s: tb.rel_s(e.ts_ns),
            frame: e.frame,
            by: Some(by),
            kind,
            detail,
            causes,
            delay_ms,
            chunks: vec![chunk],
            filter,
        }
    }
}

/// How a RE-CONFIG request was answered, in words.
fn answer_words(answer: &Option<Answer>, peer: u8) -> String {
    match answer {
        Some(Answer {
            frame,
            result: Some(r),
        }) => format!(
            "; endpoint {peer} answered \"{}\" in frame {frame}",
            reconfig_result_name(*r).unwrap_or("unknown result")
        ),
        Some(Answer {
            frame,
            result: None,
        }) => format!(
            "; endpoint {peer} answered with its own Outgoing SSN Reset Request in frame {frame} (RFC 6525 5.2.3)"
        ),
        None => format!("; no answer from endpoint {peer} was captured"),
    }
}
