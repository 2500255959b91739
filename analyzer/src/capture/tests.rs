//! Tests of the capture reader on hand-built pcap / pcapng bytes and on the shared captures.

use std::io::Cursor;

use super::testutil::{gzip, Failing, NgBuilder, PcapBuilder, Rng, Trickle};
use super::{CaptureError, CaptureFormat, CaptureReader, Compression};

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Owned {
    number: u64,
    ts_ns: i64,
    linktype: u32,
    data: Vec<u8>,
    orig_len: u32,
    offset: u64,
}

pub(super) struct Read {
    pub(super) frames: Vec<Owned>,
    pub(super) warnings: Vec<String>,
    pub(super) format: CaptureFormat,
    pub(super) gzip: bool,
    pub(super) compression: Option<Compression>,
    pub(super) input: u64,
}

pub(super) fn read_from(r: Box<dyn std::io::Read + Send>) -> Result<Read, CaptureError> {
    Ok(drain(CaptureReader::from_read(r)?))
}

pub(super) fn drain(mut rd: CaptureReader) -> Read {
    let mut frames = Vec::new();
    while let Some(f) = rd.next_frame() {
        frames.push(Owned {
            number: f.number,
            ts_ns: f.ts_ns,
            linktype: f.linktype,
            data: f.data.to_vec(),
            orig_len: f.orig_len,
            offset: f.offset,
        });
    }
    // Reading past the end stays at the end.
    assert!(rd.next_frame().is_none());
    Read {
        frames,
        warnings: rd.warnings().to_vec(),
        format: rd.format(),
        gzip: rd.gzip(),
        compression: rd.compression(),
        input: rd.input_bytes_read(),
    }
}

pub(super) fn read(bytes: &[u8]) -> Result<Read, CaptureError> {
    read_from(Box::new(Cursor::new(bytes.to_vec())))
}

fn pkt(n: usize, fill: u8) -> Vec<u8> {
    (0..n).map(|i| fill.wrapping_add(i as u8)).collect()
}

pub(super) fn classic(be: bool, nanos: bool, modified: bool) -> Vec<u8> {
    let mut b = PcapBuilder::new(be, nanos, modified, 1, 65535);
    b.record(1_700_000_000, 123_456, &pkt(60, 1), 60)
        .record(1_700_000_001, 999_999, &pkt(100, 2), 1500)
        .record(1_700_000_002, 0, &pkt(0, 3), 0);
    b.buf
}

fn check_classic(bytes: &[u8], nanos: bool, rec_hdr: u64) {
    let r = read(bytes).unwrap();
    assert_eq!(r.format, CaptureFormat::Pcap);
    assert!(!r.gzip);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(r.frames.len(), 3);
    let unit = if nanos { 1 } else { 1000 };
    let f = &r.frames;
    assert_eq!(f[0].number, 1);
    assert_eq!(f[0].ts_ns, 1_700_000_000_000_000_000 + 123_456 * unit);
    assert_eq!(f[1].ts_ns, 1_700_000_001_000_000_000 + 999_999 * unit);
    assert_eq!(f[2].ts_ns, 1_700_000_002_000_000_000);
    assert_eq!(f[0].data, pkt(60, 1));
    assert_eq!(f[1].data, pkt(100, 2));
    assert_eq!(f[1].orig_len, 1500);
    assert!(f[2].data.is_empty());
    assert_eq!(f[0].linktype, 1);
    assert_eq!(f[0].offset, 24);
    assert_eq!(f[1].offset, 24 + rec_hdr + 60);
    assert_eq!(f[2].offset, 24 + 2 * rec_hdr + 160);
    assert_eq!(f[2].number, 3);
    assert_eq!(r.input, bytes.len() as u64);
}

#[test]
fn classic_le_be_us_ns() {
    check_classic(&classic(false, false, false), false, 16);
    check_classic(&classic(true, false, false), false, 16);
    check_classic(&classic(false, true, false), true, 16);
    check_classic(&classic(true, true, false), true, 16);
}

#[test]
fn classic_modified() {
    check_classic(&classic(false, false, true), false, 24);
}

