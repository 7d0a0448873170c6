//! A fast hasher for integer keys (block numbers, line addresses) on the back end's hot path,
//! where SipHash's DoS resistance buys nothing: keys come from the file system itself.

use std::hash::{BuildHasherDefault, Hasher};

/// Multiply-rotate hashing of the written words (FxHash style).
#[derive(Default, Clone, Copy)]
pub struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// `BuildHasher` for [`IntHasher`].
pub type IntBuildHasher = BuildHasherDefault<IntHasher>;

/// A `HashMap` with integer-friendly hashing.
pub type IntMap<K, V> = std::collections::HashMap<K, V, IntBuildHasher>;

/// A `HashSet` with integer-friendly hashing.
pub type IntSet<K> = std::collections::HashSet<K, IntBuildHasher>;
