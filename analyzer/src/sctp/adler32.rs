//! The Adler-32 checksum of RFC 2960 (6.8, Appendix B), which RFC 3309 replaced by CRC32c:
//! captures of old stacks carry it, and their packets are not corrupt.

/// RFC 1950 8.2 / RFC 2960 Appendix B: the largest prime below 2^16.
const BASE: u32 = 65521;
/// Bytes summed before a reduction keeps the sums below 2^32 (zlib's NMAX).
const NMAX: usize = 5552;

/// Adler-32 of `packet` with its checksum field (bytes 8..12) taken as zero.
pub fn compute(packet: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    let mut i = 0;
    for block in packet.chunks(NMAX) {
        for &x in block {
            let x = if (8..12).contains(&i) { 0 } else { x };
            a += u32::from(x);
            b += a;
            i += 1;
        }
        a %= BASE;
        b %= BASE;
    }
    (b << 16) | a
}

/// True when the checksum field (read big-endian, RFC 2960 6.8) is the packet's Adler-32.
pub fn verify(packet: &[u8]) -> bool {
    packet
        .get(8..12)
        .is_some_and(|f| u32::from_be_bytes([f[0], f[1], f[2], f[3]]) == compute(packet))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_rfc_1950_definition() {
        // Adler-32 of "Wikipedia" is 0x11E60398 (RFC 1950 8.2); after a zeroed 12-byte common
        // header `a` is the same and `b` grows by 12 (zlib.adler32 gives 0x11F20398).
        let mut p = vec![0u8; 12];
        p.extend_from_slice(b"Wikipedia");
        assert_eq!(compute(&p), 0x11F2_0398);
        // The checksum field itself is taken as zero.
        p[8] = 0xAB;
        assert_eq!(compute(&p), 0x11F2_0398);
        // A packet carrying its Adler-32 verifies; one changed byte does not.
        let sum = compute(&p);
        p[8..12].copy_from_slice(&sum.to_be_bytes());
        assert!(verify(&p));
        p[13] ^= 1;
        assert!(!verify(&p));
        assert!(!verify(&p[..11]));
    }

    #[test]
    fn long_packets_reduce_without_overflow() {
        let p = vec![0xFFu8; 70_000];
        let (mut a, mut b) = (1u64, 0u64);
        for (i, &x) in p.iter().enumerate() {
            let x = if (8..12).contains(&i) {
                0
            } else {
                u64::from(x)
            };
            a = (a + x) % 65521;
            b = (b + a) % 65521;
        }
        assert_eq!(compute(&p), ((b as u32) << 16) | a as u32);
    }
}
