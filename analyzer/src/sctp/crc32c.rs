//! CRC32c checksum of an SCTP packet (RFC 9260 6.8, Appendix B).
//!
//! The checksum covers the whole SCTP packet (common header and all chunks) with the 4-byte
//! checksum field (bytes 8..12) taken as zero. Byte order: RFC 9260 Appendix B transmits the
//! reflected CRC least significant byte first, so the field read as a *little-endian* `u32`
//! equals `crc32c(packet)` (what Linux, FreeBSD and usrsctp do; checked against real captures in
//! the tests below). tshark prints the field read big-endian, as `SctpPacket::checksum` does.

use ::crc32c::{crc32c, crc32c_append};

/// Offset of the checksum field in the SCTP common header (RFC 9260 3.1).
pub const CHECKSUM_OFFSET: usize = 8;

/// CRC32c of `packet` with its checksum field (bytes 8..12) taken as zero; never allocates.
///
/// A packet shorter than 12 bytes is checksummed with whatever part of the field it has zeroed.
pub fn compute(packet: &[u8]) -> u32 {
    let head = &packet[..packet.len().min(CHECKSUM_OFFSET)];
    let zero_len = packet.len().saturating_sub(CHECKSUM_OFFSET).min(4);
    let tail = packet.get(CHECKSUM_OFFSET + 4..).unwrap_or(&[]);
    let crc = crc32c(head);
    let crc = crc32c_append(crc, &[0u8; 4][..zero_len]);
    crc32c_append(crc, tail)
}

/// The stored checksum as the value `compute` returns (field read little-endian, RFC 9260
/// Appendix B), or `None` when the packet is shorter than the common header.
pub fn stored(packet: &[u8]) -> Option<u32> {
    let f = packet.get(CHECKSUM_OFFSET..CHECKSUM_OFFSET + 4)?;
    Some(u32::from_le_bytes([f[0], f[1], f[2], f[3]]))
}

/// True when the checksum field matches the CRC32c of the packet (RFC 9260 6.8). A packet cut
/// by the capture cannot be verified and gives `false`; shorter than 12 bytes gives `false`.
pub fn verify(packet: &[u8]) -> bool {
    stored(packet).is_some_and(|s| s == compute(packet))
}

/// Test helper: the SCTP packets of a little-endian classic pcap (Ethernet + IPv4, proto 132),
/// each with how many of its bytes the snap length cut off. `None` when the file is absent.
#[cfg(test)]
pub(crate) fn lab_sctp_packets(path: &str) -> Option<Vec<(Vec<u8>, usize)>> {
    let data = std::fs::read(path).ok()?;
    let le32 = |b: &[u8], at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    // pcap global header: 24 bytes; magic a1b2c3d4 (us) or a1b23c4d (ns) read little-endian.
    assert!(data.len() >= 24, "{path}: short pcap");
    assert!(
        matches!(le32(&data, 0), 0xa1b2_c3d4 | 0xa1b2_3c4d),
        "{path}: not a LE pcap"
    );
    assert_eq!(le32(&data, 20), 1, "{path}: link type is not Ethernet");
    let mut out = Vec::new();
    let mut pos = 24;
    while pos + 16 <= data.len() {
        // Record header: ts_sec, ts_frac, incl_len, orig_len.
        let incl = le32(&data, pos + 8) as usize;
        let orig = le32(&data, pos + 12) as usize;
        let frame = &data[pos + 16..(pos + 16 + incl).min(data.len())];
        pos += 16 + incl;
        // Ethernet II (14 bytes), IPv4 only, protocol 132 (SCTP).
        if frame.len() < 34 || frame[12..14] != [0x08, 0x00] || frame[14 + 9] != 132 {
            continue;
        }
        let ihl = usize::from(frame[14] & 0x0f) * 4;
        let total = usize::from(u16::from_be_bytes([frame[16], frame[17]]));
        let full = total - ihl;
        let captured = frame.len().saturating_sub(14 + ihl).min(full);
        let sctp = frame[14 + ihl..14 + ihl + captured].to_vec();
        let missing = full - captured;
        assert!(
            missing == 0 || orig > incl,
            "{path}: cut packet without snap length"
        );
        out.push((sctp, missing));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAB: &str = "/work/shared/captures/lab/fmt_sender.pcap";

    #[test]
    fn check_value_of_the_crc32c_crate() {
        // CRC-32C check value of "123456789" (RFC 3720 B.4 / the Castagnoli catalogue).
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    }

    #[test]
    fn real_packets_verify() {
        let Some(packets) = lab_sctp_packets(LAB) else {
            eprintln!("skipping: {LAB} absent");
            return;
        };
        assert!(packets.len() > 100);
        for (i, (pkt, missing)) in packets.iter().take(50).enumerate() {
            assert_eq!(*missing, 0);
            assert!(verify(pkt), "packet {i} checksum mismatch");
            // The first packet is the INIT: its field on the wire is 23 32 6e ee.
            if i == 0 {
                assert_eq!(&pkt[8..12], &[0x23, 0x32, 0x6e, 0xee]);
                assert_eq!(compute(pkt), 0xee6e_3223);
            }
        }
        assert!(packets.iter().all(|(p, _)| verify(p)));
    }

    #[test]
    fn corrupted_packet_fails() {
        let Some(packets) = lab_sctp_packets(LAB) else {
            eprintln!("skipping: {LAB} absent");
            return;
        };
        let mut pkt = packets[0].0.clone();
        let last = pkt.len() - 1;
        pkt[last] ^= 0x40;
        assert!(!verify(&pkt));
        // Byte-swapped (big-endian) storage must not verify either.
        let mut swapped = packets[0].0.clone();
        swapped[8..12].reverse();
        assert!(!verify(&swapped));
    }

    #[test]
    fn compute_ignores_the_field_and_short_inputs() {
        let mut pkt = vec![0x13, 0x88, 0x13, 0x89, 0, 0, 0, 1, 0, 0, 0, 0, 11, 0, 0, 4];
        let c = compute(&pkt);
        pkt[8..12].copy_from_slice(&c.to_le_bytes());
        assert_eq!(compute(&pkt), c);
        assert!(verify(&pkt));
        assert_eq!(stored(&pkt), Some(c));
        assert!(!verify(&pkt[..11]));
        assert_eq!(stored(&pkt[..11]), None);
        let _ = compute(&[]);
        let _ = compute(&pkt[..9]);
    }
}
