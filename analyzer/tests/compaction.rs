//! Summarising an association when it ends and dropping its detail (bounded memory) must not
//! change a single reported figure.

mod common;

use analyzer::analyze::{analyze_file, Options};
use analyzer::report::CaptureReport;

#[test]
fn compacted_report_equals_full_report() {
    let mut n = 0;
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
        let a = CaptureReport::from_analysis(&analyze_file(&p, &full, &mut |_| {}).unwrap());
        let b = CaptureReport::from_analysis(&analyze_file(&p, &lean, &mut |_| {}).unwrap());
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            serde_json::to_value(&b).unwrap(),
            "{}",
            p.display()
        );
        n += 1;
    }
    assert!(n >= 10, "sample traces missing ({n})");
}
