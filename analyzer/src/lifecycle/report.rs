//! The lifecycle's JSON contract (`LifecycleReport`, `EventReport`, `EndReport`), the end of an
//! association in words, and the Wireshark display filters of associations and events.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::{Event, Kind, Lifecycle};
use crate::packet::TimeBase;
use crate::sctp::cause::CauseInfo;
use crate::sctp::chunk_type_name;

/// How an association ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EndKind {
    /// SHUTDOWN sequence (RFC 9260 9.2).
    Shutdown,
    /// ABORT after the handshake, or of an association whose handshake was not captured.
    Abort,
    OpenAtCaptureEnd,
    /// An INIT was captured and the handshake never completed.
    HandshakeFailed,
    /// Restarted by an INIT (RFC 9260 5.2.2); continued in another record.
    Restarted,
}

impl EndKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EndKind::Shutdown => "shutdown",
            EndKind::Abort => "abort",
            EndKind::OpenAtCaptureEnd => "open_at_capture_end",
            EndKind::HandshakeFailed => "handshake_failed",
            EndKind::Restarted => "restarted",
        }
    }
}

/// An association's lifecycle in the JSON report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LifecycleReport {
    /// An INIT was captured.
    pub handshake_started: bool,
    /// In capture order.
    pub events: Vec<EventReport>,
    /// events not kept past the bound
    pub events_dropped: u64,
    /// Packets of the association after it ended.
    pub after_end_packets: u64,
    pub end: EndReport,
    /// Wireshark display filter selecting the association.
    pub filter: String,
}

/// One lifecycle event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventReport {
    pub t_s: f64,
    pub frame: u64,
    /// The endpoint that sent the event's chunk.
    pub by: Option<u8>,
    pub kind: String,
    /// what happened in words a network engineer understands (e.g. "INIT retransmitted (T1-init
    /// expired after 3.0 s, RFC 9260 5.1)")
    pub detail: String,
    pub causes: Vec<CauseInfo>,
    pub delay_ms: Option<f64>,
    pub chunks: Vec<String>,
    /// Wireshark display filter selecting the event's chunk.
    pub filter: String,
}

/// How the association ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndReport {
    pub kind: String,
    pub by: Option<u8>,
    pub t_s: Option<f64>,
    pub frame: Option<u64>,
    pub causes: Vec<CauseInfo>,
    pub detail: String,
}

/// Wireshark display filter selecting this association: per direction its ports and the
/// receiver's verification tag, INITs by their Initiate Tag (they carry tag 0, RFC 9260 8.5.1 A),
/// and ABORT / SHUTDOWN-COMPLETE with the T bit by the sender's own tag (8.5.1 B, C), like
/// Wireshark's SCTP "Filter this association". `tags[i]` is the tag endpoint `i` expects.
pub fn assoc_filter(ports: [u16; 2], tags: [Option<u32>; 2]) -> String {
    // Every packet of the association carries one of its two tags (RFC 9260 8.5; an ABORT or
    // SHUTDOWN-COMPLETE with the T bit its sender's own, 8.5.1), except INIT, whose tag is 0
    // and whose Initiate Tag is one of them (the INIT-ACK's too). Written into one string.
    let mut f = String::with_capacity(160);
    let _ = write!(f, "sctp.port == {} && sctp.port == {}", ports[0], ports[1]);
    let known = tags.iter().flatten();
    if known.clone().next().is_none() {
        return f;
    }
    f.push_str(" && (");
    let mut first = true;
    for field in ["verification_tag", "initiate_tag"] {
        for t in known.clone() {
            if !first {
                f.push_str(" || ");
            }
            first = false;
            let _ = write!(f, "sctp.{field} == 0x{t:08x}");
        }
    }
    f.push(')');
    f
}

/// Wireshark display filter selecting the chunk of an event.
pub(super) fn event_filter(frame: u64, ctype: u8) -> String {
    let mut f = String::with_capacity(48);
    f.push_str("frame.number == ");
    f.push_str(itoa::Buffer::new().format(frame));
    f.push_str(" && sctp.chunk_type == ");
    f.push_str(itoa::Buffer::new().format(ctype));
    f
}

