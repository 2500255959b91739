//! Fuzz harnesses: the bodies of the cargo-fuzz targets in `fuzz/`, shared with the regression
//! test that replays every input they ever crashed on (`tests/fuzz_regressions.rs`). Each takes
//! arbitrary bytes, must never panic, and asserts the invariants that must hold for any input.

use std::io::{Cursor, Write};

use crate::analyze::{analyze_reader, Options};
use crate::capture::{CaptureReader, Frame};
use crate::net::NetDecoder;
use crate::report::CaptureReport;
use crate::sctp::{crc32c, Chunk, SctpPacket};

/// The capture reader over arbitrary bytes. Byte 0 modulo 4 says how the rest is compressed
/// first, so that mutations reach the pcap / pcapng parsers behind a valid stream: 1 gzip, 2
/// zstd (RFC 8878), 3 LZ4 frames in two (split at the middle); 0 read as is (a compressed
/// stream's own bytes are fuzzed then).
pub fn reader(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let bytes = match mode & 3 {
        1 => {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(rest).expect("writing to a Vec");
            gz.finish().expect("writing to a Vec")
        }
        2 => zstd::encode_all(rest, 1).expect("writing to a Vec"),
        3 => {
            let mut out = Vec::new();
            for part in [&rest[..rest.len() / 2], &rest[rest.len() / 2..]] {
                let mut lz4 = lz4::EncoderBuilder::new()
                    .build(Vec::new())
                    .expect("an LZ4 encoder");
                lz4.write_all(part).expect("writing to a Vec");
                let (frame, res) = lz4.finish();
                res.expect("writing to a Vec");
                out.extend(frame);
            }
            out
        }
        _ => rest.to_vec(),
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
    }
    assert_eq!(reader.frames_read(), n);
    assert!(reader.warnings().len() <= 102, "warnings are bounded");
}

/// Every link type the decoder knows (`net/link.rs`), and one it does not (147); the ones added
/// later go after 147, so that the seeds' selectors keep their meaning.
const LINKTYPES: [u32; 15] = [
    1, 101, 113, 276, 0, 108, 12, 14, 228, 229, 239, 147, 9, 50, 104,
];

/// Link + IP decoding with fragment reassembly over a sequence of frames, each
/// `[link type selector][time step x 0.5 s][length u16 BE][bytes]`; the decoder state (pending
/// fragments, timeouts) carries over, so overlapping, duplicate, never-completed and
/// out-of-order fragments all meet.
pub fn link_ip(data: &[u8]) {
    let mut dec = NetDecoder::new();
    let mut rest = data;
    let mut ts_ns: i64 = 1_700_000_000_000_000_000;
    let mut number = 0u64;
    while rest.len() >= 4 {
        let linktype = LINKTYPES[usize::from(rest[0]) % LINKTYPES.len()];
        // Steps up to 127.5 s: enough to cross the 30 s reassembly timeout.
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
        if let Ok(Some(ip)) = dec.decode(&frame) {
            // Frames here are under 64 KiB, and a reassembled payload is bounded to 64 KiB.
            assert!(ip.payload.len() <= 65_535, "an IP payload fits 64 KiB");
            let _ = crate::net::transport::udp(&ip.payload);
        }
        assert!(
            dec.pending_fragments() <= 1024,
            "reassembly state is bounded"
        );
    }
    assert_eq!(dec.stats().frames, number);
}

/// The SCTP common header and chunk decoder (RFC 9260 3, 3.2 and the extensions' chunks), every
/// typed field and list, and the CRC32c check. `[missing u16 BE][SCTP packet]`.
pub fn sctp_chunks(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let missing = usize::from(u16::from_be_bytes([data[0], data[1]]));
    let bytes = &data[2..];
    let _ = crc32c::verify(bytes);
    let Ok(pkt) = SctpPacket::new_checked(bytes) else {
        assert!(
            bytes.len() < 12,
            "only a short packet lacks a common header"
        );
        return;
    };
    let mut chunks = 0usize;
    for item in pkt.chunks(missing) {
        let Ok(view) = item else { break };
        chunks += 1;
        // RFC 9260 3.2: a chunk is at least its 4-byte header.
        assert!(
            chunks <= (bytes.len() - 12) / 4 + 1,
            "each chunk takes 4 bytes or more"
        );
        let _ = view.type_name();
        if let Ok(c) = view.parse() {
            let _ = format!("{c:?}");
            if let Chunk::Sack(s) = &c {
                assert!(s.gap_blocks().count() <= usize::from(s.n_gap_blocks));
                assert!(s.nr_gap_blocks().count() <= usize::from(s.n_nr_gap_blocks));
                assert!(s.dup_tsns().count() <= usize::from(s.n_dup_tsns));
            }
        }
    }
}

/// The whole analyzer on arbitrary bytes as a capture file, then the JSON and text reports.
pub fn analyze(data: &[u8]) {
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
    let _ = crate::text::render_capture(&report);
}
