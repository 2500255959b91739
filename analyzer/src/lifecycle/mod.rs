//! Association lifecycle (RFC 9260 5, 9): the handshake and its retransmissions, INIT collisions,
//! restarts, stale cookies, the SHUTDOWN sequence, ABORT / ERROR causes, heartbeat loss, and how
//! the association ended.
//!
//! The association tracker owns one `Lifecycle` per association and feeds it every chunk; this
//! module knows nothing of the tracker. `handshake` reads the four-way handshake and its
//! collisions, `closing` ABORT / ERROR and the SHUTDOWN sequence, `heartbeat` the HEARTBEAT /
//! HEARTBEAT-ACK matching, `report` the JSON contract and the end in words.

use std::fmt::Write as _;

mod closing;
mod handshake;
mod heartbeat;
mod report;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_end;

pub use report::{assoc_filter, EndKind, EndReport, EventReport, LifecycleReport};

use crate::packet::PacketCtx;
use crate::sctp::cause::CauseInfo;
use crate::sctp::{types, Chunk, ChunkView};
use handshake::established_only;
use heartbeat::{Heartbeats, Loss};
use report::fmt_dur;

/// Events kept per association; later ones are counted in `events_dropped` (the event that ended
/// the association is always kept).
pub const MAX_EVENTS: usize = 256;
/// Chunk types listed per `after_end` event.
const MAX_AFTER_END_TYPES: usize = 16;
/// INIT-ACKs remembered per endpoint, to read the tags of a later COOKIE-ECHO (RFC 9260 5.2.4).
const INIT_ACK_LOG: usize = 4;
/// Error cause "Stale Cookie Error" (RFC 9260 3.3.10.3).
const CAUSE_STALE_COOKIE: u16 = 3;

/// (capture time in ns, frame number).
type Stamp = (i64, u64);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Init,
    InitRetransmitted,
    InitAck,
    CookieEcho,
    CookieEchoRetransmitted,
    CookieAck,
    InitCollision,
    Restart,
    StaleCookie,
    Shutdown,
    ShutdownAck,
    ShutdownComplete,
    Abort,
    Error,
    HeartbeatLoss,
    AfterEnd,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Init => "init",
            Kind::InitRetransmitted => "init_retransmitted",
            Kind::InitAck => "init_ack",
            Kind::CookieEcho => "cookie_echo",
            Kind::CookieEchoRetransmitted => "cookie_echo_retransmitted",
            Kind::CookieAck => "cookie_ack",
            Kind::InitCollision => "init_collision",
            Kind::Restart => "restart",
            Kind::StaleCookie => "stale_cookie",
            Kind::Shutdown => "shutdown",
            Kind::ShutdownAck => "shutdown_ack",
            Kind::ShutdownComplete => "shutdown_complete",
            Kind::Abort => "abort",
            Kind::Error => "error",
            Kind::HeartbeatLoss => "heartbeat_loss",
            Kind::AfterEnd => "after_end",
        }
    }
}

/// One lifecycle event as recorded (times in ns; the report makes them relative).
#[derive(Debug, Clone)]
struct Event {
    ts_ns: i64,
    frame: u64,
    by: Option<u8>,
    kind: Kind,
    /// The chunk type the event is about (its Wireshark filter).
    ctype: u8,
    detail: String,
    causes: Vec<CauseInfo>,
    delay_ms: Option<f64>,
    /// `after_end`: the packet's chunk types (bounded).
    types: Vec<u8>,
}