#[test]
fn classic_through_one_byte_reads() {
    let bytes = classic(true, true, false);
    let direct = read(&bytes).unwrap().frames;
    for chunk in [1, 3, 7, 100] {
        let r = read_from(Box::new(Trickle {
            data: bytes.clone(),
            pos: 0,
            chunk,
        }))
        .unwrap();
        assert_eq!(r.frames, direct);
        assert!(r.warnings.is_empty());
    }
}

#[test]
fn classic_linktype_fcs_bits_masked() {
    // draft-ietf-opsawg-pcap 4: bit 26 (F) and bits 27-31 (FCS length) are not the link type.
    let mut b = PcapBuilder::new(false, false, false, 1 | (1 << 26) | (4 << 28), 0);
    b.record(1, 0, &pkt(20, 0), 20);
    assert_eq!(read(&b.buf).unwrap().frames[0].linktype, 1);
}

#[test]
fn classic_caplen_over_snaplen_warns_once() {
    let mut b = PcapBuilder::new(false, false, false, 1, 50);
    b.record(1, 0, &pkt(60, 0), 60)
        .record(2, 0, &pkt(70, 0), 70);
    let r = read(&b.buf).unwrap();
    assert_eq!(r.frames.len(), 2);
    assert_eq!(r.warnings.len(), 1);
    assert!(r.warnings[0].contains("offset 24"), "{}", r.warnings[0]);
}

#[test]
fn gzip_pcap() {
    let plain = classic(false, false, false);
    let gz = gzip(&plain);
    let r = read(&gz).unwrap();
    assert!(r.gzip);
    assert_eq!(r.compression, Some(Compression::Gzip));
    assert_eq!(r.frames, read(&plain).unwrap().frames);
    assert!(r.warnings.is_empty());
    assert_eq!(r.input, gz.len() as u64);
}

