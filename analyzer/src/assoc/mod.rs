//! SCTP association reconstruction (RFC 9260 5, 8.5): associations, their endpoints, paths and counters.
//!
//! `tracker` maps each packet to an association and its sending endpoint; `Association` keeps the
//! per-association facts the JSON contract reports. Timer inference lives in `crate::infer` and is
//! fed from here, chunk by chunk.

pub mod accounting;
mod tracker;

pub use tracker::{Classified, Tracker, TrackerLimits};

use std::net::IpAddr;

pub use crate::packet::PacketCtx;
use crate::sctp::{types, Chunk, ChunkView, InitParam};

/// One side of an association.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub port: u16,
    /// The verification tag this endpoint expects: packets sent *to* it carry it (RFC 9260 8.5).
    pub vtag: Option<u32>,
    /// Addresses in order of first appearance: seen in IP headers or declared in INIT / INIT-ACK /
    /// ASCONF address parameters (RFC 9260 3.3.2.1, RFC 5061 4.2).
    pub addresses: Vec<IpAddr>,
}

impl Endpoint {
    fn new(port: u16, vtag: Option<u32>, addr: IpAddr) -> Self {
        Endpoint {
            port,
            vtag,
            addresses: vec![addr],
        }
    }

    pub fn has_addr(&self, a: &IpAddr) -> bool {
        self.addresses.contains(a)
    }

    fn add_addr(&mut self, a: IpAddr) {
        if !self.addresses.contains(&a) {
            self.addresses.push(a);
        }
    }
}

/// Packet and DATA counters of one (sending endpoint, source address, destination address).
#[derive(Debug, Clone, PartialEq)]
pub struct PathStats {
    /// Index into `Association::endpoints` of the endpoint that sends on this path.
    pub sender: u8,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub packets: u64,
    pub data_chunks: u64,
    pub data_bytes: u64,
    pub first_ns: i64,
    pub last_ns: i64,
}

/// One reconstructed association.
#[derive(Debug, Clone)]
pub struct Association {
    pub id: usize,
    /// Endpoint 0 is the one that sent the first packet the capture shows (the INIT sender when
    /// the handshake was captured).
    pub endpoints: [Endpoint; 2],
    pub first_ns: i64,
    pub last_ns: i64,
    pub first_frame: u64,
    pub packets: u64,
    /// Chunk counts per chunk type, in order of first appearance.
    pub chunk_counts: Vec<(u8, u64)>,
    /// For the chunk types of RFC 9260 3.2 (0-15): 1 + their index in `chunk_counts`, or 0.
    chunk_slot: [u8; 16],
    pub data_bytes: u64,
    pub bad_checksums: u64,
    /// Chunks whose length field was impossible (RFC 9260 3.2).
    pub malformed_chunks: u64,
    pub paths: Vec<PathStats>,
    /// Index in `paths` of each endpoint's last packet (most packets take the path before).
    last_path: [u32; 2],
    /// Time of the first INIT and of the COOKIE-ACK (handshake, RFC 9260 5.1).
    pub init_ns: Option<i64>,
    pub cookie_ack_ns: Option<i64>,
    /// SHUTDOWN-COMPLETE or ABORT seen: the association is over (a new INIT starts a new one).
    pub closed_ns: Option<i64>,
    /// First SHUTDOWN and the SHUTDOWN-COMPLETE (RFC 9260 9.2).
    pub shutdown_ns: Option<i64>,
    pub shutdown_complete_ns: Option<i64>,
    pub aborted: bool,
    /// Packets sent by each endpoint (duplicates not included), and those with a bad CRC32c.
    pub sent: [u64; 2],
    pub bad_from: [u64; 2],
    /// Capture duplicates of this association's packets (`accounting::DupFilter`): counted
    /// here, not analysed.
    pub duplicate_frames: u64,
    /// Per-direction timer inference state, indexed by the DATA-sending endpoint.
    pub infer: crate::infer::AssocInfer,
    /// How the association started and ended (events, end, causes).
    pub lifecycle: crate::lifecycle::Lifecycle,
    /// The INIT / INIT-ACK each endpoint sent, for its stack (`crate::stack`).
    pub stack: crate::stack::Stacks,
    /// Negotiated streams, per-stream counts, PPIDs and upper layer.
    pub streams: crate::streams::Streams,
    /// Zero windows, path MTU black holes, frozen cumulative acks (issue 15).
    pub stalls: crate::stalls::Stalls,
    /// Head-of-line blocking per direction and stream (issue 15).
    pub hol: crate::hol::Hol,
}