/// What one endpoint did in the handshake and the shutdown (latest occurrences).
#[derive(Debug, Clone, Copy, Default)]
struct Side {
    init: Option<Stamp>,
    init_tag: Option<u32>,
    /// Wait before the latest INIT repeat (T1-init), to show the backoff.
    init_wait_ns: Option<i64>,
    init_ack: Option<Stamp>,
    init_ack_tag: Option<u32>,
    /// Latest INIT-ACKs sent: (Initiate Tag, verification tag = the tag of the INIT answered).
    init_ack_log: [Option<(u32, u32)>; INIT_ACK_LOG],
    init_ack_next: usize,
    cookie_echo: Option<Stamp>,
    /// Verification tag of the latest COOKIE-ECHO (the cookie receiver's tag).
    cookie_vtag: u32,
    cookie_wait_ns: Option<i64>,
    cookie_ack: Option<Stamp>,
    /// Stale Cookie Error received by this endpoint (RFC 9260 5.2.6).
    stale: Option<Stamp>,
    /// The tag this endpoint expects, as the completed handshake set it.
    tag: Option<u32>,
    shutdown: Option<Stamp>,
    shutdowns: u32,
    shutdown_ack: Option<Stamp>,
}

impl Side {
    /// The tag of the INIT answered by this endpoint's INIT-ACK with Initiate Tag `itag`.
    fn init_answered_by(&self, itag: u32) -> Option<u32> {
        self.init_ack_log
            .iter()
            .flatten()
            .find(|(i, _)| *i == itag)
            .map(|&(_, v)| v)
    }
}

/// The ABORT that ended the association.
#[derive(Debug, Clone)]
struct AbortEnd {
    at: Stamp,
    by: u8,
    t_bit: bool,
    causes: Vec<CauseInfo>,
}

/// Lifecycle of one association: fed every chunk by the tracker, it keeps bounded state
/// (nothing grows per DATA; heartbeat matching holds at most 32 HEARTBEATs per endpoint).
#[derive(Debug, Clone, Default)]
pub struct Lifecycle {
    sides: [Side; 2],
    /// Time of each endpoint's last DATA / I-DATA (the shutdown wait, METRICS "Shutdown time").
    last_data_ns: [Option<i64>; 2],
    /// Latest SACK sent by each endpoint (it acknowledges the peer's DATA).
    last_sack_ns: [Option<i64>; 2],
    /// Latest capture time seen.
    last_ns: i64,
    /// Something from each endpoint was captured.
    heard: [bool; 2],
    completed: bool,
    /// A COOKIE-ECHO was seen and the handshake is not known complete: traffic only an
    /// established association sends completes it.
    awaiting_evidence: bool,
    /// Sender of the latest COOKIE-ECHO.
    cookie_sender: Option<u8>,
    first_init: Option<Stamp>,
    completed_at: Option<Stamp>,
    first_shutdown: Option<(Stamp, u8)>,
    first_shutdown_ack: Option<(Stamp, u8)>,
    /// The SHUTDOWN-COMPLETE that ended the association: (when, sender, T bit).
    complete: Option<(Stamp, u8, bool)>,
    abort: Option<AbortEnd>,
    /// (INIT, restarting endpoint, the new record).
    restarted: Option<(Stamp, u8, usize)>,
    restart_of: Option<usize>,
    events: Vec<Event>,
    events_dropped: u64,
    after_end_packets: u64,
    hb: Heartbeats,
    finished: bool,
}

impl Lifecycle {
    /// Every chunk of every packet of the association up to and including the one that ended it
    /// (SHUTDOWN-COMPLETE or ABORT). `sender` is the index (0/1) of the sending endpoint. The
    /// DATA and SACK arms allocate nothing and search nothing (per-packet hot path).
    #[inline]
    pub fn chunk(&mut self, ctx: &PacketCtx, sender: u8, view: &ChunkView<'_>, chunk: &Chunk<'_>) {
        let s = usize::from(sender & 1);
        match chunk {
            Chunk::Data(_) => self.data(ctx, sender),
            Chunk::Sack(_) => self.sack(ctx, sender),
            _ => self.control(ctx, s, view, Some(chunk)),
        }
    }

    /// A DATA or I-DATA chunk from endpoint `sender` (what `chunk` does with one).
    #[inline(always)]
    pub fn data(&mut self, ctx: &PacketCtx, sender: u8) {
        let s = usize::from(sender & 1);
        self.last_data_ns[s] = Some(ctx.ts_ns);
        self.hot(ctx, s);
    }

