//! Offline consistency check of the public space, and the repair each problem calls for.
//!
//! [`fsck`] walks the tree from the root and reports every inconsistency in words; alongside
//! it proposes [`Fix`]es. [`repair`] applies them (offline: the caller holds the image lock).
//! One round of fixes can change what the next check finds (clearing a corrupt entry leaves
//! its inode unreachable), so callers alternate check and repair until the check is clean or
//! a round fixes nothing; bitmaps are always rebuilt last, from what is reachable.

use std::collections::{HashMap, HashSet, VecDeque};

use nicfs_layout::{
    BLOCK_SIZE, BlockNo, DIRENT_SIZE, DIRENTS_PER_BLOCK, Dirent, INODE_SIZE, Ino, Inode, PTRS_PER_BLOCK,
    ROOT_INO, bit_get, bit_set,
};
use nicfs_pm::{Pm, PmAddr};

use crate::index::{Slot, read_ptr, slot_of};
use crate::{FsError, MetaRead, Space, bmap, file_block_count, read_inode};

/// A change that repairs one reported problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fix {
    /// Clear the directory entry at this slot (corrupt, or naming a corrupt or free inode, or
    /// a second name of a directory).
    ClearEntry(PmAddr),
    /// Free the inode: zero its slot (its blocks go back with the bitmap rebuild).
    FreeInode(Ino),
    /// Set the link count.
    SetNlink(Ino, u32),
    /// Set a directory's parent to the directory that lists it.
    SetParent(Ino, Ino),
    /// Unmap file block `.1` of inode `.0` (a block past the size, or owned twice).
    Unmap(Ino, u64),
    /// Rewrite both bitmaps from the reachable inodes and the blocks they own.
    RebuildBitmaps,
}

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
    /// The fixes that repair them (fewer than the problems when some cannot be repaired).
    pub fixes: Vec<Fix>,
    /// Problems no fix is known for.
    pub unrepairable: usize,
}

impl FsckReport {
    /// Whether the file system is consistent.
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }

    fn problem(&mut self, text: String, fixes: impl IntoIterator<Item = Fix>) {
        self.problems.push(text);
        let before = self.fixes.len();
        self.fixes.extend(fixes);
        if self.fixes.len() == before {
            self.unrepairable += 1;
        }
    }
}

/// Every block `t` points to: (block, file block), with `u64::MAX` for index blocks.
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

/// A directory's slots, one by one: `Ok` entries (in-range inode numbers) and corrupt slots.
fn dir_slots(space: &Space, dir: &Inode) -> Result<Vec<(PmAddr, Result<Dirent, String>)>, FsError> {
    let mut out = Vec::new();
    let mut block = vec![0u8; BLOCK_SIZE as usize];
    for fb in 0..file_block_count(dir.size) {
        let Some(b) = bmap(space, dir, fb)? else { continue };
        space.read_meta(PmAddr(b.byte_offset()), &mut block);
        for s in 0..DIRENTS_PER_BLOCK {
            let at = PmAddr(b.byte_offset() + (s * DIRENT_SIZE) as u64);
            match Dirent::decode(&block[s * DIRENT_SIZE..(s + 1) * DIRENT_SIZE]) {
                Ok(None) => {}
                Ok(Some(d)) if !space.geo().is_valid_ino(d.ino) => {
                    out.push((at, Err(format!("inode {} out of range", d.ino.0))));
                }
                Ok(Some(d)) => out.push((at, Ok(d))),
                Err(e) => out.push((at, Err(e.to_string()))),
            }
        }
    }
    Ok(out)
}

