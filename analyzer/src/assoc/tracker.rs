//! Maps each SCTP packet to its association and sending endpoint by ports and verification tags
//! (RFC 9260 8.5), creating associations for INITs, restarts and captures that start mid-way.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;

use super::accounting::UnassocReason;
use super::{reflected_tag, Association, Endpoint, PacketCtx};
use crate::sctp::{types, Chunk, ChunkView};

/// Where `Tracker::classify` put a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Classified {
    /// Association index, sending endpoint, path row; `ended`: the association had already ended
    /// (ABORT, SHUTDOWN-COMPLETE or restart) before this packet: a packet after its end.
    Assoc {
        a: u32,
        sender: u8,
        path: usize,
        ended: bool,
    },
    /// In no association, and why (RFC 9260 8.4, 8.5, 8.5.1).
    Unassociated(UnassocReason),
}

/// What the `on_*` lookups found.
type Found = Result<(u32, u8), UnassocReason>;

/// Bounds on the tracker's state, so that crafted captures cannot exhaust memory.
#[derive(Debug, Clone, Copy)]
pub struct TrackerLimits {
    /// Associations kept at once (ended ones handed to a streaming sink no longer count);
    /// packets of further new associations are counted but not tracked. About 10 KB each.
    pub max_associations: usize,
    /// Addresses kept per endpoint.
    pub max_addresses: usize,
    /// Open associations per port pair that still miss a tag and so may be paired with a later
    /// packet (mid-capture start, INIT collision): the oldest beyond this can no longer be. Bounds
    /// the per-packet scan (a capture of distinct tags on one port pair was quadratic).
    pub max_unpaired: usize,
}

impl Default for TrackerLimits {
    fn default() -> Self {
        TrackerLimits {
            max_associations: 20_000,
            max_addresses: 64,
            max_unpaired: 256,
        }
    }
}

use crate::fxhash::FxBuild;

/// Key of the tag index: (port of the endpoint that owns the tag, peer port, tag). A packet sent
/// *to* that endpoint carries the tag (RFC 9260 8.5).
type TagKey = (u16, u16, u32);

/// How long (capture time) a retired association's tags stay known, so that its late packets
/// are counted as such: RFC 9260 9.2 bounds the shutdown with the T5-shutdown-guard timer, "5
/// times RTO.Max" (5 x 60 s). After that its index entries go (memory flat over any number of
/// associations).
const RETIRED_GRACE_NS: i64 = 300_000_000_000;

/// A retired association still indexed: (retired at, id, port key, its endpoints' tag keys).
type Retired = (i64, u32, (u16, u16), [Option<TagKey>; 2]);

/// Association reconstruction state for one capture.
#[derive(Debug, Default)]
pub struct Tracker {
    /// Associations by id; None once retired (reported and dropped while the pass goes on).
    assocs: Vec<Option<Box<Association>>>,
    by_tag: HashMap<TagKey, (u32, u8), FxBuild>,
    /// The last `by_tag` hit of each direction of travel (`tag_lookup`): packets come in runs
    /// of one association, so most lookups end here without hashing. Emptied whenever `by_tag`
    /// changes.
    tag_hits: [Option<(TagKey, (u32, u8))>; 2],
    by_ports: HashMap<(u16, u16), Vec<u32>, FxBuild>,
    /// Retired associations still indexed: (retired at, id, port key, the endpoints' tag keys),
    /// oldest first.
    retired: VecDeque<Retired>,
    /// Associations tracked and not retired (the `max_associations` bound).
    live_count: usize,
    limits: TrackerLimits,
    /// An established association that the last classified INIT restarted (RFC 9260 5.2.2): it
    /// ended there; the caller takes it (`take_restarted`).
    restarted: Option<u32>,
    /// Set once when `max_associations` was hit.
    pub limit_warning: Option<String>,
    /// Set once when `max_unpaired` was hit.
    pub unpaired_warning: Option<String>,
    /// New associations keep no rows that only tables read (`DirInfer::skip_table_rows`).
    pub skip_table_rows: bool,
    /// An association that ended (ABORT, SHUTDOWN-COMPLETE, restart) stops counting toward
    /// `max_associations` at once (streaming: it is handed on and dropped soon after).
    pub release_ended: bool,
}

