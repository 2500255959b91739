//! Old tcpdump variants of classic pcap (`sample-traces/pcap-variants/`: fmt_sender.pcap written
//! by editcap as Nokia IPSO, Red Hat 6.1 and SuSE 6.3 pcap, whose record headers are 20, 24 and
//! 28 bytes under a standard or "modified" magic): told from their first records, read whole
//! (tshark's frame and SCTP counts) and analysed exactly as the original, with a warning naming
//! the variant.

use serde_json::Value;

use crate::common;

#[test]
fn old_tcpdump_variants_read_as_the_original() {
    let dir = common::samples_dir().join("pcap-variants");
    let truth: Value =
        serde_json::from_slice(&std::fs::read(dir.join("truth.json")).unwrap()).unwrap();
    let (_, src) = common::analyze(&common::samples_dir().join("fmt_sender.pcap"));
    let want = serde_json::to_value(&src.associations).unwrap();
    let rows = truth.as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for row in rows {
        let file = row["file"].as_str().unwrap();
        let (c, r) = common::analyze(&dir.join(file));
        assert_eq!(c.packets, row["frames"].as_u64().unwrap(), "{file}");
        assert_eq!(
            c.sctp_packets,
            row["sctp_frames"].as_u64().unwrap(),
            "{file}"
        );
        let told = format!(
            "pcap records with {}-byte headers ({}'s variant of the format",
            row["record_header_len"],
            row["analyzer_names"].as_str().unwrap()
        );
        assert_eq!(c.warnings.len(), 1, "{file}: {:?}", c.warnings);
        assert!(
            c.warnings[0].starts_with(&told),
            "{file}: {}",
            c.warnings[0]
        );
        let got = serde_json::to_value(&r.associations).unwrap();
        assert!(
            got == want,
            "{file}: the associations differ from the original's"
        );
    }
}
