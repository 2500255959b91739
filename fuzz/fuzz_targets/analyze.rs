//! Fuzz target: the whole analyzer (capture reader, link / IP, SCTP, association tracking,
//! inference, TCP) on arbitrary bytes as a capture file, through the library API on an in-memory
//! reader, then the JSON report.
#![no_main]

use std::io::Cursor;

use analyzer::analyze::{analyze_reader, Options};
use analyzer::capture::CaptureReader;
use analyzer::report::CaptureReport;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(reader) = CaptureReader::from_read(Box::new(Cursor::new(data.to_vec()))) else {
        return;
    };
    let opts = Options {
        keep_chunks: true,
        deadline_ms: Some(10.0),
        ..Options::default()
    };
    let analysis = analyze_reader("fuzz", reader, &opts, &mut |_| {});
    assert!(analysis.sctp_packets <= analysis.packets);
    let report = CaptureReport::from_analysis(&analysis);
    let json = serde_json::to_string(&report).expect("the report serialises");
    let back: serde_json::Value = serde_json::from_str(&json).expect("the JSON parses back");
    assert_eq!(back["packets"].as_u64(), Some(analysis.packets));
    let _ = analyzer::text::render_capture(&report);
});