#[test]
fn gzip_multi_member() {
    // RFC 1952 2.2: members are concatenated; the pcap may be split anywhere.
    let plain = classic(true, false, false);
    let mut gz = gzip(&plain[..50]);
    gz.extend(gzip(&plain[50..]));
    let r = read(&gz).unwrap();
    assert_eq!(r.frames, read(&plain).unwrap().frames);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn gzip_corrupt_tail_keeps_frames() {
    // Enough frames that the corruption is past the first one.
    let mut b = PcapBuilder::new(false, false, false, 1, 0);
    let mut rng = Rng(7);
    for i in 0..2000 {
        let data: Vec<u8> = (0..200).map(|_| rng.next() as u8).collect();
        b.record(i, 0, &data, 200);
    }
    let mut gz = gzip(&b.buf);
    let n = gz.len();
    gz.truncate(n * 3 / 4);
    let r = read(&gz).unwrap();
    assert!(!r.frames.is_empty() && r.frames.len() < 2000);
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    let w = &r.warnings[0];
    assert!(w.contains("gzip") && w.contains("kept"), "{w}");
    // Garbage instead of a truncation.
    let mut gz = gzip(&b.buf);
    for b in gz.iter_mut().skip(n / 2).take(64) {
        *b ^= 0x55;
    }
    let r = read(&gz).unwrap();
    assert!(r.frames.len() < 2000);
    assert!(
        r.warnings.iter().any(|w| w.contains("kept")),
        "{:?}",
        r.warnings
    );
}

#[test]
fn gzip_corrupt_before_first_frame_is_fatal() {
    let gz = gzip(&classic(false, false, false));
    let mut bad = gz[..14].to_vec();
    bad.extend_from_slice(&[0xFF; 40]);
    match read(&bad) {
        Err(e @ CaptureError::Decompress { .. }) => assert!(e.to_string().contains("gzip"), "{e}"),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("accepted corrupt gzip"),
    }
}

#[test]
fn truncated_last_record_warns_with_offset() {
    let bytes = classic(false, false, false);
    // Cut inside the second record's data.
    let cut = 24 + 16 + 60 + 16 + 50;
    let r = read(&bytes[..cut]).unwrap();
    assert_eq!(r.frames.len(), 1);
    assert_eq!(r.warnings.len(), 1);
    let w = &r.warnings[0];
    assert!(w.starts_with("truncated record at offset 100:"), "{w}");
    assert!(w.ends_with("kept 1 frames"), "{w}");
    // Cut inside a record header.
    let r = read(&bytes[..24 + 16 + 60 + 5]).unwrap();
    assert_eq!(r.frames.len(), 1);
    assert!(r.warnings[0].contains("offset 100"));
    // Header only: no frame, no warning.
    let r = read(&bytes[..24]).unwrap();
    assert!(r.frames.is_empty() && r.warnings.is_empty());
}

#[test]
fn io_error_after_first_frame_is_a_warning() {
    let mut b = PcapBuilder::new(false, false, false, 1, 0);
    for i in 0..3000 {
        b.record(i, 0, &pkt(100, i as u8), 100);
    }
    let fail_at = 200 * 1024;
    let r = read_from(Box::new(Failing {
        data: b.buf.clone(),
        pos: 0,
        fail_at,
    }))
    .unwrap();
    let kept = (fail_at - 24) / 116;
    assert_eq!(r.frames.len(), kept);
    assert_eq!(r.warnings.len(), 1);
    let w = &r.warnings[0];
    assert!(
        w.starts_with(&format!("I/O error at offset {fail_at}: disk on fire")),
        "{w}"
    );
    assert!(w.ends_with(&format!("kept {kept} frames")), "{w}");
    // Before the first frame: fatal, with the offset.
    let e = read_from(Box::new(Failing {
        data: b.buf,
        pos: 0,
        fail_at: 30,
    }))
    .err()
    .unwrap();
    assert!(matches!(e, CaptureError::Io { offset: 30, .. }), "{e}");
}

/// A plain file whose read fails (here /proc/self/mem, which answers EIO at offset 0): the
/// read-whole path hands it to the stream reading, which reports the error with its offset.
#[cfg(target_os = "linux")]
#[test]
fn unreadable_plain_file_is_an_io_error_with_offset() {
    let e = CaptureReader::open(std::path::Path::new("/proc/self/mem")).unwrap_err();
    assert!(matches!(e, CaptureError::Io { offset: 0, .. }), "{e}");
}

/// A small gzip-compressed file, read whole to look at it, is decompressed from those bytes: it
/// reads as its plain capture does.
#[test]
fn small_gzip_file_reads_as_its_plain_capture() {
    use std::io::Write;
    let plain = classic(false, false, false);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&plain).unwrap();
    let path = std::env::temp_dir().join(format!("sctp-gz-test-{}.pcap.gz", std::process::id()));
    std::fs::write(&path, gz.finish().unwrap()).unwrap();
    let rd = CaptureReader::open(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(rd.gzip() && !rd.is_in_place());
    let (got, want) = (drain(rd), read(&plain).unwrap());
    assert_eq!((got.frames.len(), &got.warnings), (3, &want.warnings));
    assert_eq!(got.frames, want.frames);
}

#[test]
fn reader_and_decoder_are_send() {
    fn send<T: Send>() {}
    send::<CaptureReader>();
    send::<crate::net::NetDecoder>();
}

#[test]
fn garbage_record_length_stops() {
    let mut bytes = classic(false, false, false);
    // Second record's caplen := 0x7fffffff.
    let at = 24 + 16 + 60 + 8;
    bytes[at..at + 4].copy_from_slice(&0x7FFF_FFFFu32.to_le_bytes());
    let r = read(&bytes).unwrap();
    assert_eq!(r.frames.len(), 1);
    assert!(r.warnings[0].contains("offset 100") && r.warnings[0].contains("262144"));
}

#[test]
fn fatal_header_errors() {
    assert!(matches!(read(&[]), Err(CaptureError::Empty)));
    let e = read(&[0x12, 0x34, 0x56, 0x78, 0, 0, 0, 0]).err().unwrap();
    assert!(matches!(e, CaptureError::BadMagic { magic: 0x1234_5678 }));
    assert_eq!(
        e.to_string(),
        "bad magic 0x12345678 at offset 0: not a pcap or pcapng file"
    );
    let e = read(&classic(false, false, false)[..10]).err().unwrap();
    assert!(
        matches!(
            e,
            CaptureError::TruncatedHeader {
                have: 10,
                need: 24,
                ..
            }
        ),
        "{e}"
    );
    assert!(matches!(
        read(&[0xD4, 0xC3]),
        Err(CaptureError::TruncatedHeader { need: 4, .. })
    ));
    let mut ng = NgBuilder::default();
    ng.shb(false);
    let e = read(&ng.buf[..20]).err().unwrap();
    assert!(
        matches!(e, CaptureError::TruncatedHeader { need: 28, .. }),
        "{e}"
    );
    // A bad byte-order magic.
    let mut bad = ng.buf.clone();
    bad[8] = 0;
    assert!(matches!(read(&bad), Err(CaptureError::BadHeader { .. })));
    // Big-endian "modified" pcap is not supported.
    let e = read(&[0xA1, 0xB2, 0xCD, 0x34, 0, 0, 0, 0]).err().unwrap();
    assert!(matches!(e, CaptureError::Unsupported { .. }));
    // An empty gzip stream is an empty file.
    assert!(matches!(read(&gzip(&[])), Err(CaptureError::Empty)));
}

#[test]
fn open_missing_file_is_io_error() {
    let e = CaptureReader::open(std::path::Path::new("/nonexistent/x.pcap")).unwrap_err();
    assert!(matches!(e, CaptureError::Io { offset: 0, .. }));
}

/// Two sections (LE, BE); section 1 has two interfaces with different link types and
/// timestamp resolutions (ns; 2^-20 s with an offset); SPB, OPB, NRB, unknown block.
fn pcapng_sample() -> Vec<u8> {
    let mut b = NgBuilder::default();
    b.shb(false);
    b.idb(1, 0, &[(9, vec![9])]);
    let off = b.tsoffset(100);
    b.idb(101, 0, &[(9, vec![0x80 | 20]), (14, off)]);
    b.epb(0, 1_700_000_000_123_456_789, &pkt(60, 1), 60);
    // 1000.5 s in 2^-20 units, +100 s offset.
    b.epb(1, (1000 << 20) + (1 << 19), &pkt(40, 2), 40);
    b.spb(&pkt(30, 3), 30);
    b.block(4, &[0, 0, 0, 0]); // NRB: skipped silently
    b.block(0x0000_0BAD + 1, &[1, 2, 3, 4]); // unknown: skipped with a warning
    b.opb(1, 5 << 20, &pkt(20, 4), 20);
    b.shb(true);
    let off = b.tsoffset(-2);
    b.idb(113, 0, &[(14, off)]);
    b.epb(0, 3_000_000, &pkt(50, 5), 64);
    b.buf
}

#[test]
fn pcapng_sections_interfaces_resolutions() {
    let r = read(&pcapng_sample()).unwrap();
    assert_eq!(r.format, CaptureFormat::Pcapng);
    let f = &r.frames;
    assert_eq!(f.len(), 5);
    assert_eq!(
        f.iter().map(|f| f.number).collect::<Vec<_>>(),
        vec![1, 2, 3, 4, 5]
    );
    assert_eq!(f[0].ts_ns, 1_700_000_000_123_456_789);
    assert_eq!(f[0].linktype, 1);
    assert_eq!(f[0].data, pkt(60, 1));
    assert_eq!(f[1].ts_ns, 1_100_500_000_000);
    assert_eq!(f[1].linktype, 101);
    // SPB: interface 0, previous timestamp.
    assert_eq!(f[2].ts_ns, f[1].ts_ns);
    assert_eq!(f[2].linktype, 1);
    assert_eq!(f[2].data, pkt(30, 3));
    assert_eq!(f[3].ts_ns, 105_000_000_000);
    assert_eq!(f[3].linktype, 101);
    assert_eq!(f[3].data, pkt(20, 4));
    // Section 2 (big-endian): default µs, offset -2 s read big-endian.
    assert_eq!(f[4].ts_ns, 3_000_000_000 - 2_000_000_000);
    assert_eq!(f[4].linktype, 113);
    assert_eq!(f[4].orig_len, 64);
    assert_eq!(f[4].data, pkt(50, 5));
    assert_eq!(f[0].offset, 28 + (20 + 12) + (20 + 24));
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(r.warnings[0].contains("unknown block type 0x00000bae"));
}

#[test]
fn pcapng_gzip_and_trickle_agree() {
    let bytes = pcapng_sample();
    let direct = read(&bytes).unwrap().frames;
    assert_eq!(read(&gzip(&bytes)).unwrap().frames, direct);
    let r = read_from(Box::new(Trickle {
        data: bytes,
        pos: 0,
        chunk: 5,
    }))
    .unwrap();
    assert_eq!(r.frames, direct);
}

#[test]
fn pcapng_truncated_and_bad_blocks() {
    let bytes = pcapng_sample();
    let full = read(&bytes).unwrap().frames;
    // Truncated last block.
    let r = read(&bytes[..bytes.len() - 10]).unwrap();
    assert_eq!(r.frames, full[..4]);
    let w = r.warnings.last().unwrap();
    assert!(w.starts_with("truncated block at offset"), "{w}");
    assert!(w.ends_with("kept 4 frames"), "{w}");
    // Block length mismatch in the first EPB's trailer.
    let mut b = NgBuilder::default();
    b.shb(false).idb(1, 0, &[]).epb(0, 1, &pkt(10, 0), 10);
    let first = b.buf.len();
    b.epb(0, 2, &pkt(10, 0), 10);
    let mut bad = b.buf.clone();
    let n = bad.len();
    bad[n - 4] ^= 1;
    let r = read(&bad).unwrap();
    assert_eq!(r.frames.len(), 1);
    assert!(
        r.warnings[0].contains(&format!("offset {first}")) && r.warnings[0].contains("mismatch"),
        "{:?}",
        r.warnings
    );
    // Undefined interface.
    let mut b = NgBuilder::default();
    b.shb(false).idb(1, 0, &[]).epb(3, 1, &pkt(10, 0), 10);
    let r = read(&b.buf).unwrap();
    assert!(r.frames.is_empty());
    assert!(r.warnings[0].contains("interface 3"), "{:?}", r.warnings);
    // Absurd block length.
    let mut bad = bytes.clone();
    bad[28 + 4..28 + 8].copy_from_slice(&0x7FFF_FFF0u32.to_le_bytes());
    let r = read(&bad).unwrap();
    assert!(r.frames.is_empty());
    assert!(r.warnings[0].contains("offset 28"), "{:?}", r.warnings);
}

#[test]
fn pcapng_large_block_grows_buffer() {
    let big = pkt(3 << 20, 9);
    let mut b = NgBuilder::default();
    b.shb(true).idb(1, 0, &[]).epb(0, 7, &pkt(10, 0), 10);
    b.epb(0, 8, &big, big.len() as u32)
        .epb(0, 9, &pkt(10, 1), 10);
    let r = read(&b.buf).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(r.frames.len(), 3);
    assert_eq!(r.frames[1].data, big);
    assert_eq!(r.frames[2].ts_ns, 9_000);
}

#[test]
fn pcapng_many_blocks_before_first_packet() {
    let mut b = NgBuilder::default();
    b.shb(false).idb(1, 0, &[]);
    for _ in 0..50_000 {
        b.block(5, &[]); // 12-byte ISBs: skipped silently
    }
    b.epb(0, 1, &pkt(10, 0), 10);
    let r = read(&b.buf).unwrap();
    assert_eq!(r.frames.len(), 1);
    assert_eq!(r.frames[0].offset, 28 + 20 + 50_000 * 12);
    assert!(r.warnings.is_empty());
}

#[test]
fn timestamp_resolutions() {
    use super::pcapng::{units_per_second, Iface};
    assert_eq!(units_per_second(6), Some(1_000_000));
    assert_eq!(units_per_second(9), Some(1_000_000_000));
    assert_eq!(units_per_second(0x80 | 20), Some(1 << 20));
    assert_eq!(units_per_second(0x80), Some(1));
    assert_eq!(units_per_second(39), None);
    // 2^-20 s units: not a divisor of 1e9, exact u128 arithmetic.
    let i = Iface::new(1, 0, 1 << 20, 0);
    assert_eq!(i.ts_ns(3 << 20), 3_000_000_000);
    assert_eq!(i.ts_ns(1), 953); // 1e9 / 2^20 = 953.67
                                 // Big values do not overflow; they saturate at the i64 range.
    let i = Iface::new(1, 0, 1, i64::MAX);
    assert_eq!(i.ts_ns(u64::MAX), i64::MAX);
    let i = Iface::new(1, 0, 1_000_000_000_000, 0);
    assert_eq!(i.ts_ns(u64::MAX), (u64::MAX / 1000) as i64);
}

#[test]
fn fuzzed_inputs_never_panic() {
    let mut rng = Rng(0x1234_5678);
    let seeds = [
        classic(false, false, false),
        classic(true, true, false),
        classic(false, false, true),
        pcapng_sample(),
    ];
    for seed in &seeds {
        // Every truncation.
        for cut in 0..seed.len() {
            let _ = read(&seed[..cut]).map(|r| r.frames.len());
        }
        // Random byte mutations.
        for _ in 0..400 {
            let mut m = seed.clone();
            for _ in 0..1 + rng.below(6) {
                let i = rng.below(m.len());
                m[i] = rng.next() as u8;
            }
            if let Ok(r) = read(&m) {
                for f in &r.frames {
                    assert!(f.number >= 1);
                }
            }
            let _ = read(&gzip(&m));
        }
    }
}

/// Path of a shared capture, relative to this crate.
fn shared(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/captures"
    ))
    .join(rel)
}

