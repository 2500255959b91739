//! The stack rules: each stack's INIT / INIT-ACK signature, read from the stack's own source and
//! checked on captures (README "Stack identification"), scored into a guess with evidence.
//!
//! Sources (read, not copied):
//! - Linux: net/sctp/sm_make_chunk.c `sctp_make_init` / `sctp_make_init_ack` (parameter order),
//!   include/net/sctp/structs.h `struct sctp_signed_cookie` / `struct sctp_cookie` (cookie
//!   layout), include/net/sctp/constants.h (default streams). Checked on the lab-linux runs
//!   (Linux 6.1) and on public Open5GS / OAI / Linux-cooked captures (older kernels too).
//! - usrsctp (the FreeBSD / KAME stack): usrsctplib/netinet/sctp_output.c
//!   `sctp_send_initiate` / `sctp_send_initiate_ack` (order, extension list, cookie appended
//!   last), sctp_constants.h SCTP_VERSION_STRING "KAME-BSD 1.1" (the cookie's identification,
//!   `struct sctp_state_cookie` in sctp_header.h). Checked on every usrsctp lab run.
//! - dcsctp (WebRTC): net/dcsctp/socket/dcsctp_socket.cc `AddCapabilityParameters`, `SendInit`,
//!   `HandleInit`, `DeterminePeerImplementation` (cookie magics "dcSCTP00", "KAME-BSD");
//!   net/dcsctp/public/dcsctp_options.h (defaults). No capture: source only.
//! - pion/sctp (Go; webrtc-rs is its port): association.go `setSupportedExtensions`. Source only.

use std::borrow::Cow;
use std::fmt::Write as _;

use super::{Confidence, Seen, StackReport};

/// Parameter types (RFC 9260 3.3.2.1, RFC 3758, RFC 4895, RFC 5061, RFC 9653, RFC 4820).
pub(super) mod p {
    pub const IPV4: u16 = 5;
    pub const IPV6: u16 = 6;
    pub const COOKIE: u16 = 7;
    pub const UNRECOGNIZED: u16 = 8;
    pub const PRESERVATIVE: u16 = 9;
    pub const HOST_NAME: u16 = 11;
    pub const SUPPORTED_ADDR: u16 = 12;
    pub const ECN: u16 = 0x8000;
    /// Zero Checksum Acceptable (RFC 9653).
    pub const ZERO_CHECKSUM: u16 = 0x8001;
    pub const RANDOM: u16 = 0x8002;
    pub const CHUNKS: u16 = 0x8003;
    pub const HMAC_ALGO: u16 = 0x8004;
    pub const PADDING: u16 = 0x8005;
    pub const EXTENSIONS: u16 = 0x8008;
    pub const FORWARD_TSN: u16 = 0xC000;
    pub const ADAPTATION: u16 = 0xC006;
    /// usrsctp's NAT-friendly parameter (SCTP_HAS_NAT_SUPPORT, draft-ietf-tsvwg-natsupp).
    pub const NAT: u16 = 0xC007;
}
use p::*;

/// Chunk types in Supported Extensions lists.
const FORWARD_TSN_CHUNK: u8 = 192;
const RECONFIG_CHUNK: u8 = 130;