/// Checks reachability, link counts, block ownership and both bitmaps, and proposes fixes.
/// Never panics on a corrupt image: every parse failure becomes a problem line.
pub fn fsck(space: &Space) -> FsckReport {
    let mut r = FsckReport::default();
    let geo = *space.geo();
    // Directory-entry slots naming each inode, in the order found.
    let mut refs: HashMap<Ino, Vec<PmAddr>> = HashMap::new();
    let mut subdirs: HashMap<Ino, u32> = HashMap::new();
    let mut seen: HashSet<Ino> = HashSet::from([ROOT_INO]);
    let mut owner: HashMap<BlockNo, Ino> = HashMap::new();
    let mut queue = VecDeque::from([ROOT_INO]);
    let mut inodes: HashMap<Ino, Inode> = HashMap::new();
    let clear_refs = |refs: &HashMap<Ino, Vec<PmAddr>>, ino: Ino| {
        refs.get(&ino).into_iter().flatten().map(|s| Fix::ClearEntry(*s)).collect::<Vec<_>>()
    };
    while let Some(ino) = queue.pop_front() {
        let t = match read_inode(space, ino) {
            Ok(t) if t.nlink > 0 => t,
            Ok(_) => {
                r.problem(format!("{ino} is referenced but free"), clear_refs(&refs, ino));
                continue;
            }
            Err(e) => {
                let mut fixes = clear_refs(&refs, ino);
                if !fixes.is_empty() {
                    fixes.push(Fix::FreeInode(ino));
                }
                r.problem(format!("{ino}: {e}"), fixes);
                continue;
            }
        };
        let mut blocks = Vec::new();
        if let Err(e) = blocks_of(space, &t, &mut blocks) {
            let mut fixes = clear_refs(&refs, ino);
            if !fixes.is_empty() {
                fixes.push(Fix::FreeInode(ino));
            }
            r.problem(format!("{ino}: {e}"), fixes);
            continue;
        }
        let nfb = file_block_count(t.size);
        for (b, fb) in blocks {
            if fb != u64::MAX && fb >= nfb && !t.is_symlink() {
                r.problem(
                    format!("{ino}: {b} at file block {fb} beyond size {}", t.size),
                    [Fix::Unmap(ino, fb)],
                );
                continue;
            }
            if let Some(o) = owner.get(&b) {
                // Data blocks lose their second owner (who reads zeroes there); shared index
                // blocks have no safe repair.
                let fix = (fb != u64::MAX).then_some(Fix::Unmap(ino, fb));
                r.problem(format!("{b} owned by both {o} and {ino}"), fix);
                continue;
            }
            owner.insert(b, ino);
        }
        if t.is_dir() {
            r.dirs += 1;
            match dir_slots(space, &t) {
                Ok(slots) => {
                    for (slot, entry) in slots {
                        let d = match entry {
                            Ok(d) => d,
                            Err(e) => {
                                r.problem(
                                    format!("directory {ino}, entry at {slot}: {e}"),
                                    [Fix::ClearEntry(slot)],
                                );
                                continue;
                            }
                        };
                        refs.entry(d.ino).or_default().push(slot);
                        if seen.insert(d.ino) {
                            queue.push_back(d.ino);
                        }
                        if let Ok(c) = read_inode(space, d.ino)
                            && c.is_dir()
                            && c.nlink > 0
                        {
                            *subdirs.entry(ino).or_default() += 1;
                            if c.parent != ino && refs[&d.ino].len() == 1 {
                                r.problem(
                                    format!(
                                        "directory {} has parent {} but is listed in {ino}",
                                        d.ino, c.parent
                                    ),
                                    [Fix::SetParent(d.ino, ino)],
                                );
                            }
                        }
                    }
                }
                Err(e) => r.problem(format!("{ino}: {e}"), []),
            }
        }
        inodes.insert(ino, t);
    }
    r.inodes = inodes.len() as u64;
    r.blocks = owner.len() as u64;
    let mut sorted: Vec<_> = inodes.iter().collect();
    sorted.sort_by_key(|(i, _)| **i);
    for (ino, t) in sorted {
        let names = refs.get(ino).map_or(0, |v| v.len() as u32);
        if t.is_dir() && *ino != ROOT_INO && names != 1 {
            // Keep the first name; drop the others (their counts follow in the next round).
            let extra = refs[ino][1..].iter().map(|s| Fix::ClearEntry(*s));
            r.problem(format!("directory {ino} has {names} names"), extra);
            continue;
        }
        let expect = if t.is_dir() { 2 + subdirs.get(ino).copied().unwrap_or(0) } else { names };
        if t.nlink != expect {
            r.problem(
                format!("{ino}: nlink {} but {expect} references", t.nlink),
                [Fix::SetNlink(*ino, expect)],
            );
        }
    }
    let bitmaps_before = r.problems.len();
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
    if r.problems.len() > bitmaps_before {
        r.fixes.push(Fix::RebuildBitmaps);
    }
    r
}

