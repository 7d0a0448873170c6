//! What a page's spare (OOB) area records: the LPN of each mapping unit packed in the page, a
//! data tag per unit, and the program sequence number that orders copies during recovery.

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

/// A page's OOB record.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Oob {
    /// Global program sequence number (0 where the store does not keep it).
    pub seq: u64,
    units: u8,
    slots: [OobSlot; MAX_UNITS_PER_PAGE],
}

impl Oob {
    /// An OOB for a page of `units` mapping units, all padding.
    pub fn empty(units: u32) -> Self {
        assert!(
            units as usize <= MAX_UNITS_PER_PAGE,
            "{units} units per page is more than {MAX_UNITS_PER_PAGE}"
        );
        Oob {
            seq: 0,
            units: units as u8,
            slots: [OobSlot::default(); MAX_UNITS_PER_PAGE],
        }
    }

    /// An OOB holding `slots` (its length is the page's unit count).
    pub fn new(slots: &[OobSlot]) -> Self {
        let mut oob = Oob::empty(slots.len() as u32);
        oob.slots[..slots.len()].copy_from_slice(slots);
        oob
    }

    /// The unit entries.
    pub fn slots(&self) -> &[OobSlot] {
        &self.slots[..self.units as usize]
    }

    /// The unit entries, mutably.
    pub fn slots_mut(&mut self) -> &mut [OobSlot] {
        &mut self.slots[..self.units as usize]
    }

    /// Number of units.
    pub fn units(&self) -> u32 {
        self.units as u32
    }
}
