//! Page stores keep what was written; the image store survives close and reopen.

use nand::store::{ImageError, ImageStore, MemoryStore, MetaStore};
use nand::{BlockIdx, FlashArray, Lpn, PageIdx, UnitState};

use crate::{slots, small};

fn pattern(seed: u8, len: usize) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

fn exercise(mut a: FlashArray) -> FlashArray {
    let g = a.geometry().clone();
    let n = g.page_bytes() as usize;
    a.program(g.page_of(BlockIdx(1), 0), &slots(10), Some(&pattern(1, n))).unwrap();
    a.program(g.page_of(BlockIdx(1), 1), &slots(20), Some(&pattern(2, n))).unwrap();
    a.program(g.page_of(BlockIdx(2), 0), &slots(30), Some(&pattern(3, n))).unwrap();
    a.erase(BlockIdx(2)).unwrap();
    a.program(g.page_of(BlockIdx(2), 0), &slots(40), Some(&pattern(4, n))).unwrap();
    a.mark_bad(BlockIdx(7)).unwrap();
    a
}

fn check_payloads(a: &mut FlashArray) {
    let g = a.geometry().clone();
    let n = g.page_bytes() as usize;
    let mut buf = vec![0u8; n];
    for (block, page, seed, lpn) in [(1, 0, 1, 10), (1, 1, 2, 20), (2, 0, 4, 40)] {
        let oob = a.read(g.page_of(BlockIdx(block), page), Some(&mut buf)).unwrap();
        assert_eq!(buf, pattern(seed, n), "payload of block {block} page {page}");
        assert_eq!(oob.lpn(0), Some(Lpn(lpn)));
        assert_eq!(oob.tag(3).0, lpn as u16 + 3);
        // The payload alone: the same bytes, the LPNs, and none of the store's OOB fields.
        buf.fill(0);
        let bare = a.read_payload(g.page_of(BlockIdx(block), page), &mut buf).unwrap();
        assert_eq!(buf, pattern(seed, n), "payload alone of block {block} page {page}");
        assert_eq!((bare.lpn(0), bare.tag(3).0, bare.seq), (Some(Lpn(lpn)), 0, 0));
    }
}

#[test]
fn memory_store_keeps_payloads_and_forgets_erased_ones() {
    let g = small();
    let mut a = exercise(FlashArray::new(g.clone(), Box::new(MemoryStore::new(&g))));
    check_payloads(&mut a);
    let before = a.resident_bytes();
    a.erase(BlockIdx(1)).unwrap();
    assert!(a.resident_bytes() < before);
}

#[test]
fn meta_store_keeps_tags_only() {
    let g = small();
    let mut a = FlashArray::new(g.clone(), Box::new(MetaStore::new(&g)));
    a.program(PageIdx(0), &slots(500), Some(&pattern(9, g.page_bytes() as usize))).unwrap();
    let mut buf = vec![1u8; g.page_bytes() as usize];
    let oob = a.read(PageIdx(0), Some(&mut buf)).unwrap();
    assert!(buf.iter().all(|&b| b == 0), "metadata-only reads carry no payload");
    buf.fill(1);
    a.read_payload(PageIdx(0), &mut buf).unwrap();
    assert!(buf.iter().all(|&b| b == 0), "metadata-only payload reads are zeroes");
    assert_eq!(oob.tag(1).0, 501);
    assert_eq!(oob.seq, 0, "the metadata store does not keep sequence numbers");
}

#[test]
fn image_survives_close_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dev.ssdimg");
    let g = small();
    let store = ImageStore::create(&path, &g, 8192).unwrap();
    store.write_aux(100, b"checkpoint").unwrap();
    let a = exercise(FlashArray::new(g.clone(), Box::new(store)));
    drop(a);

    let scanned = ImageStore::open(&path, &g).unwrap();
    let mut aux = [0u8; 10];
    scanned.store.read_aux(100, &mut aux).unwrap();
    assert_eq!(&aux, b"checkpoint");
    let mut a = scanned.into_array(g.clone());
    check_payloads(&mut a);
    assert_eq!(a.block(BlockIdx(1)).write_ptr, 2);
    assert_eq!(a.block(BlockIdx(2)).write_ptr, 1);
    assert_eq!(a.block(BlockIdx(2)).erase_count, 1);
    assert!(a.block(BlockIdx(7)).bad);
    // The erased copy (LPN 30) is gone; the reprogrammed page (LPN 40) is back, valid.
    assert_eq!(a.unit(g.unit_addr(g.page_of(BlockIdx(2), 0), 0)), UnitState::Valid(Lpn(40)));
    // Sequence numbers come back from the OOB and keep increasing after reopen.
    let oob = a.read(g.page_of(BlockIdx(2), 0), None).unwrap();
    assert!(oob.seq >= 4, "{}", oob.seq);
    assert!(a.next_seq() > oob.seq);
    let s = a.program(g.page_of(BlockIdx(1), 2), &slots(50), None).unwrap();
    assert!(s > oob.seq);
}