impl Tracker {
    pub fn new(limits: TrackerLimits) -> Self {
        Tracker {
            limits,
            ..Default::default()
        }
    }

    /// The associations not retired, in id order.
    pub fn into_associations(self) -> Vec<Association> {
        self.assocs.into_iter().flatten().map(|b| *b).collect()
    }

    /// A live association (ids come from `classify`, which never returns a retired one).
    pub fn get_mut(&mut self, idx: u32) -> &mut Association {
        self.assocs[idx as usize]
            .as_deref_mut()
            .expect("classify returns live associations")
    }

    /// Drops an association that has been reported: its tags stay known, so that late packets
    /// of it (a retransmitted SHUTDOWN-COMPLETE) are counted as such, not as a new association.
    pub fn retire(&mut self, idx: u32, now_ns: i64) -> Option<Box<Association>> {
        let assoc = self.assocs.get_mut(idx as usize)?.take()?;
        if !(self.release_ended && assoc.closed_ns.is_some()) {
            self.live_count -= 1;
        }
        // The keys `register` gave the endpoints' tags (a tag replaced by a restart or an INIT
        // collision belongs to the association that replaced it, or goes with the bound below).
        let e = &assoc.endpoints;
        let keys = [0, 1].map(|i| e[i].vtag.map(|t| (e[i].port, e[1 - i].port, t)));
        self.retired
            .push_back((now_ns, idx, assoc.port_key(), keys));
        Some(assoc)
    }

    /// Forgets the index entries of associations retired longer than the grace period ago.
    fn prune(&mut self, now_ns: i64) {
        while let Some(&(at, id, ports, keys)) = self.retired.front() {
            if now_ns.saturating_sub(at) <= RETIRED_GRACE_NS {
                break;
            }
            self.retired.pop_front();
            for k in keys.into_iter().flatten() {
                if self.by_tag.get(&k).is_some_and(|&(a, _)| a == id) {
                    self.by_tag.remove(&k);
                    self.tag_hits = [None; 2];
                }
            }
            if let Some(ids) = self.by_ports.get_mut(&ports) {
                ids.retain(|&a| a != id);
                if ids.is_empty() {
                    self.by_ports.remove(&ports);
                }
            }
        }
    }

    /// Associations met so far (ended and retired ones included): indices are never reused.
    pub fn created(&self) -> u64 {
        self.assocs.len() as u64
    }

    /// Packets the peer of endpoint `sender` has sent in live association `a` (the duplicate
    /// filter's "nothing from the peer in between").
    #[inline]
    pub fn peer_sent(&self, a: u32, sender: u8) -> Option<u64> {
        Some(self.live(a)?.sent[1 - usize::from(sender & 1)])
    }

    /// A live association, if `a` is one.
    pub fn live_mut(&mut self, a: u32) -> Option<&mut Association> {
        self.assocs.get_mut(a as usize)?.as_deref_mut()
    }

    fn live(&self, a: u32) -> Option<&Association> {
        self.assocs.get(a as usize)?.as_deref()
    }

    /// The association that the last classified INIT restarted, once.
    pub fn take_restarted(&mut self) -> Option<u32> {
        self.restarted.take()
    }

    /// Finds (or creates) the association of a packet from its header and first chunk and
    /// counts the packet there, or says why it belongs to none.
    #[inline(always)]
    pub fn classify(&mut self, ctx: &PacketCtx, first: Option<&Chunk<'_>>) -> Classified {
        // DATA and SACK, most packets' first chunk, are told apart before the match's jump; the
        // last tag-index hit of the packet's direction of travel answers most of them
        // (`tag_lookup`, which `on_other` asks first), without a call.
        if matches!(first, Some(Chunk::Data(_) | Chunk::Sack(_))) {
            let key = (ctx.dst_port, ctx.src_port, ctx.vtag);
            if let Some((k, (a, to))) = self.tag_hits[usize::from(key.0 < key.1)] {
                if k == key {
                    return self.count_in(ctx, a, 1 - to);
                }
            }
        }
        self.classify_any(ctx, first)
    }

