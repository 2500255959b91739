//! NFLOG captures (linktype 239, `tcpdump -i nflog:N`) against their truth (`sample-traces/
//! generate-nflog.sh`: fmt_sender.pcap's packets sent again in their own timing and logged by
//! nftables twice). Logged on the way in, with the kernel's timestamp of each packet: counted as
//! tshark counts them, and timed by that timestamp, the association reads as the source capture's
//! within the replay's skew. Logged on the way out, without it: counted the same, and a warning
//! says the times are libpcap's batch reads.

use serde_json::Value;

use crate::common;

fn truth(name: &str) -> Value {
    let p = common::samples_dir().join(format!("{name}_truth.json"));
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn counts(name: &str) -> analyzer::report::CaptureReport {
    let t = truth(name);
    let (_, r) = common::analyze(&common::samples_dir().join(format!("{name}.pcap")));
    assert_eq!(r.packets, t["packets"].as_u64().unwrap(), "{name}");
    assert_eq!(
        r.sctp_packets,
        t["sctp_packets"].as_u64().unwrap(),
        "{name}"
    );
    let chunks: u64 = r.accounting.chunk_totals.values().sum();
    assert_eq!(chunks, t["sctp_chunks"].as_u64().unwrap(), "{name}");
    assert_eq!(
        r.accounting.chunk_totals["DATA"],
        t["data_chunks"].as_u64().unwrap(),
        "{name}"
    );
    assert_eq!(r.associations.len(), 1, "{name}");
    r
}

#[test]
fn nflog_with_kernel_timestamps_reads_as_its_source() {
    let t = truth("nflog_fmt");
    let skew_ms = t["max_kernel_time_skew_from_source_ms"].as_f64().unwrap();
    assert_eq!(t["frames_with_kernel_timestamp"], t["packets"]);
    let r = counts("nflog_fmt");
    assert!(
        r.warnings
            .iter()
            .any(|w| w.starts_with("122 NFLOG frames are timed by the kernel's timestamp")),
        "{:?}",
        r.warnings
    );
    let (_, src) = common::analyze(&common::samples_dir().join("fmt_sender.pcap"));
    let (a, b) = (&r.associations[0], &src.associations[0]);
    assert!((r.duration_s - src.duration_s).abs() * 1e3 <= skew_ms);
    assert_eq!(a.lifecycle.end.kind, b.lifecycle.end.kind);
    let (da, db) = (&a.directions[0], &b.directions[0]);
    assert_eq!(da.vantage, db.vantage);
    assert_eq!(da.timeouts.len(), db.timeouts.len());
    assert_eq!(da.failovers.len(), 1);
    let (fa, fb) = (&da.failovers[0], &db.failovers[0]);
    let ms = |f: &analyzer::report_infer::FailoverReport| f.failover_ms.unwrap();
    assert!(
        (ms(fa) - ms(fb)).abs() <= 2.0 * skew_ms,
        "{} {}",
        ms(fa),
        ms(fb)
    );
    let rtt = |x: &analyzer::report::AssocReport| x.paths[0].infer.rtt_ms.as_ref().unwrap().median;
    assert!(
        (rtt(a) - rtt(b)).abs() <= 2.0 * skew_ms,
        "{} {}",
        rtt(a),
        rtt(b)
    );
}

#[test]
fn nflog_without_kernel_timestamps_is_counted_and_its_times_are_called_untrustworthy() {
    let t = truth("nflog_fmt_output");
    assert_eq!(t["frames_with_kernel_timestamp"], 0);
    let r = counts("nflog_fmt_output");
    let n = t["packets"].as_u64().unwrap();
    assert!(
        r.warnings.iter().any(|w| w.starts_with(&format!(
            "{n} of {n} NFLOG frames carry no kernel timestamp"
        )) && w.contains("cannot be trusted")),
        "{:?}",
        r.warnings
    );
}
