//! Heartbeat loss: HEARTBEATs matched to their HEARTBEAT-ACKs by the echoed heartbeat info
//! (RFC 9260 8.3), runs of unanswered ones per destination, bounded state.

use std::hash::Hasher;
use std::net::IpAddr;

use crate::fxhash::FxHasher;
use crate::packet::PacketCtx;

/// HEARTBEATs awaiting their ACK, per sending endpoint; the oldest beyond this is taken as lost.
pub(super) const MAX_PENDING: usize = 32;
/// Open loss runs (destinations with unanswered HEARTBEATs) per sending endpoint.
const MAX_RUNS: usize = 8;
/// Least wait for a HEARTBEAT-ACK before a HEARTBEAT counts as lost at the end: the grace is
/// 2 x max(latest heartbeat RTT, this).
const MIN_ANSWER_NS: i64 = 1_000_000_000;

#[derive(Debug, Clone, Copy)]
struct Pending {
    hash: u64,
    ts_ns: i64,
    frame: u64,
    dst: IpAddr,
}

/// Consecutive unanswered HEARTBEATs to one destination.
#[derive(Debug, Clone, Copy)]
struct Run {
    dst: IpAddr,
    first_ns: i64,
    first_frame: u64,
    count: u32,
}

/// A closed run of unanswered HEARTBEATs, ready to become a `heartbeat_loss` event.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Loss {
    /// The endpoint that sent the HEARTBEATs.
    pub by: u8,
    pub dst: IpAddr,
    pub first_ns: i64,
    pub first_frame: u64,
    pub count: u32,
    /// From the first unanswered HEARTBEAT to the ACK that closed the run (or the end).
    pub span_ns: i64,
    /// Frame of the HEARTBEAT-ACK that closed the run; None when closed at the end.
    pub closed_by_frame: Option<u64>,
}

/// Heartbeat matching state of one association (both directions).
#[derive(Debug, Clone, Default)]
pub(super) struct Heartbeats {
    /// Unanswered HEARTBEATs per sending endpoint, oldest first.
    pending: [Vec<Pending>; 2],
    /// Open runs of lost HEARTBEATs per sending endpoint.
    runs: [Vec<Run>; 2],
    /// Latest HEARTBEAT -> HEARTBEAT-ACK time.
    latest_rtt_ns: Option<i64>,
}

fn info_hash(info: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write_usize(info.len());
    h.write(info);
    h.finish()
}

impl Heartbeats {
    /// A HEARTBEAT from endpoint `s` to `ctx.dst`.
    pub fn heartbeat(&mut self, ctx: &PacketCtx, s: usize, info: &[u8], out: &mut Vec<Loss>) {
        if self.pending[s].len() >= MAX_PENDING {
            // Bounded: 32 later HEARTBEATs went out while this one got no answer: lost.
            let old = self.pending[s].remove(0);
            self.lost(s, old, out);
        }
        self.pending[s].push(Pending {
            hash: info_hash(info),
            ts_ns: ctx.ts_ns,
            frame: ctx.frame,
            dst: ctx.dst,
        });
    }

    /// A HEARTBEAT-ACK from endpoint `r` (answering endpoint 1 - r).
    pub fn ack(&mut self, ctx: &PacketCtx, r: usize, info: &[u8], out: &mut Vec<Loss>) {
        let s = 1 - r;
        let hash = info_hash(info);
        // RFC 9260 8.3: the ACK echoes the HEARTBEAT's info; the oldest equal one is answered.
        let (dst, idx) = match self.pending[s].iter().position(|p| p.hash == hash) {
            Some(i) => (self.pending[s][i].dst, Some(i)),
            // Not matched (HEARTBEAT not captured, or cut by the snap length): the ACK comes from
            // the destination it confirms (RFC 9260 8.3); answer the oldest one sent there, and
            // declare nothing lost on this weaker evidence.
            None => (ctx.src, None),
        };
        match idx {
            Some(i) => {
                let hb = self.pending[s].remove(i);
                self.latest_rtt_ns = Some(ctx.ts_ns.saturating_sub(hb.ts_ns).max(0));
                // The HEARTBEATs to that destination sent before the answered one got no ACK.
                let (mut k, mut before) = (0, i);
                while k < before {
                    if self.pending[s][k].dst == dst {
                        let p = self.pending[s].remove(k);
                        before -= 1;
                        self.lost(s, p, out);
                    } else {
                        k += 1;
                    }
                }
            }
            None => {
                if let Some(i) = self.pending[s].iter().position(|p| p.dst == dst) {
                    self.pending[s].remove(i);
                }
            }
        }
        // An ACK for that destination ends its run of unanswered HEARTBEATs.
        if let Some(i) = self.runs[s].iter().position(|r| r.dst == dst) {
            let run = self.runs[s].remove(i);
            out.push(close(s, run, ctx.ts_ns, Some(ctx.frame)));
        }
    }

    /// End of the analysis at `end_ns`: HEARTBEATs older than the answer grace are lost, and
    /// every open run is closed. `heard` tells which endpoints were seen sending at all: the
    /// HEARTBEATs of an endpoint whose peer never appears in the capture (one direction only)
    /// are not called lost.
    pub fn finish(&mut self, end_ns: i64, heard: [bool; 2], out: &mut Vec<Loss>) {
        // A HEARTBEAT within 2 x (latest heartbeat RTT, at least 1 s) of the end could not be
        // answered yet.
        let grace = 2 * self.latest_rtt_ns.unwrap_or(0).max(MIN_ANSWER_NS);
        for s in 0..2 {
            let pending = std::mem::take(&mut self.pending[s]);
            if !heard[1 - s] {
                self.runs[s].clear();
                continue;
            }
            for p in pending {
                if end_ns.saturating_sub(p.ts_ns) > grace {
                    self.lost(s, p, out);
                }
            }
            for run in std::mem::take(&mut self.runs[s]) {
                out.push(close(s, run, end_ns, None));
            }
        }
    }

    /// HEARTBEATs of endpoint `s` awaiting their ACK.
    #[cfg(test)]
    pub fn pending_len(&self, s: usize) -> usize {
        self.pending[s].len()
    }

    /// One more unanswered HEARTBEAT of endpoint `s`, added to its destination's run.
    fn lost(&mut self, s: usize, p: Pending, out: &mut Vec<Loss>) {
        if let Some(run) = self.runs[s].iter_mut().find(|r| r.dst == p.dst) {
            run.count += 1;
            return;
        }
        if self.runs[s].len() >= MAX_RUNS {
            // Bounded: the oldest open run is reported as it stands.
            let old = self.runs[s].remove(0);
            out.push(close(s, old, p.ts_ns, None));
        }
        self.runs[s].push(Run {
            dst: p.dst,
            first_ns: p.ts_ns,
            first_frame: p.frame,
            count: 1,
        });
    }
}

fn close(s: usize, run: Run, end_ns: i64, closed_by_frame: Option<u64>) -> Loss {
    Loss {
        by: s as u8,
        dst: run.dst,
        first_ns: run.first_ns,
        first_frame: run.first_frame,
        count: run.count,
        span_ns: end_ns.saturating_sub(run.first_ns).max(0),
        closed_by_frame,
    }
}
