//! Bounded IPv4 (RFC 791 3.2, RFC 815) and IPv6 (RFC 8200 4.5, RFC 5722) fragment reassembly,
//! driven by capture time. Only fragments allocate.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;

use super::NetStats;

/// At most this many datagrams are reassembled at once; a new one evicts the oldest.
pub(crate) const MAX_CHAINS: usize = 1024;
/// RFC 791 3.1 (Total Length is 16 bits) / RFC 8200 4.5 (a reassembled Payload Length above
/// 65535 is an error): the fragmentable payload of one datagram is at most this long.
pub(crate) const MAX_PAYLOAD: u64 = 65_535;
/// Chains older than this (capture time) are dropped. RFC 791 suggests a 15 s lower bound
/// for the reassembly timer, RFC 8200 4.5 60 s; 30 s in between.
pub(crate) const TIMEOUT_NS: i64 = 30_000_000_000;
/// Bound on fragments per datagram (65535 / 8-octet minimum would allow 8192).
const MAX_PIECES: usize = 2048;
/// Completed datagrams remembered to recognise late copies of their fragments.
const RECENT: usize = 64;
const RECENT_NS: i64 = 2_000_000_000;

/// RFC 791 3.2 / RFC 8200 4.5: fragments belong together when source, destination,
/// identification (and, for IPv4, protocol) match; for IPv6 the protocol is the Fragment
/// header's Next Header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FragKey {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub id: u32,
    pub proto: u8,
}

/// One fragment, borrowed from its frame.
#[derive(Debug)]
pub(crate) struct FragIn<'a> {
    pub key: FragKey,
    /// Offset of this fragment's data in the datagram's fragmentable part (bytes).
    pub offset: u32,
    /// More Fragments flag.
    pub more: bool,
    /// Captured fragment data (may be shorter than `len`).
    pub data: &'a [u8],
    /// Fragment data length announced by the IP header.
    pub len: u32,
    pub ttl: u8,
    pub v6: bool,
    /// Offset of `data` in the frame (for error messages).
    pub payload_offset: usize,
}

/// A completed datagram's fragmentable part.
#[derive(Debug)]
pub(crate) struct Reassembled {
    /// The captured prefix of the payload.
    pub payload: Vec<u8>,
    /// Announced bytes not captured (snap length).
    pub missing: usize,
    /// TTL / hop limit of the first fragment.
    pub ttl: u8,
}

/// A received piece: [start, end) announced, bytes up to `cap_end` captured.
#[derive(Debug, Clone, Copy)]
struct Piece {
    start: u32,
    end: u32,
    cap_end: u32,
    sum: u64,
}

#[derive(Debug)]
struct Chain {
    first_ns: i64,
    buf: Vec<u8>,
    /// Sorted by start, non-overlapping.
    pieces: Vec<Piece>,
    /// Datagram length, known once the last fragment (MF = 0) arrived.
    total: Option<u32>,
    ttl: u8,
    /// RFC 5722: an IPv6 datagram with overlapping fragments is discarded, including
    /// fragments that arrive later.
    poisoned: bool,
}

#[derive(Debug)]
struct Recent {
    key: FragKey,
    at_ns: i64,
    pieces: Vec<(u32, u32, u64)>,
}

/// Reassembly state.
#[derive(Debug)]
pub(crate) struct Defrag {
    chains: HashMap<FragKey, Chain>,
    /// Lower bound of the chains' first_ns (i64::MAX when empty).
    oldest_ns: i64,
    recent: VecDeque<Recent>,
}

impl Default for Defrag {
    fn default() -> Self {
        Defrag {
            chains: HashMap::new(),
            oldest_ns: i64::MAX,
            recent: VecDeque::new(),
        }
    }
}

