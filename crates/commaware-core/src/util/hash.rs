//! A multiply-rotate hasher for maps keyed by a few integers (request keys, link pairs,
//! matching states), where SipHash costs more than the work around the lookup.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Each word is rotated in and multiplied by an odd constant; `finish` folds the high
/// bits down, since a table indexes by the low ones.
#[derive(Default, Clone, Copy)]
pub struct IntHasher(u64);

impl Hasher for IntHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
    fn write_i64(&mut self, v: i64) {
        self.write_u64(v as u64);
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
}

/// A `HashMap` with [`IntHasher`].
pub type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn high_words_reach_the_low_bits() {
        // Keys that differ only above bit 32 must not share their low hash bits.
        let low = |k: u64| {
            let mut h = IntHasher::default();
            h.write_u64(k);
            h.finish() & 0xffff
        };
        let distinct: std::collections::BTreeSet<u64> = (0..64u64).map(|g| low(g << 32 | 7)).collect();
        assert!(distinct.len() > 60, "{} distinct of 64", distinct.len());
    }
}
