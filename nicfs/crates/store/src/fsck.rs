//! Offline consistency check of the public space.

use std::collections::{HashMap, HashSet, VecDeque};

use nicfs_layout::{BLOCK_SIZE, BlockNo, Ino, Inode, PTRS_PER_BLOCK, ROOT_INO, bit_get};
use nicfs_pm::PmAddr;

use crate::index::read_ptr;
use crate::{FsError, MetaRead, Space, dir_entries, file_block_count, read_inode};

/// What fsck found.
#[derive(Clone, Debug, Default)]
pub struct FsckReport {
    /// Live inodes reached from the root.
    pub inodes: u64,
    /// Directories among them.
    pub dirs: u64,
    /// Data and index blocks in use.
    pub blocks: u64,
    /// Every inconsistency, in words.
    pub problems: Vec<String>,
}

impl FsckReport {
    /// Whether the file system is consistent.
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }
}

fn blocks_of(space: &Space, t: &Inode, out: &mut Vec<(BlockNo, u64)>) -> Result<(), FsError> {
    for (i, b) in t.direct.iter().enumerate() {
        if !b.is_none() {
            out.push((*b, i as u64));
        }
    }
    let d = t.direct.len() as u64;
    if !t.indirect.is_none() {
        out.push((t.indirect, u64::MAX));
        for i in 0..PTRS_PER_BLOCK {
            let p = read_ptr(space, t.indirect, i)?;
            if !p.is_none() {
                out.push((p, d + i));
            }
        }
    }
    if !t.dindirect.is_none() {
        out.push((t.dindirect, u64::MAX));
        for i in 0..PTRS_PER_BLOCK {
            let mid = read_ptr(space, t.dindirect, i)?;
            if mid.is_none() {
                continue;
            }
            out.push((mid, u64::MAX));
            for j in 0..PTRS_PER_BLOCK {
                let p = read_ptr(space, mid, j)?;
                if !p.is_none() {
                    out.push((p, d + PTRS_PER_BLOCK + i * PTRS_PER_BLOCK + j));
                }
            }
        }
    }
    Ok(())
}

/// Checks reachability, link counts, block ownership and both bitmaps. Never panics on a
/// corrupt image: every parse failure becomes a problem line.
pub fn fsck(space: &Space) -> FsckReport {
    let mut r = FsckReport::default();
    let geo = *space.geo();
    let mut links: HashMap<Ino, u32> = HashMap::new();
    let mut subdirs: HashMap<Ino, u32> = HashMap::new();
    let mut seen: HashSet<Ino> = HashSet::new();
    let mut owner: HashMap<BlockNo, Ino> = HashMap::new();
    let mut queue = VecDeque::from([ROOT_INO]);
    seen.insert(ROOT_INO);
    let mut inodes: HashMap<Ino, Inode> = HashMap::new();
    while let Some(ino) = queue.pop_front() {
        let t = match read_inode(space, ino) {
            Ok(t) if t.nlink > 0 => t,
            Ok(_) => {
                r.problems.push(format!("{ino} is referenced but free"));
                continue;
            }
            Err(e) => {
                r.problems.push(format!("{ino}: {e}"));
                continue;
            }
        };
        let mut blocks = Vec::new();
        if let Err(e) = blocks_of(space, &t, &mut blocks) {
            r.problems.push(format!("{ino}: {e}"));
        }
        let nfb = file_block_count(t.size);
        for (b, fb) in blocks {
            if fb != u64::MAX && fb >= nfb && !t.is_symlink() {
                r.problems.push(format!("{ino}: {b} at file block {fb} beyond size {}", t.size));
            }
            if let Some(o) = owner.insert(b, ino) {
                r.problems.push(format!("{b} owned by both {o} and {ino}"));
            }
        }
        if t.is_dir() {
            r.dirs += 1;
            match dir_entries(space, &t) {
                Ok(es) => {
                    for (_, d) in es {
                        *links.entry(d.ino).or_default() += 1;
                        if seen.insert(d.ino) {
                            queue.push_back(d.ino);
                        }
                        if let Ok(c) = read_inode(space, d.ino)
                            && c.is_dir()
                        {
                            *subdirs.entry(ino).or_default() += 1;
                            if c.parent != ino {
                                r.problems.push(format!(
                                    "directory {} has parent {} but is listed in {ino}",
                                    d.ino, c.parent
                                ));
                            }
                        }
                    }
                }
                Err(e) => r.problems.push(format!("{ino}: {e}")),
            }
        }
        inodes.insert(ino, t);
    }
    r.inodes = inodes.len() as u64;
    r.blocks = owner.len() as u64;
    for (ino, t) in &inodes {
        let expect = if t.is_dir() {
            2 + subdirs.get(ino).copied().unwrap_or(0)
        } else {
            links.get(ino).copied().unwrap_or(0)
        };
        if t.nlink != expect {
            r.problems.push(format!("{ino}: nlink {} but {expect} references", t.nlink));
        }
        if t.is_dir() && *ino != ROOT_INO && links.get(ino).copied().unwrap_or(0) != 1 {
            r.problems.push(format!("directory {ino} has {} names", links.get(ino).copied().unwrap_or(0)));
        }
    }
    let mut bits = vec![0u8; (geo.bbitmap_blocks as u64 * BLOCK_SIZE) as usize];
    space.read_meta(PmAddr(geo.bbitmap_start as u64 * BLOCK_SIZE), &mut bits);
    for i in 0..geo.data_blocks {
        let b = BlockNo(geo.data_start + i);
        let used = bit_get(&bits, i as u64);
        if used != owner.contains_key(&b) {
            r.problems.push(format!(
                "{b}: bitmap says {} but it is {}",
                if used { "used" } else { "free" },
                if used { "unreferenced" } else { "referenced" }
            ));
        }
    }
    let mut ibits = vec![0u8; (geo.ibitmap_blocks as u64 * BLOCK_SIZE) as usize];
    space.read_meta(PmAddr(geo.ibitmap_start as u64 * BLOCK_SIZE), &mut ibits);
    for i in 1..geo.inode_count {
        let ino = Ino(i);
        let used = bit_get(&ibits, i as u64);
        if used != inodes.contains_key(&ino) {
            r.problems.push(format!(
                "{ino}: bitmap says {} but it is {}",
                if used { "used" } else { "free" },
                if used { "unreachable" } else { "reachable" }
            ));
        }
    }
    r
}
