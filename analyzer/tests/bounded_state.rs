//! State that must stay bounded over long captures: associations that ended and were reported
//! (streaming) neither count toward the association bound nor keep their index entries.

use crate::common;

use analyzer::analyze::{analyze_reader_streaming, Options};
use analyzer::assoc::TrackerLimits;
use analyzer::capture::CaptureReader;
use analyzer::synth::Source;

fn synth(copies_bytes: u64) -> Vec<u8> {
    let p = common::samples_dir().join("cut_p20_sack40_sender.pcap");
    Source::open(&p).unwrap().to_vec(copies_bytes)
}

fn run(bytes: Vec<u8>, max_associations: usize, streaming: bool) -> (u64, usize, Vec<String>) {
    let reader = CaptureReader::from_read(Box::new(std::io::Cursor::new(bytes))).unwrap();
    let opts = Options {
        keep_rows: false,
        limits: TrackerLimits {
            max_associations,
            ..TrackerLimits::default()
        },
        ..Options::default()
    };
    let mut emitted = 0u64;
    let mut emit = |_: analyzer::analyze::Ended| emitted += 1;
    let c = analyze_reader_streaming(
        "synth",
        reader,
        &opts,
        &mut |_| {},
        streaming.then_some(&mut emit as &mut dyn FnMut(_)),
    );
    (c.emitted, c.associations.len(), c.warnings)
}

#[test]
fn ended_associations_do_not_count_toward_the_bound() {
    // Copies of a lab association that ends with SHUTDOWN-COMPLETE, one after the other.
    let bytes = synth(400_000);
    let (emitted, open, warnings) = run(bytes.clone(), 2, true);
    assert!(emitted >= 5, "emitted {emitted}");
    assert_eq!(open, 0);
    assert!(
        warnings.iter().all(|w| !w.contains("association limit")),
        "{warnings:?}"
    );
    // Without streaming every association stays in memory: the bound applies and says so.
    let (emitted, open, warnings) = run(bytes, 2, false);
    assert_eq!((emitted, open), (0, 2));
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("association limit 2 (open at once) reached")),
        "{warnings:?}"
    );
}
