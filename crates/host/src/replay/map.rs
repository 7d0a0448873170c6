//! Mapping a trace record's address onto the device: a per-volume base offset (or a region of
//! its own), then alignment to mapping units (widen, or split off the unaligned edges), then
//! folding into the logical capacity (or the volume's region), then cutting into commands no
//! larger than the device's maximum transfer.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What to do with requests that do not start and end on mapping-unit boundaries.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Align {
    /// Round the start down and the end up to mapping units: one command, a little larger.
    #[default]
    Widen,
    /// Issue the unaligned head and tail as their own (LBA-aligned) commands — the device
    /// reads, modifies and writes those partial units — and the aligned middle as one.
    Split,
}

/// Where volumes go and how addresses are made to fit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddressMap {
    /// Logical capacity, bytes (a multiple of `unit`).
    pub capacity: u64,
    /// Mapping unit, bytes.
    pub unit: u64,
    /// LBA size, bytes (divides `unit`).
    pub lba: u64,
    /// Largest command, bytes (a multiple of `lba`).
    pub max_transfer: u64,
    /// Base offset of a volume, by number.
    pub offsets: BTreeMap<u32, u64>,
    /// Base offset of volume `v` without an entry in `offsets`: `v * stride`.
    pub stride: u64,
    /// A volume's own region, `(base, size)` in bytes (both multiples of `unit`, inside the
    /// capacity): its addresses fold into the region instead (`offsets` and `stride` are not
    /// used for it).
    pub regions: BTreeMap<u32, (u64, u64)>,
    /// Alignment policy.
    pub align: Align,
}

/// What mapping did to one record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mapped {
    /// The commands, as `(offset, len)`: LBA-aligned, inside the capacity.
    pub pieces: Vec<(u64, u64)>,
    /// The start wrapped around the capacity, or the request was moved to end at it.
    pub folded: bool,
    /// Widened to mapping units.
    pub widened: bool,
    /// Split into an aligned middle and unaligned edges.
    pub split: bool,
    /// Longer than the capacity: cut to it.
    pub clipped: bool,
    /// Cut into several commands by the maximum transfer size.
    pub chunked: bool,
}

impl AddressMap {
    /// Maps `len` bytes at `offset` of `volume` (`len` > 0).
    pub fn map(&self, volume: u32, offset: u64, len: u64) -> Mapped {
        debug_assert!(len > 0);
        let mut m = Mapped::default();
        // The window the volume's addresses fold into: its region, or the whole capacity.
        let (lo, capacity, base) = match self.regions.get(&volume) {
            Some(&(lo, size)) => (lo, size.max(self.unit), 0),
            None => {
                (0, self.capacity, self.offsets.get(&volume).copied().unwrap_or(volume as u64 * self.stride))
            }
        };
        let start = base.wrapping_add(offset) % capacity.max(1);
        m.folded = base.checked_add(offset).is_none_or(|a| a >= capacity);
        let mut len = len;
        if len > capacity {
            len = capacity;
            m.clipped = true;
        }
        // Alignment first (on the folded start), so the edges stay where the trace put them.
        let (s_unit, e_unit) = (down(start, self.unit), up(start + len, self.unit));
        let aligned = s_unit == start && e_unit == start + len;
        let mut ranges: Vec<(u64, u64)> = Vec::with_capacity(3);
        if aligned {
            ranges.push((start, start + len));
        } else {
            match self.align {
                Align::Widen => {
                    m.widened = true;
                    ranges.push((s_unit, e_unit));
                }
                Align::Split => {
                    m.split = true;
                    let (mid_s, mid_e) = (up(start, self.unit), down(start + len, self.unit));
                    if mid_s >= mid_e {
                        // Inside one unit, or across one boundary with no whole unit.
                        ranges.push((down(start, self.lba), up(start + len, self.lba)));
                    } else {
                        if start < mid_s {
                            ranges.push((down(start, self.lba), mid_s));
                        }
                        ranges.push((mid_s, mid_e));
                        if mid_e < start + len {
                            ranges.push((mid_e, up(start + len, self.lba)));
                        }
                    }
                }
            }
        }
        // Fold what now runs past the end: move the request back so that it ends there.
        let end = ranges.last().map_or(0, |r| r.1);
        if end > capacity {
            let shift = up(end - capacity, self.unit);
            // Longer, once aligned, than the window: what runs before its start is cut off.
            m.clipped |= ranges.first().is_some_and(|r| r.0 < shift);
            for r in &mut ranges {
                r.0 = r.0.saturating_sub(shift);
                r.1 = r.1.saturating_sub(shift);
            }
            m.folded = true;
        }
        for (s, e) in ranges.into_iter().map(|(s, e)| (lo + s, lo + e)) {
            m.chunked |= e - s > self.max_transfer;
            let mut at = s;
            while at < e {
                let n = (e - at).min(self.max_transfer);
                m.pieces.push((at, n));
                at += n;
            }
        }
        m
    }
}

fn down(x: u64, a: u64) -> u64 {
    x / a * a
}

