//! Head-of-line blocking in words (issue 15 section 2): the "Head-of-line blocking" block of a
//! direction's panel on the association page, and the "HOL blocked" cell of its streams table.
//! Every figure is the analyzer's (`DirectionReport.hol`, `StreamReport.hol_*`).

use analyzer::hol::HolReport;
use analyzer::infer::stats::Dist;
use analyzer::report_infer::DirectionReport;
use analyzer::streams::StreamReport;

use crate::views::{round, NONE};

/// The head-of-line block of one direction.
pub struct HolView {
    /// "blocked", "none_blocked", "no_ordered" or "unavailable" (`data-state`).
    pub state: &'static str,
    /// Whose times, in words ("from DATA arrivals at the receiver"); empty when unavailable.
    pub clock: String,
    /// What waited, or why there are no figures.
    pub blocked: String,
    /// The one-stream counterfactual (empty when unavailable).
    pub single: String,
    /// The analyzer's evidence sentence (empty when unavailable).
    pub evidence: String,
    pub blocked_messages: u64,
    pub single_stream_blocked_messages: u64,
}

/// Milliseconds with one decimal ("37.9").
fn ms1(v: f64) -> String {
    round(v, 1)
}

/// A total in whole milliseconds ("865"); never "-0".
fn ms0(v: f64) -> String {
    round(if v > 0.0 { v } else { 0.0 }, 0)
}

fn messages(n: u64) -> String {
    if n == 1 {
        "1 message".into()
    } else {
        format!("{n} messages")
    }
}

/// "from DATA arrivals at the receiver", "from SACKs at the sender, late by the SACK's path delay".
fn clock_words(h: &HolReport) -> String {
    if h.clock == "arrivals" {
        return "from DATA arrivals at the receiver".into();
    }
    let at = match h.vantage.as_str() {
        "sender" => "at the sender".to_string(),
        "middle" => "in the middle of the path".to_string(),
        "receiver" => "at the receiver".to_string(),
        _ => "at an unknown vantage".to_string(),
    };
    format!("from SACKs {at}, late by the SACK's path delay")
}

/// "max 37.9 ms, p95 35.4 ms, total 865 ms".
fn delay_words(d: &Dist, sum_ms: f64) -> String {
    format!(
        "max {} ms, p95 {} ms, total {} ms",
        ms1(d.max),
        ms1(d.p95),
        ms0(sum_ms)
    )
}

fn single_words(h: &HolReport) -> String {
    let head = "On one stream (as TCP delivers):";
    let mut s = match (&h.single_stream_delay_ms, h.single_stream_blocked_messages) {
        (_, 0) | (None, _) => format!("{head} no message would have waited either."),
        (Some(d), n) => format!(
            "{head} {} would have waited, {}.",
            messages(n),
            delay_words(d, h.single_stream_delay_sum_ms)
        ),
    };
    if h.streams <= 1 {
        s.push_str(" Every message is already on one stream: the same figures.");
    } else {
        let saved = h.single_stream_delay_sum_ms - h.delay_sum_ms;
        if h.single_stream_blocked_messages > 0 && saved >= 1.0 {
            s.push_str(&format!(
                " Its {} streams saved {} ms of waiting.",
                h.streams,
                ms0(saved)
            ));
        }
    }
    s
}

/// Why a direction with DATA has no head-of-line figures (the analyzer's `hol` is null): the
/// analyzer's own reason (`hol_missing`) when it gave one.
fn unavailable_words(vantage: &str, missing: Option<&str>) -> String {
    if let Some(why) = missing {
        return format!("No figures: {why}.");
    }
    let needs = if vantage == "receiver" {
        "DATA arrivals"
    } else {
        "SACKs acknowledging the DATA"
    };
    format!(
        "No figures: the times this vantage needs ({needs}) were not in the capture, or more \
         TSNs were outstanding at once than the analyzer follows."
    )
}

/// The head-of-line block of direction `d`; None when it carried no DATA (nothing to say).
pub fn hol_view(d: &DirectionReport) -> Option<HolView> {
    if d.data_chunks == 0 {
        return None;
    }
    let Some(h) = d.hol.as_deref() else {
        return Some(HolView {
            state: "unavailable",
            clock: String::new(),
            blocked: unavailable_words(&d.vantage, d.hol_missing.as_deref()),
            single: String::new(),
            evidence: String::new(),
            blocked_messages: 0,
            single_stream_blocked_messages: 0,
        });
    };
    let (state, blocked) = match (&h.delay_ms, h.blocked_messages) {
        _ if h.ordered_messages == 0 => (
            "no_ordered",
            format!(
                "No ordered message ({} complete, all unordered): unordered messages never wait \
                 for another.",
                messages(h.messages)
            ),
        ),
        (_, 0) => (
            "none_blocked",
            format!(
                "No message waited for an earlier one of its stream ({} ordered {}).",
                h.ordered_messages,
                if h.ordered_messages == 1 {
                    "message"
                } else {
                    "messages"
                }
            ),
        ),
        (Some(x), n) => (
            "blocked",
            format!(
                "{n} of {} ordered messages waited for an earlier message of their stream: {}.",
                h.ordered_messages,
                delay_words(x, h.delay_sum_ms)
            ),
        ),
        (None, n) => (
            "blocked",
            format!(
                "{n} of {} ordered messages waited for an earlier message of their stream.",
                h.ordered_messages
            ),
        ),
    };
    let mut blocked = blocked;
    if let Some(w) = waiting_words(h) {
        blocked.push(' ');
        blocked.push_str(&w);
    }
    Some(HolView {
        state,
        clock: clock_words(h),
        blocked,
        single: single_words(h),
        evidence: h.evidence.clone(),
        blocked_messages: h.blocked_messages,
        single_stream_blocked_messages: h.single_stream_blocked_messages,
    })
}