/// (frames, first ts, last ts, warnings) of a capture file, or None when it is absent.
fn summary(rel: &str) -> Option<(u64, i64, i64, Vec<u32>, usize)> {
    let path = shared(rel);
    if !path.exists() {
        eprintln!("skipping: {} not found", path.display());
        return None;
    }
    let mut r = CaptureReader::open(&path).unwrap();
    let (mut n, mut first, mut last) = (0u64, 0i64, 0i64);
    let mut linktypes = Vec::new();
    while let Some(f) = r.next_frame() {
        n += 1;
        assert_eq!(f.number, n);
        if n == 1 {
            first = f.ts_ns;
        }
        last = f.ts_ns;
        if !linktypes.contains(&f.linktype) {
            linktypes.push(f.linktype);
        }
    }
    assert!(r.warnings().is_empty(), "{rel}: {:?}", r.warnings());
    let size = std::fs::metadata(&path).unwrap().len();
    assert_eq!(r.input_bytes_read(), size);
    Some((n, first, last, linktypes, r.warnings().len()))
}

#[test]
fn shared_lab_format_variants_agree() {
    // tshark -r F -T fields -e frame.time_epoch: 1796013289.451230978 .. 1796013295.635604554.
    let (first_ns, last_ns) = (1_796_013_289_451_230_978i64, 1_796_013_295_635_604_554i64);
    let us = |t: i64| t / 1000 * 1000;
    let cases = [
        ("lab/fmt_sender.pcap", 1, true),
        ("lab/fmt_pcapng_sender.pcapng", 1, false),
        ("lab/fmt_nsec_sender.pcap", 1, false),
        ("lab/fmt_sll_sender.pcap", 113, true),
        ("lab/fmt_sll2_sender.pcap", 276, true),
    ];
    for (rel, linktype, micro) in cases {
        let Some((n, first, last, lts, _)) = summary(rel) else {
            continue;
        };
        assert_eq!(n, 446, "{rel}");
        assert_eq!(lts, vec![linktype], "{rel}");
        if micro {
            assert_eq!((first, last), (us(first_ns), us(last_ns)), "{rel}");
        } else {
            assert_eq!((first, last), (first_ns, last_ns), "{rel}");
        }
    }
}