    /// A SACK or NR-SACK chunk from endpoint `sender` (what `chunk` does with one).
    #[inline(always)]
    pub fn sack(&mut self, ctx: &PacketCtx, sender: u8) {
        let s = usize::from(sender & 1);
        self.last_sack_ns[s] = Some(ctx.ts_ns);
        self.hot(ctx, s);
    }

    /// A chunk that did not parse (e.g. an ABORT with a malformed cause): what its header and
    /// value tell is still used (ABORT, ERROR, SHUTDOWN-ACK, SHUTDOWN-COMPLETE, COOKIE-ACK end
    /// or advance the lifecycle without their parsed form).
    pub fn unparsed(&mut self, ctx: &PacketCtx, sender: u8, view: &ChunkView<'_>) {
        self.control(ctx, usize::from(sender & 1), view, None);
    }

    #[inline]
    fn hot(&mut self, ctx: &PacketCtx, s: usize) {
        self.last_ns = ctx.ts_ns;
        self.heard[s] = true;
        if self.awaiting_evidence {
            self.evidence(ctx, s);
        }
    }

    fn control(
        &mut self,
        ctx: &PacketCtx,
        s: usize,
        view: &ChunkView<'_>,
        chunk: Option<&Chunk<'_>>,
    ) {
        if self.ended() {
            return;
        }
        self.last_ns = self.last_ns.max(ctx.ts_ns);
        self.heard[s] = true;
        if self.awaiting_evidence && established_only(view.ctype) {
            self.evidence(ctx, s);
        }
        let t_bit = view.flags & 0x01 != 0;
        match (view.ctype, chunk) {
            (types::INIT, Some(Chunk::Init(init))) => self.on_init(ctx, s, init),
            (types::INIT_ACK, Some(Chunk::Init(init))) => self.on_init_ack(ctx, s, init),
            (types::COOKIE_ECHO, _) => self.on_cookie_echo(ctx, s, view.length.saturating_sub(4)),
            (types::COOKIE_ACK, _) => self.on_cookie_ack(ctx, s),
            (types::HEARTBEAT, _) => {
                let mut out = Vec::new();
                self.hb.heartbeat(ctx, s, view.value, &mut out);
                self.push_losses(out);
            }
            (types::HEARTBEAT_ACK, _) => {
                let mut out = Vec::new();
                self.hb.ack(ctx, s, view.value, &mut out);
                self.push_losses(out);
            }
            (types::ABORT, _) => self.on_abort(ctx, s, view, t_bit),
            (types::ERROR, _) => self.on_error(ctx, s, view),
            (types::SHUTDOWN, _) => self.on_shutdown(ctx, s),
            (types::SHUTDOWN_ACK, _) => self.on_shutdown_ack(ctx, s),
            (types::SHUTDOWN_COMPLETE, _) => self.on_shutdown_complete(ctx, s, t_bit),
            _ => {}
        }
    }

    /// A packet of this association after it ended (until the T5-shutdown-guard, RFC 9260 9.2).
    pub fn after_end(&mut self, ctx: &PacketCtx, sender: u8, chunk_types: &[u8]) {
        self.after_end_packets += 1;
        if self.events.len() >= MAX_EVENTS {
            self.events_dropped += 1;
            return;
        }
        let s = sender & 1;
        let since = self
            .end_stamp()
            .map(|e| format!(" {} after the association ended", fmt_dur(ctx.ts_ns - e.0)))
            .unwrap_or_else(|| " after the association ended".to_string());
        let names: Vec<String> = chunk_types
            .iter()
            .take(MAX_AFTER_END_TYPES)
            .map(|&t| crate::sctp::chunk_type_name(t).into_owned())
            .collect();
        let what = if names.is_empty() {
            "packet".to_string()
        } else {
            names.join(" + ")
        };
        let mut d = format!("{what} from endpoint {s}{since}");
        if chunk_types.contains(&types::SHUTDOWN_ACK) {
            d.push_str(": its SHUTDOWN-COMPLETE was not received, the SHUTDOWN-ACK is retransmitted (T2-shutdown, RFC 9260 9.2)");
        } else if chunk_types.contains(&types::ABORT) {
            d.push_str(": another ABORT (the first was not received, or each packet of an association its sender no longer has is answered with one, RFC 9260 8.4)");
        } else if chunk_types.contains(&types::SHUTDOWN_COMPLETE) {
            d.push_str(": another SHUTDOWN-COMPLETE, answering a SHUTDOWN-ACK sent again (RFC 9260 8.4 rule 5, 9.2)");
        } else {
            d.push_str(
                ": sent before the end reached its sender (in flight), or sent again; an endpoint with no association left answers it out of the blue (RFC 9260 8.4)",
            );
        }
        let types_kept: Vec<u8> = chunk_types
            .iter()
            .copied()
            .take(MAX_AFTER_END_TYPES)
            .collect();
        self.push_event(
            Event {
                ts_ns: ctx.ts_ns,
                frame: ctx.frame,
                by: Some(s),
                kind: Kind::AfterEnd,
                ctype: chunk_types.first().copied().unwrap_or(0),
                detail: d,
                causes: Vec::new(),
                delay_ms: None,
                types: types_kept,
            },
            false,
        );
    }