    /// `classify` for any packet (made out of line: `classify` inlines the common case only).
    #[inline(never)]
    fn classify_any(&mut self, ctx: &PacketCtx, first: Option<&Chunk<'_>>) -> Classified {
        let found = match first {
            Some(Chunk::Init(init)) if !init.ack => self.on_init(ctx, init.initiate_tag),
            Some(Chunk::Init(init)) => self.on_init_ack(ctx, init.initiate_tag),
            Some(c) if reflected_tag(c) => self.on_reflected(ctx, c),
            _ => self.on_other(ctx, first),
        };
        match found {
            Ok((a, sender)) => self.count_in(ctx, a, sender),
            Err(why) => Classified::Unassociated(why),
        }
    }

    /// Counts a packet from endpoint `sender` in association `a`, unless the association was
    /// reported already or the packet would grow an endpoint's addresses past the bound.
    #[inline(always)]
    fn count_in(&mut self, ctx: &PacketCtx, a: u32, sender: u8) -> Classified {
        let max_addr = self.limits.max_addresses;
        let Some(assoc) = self.assocs[a as usize].as_deref_mut() else {
            return Classified::Unassociated(UnassocReason::AfterReportedEnd);
        };
        if assoc.endpoints[0].addresses.len() >= max_addr
            || assoc.endpoints[1].addresses.len() >= max_addr
        {
            // Bounded: a crafted capture cannot grow an endpoint's address list without end.
            let known = assoc.endpoints[sender as usize].has_addr(&ctx.src)
                && assoc.endpoints[1 - sender as usize].has_addr(&ctx.dst);
            if !known {
                return Classified::Unassociated(UnassocReason::Limit);
            }
        }
        let ended = assoc.closed_ns.is_some();
        let path = assoc.count_packet(ctx, sender);
        Classified::Assoc {
            a,
            sender,
            path,
            ended,
        }
    }

    /// Counts one chunk (after `classify`).
    #[inline(always)]
    pub fn chunk(
        &mut self,
        a: u32,
        ctx: &PacketCtx,
        sender: u8,
        path: usize,
        view: &ChunkView<'_>,
        chunk: Option<&Chunk<'_>>,
    ) {
        let max_addr = self.limits.max_addresses;
        let release = self.release_ended;
        let assoc = self.get_mut(a);
        let was_open = assoc.closed_ns.is_none();
        assoc.count_chunk(ctx, sender, path, view, chunk);
        let closed_now = was_open && assoc.closed_ns.is_some();
        // By the chunk's type byte (INIT, INIT-ACK, ASCONF, ASCONF-ACK), not a match on the
        // decoded chunk.
        if matches!(
            view.ctype,
            types::INIT | types::INIT_ACK | types::ASCONF | types::ASCONF_ACK
        ) && chunk.is_some()
        {
            // Bound the address list that INIT / ASCONF parameters can grow.
            assoc.endpoints[sender as usize]
                .addresses
                .truncate(max_addr);
        }
        if release && closed_now {
            self.live_count -= 1;
        }
    }

    fn register(&mut self, port: u16, peer_port: u16, tag: u32, a: u32, ep: u8) {
        self.by_tag.insert((port, peer_port, tag), (a, ep));
        self.tag_hits = [None; 2];
    }

    /// `by_tag[key]`, from the last hit of the key's direction of travel when it is that key.
    #[inline]
    fn tag_lookup(&mut self, key: TagKey) -> Option<(u32, u8)> {
        // The two directions of an association have their port pair in opposite order.
        let slot = usize::from(key.0 < key.1);
        if let Some((k, v)) = self.tag_hits[slot] {
            if k == key {
                return Some(v);
            }
        }
        let v = *self.by_tag.get(&key)?;
        self.tag_hits[slot] = Some((key, v));
        Some(v)
    }