impl Association {
    fn new(id: usize, ctx: &PacketCtx, endpoints: [Endpoint; 2]) -> Self {
        Association {
            id,
            endpoints,
            first_ns: ctx.ts_ns,
            last_ns: ctx.ts_ns,
            first_frame: ctx.frame,
            packets: 0,
            chunk_counts: Vec::new(),
            chunk_slot: [0; 16],
            data_bytes: 0,
            bad_checksums: 0,
            malformed_chunks: 0,
            paths: Vec::new(),
            last_path: [0; 2],
            init_ns: None,
            cookie_ack_ns: None,
            closed_ns: None,
            shutdown_ns: None,
            shutdown_complete_ns: None,
            aborted: false,
            sent: [0; 2],
            bad_from: [0; 2],
            duplicate_frames: 0,
            infer: crate::infer::AssocInfer::default(),
            lifecycle: crate::lifecycle::Lifecycle::default(),
            stack: crate::stack::Stacks::default(),
            streams: crate::streams::Streams::default(),
            stalls: crate::stalls::Stalls::default(),
            hol: crate::hol::Hol::default(),
        }
    }

    /// Port pair in a canonical order (for the tracker's index).
    fn port_key(&self) -> (u16, u16) {
        let (a, b) = (self.endpoints[0].port, self.endpoints[1].port);
        (a.min(b), a.max(b))
    }

    /// Counts one packet from endpoint `sender` and returns the index of its path row.
    #[inline(always)]
    fn count_packet(&mut self, ctx: &PacketCtx, sender: u8) -> usize {
        self.packets += 1;
        self.last_ns = ctx.ts_ns;
        self.sent[sender as usize] += 1;
        if ctx.checksum_ok == Some(false) {
            self.bad_checksums += 1;
            self.bad_from[sender as usize] += 1;
        }
        let last = self.last_path[usize::from(sender & 1)] as usize;
        let idx = match self.paths.get(last) {
            Some(p) if p.sender == sender && p.src == ctx.src && p.dst == ctx.dst => last,
            _ => self.path_index(ctx, sender),
        };
        self.last_path[usize::from(sender & 1)] = idx as u32;
        let p = &mut self.paths[idx];
        p.packets += 1;
        p.last_ns = ctx.ts_ns;
        idx
    }

    /// The row in `paths` of a packet from endpoint `sender` (`count_packet`), made on first
    /// sight.
    #[cold]
    fn path_index(&mut self, ctx: &PacketCtx, sender: u8) -> usize {
        match self
            .paths
            .iter()
            .position(|p| p.sender == sender && p.src == ctx.src && p.dst == ctx.dst)
        {
            // A known path's addresses were listed when it was made. They stay: a list only
            // loses entries past the address bound (`Tracker::chunk`), and a packet's address is
            // never there (`Tracker::classify` drops packets that would put it there).
            Some(i) => i,
            None => {
                self.endpoints[sender as usize].add_addr(ctx.src);
                self.endpoints[1 - sender as usize].add_addr(ctx.dst);
                self.paths.push(PathStats {
                    sender,
                    src: ctx.src,
                    dst: ctx.dst,
                    packets: 0,
                    data_chunks: 0,
                    data_bytes: 0,
                    first_ns: ctx.ts_ns,
                    last_ns: ctx.ts_ns,
                });
                self.paths.len() - 1
            }
        }
    }