/// One position in a stack's parameter order: the types allowed there, and whether it repeats.
type Slot = (&'static [u16], bool);

/// `sctp_make_init`: the bound addresses, Supported Address Types (always), ECN (when
/// ecn_enable), Supported Extensions (ASCONF / RE-CONFIG / I-DATA / AUTH when enabled),
/// Forward-TSN (prsctp_enable), Adaptation Layer, AUTH RANDOM / HMAC-ALGO / CHUNKS; a Cookie
/// Preservative is appended after all of them when an INIT is resent after a stale cookie
/// (sm_statefuns.c `sctp_sf_do_5_2_6_stale`).
const LINUX_INIT: &[Slot] = &[
    (&[IPV4, IPV6], true),
    (&[SUPPORTED_ADDR], false),
    (&[ECN], false),
    (&[EXTENSIONS], false),
    (&[FORWARD_TSN], false),
    (&[ADAPTATION], false),
    (&[RANDOM], false),
    (&[HMAC_ALGO], false),
    (&[CHUNKS], false),
    (&[PRESERVATIVE], false),
];

/// `sctp_make_init_ack`: addresses, the State Cookie, then ECN, Supported Extensions,
/// Forward-TSN, Adaptation Layer, AUTH; unrecognized-parameter reports are appended by the caller
/// (`sctp_sf_do_5_1B_init`).
const LINUX_INIT_ACK: &[Slot] = &[
    (&[IPV4, IPV6], true),
    (&[COOKIE], false),
    (&[ECN], false),
    (&[EXTENSIONS], false),
    (&[FORWARD_TSN], false),
    (&[ADAPTATION], false),
    (&[RANDOM], false),
    (&[HMAC_ALGO], false),
    (&[CHUNKS], false),
    (&[UNRECOGNIZED], true),
];

/// Chunk types the kernel may list in Supported Extensions (ASCONF, ASCONF-ACK, RE-CONFIG,
/// I-DATA, I-FORWARD-TSN, AUTH). FORWARD-TSN is never listed: the kernel announces PR-SCTP with
/// the Forward-TSN parameter only.
const LINUX_EXTENSIONS: &[u8] = &[193, 128, 130, 64, 194, 15];

/// `sctp_send_initiate`: Adaptation Layer, ECN, Forward-TSN, NAT-friendly, Supported Extensions,
/// AUTH RANDOM / HMAC-ALGO / CHUNKS, Cookie Preservative, Supported Address Types, then the
/// addresses (`sctp_add_addresses_to_i_ia`). Zero Checksum Acceptable (newer releases) is allowed
/// among the capability parameters.
const USRSCTP_INIT: &[Slot] = &[
    (&[ADAPTATION], false),
    (&[ECN], false),
    (&[FORWARD_TSN], false),
    (&[NAT], false),
    (&[ZERO_CHECKSUM], false),
    (&[EXTENSIONS], false),
    (&[RANDOM], false),
    (&[HMAC_ALGO], false),
    (&[CHUNKS], false),
    (&[PRESERVATIVE], false),
    (&[SUPPORTED_ADDR], false),
    (&[IPV4, IPV6], true),
];

/// `sctp_send_initiate_ack`: the same capability parameters, the addresses, any
/// unrecognized-parameter reports, and the State Cookie appended last.
const USRSCTP_INIT_ACK: &[Slot] = &[
    (&[ADAPTATION], false),
    (&[ECN], false),
    (&[FORWARD_TSN], false),
    (&[NAT], false),
    (&[ZERO_CHECKSUM], false),
    (&[EXTENSIONS], false),
    (&[RANDOM], false),
    (&[HMAC_ALGO], false),
    (&[CHUNKS], false),
    (&[IPV4, IPV6], true),
    (&[UNRECOGNIZED], true),
    (&[COOKIE], false),
];

/// dcsctp `AddCapabilityParameters`: Forward-TSN (partial reliability on), Zero Checksum
/// Acceptable (when configured), Supported Extensions last, listing RE-CONFIG first; no
/// addresses, no ECN. `HandleInit` puts the State Cookie before them in the INIT-ACK.
const DCSCTP_INIT: &[Slot] = &[
    (&[FORWARD_TSN], false),
    (&[ZERO_CHECKSUM], false),
    (&[EXTENSIONS], false),
];
const DCSCTP_INIT_ACK: &[Slot] = &[
    (&[COOKIE], false),
    (&[FORWARD_TSN], false),
    (&[ZERO_CHECKSUM], false),
    (&[EXTENSIONS], false),
];

/// dcsctp defaults (dcsctp_options.h): a_rwnd = max_receiver_window_buffer_size 5 MiB, and
/// 65535 streams announced each way.
const DCSCTP_RWND: u32 = 5 * 1024 * 1024;

/// pion/sctp `setSupportedExtensions`: Supported Extensions [RE-CONFIG, FORWARD-TSN] and nothing
/// else (Zero Checksum Acceptable appended when enabled); the INIT-ACK adds its State Cookie
/// first.
const PION_INIT: &[Slot] = &[(&[EXTENSIONS], false), (&[ZERO_CHECKSUM], false)];
const PION_INIT_ACK: &[Slot] = &[
    (&[COOKIE], false),
    (&[EXTENSIONS], false),
    (&[ZERO_CHECKSUM], false),
];

/// Linux: a_rwnd = sk_rcvbuf / 2 (associola.c), 106496 with the default net.core.rmem_default
/// of 212992.
const LINUX_DEFAULT_RWND: u32 = 106_496;
/// Linux: SCTP_DEFAULT_INSTREAMS (= SCTP_MAX_STREAM, 65535) when the application sets no
/// SCTP_INITMSG; the INIT offers it as its inbound streams.
const LINUX_DEFAULT_INSTREAMS: u16 = 65_535;

/// Whether `params` follows `order` (each type in its slot, slots in order, a non-repeating
/// slot at most once).
fn follows(params: &[u16], order: &[Slot]) -> bool {
    let mut i = 0;
    'param: for t in params {
        while let Some((types, many)) = order.get(i) {
            if types.contains(t) {
                if !many {
                    i += 1;
                }
                continue 'param;
            }
            i += 1;
        }
        return false;
    }
    true
}

