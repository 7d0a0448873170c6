//! Formatting a PM namespace.

use nicfs_layout::{BLOCK_SIZE, FormatConfig, Geometry, Inode, LogSuper, ROOT_INO, bit_set, mode};
use nicfs_pm::{Pm, PmAddr};

use crate::{FsError, Space};

fn zero(pm: &dyn Pm, start_block: u32, blocks: u32) {
    let chunk = vec![0u8; 64 * BLOCK_SIZE as usize];
    let mut b = start_block as u64;
    let end = start_block as u64 + blocks as u64;
    while b < end {
        let n = (end - b).min(64);
        let bytes = &chunk[..(n * BLOCK_SIZE) as usize];
        pm.store(PmAddr(b * BLOCK_SIZE), bytes);
        pm.flush(PmAddr(b * BLOCK_SIZE), bytes.len() as u64);
        b += n;
    }
}

/// Formats `pm` per `cfg`: zeroed metadata, an empty root directory, empty logs, and the
/// superblocks last (an interrupted mkfs leaves no mountable file system behind).
pub fn mkfs(pm: &dyn Pm, cfg: &FormatConfig, uuid: u64) -> Result<Geometry, FsError> {
    let geo = Geometry::compute(cfg)?;
    if pm.len() < cfg.size_bytes {
        return Err(FsError::Invalid("PM namespace smaller than size_bytes"));
    }
    zero(pm, 0, 2);
    pm.fence();
    zero(pm, geo.journal_start, 1);
    crate::journal::write_empty_journal(pm, &geo, 0);
    zero(pm, geo.ibitmap_start, geo.ibitmap_blocks + geo.bbitmap_blocks + geo.itable_blocks);
    let mut ibits = [0u8; 1];
    bit_set(&mut ibits, 0, true);
    bit_set(&mut ibits, ROOT_INO.0 as u64, true);
    pm.persist(PmAddr(geo.ibitmap_start as u64 * BLOCK_SIZE), &ibits);
    let t = crate::now_ns();
    let root = Inode {
        mode: mode::S_IFDIR | 0o755,
        nlink: 2,
        atime: t,
        mtime: t,
        ctime: t,
        parent: ROOT_INO,
        ..Inode::default()
    };
    pm.persist(Space::inode_addr(&geo, ROOT_INO), &root.encode());
    for i in 0..geo.log_spaces {
        let ls = geo.log_space(i);
        zero(pm, ls.super_block.0, 1);
        let s = LogSuper { index: i, headers: ls.headers, data_bytes: ls.data_bytes };
        pm.persist(PmAddr(ls.super_block.byte_offset()), &s.encode());
        let log = crate::LogSpace { index: i, geo: ls };
        pm.persist(log.head_addr(), &log.head_words(0));
        pm.persist(log.tail_addr(), &log.tail_word(0).to_le_bytes());
    }
    pm.fence();
    let sb = geo.encode_superblock(uuid);
    pm.persist(PmAddr(0), &sb);
    pm.persist(PmAddr(BLOCK_SIZE), &sb);
    pm.fence();
    Ok(geo)
}
