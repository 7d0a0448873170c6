//! Bad input: corrupt images are detected and reported, never followed into a crash.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use nicfs::crashcheck::populated_image as populated;
use nicfs::model::read_tree;
use nicfs::rng::Rng;
use nicfs_backend::{BackendConfig, open};
use nicfs_comm::CommRegion;
use nicfs_layout::BLOCK_SIZE;
use nicfs_pm::{CrashPm, Pm, PmAddr, SharedPm};
use nicfs_store::{FsError, Space, fsck};

/// Recovery + fsck + tree walk on an image; returns the recovery outcome.
fn recover(img: Vec<u8>) -> Result<(), String> {
    let pm: SharedPm = Arc::new(CrashPm::from_image(img));
    let comm = Arc::new(CommRegion::anonymous().unwrap());
    let (_, rep) = open(pm.clone(), comm, BackendConfig::free()).map_err(|e| e.to_string())?;
    let space = Space::open(pm).map_err(|e| e.to_string())?;
    let f = fsck(&space);
    let tree = read_tree(&space);
    if !rep.errors.is_empty() {
        return Err(rep.errors.join("; "));
    }
    if rep.rejected > 0 {
        return Err(format!("{} records rejected", rep.rejected));
    }
    if !f.is_clean() {
        return Err(format!("fsck: {}", f.problems.join("; ")));
    }
    tree.map(|_| ()).map_err(|e| e.to_string())
}

#[test]
fn clean_image_recovers() {
    let (img, _) = populated();
    recover(img).unwrap();
}

#[test]
fn corrupt_primary_superblock_falls_back_to_backup_and_both_corrupt_is_an_error() {
    let (mut img, _) = populated();
    img[20] ^= 0xff;
    recover(img.clone()).unwrap();
    img[BLOCK_SIZE as usize + 20] ^= 0xff;
    let pm: SharedPm = Arc::new(CrashPm::from_image(img));
    assert!(matches!(Space::open(pm), Err(FsError::Layout(_))));
}

#[test]
fn corrupt_log_header_is_reported_and_the_log_quarantined() {
    let (mut img, geo) = populated();
    let ls = geo.log_space(0);
    let pm = CrashPm::from_image(img.clone());
    let log = nicfs_store::LogSpace { index: 0, geo: ls };
    let (head, tail) = (log.head(&pm), log.tail(&pm));
    assert!(tail > head, "the image must hold pending records");
    let at = (ls.headers_start.byte_offset() + (head % ls.headers as u64) * 64 + 30) as usize;
    img[at] ^= 0x40;
    let err = recover(img).unwrap_err();
    assert!(err.contains("checksum"), "{err}");
}

#[test]
fn corrupt_log_payload_is_reported() {
    let (mut img, geo) = populated();
    let ls = geo.log_space(0);
    let pm = CrashPm::from_image(img.clone());
    let head = nicfs_store::LogSpace { index: 0, geo: ls }.head(&pm);
    let mut h = [0u8; 64];
    pm.read(PmAddr(ls.headers_start.byte_offset() + (head % ls.headers as u64) * 64), &mut h);
    let hdr = nicfs_layout::LogHeader::decode(&h).unwrap();
    let at = (ls.data_start.byte_offset() + hdr.data_pos % ls.data_bytes) as usize;
    img[at] ^= 1;
    let err = recover(img).unwrap_err();
    assert!(err.contains("payload checksum"), "{err}");
}

/// Regression (issue 18): directory entries had no checksum; a flipped bit renamed `paced3`
/// to `pabed3` and fsck found 0 problems.
#[test]
fn regression_issue_18_a_flipped_bit_in_a_file_name_is_a_problem() {
    let (mut img, _) = populated();
    let pm: SharedPm = Arc::new(CrashPm::from_image(img.clone()));
    let space = Space::open(pm).unwrap();
    let root = nicfs_store::read_inode(&space, nicfs_layout::ROOT_INO).unwrap();
    let (slot, d) = nicfs_store::dir_entries(&space, &root)
        .unwrap()
        .into_iter()
        .find(|(_, d)| d.name == b"d")
        .expect("/d exists");
    assert_eq!(d.name, b"d");
    // The name starts 12 bytes into the slot; 'd' ^ 0x02 = 'f', still a valid name.
    img[slot.get() as usize + 12] ^= 0x02;
    let space = Space::open(Arc::new(CrashPm::from_image(img))).unwrap();
    let f = fsck(&space);
    assert!(!f.is_clean(), "a renamed entry went unnoticed");
    assert!(f.problems.iter().any(|p| p.contains("checksum")), "{:?}", f.problems);
}

#[test]
fn random_corruption_never_panics() {
    let (img, geo) = populated();
    let regions: Vec<(u64, u64)> = vec![
        (0, 2 * BLOCK_SIZE),
        (geo.journal_start as u64 * BLOCK_SIZE, 2 * BLOCK_SIZE),
        (geo.ibitmap_start as u64 * BLOCK_SIZE, (geo.data_start - geo.ibitmap_start) as u64 * BLOCK_SIZE),
        (geo.data_start as u64 * BLOCK_SIZE, 16 * BLOCK_SIZE),
        (geo.log_start as u64 * BLOCK_SIZE, (geo.log_space_blocks as u64) * BLOCK_SIZE),
    ];
    let mut reported = 0;
    for seed in 0..400u64 {
        let mut rng = Rng::new(seed);
        let mut bad = img.clone();
        for _ in 0..1 + rng.below(8) {
            let (start, len) = *rng.pick(&regions).unwrap();
            let at = (start + rng.below(len)) as usize;
            bad[at] = rng.next_u64() as u8;
        }
        let r = catch_unwind(AssertUnwindSafe(|| recover(bad)));
        match r {
            Ok(Ok(())) => {}
            Ok(Err(_)) => reported += 1,
            Err(_) => panic!("seed {seed}: recovery panicked on a corrupt image"),
        }
    }
    println!("random corruption: 400 images, {reported} reported as corrupt, 0 panics");
}