fn pos(params: &[u16], t: u16) -> Option<usize> {
    params.iter().position(|x| *x == t)
}

fn has(params: &[u16], t: u16) -> bool {
    params.contains(&t)
}

/// A stack the evidence may point to.
struct Candidate {
    name: &'static str,
    /// Sum of the points of the features found (>= 4 high, 2-3 medium, below 2 no guess).
    score: u32,
    /// The most this rule set may claim (source-only rules stop below high).
    cap: Confidence,
    evidence: Vec<Cow<'static, str>>,
}

impl Candidate {
    fn new(name: &'static str, cap: Confidence) -> Self {
        Candidate {
            name,
            score: 0,
            cap,
            evidence: Vec::new(),
        }
    }

    fn add(&mut self, points: u32, why: impl Into<Cow<'static, str>>) {
        self.score += points;
        self.evidence.push(why.into());
    }

    fn confidence(&self) -> Confidence {
        let c = if self.score >= 4 {
            Confidence::High
        } else {
            Confidence::Medium
        };
        c.min(self.cap)
    }
}

/// The state cookie of `sctp_make_init_ack` is `struct sctp_signed_cookie`: a 32-byte MAC
/// (MD5 or SHA-1 digests zero-padded; none when cookie_hmac_alg is "none"), a 4-byte pad (since
/// 2.6.3x; before it the struct followed the MAC directly), then `struct sctp_cookie`, which
/// starts with my_vtag and peer_vtag in host byte order. So the INIT-ACK's own Initiate Tag sits
/// at byte 36 (or 32), and the tag of the INIT it answers right after it.
fn linux_cookie(a: &Seen) -> Option<String> {
    let h = &a.cookie_head;
    if a.initiate_tag == 0 {
        return None;
    }
    for off in [36usize, 32] {
        let Some(w) = h.get(off..off + 4) else {
            continue;
        };
        let w = [w[0], w[1], w[2], w[3]];
        let le = u32::from_le_bytes(w) == a.initiate_tag;
        let be = u32::from_be_bytes(w) == a.initiate_tag;
        if !(le || be) {
            continue;
        }
        let peer = h.get(off + 4..off + 8).is_some_and(|p| {
            let p = [p[0], p[1], p[2], p[3]];
            let v = if le {
                u32::from_le_bytes(p)
            } else {
                u32::from_be_bytes(p)
            };
            v == a.packet_vtag && v != 0
        });
        // The MAC's digest length: 16 bytes (MD5) or 20 (SHA-1) zero-padded to 32, all zero
        // with cookie_hmac_alg "none", 32 with SHA-256.
        return Some(format!(
            "the INIT-ACK's State Cookie carries its own Initiate Tag at byte {off}{} ({}-endian): the Linux kernel's struct sctp_signed_cookie",
            if peer { " followed by the peer's" } else { "" },
            if le { "little" } else { "big" },
        ));
    }
    None
}

