//! The NAND rules: in-order programs, no reprogram without erase, whole-block erase, no use of
//! bad blocks; and the state the array keeps.

use nand::store::MetaStore;
use nand::{BlockIdx, FlashArray, Lpn, OobSlot, PageState, UnitState};

use crate::{slots, small};

fn array() -> FlashArray {
    let g = small();
    FlashArray::new(g.clone(), Box::new(MetaStore::new(&g)))
}

#[test]
fn program_read_invalidate_erase_cycle() {
    let mut a = array();
    let g = a.geometry().clone();
    let b = BlockIdx(5);
    let p0 = g.page_of(b, 0);
    assert_eq!(a.page_state(p0), PageState::Free);
    let seq0 = a.program(p0, &slots(100), None).unwrap();
    let seq1 = a.program(g.page_of(b, 1), &slots(200), None).unwrap();
    assert!(seq1 > seq0);
    assert_eq!(a.block(b).write_ptr, 2);
    assert_eq!(a.block(b).valid_units, 8);
    let oob = a.read(p0, None).unwrap();
    assert_eq!(oob.slot(2), OobSlot { lpn: Some(Lpn(102)), tag: nand::DataTag(102) });
    let u = g.unit_addr(p0, 2);
    assert_eq!(a.unit(u), UnitState::Valid(Lpn(102)));
    assert_eq!(a.invalidate(u), Lpn(102));
    assert_eq!(a.unit(u), UnitState::Invalid(Some(Lpn(102))));
    assert_eq!(a.block(b).valid_units, 7);
    for s in [0, 1, 3] {
        a.invalidate(g.unit_addr(p0, s));
    }
    assert_eq!(a.page_state(p0), PageState::Invalid);
    assert_eq!(a.page_state(g.page_of(b, 1)), PageState::Valid);
    a.erase(b).unwrap();
    assert_eq!(a.block(b).erase_count, 1);
    assert_eq!(a.block(b).write_ptr, 0);
    assert_eq!(a.block(b).valid_units, 0);
    assert_eq!(a.page_state(p0), PageState::Free);
    assert_eq!(a.unit(u), UnitState::Free);
    a.program(p0, &slots(7), None).unwrap(); // legal again after the erase
}

#[test]
fn padding_units_are_not_valid() {
    let mut a = array();
    let g = a.geometry().clone();
    let mut s = slots(0);
    s.set_lpn(3, None);
    a.program(g.page_of(BlockIdx(0), 0), &s, None).unwrap();
    assert_eq!(a.block(BlockIdx(0)).valid_units, 3);
    assert_eq!(a.unit(g.unit_addr(g.page_of(BlockIdx(0), 0), 3)), UnitState::Invalid(None));
}

#[test]
#[should_panic(
    expected = "NAND rule violated: program of ch0/w0/d0/pl0/b3/pg2 but the block's next programmable page is 0 (pages of a block must be programmed in order)"
)]
fn out_of_order_program_panics_naming_the_address() {
    let mut a = array();
    let p = a.geometry().page_of(BlockIdx(3), 2);
    a.program(p, &slots(0), None).unwrap();
}

#[test]
#[should_panic(expected = "the page is already programmed; reprogramming needs an erase of the whole block")]
fn reprogram_without_erase_panics() {
    let mut a = array();
    let p = a.geometry().page_of(BlockIdx(3), 0);
    a.program(p, &slots(0), None).unwrap();
    a.program(p, &slots(0), None).unwrap();
}

#[test]
#[should_panic(expected = "NAND rule violated: read of ch0/w0/d0/pl1/b1/pg0, which is not programmed")]
fn reading_an_erased_page_panics() {
    let mut a = array();
    let p = a.geometry().page_of(BlockIdx(9), 0);
    a.read(p, None).unwrap();
}

#[test]
#[should_panic(expected = "NAND rule violated: erase of bad block 4")]
fn erasing_a_bad_block_panics() {
    let mut a = array();
    a.mark_bad(BlockIdx(4)).unwrap();
    a.erase(BlockIdx(4)).unwrap();
}

#[test]
#[should_panic(expected = "in bad block 4")]
fn programming_a_bad_block_panics() {
    let mut a = array();
    a.mark_bad(BlockIdx(4)).unwrap();
    let p = a.geometry().page_of(BlockIdx(4), 0);
    a.program(p, &slots(0), None).unwrap();
}

