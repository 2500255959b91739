//! The analyses that need nothing back from the tracker (lifecycle, streams, stalls), played
//! apart from it: the pass writes what they read into a `SideLog` (one record per chunk, in
//! capture order) and a `SidePlayer` feeds it to them, on the emitting thread when the pass is
//! pipelined, so that the thread that tracks associations and infers timers does less.

use std::collections::HashMap;

use crate::fxhash::FxBuild;
use crate::lifecycle::Lifecycle;
use crate::packet::PacketCtx;
use crate::sctp::{Chunk, ChunkView, DataChunk};
use crate::stalls::Stalls;
use crate::streams::Streams;

/// What the side analyses hold of one association (moved into it when it is handed on).
#[derive(Debug, Clone, Default)]
pub struct SideState {
    pub lifecycle: Lifecycle,
    pub streams: Streams,
    pub stalls: Stalls,
}

/// A chunk's header fields and where it sits (`ChunkView` without its value).
#[derive(Debug, Clone, Copy)]
struct Header {
    ctype: u8,
    flags: u8,
    length: u16,
    truncated: bool,
    offset: u32,
}

impl Header {
    fn of(view: &ChunkView<'_>) -> Self {
        Header {
            ctype: view.ctype,
            flags: view.flags,
            length: view.length,
            truncated: view.truncated,
            offset: view.offset as u32,
        }
    }