fn up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const KIB: u64 = 1024;

    fn map(align: Align) -> AddressMap {
        AddressMap {
            capacity: 1024 * KIB,
            unit: 4 * KIB,
            lba: 512,
            max_transfer: 64 * KIB,
            offsets: BTreeMap::from([(7, 100 * KIB)]),
            stride: 256 * KIB,
            regions: BTreeMap::from([(9, (512 * KIB, 128 * KIB))]),
            align,
        }
    }

    #[test]
    fn a_volume_with_a_region_folds_into_it() {
        let am = map(Align::Widen);
        assert_eq!(am.map(9, 8 * KIB, 4 * KIB).pieces, vec![(520 * KIB, 4 * KIB)]);
        let m = am.map(9, 128 * KIB + 4 * KIB, 4 * KIB);
        assert!(m.folded);
        assert_eq!(m.pieces, vec![(516 * KIB, 4 * KIB)], "wrapped inside the region");
        let m = am.map(9, 124 * KIB, 8 * KIB);
        assert!(m.folded);
        assert_eq!(m.pieces, vec![(632 * KIB, 8 * KIB)], "moved back to end at the region's end");
        let m = am.map(9, 0, 256 * KIB);
        assert!(m.clipped);
        assert_eq!(m.pieces.iter().map(|p| p.1).sum::<u64>(), 128 * KIB);
        assert!(m.pieces.iter().all(|&(s, n)| s >= 512 * KIB && s + n <= 640 * KIB));
    }

    #[test]
    fn aligned_requests_pass_through_at_their_volume_base() {
        let m = map(Align::Widen).map(0, 8 * KIB, 8 * KIB);
        assert_eq!(m, Mapped { pieces: vec![(8 * KIB, 8 * KIB)], ..Mapped::default() });
        assert_eq!(map(Align::Widen).map(2, 0, 4 * KIB).pieces, vec![(512 * KIB, 4 * KIB)], "stride");
        assert_eq!(map(Align::Widen).map(7, 0, 4 * KIB).pieces, vec![(100 * KIB, 4 * KIB)], "offset");
    }

    #[test]
    fn unaligned_requests_widen_or_split() {
        let w = map(Align::Widen).map(0, 5 * KIB, 8 * KIB); // 5K..13K
        assert!(w.widened && !w.split);
        assert_eq!(w.pieces, vec![(4 * KIB, 12 * KIB)]);
        let s = map(Align::Split).map(0, 5 * KIB, 8 * KIB);
        assert!(s.split && !s.widened);
        assert_eq!(s.pieces, vec![(5 * KIB, 3 * KIB), (8 * KIB, 4 * KIB), (12 * KIB, KIB)]);
        // Within one unit: one LBA-aligned command.
        let s = map(Align::Split).map(0, 1000, 100);
        assert_eq!(s.pieces, vec![(512, 1024)]);
    }

    #[test]
    fn addresses_fold_into_the_capacity() {
        let m = map(Align::Widen).map(0, 1024 * KIB + 8 * KIB, 4 * KIB);
        assert!(m.folded);
        assert_eq!(m.pieces, vec![(8 * KIB, 4 * KIB)]);
        // Running past the end: moved back to end there.
        let m = map(Align::Widen).map(0, 1020 * KIB, 8 * KIB);
        assert!(m.folded);
        assert_eq!(m.pieces, vec![(1016 * KIB, 8 * KIB)]);
        let m = map(Align::Widen).map(0, u64::MAX - 10, 4 * KIB);
        assert!(m.folded && m.pieces[0].0 + m.pieces[0].1 <= 1024 * KIB);
        let m = map(Align::Widen).map(0, 0, 4096 * KIB);
        assert!(m.clipped && m.chunked);
        assert_eq!(m.pieces.len(), 16);
    }

    proptest! {
        #[test]
        fn pieces_are_aligned_inside_the_capacity_and_cover_the_request(
            volume in 0u32..10, offset in 0u64..1u64 << 40, len in 1u64..300_000, split in any::<bool>(),
        ) {
            let am = map(if split { Align::Split } else { Align::Widen });
            let m = am.map(volume, offset, len);
            prop_assert!(!m.pieces.is_empty());
            for &(s, n) in &m.pieces {
                prop_assert!(n > 0 && n <= am.max_transfer);
                prop_assert_eq!(s % am.lba, 0);
                prop_assert_eq!(n % am.lba, 0);
                prop_assert!(s + n <= am.capacity);
            }
            // Contiguous, and at least as long as the (clipped) request.
            prop_assert!(m.pieces.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0));
            let total: u64 = m.pieces.iter().map(|p| p.1).sum();
            // Within the volume's region, if it has one (volume 9), cut to it.
            let (lo, cap) = am.regions.get(&volume).copied().unwrap_or((0, am.capacity));
            prop_assert!(total >= len.min(cap) || m.clipped);
            prop_assert!(m.pieces.iter().all(|&(s, n)| s >= lo && s + n <= lo + cap));
            if !split {
                prop_assert!(m.pieces.iter().all(|&(s, n)| s % am.unit == 0 && n % am.unit == 0));
            }
        }
    }
}
