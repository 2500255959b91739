//! Reading on a second thread (`Options::pipeline`) must not change a single figure, warning or
//! chunk row: the pass over every sample trace, and over corrupted ones (warnings between
//! packets), gives the same report with and without it.

use crate::common;

use analyzer::analyze::{analyze_reader, CaptureAnalysis, Options};
use analyzer::capture::CaptureReader;
use analyzer::report::CaptureReport;

fn run(bytes: &[u8], pipeline: bool) -> Option<(serde_json::Value, usize)> {
    let reader = CaptureReader::from_read(Box::new(std::io::Cursor::new(bytes.to_vec()))).ok()?;
    let opts = Options {
        pipeline,
        keep_chunks: true,
        ..Options::default()
    };
    let c: CaptureAnalysis = analyze_reader("x", reader, &opts, &mut |_| {});
    let chunks = c.chunks.as_ref().map_or(0, |r| r.len());
    Some((
        serde_json::to_value(CaptureReport::from_analysis(&c)).unwrap(),
        chunks,
    ))
}

#[test]
fn pipelined_pass_equals_single_threaded_pass() {
    let mut n = 0;
    for e in std::fs::read_dir(common::samples_dir()).unwrap().flatten() {
        let p = e.path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if !(name.ends_with(".pcap")
            || name.ends_with(".pcapng")
            || name.ends_with(".pcap.gz")
            || name.ends_with(".pcapng.gz"))
        {
            continue;
        }
        let bytes = std::fs::read(&p).unwrap();
        let (a, ca) = run(&bytes, false).unwrap();
        let (b, cb) = run(&bytes, true).unwrap();
        assert_eq!(a, b, "{name}");
        assert_eq!(ca, cb, "{name}: chunk rows");
        n += 1;
    }
    assert!(n >= 10, "sample traces missing ({n})");
}

#[test]
fn pipelined_pass_keeps_warning_order_on_corrupted_captures() {
    let original = std::fs::read(common::samples_dir().join("cut_p20_sack40_sender.pcap")).unwrap();
    let mut seed = 0x0dd_ba11_u64;
    let mut warned = 0;
    for round in 0..60 {
        let mut bytes = original.clone();
        for _ in 0..(8 + round) {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let i = 24 + (seed >> 33) as usize % (bytes.len() - 24);
            bytes[i] ^= 0x5a;
        }
        let Some((a, _)) = run(&bytes, false) else {
            continue;
        };
        let (b, _) = run(&bytes, true).unwrap();
        if a["warnings"].as_array().is_some_and(|w| w.len() > 1) {
            warned += 1;
        }
        assert_eq!(a, b, "round {round}");
    }
    assert!(
        warned > 10,
        "too few corrupted captures with warnings ({warned})"
    );
}
