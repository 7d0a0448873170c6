//! The oracle: what each logical block must contain.

/// Bytes of block `lba` as written by write number `version` (0 = never written: zeroes).
pub fn pattern(lba: u64, version: u64, lba_bytes: usize) -> Vec<u8> {
    if version == 0 {
        return vec![0; lba_bytes];
    }
    let mut x = lba.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ version.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    (0..lba_bytes)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// The version of a block whose content is unknown (a write to it failed part-way).
const UNKNOWN: u64 = u64::MAX;

/// The expected content of every block, as a write version per block.
pub struct ShadowStore {
    lba_bytes: usize,
    versions: Vec<u64>,
    next: u64,
}

impl ShadowStore {
    /// A store of `lbas` never-written blocks.
    pub fn new(lbas: u64, lba_bytes: usize) -> Self {
        ShadowStore { lba_bytes, versions: vec![0; lbas as usize], next: 1 }
    }

    /// Blocks.
    pub fn len(&self) -> u64 {
        self.versions.len() as u64
    }

    /// Whether the store has no blocks.
    pub fn is_empty(&self) -> bool {
        self.versions.is_empty()
    }

    /// A fresh write version.
    pub fn next_version(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    /// The data for writing `nlb` blocks at `slba` as `version`.
    pub fn data(&self, slba: u64, nlb: u32, version: u64) -> Vec<u8> {
        (slba..slba + nlb as u64).flat_map(|l| pattern(l, version, self.lba_bytes)).collect()
    }

    /// Records an acknowledged write (or, with version 0, a trim or write-zeroes).
    pub fn record(&mut self, slba: u64, nlb: u32, version: u64) {
        for l in slba..slba + nlb as u64 {
            self.versions[l as usize] = version;
        }
    }

    /// A write to `nlb` blocks at `slba` failed with a media error: each block holds its old
    /// data or the new, unknown which; they are not checked until written again.
    pub fn forget(&mut self, slba: u64, nlb: u32) {
        self.record(slba, nlb, UNKNOWN);
    }

    /// Checks data read from `slba`: the first mismatching block, as
    /// (lba, expected version), if any. Blocks [`forget`](Self::forget) made unknown pass.
    pub fn check(&self, slba: u64, data: &[u8]) -> Option<(u64, u64)> {
        data.chunks(self.lba_bytes).enumerate().find_map(|(i, got)| {
            let lba = slba + i as u64;
            let v = self.versions[lba as usize];
            (v != UNKNOWN && got != pattern(lba, v, self.lba_bytes).as_slice()).then_some((lba, v))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_round_trip_and_mismatches_are_found() {
        let mut s = ShadowStore::new(16, 512);
        let v = s.next_version();
        let data = s.data(3, 4, v);
        s.record(3, 4, v);
        assert_eq!(s.check(3, &data), None);
        assert_eq!(s.check(2, &data), Some((2, 0)));
        s.record(4, 1, 0);
        assert_eq!(s.check(3, &data), Some((4, 0)));
        assert_ne!(pattern(1, 2, 512), pattern(2, 1, 512));
    }
}
