//! Typed addresses. A [`Ppa`] names a page by its place in the hierarchy; the flat indices
//! ([`PageIdx`], [`BlockIdx`], [`DieIdx`], [`UnitAddr`]) number the same things densely for
//! tables. Flat order is die-major: every block of die 0, then die 1, ...; dies are numbered
//! channel-major (`die = (channel * ways + way) * dies + d`).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::geometry::Geometry;

macro_rules! index_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub u32);

        impl $name {
            /// The index as a `usize`, for table lookups.
            pub fn idx(self) -> usize {
                self.0 as usize
            }
        }
    };
}

index_type!(
    /// Logical page number: a mapping unit of the logical address space.
    Lpn
);
index_type!(
    /// A physical page, numbered densely across the array.
    PageIdx
);
index_type!(
    /// A physical erase block, numbered densely across the array.
    BlockIdx
);
index_type!(
    /// A die, numbered channel-major across the array.
    DieIdx
);
index_type!(
    /// A physical mapping-unit slot: `page * units_per_page + slot`. The value an L2P table stores.
    UnitAddr
);

/// A physical page address.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Ppa {
    /// Channel.
    pub channel: u16,
    /// Chip on the channel.
    pub way: u16,
    /// Die in the chip.
    pub die: u8,
    /// Plane in the die.
    pub plane: u8,
    /// Block in the plane.
    pub block: u32,
    /// Page in the block.
    pub page: u32,
}

impl fmt::Display for Ppa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ch{}/w{}/d{}/pl{}/b{}/pg{}",
            self.channel, self.way, self.die, self.plane, self.block, self.page
        )
    }
}

impl Geometry {
    /// Whether every field of `ppa` is in range.
    pub fn contains(&self, ppa: Ppa) -> bool {
        (ppa.channel as u32) < self.channels
            && (ppa.way as u32) < self.ways
            && (ppa.die as u32) < self.dies
            && (ppa.plane as u32) < self.planes
            && ppa.block < self.blocks
            && ppa.page < self.pages
    }

    /// The flat index of `ppa`.
    ///
    /// # Panics
    /// If `ppa` is out of range (a firmware bug).
    pub fn page_idx(&self, ppa: Ppa) -> PageIdx {
        assert!(self.contains(ppa), "physical address {ppa} is outside the geometry");
        let die = (ppa.channel as u32 * self.ways + ppa.way as u32) * self.dies + ppa.die as u32;
        let block = (die * self.planes + ppa.plane as u32) * self.blocks + ppa.block;
        PageIdx(block * self.pages + ppa.page)
    }

    /// The hierarchical address of a flat page index.
    pub fn ppa(&self, page: PageIdx) -> Ppa {
        let mut v = page.0;
        let pg = v % self.pages;
        v /= self.pages;
        let block = v % self.blocks;
        v /= self.blocks;
        let plane = v % self.planes;
        v /= self.planes;
        let die = v % self.dies;
        v /= self.dies;
        let way = v % self.ways;
        let channel = v / self.ways;
        Ppa { channel: channel as u16, way: way as u16, die: die as u8, plane: plane as u8, block, page: pg }
    }

    /// The block holding `page`.
    pub fn block_of(&self, page: PageIdx) -> BlockIdx {
        BlockIdx(page.0 / self.pages)
    }

    /// The page's offset in its block.
    pub fn page_in_block(&self, page: PageIdx) -> u32 {
        page.0 % self.pages
    }

    /// Page `offset` of `block`.
    pub fn page_of(&self, block: BlockIdx, offset: u32) -> PageIdx {
        debug_assert!(offset < self.pages);
        PageIdx(block.0 * self.pages + offset)
    }

    /// The die holding `block`.
    pub fn die_of(&self, block: BlockIdx) -> DieIdx {
        DieIdx(block.0 / self.blocks_per_die())
    }

