//! Inputs of the criterion benches: sample traces repeated into in-memory captures
//! (`analyzer::synth`), read through a cheap shared-buffer reader.

use std::io::Read;
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
    let src = Source::load(CaptureReader::open(&p).expect("sample trace")).expect("source");
    src.to_vec(BYTES).into()
}

/// A reader over a shared buffer (no copy of the capture per iteration).
pub struct SharedReader {
    data: Arc<[u8]>,
    pos: usize,
}

impl Read for SharedReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

pub fn reader(data: &Arc<[u8]>) -> CaptureReader {
    CaptureReader::from_read(Box::new(SharedReader {
        data: data.clone(),
        pos: 0,
    }))
    .expect("capture header")
}

/// The kinds of capture the benches run on: (label, sample trace).
pub const KINDS: [(&str, &str); 3] = [
    ("sctp", "cut_p20_sack40_sender.pcap"),
    ("tcp", "tcp_loss2_p20_sender.pcap"),
    ("mixed", "mixed_p20_cut5_rec8_sender.pcap"),
];