#[test]
fn image_rejects_another_geometry_and_garbage() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dev.ssdimg");
    let g = small();
    drop(ImageStore::create(&path, &g, 0).unwrap());
    let other = nand::Geometry { channels: 4, ..g.clone() };
    let err = ImageStore::open(&path, &other).err().unwrap();
    assert!(matches!(err, ImageError::GeometryMismatch { .. }));
    assert!(err.to_string().contains("channels: image has 2, configuration has 4"), "{err}");

    let junk = dir.path().join("junk");
    std::fs::write(&junk, vec![7u8; 10_000]).unwrap();
    let err = ImageStore::open(&junk, &g).err().unwrap().to_string();
    assert!(err.ends_with("not a usable ssdlab NAND image: bad magic number"), "{err}");

    let short = dir.path().join("short");
    std::fs::write(&short, b"SSDLAB").unwrap();
    let err = ImageStore::open(&short, &g).err().unwrap().to_string();
    assert!(err.contains("shorter than a superblock"), "{err}");

    // A flipped byte in the superblock is caught by its checksum.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[40] ^= 0x55;
    let flipped = dir.path().join("flipped");
    std::fs::write(&flipped, &bytes).unwrap();
    let err = ImageStore::open(&flipped, &g).err().unwrap().to_string();
    assert!(err.contains("superblock checksum mismatch"), "{err}");
}

#[test]
fn a_restored_image_keeps_only_the_newest_copy_of_each_lpn() {
    // LPNs 10..14 written twice without the first copies being invalidated on the media (a
    // crash before the FTL's state was saved): the copy with the higher sequence number wins.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nand.img");
    let g = small();
    {
        let mut a = FlashArray::new(g.clone(), Box::new(ImageStore::create(&path, &g, 0).unwrap()));
        a.program(g.page_of(BlockIdx(3), 0), &slots(10), None).unwrap();
        a.program(g.page_of(BlockIdx(1), 0), &slots(20), None).unwrap();
        a.program(g.page_of(BlockIdx(1), 1), &slots(10), None).unwrap();
        a.sync().unwrap();
    }
    let a = ImageStore::open(&path, &g).unwrap().into_array(g.clone());
    let old = g.page_of(BlockIdx(3), 0);
    let new = g.page_of(BlockIdx(1), 1);
    for s in 0..4 {
        assert_eq!(a.unit(g.unit_addr(old, s)), UnitState::Invalid(Some(Lpn(10 + s))));
        assert_eq!(a.unit(g.unit_addr(new, s)), UnitState::Valid(Lpn(10 + s)));
    }
    assert_eq!(a.block(BlockIdx(3)).valid_units, 0);
    assert_eq!(a.block(BlockIdx(1)).valid_units, 8);
}

#[test]
fn a_late_gc_copy_of_old_data_does_not_outrank_a_newer_write() {
    // LPNs 10..14: first written in block 3 (seq 1), rewritten by the host in block 1 (seq 2);
    // then GC, which had read the old copies before the rewrite was mapped, programs them into
    // block 2 (seq 3) carrying their first-write number. Recovery must keep the host's write.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nand.img");
    let g = small();
    {
        let mut a = FlashArray::new(g.clone(), Box::new(ImageStore::create(&path, &g, 0).unwrap()));
        let first = a.program(g.page_of(BlockIdx(3), 0), &slots(10), None).unwrap();
        a.program(g.page_of(BlockIdx(1), 0), &slots(10), None).unwrap();
        let mut copy = slots(10);
        for s in 0..4 {
            copy.set_born(s, first);
        }
        a.program(g.page_of(BlockIdx(2), 0), &copy, None).unwrap();
        a.sync().unwrap();
    }
    let a = ImageStore::open(&path, &g).unwrap().into_array(g.clone());
    for s in 0..4 {
        assert_eq!(a.unit(g.unit_addr(g.page_of(BlockIdx(1), 0), s)), UnitState::Valid(Lpn(10 + s)));
        assert_eq!(a.unit(g.unit_addr(g.page_of(BlockIdx(2), 0), s)), UnitState::Invalid(Some(Lpn(10 + s))));
    }
    assert_eq!((a.block(BlockIdx(1)).valid_units, a.block(BlockIdx(2)).valid_units), (4, 0));
}

#[test]
fn raw_state_round_trips_and_inconsistent_state_is_refused() {
    let g = small();
    let a = exercise(FlashArray::new(g.clone(), Box::new(MetaStore::new(&g))));
    let (blocks, units) = (a.blocks().to_vec(), a.raw_units().to_vec());
    let b = FlashArray::from_raw(
        g.clone(),
        Box::new(MetaStore::new(&g)),
        blocks.clone(),
        units.clone(),
        a.next_seq(),
    )
    .unwrap();
    assert_eq!((b.blocks(), b.raw_units(), b.next_seq()), (a.blocks(), a.raw_units(), a.next_seq()));
    // A valid count that does not match the units.
    let mut bad = blocks.clone();
    bad[1].valid_units += 1;
    let e =
        FlashArray::from_raw(g.clone(), Box::new(MetaStore::new(&g)), bad, units.clone(), 1).err().unwrap();
    assert!(e.contains("block 1"), "{e}");
    // Units above a write pointer.
    let mut bad = blocks.clone();
    bad[1].write_ptr = 1;
    let e =
        FlashArray::from_raw(g.clone(), Box::new(MetaStore::new(&g)), bad, units.clone(), 1).err().unwrap();
    assert!(e.contains("above the write pointer"), "{e}");
    // The wrong size.
    let e = FlashArray::from_raw(g.clone(), Box::new(MetaStore::new(&g)), blocks, units[1..].to_vec(), 1)
        .err()
        .unwrap();
    assert!(e.contains("units"), "{e}");
}