    /// The plane (within its die) holding `block`.
    pub fn plane_of(&self, block: BlockIdx) -> u32 {
        (block.0 / self.blocks) % self.planes
    }

    /// Block `block` of plane `plane` of `die`.
    pub fn block_idx(&self, die: DieIdx, plane: u32, block: u32) -> BlockIdx {
        debug_assert!(plane < self.planes && block < self.blocks);
        BlockIdx((die.0 * self.planes + plane) * self.blocks + block)
    }

    /// The channel `die` is on.
    pub fn channel_of(&self, die: DieIdx) -> u32 {
        die.0 / self.dies_per_channel()
    }

    /// The chip (channel * ways + way) `die` is in.
    pub fn chip_of(&self, die: DieIdx) -> u32 {
        die.0 / self.dies
    }

    /// The flat die index of the die holding `ppa`.
    pub fn die_idx(&self, ppa: Ppa) -> DieIdx {
        DieIdx((ppa.channel as u32 * self.ways + ppa.way as u32) * self.dies + ppa.die as u32)
    }

    /// Slot `slot` of `page`.
    pub fn unit_addr(&self, page: PageIdx, slot: u32) -> UnitAddr {
        debug_assert!(slot < self.units_per_page());
        UnitAddr(page.0 * self.units_per_page() + slot)
    }

    /// The page and slot of a unit address.
    pub fn unit_page(&self, unit: UnitAddr) -> (PageIdx, u32) {
        let upp = self.units_per_page();
        (PageIdx(unit.0 / upp), unit.0 % upp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::tiny;
    use proptest::prelude::*;

    fn geometries() -> impl Strategy<Value = Geometry> {
        (1u32..9, 1u32..5, 1u32..4, 1u32..5, 1u32..40, 1u32..70).prop_map(|(c, w, d, p, b, pg)| Geometry {
            channels: c,
            ways: w,
            dies: d,
            planes: p,
            blocks: b,
            pages: pg,
            ..tiny()
        })
    }

    proptest! {
        #[test]
        fn flat_index_round_trips(g in geometries(), raw in any::<u32>()) {
            let page = PageIdx(raw % g.total_pages());
            let ppa = g.ppa(page);
            prop_assert!(g.contains(ppa));
            prop_assert_eq!(g.page_idx(ppa), page);
            let block = g.block_of(page);
            prop_assert_eq!(g.page_of(block, g.page_in_block(page)), page);
            prop_assert_eq!(g.die_of(block), g.die_idx(ppa));
            prop_assert_eq!(g.plane_of(block), ppa.plane as u32);
            prop_assert_eq!(g.block_idx(g.die_of(block), ppa.plane as u32, ppa.block), block);
            prop_assert_eq!(g.channel_of(g.die_idx(ppa)), ppa.channel as u32);
        }

        #[test]
        fn hierarchical_address_round_trips(
            g in geometries(), c in any::<u16>(), w in any::<u16>(), d in any::<u8>(),
            p in any::<u8>(), b in any::<u32>(), pg in any::<u32>()
        ) {
            let ppa = Ppa {
                channel: c % g.channels as u16, way: w % g.ways as u16, die: d % g.dies as u8,
                plane: p % g.planes as u8, block: b % g.blocks, page: pg % g.pages,
            };
            prop_assert_eq!(g.ppa(g.page_idx(ppa)), ppa);
        }

        #[test]
        fn unit_addresses_round_trip(g in geometries(), raw in any::<u32>(), slot in 0u32..4) {
            let page = PageIdx(raw % g.total_pages());
            let unit = g.unit_addr(page, slot);
            prop_assert_eq!(g.unit_page(unit), (page, slot));
        }
    }

    #[test]
    #[should_panic(expected = "physical address ch9/w0/d0/pl0/b0/pg0 is outside the geometry")]
    fn out_of_range_address_is_named() {
        let ppa = Ppa { channel: 9, way: 0, die: 0, plane: 0, block: 0, page: 0 };
        tiny().page_idx(ppa);
    }
}
