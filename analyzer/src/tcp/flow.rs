//! One TCP connection: endpoints and roles, handshake, options per side, close, duplicate-frame
//! suppression, and the two `TcpDir`s it feeds.

use std::net::IpAddr;

use super::dir::{SegCtx, TcpDir};
use super::infer::DirSummary;
use super::options::{flags, Options, TcpSegment};
use crate::serial;

/// A frame identical to one of the last few of its side is a capture duplicate (e.g. a Linux
/// "any" capture, a mirror port) when it comes this soon...
const DUP_NS: i64 = 1_000_000;
/// ...or this soon with nothing from the peer in between that could have triggered a resend.
const DUP_QUIET_NS: i64 = 10_000_000;
const DUP_RING: usize = 4;

/// Options one side announced in its SYN (RFC 9293 3.2, RFC 7323, RFC 2018).
#[derive(Debug, Clone, Copy, Default)]
pub struct SideOpts {
    pub mss: Option<u16>,
    pub wscale: Option<u8>,
    pub sack_permitted: bool,
    pub timestamps: bool,
    pub syn_seen: bool,
}

/// What a frame is compared on to find capture duplicates: the whole header and, through the
/// checksum, the payload (a real retransmission has a new timestamp, ACK or window, or comes
/// later).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Fingerprint {
    seq: u32,
    ack: u32,
    len: u32,
    flags: u8,
    win: u16,
    cksum: u16,
}

/// How the client of a connection was told from the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientRule {
    /// The sender of the SYN.
    Syn,
    /// The receiver of the SYN-ACK (the SYN was not captured).
    SynAck,
    /// No handshake seen: the endpoint with the higher port is the client (ephemeral ports are
    /// the high ones, RFC 6335 6); equal ports: the sender of the first segment.
    Port,
}

impl ClientRule {
    pub fn as_str(self) -> &'static str {
        match self {
            ClientRule::Syn => "syn",
            ClientRule::SynAck => "syn-ack",
            ClientRule::Port => "port",
        }
    }
}

#[derive(Debug, Clone)]
pub struct TcpFlow {
    pub id: usize,
    /// [client, server].
    pub ep: [(IpAddr, u16); 2],
    pub client_rule: ClientRule,
    pub syn_ns: Option<i64>,
    pub synack_ns: Option<i64>,
    pub hs_ack_ns: Option<i64>,
    pub first_ns: i64,
    pub last_ns: i64,
    pub first_frame: u64,
    pub last_frame: u64,
    pub packets: u64,
    pub duplicates: u64,
    pub fin: [bool; 2],
    pub rst: bool,
    pub opts: [SideOpts; 2],
    /// dirs[i]: data sent by endpoint i and the ACKs returned for it.
    pub dirs: [TcpDir; 2],
    pub summary: [Option<Box<DirSummary>>; 2],
    /// Summarised when it settled and its rows dropped (`TcpTracker::segment`, no tables kept).
    pub summarised: bool,
    dup_ring: [[(Fingerprint, i64, u64); DUP_RING]; 2],
    dup_n: [usize; 2],
    /// Non-duplicate segments seen from each side.
    seen: [u64; 2],
    /// ACK field of the latest non-duplicate segment of each side (None: no ACK flag yet).
    last_ack: [Option<u32>; 2],
}

impl TcpFlow {
    /// A new connection whose first captured segment goes `src` -> `dst`.
    pub fn new(
        id: usize,
        t_ns: i64,
        frame: u64,
        src: (IpAddr, u16),
        dst: (IpAddr, u16),
        fl: u8,
    ) -> Self {
        let syn = fl & flags::SYN != 0;
        let ack = fl & flags::ACK != 0;
        let (client_is_src, rule) = match (syn, ack) {
            (true, false) => (true, ClientRule::Syn),
            (true, true) => (false, ClientRule::SynAck),
            _ => (src.1 >= dst.1, ClientRule::Port),
        };
        let ep = if client_is_src {
            [src, dst]
        } else {
            [dst, src]
        };
        TcpFlow {
            id,
            ep,
            client_rule: rule,
            syn_ns: None,
            synack_ns: None,
            hs_ack_ns: None,
            first_ns: t_ns,
            last_ns: t_ns,
            first_frame: frame,
            last_frame: frame,
            packets: 0,
            duplicates: 0,
            fin: [false; 2],
            rst: false,
            opts: [SideOpts::default(); 2],
            dirs: Default::default(),
            summary: [None, None],
            summarised: false,
            dup_ring: [[(Fingerprint::default(), i64::MIN, 0); DUP_RING]; 2],
            dup_n: [0; 2],
            seen: [0; 2],
            last_ack: [None; 2],
        }
    }

