//! Endace ERF captures of a real association (`sample-traces/erf/`: fmt_sender.pcap written as
//! Ethernet records with their FCS, extension headers, padding, a loss counter and a metadata
//! record; as gzip-compressed IPv4 records; as Packet-over-SONET records): read as tshark reads
//! them (frames, SCTP frames, chunks), analysed exactly as the pcap they came from, and what the
//! records say beyond their frames told once.

use analyzer::capture::CaptureFormat;

use crate::common;

#[test]
fn erf_captures_analyse_as_their_pcap_source() {
    let (dir, truth) = common::folder_truth("erf");
    let (src, want) = common::associations(&common::samples_dir().join("fmt_sender.pcap"));
    assert_eq!(src.associations.len(), 1);
    let rows = truth.as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for row in rows {
        let file = row["file"].as_str().unwrap();
        if file == "fmt_sender.pcap" {
            assert_eq!(src.sctp_packets, row["sctp_frames"].as_u64().unwrap());
            continue;
        }
        let (c, got) = common::associations(&dir.join(file));
        assert_eq!(c.format, CaptureFormat::Erf, "{file}");
        assert_eq!(c.compression.is_some(), file.ends_with(".gz"), "{file}");
        common::assert_frames_and_chunks(&c, row, file);
        assert!(
            got == want,
            "{file}: the associations differ from the pcap source's"
        );
        let lost = row["card_lost"].as_u64();
        let told = |what: &str| c.warnings.iter().filter(|w| w.contains(what)).count();
        match lost {
            Some(n) => {
                assert_eq!(
                    told(&format!("the capture card lost {n} packets")),
                    1,
                    "{file}: {:?}",
                    c.warnings
                );
                assert_eq!(
                    told("1 of type 27 (provenance metadata)"),
                    1,
                    "{file}: {:?}",
                    c.warnings
                );
                assert_eq!(c.warnings.len(), 2, "{file}: {:?}", c.warnings);
            }
            None => assert!(c.warnings.is_empty(), "{file}: {:?}", c.warnings),
        }
    }
}

/// A file cut inside a record keeps the frames before it and names the offset; a record whose
/// length is below its header ends reading there, with the frames before it kept.
#[test]
fn a_cut_or_broken_erf_file_keeps_what_was_read() {
    let (dir, _) = common::folder_truth("erf");
    let bytes = std::fs::read(dir.join("fmt_sender_eth.erf")).unwrap();
    let tmp = std::env::temp_dir().join(format!("sctp-analyzer-erf-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let cut = tmp.join("cut.erf");
    std::fs::write(&cut, &bytes[..bytes.len() / 2 + 5]).unwrap();
    let (c, _) = common::analyze(&cut);
    assert_eq!(c.format, CaptureFormat::Erf);
    assert!(c.packets > 40, "{}", c.packets);
    let last = c.warnings.last().unwrap();
    assert!(last.starts_with("truncated record at offset "), "{last}");
    assert!(
        last.ends_with(&format!("kept {} frames", c.packets)),
        "{last}"
    );
    // The 25th record's length set to 8 (past the 20 records that tell the format).
    let mut broken = bytes.clone();
    let mut at = 0;
    for _ in 0..24 {
        at += usize::from(u16::from_be_bytes([bytes[at + 10], bytes[at + 11]]));
    }
    broken[at + 10..at + 12].copy_from_slice(&8u16.to_be_bytes());
    let path = tmp.join("broken.erf");
    std::fs::write(&path, &broken).unwrap();
    let (c, _) = common::analyze(&path);
    // 24 records, one of them padding.
    assert_eq!(c.packets, 23);
    let last = c.warnings.last().unwrap();
    assert!(
        last.starts_with(&format!("bad ERF record at offset {at}: record length 8")),
        "{last}"
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}