    fn create(&mut self, ctx: &PacketCtx, endpoints: [Endpoint; 2]) -> Result<u32, UnassocReason> {
        self.prune(ctx.ts_ns);
        if self.live_count >= self.limits.max_associations {
            if self.limit_warning.is_none() {
                self.limit_warning = Some(format!(
                    "association limit {} (open at once) reached at frame {}: packets of further associations are not analysed",
                    self.limits.max_associations, ctx.frame
                ));
            }
            return Err(UnassocReason::Limit);
        }
        let id = self.assocs.len();
        let mut assoc = Association::new(id, ctx, endpoints);
        for d in &mut assoc.infer.dirs {
            d.skip_table_rows = self.skip_table_rows;
        }
        let key = assoc.port_key();
        self.assocs.push(Some(Box::new(assoc)));
        self.live_count += 1;
        let max = self.limits.max_unpaired;
        let mut cands = self.by_ports.remove(&key).unwrap_or_default();
        cands.push(id as u32);
        if cands.len() > max {
            // Only open associations that miss a tag can still be paired (see `pair`, `on_init`).
            cands.retain(|&a| {
                self.live(a).is_some_and(|x| {
                    x.closed_ns.is_none() && x.endpoints.iter().any(|e| e.vtag.is_none())
                })
            });
            if cands.len() > max {
                cands.drain(..cands.len() - max);
                if self.unpaired_warning.is_none() {
                    self.unpaired_warning = Some(format!(
                        "more than {max} associations on ports {}-{} wait for a peer's tag at frame {}: the oldest can no longer be paired",
                        key.0, key.1, ctx.frame
                    ));
                }
            }
        }
        self.by_ports.insert(key, cands);
        Ok(id as u32)
    }

    /// INIT (RFC 9260 3.3.2, 5.1): the verification tag is 0 and the Initiate Tag is the tag the
    /// peer must put on packets to the INIT sender.
    fn on_init(&mut self, ctx: &PacketCtx, itag: u32) -> Found {
        if let Some(&(a, ep)) = self.by_tag.get(&(ctx.src_port, ctx.dst_port, itag)) {
            // A retransmitted INIT (T1-init, RFC 9260 5.1 step C) from the same host.
            if let Some(assoc) = self.live(a) {
                if assoc.closed_ns.is_none() && assoc.endpoints[ep as usize].has_addr(&ctx.src) {
                    return Ok((a, ep));
                }
            }
        }
        // INIT collision (RFC 9260 5.2.1): the peer's INIT is outstanding, so both INIT tags become
        // the association's tags. Merge with the association the peer's INIT opened.
        if let Some(cands) = self.by_ports.get(&port_key(ctx)) {
            for &a in cands.iter().rev() {
                let Some(assoc) = self.live(a) else { continue };
                let peer = &assoc.endpoints[0];
                let me = &assoc.endpoints[1];
                if assoc.closed_ns.is_none()
                    && assoc.cookie_ack_ns.is_none()
                    && assoc.init_ns.is_some()
                    && peer.port == ctx.dst_port
                    && me.port == ctx.src_port
                    && me.vtag.is_none()
                    && me.has_addr(&ctx.src)
                {
                    self.get_mut(a).endpoints[1].vtag = Some(itag);
                    self.register(ctx.src_port, ctx.dst_port, itag, a, 1);
                    return Ok((a, 1));
                }
            }
        }
        // A new association, or a restart of an existing one (RFC 9260 5.2.2): new record.
        let old = self.restart_candidate(ctx);
        let a = self.create(
            ctx,
            [
                Endpoint::new(ctx.src_port, Some(itag), ctx.src),
                Endpoint::new(ctx.dst_port, None, ctx.dst),
            ],
        )?;
        self.register(ctx.src_port, ctx.dst_port, itag, a, 0);
        if let Some((old, by)) = old {
            // The old record ends here; the new one says what it restarts.
            if self.release_ended {
                self.live_count -= 1;
            }
            let o = self.get_mut(old);
            o.closed_ns = Some(ctx.ts_ns);
            o.lifecycle.restarted(ctx, by, a as usize);
            self.get_mut(a).lifecycle.restart_of(ctx, old as usize);
            self.restarted = Some(old);
        }
        Ok((a, 0))
    }

    /// RFC 9260 5.2.2: an INIT from an endpoint of an established association (COOKIE-ACK seen,
    /// or found mid-capture with both tags) on the same ports and address restarts it. Returns
    /// the association and the INIT sender's endpoint in it.
    fn restart_candidate(&self, ctx: &PacketCtx) -> Option<(u32, u8)> {
        let cands = self.by_ports.get(&port_key(ctx))?;
        cands.iter().rev().find_map(|&a| {
            let x = self.live(a)?;
            let established = x.cookie_ack_ns.is_some()
                || (x.init_ns.is_none() && x.endpoints.iter().all(|e| e.vtag.is_some()));
            if x.closed_ns.is_some() || !established {
                return None;
            }
            (0..2u8).find_map(|by| {
                let (me, peer) = (&x.endpoints[by as usize], &x.endpoints[1 - by as usize]);
                (me.port == ctx.src_port
                    && peer.port == ctx.dst_port
                    && me.has_addr(&ctx.src)
                    && peer.has_addr(&ctx.dst))
                .then_some((a, by))
            })
        })
    }

