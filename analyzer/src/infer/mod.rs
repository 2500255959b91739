//! Timer inference per association direction (METRICS.md "Vantage point" .. "Delivery"): fed chunk
//! by chunk during the single pass with bounded state, summarised once at the end.

mod chain;
pub mod direction;
mod dst;
pub mod events;
mod failover;
pub mod heartbeat;
pub mod settings;
pub mod stats;
pub mod summary;
pub mod whatif;

use std::net::IpAddr;

use crate::packet::PacketCtx;
use crate::sctp::{Chunk, ChunkView, DataChunk, SackChunk};
use direction::DirInfer;
pub use summary::DirSummary;

/// A SACK within this time of a HEARTBEAT from the same endpoint was flushed by it.
const HB_FLUSH_NS: i64 = 2_000_000;

/// Outstanding heartbeats remembered per endpoint.
const MAX_HB: usize = 32;

/// Addresses whose HEARTBEAT spacing is followed.
const MAX_HB_ADDRS: usize = 16;

#[derive(Debug, Clone, Copy)]
struct PendingHb {
    hash: u64,
    ts_ns: i64,
    frame: u64,
    dst: IpAddr,
}

/// A request sent by one endpoint that the peer answers at once (INIT, COOKIE-ECHO).
#[derive(Debug, Clone, Copy, Default)]
struct Handshake {
    init_ns: Option<i64>,
    init_count: u32,
    first_init_ns: Option<i64>,
    cookie_echo_ns: Option<i64>,
    cookie_echo_count: u32,
    first_cookie_echo_ns: Option<i64>,
}

/// Inference state of one association: one `DirInfer` per DATA-sending endpoint.
#[derive(Debug, Clone, Default)]
pub struct AssocInfer {
    pub dirs: [DirInfer; 2],
    hbs: [Vec<PendingHb>; 2],
    hs: [Handshake; 2],
    /// Min latency of requests from endpoint i answered by the peer (vantage evidence), ns.
    pub resp_min_ns: [Option<i64>; 2],
    /// First retransmission interval of INIT / COOKIE-ECHO before any RTT sample (RTO.Initial).
    pub rto_initial_samples: Vec<i64>,
    pub heartbeats: [u64; 2],
    pub heartbeat_acks: [u64; 2],
    pub deadline_ns: Option<i64>,
    /// Last packet with a HEARTBEAT sent by each endpoint.
    last_hb_pkt_ns: [Option<i64>; 2],
    /// Last HEARTBEAT to each address (a few), and the shortest spacing of two HEARTBEATs to one
    /// address before any failover: at least the heartbeat interval (RFC 9260 8.3: interval +
    /// RTO with jitter), which a PF probe one RTO apart undercuts (RFC 7829 4).
    last_hb_to: Vec<(IpAddr, i64)>,
    pub hb_gap_min_ns: Option<i64>,
    /// Per endpoint: whether its stack keeps the RTO estimator in ticks (a Linux kernel: true;
    /// usrsctp / dcsctp: false; unknown: None). Set from the endpoint's identified stack before
    /// `finish`.
    pub tick_estimator: [Option<bool>; 2],
    /// Set for an endpoint whose stack does not restart T3-rtx on a SACK (usrsctp / FreeBSD),
    /// from its INIT / INIT-ACK (`Association::timer_model_from_stack`).
    pub no_t3_restart: [bool; 2],
    /// Summaries per direction, filled by `finish`.
    pub summary: [Option<DirSummary>; 2],
    finished: bool,
}

fn hash_bytes(b: &[u8]) -> u64 {
    // FNV-1a: heartbeat info is opaque and only compared for equality.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &x in b {
        h ^= x as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h ^ (b.len() as u64)
}

impl AssocInfer {
    fn resp(&mut self, who: usize, lat: i64) {
        if lat >= 0 {
            let m = &mut self.resp_min_ns[who];
            *m = Some(m.map_or(lat, |x| x.min(lat)));
        }
    }

    pub fn packet_start(&mut self, _ctx: &PacketCtx, sender: u8) {
        self.dirs[sender as usize].packet_start();
    }