    /// Accounts one chunk sent by endpoint `sender` on path row `path`.
    #[inline(always)]
    fn count_chunk(
        &mut self,
        ctx: &PacketCtx,
        sender: u8,
        path: usize,
        view: &ChunkView<'_>,
        chunk: Option<&Chunk<'_>>,
    ) {
        self.count_type(view.ctype);
        let Some(chunk) = chunk else {
            // An ABORT or SHUTDOWN-COMPLETE whose body did not decode still ends the association
            // (RFC 9260 9.1, 9.2): the receiver acts on the chunk type.
            match view.ctype {
                crate::sctp::types::ABORT => {
                    self.aborted = true;
                    self.closed_ns.get_or_insert(ctx.ts_ns);
                }
                crate::sctp::types::SHUTDOWN_COMPLETE => {
                    self.closed_ns.get_or_insert(ctx.ts_ns);
                }
                _ => {}
            }
            return;
        };
        // DATA and SACK first, by the type byte: a test on the decoded chunk's variant was
        // merged into the match below, one indirect jump per chunk.
        if matches!(view.ctype, types::DATA | types::I_DATA) {
            if let Chunk::Data(d) = chunk {
                self.data_bytes += d.payload_len as u64;
                let p = &mut self.paths[path];
                p.data_chunks += 1;
                p.data_bytes += d.payload_len as u64;
            }
            return;
        }
        if matches!(view.ctype, types::SACK | types::NR_SACK) {
            return;
        }
        match chunk {
            Chunk::Init(init) => {
                // RFC 9260 5.1: the handshake starts with INIT; addresses of the sender are listed
                // in its IPv4/IPv6 address parameters (3.3.2.1).
                if !init.ack {
                    self.init_ns.get_or_insert(ctx.ts_ns);
                }
                for p in &init.params {
                    if let InitParam::Address(a) = p {
                        self.endpoints[sender as usize].add_addr(*a);
                    }
                }
            }
            Chunk::Asconf(asc) if !asc.ack => {
                // RFC 5061 4.2: Add IP / Set Primary name addresses of the ASCONF sender.
                if let Some(a) = asc.address {
                    self.endpoints[sender as usize].add_addr(a);
                }
                for p in &asc.params {
                    if let crate::sctp::AsconfParam::AddIp { addr: Some(a), .. }
                    | crate::sctp::AsconfParam::SetPrimary { addr: Some(a), .. } = p
                    {
                        self.endpoints[sender as usize].add_addr(*a);
                    }
                }
            }
            Chunk::CookieAck => {
                self.cookie_ack_ns.get_or_insert(ctx.ts_ns);
            }
            Chunk::Shutdown { .. } => {
                self.shutdown_ns.get_or_insert(ctx.ts_ns);
            }
            Chunk::ShutdownComplete { .. } => {
                self.shutdown_complete_ns.get_or_insert(ctx.ts_ns);
                self.closed_ns.get_or_insert(ctx.ts_ns);
            }
            Chunk::Abort { .. } => {
                self.aborted = true;
                self.closed_ns.get_or_insert(ctx.ts_ns);
            }
            _ => {}
        }
    }

    /// A malformed chunk (`accounting::chunk_types`): a length past the packet end is counted
    /// under its type too, a length below 4 under none (as tshark counts).
    pub fn count_malformed(&mut self, ctype: Option<u8>) {
        self.malformed_chunks += 1;
        if let Some(t) = ctype {
            self.count_type(t);
        }
    }

    /// One more chunk of type `ctype` (the common types through `chunk_slot`, without a search).
    #[inline]
    pub fn count_type(&mut self, ctype: u8) {
        let slot = self
            .chunk_slot
            .get(usize::from(ctype))
            .copied()
            .unwrap_or(0);
        if slot > 0 {
            self.chunk_counts[usize::from(slot - 1)].1 += 1;
            return;
        }
        match self.chunk_counts.iter_mut().find(|(t, _)| *t == ctype) {
            Some((_, n)) => *n += 1,
            None => {
                self.chunk_counts.push((ctype, 1));
                // At most 256 types: the index fits (a slot stays 0 past 255 entries).
                if let (Some(s), Ok(i)) = (
                    self.chunk_slot.get_mut(usize::from(ctype)),
                    u8::try_from(self.chunk_counts.len()),
                ) {
                    *s = i;
                }
            }
        }
    }

    /// Tells the timer inference which endpoints keep their RTO estimator in kernel ticks, from
    /// the stack their INIT / INIT-ACK identify (a Linux kernel does; usrsctp and dcsctp do not;
    /// unknown stays unknown). Called before the inference is finished.
    pub fn timer_model_from_stack(&mut self) {
        for ep in 0..2 {
            let name = self.stack.report(ep).name.as_deref();
            self.infer.tick_estimator[ep] = match name {
                Some("linux") => Some(true),
                Some(_) => Some(false),
                None => None,
            };
            self.infer.no_t3_restart[ep] = name == Some("usrsctp");
        }
    }

