//! Inputs of the criterion benches: sample traces repeated into in-memory captures
//! (`analyzer::synth`), read through a cursor over a shared buffer.

use std::io::Cursor;
use std::path::Path;
use std::sync::Arc;

use analyzer::capture::CaptureReader;
use analyzer::synth::Source;

/// Size of each generated capture.
pub const BYTES: u64 = 16 << 20;

/// `sample-traces/NAME` repeated to `BYTES`.
pub fn capture(name: &str) -> Arc<[u8]> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../sample-traces")
        .join(name);
    Source::open(&p).expect("sample trace").to_vec(BYTES).into()
}

/// A reader over the shared buffer (no copy of the capture per iteration).
pub fn reader(data: &Arc<[u8]>) -> CaptureReader {
    CaptureReader::from_read(Box::new(Cursor::new(Arc::clone(data)))).expect("capture header")
}

/// The kinds of capture the benches run on: (label, sample trace).
pub const KINDS: [(&str, &str); 3] = [
    ("sctp", "cut_p20_sack40_sender.pcap"),
    ("tcp", "tcp_loss2_p20_sender.pcap"),
    ("mixed", "mixed_p20_cut5_rec8_sender.pcap"),
];
