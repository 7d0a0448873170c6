//! Integration tests of the NAND model: rules, page stores, memory footprint.

mod footprint;
mod rules;
mod stores;

use nand::{Geometry, OobSlot};
use sim::ByteSize;

/// 2 ch x 2 ways x 2 dies x 2 planes x 8 blocks x 16 pages of 16 KiB, 4 KiB units.
pub fn small() -> Geometry {
    Geometry {
        channels: 2,
        ways: 2,
        dies: 2,
        planes: 2,
        blocks: 8,
        pages: 16,
        page_size: ByteSize::kib(16),
        oob_size: ByteSize(1872),
        mapping_unit: ByteSize::kib(4),
    }
}

/// An OOB holding LPNs `first..first+4` with tags equal to the LPN.
pub fn slots(first: u32) -> nand::Oob {
    let s: Vec<OobSlot> = (first..first + 4)
        .map(|l| OobSlot { lpn: Some(nand::Lpn(l)), tag: nand::DataTag(l as u16) })
        .collect();
    nand::Oob::new(&s)
}
