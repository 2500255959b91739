//! Fuzz target: link-layer and IP decoding with fragment reassembly, over a sequence of frames.
//!
//! The input is a list of records: [link type selector: 1][time step: 1][length: 2, big
//! endian][frame bytes]. The decoder state (pending fragments, timeouts) carries over from frame
//! to frame, so overlapping, duplicate, never-completed and out-of-order fragments all meet.
#![no_main]

use analyzer::capture::Frame;
use analyzer::net::NetDecoder;
use libfuzzer_sys::fuzz_target;

/// Every link type the decoder knows, and one it does not (`net/link.rs`).
const LINKTYPES: [u32; 12] = [1, 101, 113, 276, 0, 108, 12, 14, 228, 229, 147, 1];

fuzz_target!(|data: &[u8]| {
    let mut dec = NetDecoder::new();
    let mut rest = data;
    let mut ts_ns: i64 = 1_700_000_000_000_000_000;
    let mut number = 0u64;
    while rest.len() >= 4 {
        let linktype = LINKTYPES[usize::from(rest[0]) % LINKTYPES.len()];
        // Steps of up to 255 * 0.5 s: enough to cross the 30 s reassembly timeout.
        ts_ns += i64::from(rest[1]) * 500_000_000;
        let len = usize::from(u16::from_be_bytes([rest[2], rest[3]])).min(rest.len() - 4);
        let bytes = &rest[4..4 + len];
        rest = &rest[4 + len..];
        number += 1;
        let frame = Frame {
            number,
            ts_ns,
            linktype,
            data: bytes,
            orig_len: bytes.len() as u32,
            offset: number * 16,
        };
        match dec.decode(&frame) {
            Ok(Some(ip)) => {
                assert!(ip.payload.len() <= 65_535 + 8, "an IP payload fits 64 KiB");
                let _ = (ip.src, ip.dst, ip.proto, ip.missing);
                let _ = analyzer::net::transport::udp(&ip.payload);
            }
            Ok(None) => {}
            Err(e) => {
                let _ = e.to_string();
            }
        }
        assert!(dec.pending_fragments() <= 1024, "reassembly state is bounded");
    }
    let s = dec.stats();
    assert_eq!(s.frames, number);
});