pub(super) use crate::decimal::fmt_dur;

/// Error causes in words: the first one's name and fields, and how many more.
pub(super) fn describe_causes(causes: &[CauseInfo]) -> String {
    let Some(first) = causes.first() else {
        return "no error cause".to_string();
    };
    let mut s = first.name.clone();
    if let Some(d) = &first.detail {
        s.push_str(" (");
        s.push_str(d);
        s.push(')');
    }
    match causes.len() {
        1 => {}
        2 => s.push_str(" and 1 more cause"),
        n => {
            let _ = write!(s, " and {} more causes", n - 1);
        }
    }
    s
}

impl Lifecycle {
    /// The JSON form: `tb` makes times relative, `ports` / `tags` are the endpoints' ports and
    /// the tags they expect (for the filter).
    pub fn report(&self, tb: TimeBase, ports: [u16; 2], tags: [Option<u32>; 2]) -> LifecycleReport {
        LifecycleReport {
            handshake_started: self.handshake_started(),
            events: self.events.iter().map(|e| event_report(e, tb)).collect(),
            events_dropped: self.events_dropped,
            after_end_packets: self.after_end_packets,
            end: self.end_report(tb, ports),
            filter: assoc_filter(ports, tags),
        }
    }

    /// `ports`: each endpoint's SCTP port.
    fn end_report(&self, tb: TimeBase, ports: [u16; 2]) -> EndReport {
        let kind = self.end_kind();
        let mut end = EndReport {
            kind: kind.as_str().to_string(),
            by: None,
            t_s: None,
            frame: None,
            causes: Vec::new(),
            detail: String::new(),
        };
        let at = |end: &mut EndReport, (ts, frame): (i64, u64)| {
            end.t_s = Some(tb.rel_s(ts));
            end.frame = Some(frame);
        };
        match kind {
            EndKind::Restarted => {
                if let Some((when, by, new_id)) = self.restarted {
                    at(&mut end, when);
                    end.by = Some(by);
                    end.detail = format!(
                        "restarted by an INIT from endpoint {by} (RFC 9260 5.2.2); continues as association {new_id}"
                    );
                }
            }
            EndKind::HandshakeFailed => {
                if let Some(a) = &self.abort {
                    at(&mut end, a.at);
                    end.by = Some(a.by);
                    end.causes = a.causes.clone();
                    let step = if self.sides.iter().any(|s| s.init_ack.is_some()) {
                        "the handshake"
                    } else {
                        "the INIT"
                    };
                    let t = if a.t_bit { " with the T bit set" } else { "" };
                    end.detail = format!(
                        "endpoint {} answered {step} with an ABORT{t}: {}",
                        a.by,
                        describe_causes(&a.causes)
                    );
                    if a.causes.is_empty() && !a.t_bit && step == "the INIT" {
                        // RFC 9260 8.4 rule 3: an INIT that cannot be processed is answered by
                        // an ABORT with the INIT's Initiate Tag, T bit 0. Linux sends it without
                        // a cause from its control socket when no socket listens on the port
                        // (`sctp_sf_tabort_8_4_8`), and so when the listener is closing or its
                        // accept queue is full.
                        let _ = write!(
                            end.detail,
                            "; the Linux kernel refuses an INIT this way when no socket listens on the port (port {} of endpoint {}), or the listening socket is closing or its accept queue is full",
                            ports[usize::from(a.by & 1)],
                            a.by
                        );
                    }
                } else {
                    end.detail = self.missing_step();
                }
            }
            EndKind::Abort => {
                if let Some(a) = &self.abort {
                    at(&mut end, a.at);
                    end.by = Some(a.by);
                    end.causes = a.causes.clone();
                    let t = if a.t_bit {
                        " (T bit set: the tag reflected, the sender had no association, RFC 9260 8.5.1)"
                    } else {
                        ""
                    };
                    let during = match self.first_shutdown {
                        Some(((sd, _), _)) => {
                            format!(
                                " during the shutdown, {} after the SHUTDOWN",
                                fmt_dur(a.at.0 - sd)
                            )
                        }
                        None => String::new(),
                    };
                    end.detail = format!(
                        "aborted by endpoint {}{during}{t}: {}",
                        a.by,
                        describe_causes(&a.causes)
                    );
                }
            }
            EndKind::Shutdown => {
                let by = self
                    .first_shutdown
                    .map(|(_, s)| s)
                    .or(self.first_shutdown_ack.map(|(_, s)| 1 - s))
                    .or(self.complete.map(|(_, s, _)| s));
                end.by = by;
                let who = by.map_or("an endpoint".to_string(), |b| format!("endpoint {b}"));
                let mut d = format!("graceful shutdown started by {who} (RFC 9260 9.2)");
                let first = self.first_shutdown.map(|(at, _)| at);
                if let Some(last) = by.and_then(|b| self.last_data_ns[usize::from(b)]) {
                    if let Some(sd) = first {
                        let _ = write!(
                            d,
                            "; its last DATA {} before the SHUTDOWN",
                            fmt_dur(sd.0 - last)
                        );
                    }
                }
                match (self.complete, self.first_shutdown_ack) {
                    (Some((when, _, t_bit)), _) => {
                        at(&mut end, when);
                        if let Some(sd) = first {
                            let _ = write!(
                                d,
                                "; SHUTDOWN to SHUTDOWN-COMPLETE {}",
                                fmt_dur(when.0 - sd.0)
                            );
                        }
                        if t_bit {
                            d.push_str("; SHUTDOWN-COMPLETE with the T bit set (sent without an association, RFC 9260 8.4)");
                        }
                    }
                    (None, Some((when, _))) => {
                        at(&mut end, when);
                        d.push_str("; the SHUTDOWN-ACK was captured but no SHUTDOWN-COMPLETE");
                    }
                    (None, None) => {}
                }
                if first.is_none() {
                    d.push_str("; the SHUTDOWN itself was not captured");
                }
                end.detail = d;
            }
            EndKind::OpenAtCaptureEnd => {
                end.detail = match self.first_shutdown {
                    Some((_, s)) => format!(
                        "open at the end of the capture: endpoint {s} sent a SHUTDOWN but the shutdown did not complete"
                    ),
                    None => "open at the end of the capture".to_string(),
                };
            }
        }
        end
    }