#[test]
fn shared_netperfmeter_gzip_pcapng() {
    // tshark: 16300 frames, 1756391135.333044748 .. 1756391201.122697355, Linux SLL.
    let rel = "public/dreibh__netperfmeter__multi.pcap.gz";
    let Some((n, first, last, lts, _)) = summary(rel) else {
        return;
    };
    assert_eq!(n, 16300);
    assert_eq!(first, 1_756_391_135_333_044_748);
    assert_eq!(last, 1_756_391_201_122_697_355);
    assert_eq!(lts, vec![113]);
    let r = CaptureReader::open(&shared(rel)).unwrap();
    assert!(r.gzip());
    assert_eq!(r.format(), CaptureFormat::Pcapng);
}

/// A plain file is read in place (read whole when small, mapped when large): frames, offsets,
/// warnings and progress must equal those of the streamed reading, for classic pcap (small, big,
/// and mapped), pcapng (sections concatenated, each with its own byte order and interfaces), and
/// all cut mid-record.
#[test]
fn mapped_reading_equals_streamed_reading() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../sample-traces");
    let classic_src = std::fs::read(dir.join("cut_p20_sack40_sender.pcap")).unwrap();
    let ng_src = std::fs::read(dir.join("fmt_pcapng_sender.pcapng")).unwrap();
    let mut big_classic = classic_src.clone();
    while big_classic.len() < (3 << 19) {
        big_classic.extend_from_slice(&classic_src[24..]);
    }
    let mut mapped_classic = big_classic.clone();
    while mapped_classic.len() as u64 <= super::reader::READ_WHOLE_MAX {
        mapped_classic.extend_from_slice(&classic_src[24..]);
    }
    let mut big_ng = Vec::new();
    // A big-endian section after each little-endian one.
    let mut be = NgBuilder::default();
    be.shb(true)
        .idb(1, 0, &[])
        .epb(0, 1_700_000_000_000_000, &pkt(80, 9), 80);
    while big_ng.len() < (3 << 19) {
        big_ng.extend_from_slice(&ng_src);
        big_ng.extend_from_slice(&be.buf);
    }
    // The in-place fast path hands records over to the general one when they exceed the snap
    // length (warned once) or the record size limit (reading stops): both must read the same.
    let mut small_snaplen = big_classic.clone();
    small_snaplen[16..20].copy_from_slice(&100u32.to_le_bytes());
    let mut oversized = big_classic.clone();
    let mut at = 24;
    for _ in 0..500 {
        at += 16 + u32::from_le_bytes(oversized[at + 8..at + 12].try_into().unwrap()) as usize;
    }
    oversized[at + 8..at + 12].copy_from_slice(&300_000u32.to_le_bytes());
    let tmp = std::env::temp_dir().join(format!("sctp-map-test-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for (name, bytes) in [
        ("classic-small", &classic_src),
        ("classic", &big_classic),
        ("classic-mapped", &mapped_classic),
        ("pcapng", &big_ng),
        ("classic-snaplen-100", &small_snaplen),
        ("classic-oversized-501", &oversized),
    ] {
        for cut in [bytes.len(), bytes.len() - 7] {
            let path = tmp.join(format!("{name}-{cut}"));
            std::fs::write(&path, &bytes[..cut]).unwrap();
            let rd = CaptureReader::open(&path).unwrap();
            assert!(rd.is_in_place(), "{name}: not read in place");
            assert_eq!(rd.is_mapped(), name.contains("mapped"), "{name}");
            let mapped = drain(rd);
            let streamed = read(&bytes[..cut]).unwrap();
            let expect = if name.contains("oversized") {
                500
            } else if name.contains("small") {
                100
            } else {
                1000
            };
            assert!(
                mapped.frames.len() >= expect,
                "{name}: {}",
                mapped.frames.len()
            );
            if name.contains("oversized") {
                assert_eq!(mapped.frames.len(), 500, "{:?}", mapped.warnings);
            }
            if name.contains("snaplen") {
                assert!(
                    mapped
                        .warnings
                        .iter()
                        .any(|w| w.contains("snap length 100")),
                    "{:?}",
                    mapped.warnings
                );
            }
            assert_eq!(mapped.frames, streamed.frames, "{name} cut {cut}");
            assert_eq!(mapped.warnings, streamed.warnings, "{name} cut {cut}");
            assert_eq!(mapped.format, streamed.format);
            assert_eq!((mapped.input, streamed.input), (cut as u64, cut as u64));
            if cut < bytes.len() && !name.contains("oversized") {
                assert!(
                    mapped.warnings.iter().any(|w| w.contains("truncated")),
                    "{:?}",
                    mapped.warnings
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
}