/// The parameters' names, comma-separated, appended to `out`.
fn names(out: &mut String, params: &[u16]) {
    for (i, &t) in params.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let name = match t {
            IPV4 => "IPv4",
            IPV6 => "IPv6",
            COOKIE => "State Cookie",
            UNRECOGNIZED => "Unrecognized Parameter",
            PRESERVATIVE => "Cookie Preservative",
            HOST_NAME => "Host Name",
            SUPPORTED_ADDR => "Supported Address Types",
            ECN => "ECN",
            ZERO_CHECKSUM => "Zero Checksum Acceptable",
            RANDOM => "RANDOM",
            CHUNKS => "CHUNKS",
            HMAC_ALGO => "HMAC-ALGO",
            PADDING => "Padding",
            EXTENSIONS => "Supported Extensions",
            FORWARD_TSN => "Forward-TSN",
            ADAPTATION => "Adaptation Layer",
            NAT => "NAT-friendly",
            other => {
                let _ = write!(out, "0x{other:04x}");
                continue;
            }
        };
        out.push_str(name);
    }
}

/// What one INIT / INIT-ACK showed, in words (appended to every evidence), appended to `d`.
fn describe(d: &mut String, s: &Seen) {
    let mut n = itoa::Buffer::new();
    d.push_str(if s.ack {
        "INIT-ACK: a_rwnd "
    } else {
        "INIT: a_rwnd "
    });
    d.push_str(n.format(s.a_rwnd));
    d.push_str(", streams ");
    d.push_str(n.format(s.outbound_streams));
    d.push_str(" out / ");
    d.push_str(n.format(s.inbound_streams));
    d.push_str(" in, parameters [");
    names(d, &s.params);
    d.push(']');
    if s.params_dropped {
        d.push_str(" and more");
    }
    if let Some(e) = &s.extensions {
        d.push_str(", extensions [");
        for (i, &t) in e.iter().enumerate() {
            if i > 0 {
                d.push_str(", ");
            }
            d.push_str(itoa::Buffer::new().format(t));
        }
        d.push(']');
    }
    if let Some(l) = s.cookie_len {
        d.push_str(", cookie ");
        d.push_str(itoa::Buffer::new().format(l));
        d.push_str(" bytes");
    }
    if s.flags != 0 {
        let _ = write!(d, ", flags 0x{:02x}", s.flags);
    }
    if s.truncated {
        d.push_str(" (cut by the capture: later parameters unseen)");
    }
}

fn linux(init: Option<&Seen>, ack: Option<&Seen>) -> Option<Candidate> {
    let mut c = Candidate::new("linux", Confidence::High);
    let mut against = false;
    let ext_ok = |s: &Seen| {
        s.extensions
            .as_ref()
            .is_none_or(|e| e.iter().all(|t| LINUX_EXTENSIONS.contains(t)))
    };
    let mut core = false;
    if let Some(i) = init {
        if follows(&i.params, LINUX_INIT) && ext_ok(i) {
            // The distinctive part: Supported Address Types right after the addresses and before
            // ECN / Forward-TSN (usrsctp puts it after them, dcsctp and pion send none).
            let sat = pos(&i.params, SUPPORTED_ADDR);
            let after = sat.is_some_and(|s| {
                i.params[s + 1..]
                    .iter()
                    .any(|t| *t == ECN || *t == FORWARD_TSN)
            });
            if after {
                core = true;
                c.add(2, "INIT parameters in the Linux kernel's order: addresses first, Supported Address Types, then ECN, Supported Extensions, Forward-TSN");
            }
        } else {
            against = true;
        }
    }
    let mut cookie = false;
    if let Some(a) = ack {
        if let Some(why) = linux_cookie(a) {
            cookie = true;
            core = true;
            c.add(3, why);
        }
        if follows(&a.params, LINUX_INIT_ACK) && ext_ok(a) {
            // Cookie-first alone is common; something of the kernel's tail must follow it.
            let tail = pos(&a.params, COOKIE).is_some_and(|k| {
                a.params[k + 1..]
                    .iter()
                    .any(|t| matches!(*t, ECN | EXTENSIONS | FORWARD_TSN))
            });
            if tail {
                c.add(1, "INIT-ACK parameters in the kernel's order: addresses, State Cookie, then ECN, Supported Extensions, Forward-TSN (sctp_make_init_ack)");
            }
        } else {
            against = true;
        }
    }
    if against && !cookie {
        return None;
    }
    if core {
        if init.is_some_and(|i| i.inbound_streams == LINUX_DEFAULT_INSTREAMS) {
            c.add(1, "the INIT offers 65535 inbound streams, the kernel default when the application sets no SCTP_INITMSG");
        }
        if [init, ack]
            .iter()
            .flatten()
            .any(|s| s.a_rwnd == LINUX_DEFAULT_RWND)
        {
            c.add(1, "a_rwnd 106496, half the default receive buffer");
        }
    }
    Some(c)
}

