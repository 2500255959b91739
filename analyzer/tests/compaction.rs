//! Summarising an association when it ends and dropping its detail (bounded memory) must not
//! change a single reported figure.

use crate::common;

use analyzer::analyze::{analyze_file, Options};
use analyzer::report::CaptureReport;

#[test]
fn compacted_report_equals_full_report() {
    let (mut n, mut message_rows) = (0, 0);
    for e in std::fs::read_dir(common::samples_dir()).unwrap().flatten() {
        let p = e.path();
        let ext = p.extension().and_then(|x| x.to_str()).unwrap_or("");
        if ext != "pcap" && ext != "pcapng" {
            continue;
        }
        let full = Options {
            keep_rows: true,
            ..Options::default()
        };
        let lean = Options {
            keep_rows: false,
            ..Options::default()
        };
        let (fa, la) = (
            analyze_file(&p, &full, &mut |_| {}).unwrap(),
            analyze_file(&p, &lean, &mut |_| {}).unwrap(),
        );
        // Per-message rows and throughput bins (SCTP destinations, TCP directions) feed the
        // tables alone: kept only when tables are wanted.
        let rows = |c: &analyzer::analyze::CaptureAnalysis| -> usize {
            let dirs = c.associations.iter().flat_map(|a| &a.infer.dirs);
            let sctp: usize = dirs
                .map(|d| {
                    d.messages.len() + d.dsts.iter().map(|x| x.bytes_per_s.len()).sum::<usize>()
                })
                .sum();
            let tcp = c.tcp_flows.iter().flat_map(|f| &f.dirs);
            sctp + tcp.map(|d| d.bytes_per_s.len()).sum::<usize>()
        };
        assert_eq!(rows(&la), 0, "{}", p.display());
        message_rows += rows(&fa);
        let a = CaptureReport::from_analysis(&fa);
        let b = CaptureReport::from_analysis(&la);
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            serde_json::to_value(&b).unwrap(),
            "{}",
            p.display()
        );
        n += 1;
    }
    assert!(n >= 10, "sample traces missing ({n})");
    assert!(message_rows > 0, "no message rows with tables wanted");
}

#[test]
fn streamed_json_equals_the_report() {
    use analyzer::json_stream::JsonStream;
    for name in [
        "cut_p20_sack40_sender.pcap",
        "spur_pmr1_rtomin30_sender.pcap",
        "fmt_pcapng_receiver.pcapng",
    ] {
        let p = common::samples_dir().join(name);
        let opts = Options {
            keep_rows: false,
            ..Options::default()
        };
        let mut s = JsonStream::begin(Vec::new()).unwrap();
        s.capture(std::slice::from_ref(&p), &opts, &mut |_| {})
            .unwrap()
            .unwrap();
        let streamed: serde_json::Value = serde_json::from_slice(&s.finish().unwrap()).unwrap();
        let full = CaptureReport::from_analysis(&analyze_file(&p, &opts, &mut |_| {}).unwrap());
        let mut want = serde_json::to_value(&full).unwrap();
        let mut got = streamed["captures"][0].clone();
        for v in [&mut want, &mut got] {
            let assocs = v["associations"].as_array_mut().unwrap();
            assocs.sort_by_key(|a| a["id"].as_u64());
        }
        assert_eq!(streamed["version"], 1);
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn streamed_json_with_retired_tcp_connections_equals_the_report() {
    // Copies of the mixed lab capture one after the other: long enough that TCP connections
    // are retired (and spilled) during the pass, RFC 9293 TIME-WAIT after they closed.
    use analyzer::json_stream::JsonStream;
    use analyzer::synth::Source;
    let src = common::samples_dir().join("mixed_p20_cut5_rec8_sender.pcap");
    let bytes = Source::open(&src).unwrap().to_vec(10_000_000);
    let p = std::env::temp_dir().join(format!("retire-{}.pcap", std::process::id()));
    std::fs::write(&p, bytes).unwrap();
    let opts = Options {
        keep_rows: false,
        ..Options::default()
    };
    let mut retired = 0;
    let c = analyzer::analyze::analyze_file_streaming(&p, &opts, &mut |_| {}, &mut |e| {
        if let analyzer::analyze::Ended::Tcp(_) = e {
            retired += 1;
        }
    })
    .unwrap();
    assert!(retired >= 10, "retired {retired}");
    let mut s = JsonStream::begin(Vec::new()).unwrap();
    s.capture(std::slice::from_ref(&p), &opts, &mut |_| {})
        .unwrap()
        .unwrap();
    let streamed: serde_json::Value = serde_json::from_slice(&s.finish().unwrap()).unwrap();
    let full = CaptureReport::from_analysis(
        &analyzer::analyze::analyze_file(&p, &opts, &mut |_| {}).unwrap(),
    );
    std::fs::remove_file(&p).unwrap();
    let mut want = serde_json::to_value(&full).unwrap();
    let mut got = streamed["captures"][0].clone();
    // Retired connections come first in the stream (in the order they were retired).
    for v in [&mut want, &mut got] {
        for key in ["associations", "tcp_flows"] {
            v[key]
                .as_array_mut()
                .unwrap()
                .sort_by_key(|a| a["id"].as_u64());
        }
        v["comparison"].as_array_mut().unwrap().sort_by_key(|r| {
            (
                r["transport"].to_string(),
                r["id"].as_u64(),
                r["sender"].as_u64(),
            )
        });
    }
    assert_eq!(
        got["tcp_flows"].as_array().unwrap().len(),
        retired + c.tcp_flows.len()
    );
    assert_eq!(got, want);
}
