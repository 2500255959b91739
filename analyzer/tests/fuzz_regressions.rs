//! Every input a fuzz target crashed on (`fuzz/regressions/<target>/`, copied from
//! `fuzz/artifacts/` when the bug was fixed) replayed through the same harness
//! (`analyzer::harness`): none may panic again.

use std::path::Path;

#[test]
fn past_fuzz_crashes_stay_fixed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions");
    let mut n = 0;
    for target in ["reader", "link_ip", "sctp_chunks", "analyze"] {
        let Ok(dir) = std::fs::read_dir(root.join(target)) else {
            continue;
        };
        let mut files: Vec<_> = dir.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        files.sort();
        for f in files {
            let data = std::fs::read(&f).unwrap();
            eprintln!("{target}: {}", f.display());
            match target {
                "reader" => analyzer::harness::reader(&data),
                "link_ip" => analyzer::harness::link_ip(&data),
                "sctp_chunks" => analyzer::harness::sctp_chunks(&data),
                _ => analyzer::harness::analyze(&data),
            }
            n += 1;
        }
    }
    assert!(n >= 1, "the regression inputs are missing");
}

/// The first crash link_ip found, minimal: an IPv4 fragment overlapping an earlier one, cut by
/// the snap length before the uncovered part starts (RFC 791 3.2 reassembly keeps the first
/// data; the uncovered part past the capture has no bytes to copy). It panicked slicing the
/// fragment's data past its captured end.
#[test]
fn overlapping_fragment_cut_before_its_new_part() {
    use analyzer::capture::Frame;
    use analyzer::net::NetDecoder;
    // IPv4, id 7, protocol 132, 10.0.0.1 -> 10.0.0.2; fragment offset in 8-byte units.
    let frag = |off8: u16, more: bool, total: u16, payload: &[u8]| {
        let flags = if more { 0x2000 } else { 0 } | off8;
        let mut v = vec![0x45, 0];
        v.extend_from_slice(&total.to_be_bytes());
        v.extend_from_slice(&[0, 7]);
        v.extend_from_slice(&flags.to_be_bytes());
        v.extend_from_slice(&[64, 132, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        v.extend_from_slice(payload);
        v
    };
    // [0, 16) captured whole; then [8, 48) announced, of which only 4 bytes were captured.
    let a = frag(0, true, 20 + 16, &[0xAA; 16]);
    let b = frag(1, true, 20 + 40, &[0xBB; 4]);
    let mut dec = NetDecoder::new();
    for (i, data) in [a, b].iter().enumerate() {
        let frame = Frame {
            number: i as u64 + 1,
            ts_ns: 1_000_000_000 + i as i64,
            linktype: 101,
            data,
            orig_len: data.len() as u32,
            offset: 24,
        };
        assert!(dec.decode(&frame).unwrap().is_none(), "not complete yet");
    }
    assert_eq!(dec.stats().frag_overlaps, 1);
    assert_eq!(dec.pending_fragments(), 1);
}
