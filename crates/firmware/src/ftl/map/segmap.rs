//! Which LRU node holds each cached segment: a map from segment to node, open addressing with
//! linear probing over packed `(segment, node)` words.
//!
//! It replaces a general hash map for one reason: its slot for a segment is computable, so the
//! CMT can ask the CPU to fetch it ahead of use ([`SegMap::prefetch`]). Classic DFTL caches a
//! few hundred thousand one-entry segments at random LPNs; at full size every miss evicts one
//! and inserts another, and each probe was a cache miss the profile showed. Deletion shifts
//! the following entries back (no tombstones), so probes stay short however long a run is.

const EMPTY: u64 = u64::MAX;

/// Segment -> node. Segment `u32::MAX` cannot be stored (it marks an empty slot).
pub(crate) struct SegMap {
    slots: Vec<u64>,
    /// 64 minus log2 of the slot count (Fibonacci hashing takes the top bits).
    shift: u32,
    len: usize,
}

impl SegMap {
    /// A map with room for `n` entries before it grows.
    pub fn with_capacity(n: usize) -> Self {
        let slots = (n.max(4) * 2).next_power_of_two();
        SegMap { slots: vec![EMPTY; slots], shift: 64 - slots.trailing_zeros(), len: 0 }
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Slots allocated (each 8 bytes).
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    #[inline]
    fn home(&self, seg: u32) -> usize {
        ((seg as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    #[inline]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The slot holding `seg`, if it is in the map.
    #[inline]
    fn find(&self, seg: u32) -> Option<usize> {
        let mut i = self.home(seg);
        loop {
            let w = self.slots[i];
            if w == EMPTY {
                return None;
            }
            if (w >> 32) as u32 == seg {
                return Some(i);
            }
            i = (i + 1) & self.mask();
        }
    }

    /// `seg`'s node.
    #[inline]
    pub fn get(&self, seg: u32) -> Option<u32> {
        self.find(seg).map(|i| self.slots[i] as u32)
    }

    /// Brings the slot where `seg` is (or would go) toward the CPU cache (a hint: see
    /// [`sim::prefetch`]); changes nothing.
    #[inline]
    pub fn prefetch(&self, seg: u32) {
        sim::prefetch(&self.slots[self.home(seg)]);
    }

    /// Sets `seg`'s node; returns the node it had.
    pub fn insert(&mut self, seg: u32, node: u32) -> Option<u32> {
        assert!(seg != u32::MAX, "segment u32::MAX cannot be mapped");
        // Room first (a replacement may grow the map one insert early), then one probe that
        // ends at the segment or at the empty slot it goes to.
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let w = (seg as u64) << 32 | node as u64;
        let mut i = self.home(seg);
        loop {
            let old = self.slots[i];
            if old == EMPTY {
                self.slots[i] = w;
                self.len += 1;
                return None;
            }
            if (old >> 32) as u32 == seg {
                self.slots[i] = w;
                return Some(old as u32);
            }
            i = (i + 1) & self.mask();
        }
    }

    /// Removes `seg`; returns its node.
    pub fn remove(&mut self, seg: u32) -> Option<u32> {
        let mut i = self.find(seg)?;
        let node = self.slots[i] as u32;
        // Shift back every entry of the run after `i` whose home does not lie cyclically in
        // (i, j]: its probe passed through `i`, so it must not find `i` empty.
        let mut j = i;
        loop {
            j = (j + 1) & self.mask();
            let w = self.slots[j];
            if w == EMPTY {
                break;
            }
            let h = self.home((w >> 32) as u32);
            let stays = if i <= j { i < h && h <= j } else { i < h || h <= j };
            if !stays {
                self.slots[i] = w;
                i = j;
            }
        }
        self.slots[i] = EMPTY;
        self.len -= 1;
        Some(node)
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        *self = SegMap::with_capacity(old.len());
        for w in old.into_iter().filter(|&w| w != EMPTY) {
            self.insert((w >> 32) as u32, w as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Any mix of inserts, removes and lookups answers as a `HashMap` does, over keys that
        /// collide often (a small key space in a map that starts tiny and grows).
        #[test]
        fn behaves_as_a_hash_map(ops in proptest::collection::vec((0u8..3, 0u32..64, any::<u32>()), 1..600)) {
            let mut m = SegMap::with_capacity(1);
            let mut model = HashMap::new();
            for (op, seg, node) in ops {
                // Keys spread over the whole range too, the largest storable one included.
                let seg = if seg % 7 == 0 { u32::MAX - 1 - seg } else { seg };
                match op {
                    0 => prop_assert_eq!(m.insert(seg, node), model.insert(seg, node)),
                    1 => prop_assert_eq!(m.remove(seg), model.remove(&seg)),
                    _ => prop_assert_eq!(m.get(seg), model.get(&seg).copied()),
                }
                prop_assert_eq!(m.len(), model.len());
                m.prefetch(seg);
            }
            for (&seg, &node) in &model {
                prop_assert_eq!(m.get(seg), Some(node));
            }
            prop_assert!(m.len() * 2 <= m.slots());
        }
    }

    #[test]
    fn removing_from_a_wrapped_run_keeps_every_other_entry_reachable() {
        let mut m = SegMap::with_capacity(4); // 8 slots
        // Find keys whose home is the last slot, so that their run wraps to the start.
        let last: Vec<u32> = (0..10_000).filter(|&s| m.home(s) == m.slots() - 1).take(3).collect();
        for (k, &s) in last.iter().enumerate() {
            m.insert(s, k as u32);
        }
        assert_eq!(m.remove(last[0]), Some(0));
        assert_eq!((m.get(last[1]), m.get(last[2])), (Some(1), Some(2)));
        assert_eq!(m.remove(last[0]), None);
        assert_eq!(m.len(), 2);
    }

    #[test]
    #[should_panic(expected = "cannot be mapped")]
    fn the_empty_marker_is_not_a_segment() {
        SegMap::with_capacity(1).insert(u32::MAX, 0);
    }
}