    /// INIT-ACK (RFC 9260 3.3.3): carries the INIT sender's tag, and its own in the Initiate Tag.
    fn on_init_ack(&mut self, ctx: &PacketCtx, itag: u32) -> Found {
        if let Some(&(a, to)) = self.by_tag.get(&(ctx.dst_port, ctx.src_port, ctx.vtag)) {
            let from = 1 - to;
            let Some(assoc) = self.assocs[a as usize].as_deref_mut() else {
                return Ok((a, from));
            };
            let ep = &mut assoc.endpoints[from as usize];
            if ep.vtag.is_none() {
                ep.vtag = Some(itag);
                self.register(ctx.src_port, ctx.dst_port, itag, a, from);
            } else if ep.vtag != Some(itag) {
                // A restarting peer answers with a new tag (RFC 9260 5.2.4): both stay known.
                self.register(ctx.src_port, ctx.dst_port, itag, a, from);
            }
            return Ok((a, from));
        }
        // The INIT was not captured.
        let a = self.create(
            ctx,
            [
                Endpoint::new(ctx.dst_port, Some(ctx.vtag), ctx.dst),
                Endpoint::new(ctx.src_port, Some(itag), ctx.src),
            ],
        )?;
        self.register(ctx.dst_port, ctx.src_port, ctx.vtag, a, 0);
        self.register(ctx.src_port, ctx.dst_port, itag, a, 1);
        Ok((a, 1))
    }

    /// ABORT / SHUTDOWN-COMPLETE with the T bit: the tag is the sender's own (RFC 9260 8.5.1 C).
    fn on_reflected(&mut self, ctx: &PacketCtx, first: &Chunk<'_>) -> Found {
        if let Some(&(a, ep)) = self.by_tag.get(&(ctx.src_port, ctx.dst_port, ctx.vtag)) {
            return Ok((a, ep));
        }
        if let Some(found) = self.pair(ctx, ctx.src_port, ctx.dst_port, ctx.src, ctx.dst) {
            return Ok(found);
        }
        // RFC 9260 8.4 rules 2 and 6: an ABORT or SHUTDOWN-COMPLETE of no association is
        // discarded; it starts none.
        Err(ootb_reason(first).unwrap_or(UnassocReason::OotbAbort))
    }

    /// Any other packet: its tag is the receiver's (RFC 9260 8.5).
    fn on_other(&mut self, ctx: &PacketCtx, first: Option<&Chunk<'_>>) -> Found {
        if let Some((a, to)) = self.tag_lookup((ctx.dst_port, ctx.src_port, ctx.vtag)) {
            return Ok((a, 1 - to));
        }
        // Mid-association: the other direction may already be known with this endpoint's tag
        // still missing. Pair them.
        if let Some((a, owner)) = self.pair(ctx, ctx.dst_port, ctx.src_port, ctx.dst, ctx.src) {
            return Ok((a, 1 - owner));
        }
        let Some(first) = first else {
            // RFC 9260 8.4: nothing in it to process.
            return Err(UnassocReason::NoChunk);
        };
        if let Some(why) = ootb_reason(first) {
            return Err(why);
        }
        if !matches!(first, Chunk::CookieEcho { .. }) && self.established_between(ctx) {
            // RFC 9260 8.5: the established association on these ports and addresses discards
            // a packet whose tag is not its own. (A COOKIE-ECHO may start a new one, 5.2.4.)
            return Err(UnassocReason::BadVtag);
        }
        let a = self.create(
            ctx,
            [
                Endpoint::new(ctx.src_port, None, ctx.src),
                Endpoint::new(ctx.dst_port, Some(ctx.vtag), ctx.dst),
            ],
        )?;
        self.register(ctx.dst_port, ctx.src_port, ctx.vtag, a, 1);
        Ok((a, 0))
    }

