//! Snapshot tests (insta) of the terminal report and the JSON contract on sample traces, so any
//! change in a reported figure shows up in review.

mod common;

fn report(name: &str) -> analyzer::report::CaptureReport {
    let (_, mut r) = common::analyze(&common::samples_dir().join(name));
    r.file = name.to_string();
    r
}

#[test]
fn text_report_multihomed_cut() {
    let r = report("cut_p20_sack40_sender.pcap");
    insta::assert_snapshot!(analyzer::text::render_capture(&r));
}

#[test]
fn text_report_spurious_failover() {
    let r = report("spur_pmr1_rtomin30_sender.pcap");
    insta::assert_snapshot!(analyzer::text::render_capture(&r));
}

#[test]
fn json_directions_sparse_receiver() {
    let r = report("sparse_sack200_receiver.pcap");
    insta::assert_json_snapshot!(r.associations[0].directions);
}

/// An association the client aborted with a reason (User-Initiated Abort, lab run abort_p20).
#[test]
fn text_report_aborted_association() {
    let r = report("abort_p20_sender.pcap");
    insta::assert_snapshot!(analyzer::text::render_capture(&r));
}

/// Stalls (lab runs zerowin_p10, pmtu_p20 and frozen_p20): the headline says STALLED, each
/// stall in words.
#[test]
fn text_report_stalled_associations() {
    let mut out = String::new();
    for name in [
        "zerowin_p10_sender.pcap",
        "pmtu_p20_sender.pcap",
        "frozen_p20_sender.pcap",
    ] {
        out.push_str(&analyzer::text::render_capture(&report(name)));
    }
    insta::assert_snapshot!(out);
}

/// A client that crashed and restarted its association (lab run restart_short_p20): two records.
#[test]
fn text_report_restarted_association() {
    let r = report("restart_short_p20_sender.pcap");
    insta::assert_snapshot!(analyzer::text::render_capture(&r));
}
