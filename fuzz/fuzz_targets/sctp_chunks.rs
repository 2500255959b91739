//! Fuzz target: the SCTP common header and chunk decoder (RFC 9260 3, 3.2 and the extensions'
//! chunks), every typed field and sub-list of every chunk, and the CRC32c check.
//!
//! Bytes 0-1: how many bytes the capture cut off (`missing`, big endian); the rest is the SCTP
//! packet.
#![no_main]

use analyzer::sctp::{crc32c, Chunk, SctpPacket};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let missing = u16::from_be_bytes([data[0], data[1]]) as usize;
    let bytes = &data[2..];
    let _ = crc32c::verify(bytes);
    let Ok(pkt) = SctpPacket::new_checked(bytes) else {
        assert!(bytes.len() < 12, "only a short packet lacks a common header");
        return;
    };
    let _ = (pkt.src_port(), pkt.dst_port(), pkt.verification_tag());
    let mut chunks = 0usize;
    for item in pkt.chunks(missing) {
        let view = match item {
            Ok(v) => v,
            Err(e) => {
                let _ = e.to_string();
                break;
            }
        };
        chunks += 1;
        // RFC 9260 3.2: a chunk is at least its 4-byte header.
        assert!(chunks <= (bytes.len() - 12) / 4 + 1, "each chunk takes 4 bytes or more");
        let _ = view.type_name();
        match view.parse() {
            Ok(chunk) => visit(&chunk),
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
});

/// Touches every field of a parsed chunk (the sub-lists are decoded lazily).
fn visit(c: &Chunk<'_>) {
    let _ = format!("{c:?}");
    if let Chunk::Sack(s) = c {
        let gaps = s.gap_blocks().count();
        let nr = s.nr_gap_blocks().count();
        let dups = s.dup_tsns().count();
        assert!(gaps <= usize::from(s.n_gap_blocks), "no more gap blocks than announced");
        assert!(nr <= usize::from(s.n_nr_gap_blocks));
        assert!(dups <= usize::from(s.n_dup_tsns));
        for g in s.gap_blocks().chain(s.nr_gap_blocks()) {
            let _ = (g.start, g.end);
        }
    }
}