/// usrsctp traits of one INIT / INIT-ACK that follows its order: the strong ones (the extension
/// list, the AUTH parameters) and the weak one (addresses or cookie last, which many stacks do).
fn usrsctp_traits(s: &Seen) -> (Vec<&'static str>, Option<&'static str>) {
    let mut strong = Vec::new();
    if s.extensions
        .as_ref()
        .is_some_and(|e| e.first() == Some(&FORWARD_TSN_CHUNK))
    {
        strong.push("Supported Extensions listing FORWARD-TSN first");
    }
    if let Some(e) = pos(&s.params, EXTENSIONS) {
        if s.params.get(e + 1) == Some(&RANDOM) {
            strong.push("AUTH RANDOM / HMAC-ALGO / CHUNKS right after Supported Extensions");
        }
    }
    let weak = if !s.ack {
        let first_addr = s
            .params
            .iter()
            .position(|x| matches!(*x, SUPPORTED_ADDR | IPV4 | IPV6));
        let caps = s
            .params
            .iter()
            .position(|x| matches!(*x, ECN | FORWARD_TSN));
        match (first_addr, caps) {
            (Some(a), Some(c)) if c < a => Some("Supported Address Types and addresses last"),
            _ => None,
        }
    } else if s.params.last() == Some(&COOKIE) && s.params.len() > 1 {
        Some("State Cookie last, after the addresses")
    } else {
        None
    };
    (strong, weak)
}

fn usrsctp(init: Option<&Seen>, ack: Option<&Seen>) -> Option<Candidate> {
    let mut c = Candidate::new("usrsctp", Confidence::High);
    let mut against = false;
    let mut cookie = false;
    if let Some(a) = ack {
        if a.cookie_head.starts_with(b"KAME-BSD") {
            cookie = true;
            c.add(4, "the INIT-ACK's State Cookie starts with \"KAME-BSD\", the KAME / FreeBSD cookie identification usrsctp inherits");
        }
    }
    // usrsctp's sctp_output.c: sctp_send_initiate / sctp_send_initiate_ack.
    for (s, order, what) in [
        (init, USRSCTP_INIT, "INIT"),
        (ack, USRSCTP_INIT_ACK, "INIT-ACK"),
    ] {
        let Some(s) = s else { continue };
        if !follows(&s.params, order) {
            against = true;
            continue;
        }
        // The extension list or the AUTH parameters must show; then each trait adds a point.
        let (mut traits, weak) = usrsctp_traits(s);
        if traits.is_empty() {
            continue;
        }
        traits.extend(weak);
        c.add(
            traits.len() as u32 + 1,
            format!(
                "{what} parameters in usrsctp's (FreeBSD's) order: {}",
                traits.join(", ")
            ),
        );
    }
    if against && !cookie {
        return None;
    }
    Some(c)
}

