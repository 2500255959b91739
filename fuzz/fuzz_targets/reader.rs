//! Fuzz target: the streaming capture reader (pcap / pcapng / gzip) over arbitrary bytes.
//!
//! Byte 0 picks the mode: odd = the rest is gzip-compressed first (so that the fuzzer reaches the
//! pcap / pcapng parsers behind a valid gzip stream), even = the rest is read as it is (corrupt
//! gzip, raw pcap and pcapng).
#![no_main]

use std::io::{Cursor, Write};

use analyzer::capture::CaptureReader;
use libfuzzer_sys::fuzz_target;

/// Frames read per input at most: a 1 MiB input cannot hold more than this many records anyway.
const MAX_FRAMES: u64 = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let bytes = if mode & 1 == 1 {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(rest).expect("writing to a Vec");
        gz.finish().expect("writing to a Vec")
    } else {
        rest.to_vec()
    };
    let Ok(mut reader) = CaptureReader::from_read(Box::new(Cursor::new(bytes))) else {
        return;
    };
    let mut n = 0;
    let mut last = 0;
    while let Some(frame) = reader.next_frame() {
        n += 1;
        assert_eq!(frame.number, n, "frames are numbered 1, 2, 3, ...");
        assert!(n == 1 || frame.offset > last, "record offsets grow");
        last = frame.offset;
        assert!(frame.data.len() <= 16 << 20, "a frame fits a block");
        assert!(n <= MAX_FRAMES);
    }
    assert_eq!(reader.frames_read(), n);
    assert!(reader.warnings().len() <= 101, "warnings are bounded");
});
