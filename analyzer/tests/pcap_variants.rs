//! Old tcpdump variants of classic pcap (`sample-traces/pcap-variants/`: fmt_sender.pcap written
//! by editcap as Nokia IPSO, Red Hat 6.1 and SuSE 6.3 pcap, whose record headers are 20, 24 and
//! 28 bytes under a standard or "modified" magic): told from their first records, read whole
//! (tshark's frame and SCTP counts) and analysed exactly as the original, with a warning naming
//! the variant.

use crate::common;

#[test]
fn old_tcpdump_variants_read_as_the_original() {
    let (dir, truth) = common::folder_truth("pcap-variants");
    let (_, want) = common::associations(&common::samples_dir().join("fmt_sender.pcap"));
    let rows = truth.as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for row in rows {
        let file = row["file"].as_str().unwrap();
        let (c, got) = common::associations(&dir.join(file));
        common::assert_frames(&c, row, file);
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
        assert!(
            got == want,
            "{file}: the associations differ from the original's"
        );
    }
}
