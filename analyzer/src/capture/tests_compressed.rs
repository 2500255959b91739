//! Tests of compressed captures on hand-built bytes: zstd (RFC 8878) and LZ4 frames decoded as
//! their plain capture reads, several frames in one file, inputs cut inside a frame, and the
//! compressions that are named but not read.

use std::io::Write;

use super::tests::{classic, drain, read};
use super::testutil::{PcapBuilder, Rng};
use super::{CaptureError, CaptureReader, Compression};

fn zstd(data: &[u8]) -> Vec<u8> {
    zstd::encode_all(data, 3).unwrap()
}

fn lz4(data: &[u8]) -> Vec<u8> {
    let mut enc = lz4::EncoderBuilder::new().build(Vec::new()).unwrap();
    enc.write_all(data).unwrap();
    let (out, res) = enc.finish();
    res.unwrap();
    out
}

/// A capture of `n` records of random bytes (incompressible: the compressed file is about as
/// long, so a cut in its middle falls after the first frame).
fn random_capture(n: u32) -> Vec<u8> {
    let mut b = PcapBuilder::new(false, false, false, 1, 0);
    let mut rng = Rng(11);
    for i in 0..n {
        let data: Vec<u8> = (0..200).map(|_| rng.next() as u8).collect();
        b.record(i, 0, &data, 200);
    }
    b.buf
}

#[test]
fn zstd_and_lz4_read_as_the_plain_capture() {
    let plain = classic(false, true, false);
    let want = read(&plain).unwrap();
    for (bytes, c) in [
        (zstd(&plain), Compression::Zstd),
        (lz4(&plain), Compression::Lz4),
    ] {
        let r = read(&bytes).unwrap();
        assert_eq!(r.compression, Some(c));
        assert!(!r.gzip);
        assert_eq!(r.frames, want.frames);
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        // Progress counts the compressed bytes.
        assert_eq!(r.input, bytes.len() as u64);
    }
}

/// A stream written with `zstd --long` asks for a window past libzstd's default 128 MiB
/// (RFC 8878 3.1.1.1.2): read all the same, and the window is told; a small one-shot frame's
/// window is its content size (single segment); a streamed one's, its level's (2 MiB at 3).
#[test]
fn a_long_window_is_decoded_and_told() {
    let plain = classic(false, false, false);
    let one_shot = zstd::bulk::compress(&plain, 3).unwrap();
    assert_eq!(
        super::input::zstd_window(&one_shot),
        Some(plain.len() as u64)
    );
    assert_eq!(
        read(&one_shot).unwrap().frames,
        read(&plain).unwrap().frames
    );
    assert_eq!(super::input::zstd_window(&zstd(&plain)), Some(2 << 20));
    let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 1).unwrap();
    enc.window_log(28).unwrap();
    enc.long_distance_matching(true).unwrap();
    enc.include_contentsize(false).unwrap();
    enc.write_all(&plain).unwrap();
    let long = enc.finish().unwrap();
    assert_eq!(super::input::zstd_window(&long), Some(256 << 20));
    let r = read(&long).unwrap();
    assert_eq!(r.frames, read(&plain).unwrap().frames);
    assert_eq!(
        r.warnings,
        ["the zstd stream asks for a 256 MiB window (written with `zstd --long`): decoding keeps that much of it in memory"]
    );
}

#[test]
fn several_frames_and_skippable_ones_are_read_in_turn() {
    // The capture split anywhere into frames one after another, as concatenated files are.
    let plain = classic(true, false, false);
    let want = read(&plain).unwrap().frames;
    let mut z = zstd(&plain[..30]);
    z.extend(zstd(&plain[30..]));
    assert_eq!(read(&z).unwrap().frames, want);
    let mut l = lz4(&plain[..30]);
    l.extend(lz4(&plain[30..]));
    assert_eq!(read(&l).unwrap().frames, want);
    // RFC 8878 3.1.2: a skippable frame (magic 0x184D2A5?, a 4-byte length, that many bytes)
    // first, as pzstd writes one.
    let mut s = vec![0x5E, 0x2A, 0x4D, 0x18, 4, 0, 0, 0, 1, 2, 3, 4];
    s.extend(zstd(&plain));
    let r = read(&s).unwrap();
    assert_eq!(r.compression, Some(Compression::Zstd));
    assert_eq!(r.frames, want);
}

