//! What a page's spare (OOB) area records: the LPN of each mapping unit packed in the page, a
//! data tag per unit, the page's program sequence number, and per unit the sequence number of
//! the program that first wrote its data (a GC copy keeps its source's), which orders copies of
//! one LPN during recovery.

use crate::address::Lpn;
use crate::geometry::MAX_UNITS_PER_PAGE;

/// A 16-bit fingerprint of the data a unit holds. In metadata-only mode no payload is stored,
/// so the tag is what read-after-write checks compare.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct DataTag(pub u16);

/// One mapping unit's entry in the OOB.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct OobSlot {
    /// The logical page stored in the unit, or `None` for padding.
    pub lpn: Option<Lpn>,
    /// The data's tag.
    pub tag: DataTag,
}

const NO_LPN: u32 = u32::MAX;

/// A page's OOB record (kept compact: it travels with every flash transaction).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Oob {
    /// Global program sequence number (0 where the store does not keep it).
    pub seq: u64,
    units: u8,
    lpns: [u32; MAX_UNITS_PER_PAGE],
    tags: [u16; MAX_UNITS_PER_PAGE],
    /// Per unit: the sequence number of the program that first wrote the data (0 = this page's
    /// own program). A copy made by GC carries its source's, so that a stale copy programmed
    /// after a newer host write can never outrank it at recovery.
    born: [u64; MAX_UNITS_PER_PAGE],
}

impl Oob {
    /// An OOB for a page of `units` mapping units, all padding.
    ///
    /// # Panics
    /// If `units` exceeds [`MAX_UNITS_PER_PAGE`].
    pub fn empty(units: u32) -> Self {
        assert!(
            units as usize <= MAX_UNITS_PER_PAGE,
            "{units} units per page is more than {MAX_UNITS_PER_PAGE}"
        );
        Oob {
            seq: 0,
            units: units as u8,
            lpns: [NO_LPN; MAX_UNITS_PER_PAGE],
            tags: [0; MAX_UNITS_PER_PAGE],
            born: [0; MAX_UNITS_PER_PAGE],
        }
    }

    /// An OOB holding `slots` (its length is the page's unit count).
    pub fn new(slots: &[OobSlot]) -> Self {
        let mut oob = Oob::empty(slots.len() as u32);
        for (i, s) in slots.iter().enumerate() {
            oob.set(i, *s);
        }
        oob
    }

    /// Number of units.
    pub fn units(&self) -> u32 {
        self.units as u32
    }

    /// Unit `i`'s entry.
    pub fn slot(&self, i: usize) -> OobSlot {
        OobSlot { lpn: self.lpn(i), tag: self.tag(i) }
    }

    /// Unit `i`'s LPN.
    pub fn lpn(&self, i: usize) -> Option<Lpn> {
        let l = self.lpns[..self.units as usize][i];
        (l != NO_LPN).then_some(Lpn(l))
    }

    /// Unit `i`'s tag.
    pub fn tag(&self, i: usize) -> DataTag {
        DataTag(self.tags[..self.units as usize][i])
    }

    /// Sets unit `i`'s entry.
    pub fn set(&mut self, i: usize, s: OobSlot) {
        self.set_lpn(i, s.lpn);
        self.set_tag(i, s.tag);
    }

    /// Sets unit `i`'s LPN.
    pub fn set_lpn(&mut self, i: usize, lpn: Option<Lpn>) {
        self.lpns[..self.units as usize][i] = lpn.map_or(NO_LPN, |l| l.0);
    }

    /// Sets unit `i`'s tag.
    pub fn set_tag(&mut self, i: usize, tag: DataTag) {
        self.tags[..self.units as usize][i] = tag.0;
    }

    /// The sequence number of the program that first wrote unit `i`'s data: the recorded one,
    /// or this page's own where none was recorded.
    pub fn born(&self, i: usize) -> u64 {
        match self.born[..self.units as usize][i] {
            0 => self.seq,
            b => b,
        }
    }

    /// Records that unit `i`'s data was first written by program `seq` (0: by this page's).
    pub fn set_born(&mut self, i: usize, seq: u64) {
        self.born[..self.units as usize][i] = seq;
    }

    /// The recorded first-write sequence numbers, in order (0 where none was recorded).
    pub fn borns(&self) -> &[u64] {
        &self.born[..self.units as usize]
    }

    /// Sets every unit's recorded first-write sequence number (one per unit).
    pub fn set_borns(&mut self, borns: &[u64]) {
        self.born[..self.units as usize].copy_from_slice(borns);
    }

    /// Every unit's entry, in order.
    pub fn slots(&self) -> impl ExactSizeIterator<Item = OobSlot> + '_ {
        (0..self.units as usize).map(|i| self.slot(i))
    }

    /// Every unit's tag, in order.
    pub fn tags(&self) -> &[u16] {
        &self.tags[..self.units as usize]
    }

    /// Sets every unit's tag from `tags` (one per unit).
    pub fn set_tags(&mut self, tags: &[u16]) {
        self.tags[..self.units as usize].copy_from_slice(tags);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_round_trip_and_stay_small() {
        let s = [OobSlot { lpn: Some(Lpn(7)), tag: DataTag(3) }, OobSlot { lpn: None, tag: DataTag(9) }];
        let oob = Oob::new(&s);
        assert_eq!(oob.slots().collect::<Vec<_>>(), s);
        assert_eq!(oob.units(), 2);
        assert!(size_of::<Oob>() <= 240, "{}", size_of::<Oob>());
    }

    #[test]
    fn a_unit_is_born_with_its_page_unless_recorded_otherwise() {
        let mut oob = Oob::empty(2);
        oob.seq = 9;
        oob.set_born(1, 4);
        assert_eq!((oob.born(0), oob.born(1)), (9, 4));
        assert_eq!(oob.borns(), &[0, 4]);
    }

    #[test]
    #[should_panic]
    fn slots_beyond_the_unit_count_are_out_of_range() {
        Oob::empty(2).slot(2);
    }
}