    /// Which handshake step never came (an INIT was captured, no ABORT).
    fn missing_step(&self) -> String {
        let inits: usize = self.sides.iter().filter(|s| s.init.is_some()).count();
        let any = |f: fn(&super::Side) -> bool| self.sides.iter().any(f);
        let step = if !any(|s| s.init_ack.is_some()) {
            if inits > 1 {
                "no INIT-ACK answered either INIT"
            } else {
                "no INIT-ACK answered the INIT"
            }
        } else if !any(|s| s.cookie_echo.is_some()) {
            "no COOKIE-ECHO followed the INIT-ACK"
        } else {
            "no COOKIE-ACK (nor traffic of an established association) followed the COOKIE-ECHO"
        };
        let stale = if any(|s| s.stale.is_some()) {
            " after a Stale Cookie Error (RFC 9260 5.2.6)"
        } else {
            ""
        };
        format!("handshake not completed: {step} by the end of the capture{stale} (RFC 9260 5.1)")
    }
}

fn event_report(e: &Event, tb: TimeBase) -> EventReport {
    let chunks = if e.kind == Kind::AfterEnd {
        e.types
            .iter()
            .map(|&t| chunk_type_name(t).into_owned())
            .collect()
    } else {
        vec![chunk_type_name(e.ctype).into_owned()]
    };
    EventReport {
        t_s: tb.rel_s(e.ts_ns),
        frame: e.frame,
        by: e.by,
        kind: e.kind.as_str().to_string(),
        detail: e.detail.clone(),
        causes: e.causes.clone(),
        delay_ms: e.delay_ms,
        chunks,
        filter: event_filter(e.frame, e.ctype),
    }
}
