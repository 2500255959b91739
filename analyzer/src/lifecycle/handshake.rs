//! The four-way handshake (RFC 9260 5.1): INIT / INIT-ACK / COOKIE-ECHO / COOKIE-ACK, their
//! retransmissions, the collision cases of RFC 9260 5.2.1-5.2.4 and when the handshake completed.

use std::fmt::Write as _;

use super::report::fmt_dur;
use super::{Kind, Lifecycle, Stamp, INIT_ACK_LOG};
use crate::packet::PacketCtx;
use crate::sctp::{types, InitChunk};

impl Lifecycle {
    /// Traffic that only an established association sends, after a COOKIE-ECHO: the handshake
    /// completed even if the COOKIE-ACK was not captured (RFC 9260 5.1 D: the COOKIE-ECHO sender
    /// sends nothing but what it bundles with the COOKIE-ECHO until the COOKIE-ACK).
    #[cold]
    pub(super) fn evidence(&mut self, ctx: &PacketCtx, e: usize) {
        let Some(c) = self.cookie_sender.map(usize::from) else {
            return;
        };
        let echo_frame = self.sides[c].cookie_echo.map(|x| x.1);
        if e == c && echo_frame == Some(ctx.frame) {
            // DATA bundled with the COOKIE-ECHO proves nothing.
            return;
        }
        let peer_tag = if e == c {
            self.sides[1 - c].init_answered_by(self.sides[c].cookie_vtag)
        } else {
            Some(ctx.vtag)
        };
        self.establish(ctx, c, peer_tag);
    }

    /// The handshake completed: cookie sender `c`, whose own tag is `c_tag` when known.
    fn establish(&mut self, ctx: &PacketCtx, c: usize, c_tag: Option<u32>) {
        self.completed = true;
        self.awaiting_evidence = false;
        self.completed_at = Some((ctx.ts_ns, ctx.frame));
        if self.sides[c].cookie_echo.is_some() {
            self.sides[1 - c].tag = Some(self.sides[c].cookie_vtag);
        }
        if c_tag.is_some() {
            self.sides[c].tag = c_tag;
        }
    }