    /// A DATA or I-DATA chunk sent by endpoint `sender` (what `chunk` does with one; the pass
    /// calls it directly, without matching the chunk's type once more).
    #[inline(always)]
    pub fn data(&mut self, ctx: &PacketCtx, sender: u8, d: &DataChunk) {
        let deadline = self.deadline_ns;
        self.dirs[usize::from(sender & 1)].data(ctx, d, deadline);
    }

    /// A SACK or NR-SACK chunk sent by endpoint `sender`, acknowledging the peer's DATA.
    #[inline(always)]
    pub fn sack(&mut self, ctx: &PacketCtx, sender: u8, sk: &SackChunk<'_>) {
        let s = usize::from(sender & 1);
        let deadline = self.deadline_ns;
        let hb_flush = self.last_hb_pkt_ns[s].is_some_and(|t| ctx.ts_ns - t <= HB_FLUSH_NS);
        self.dirs[1 - s].sack(ctx, sk, deadline, hb_flush);
    }

    pub fn chunk(&mut self, ctx: &PacketCtx, sender: u8, _view: &ChunkView<'_>, chunk: &Chunk<'_>) {
        let s = sender as usize;
        let peer = 1 - s;
        match chunk {
            Chunk::Data(d) => self.data(ctx, sender, d),
            Chunk::Sack(sk) => self.sack(ctx, sender, sk),
            Chunk::Heartbeat { ack: false, info } => {
                // RFC 9260 8.3: the HEARTBEAT-ACK echoes the info unchanged.
                self.heartbeats[s] += 1;
                // A HEARTBEAT flushes a pending delayed SACK (bundled, or sent right after it):
                // such SACKs say nothing about the SACK delay.
                self.last_hb_pkt_ns[s] = Some(ctx.ts_ns);
                self.dirs[peer].drop_lone_acks_since(ctx.ts_ns - HB_FLUSH_NS);
                self.dirs[s].heartbeat_from_sender();
                self.dirs[s].heartbeat_to(ctx);
                if self.dirs.iter().all(|d| d.failovers.is_empty()) {
                    match self.last_hb_to.iter().position(|(a, _)| *a == ctx.dst) {
                        Some(i) => {
                            let gap = ctx.ts_ns - self.last_hb_to[i].1;
                            self.last_hb_to[i].1 = ctx.ts_ns;
                            if gap > 0 {
                                self.hb_gap_min_ns =
                                    Some(self.hb_gap_min_ns.map_or(gap, |g| g.min(gap)));
                            }
                        }
                        None if self.last_hb_to.len() < MAX_HB_ADDRS => {
                            self.last_hb_to.push((ctx.dst, ctx.ts_ns));
                        }
                        None => {}
                    }
                }
                // RFC 9260 8.3: the destination's heartbeat period (`heartbeat`).
                let dir = &mut self.dirs[s];
                let p = dir.dst(ctx.dst);
                let d = &mut dir.dsts[p as usize];
                let data_sent = d.new_data_chunks + d.retransmissions;
                let est = (d.est_rto_ms(), d.est_rto_coarse_ms());
                d.hb_period.sent(ctx.ts_ns, data_sent, est);
                let hbs = &mut self.hbs[s];
                if hbs.len() >= MAX_HB {
                    hbs.remove(0);
                }
                hbs.push(PendingHb {
                    hash: hash_bytes(info),
                    ts_ns: ctx.ts_ns,
                    frame: ctx.frame,
                    dst: ctx.dst,
                });
            }
            Chunk::Heartbeat { ack: true, info } => {
                self.heartbeat_acks[s] += 1;
                let h = hash_bytes(info);
                if let Some(i) = self.hbs[peer].iter().position(|p| p.hash == h) {
                    let hb = self.hbs[peer].remove(i);
                    let rtt = ctx.ts_ns - hb.ts_ns;
                    self.resp(peer, rtt);
                    let dir = &mut self.dirs[peer];
                    let path = dir.dst(hb.dst);
                    let d = &mut dir.dsts[path as usize];
                    d.hb_rtt.push(rtt as f64 / 1e6);
                    d.last_hb_ack_ns = Some(ctx.ts_ns);
                    d.hb_unanswered_since = None;
                    d.hb_strikes = Default::default();
                    // RFC 9260 8.3: a HEARTBEAT-ACK clears the destination's error counter and
                    // gives an RTT measurement (which ends any RTO backoff, 6.3.1 C2/C3).
                    d.heartbeat_acked(rtt as f64 / 1e6);
                    let est = d.est_rto_coarse_ms();
                    d.hb_period.acked(hb.ts_ns, ctx.ts_ns, est);
                    if dir.rtt_rows.len() < direction::MAX_ROWS {
                        dir.rtt_rows.push(events::RttSample {
                            kind: events::RttKind::Heartbeat,
                            path,
                            t_ns: ctx.ts_ns,
                            rtt_ns: rtt,
                            frame_req: hb.frame,
                            frame_ack: ctx.frame,
                            packets_acked: 1,
                            tsn: None,
                            est_rto_ms: f64::NAN,
                        });
                    }
                }
            }
            Chunk::Init(init) if !init.ack => {
                // RFC 9260 5.1 / 6.3.1 C1: INIT retransmission (T1-init) runs on RTO.Initial.
                let hs = &mut self.hs[s];
                hs.init_count += 1;
                if hs.init_count == 2 {
                    if let Some(first) = hs.first_init_ns {
                        self.rto_initial_samples.push(ctx.ts_ns - first);
                    }
                }
                hs.first_init_ns.get_or_insert(ctx.ts_ns);
                hs.init_ns = Some(ctx.ts_ns);
            }
            Chunk::Init(_) => {
                if let Some(t) = self.hs[peer].init_ns {
                    self.resp(peer, ctx.ts_ns - t);
                }
            }
            Chunk::CookieEcho { .. } => {
                let hs = &mut self.hs[s];
                hs.cookie_echo_count += 1;
                if hs.cookie_echo_count == 2 {
                    if let Some(first) = hs.first_cookie_echo_ns {
                        self.rto_initial_samples.push(ctx.ts_ns - first);
                    }
                }
                hs.first_cookie_echo_ns.get_or_insert(ctx.ts_ns);
                hs.cookie_echo_ns = Some(ctx.ts_ns);
            }
            Chunk::CookieAck => {
                if let Some(t) = self.hs[peer].cookie_echo_ns {
                    self.resp(peer, ctx.ts_ns - t);
                }
            }
            _ => {}
        }
    }