    /// Chunk count of one type.
    pub fn chunk_count(&self, ctype: u8) -> u64 {
        self.chunk_counts
            .iter()
            .find(|(t, _)| *t == ctype)
            .map_or(0, |(_, n)| *n)
    }

    /// Handshake time INIT -> COOKIE-ACK in ns (RFC 9260 5.1), when both were captured.
    pub fn handshake_ns(&self) -> Option<i64> {
        Some(self.cookie_ack_ns? - self.init_ns?)
    }

    /// DATA chunks sent by endpoint `ep`.
    pub fn data_chunks_from(&self, ep: u8) -> u64 {
        self.paths
            .iter()
            .filter(|p| p.sender == ep)
            .map(|p| p.data_chunks)
            .sum()
    }
}

/// True for the chunks that carry the sender's own tag when their T bit is set (RFC 9260 8.5.1 C).
fn reflected_tag(chunk: &Chunk<'_>) -> bool {
    matches!(
        chunk,
        Chunk::Abort { t_bit: true, .. } | Chunk::ShutdownComplete { t_bit: true }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_counts_keep_first_seen_order_through_the_slots() {
        let addr: IpAddr = "10.0.0.1".parse().unwrap();
        let ctx = PacketCtx::test(1, 0.0, ("10.0.0.1", 1), ("10.0.0.1", 2));
        let ep = || Endpoint::new(1, None, addr);
        let mut a = Association::new(0, &ctx, [ep(), ep()]);
        // DATA, SACK, DATA, I-DATA (64, past the slots), ASCONF (0xC1), SACK, I-DATA.
        for t in [0u8, 3, 0, 64, 0xC1, 3, 64] {
            a.count_type(t);
        }
        a.count_malformed(Some(15));
        a.count_malformed(Some(0));
        a.count_malformed(None);
        assert_eq!(
            a.chunk_counts,
            vec![(0, 3), (3, 2), (64, 2), (0xC1, 1), (15, 1)]
        );
        assert_eq!(a.chunk_count(0), 3);
        assert_eq!(a.chunk_count(15), 1);
        assert_eq!(a.malformed_chunks, 3);
    }

    #[test]
    fn packets_switching_paths_each_count_on_their_own_row() {
        // Endpoint 0 on 10.0.0.1 and .2, endpoint 1 on 10.0.1.1 and .2 (multihomed), packets
        // of both endpoints interleaved over changing paths: the last-path shortcut must never
        // count a packet on the row of another path or sender.
        let a0 = ("10.0.0.1", 1);
        let a0b = ("10.0.0.2", 1);
        let b0 = ("10.0.1.1", 2);
        let b0b = ("10.0.1.2", 2);
        let first = PacketCtx::test(1, 0.0, a0, b0);
        let mut a = Association::new(
            0,
            &first,
            [
                Endpoint::new(1, None, first.src),
                Endpoint::new(2, None, first.dst),
            ],
        );
        let sends = [
            (0u8, a0, b0),
            (0, a0, b0),
            (1, b0, a0),
            (0, a0b, b0b),
            (1, b0b, a0b),
            (0, a0, b0),
            (1, b0, a0),
            (1, b0, a0),
            (0, a0b, b0b),
            (0, a0b, b0),
        ];
        let mut rows = Vec::new();
        for (i, (sender, src, dst)) in sends.into_iter().enumerate() {
            let ctx = PacketCtx::test(i as u64 + 1, i as f64, src, dst);
            rows.push(a.count_packet(&ctx, sender));
        }
        assert_eq!(rows, vec![0, 0, 1, 2, 3, 0, 1, 1, 2, 4]);
        let counts: Vec<(u8, u64)> = a.paths.iter().map(|p| (p.sender, p.packets)).collect();
        assert_eq!(counts, vec![(0, 3), (1, 3), (0, 2), (1, 1), (0, 1)]);
        assert_eq!(a.sent, [6, 4]);
        for p in &a.paths {
            let expect_src = if p.sender == 0 {
                &a.endpoints[0]
            } else {
                &a.endpoints[1]
            };
            assert!(expect_src.has_addr(&p.src));
        }
    }
}