#[test]
#[should_panic(expected = "invalidate of unit 1 of ch0/w0/d0/pl0/b0/pg0, which is not valid")]
fn double_invalidate_panics() {
    let mut a = array();
    let g = a.geometry().clone();
    let p = g.page_of(BlockIdx(0), 0);
    a.program(p, &slots(0), None).unwrap();
    a.invalidate(g.unit_addr(p, 1));
    a.invalidate(g.unit_addr(p, 1));
}

/// Read disturb's count: every page read of a block counts, per block, until its erase.
#[test]
fn reads_since_erase_count_per_block_and_reset_at_erase() {
    let mut a = array();
    let g = a.geometry().clone();
    let (b, other) = (BlockIdx(5), BlockIdx(6));
    let p0 = g.page_of(b, 0);
    a.program(p0, &slots(100), None).unwrap();
    a.program(g.page_of(other, 0), &slots(200), None).unwrap();
    assert_eq!(a.reads_since_erase(b), 0);
    for _ in 0..3 {
        a.read(p0, None).unwrap();
    }
    let mut data = vec![0u8; g.page_bytes() as usize];
    a.read_payload(p0, &mut data).unwrap();
    assert_eq!(a.reads_since_erase(b), 4);
    assert_eq!(a.reads_since_erase(other), 0);
    for s in 0..4 {
        a.invalidate(g.unit_addr(p0, s));
    }
    a.erase(b).unwrap();
    assert_eq!(a.reads_since_erase(b), 0);
}

#[test]
fn the_wear_sum_follows_erases_ageing_bad_blocks_and_restores() {
    let mut a = array();
    let g = a.geometry().clone();
    let total = g.total_blocks() as u64;
    assert_eq!(a.wear(), (0, total));
    a.erase(BlockIdx(1)).unwrap();
    a.erase(BlockIdx(1)).unwrap();
    a.set_erase_count(BlockIdx(2), 10).unwrap();
    a.set_erase_count(BlockIdx(2), 7).unwrap();
    assert_eq!(a.wear(), (9, total));
    a.mark_bad(BlockIdx(2)).unwrap();
    a.mark_bad(BlockIdx(2)).unwrap(); // twice: counted once
    assert_eq!(a.wear(), (2, total - 1));
    let counted = |a: &FlashArray| {
        let good = a.blocks().iter().filter(|b| !b.bad);
        good.fold((0, 0), |(s, n), b| (s + b.erase_count as u64, n + 1))
    };
    assert_eq!(a.wear(), counted(&a));
    let raw = FlashArray::from_raw(
        g.clone(),
        Box::new(MetaStore::new(&g)),
        a.blocks().to_vec(),
        a.raw_units().to_vec(),
        a.next_seq(),
    )
    .unwrap();
    assert_eq!(raw.wear(), (2, total - 1), "a restored array counts its blocks again");
}

/// Prefetches are hints: at any address, in range or not, they change nothing the array
/// answers (the simulation's results do not depend on them).
#[test]
fn prefetches_change_nothing_and_ignore_addresses_out_of_range() {
    let mut a = array();
    let g = a.geometry().clone();
    let p = g.page_of(BlockIdx(3), 0);
    a.program(p, &slots(40), None).unwrap();
    let before = (a.read(p, None).unwrap(), *a.block(BlockIdx(3)), a.reads_since_erase(BlockIdx(3)));
    let beyond = g.total_pages() as u64 * g.units_per_page() as u64;
    for page in [p, g.page_of(BlockIdx(7), 15), nand::PageIdx(g.total_pages()), nand::PageIdx(u32::MAX)] {
        a.prefetch_page(page);
    }
    for unit in [g.unit_addr(p, 1), nand::UnitAddr(beyond as u32), nand::UnitAddr(u32::MAX)] {
        a.prefetch_unit(unit);
    }
    let after = (a.read(p, None).unwrap(), *a.block(BlockIdx(3)), a.reads_since_erase(BlockIdx(3)) - 1);
    assert_eq!(before.0, after.0);
    assert_eq!(before.1, after.1);
    assert_eq!(before.2, after.2, "a prefetch is not a read: no read-disturb count");
}