    fn view<'a>(&self, value: &'a [u8]) -> ChunkView<'a> {
        ChunkView {
            ctype: self.ctype,
            flags: self.flags,
            length: self.length,
            value,
            offset: self.offset as usize,
            truncated: self.truncated,
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum What {
    /// A DATA / I-DATA chunk, decoded (no analysis here reads its payload).
    Data(DataChunk),
    /// A SACK / NR-SACK: cumulative TSN ack, a_rwnd, whether it has gap blocks and the
    /// highest gap block end (an offset from the cumulative TSN ack, RFC 9260 3.3.4).
    Sack {
        cum: u32,
        a_rwnd: u32,
        gaps: bool,
        highest_end: Option<u16>,
    },
    /// Any other chunk, decoded again from its value at `bytes[start..end]` (decoding reads
    /// nothing but the view, so it gives what the pass got).
    Chunk(Header, u32, u32),
    /// A chunk that did not decode (`Lifecycle::unparsed`), value at `bytes[start..end]`.
    Unparsed(Header, u32, u32),
    /// A packet after the association ended: its chunk types at `bytes[start..end]`.
    AfterEnd(u32, u32),
    /// This association's record restarts association `old`; endpoint `by` sent the INIT.
    Restart { old: u32, by: u8 },
}

#[derive(Debug, Clone, Copy)]
struct Record {
    /// Association id (`Association::id`).
    a: u32,
    /// Index of the packet in `SideLog::packets`.
    packet: u32,
    sender: u8,
    what: What,
}

/// What the side analyses read, in capture order, since the log was last played.
#[derive(Debug, Default)]
pub struct SideLog {
    packets: Vec<PacketCtx>,
    records: Vec<Record>,
    bytes: Vec<u8>,
}

impl SideLog {
    /// The packet the next records belong to.
    #[inline]
    pub fn packet(&mut self, ctx: &PacketCtx) {
        self.packets.push(*ctx);
    }

    #[inline]
    fn push(&mut self, a: u32, sender: u8, what: What) {
        debug_assert!(!self.packets.is_empty(), "a record before its packet");
        self.records.push(Record {
            a,
            packet: self.packets.len().saturating_sub(1) as u32,
            sender,
            what,
        });
    }

    /// Copies `b` into the log's bytes; returns its range.
    #[inline]
    fn keep(&mut self, b: &[u8]) -> (u32, u32) {
        let start = self.bytes.len() as u32;
        self.bytes.extend_from_slice(b);
        (start, self.bytes.len() as u32)
    }

    /// A chunk of association `a` sent by endpoint `sender`, decoded (`Some`) or not.
    #[inline]
    pub fn chunk(&mut self, a: u32, sender: u8, view: &ChunkView<'_>, chunk: Option<&Chunk<'_>>) {
        let what = match chunk {
            Some(Chunk::Data(d)) => What::Data(*d),
            Some(Chunk::Sack(k)) => What::Sack {
                cum: k.cum_tsn_ack,
                a_rwnd: k.a_rwnd,
                gaps: k.n_gap_blocks > 0,
                highest_end: k.gap_blocks().map(|g| g.end).max(),
            },
            Some(_) => {
                let (s, e) = self.keep(view.value);
                What::Chunk(Header::of(view), s, e)
            }
            None => {
                let (s, e) = self.keep(view.value);
                What::Unparsed(Header::of(view), s, e)
            }
        };
        self.push(a, sender, what);
    }

    /// A packet of association `a` after its end, with its chunk types.
    pub fn after_end(&mut self, a: u32, sender: u8, chunk_types: &[u8]) {
        let (s, e) = self.keep(chunk_types);
        self.push(a, sender, What::AfterEnd(s, e));
    }

    /// Association `a` (a new record) restarts association `old` (RFC 9260 5.2.2), by an INIT
    /// from endpoint `by` of the old one.
    pub fn restart(&mut self, a: u32, old: u32, by: u8) {
        self.push(a, by, What::Restart { old, by });
    }

    /// An empty log with this one's capacities (a log is refilled at about the same size).
    pub fn like(&self) -> SideLog {
        SideLog {
            packets: Vec::with_capacity(self.packets.capacity()),
            records: Vec::with_capacity(self.records.capacity()),
            bytes: Vec::with_capacity(self.bytes.capacity()),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    pub fn clear(&mut self) {
        self.packets.clear();
        self.records.clear();
        self.bytes.clear();
    }
}

/// Feeds logs to the side analyses of every association not yet handed on.
#[derive(Debug, Default)]
pub struct SidePlayer {
    states: HashMap<u32, Box<SideState>, FxBuild>,
}

impl SidePlayer {
    /// Plays one log, in order.
    pub fn play(&mut self, log: &SideLog) {
        // Consecutive records mostly belong to one association: its state is looked up once.
        let mut current: Option<(u32, &mut SideState)> = None;
        for r in &log.records {
            let ctx = &log.packets[r.packet as usize];
            if let What::Restart { old, by } = r.what {
                current = None;
                let st = self.states.entry(old).or_default();
                st.lifecycle.restarted(ctx, by, r.a as usize);
                let st = self.states.entry(r.a).or_default();
                st.lifecycle.restart_of(ctx, old as usize);
                continue;
            }
            let st = match current {
                Some((a, ref mut st)) if a == r.a => st,
                _ => {
                    current = None;
                    let st = self.states.entry(r.a).or_default();
                    &mut current.insert((r.a, st)).1
                }
            };
            feed(st, ctx, r, &log.bytes);
        }
    }

    /// What the side analyses learnt of association `id`, taken (when it is handed on, or at
    /// the capture's end: `Association::set_side`).
    pub fn take(&mut self, id: usize) -> Option<Box<SideState>> {
        self.states.remove(&(id as u32))
    }
}

/// One record to the side analyses of its association.
#[inline]
fn feed(st: &mut SideState, ctx: &PacketCtx, r: &Record, bytes: &[u8]) {
    let range = |s: u32, e: u32| &bytes[s as usize..e as usize];
    match r.what {
        What::Data(d) => {
            st.lifecycle.data(ctx, r.sender);
            st.streams.data_chunk(ctx, r.sender, &d);
            st.stalls.data_chunk(ctx, r.sender, &d);
        }
        What::Sack {
            cum,
            a_rwnd,
            gaps,
            highest_end,
        } => {
            st.lifecycle.sack(ctx, r.sender);
            st.stalls
                .sack_chunk(ctx, r.sender, cum, a_rwnd, gaps, highest_end);
        }
        What::Chunk(h, s, e) => {
            let view = h.view(range(s, e));
            // Decodes as it did in the pass (the same view); an error cannot come back.
            if let Ok(c) = view.parse() {
                st.lifecycle.chunk(ctx, r.sender, &view, &c);
                if Streams::wants(view.ctype) {
                    st.streams.chunk(ctx, r.sender, &view, &c);
                }
                if Stalls::wants(view.ctype) {
                    st.stalls.chunk(ctx, r.sender, &c);
                }
            }
        }
        What::Unparsed(h, s, e) => {
            st.lifecycle.unparsed(ctx, r.sender, &h.view(range(s, e)));
        }
        What::AfterEnd(s, e) => st.lifecycle.after_end(ctx, r.sender, range(s, e)),
        What::Restart { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sctp::SctpPacket;

    /// An SCTP packet (common header, then the chunks as given).
    fn packet(chunks: &[&[u8]]) -> Vec<u8> {
        let mut p = vec![0, 1, 0, 2, 0, 0, 0, 7, 0, 0, 0, 0];
        for c in chunks {
            p.extend_from_slice(c);
        }
        p
    }

    #[test]
    fn played_log_gives_what_direct_feeding_gives() {
        // DATA (TSN 1, stream 3, B+E), SACK (cum ack 1, a_rwnd 0: a closed window),
        // HEARTBEAT, SHUTDOWN.
        let data: &[u8] = &[0, 3, 0, 20, 0, 0, 0, 1, 0, 3, 0, 0, 0, 0, 0, 46, 1, 2, 3, 4];
        let sack: &[u8] = &[3, 0, 0, 16, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
        let hb: &[u8] = &[4, 0, 0, 12, 0, 1, 0, 8, 9, 9, 9, 9];
        let shutdown: &[u8] = &[7, 0, 0, 8, 0, 0, 0, 1];
        let pkts = [
            (packet(&[data]), 0u8),
            (packet(&[sack]), 1),
            (packet(&[hb]), 0),
            (packet(&[shutdown]), 0),
        ];
        let mut direct = SideState::default();
        let mut log = SideLog::default();
        for (i, (bytes, sender)) in pkts.iter().enumerate() {
            let ctx = PacketCtx::test(
                i as u64 + 1,
                i as f64 * 10.0,
                ("10.0.0.1", 1),
                ("10.0.0.2", 2),
            );
            log.packet(&ctx);
            for v in SctpPacket::new_checked(&bytes[..]).unwrap().chunks(0) {
                let v = v.unwrap();
                let c = v.parse().unwrap();
                direct.lifecycle.chunk(&ctx, *sender, &v, &c);
                if Streams::wants(v.ctype) {
                    direct.streams.chunk(&ctx, *sender, &v, &c);
                }
                if Stalls::wants(v.ctype) {
                    direct.stalls.chunk(&ctx, *sender, &c);
                }
                log.chunk(5, *sender, &v, Some(&c));
            }
        }
        let mut player = SidePlayer::default();
        player.play(&log);
        let played = player.states.remove(&5).expect("state of association 5");
        assert!(player.states.is_empty());
        assert_eq!(
            format!("{:?}", played.lifecycle),
            format!("{:?}", direct.lifecycle)
        );
        assert_eq!(
            format!("{:?}", played.streams),
            format!("{:?}", direct.streams)
        );
        assert_eq!(
            format!("{:?}", played.stalls),
            format!("{:?}", direct.stalls)
        );
        assert!(
            format!("{:?}", played.streams).contains("sid: 3"),
            "{:?}",
            played.streams
        );
        assert!(
            format!("{:?}", played.stalls).contains("closed_since: Some"),
            "{:?}",
            played.stalls
        );
    }

    #[test]
    fn restart_records_reach_both_associations() {
        let mut log = SideLog::default();
        let ctx = PacketCtx::test(9, 5.0, ("10.0.0.1", 1), ("10.0.0.2", 2));
        log.packet(&ctx);
        log.restart(2, 1, 0);
        let mut player = SidePlayer::default();
        player.play(&log);
        let old = &player.states[&1].lifecycle;
        let new = &player.states[&2].lifecycle;
        assert!(format!("{old:?}").contains("Restart"), "{old:?}");
        assert!(
            format!("{new:?}").contains("restart_of: Some(1)"),
            "{new:?}"
        );
    }
}