    pub(super) fn on_init(&mut self, ctx: &PacketCtx, s: usize, init: &InitChunk) {
        let r = 1 - s;
        let now: Stamp = (ctx.ts_ns, ctx.frame);
        let me = self.sides[s];
        let peer = self.sides[r];
        self.first_init.get_or_insert(now);
        let what = init_text(init);
        let (kind, detail, delay, wait) = match me.init {
            // After the handshake an INIT is no retransmission (see the 5.2.2 event below).
            _ if self.completed => (Kind::Init, format!("INIT {what}"), None, None),
            // RFC 9260 5.2.6: after a Stale Cookie Error the endpoint starts again with a new INIT.
            Some(prev) if me.stale.is_some_and(|st| st.1 > prev.1) => (
                Kind::Init,
                format!(
                    "new INIT after the Stale Cookie Error (RFC 9260 5.2.6, may carry a Cookie Preservative) {what}"
                ),
                None,
                None,
            ),
            Some(prev)
                if me.init_tag == Some(init.initiate_tag)
                    || peer.init_ack.is_none_or(|a| a.1 < prev.1) =>
            {
                // RFC 9260 5.1 C, 6.3.3: T1-init expired, the INIT goes again and the RTO doubles.
                let wait = ctx.ts_ns - prev.0;
                let mut d = format!(
                    "INIT retransmitted (T1-init expired after {}, RFC 9260 5.1)",
                    fmt_dur(wait)
                );
                if let Some(pw) = me.init_wait_ns.filter(|&w| w > 0) {
                    let _ = write!(
                        d,
                        "; {}x the previous wait (RTO backoff, RFC 9260 6.3.3)",
                        crate::decimal::Fixed(wait as f64 / pw as f64, 1)
                    );
                }
                if me.init_tag != Some(init.initiate_tag) {
                    d.push_str("; new Initiate Tag");
                }
                (Kind::InitRetransmitted, d, Some(wait), Some(wait))
            }
            Some(_) => (
                Kind::Init,
                format!("new INIT after the previous one was answered {what}"),
                None,
                None,
            ),
            None => (Kind::Init, format!("INIT {what}"), None, None),
        };
        self.push(ctx, s, kind, types::INIT, detail, delay, false);
        if self.completed {
            // RFC 9260 5.2.2: an INIT in ESTABLISHED is answered with an INIT-ACK carrying the
            // tie-tags; a COOKIE-ECHO that follows restarts the association (5.2.4 A).
            let dup = if me.init_tag == Some(init.initiate_tag) {
                " with the Initiate Tag of its first INIT (a late duplicate)"
            } else {
                ""
            };
            let d = format!(
                "unexpected INIT from endpoint {s}{dup} after the handshake completed (RFC 9260 5.2.2: answered with an INIT-ACK carrying tie-tags; a COOKIE-ECHO that follows restarts the association, 5.2.4 A)"
            );
            self.push(ctx, s, Kind::InitCollision, types::INIT, d, None, false);
        } else if me.init.is_none() && peer.init.is_some() {
            // RFC 9260 5.2.1: INIT received in COOKIE-WAIT or COOKIE-ECHOED.
            let state = if peer.cookie_echo.is_some() {
                "COOKIE-ECHOED"
            } else {
                "COOKIE-WAIT"
            };
            let d = format!(
                "INITs from both endpoints before the handshake completed: endpoint {s}'s INIT meets endpoint {r} in {state} (RFC 9260 5.2.1: it answers with an INIT-ACK carrying its original Initiate Tag and keeps its timer; the COOKIE-ECHOs resolve the two into one association, 5.2.4)"
            );
            self.push(ctx, s, Kind::InitCollision, types::INIT, d, None, false);
        }
        let side = &mut self.sides[s];
        side.init = Some(now);
        side.init_tag = Some(init.initiate_tag);
        side.init_wait_ns = wait;
        if self.restart_of.is_some() {
            // The restart event of this record names the INIT's sender once it is known.
            for e in self.events.iter_mut() {
                if e.kind == Kind::Restart && e.frame == ctx.frame && e.by.is_none() {
                    e.by = Some(s as u8);
                }
            }
        }
    }

    pub(super) fn on_init_ack(&mut self, ctx: &PacketCtx, s: usize, init: &InitChunk) {
        let r = 1 - s;
        let peer = self.sides[r];
        let delay = peer.init.map(|i| ctx.ts_ns - i.0);
        let what = init_text(init);
        let d = match delay {
            Some(w) => format!("INIT-ACK {} after endpoint {r}'s INIT {what}", fmt_dur(w)),
            None => format!("INIT-ACK (the INIT was not captured) {what}"),
        };
        self.push(ctx, s, Kind::InitAck, types::INIT_ACK, d, delay, false);
        // RFC 9260 5.2.3: an INIT-ACK outside COOKIE-WAIT is unexpected and discarded.
        let unexpected = if self.completed {
            Some(format!(
                "INIT-ACK from endpoint {s} after the handshake completed (RFC 9260 5.2.3: unexpected outside COOKIE-WAIT, discarded; the answer to a late or duplicate INIT)"
            ))
        } else if peer.cookie_echo.is_some() {
            Some(format!(
                "INIT-ACK from endpoint {s} reaches endpoint {r} in COOKIE-ECHOED (RFC 9260 5.2.3: unexpected, discarded; typically the answer to a retransmitted INIT)"
            ))
        } else if peer.init.is_none() && self.sides[s].init.is_some() {
            Some(format!(
                "INIT-ACK from endpoint {s} although endpoint {r} sent no INIT (RFC 9260 5.2.3: unexpected outside COOKIE-WAIT, discarded)"
            ))
        } else {
            None
        };
        if let Some(d) = unexpected {
            self.push(ctx, s, Kind::InitCollision, types::INIT_ACK, d, None, false);
        }
        let side = &mut self.sides[s];
        side.init_ack = Some((ctx.ts_ns, ctx.frame));
        side.init_ack_tag = Some(init.initiate_tag);
        side.init_ack_log[side.init_ack_next] = Some((init.initiate_tag, ctx.vtag));
        side.init_ack_next = (side.init_ack_next + 1) % INIT_ACK_LOG;
    }