/// FNV-1a, to recognise exact duplicate fragments.
fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Defrag {
    /// Chains in progress.
    pub fn pending(&self) -> usize {
        self.chains.len()
    }

    /// Drops chains older than the timeout. O(1) unless one is due.
    #[inline]
    pub fn expire(&mut self, now: i64, stats: &mut NetStats) {
        if now.saturating_sub(self.oldest_ns) <= TIMEOUT_NS {
            return;
        }
        self.expire_old(now, stats);
    }

    /// `expire` once a chain may have timed out (out of line: the common case is the test above).
    #[inline(never)]
    fn expire_old(&mut self, now: i64, stats: &mut NetStats) {
        let mut oldest = i64::MAX;
        self.chains.retain(|_, c| {
            if now.saturating_sub(c.first_ns) > TIMEOUT_NS {
                if !c.poisoned {
                    stats.reassembly_timeouts += 1;
                }
                false
            } else {
                oldest = oldest.min(c.first_ns);
                true
            }
        });
        self.oldest_ns = oldest;
    }

    /// Is this fragment a copy of one of a datagram completed just before?
    fn late_duplicate(&mut self, f: &FragIn<'_>, end: u32, sum: u64, now: i64) -> bool {
        while self
            .recent
            .front()
            .is_some_and(|r| now.saturating_sub(r.at_ns) > RECENT_NS)
        {
            self.recent.pop_front();
        }
        self.recent
            .iter()
            .any(|r| r.key == f.key && r.pieces.contains(&(f.offset, end, sum)))
    }

    /// Adds a fragment; returns the datagram when it is complete.
    pub fn push(&mut self, f: &FragIn<'_>, now: i64, stats: &mut NetStats) -> Option<Reassembled> {
        stats.fragments += 1;
        self.expire(now, stats);
        let end64 = u64::from(f.offset) + u64::from(f.len);
        // RFC 8200 4.5: a non-last fragment whose length is not a multiple of 8 is discarded
        // (RFC 791 3.2: fragments other than the last carry multiples of 8 octets); so is one
        // that would make the reassembled payload exceed 65535 octets.
        if (f.more && !f.len.is_multiple_of(8)) || end64 > MAX_PAYLOAD {
            stats.frag_dropped += 1;
            return None;
        }
        let end = end64 as u32;
        let cap = f.data.len().min(f.len as usize);
        let sum = fnv(&f.data[..cap]);
        if self.late_duplicate(f, end, sum, now) {
            stats.frag_duplicates += 1;
            return None;
        }
        if !self.chains.contains_key(&f.key) {
            if self.chains.len() >= MAX_CHAINS {
                self.evict_oldest(stats);
            }
            self.chains.insert(
                f.key,
                Chain {
                    first_ns: now,
                    buf: Vec::new(),
                    pieces: Vec::new(),
                    total: None,
                    ttl: f.ttl,
                    poisoned: false,
                },
            );
            self.oldest_ns = self.oldest_ns.min(now);
        }
        let chain = self.chains.get_mut(&f.key)?;
        if chain.poisoned {
            stats.frag_dropped += 1;
            return None;
        }
        // The last fragment fixes the length; fragments must agree with it.
        let inconsistent = match (f.more, chain.total) {
            (false, Some(t)) => t != end,
            (false, None) => chain.pieces.last().is_some_and(|p| p.end > end),
            (true, Some(t)) => end > t,
            (true, None) => false,
        };
        if inconsistent {
            stats.frag_dropped += 1;
            return None;
        }
        let piece = Piece {
            start: f.offset,
            end,
            cap_end: f.offset + cap as u32,
            sum,
        };
        // Pieces overlapping [offset, end).
        let first = chain.pieces.partition_point(|p| p.end <= f.offset);
        let last = chain.pieces[first..].partition_point(|p| p.start < end) + first;
        let overlapping = &chain.pieces[first..last];
        if overlapping.is_empty() || f.len == 0 {
            ensure_len(&mut chain.buf, piece.cap_end);
            chain.buf[f.offset as usize..piece.cap_end as usize].copy_from_slice(&f.data[..cap]);
            chain.pieces.insert(first, piece);
        } else if overlapping.len() == 1
            && overlapping[0].start == piece.start
            && overlapping[0].end == piece.end
            && overlapping[0].cap_end == piece.cap_end
            && overlapping[0].sum == sum
        {
            // RFC 8200 4.5: exact duplicates may be dropped without treating them as overlap.
            stats.frag_duplicates += 1;
            return None;
        } else {
            stats.frag_overlaps += 1;
            if f.v6 {
                // RFC 5722 3 / RFC 8200 4.5: discard the datagram and its later fragments.
                chain.poisoned = true;
                chain.buf = Vec::new();
                chain.pieces = Vec::new();
                return None;
            }
            // IPv4: keep the data received first; add only the uncovered parts.
            let mut gaps = Vec::new();
            let mut at = piece.start;
            for p in overlapping {
                if p.start > at {
                    gaps.push((at, p.start));
                }
                at = at.max(p.end);
            }
            if at < piece.end {
                gaps.push((at, piece.end));
            }
            for (gs, ge) in gaps.into_iter().rev() {
                let cap_end = piece.cap_end.clamp(gs, ge);
                // A gap past what the capture kept of this fragment has no bytes to copy.
                if cap_end > gs {
                    ensure_len(&mut chain.buf, cap_end);
                    let src = &f.data[(gs - f.offset) as usize..(cap_end - f.offset) as usize];
                    chain.buf[gs as usize..cap_end as usize].copy_from_slice(src);
                }
                let at = chain.pieces.partition_point(|p| p.start < gs);
                chain.pieces.insert(
                    at,
                    Piece {
                        start: gs,
                        end: ge,
                        cap_end,
                        sum: 0,
                    },
                );
            }
        }
        if f.offset == 0 {
            chain.ttl = f.ttl;
        }
        if !f.more {
            chain.total = Some(end);
        }
        if chain.pieces.len() > MAX_PIECES {
            stats.frag_dropped += 1;
            self.chains.remove(&f.key);
            return None;
        }
        let total = chain.total?;
        // Complete when the pieces cover [0, total) without a hole.
        // The payload handed on is the captured prefix; the rest counts as missing.
        let mut covered = 0u32;
        let mut captured = 0u32;
        let mut cut = false;
        for p in &chain.pieces {
            if p.start > covered {
                return None;
            }
            if !cut && p.start <= captured {
                captured = captured.max(p.cap_end);
                cut = p.cap_end < p.end;
            } else {
                cut = true;
            }
            covered = covered.max(p.end);
        }
        if covered < total {
            return None;
        }
        let chain = self.chains.remove(&f.key)?;
        let mut payload = chain.buf;
        payload.truncate(captured as usize);
        if self.recent.len() >= RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(Recent {
            key: f.key,
            at_ns: now,
            pieces: chain
                .pieces
                .iter()
                .map(|p| (p.start, p.end, p.sum))
                .collect(),
        });
        stats.reassembled += 1;
        Some(Reassembled {
            payload,
            missing: (total - captured) as usize,
            ttl: chain.ttl,
        })
    }

    fn evict_oldest(&mut self, stats: &mut NetStats) {
        if let Some(key) = self
            .chains
            .iter()
            .min_by_key(|(_, c)| c.first_ns)
            .map(|(k, _)| *k)
        {
            self.chains.remove(&key);
            stats.reassembly_evictions += 1;
        }
    }
}

fn ensure_len(buf: &mut Vec<u8>, len: u32) {
    if buf.len() < len as usize {
        buf.resize(len as usize, 0);
    }
}
