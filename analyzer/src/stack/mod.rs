//! Endpoint stack identification (METRICS.md "Failover policy and stacks"): which SCTP
//! implementation an endpoint runs (`linux`, `usrsctp`, `dcsctp`, ...), with a confidence and the
//! evidence in words, from what the endpoint sends in its INIT / INIT-ACK: the parameters and
//! their order, the Supported Extensions list, a_rwnd, stream counts and the head of its state
//! cookie. The rules, each with the source that backs it, are in `rules`; README "Stack
//! identification" has the table.
//!
//! The association tracker owns one `Stacks` per association and hands it every INIT and
//! INIT-ACK (`Stacks::init`); nothing else (DATA, SACK) comes here. This module knows nothing of
//! the tracker or of the other analyses. Timer behaviour is not used: RTO.min, SACK delay and the
//! heartbeat interval are settings every stack lets the user change, so they are never decisive.

mod rules;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::sctp::{ChunkView, InitChunk, InitParam};

/// Parameter types kept per INIT / INIT-ACK (a real one has about ten; the rest are counted).
const MAX_PARAMS: usize = 32;
/// State cookie bytes kept: enough for every layout `rules` reads (Linux: tags at 32-44).
const COOKIE_HEAD: usize = 48;

/// What one endpoint's INIT or INIT-ACK showed (the first one it sent).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Seen {
    /// INIT-ACK (else INIT).
    pub ack: bool,
    pub flags: u8,
    pub initiate_tag: u32,
    /// The verification tag of the packet that carried it: for an INIT-ACK, the Initiate Tag of
    /// the INIT it answers (RFC 9260 8.5.1).
    pub packet_vtag: u32,
    pub a_rwnd: u32,
    pub outbound_streams: u16,
    pub inbound_streams: u16,
    /// Parameter types in wire order (at most `MAX_PARAMS`).
    pub params: Vec<u16>,
    /// More parameters than `MAX_PARAMS`.
    pub params_dropped: bool,
    /// The Supported Extensions list (RFC 5061 4.2.7), when present and captured whole.
    pub extensions: Option<Vec<u8>>,
    /// The first bytes of the State Cookie (RFC 9260 3.3.3.1) and its length.
    pub cookie_head: Vec<u8>,
    pub cookie_len: Option<usize>,
    /// The capture cut the chunk: later parameters may be missing.
    pub truncated: bool,
}

impl Seen {
    /// Reads one INIT / INIT-ACK: the fixed fields and extension list from the parsed chunk, the
    /// parameter order and the cookie head from the chunk's bytes (the typed chunk keeps only
    /// the cookie's length).
    pub fn new(view: &ChunkView<'_>, init: &InitChunk, packet_vtag: u32) -> Self {
        let mut s = Seen {
            ack: init.ack,
            flags: view.flags,
            initiate_tag: init.initiate_tag,
            packet_vtag,
            a_rwnd: init.a_rwnd,
            outbound_streams: init.outbound_streams,
            inbound_streams: init.inbound_streams,
            truncated: view.truncated,
            ..Seen::default()
        };
        s.extensions = init.params.iter().find_map(|p| match p {
            InitParam::SupportedExtensions(e) => Some(e.clone()),
            _ => None,
        });
        // RFC 9260 3.2.1: parameters are TLVs after the 16 fixed bytes, each padded to 4 bytes.
        let v = view.value;
        let mut pos = 16usize;
        while pos + 4 <= v.len() {
            let ptype = u16::from_be_bytes([v[pos], v[pos + 1]]);
            let plen = usize::from(u16::from_be_bytes([v[pos + 2], v[pos + 3]]));
            if plen < 4 {
                break;
            }
            if s.params.len() < MAX_PARAMS {
                s.params.push(ptype);
            } else {
                s.params_dropped = true;
            }
            if ptype == rules::p::COOKIE {
                let end = (pos + plen).min(v.len()).min(pos + 4 + COOKIE_HEAD);
                s.cookie_head = v[pos + 4..end].to_vec();
                s.cookie_len = Some(plen - 4);
            }
            if pos + plen > v.len() {
                s.truncated = true;
                break;
            }
            pos += (plen + 3) & !3;
        }
        s
    }
}

/// The INIT and INIT-ACK each endpoint of one association sent (the first of each).
#[derive(Debug, Clone, Default)]
pub struct Stacks {
    /// Indexed by endpoint: [INIT, INIT-ACK].
    seen: [[Option<Box<Seen>>; 2]; 2],
    /// Each endpoint's guess, made once when first asked (the timer model and the report both
    /// ask) and forgotten when an INIT / INIT-ACK is kept.
    guessed: [std::cell::OnceCell<StackReport>; 2],
}

impl Stacks {
    /// An INIT or INIT-ACK (`init.ack`) sent by endpoint `sender` in a packet with verification
    /// tag `vtag`. Only the first of each kind per endpoint is kept (retransmissions repeat it).
    pub fn init(&mut self, sender: u8, vtag: u32, view: &ChunkView<'_>, init: &InitChunk) {
        let slot = &mut self.seen[usize::from(sender & 1)][usize::from(init.ack)];
        if slot.is_none() {
            *slot = Some(Box::new(Seen::new(view, init, vtag)));
            self.guessed[usize::from(sender & 1)].take();
        }
    }

    /// The stack of endpoint `ep` (0 or 1).
    pub fn report(&self, ep: usize) -> &StackReport {
        self.guessed[ep & 1].get_or_init(|| {
            let [init, ack] = &self.seen[ep & 1];
            rules::classify(init.as_deref(), ack.as_deref())
        })
    }
}

/// How sure a stack guess is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Confidence {
    Low,
    Medium,
    High,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// An endpoint's stack in the JSON report (`endpoints[i].stack`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StackReport {
    /// "linux", "usrsctp" (FreeBSD / usrsctp / older WebRTC), "dcsctp", another name, or null
    /// when nothing points to one stack.
    pub name: Option<String>,
    /// "high", "medium" or "low" ("low" with a null name).
    pub confidence: String,
    /// What the guess rests on, in words, and what the endpoint sent.
    pub evidence: String,
}

impl Default for StackReport {
    fn default() -> Self {
        StackReport {
            name: None,
            confidence: Confidence::Low.as_str().to_string(),
            evidence: String::new(),
        }
    }
}
