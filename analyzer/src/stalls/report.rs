//! The stalls of one direction as the JSON contract gives them (`directions[i].stalls`), with
//! their evidence in words and a display filter.

use serde::{Deserialize, Serialize};

use super::{Cause, Episode, Stalls, MIN_FROZEN_NS};
use crate::packet::TimeBase;

/// One stall in the JSON (`stalls` of a direction).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StallReport {
    /// "zero_window", "pmtu_black_hole" or "frozen_cum_ack".
    pub cause: String,
    pub t_s: f64,
    /// Null when it lasted past the capture's end.
    pub end_s: Option<f64>,
    pub frame: u64,
    pub end_frame: Option<u64>,
    pub evidence: String,
    /// Wireshark display filter for the episode's frames of this association.
    pub filter: String,
}

impl Stalls {
    /// The stalls of DATA sender `sender`, `rto_ms` its RTO as the timer inference saw it (for
    /// the max(1 s, 3 RTO) of a frozen cumulative ack), `last_ns` the association's last packet,
    /// `vtag` the tag of the packets the sender receives (its peer's SACKs carry it).
    pub fn report(
        &self,
        c: TimeBase,
        sender: u8,
        rto_ms: Option<f64>,
        last_ns: i64,
        vtags: [Option<u32>; 2],
    ) -> Vec<StallReport> {
        let min_frozen = (MIN_FROZEN_NS as f64).max(3.0 * rto_ms.unwrap_or(0.0) * 1e6) as i64;
        // The association's packets: either tag (the same for every episode).
        let tags: Vec<String> = vtags
            .iter()
            .flatten()
            .map(|t| format!("sctp.verification_tag == 0x{t:08x}"))
            .collect();
        let tags = if tags.is_empty() {
            "sctp".to_string()
        } else {
            format!("({})", tags.join(" || "))
        };
        self.episodes
            .iter()
            .filter(|e| e.sender == sender)
            .filter(|e| {
                e.cause != Cause::FrozenCumAck
                    || e.end.map_or(last_ns, |x| x.0) - e.start_ns >= min_frozen
            })
            .map(|e| {
                let frames = match e.end {
                    Some((_, f)) => format!("frame.number >= {} && frame.number <= {f}", e.frame),
                    None => format!("frame.number >= {}", e.frame),
                };
                let filter = format!("{frames} && {tags}");
                StallReport {
                    cause: e.cause.as_str().to_string(),
                    t_s: c.rel_s(e.start_ns),
                    end_s: e.end.map(|x| c.rel_s(x.0)),
                    frame: e.frame,
                    end_frame: e.end.map(|x| x.1),
                    evidence: evidence(e, last_ns, rto_ms),
                    filter,
                }
            })
            .collect()
    }
}

fn evidence(e: &Episode, last_ns: i64, rto_ms: Option<f64>) -> String {
    let span = |to: i64| (to - e.start_ns) as f64 / 1e9;
    let how_long = match e.end {
        Some((t, _)) => format!("for {} s", crate::decimal::Fixed(span(t), 2)),
        None => format!(
            "from then to the end of the capture ({} s and on)",
            crate::decimal::Fixed(span(last_ns), 2)
        ),
    };
    match e.cause {
        Cause::ZeroWindow => format!(
            "the receiver advertised a window of {} bytes, below one DATA chunk, while the sender had DATA to send (outstanding, or probing the window) {how_long}: {} SACK{}, {} DATA packet{} sent meanwhile (window probes, RFC 9260 6.1 A); a receiving application that stopped reading",
            e.value,
            e.sacks,
            if e.sacks == 1 { "" } else { "s" },
            e.data_sends,
            if e.data_sends == 1 { "" } else { "s" },
        ),
        Cause::PmtuBlackHole => format!(
            "a {}-byte DATA packet (TSN {}) was sent {} times and never acknowledged while DATA packets of up to {} bytes sent after it got through (the peer acknowledged TSNs above it): packets above some size are dropped on the path (a path MTU black hole, RFC 4821 / RFC 8899), {how_long}",
            e.size, e.value, e.data_sends, e.acked_max
        ),
        Cause::FrozenCumAck if e.size > 0 => format!(
            "the cumulative TSN ack stood at {} {how_long} (more than max(1 s, 3 RTO{})) while {} SACKs acknowledged later DATA in gap blocks: TSN {} was sent {} times in a {}-byte packet and never acknowledged, though a later {}-byte DATA packet to a destination it was resent to was: neither the path nor the packet size keeps it out, the peer or a middlebox refuses it",
            e.value,
            rto_ms.map_or(String::new(), |r| format!(" = {} ms", crate::decimal::Fixed(3.0 * r, 0))),
            e.sacks,
            e.tsn,
            e.data_sends,
            e.size,
            e.acked_max,
        ),
        Cause::FrozenCumAck => format!(
            "{} SACKs arrived with the cumulative TSN ack stuck at {} while DATA was outstanding, {how_long} (more than max(1 s, 3 RTO{})): the receiver takes no more data though it answers",
            e.sacks,
            e.value,
            rto_ms.map_or(String::new(), |r| format!(" = {} ms", crate::decimal::Fixed(3.0 * r, 0))),
        ),
    }
}
