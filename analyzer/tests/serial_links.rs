//! Serial-line link types on a real association (`sample-traces/links/`: fmt_sender.pcap
//! rewritten by tcprewrite onto Cisco HDLC and PPP): read as tshark reads them, and analysed
//! exactly as the Ethernet original (the link header changes no SCTP figure).

use crate::common;

#[test]
fn cisco_hdlc_and_ppp_captures_analyse_as_their_ethernet_source() {
    let (dir, truth) = common::folder_truth("links");
    let (src, want) = common::associations(&common::samples_dir().join("fmt_sender.pcap"));
    assert_eq!(src.associations.len(), 1);
    for row in truth.as_array().unwrap() {
        let file = row["file"].as_str().unwrap();
        if file == "fmt_sender.pcap" {
            assert_eq!(src.sctp_packets, row["sctp_frames"].as_u64().unwrap());
            continue;
        }
        let (c, got) = common::associations(&dir.join(file));
        common::assert_frames_and_chunks(&c, row, file);
        assert!(c.warnings.is_empty(), "{file}: {:?}", c.warnings);
        assert!(
            got == want,
            "{file}: the associations differ from the Ethernet source's"
        );
    }
}
