//! The end of an association: ABORT and ERROR with their causes (stale cookie included), and the
//! SHUTDOWN sequence (RFC 9260 9.2) with the wait from the closing side's last DATA.

use std::fmt::Write as _;

use super::report::{describe_causes, fmt_dur};
use super::{AbortEnd, Event, Kind, Lifecycle, CAUSE_STALE_COOKIE};
use crate::packet::PacketCtx;
use crate::sctp::cause::{cause_tlvs, decode_causes};
use crate::sctp::{types, ChunkView};

/// A SHUTDOWN this soon after the peer's SACK was waiting for it: the stack sends SHUTDOWN once
/// its last DATA is acknowledged (RFC 9260 9.2), or an application that waits for that closes
/// on its next poll or timer tick (usrsctp ticks every 10 ms); later, the application closed
/// later.
const SHUTDOWN_AFTER_SACK_NS: i64 = 20_000_000;
/// A SHUTDOWN repeated sooner than this after the previous is no T2-shutdown expiry: that timer
/// runs at least RTO.min (RFC 9260 9.2, 6.3.1), and no stack's RTO.min or timer tick is below
/// 1 ms (Linux counts in jiffies of 1-10 ms, usrsctp ticks every 10 ms).
const T2_SHUTDOWN_MIN_NS: i64 = 1_000_000;

impl Lifecycle {
    pub(super) fn on_abort(
        &mut self,
        ctx: &PacketCtx,
        s: usize,
        view: &ChunkView<'_>,
        t_bit: bool,
    ) {
        let causes = decode_causes(view.value);
        let mut d = format!("ABORT from endpoint {s}");
        if !self.completed && self.first_init.is_some() {
            if self.sides[s].init_ack.is_none() && self.sides[1 - s].init.is_some() {
                // RFC 9260 5.1, 8.4 rule 3: an INIT can be refused with an ABORT carrying the
                // INIT's Initiate Tag, T bit 0.
                d.push_str(", answering the INIT: the handshake is refused");
            } else {
                d.push_str(" during the handshake");
            }
        } else if let Some((sd, _)) = self.first_shutdown {
            let _ = write!(
                d,
                " during the shutdown, {} after the SHUTDOWN",
                fmt_dur(ctx.ts_ns - sd.0)
            );
        }
        if t_bit {
            // RFC 9260 3.3.7, 8.5.1 B: T set = the sender had no association and reflected the tag.
            d.push_str(" (T bit set: the sender reflected the tag it received, having no association for it, RFC 9260 8.5.1)");
        }
        d.push_str(": ");
        d.push_str(&describe_causes(&causes));
        self.push_event(
            Event {
                ts_ns: ctx.ts_ns,
                frame: ctx.frame,
                by: Some(s as u8),
                kind: Kind::Abort,
                ctype: types::ABORT,
                detail: d,
                causes: causes.clone(),
                delay_ms: None,
                types: Vec::new(),
            },
            true,
        );
        self.abort = Some(AbortEnd {
            at: (ctx.ts_ns, ctx.frame),
            by: s as u8,
            t_bit,
            causes,
        });
    }

    pub(super) fn on_error(&mut self, ctx: &PacketCtx, s: usize, view: &ChunkView<'_>) {
        let causes = decode_causes(view.value);
        let stale = cause_tlvs(view.value).find(|&(c, _)| c == CAUSE_STALE_COOKIE);
        let (kind, detail, delay_ms) = match stale {
            Some((_, body)) => {
                // RFC 9260 3.3.10.3: Measure of Staleness in microseconds; 5.2.6: the cookie
                // sender may start again with a new INIT (with a Cookie Preservative).
                let us = body
                    .get(..4)
                    .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
                let late = match us {
                    Some(us) => format!(
                        "the COOKIE-ECHO arrived {} after the cookie's lifetime",
                        fmt_dur(i64::from(us) * 1000)
                    ),
                    None => "the staleness measure was not captured".to_string(),
                };
                let d = format!(
                    "Stale Cookie Error from endpoint {s}: {late} (RFC 9260 3.3.10.3; 5.2.6: endpoint {} may start again with a new INIT carrying a Cookie Preservative)",
                    1 - s
                );
                self.sides[1 - s].stale = Some((ctx.ts_ns, ctx.frame));
                (Kind::StaleCookie, d, us.map(|us| f64::from(us) / 1000.0))
            }
            None => (
                Kind::Error,
                format!("ERROR from endpoint {s}: {}", describe_causes(&causes)),
                None,
            ),
        };
        let ctype = types::ERROR;
        self.push_event(
            Event {
                ts_ns: ctx.ts_ns,
                frame: ctx.frame,
                by: Some(s as u8),
                kind,
                ctype,
                detail,
                causes,
                delay_ms,
                types: Vec::new(),
            },
            false,
        );
    }

