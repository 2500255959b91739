//! The head-of-line JSON contract of a direction (`HolReport`) and of its streams, from the
//! clock the vantage supports.

use serde::{Deserialize, Serialize};

use super::{Clock, Dir, Hol, ARRIVALS, KNOWN, LAST, NOT_YET, SACKS};
use crate::infer::stats::Dist;
use crate::infer::summary::Vantage;

/// Head-of-line blocking of one direction (`directions[i].hol`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HolReport {
    /// The direction's vantage ("receiver", "sender", "middle", "unknown").
    pub vantage: String,
    /// Whose times: "arrivals" (DATA first seen, at the receiver vantage) or "sacks" (the first
    /// SACK acknowledging each TSN, elsewhere).
    pub clock: String,
    /// Messages whose every fragment arrived (ordered and unordered).
    pub messages: u64,
    /// Ordered messages delivered in stream order (waiting or not).
    pub ordered_messages: u64,
    /// Ordered messages complete before an earlier message of their stream: they waited.
    pub blocked_messages: u64,
    /// How long they waited (from complete to deliverable), ms; null with none blocked.
    pub delay_ms: Option<Dist>,
    pub delay_sum_ms: f64,
    /// The same losses with every message on one ordered stream (delivery in TSN order, as one
    /// TCP byte stream delivers).
    pub single_stream_blocked_messages: u64,
    pub single_stream_delay_ms: Option<Dist>,
    pub single_stream_delay_sum_ms: f64,
    /// Messages behind an earlier one the capture never showed: delivered, no delay given.
    pub unattributed_messages: u64,
    /// Complete ordered messages still waiting for an earlier one of their stream when the
    /// capture ended (not in `blocked_messages`: their wait has no end), and the longest wait
    /// so far, ms (null with none).
    #[serde(default)]
    pub waiting_at_end_messages: u64,
    #[serde(default)]
    pub waiting_at_end_max_ms: Option<f64>,
    /// The one-stream counterfactual's: complete messages above the cumulative point when the
    /// capture ended (a TSN below them never arrived).
    #[serde(default)]
    pub single_stream_waiting_at_end_messages: u64,
    /// Streams followed (DATA on streams past 1024 only counts for the one-stream figures).
    pub streams: u64,
    pub evidence: String,
}

/// The clock that the vantage supports: DATA arrivals only at the receiver.
pub fn clock_for(vantage: Vantage) -> usize {
    if vantage == Vantage::Receiver {
        ARRIVALS
    } else {
        SACKS
    }
}

impl Clock {
    /// Whether this clock's figures stand: some TSN settled, none lost to the window bound.
    fn usable(&self) -> bool {
        self.advanced && !self.overflowed
    }
}