#[test]
fn a_cut_inside_a_frame_keeps_the_frames_before_it() {
    let plain = random_capture(3000);
    for (mut bytes, name) in [(zstd(&plain), "zstd"), (lz4(&plain), "lz4")] {
        let n = bytes.len();
        bytes.truncate(n * 2 / 3);
        let r = read(&bytes).unwrap();
        assert!(
            !r.frames.is_empty() && r.frames.len() < 3000,
            "{name}: {}",
            r.frames.len()
        );
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
        let w = &r.warnings[0];
        assert!(
            w.contains(&format!("corrupt {name} stream at decompressed offset"))
                && w.contains("kept"),
            "{w}"
        );
    }
}

#[test]
fn a_stream_cut_before_the_first_frame_is_an_error_naming_the_compression() {
    let plain = classic(false, false, false);
    for (bytes, name) in [(zstd(&plain), "zstd"), (lz4(&plain), "lz4")] {
        match read(&bytes[..bytes.len() / 2]) {
            Err(e @ CaptureError::Decompress { .. }) => {
                assert!(
                    e.to_string().starts_with(&format!("corrupt {name} stream")),
                    "{e}"
                )
            }
            Err(e) => panic!("{name}: unexpected error {e}"),
            Ok(r) => panic!("{name}: read {} frames of a cut stream", r.frames.len()),
        }
    }
}

/// A cut in the frame's end (LZ4: end mark and checksum) after all the data: every frame is
/// kept, and the warning says the stream was cut.
#[test]
fn a_cut_after_the_data_is_still_told() {
    let plain = classic(false, false, false);
    let bytes = lz4(&plain);
    let r = read(&bytes[..bytes.len() - 6]).unwrap();
    assert_eq!(r.frames, read(&plain).unwrap().frames);
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(
        r.warnings[0].contains("corrupt lz4 stream"),
        "{:?}",
        r.warnings
    );
}

#[test]
fn other_compressions_are_named_with_what_undoes_them() {
    let cases: [(&[u8], &str, &str); 4] = [
        (&[0xFD, b'7', b'z', b'X', b'Z', 0, 0, 4], "xz", "xz -d"),
        (b"BZh91AY&SY", "bzip2", "bunzip2"),
        (b"PK\x03\x04\x14\x00\x00\x00", "zip", "unzip"),
        (
            &[0x02, 0x21, 0x4C, 0x18, 0, 0, 0, 0],
            "lz4 legacy-format",
            "lz4 -d",
        ),
    ];
    for (bytes, format, tool) in cases {
        match read(bytes) {
            Err(e @ CaptureError::Compressed { .. }) => {
                let text = e.to_string();
                assert!(
                    text.starts_with(&format!("{format}-compressed file"))
                        && text.contains(&format!("({tool})")),
                    "{text}"
                );
                assert_eq!(e.offset(), Some(0));
            }
            Err(e) => panic!("{format}: unexpected error {e}"),
            Ok(_) => panic!("{format}: read as a capture"),
        }
    }
    // Not a compression: still a bad magic.
    assert!(matches!(
        read(b"GIF89a\0\0"),
        Err(CaptureError::BadMagic { .. })
    ));
}

/// A small compressed file, read whole to look at it, is decoded from those bytes, never read in
/// place as if plain.
#[test]
fn small_zstd_and_lz4_files_read_as_their_plain_capture() {
    let plain = classic(false, false, false);
    let want = read(&plain).unwrap();
    for (bytes, ext, c) in [
        (zstd(&plain), "zst", Compression::Zstd),
        (lz4(&plain), "lz4", Compression::Lz4),
    ] {
        let path = std::env::temp_dir().join(format!(
            "sctp-compressed-test-{}.pcap.{ext}",
            std::process::id()
        ));
        std::fs::write(&path, bytes).unwrap();
        let rd = CaptureReader::open(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(rd.compression(), Some(c));
        assert!(!rd.is_in_place());
        let got = drain(rd);
        assert_eq!(got.frames, want.frames);
        assert!(got.warnings.is_empty(), "{:?}", got.warnings);
    }
}