fn dcsctp(init: Option<&Seen>, ack: Option<&Seen>) -> Option<Candidate> {
    // Without the cookie magic only the source backs these rules: at most medium.
    let mut c = Candidate::new("dcsctp", Confidence::Medium);
    let mut against = false;
    let mut core = false;
    if let Some(a) = ack {
        let magic = a.cookie_head.get(..8);
        if magic == Some(b"dcSCTP00") || magic == Some(b"dcSCTPr0") {
            c.cap = Confidence::High;
            core = true;
            c.add(4, format!(
                "the INIT-ACK's State Cookie starts with \"{}\", dcsctp's cookie magic (net/dcsctp/socket/state_cookie_test.cc, dcsctp_socket.cc DeterminePeerImplementation; \"dcSCTPr0\" is its Rust port)",
                String::from_utf8_lossy(&a.cookie_head[..8])
            ));
        }
    }
    for (s, order, what) in [
        (init, DCSCTP_INIT, "INIT"),
        (ack, DCSCTP_INIT_ACK, "INIT-ACK"),
    ] {
        let Some(s) = s else { continue };
        let ext_reconfig_first = s
            .extensions
            .as_ref()
            .is_some_and(|e| e.first() == Some(&RECONFIG_CHUNK));
        if follows(&s.params, order)
            && has(&s.params, FORWARD_TSN)
            && has(&s.params, EXTENSIONS)
            && ext_reconfig_first
        {
            core = true;
            c.add(2, format!(
                "{what} carries only Forward-TSN{}, then Supported Extensions listing RE-CONFIG first, no addresses and no ECN: dcsctp's capability parameters",
                if s.ack { " after the State Cookie" } else { "" }
            ));
        } else if !s.truncated || !follows(&s.params, order) {
            against = true;
        }
    }
    if against && c.cap < Confidence::High {
        return None;
    }
    if core
        && [init, ack].iter().flatten().any(|s| {
            s.a_rwnd == DCSCTP_RWND && s.outbound_streams == 65535 && s.inbound_streams == 65535
        })
    {
        c.add(
            1,
            "a_rwnd 5 MiB and 65535 streams each way, dcsctp's defaults",
        );
    }
    Some(c)
}

fn pion(init: Option<&Seen>, ack: Option<&Seen>) -> Option<Candidate> {
    // Source only, and a short signature: never more than low.
    let mut c = Candidate::new("pion", Confidence::Low);
    for (s, order, what) in [(init, PION_INIT, "INIT"), (ack, PION_INIT_ACK, "INIT-ACK")] {
        let Some(s) = s else { continue };
        let exact = s.extensions.as_deref() == Some(&[RECONFIG_CHUNK, FORWARD_TSN_CHUNK][..]);
        if follows(&s.params, order) && exact && !has(&s.params, FORWARD_TSN) {
            c.add(2, format!(
                "{what} carries only Supported Extensions [RE-CONFIG, FORWARD-TSN] and no Forward-TSN parameter, as pion/sctp (Go; also webrtc-rs, its port) sends"
            ));
        } else {
            return None;
        }
    }
    Some(c)
}

/// The stack of one endpoint from the first INIT and INIT-ACK it sent.
pub(super) fn classify(init: Option<&Seen>, ack: Option<&Seen>) -> StackReport {
    if init.is_none() && ack.is_none() {
        return StackReport {
            evidence: "no INIT or INIT-ACK from this endpoint was captured".to_string(),
            ..StackReport::default()
        };
    }
    let mut cands: Vec<Candidate> = [
        linux(init, ack),
        usrsctp(init, ack),
        dcsctp(init, ack),
        pion(init, ack),
    ]
    .into_iter()
    .flatten()
    .filter(|c| c.score >= 2)
    .collect();
    cands.sort_by_key(|c| std::cmp::Reverse(c.score));
    let join = |out: &mut String, c: &Candidate| {
        for (i, e) in c.evidence.iter().enumerate() {
            if i > 0 {
                out.push_str("; ");
            }
            out.push_str(e);
        }
    };
    let mut evidence = String::with_capacity(640);
    let mut name = None;
    let mut confidence = Confidence::Low;
    match (cands.first(), cands.get(1)) {
        (None, _) => evidence.push_str("no known stack's INIT / INIT-ACK signature matches"),
        (Some(best), Some(second)) if best.score < second.score + 2 => {
            let _ = write!(evidence, "conflicting signatures: {} (", best.name);
            join(&mut evidence, best);
            let _ = write!(evidence, ") and {} (", second.name);
            join(&mut evidence, second);
            evidence.push(')');
        }
        (Some(best), second) => {
            name = Some(best.name.to_string());
            confidence = best.confidence();
            join(&mut evidence, best);
            if let Some(second) = second {
                confidence = confidence.min(Confidence::Medium);
                let _ = write!(evidence, "; but also like {}: ", second.name);
                join(&mut evidence, second);
            }
        }
    }
    evidence.push_str(". Sent: ");
    for (i, s) in [init, ack].into_iter().flatten().enumerate() {
        if i > 0 {
            evidence.push_str("; ");
        }
        describe(&mut evidence, s);
    }
    StackReport {
        name,
        confidence: confidence.as_str().to_string(),
        evidence,
    }
}