    /// This (established) association was restarted by an INIT from endpoint `by` (RFC 9260
    /// 5.2.2); the tracker continues in a new record `new_id`. Ends this one.
    pub fn restarted(&mut self, ctx: &PacketCtx, by: u8, new_id: usize) {
        if self.ended() {
            return;
        }
        let by = by & 1;
        let d = format!(
            "restarted: endpoint {by} sent a new INIT while the association was established (RFC 9260 5.2.2; the COOKIE-ECHO that follows replaces the association, 5.2.4 A); it continues as association {new_id}"
        );
        self.push(
            ctx,
            usize::from(by),
            Kind::Restart,
            types::INIT,
            d,
            None,
            true,
        );
        self.restarted = Some(((ctx.ts_ns, ctx.frame), by, new_id));
    }

    /// This new record restarts association `old_id` (a `restart` event on this one).
    pub fn restart_of(&mut self, ctx: &PacketCtx, old_id: usize) {
        self.restart_of = Some(old_id);
        // The INIT's sender, when its chunk was already fed (else `on_init` fills it in).
        let by = (0..2u8).find(|&e| {
            self.sides[usize::from(e)]
                .init
                .is_some_and(|i| i.1 == ctx.frame)
        });
        let d = format!(
            "restart of association {old_id}: an endpoint of the established association sent a new INIT (RFC 9260 5.2.2); its handshake replaces the peer's association (5.2.4 A)"
        );
        self.push_event(
            Event {
                ts_ns: ctx.ts_ns,
                frame: ctx.frame,
                by,
                kind: Kind::Restart,
                ctype: types::INIT,
                detail: d,
                causes: Vec::new(),
                delay_ms: None,
                types: Vec::new(),
            },
            false,
        );
    }

    /// End of the association's analysis: pending heartbeat losses are closed (a HEARTBEAT
    /// younger than the answer grace at the association's end, or its last packet, is not lost).
    pub fn finish(&mut self) {
        self.finish_at(self.last_ns);
    }

    /// `finish` with the capture's end time, for an association still open when the capture
    /// ends (a HEARTBEAT is then judged against the capture's end, not the association's last
    /// packet).
    pub fn finish_at(&mut self, capture_end_ns: i64) {
        if self.finished {
            return;
        }
        self.finished = true;
        let end_ns = self
            .end_stamp()
            .map_or(self.last_ns.max(capture_end_ns), |e| e.0);
        let mut out = Vec::new();
        self.hb.finish(end_ns, self.heard, &mut out);
        self.push_losses(out);
    }

    /// An INIT was captured.
    pub fn handshake_started(&self) -> bool {
        self.first_init.is_some()
    }

    /// The four-way handshake completed (COOKIE-ACK captured, or COOKIE-ECHO followed by traffic
    /// that only an established association sends).
    pub fn handshake_completed(&self) -> bool {
        self.completed
    }