/// The messages still waiting when the capture ended, in words (None with none).
fn waiting_words(h: &HolReport) -> Option<String> {
    let ms = h.waiting_at_end_max_ms?;
    let one = h.waiting_at_end_messages == 1;
    Some(format!(
        "{} {} complete and still waiting for an earlier message of {} stream when the capture \
         ended (the longest for {} ms).",
        messages(h.waiting_at_end_messages),
        if one { "was" } else { "were" },
        if one { "its" } else { "their" },
        ms1(ms)
    ))
}

/// A stream's "HOL blocked (max ms)" cell: "12 (37.9)" (count, longest wait in ms), "0", or "—"
/// without figures.
pub fn stream_cell(s: &StreamReport) -> String {
    match (s.hol_blocked_messages, &s.hol_delay_ms) {
        (None, _) => NONE.into(),
        (Some(n), Some(d)) if n > 0 => format!("{n} ({})", ms1(d.max)),
        (Some(n), _) => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dist(max: f64, p95: f64) -> Dist {
        Dist {
            n: 1,
            min: 1.0,
            median: 2.0,
            p95,
            max,
        }
    }

    fn report() -> HolReport {
        HolReport {
            vantage: "receiver".into(),
            clock: "arrivals".into(),
            messages: 801,
            ordered_messages: 801,
            blocked_messages: 34,
            delay_ms: Some(dist(37.935, 35.41145)),
            delay_sum_ms: 864.873,
            single_stream_blocked_messages: 171,
            single_stream_delay_ms: Some(dist(52.867, 50.2735)),
            single_stream_delay_sum_ms: 4752.118,
            unattributed_messages: 0,
            waiting_at_end_messages: 0,
            waiting_at_end_max_ms: None,
            single_stream_waiting_at_end_messages: 0,
            streams: 4,
            evidence: "times of DATA arrivals in the capture (receiver vantage)".into(),
        }
    }

    #[test]
    fn blocked_and_one_stream_in_words() {
        let h = report();
        assert_eq!(clock_words(&h), "from DATA arrivals at the receiver");
        assert_eq!(
            single_words(&h),
            "On one stream (as TCP delivers): 171 messages would have waited, max 52.9 ms, \
             p95 50.3 ms, total 4752 ms. Its 4 streams saved 3887 ms of waiting."
        );
        let mut s = h.clone();
        s.clock = "sacks".into();
        s.vantage = "sender".into();
        assert_eq!(
            clock_words(&s),
            "from SACKs at the sender, late by the SACK's path delay"
        );
    }

    #[test]
    fn nothing_blocked_keeps_the_one_stream_figure() {
        let mut h = report();
        h.blocked_messages = 0;
        h.delay_ms = None;
        h.delay_sum_ms = -0.0;
        h.streams = 1;
        h.single_stream_blocked_messages = 0;
        h.single_stream_delay_ms = None;
        h.single_stream_delay_sum_ms = 0.0;
        assert_eq!(
            single_words(&h),
            "On one stream (as TCP delivers): no message would have waited either. Every \
             message is already on one stream: the same figures."
        );
        assert_eq!(ms0(-0.0), "0");
    }

    #[test]
    fn messages_still_waiting_at_the_end_in_words() {
        let mut h = report();
        assert_eq!(waiting_words(&h), None);
        h.waiting_at_end_messages = 200;
        h.waiting_at_end_max_ms = Some(9_981.26);
        assert_eq!(
            waiting_words(&h).as_deref(),
            Some(
                "200 messages were complete and still waiting for an earlier message of their \
                 stream when the capture ended (the longest for 9981.3 ms)."
            )
        );
    }

    #[test]
    fn no_figures_says_which_times_are_missing() {
        assert_eq!(
            unavailable_words("sender", None),
            "No figures: the times this vantage needs (SACKs acknowledging the DATA) were not in \
             the capture, or more TSNs were outstanding at once than the analyzer follows."
        );
        assert!(unavailable_words("receiver", None).contains("(DATA arrivals)"));
        assert_eq!(
            unavailable_words("sender", Some("no SACK acknowledged this direction's DATA")),
            "No figures: no SACK acknowledged this direction's DATA."
        );
        let cell = |n: Option<u64>, d: Option<Dist>| {
            let mut s: StreamReport = serde_json::from_value(serde_json::json!({
                "stream": 0, "messages": 1, "bytes": 1, "ordered_share": 1.0, "fragmented": 0,
                "ppids": [], "first_s": 0.0, "last_s": 0.0,
                "hol_blocked_messages": null, "hol_delay_ms": null
            }))
            .unwrap();
            s.hol_blocked_messages = n;
            s.hol_delay_ms = d;
            stream_cell(&s)
        };
        assert_eq!(cell(None, None), NONE);
        assert_eq!(cell(Some(0), None), "0");
        assert_eq!(cell(Some(12), Some(dist(37.935, 36.5))), "12 (37.9)");
    }
}