    pub(super) fn on_cookie_echo(&mut self, ctx: &PacketCtx, s: usize, cookie_len: u16) {
        let r = 1 - s;
        let me = self.sides[s];
        let peer = self.sides[r];
        let (kind, detail, delay, wait) = match me.cookie_echo {
            // The same cookie again (no newer INIT-ACK): T1-cookie expired (RFC 9260 5.1 E, 6.3.3).
            Some(prev) if peer.init_ack.is_none_or(|a| a.1 < prev.1) => {
                let wait = ctx.ts_ns - prev.0;
                let mut d = format!(
                    "COOKIE-ECHO retransmitted (T1-cookie expired after {}, RFC 9260 5.1)",
                    fmt_dur(wait)
                );
                if let Some(pw) = me.cookie_wait_ns.filter(|&w| w > 0) {
                    let _ = write!(
                        d,
                        "; {}x the previous wait (RTO backoff, RFC 9260 6.3.3)",
                        crate::decimal::Fixed(wait as f64 / pw as f64, 1)
                    );
                }
                (Kind::CookieEchoRetransmitted, d, Some(wait), Some(wait))
            }
            _ => {
                let delay = peer.init_ack.map(|a| ctx.ts_ns - a.0);
                let d = match delay {
                    Some(w) => format!(
                        "COOKIE-ECHO {} after endpoint {r}'s INIT-ACK (cookie {cookie_len} bytes)",
                        fmt_dur(w)
                    ),
                    None => format!(
                        "COOKIE-ECHO (the INIT-ACK was not captured; cookie {cookie_len} bytes)"
                    ),
                };
                (Kind::CookieEcho, d, delay, None)
            }
        };
        self.push(ctx, s, kind, types::COOKIE_ECHO, detail, delay, false);
        if let Some(d) = self.cookie_case(ctx, s) {
            self.push(
                ctx,
                s,
                Kind::InitCollision,
                types::COOKIE_ECHO,
                d,
                None,
                false,
            );
        }
        let side = &mut self.sides[s];
        side.cookie_echo = Some((ctx.ts_ns, ctx.frame));
        side.cookie_vtag = ctx.vtag;
        side.cookie_wait_ns = wait;
        self.cookie_sender = Some(s as u8);
        if !self.completed {
            self.awaiting_evidence = true;
        }
    }

    /// RFC 9260 5.2.4: a COOKIE-ECHO reaching an endpoint that already has an association (it
    /// sent an INIT, or the handshake completed). The cookie's tags are read from the packet's
    /// verification tag (the receiver's tag in the cookie) and the INIT-ACK that carried that
    /// tag (the INIT's tag it answered, the sender's tag in the cookie).
    fn cookie_case(&self, ctx: &PacketCtx, s: usize) -> Option<String> {
        let r = 1 - s;
        let rs = &self.sides[r];
        let r_initiated = rs.init.is_some();
        if !self.completed && !r_initiated {
            return None; // no association at the receiver: the normal handshake (5.1 D).
        }
        let (local, peer) = if self.completed {
            (rs.tag, self.sides[s].tag)
        } else {
            // COOKIE-WAIT knows no peer tag yet; COOKIE-ECHOED took it from the INIT-ACK.
            let p = rs.cookie_echo.and(self.sides[s].init_ack_tag);
            (rs.init_tag, p)
        };
        let c_local = ctx.vtag;
        let c_peer = rs.init_answered_by(c_local);
        let at = if self.completed {
            "the established association"
        } else if rs.cookie_echo.is_some() {
            "COOKIE-ECHOED"
        } else {
            "COOKIE-WAIT"
        };
        let case = match (local == Some(c_local), peer, c_peer) {
            (true, Some(p), Some(cp)) if p == cp => {
                if !r_initiated {
                    return None; // a repeated cookie of the normal handshake.
                }
                "case D (both tags match): a duplicate COOKIE-ECHO; the receiver enters or stays ESTABLISHED and answers COOKIE-ACK"
            }
            (true, None, _) | (true, Some(_), Some(_)) => {
                "case B (local tag matches, peer tag new or unset): an INIT collision; the receiver enters ESTABLISHED with the cookie's peer tag and answers COOKIE-ACK"
            }
            (true, Some(_), None) => {
                "case B or D (local tag matches; the INIT-ACK that made the cookie was not captured)"
            }
            (false, Some(p), Some(cp)) if p == cp => {
                "case C (peer tag matches, local tag differs): a late cookie from an earlier attempt, silently discarded"
            }
            (false, Some(_), Some(_)) => {
                "case A (neither tag matches): the peer restarted; the receiver resets the association (a restart)"
            }
            (false, _, _) => {
                "tags that match no case the capture shows (the INIT-ACK that made the cookie was not captured, or an unknown peer tag): discarded unless it is a restart (A)"
            }
        };
        Some(format!(
            "COOKIE-ECHO from endpoint {s} reaches endpoint {r} in {at} (RFC 9260 5.2.4 {case})"
        ))
    }