    /// An open association with both tags known joins the packet's ports and addresses.
    fn established_between(&self, ctx: &PacketCtx) -> bool {
        let Some(cands) = self.by_ports.get(&port_key(ctx)) else {
            return false;
        };
        cands.iter().any(|&a| {
            self.live(a).is_some_and(|x| {
                x.closed_ns.is_none()
                    && x.endpoints.iter().all(|e| e.vtag.is_some())
                    && (0..2).any(|i| {
                        let (me, peer) = (&x.endpoints[i], &x.endpoints[1 - i]);
                        me.port == ctx.src_port
                            && peer.port == ctx.dst_port
                            && me.has_addr(&ctx.src)
                            && peer.has_addr(&ctx.dst)
                    })
            })
        })
    }

    /// Finds an open association on these ports whose endpoint `(port, addr)` has no tag yet,
    /// gives it `ctx.vtag`, and returns (association, that endpoint). Addresses must match on
    /// at least one side, so that the same ports between other hosts stay apart.
    fn pair(
        &mut self,
        ctx: &PacketCtx,
        port: u16,
        peer_port: u16,
        addr: IpAddr,
        peer_addr: IpAddr,
    ) -> Option<(u32, u8)> {
        let cands = self.by_ports.get(&port_key(ctx))?;
        let mut best: Option<(u32, u8, u8)> = None; // (assoc, endpoint, score)
        for &a in cands.iter().rev() {
            let Some(assoc) = self.live(a) else { continue };
            if assoc.closed_ns.is_some() {
                continue;
            }
            for owner in 0..2u8 {
                let me = &assoc.endpoints[owner as usize];
                let peer = &assoc.endpoints[1 - owner as usize];
                if me.port != port || peer.port != peer_port || me.vtag.is_some() {
                    continue;
                }
                let score = me.has_addr(&addr) as u8 + peer.has_addr(&peer_addr) as u8;
                if score > 0 && best.is_none_or(|b| score > b.2) {
                    best = Some((a, owner, score));
                }
            }
        }
        let (a, owner, _) = best?;
        self.get_mut(a).endpoints[owner as usize].vtag = Some(ctx.vtag);
        self.register(port, peer_port, ctx.vtag, a, owner);
        Some((a, owner))
    }
}

/// RFC 9260 8.4: the chunks that, leading a packet of no association, are answered or
/// discarded without starting one.
fn ootb_reason(first: &Chunk<'_>) -> Option<UnassocReason> {
    match first {
        Chunk::Abort { .. } => Some(UnassocReason::OotbAbort),
        Chunk::ShutdownComplete { .. } => Some(UnassocReason::OotbShutdownComplete),
        Chunk::ShutdownAck => Some(UnassocReason::OotbShutdownAck),
        _ => None,
    }
}

fn port_key(ctx: &PacketCtx) -> (u16, u16) {
    (
        ctx.src_port.min(ctx.dst_port),
        ctx.src_port.max(ctx.dst_port),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hit kept per direction of travel never answers for a key `by_tag` gave another
    /// association since (a restart or INIT collision re-registers a tag; retiring removes it).
    #[test]
    fn tag_lookup_follows_every_change_of_the_index() {
        let mut t = Tracker::default();
        let key = (5000, 6000, 77);
        assert_eq!(t.tag_lookup(key), None);
        t.register(5000, 6000, 77, 1, 0);
        assert_eq!(t.tag_lookup(key), Some((1, 0)));
        assert_eq!(t.tag_lookup(key), Some((1, 0)));
        // The other direction of travel has its own slot.
        t.register(6000, 5000, 88, 1, 1);
        assert_eq!(t.tag_lookup((6000, 5000, 88)), Some((1, 1)));
        assert_eq!(t.tag_lookup(key), Some((1, 0)));
        t.register(5000, 6000, 77, 2, 1);
        assert_eq!(t.tag_lookup(key), Some((2, 1)));
        // Retired past the grace period: the index entry and the hit go.
        t.retired.push_back((0, 2, (5000, 6000), [Some(key), None]));
        t.prune(RETIRED_GRACE_NS + 1);
        assert_eq!(t.tag_lookup(key), None);
        assert_eq!(t.tag_lookup((6000, 5000, 88)), Some((1, 1)));
    }
}
