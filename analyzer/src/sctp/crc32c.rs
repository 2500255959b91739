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
#[inline]
pub fn compute(packet: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if packet.len() >= CHECKSUM_OFFSET + 4 && std::arch::is_x86_feature_detected!("sse4.2") {
        // SAFETY: the CPU has SSE4.2 (checked above).
        return unsafe { sse42::compute(packet) };
    }
    portable(packet)
}

/// `compute` through the crc32c crate, three calls (before, in and after the field).
fn portable(packet: &[u8]) -> u32 {
    let head = &packet[..packet.len().min(CHECKSUM_OFFSET)];
    let zero_len = packet.len().saturating_sub(CHECKSUM_OFFSET).min(4);
    let tail = packet.get(CHECKSUM_OFFSET + 4..).unwrap_or(&[]);
    let crc = crc32c(head);
    let crc = crc32c_append(crc, &[0u8; 4][..zero_len]);
    crc32c_append(crc, tail)
}

/// One pass of the SSE4.2 CRC32 instruction (which computes CRC-32C, the Castagnoli
/// polynomial SCTP uses) over a whole packet, 8 bytes at a time from unaligned loads: the
/// crc32c crate splits its input at 8-byte alignment and is called three times around the
/// field, byte by byte at every seam (SCTP packets are short: ~40 instructions instead of ~17
/// for a 130-byte packet, each 3 cycles of latency).
#[cfg(target_arch = "x86_64")]
mod sse42 {
    use std::arch::x86_64::{_mm_crc32_u16, _mm_crc32_u32, _mm_crc32_u64, _mm_crc32_u8};

    use super::CHECKSUM_OFFSET;

    /// Needs `packet.len() >= 12`.
    #[target_feature(enable = "sse4.2")]
    pub(super) unsafe fn compute(packet: &[u8]) -> u32 {
        let word = |at: usize| u64::from_le_bytes(packet[at..at + 8].try_into().unwrap());
        // RFC 9260 6.8 / Appendix B: initial value all ones, the field taken as zero.
        let mut crc = _mm_crc32_u64(u64::from(u32::MAX), word(0));
        crc = u64::from(_mm_crc32_u32(crc as u32, 0));
        let mut at = CHECKSUM_OFFSET + 4;
        while at + 8 <= packet.len() {
            crc = _mm_crc32_u64(crc, word(at));
            at += 8;
        }
        let mut crc = crc as u32;
        let rest = &packet[at..];
        let (four, rest) = rest.split_at(rest.len() & 4);
        if let Ok(b) = <[u8; 4]>::try_from(four) {
            crc = _mm_crc32_u32(crc, u32::from_le_bytes(b));
        }
        let (two, rest) = rest.split_at(rest.len() & 2);
        if let Ok(b) = <[u8; 2]>::try_from(two) {
            crc = _mm_crc32_u16(crc, u16::from_le_bytes(b));
        }
        if let Some(&b) = rest.first() {
            crc = _mm_crc32_u8(crc, b);
        }
        !crc
    }
}

/// The stored checksum as the value `compute` returns (field read little-endian, RFC 9260
/// Appendix B), or `None` when the packet is shorter than the common header.
pub fn stored(packet: &[u8]) -> Option<u32> {
    let f = packet.get(CHECKSUM_OFFSET..CHECKSUM_OFFSET + 4)?;
    Some(u32::from_le_bytes([f[0], f[1], f[2], f[3]]))
}

/// True when the checksum field matches the CRC32c of the packet (RFC 9260 6.8). A packet cut
/// by the capture cannot be verified and gives `false`; shorter than 12 bytes gives `false`.
#[inline]
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
    fn fast_path_matches_the_crate_at_every_length() {
        // Every length from the bare field to past two 8-byte words, and every remainder.
        let bytes: Vec<u8> = (0..300u32).map(|i| (i * 37 + 11) as u8).collect();
        for len in 0..bytes.len() {
            assert_eq!(
                compute(&bytes[..len]),
                portable(&bytes[..len]),
                "length {len}"
            );
        }
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
