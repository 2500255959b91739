//! A small FxHash-style hasher for the per-packet lookup tables (association tags and ports, TCP
//! 4-tuples): the keys are fixed-size integers and addresses, and SipHash showed in profiles.

use std::hash::{BuildHasherDefault, Hasher};

/// Multiply-rotate hasher (as in rustc's FxHash); not DoS-resistant, so the tables it serves are
/// bounded in size (see `TrackerLimits` and the TCP flow cap).
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.write_u64(u64::from_le_bytes([
                c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
            ]));
        }
        let mut rest = 0u64;
        for (i, &b) in chunks.remainder().iter().enumerate() {
            rest |= (b as u64) << (8 * i);
        }
        self.write_u64(rest);
    }
    fn write_u8(&mut self, n: u8) {
        self.write_u64(n as u64);
    }
    fn write_u16(&mut self, n: u16) {
        self.write_u64(n as u64);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(K);
    }
}

/// `BuildHasher` for `HashMap::with_hasher` / `HashMap::default()`.
pub type FxBuild = BuildHasherDefault<FxHasher>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    #[test]
    fn equal_keys_hash_equal_and_different_keys_differ() {
        let b = FxBuild::default();
        let h = |k: &(u16, u16, u32)| b.hash_one(k);
        assert_eq!(h(&(1, 2, 3)), h(&(1, 2, 3)));
        assert_ne!(h(&(1, 2, 3)), h(&(2, 1, 3)));
        let ip: std::net::IpAddr = "10.0.0.1".parse().unwrap();
        let mut x = FxHasher::default();
        ip.hash(&mut x);
        assert_ne!(x.finish(), 0);
    }
}