    /// Which endpoint sent a segment from `src`.
    pub fn side(&self, src: (IpAddr, u16)) -> usize {
        usize::from(src != self.ep[0])
    }

    pub fn handshake_seen(&self) -> bool {
        self.syn_ns.is_some() && self.synack_ns.is_some()
    }

    /// SYN -> ACK of the SYN-ACK (one RTT at any vantage point).
    pub fn handshake_ns(&self) -> Option<i64> {
        Some(self.hs_ack_ns? - self.syn_ns?)
    }

    /// A round-trip time valid at any vantage point: the fastest answer to each side's segments
    /// add up to one RTT (at a sender one of them is ~0, in the middle each is a part).
    pub fn rtt_hint_ns(&self) -> Option<i64> {
        match (self.dirs[0].resp_min_ns, self.dirs[1].resp_min_ns) {
            (Some(a), Some(b)) => Some(a + b),
            _ => self.handshake_ns(),
        }
    }

    pub fn closed(&self) -> bool {
        self.rst || (self.fin[0] && self.fin[1])
    }

    /// Closed (RFC 9293 3.6: both FINs, or a RST) with nothing left unacknowledged: no later
    /// segment of this connection can give an RTT sample (Karn: only a retransmission could
    /// follow), so its samples can be reduced to their summary.
    pub fn settled(&self) -> bool {
        self.closed() && self.dirs.iter().all(|d| d.outstanding() == 0)
    }

    /// Whether a SYN (no ACK) with `seq` from `side` opens a new connection on this 4-tuple
    /// (port reuse, RFC 9293 3.4.1 / 3.6.1): after a close, or with another ISN.
    pub fn syn_starts_new(&self, side: usize, seq: u32) -> bool {
        if self.closed() {
            return self.dirs[side].isn != Some(seq) || self.dirs[side].has_data();
        }
        match self.dirs[side].isn {
            Some(i) => i != seq,
            None => self.dirs[0].has_data() || self.dirs[1].has_data(),
        }
    }

    /// A frame identical to a recent one of the same side, too soon to be a resend, or stale:
    /// every segment carries the sender's current RCV.NXT (RFC 9293 3.4), so a copy whose ACK
    /// field is older than one that side already sent (or lacks the ACK flag after it had it)
    /// was not sent again by TCP.
    ///
    /// A pure ACK while the peer has data outstanding beyond it may be a genuine duplicate ACK
    /// (RFC 5681 2: byte-identical without SACK or timestamps, and at a sender vantage no frame
    /// of the peer comes between them): only the stale rule applies to it.
    fn duplicate(&mut self, e: usize, t: i64, fp: Fingerprint) -> bool {
        let peer_seen = self.seen[1 - e];
        let pure = fp.len == 0 && fp.flags & (flags::SYN | flags::FIN) == 0;
        let may_be_dupack =
            pure && fp.flags & flags::ACK != 0 && serial::gt(self.dirs[1 - e].snd_nxt, fp.ack);
        let stale = match (fp.flags & flags::ACK != 0, self.last_ack[e]) {
            (true, Some(a)) => serial::lt(fp.ack, a),
            (false, Some(_)) => true,
            _ => false,
        };
        for slot in self.dup_ring[e].iter_mut() {
            if slot.0 == fp && slot.1 != i64::MIN {
                let dt = t - slot.1;
                let soon =
                    (0..=DUP_NS).contains(&dt) || (dt <= DUP_QUIET_NS && slot.2 == peer_seen);
                if (soon && !may_be_dupack) || (dt >= 0 && stale) {
                    slot.1 = t;
                    return true;
                }
            }
        }
        let n = self.dup_n[e];
        self.dup_ring[e][n % DUP_RING] = (fp, t, peer_seen);
        self.dup_n[e] = n + 1;
        false
    }