    pub(super) fn on_shutdown(&mut self, ctx: &PacketCtx, s: usize) {
        let me = self.sides[s];
        let delay = self.last_data_ns[s].map(|d| ctx.ts_ns - d);
        let mut d = match me.shutdown {
            // RFC 9260 9.2: T2-shutdown expiry, or SHUTDOWN-SENT answering each DATA packet.
            Some(prev) => {
                let gap = ctx.ts_ns - prev.0;
                let why = if gap < T2_SHUTDOWN_MIN_NS {
                    // The peer's latest DATA, if the capture showed one.
                    let peer_data = match self.last_data_ns[1 - s] {
                        Some(d) if d <= ctx.ts_ns => format!(
                            "; endpoint {}'s last DATA came {} before it",
                            1 - s,
                            fmt_dur(ctx.ts_ns - d)
                        ),
                        _ => String::new(),
                    };
                    format!("too soon for a T2-shutdown expiry, which waits at least RTO.min: the answer to DATA received in SHUTDOWN-SENT{peer_data}")
                } else {
                    "T2-shutdown expiry or the answer to DATA in SHUTDOWN-SENT".to_string()
                };
                format!(
                    "SHUTDOWN from endpoint {s} repeated (#{}, {} after the previous: {why}, RFC 9260 9.2)",
                    me.shutdowns + 1,
                    fmt_dur(gap)
                )
            }
            None => format!("SHUTDOWN from endpoint {s}"),
        };
        // The peer's latest SACK since that DATA.
        let sack =
            self.last_sack_ns[1 - s].filter(|&k| self.last_data_ns[s].is_some_and(|d| k >= d));
        match (delay, sack) {
            // RFC 9260 9.2: the closing side sends SHUTDOWN once all its DATA is acknowledged;
            // sent right after the peer's SACK, the wait from its last DATA is that SACK's
            // delay (delayed SACK, 6.2): the delayed-SACK shutdown cost.
            (Some(w), Some(k)) if ctx.ts_ns - k <= SHUTDOWN_AFTER_SACK_NS => {
                let _ = write!(
                    d,
                    ", {} after its last DATA: it waited for the SACK of that DATA, which came {} after it (RFC 9260 9.2; a wait near the peer's SACK delay is the delayed-SACK shutdown cost)",
                    fmt_dur(w),
                    fmt_dur(k - self.last_data_ns[s].unwrap_or(k))
                );
            }
            (Some(w), Some(k)) => {
                let _ = write!(
                    d,
                    ", {} after its last DATA, which was acknowledged {} after it was sent: the application closed later (not a wait for a SACK)",
                    fmt_dur(w),
                    fmt_dur(k - self.last_data_ns[s].unwrap_or(k))
                );
            }
            (Some(w), None) => {
                let _ = write!(
                    d,
                    ", {} after its last DATA (no SACK of it captured before the SHUTDOWN)",
                    fmt_dur(w)
                );
            }
            (None, _) => d.push_str(" (it sent no DATA in the capture)"),
        }
        self.push(ctx, s, Kind::Shutdown, types::SHUTDOWN, d, delay, false);
        let now = (ctx.ts_ns, ctx.frame);
        self.first_shutdown.get_or_insert((now, s as u8));
        let side = &mut self.sides[s];
        side.shutdown = Some(now);
        side.shutdowns += 1;
    }

    pub(super) fn on_shutdown_ack(&mut self, ctx: &PacketCtx, s: usize) {
        let delay = self.sides[1 - s].shutdown.map(|x| ctx.ts_ns - x.0);
        let mut d = match delay {
            Some(w) => format!(
                "SHUTDOWN-ACK from endpoint {s} {} after the SHUTDOWN",
                fmt_dur(w)
            ),
            None => format!("SHUTDOWN-ACK from endpoint {s} (the SHUTDOWN was not captured)"),
        };
        if self.sides[s].shutdown_ack.is_some() {
            d.push_str(", repeated (T2-shutdown expired: the SHUTDOWN-COMPLETE did not arrive, RFC 9260 9.2)");
        } else {
            d.push_str(" (RFC 9260 9.2)");
        }
        let now = (ctx.ts_ns, ctx.frame);
        // The first SHUTDOWN-ACK ends the association when the SHUTDOWN-COMPLETE is missing.
        let keep = self.first_shutdown_ack.is_none();
        self.push(
            ctx,
            s,
            Kind::ShutdownAck,
            types::SHUTDOWN_ACK,
            d,
            delay,
            keep,
        );
        self.first_shutdown_ack.get_or_insert((now, s as u8));
        self.sides[s].shutdown_ack = Some(now);
    }

    pub(super) fn on_shutdown_complete(&mut self, ctx: &PacketCtx, s: usize, t_bit: bool) {
        let delay = self.sides[1 - s].shutdown_ack.map(|x| ctx.ts_ns - x.0);
        let mut d = match delay {
            Some(w) => format!(
                "SHUTDOWN-COMPLETE from endpoint {s} {} after the SHUTDOWN-ACK: association closed (RFC 9260 9.2)",
                fmt_dur(w)
            ),
            None => format!(
                "SHUTDOWN-COMPLETE from endpoint {s} (the SHUTDOWN-ACK was not captured): association closed (RFC 9260 9.2)"
            ),
        };
        if t_bit {
            // RFC 9260 8.4 rule 5, 8.5.1 C: the answer to a SHUTDOWN-ACK without an association.
            d.push_str("; T bit set: the sender had no association left and reflected the tag (RFC 9260 8.4, 8.5.1)");
        }
        self.push(
            ctx,
            s,
            Kind::ShutdownComplete,
            types::SHUTDOWN_COMPLETE,
            d,
            delay,
            true,
        );
        self.complete = Some(((ctx.ts_ns, ctx.frame), s as u8, t_bit));
    }
}
