//! Whole-image recovery: byte patches applied to a small valid image (with pending log
//! records) must lead to a recovered image or reported errors, never a panic.
#![no_main]
use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use nicfs_layout::{FormatConfig, ROOT_INO, mode};
use nicfs_pm::{CrashPm, SharedPm};

fn base() -> &'static Vec<u8> {
    static IMG: OnceLock<Vec<u8>> = OnceLock::new();
    IMG.get_or_init(|| {
        let fmt = FormatConfig { size_bytes: 1 << 20, inodes: 64, log_spaces: 1, log_headers: 64, log_data_bytes: 64 << 10, journal_blocks: 8 };
        let pm = Arc::new(CrashPm::new(fmt.size_bytes));
        nicfs_store::mkfs(pm.as_ref(), &fmt, 1).unwrap();
        let space = nicfs_store::Space::open(pm.clone() as SharedPm).unwrap();
        let mut eng = nicfs_store::Engine::new(space, Arc::new(nicfs_store::LineCache::new(64))).unwrap();
        for n in 0..4u8 {
            let ino = eng.alloc_mut().reserve_inode().unwrap();
            let mut t = eng.begin();
            let m = if n % 2 == 0 { mode::S_IFDIR | 0o755 } else { mode::S_IFREG | 0o644 };
            t.op_create(ROOT_INO, ino, m, 0, 0, 0, &[b'a' + n], b"", 1).unwrap();
            t.commit().unwrap();
        }
        pm.live_image()
    })
}

fuzz_target!(|data: &[u8]| {
    let mut img = base().clone();
    for patch in data.chunks(5) {
        if patch.len() == 5 {
            let at = u32::from_le_bytes(patch[..4].try_into().unwrap()) as usize % img.len();
            img[at] = patch[4];
        }
    }
    let pm: SharedPm = Arc::new(CrashPm::from_image(img));
    let comm = Arc::new(nicfs_comm::CommRegion::anonymous().unwrap());
    if nicfs_backend::open(pm.clone(), comm, nicfs_backend::BackendConfig::free()).is_ok() {
        if let Ok(space) = nicfs_store::Space::open(pm.clone()) {
            let _ = nicfs_store::fsck(&space);
        }
    }

});