impl Hol {
    /// Head-of-line figures of DATA sender `sender` at `vantage`; None without DATA, or when the
    /// clock the vantage needs has nothing (no SACK seen) or lost TSNs to the window bound.
    /// `last_ns`: the association's last packet (how long the messages still waiting waited).
    pub fn report(&self, sender: u8, vantage: Vantage, last_ns: i64) -> Option<HolReport> {
        let d: &Dir = self.dir(sender)?;
        let k = clock_for(vantage);
        let c = &d.clocks[k];
        if !c.usable() {
            return None;
        }
        let sc = d.streams.iter().map(|h| &h.clocks[k]);
        let ordered_messages: u64 = sc.clone().map(|s| s.delivered).sum();
        let blocked_messages: u64 = sc.clone().map(|s| s.blocked).sum();
        let delays = sc.filter_map(|s| s.delays.as_deref());
        // + 0.0: an empty float sum is -0.0.
        let delay_sum_ms: f64 = delays.clone().map(|d| d.sum()).sum::<f64>() + 0.0;
        let mut all = crate::infer::stats::Samples::default();
        for d in delays {
            for &v in d.values() {
                all.push(v);
            }
        }
        let mut delay_ms = all.dist();
        if let Some(d) = &mut delay_ms {
            // The per-stream samples are bounded reservoirs: count, min and max are exact.
            d.n = blocked_messages;
        }
        let mut evidence = if k == ARRIVALS {
            "times of DATA arrivals in the capture (receiver vantage)".to_string()
        } else {
            format!(
                "times of the first SACK acknowledging each TSN ({} vantage: late by the SACK's \
                 path delay)",
                vantage.as_str()
            )
        };
        // Still waiting at the end, and the earliest completion among them (a stream's waiting
        // list is in number order, not completion order).
        let (waiting_at_end, oldest) = d
            .streams
            .iter()
            .flat_map(|h| h.clocks[k].waiting.iter())
            .fold((0u64, None::<i64>), |(n, o), w| {
                (
                    n + 1,
                    Some(o.map_or(w.complete_ns, |o| o.min(w.complete_ns))),
                )
            });
        let waiting_at_end_max_ms = oldest.map(|t| last_ns.saturating_sub(t).max(0) as f64 / 1e6);
        if let Some(ms) = waiting_at_end_max_ms {
            evidence.push_str(&format!(
                "; {waiting_at_end} complete message(s) were still waiting for an earlier one of \
                 their stream when the capture ended (the longest for {} ms): not counted as \
                 blocked, their wait has no end in the capture",
                crate::decimal::Fixed(ms, 1)
            ));
        }
        if c.unattributed > 0 {
            evidence.push_str(&format!(
                "; {} message(s) behind a message the capture never showed (not captured, or cut \
                 by the snap length) have no delay: the counts are lower bounds",
                c.unattributed
            ));
        }
        if d.untracked > 0 {
            evidence.push_str(&format!(
                "; {} DATA chunk(s) on streams past the {} followed count only for one stream",
                d.untracked,
                super::MAX_STREAMS
            ));
        }
        Some(HolReport {
            vantage: vantage.as_str().to_string(),
            clock: if k == ARRIVALS { "arrivals" } else { "sacks" }.to_string(),
            messages: c.messages,
            ordered_messages,
            blocked_messages,
            delay_ms,
            delay_sum_ms,
            single_stream_blocked_messages: c.single_blocked,
            single_stream_delay_ms: c.single_delays.as_ref().and_then(|d| d.dist()),
            single_stream_delay_sum_ms: c.single_delays.as_ref().map_or(0.0, |d| d.sum()),
            unattributed_messages: c.unattributed,
            waiting_at_end_messages: waiting_at_end,
            waiting_at_end_max_ms,
            single_stream_waiting_at_end_messages: d.complete_above_cum(k),
            streams: d.streams.len() as u64,
            evidence,
        })
    }

    /// Why `report` gives nothing for DATA sender `sender` at `vantage`; None when it gives
    /// figures or the direction carried no DATA.
    pub fn missing_reason(&self, sender: u8, vantage: Vantage) -> Option<&'static str> {
        let d = self.dir(sender)?;
        let c = &d.clocks[clock_for(vantage)];
        if c.overflowed {
            Some("more TSNs were outstanding at once than the 16384 followed")
        } else if !c.advanced {
            Some(if clock_for(vantage) == SACKS {
                "no SACK acknowledged this direction's DATA in the capture (away from the \
                 receiver the times come from SACKs)"
            } else {
                "no DATA arrival settled"
            })
        } else {
            None
        }
    }

    /// Blocked messages and their delay on stream `sid` of DATA sender `sender` at `vantage`;
    /// None where `report` is None or the stream is not followed.
    pub fn stream(&self, sender: u8, vantage: Vantage, sid: u16) -> Option<(u64, Option<Dist>)> {
        let d = self.dir(sender)?;
        let k = clock_for(vantage);
        if !d.clocks[k].usable() {
            return None;
        }
        let h = d.streams.iter().find(|h| h.sid == sid)?;
        let sc = &h.clocks[k];
        Some((sc.blocked, sc.delays.as_ref().and_then(|d| d.dist())))
    }
}

impl Dir {
    /// Complete messages above clock `k`'s cumulative point: on one stream, still waiting at
    /// the end (their last fragment arrived, a lower TSN did not).
    fn complete_above_cum(&self, k: usize) -> u64 {
        let mut n = 0;
        let mut tsn = self.clocks[k].cum.wrapping_add(1);
        while self.held(tsn) {
            let s = self.at(tsn);
            if s.flags & (KNOWN | LAST) == KNOWN | LAST
                && s.t[k] != NOT_YET
                && self.message_complete(k, tsn, s.t[k]).is_some()
            {
                n += 1;
            }
            tsn = tsn.wrapping_add(1);
        }
        n
    }
}
