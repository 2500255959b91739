//! Compressed captures (zstd, LZ4, gzip) analyse exactly as their plain bytes do: the same report
//! but for the file's compression, on the sample traces and on NetPerfMeter's public capture
//! (16,300 frames of pcapng; skipped when the shared captures are absent).

use std::io::{Read, Write};

use crate::common;

use analyzer::analyze::{analyze_reader, Options};
use analyzer::capture::CaptureReader;
use analyzer::report::CaptureReport;

/// The report of `bytes`, with the fields that tell the compression apart taken out, and the
/// compression the reader found.
fn report(bytes: Vec<u8>) -> (serde_json::Value, Option<String>) {
    let reader = CaptureReader::from_read(Box::new(std::io::Cursor::new(bytes))).unwrap();
    let c = analyze_reader("x", reader, &Options::default(), &mut |_| {});
    let mut v = serde_json::to_value(CaptureReport::from_analysis(&c)).unwrap();
    let m = v.as_object_mut().unwrap();
    m.remove("gzip");
    let compression = m.remove("compression").unwrap();
    (v, compression.as_str().map(String::from))
}

fn compressed(plain: &[u8]) -> [(Vec<u8>, &'static str); 3] {
    let mut lz4 = lz4::EncoderBuilder::new().build(Vec::new()).unwrap();
    lz4.write_all(plain).unwrap();
    let (lz4, res) = lz4.finish();
    res.unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(plain).unwrap();
    [
        (zstd::encode_all(plain, 3).unwrap(), "zstd"),
        (lz4, "lz4"),
        (gz.finish().unwrap(), "gzip"),
    ]
}

fn check(name: &str, plain: Vec<u8>) {
    let (want, none) = report(plain.clone());
    assert_eq!(none, None, "{name}");
    assert!(want["packets"].as_u64().unwrap() > 0, "{name}");
    for (bytes, c) in compressed(&plain) {
        let (got, found) = report(bytes);
        assert_eq!(found.as_deref(), Some(c), "{name}");
        assert_eq!(got, want, "{name} as {c}");
    }
}

#[test]
fn compressed_sample_traces_analyse_as_their_plain_bytes() {
    let dir = common::samples_dir();
    for name in [
        "cut_p20_sack40_sender.pcap",
        "fmt_pcapng_receiver.pcapng",
        "hol_s4_loss2_receiver.pcap",
    ] {
        check(name, std::fs::read(dir.join(name)).unwrap());
    }
}

#[test]
fn compressed_public_capture_analyses_as_its_plain_bytes() {
    let Some(shared) = common::shared_dir() else {
        return;
    };
    let p = shared.join("captures/public/dreibh__netperfmeter__multi.pcap.gz");
    let Ok(f) = std::fs::File::open(&p) else {
        return;
    };
    let mut plain = Vec::new();
    flate2::read::MultiGzDecoder::new(f)
        .read_to_end(&mut plain)
        .unwrap();
    check("multi.pcap", plain);
}