    pub fn packet_end(&mut self, _ctx: &PacketCtx, _sender: u8) {}

    /// True when the capture was taken at endpoint `e` (its requests take a full round trip).
    pub fn capture_at(&self, e: usize) -> bool {
        match (self.resp_min_ns[e], self.resp_min_ns[1 - e]) {
            (Some(a), Some(b)) => b.saturating_mul(5) < a && a.saturating_sub(b) > 200_000,
            _ => false,
        }
    }

    /// Drops what only the per-event tables need once the summaries exist (bounded memory for
    /// associations that ended while the capture goes on).
    pub fn compact(&mut self) {
        for (d, sum) in self.dirs.iter_mut().zip(self.summary.iter_mut()) {
            d.compact(sum.as_ref());
            if let Some(s) = sum {
                s.sack_delay_samples = Vec::new();
            }
        }
        self.hbs = Default::default();
    }

    /// An association that ended: summarised, and its per-event detail dropped unless the rows
    /// are wanted (bounded memory over long captures).
    pub fn finish_ended(&mut self, keep_rows: bool) {
        self.finish();
        if !keep_rows {
            self.compact();
        }
    }

    /// Computes the per-direction summaries (vantage, SACK delay, RTO, PMR, spurious failovers).
    /// Runs once: when the association ends, or at the end of the capture.
    pub fn finish(&mut self) {
        if std::mem::replace(&mut self.finished, true) {
            return;
        }
        for s in 0..2 {
            // Data RTT samples are request/response latencies too.
            if let Some(m) = self.dirs[s]
                .dsts
                .iter()
                .filter_map(|d| d.rtt.min())
                .reduce(f64::min)
            {
                self.resp(s, (m * 1e6) as i64);
            }
        }
        for s in 0..2 {
            if self.dirs[s].data_chunks == 0 {
                continue;
            }
            let sum = summary::summarise(self, s);
            self.summary[s] = Some(sum);
        }
    }
}