    /// First INIT to the handshake's completion (COOKIE-ACK, or the first traffic of an
    /// established association), in ns (RFC 9260 5.1), when both were captured.
    pub fn handshake_ns(&self) -> Option<i64> {
        Some(self.completed_at?.0 - self.first_init?.0)
    }

    /// How the association ended (for the capture-level summary).
    pub fn end_kind(&self) -> EndKind {
        if self.restarted.is_some() {
            EndKind::Restarted
        } else if self.first_init.is_some() && !self.completed {
            EndKind::HandshakeFailed
        } else if self.abort.is_some() {
            EndKind::Abort
        } else if self.complete.is_some() || self.first_shutdown_ack.is_some() {
            EndKind::Shutdown
        } else {
            EndKind::OpenAtCaptureEnd
        }
    }

    /// The causes of the ABORT that ended the association (empty without one).
    pub fn abort_causes(&self) -> &[CauseInfo] {
        self.abort.as_ref().map_or(&[], |a| &a.causes)
    }

    /// Events not kept past the bound.
    pub fn events_dropped(&self) -> u64 {
        self.events_dropped
    }

    /// Packets after the end.
    pub fn after_end_packets(&self) -> u64 {
        self.after_end_packets
    }

    /// SHUTDOWN-COMPLETE, ABORT or restart seen.
    pub fn ended(&self) -> bool {
        self.abort.is_some() || self.complete.is_some() || self.restarted.is_some()
    }

    /// When the association ended (the packet that ended it).
    fn end_stamp(&self) -> Option<Stamp> {
        if let Some(a) = &self.abort {
            return Some(a.at);
        }
        if let Some((at, _, _)) = self.complete {
            return Some(at);
        }
        self.restarted.map(|(at, _, _)| at)
    }

    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        ctx: &PacketCtx,
        s: usize,
        kind: Kind,
        ctype: u8,
        detail: String,
        delay_ns: Option<i64>,
        keep: bool,
    ) {
        self.push_event(
            Event {
                ts_ns: ctx.ts_ns,
                frame: ctx.frame,
                by: Some(s as u8),
                kind,
                ctype,
                detail,
                causes: Vec::new(),
                delay_ms: delay_ns.map(|ns| ns as f64 / 1e6),
                types: Vec::new(),
            },
            keep,
        );
    }

    /// Records an event in capture order; past `MAX_EVENTS` only a `keep` (end) event is.
    fn push_event(&mut self, ev: Event, keep: bool) {
        if self.events.len() >= MAX_EVENTS && !keep {
            self.events_dropped += 1;
            return;
        }
        if self.events.capacity() == 0 {
            // A handshake and a shutdown make 7 events: one allocation, not four.
            self.events.reserve_exact(8);
        }
        // Heartbeat losses are known late: they go where their first HEARTBEAT was.
        let at = match self.events.last() {
            Some(last) if last.frame > ev.frame => {
                self.events.partition_point(|e| e.frame <= ev.frame)
            }
            _ => self.events.len(),
        };
        self.events.insert(at, ev);
    }

    fn push_losses(&mut self, losses: Vec<Loss>) {
        for l in losses {
            let plural = if l.count == 1 { "" } else { "s" };
            let mut d = format!(
                "{} HEARTBEAT{plural} to {} unanswered over {}",
                l.count,
                crate::net::Ip(l.dst),
                fmt_dur(l.span_ns)
            );
            match l.closed_by_frame {
                Some(f) => {
                    let _ = write!(d, ", until the HEARTBEAT-ACK in frame {f}");
                }
                None => d.push_str(", never answered in the capture"),
            }
            d.push_str(" (RFC 9260 8.3: each unanswered HEARTBEAT counts toward Path.Max.Retrans)");
            self.push_event(
                Event {
                    ts_ns: l.first_ns,
                    frame: l.first_frame,
                    by: Some(l.by),
                    kind: Kind::HeartbeatLoss,
                    ctype: types::HEARTBEAT,
                    detail: d,
                    causes: Vec::new(),
                    delay_ms: Some(l.span_ns as f64 / 1e6),
                    types: Vec::new(),
                },
                false,
            );
        }
    }
}
