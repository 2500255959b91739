//! What-if recommendations of real failovers (issue 14 item 4) against the lab run made with the
//! proposed setting: a proposal whose RTO could expire before the peer's delayed SACK of a lone
//! packet carries that condition, and the lab shows why (the run with the proposed RTO.min had a
//! spurious failover that the base run did not).

use crate::common;

use analyzer::report::CaptureReport;
use serde_json::Value;

fn report(name: &str) -> Value {
    let (_, r): (_, CaptureReport) = common::analyze(&common::samples_dir().join(name));
    serde_json::to_value(&r).unwrap()
}

/// The failovers of every direction, spurious or not.
fn failovers(r: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for a in r["associations"].as_array().unwrap() {
        for d in a["directions"].as_array().unwrap() {
            out.extend(d["failovers"].as_array().unwrap().iter().cloned());
        }
    }
    out
}

#[test]
fn a_lower_rto_min_is_proposed_on_the_condition_of_the_peers_sack_delay() {
    // Linux, RTO.min 1 s, peer SACK delay 200 ms (truth), a message every 20 ms: every second
    // packet is SACKed at once, so the trace never shows the delay.
    let truth: Value = serde_json::from_str(
        &std::fs::read_to_string(common::samples_dir().join("lk_default_cut_truth.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(truth["configured"]["sack_ms"], 200);
    let base = report("lk_default_cut_sender.pcap");
    let real: Vec<Value> = failovers(&base)
        .into_iter()
        .filter(|f| f["spurious"] == false)
        .collect();
    assert_eq!(real.len(), 1);
    assert!(failovers(&base).iter().all(|f| f["spurious"] == false));
    let rec = real[0]["recommendation"].as_str().unwrap();
    assert!(
        rec.contains("with RTO.min 100 ms instead of 1003 ms"),
        "{rec}"
    );
    // The proposal's RTO (130 ms, the estimate) is below RTT 40 ms + the RFC's 200 ms default.
    assert!(
        rec.contains("provided the peer SACKs a lone packet within 90 ms")
            && rec.contains("I-bit (RFC 7053)")
            && rec.contains("was not seen here"),
        "{rec}"
    );
    // The same run with RTO.min 100 ms: the failover came as predicted, and a spurious one
    // with it, caused by the peer's SACK delay.
    let with = report("whatif/wi_lk_default_cut_rtomin100_sender.pcap.gz");
    let spurious: Vec<Value> = failovers(&with)
        .into_iter()
        .filter(|f| f["spurious"] == true)
        .collect();
    assert!(!spurious.is_empty());
    assert!(spurious
        .iter()
        .all(|f| f["cause"] == "sack_delay_exceeds_rto"));
}