    pub(super) fn on_cookie_ack(&mut self, ctx: &PacketCtx, s: usize) {
        let c = 1 - s;
        let delay = self.sides[c].cookie_echo.map(|e| ctx.ts_ns - e.0);
        let mut d = match delay {
            Some(w) => format!("COOKIE-ACK {} after the COOKIE-ECHO", fmt_dur(w)),
            None => "COOKIE-ACK (the COOKIE-ECHO was not captured)".to_string(),
        };
        if self.sides[s].cookie_ack.is_some() {
            d.push_str(": repeated, answering a retransmitted COOKIE-ECHO (RFC 9260 5.2.4 D)");
        } else if self.completed {
            d.push_str(": the association was already established");
        } else {
            d.push_str(": association established (RFC 9260 5.1 E)");
            if let Some(i) = self.first_init {
                let _ = write!(
                    d,
                    "; handshake {} from the first INIT",
                    fmt_dur(ctx.ts_ns - i.0)
                );
            }
        }
        self.push(ctx, s, Kind::CookieAck, types::COOKIE_ACK, d, delay, false);
        self.sides[s].cookie_ack = Some((ctx.ts_ns, ctx.frame));
        if !self.completed {
            // The COOKIE-ACK carries the cookie sender's tag (RFC 9260 8.5).
            self.establish(ctx, c, Some(ctx.vtag));
        }
    }
}

/// Chunk types only an established association sends (RFC 9260 5.1: nothing but the handshake,
/// ABORT and ERROR before it).
pub(super) fn established_only(ctype: u8) -> bool {
    use types::*;
    matches!(
        ctype,
        DATA | I_DATA
            | SACK
            | NR_SACK
            | HEARTBEAT
            | HEARTBEAT_ACK
            | SHUTDOWN
            | FORWARD_TSN
            | I_FORWARD_TSN
            | ASCONF
            | ASCONF_ACK
            | RE_CONFIG
            | ECNE
            | CWR
    )
}

/// An INIT / INIT-ACK's parameters in words.
fn init_text(init: &InitChunk) -> InitText<'_> {
    InitText(init)
}

/// "(Initiate Tag 0x9a6e8fa6, 10 outbound / 2048 inbound streams, a_rwnd 131072, initial TSN
/// 1935515100)", written where it is used.
struct InitText<'a>(&'a InitChunk);

impl std::fmt::Display for InitText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let init = self.0;
        let mut n = itoa::Buffer::new();
        f.write_str("(Initiate Tag 0x")?;
        f.write_str(crate::decimal::Hex8::new(init.initiate_tag).as_str())?;
        f.write_str(", ")?;
        f.write_str(n.format(init.outbound_streams))?;
        f.write_str(" outbound / ")?;
        f.write_str(n.format(init.inbound_streams))?;
        f.write_str(" inbound streams, a_rwnd ")?;
        f.write_str(n.format(init.a_rwnd))?;
        f.write_str(", initial TSN ")?;
        f.write_str(n.format(init.initial_tsn))?;
        f.write_str(")")
    }
}