    /// RFC 7323 2.2: windows are scaled only when both SYNs carried the option, and never in a
    /// SYN. Without the handshake the shift is unknown and the raw window is used.
    fn scaled_window(&self, e: usize, raw: u16, syn: bool) -> u32 {
        match (self.opts[e].wscale, self.opts[1 - e].wscale) {
            (Some(s), Some(_)) if !syn => u32::from(raw) << s,
            _ => u32::from(raw),
        }
    }

    /// One captured segment from side `e`; `len` = payload bytes announced by IP.
    pub fn segment(
        &mut self,
        t_ns: i64,
        frame: u64,
        e: usize,
        seg: &TcpSegment<'_>,
        o: &Options,
        len: u32,
    ) {
        self.packets += 1;
        self.last_ns = self.last_ns.max(t_ns);
        self.last_frame = frame;
        let fl = seg.flags();
        let fp = Fingerprint {
            seq: seg.seq(),
            ack: seg.ack(),
            len,
            flags: fl,
            win: seg.window(),
            cksum: seg.checksum(),
        };
        if self.duplicate(e, t_ns, fp) {
            self.duplicates += 1;
            return;
        }
        self.seen[e] += 1;
        let syn = fl & flags::SYN != 0;
        let ack = fl & flags::ACK != 0;
        if ack {
            self.last_ack[e] = Some(match self.last_ack[e] {
                Some(a) if serial::gt(a, seg.ack()) => a,
                _ => seg.ack(),
            });
        }
        let fin = fl & flags::FIN != 0;
        if syn {
            let so = &mut self.opts[e];
            so.syn_seen = true;
            so.mss = o.mss.or(so.mss);
            so.wscale = o.wscale.or(so.wscale);
            so.sack_permitted |= o.sack_permitted;
            so.timestamps |= o.ts.is_some();
            if ack {
                self.synack_ns.get_or_insert(t_ns);
            } else if e == 0 {
                self.syn_ns.get_or_insert(t_ns);
            }
        }
        let c = SegCtx {
            t_ns,
            frame,
            rtt_hint_ns: self.rtt_hint_ns(),
            flow_start_ns: self.first_ns,
        };
        if ack {
            let peer = &mut self.dirs[1 - e];
            // The client acknowledges the other of two SYN-ACK streams (see `syn_isn`).
            if !peer.has_data() && peer.alt_isn == Some(seg.ack().wrapping_sub(1)) {
                std::mem::swap(&mut peer.isn, &mut peer.alt_isn);
                peer.restart(seg.ack());
            }
            let win = self.scaled_window(e, seg.window(), syn);
            let pure = len == 0 && !syn && !fin;
            self.dirs[1 - e].on_ack(&c, seg.ack(), win, o, pure);
            // RFC 9293 3.5: the third segment of the handshake acknowledges the SYN-ACK.
            if !syn
                && e == 0
                && self.hs_ack_ns.is_none()
                && self.synack_ns.is_some()
                && self.dirs[1].isn.map(|i| i.wrapping_add(1)) == Some(seg.ack())
            {
                self.hs_ack_ns = Some(t_ns);
            }
        }
        if syn && !self.syn_isn(&c, e, seg.seq()) {
            return;
        }
        // A pure ACK takes no sequence space: `on_data` would only start the direction.
        if len > 0 || syn || fin || !self.dirs[e].started() {
            let tsval = o.ts.map(|t| t.0);
            self.dirs[e].on_data(&c, seg.seq(), len, syn, fin, tsval);
        }
        if fl & flags::RST != 0 {
            self.rst = true;
        }
        if fin {
            self.fin[e] = true;
        }
    }

    /// A SYN from side `e` with another ISN than the one tracked, before any data: a second
    /// SYN-ACK stream (seen from some middleboxes and anycast servers). The newest is tracked;
    /// a SYN of the previous ISN again is counted as its retransmission without switching.
    /// Returns whether the segment should go on to the sequence tracking.
    fn syn_isn(&mut self, c: &SegCtx, e: usize, seq: u32) -> bool {
        let d = &mut self.dirs[e];
        match d.isn {
            Some(i) if i != seq && !d.has_data() => {
                if d.alt_isn == Some(seq) {
                    d.other_isn_retransmission(c, seq);
                    false
                } else {
                    d.alt_isn = Some(i);
                    d.isn = Some(seq);
                    d.restart(seq);
                    true
                }
            }
            _ => true,
        }
    }
}