fn store_inode(pm: &dyn Pm, space: &Space, ino: Ino, t: &Inode) {
    let at = Space::inode_addr(space.geo(), ino);
    pm.store(at, &t.encode());
    pm.flush(at, INODE_SIZE as u64);
}

/// Clears the pointer to file block `fb` of `ino` (in the inode or its index block).
fn unmap(pm: &dyn Pm, space: &Space, ino: Ino, fb: u64) -> Result<(), FsError> {
    let mut t = read_inode(space, ino)?;
    let ptr_at = |b: BlockNo, i: u64| PmAddr(b.byte_offset() + i * 4);
    let at = match slot_of(fb)? {
        Slot::Direct(i) => {
            t.direct[i] = BlockNo(0);
            store_inode(pm, space, ino, &t);
            return Ok(());
        }
        Slot::Indirect(i) => ptr_at(t.indirect, i),
        Slot::Double(i, j) => ptr_at(read_ptr(space, t.dindirect, i)?, j),
    };
    pm.store(at, &[0u8; 4]);
    pm.flush(at, 4);
    Ok(())
}

/// Writes both bitmaps from what a fresh walk reaches.
fn rebuild_bitmaps(pm: &dyn Pm, space: &Space) -> Result<(), FsError> {
    let geo = *space.geo();
    let mut bits = vec![0u8; (geo.bbitmap_blocks as u64 * BLOCK_SIZE) as usize];
    let mut ibits = vec![0u8; (geo.ibitmap_blocks as u64 * BLOCK_SIZE) as usize];
    bit_set(&mut ibits, 0, true);
    let mut queue = VecDeque::from([ROOT_INO]);
    let mut seen = HashSet::from([ROOT_INO]);
    while let Some(ino) = queue.pop_front() {
        let Ok(t) = read_inode(space, ino) else { continue };
        if t.nlink == 0 {
            continue;
        }
        bit_set(&mut ibits, ino.0 as u64, true);
        let mut blocks = Vec::new();
        blocks_of(space, &t, &mut blocks)?;
        for (b, _) in blocks {
            if geo.is_data_block(b) {
                bit_set(&mut bits, (b.0 - geo.data_start) as u64, true);
            }
        }
        if t.is_dir() {
            for (_, d) in dir_slots(space, &t)? {
                if let Ok(d) = d
                    && seen.insert(d.ino)
                {
                    queue.push_back(d.ino);
                }
            }
        }
    }
    for (start, buf) in [(geo.bbitmap_start, &bits), (geo.ibitmap_start, &ibits)] {
        let at = PmAddr(start as u64 * BLOCK_SIZE);
        pm.store(at, buf);
        pm.flush(at, buf.len() as u64);
    }
    Ok(())
}

/// Applies `fixes` to the space, bitmaps last, then fences. Offline only: nothing else may use
/// the image (the edits bypass the journal; a crash in the middle leaves work for the next
/// run). Returns how many fixes were applied.
pub fn repair(space: &Space, fixes: &[Fix]) -> Result<usize, FsError> {
    let pm = space.pm().as_ref();
    let mut done = 0;
    for f in fixes {
        match *f {
            Fix::ClearEntry(slot) => {
                pm.store(slot, &[0u8; 8]);
                pm.flush(slot, 8);
            }
            Fix::FreeInode(ino) => {
                let at = Space::inode_addr(space.geo(), ino);
                pm.store(at, &[0u8; INODE_SIZE]);
                pm.flush(at, INODE_SIZE as u64);
            }
            Fix::SetNlink(ino, n) => {
                let mut t = read_inode(space, ino)?;
                t.nlink = n;
                store_inode(pm, space, ino, &t);
            }
            Fix::SetParent(ino, parent) => {
                let mut t = read_inode(space, ino)?;
                t.parent = parent;
                store_inode(pm, space, ino, &t);
            }
            Fix::Unmap(ino, fb) => unmap(pm, space, ino, fb)?,
            Fix::RebuildBitmaps => continue,
        }
        done += 1;
    }
    if fixes.contains(&Fix::RebuildBitmaps) {
        rebuild_bitmaps(pm, space)?;
        done += 1;
    }
    pm.fence();
    Ok(done)
}
