//! Directories: files whose blocks hold fixed-size entry slots.

use nicfs_layout::{BLOCK_SIZE, DIRENT_SIZE, DIRENTS_PER_BLOCK, Dirent, FileType, Ino, Inode};
use nicfs_pm::PmAddr;

use crate::{FsError, MetaRead, Txn, bmap, file_block_count};

/// Every used entry of directory `dir`, with the PM address of its slot.
pub fn dir_entries<R: MetaRead + ?Sized>(r: &R, dir: &Inode) -> Result<Vec<(PmAddr, Dirent)>, FsError> {
    let mut out = Vec::new();
    scan(r, dir, |addr, d| {
        out.push((addr, d));
        false
    })?;
    Ok(out)
}

/// Looks `name` up in directory `dir`.
pub fn dir_lookup<R: MetaRead + ?Sized>(
    r: &R,
    dir: &Inode,
    name: &[u8],
) -> Result<Option<(PmAddr, Dirent)>, FsError> {
    let mut found = None;
    scan(r, dir, |addr, d| {
        if d.name == name {
            found = Some((addr, d));
            true
        } else {
            false
        }
    })?;
    Ok(found)
}

/// Calls `f` on each used slot until it returns true.
fn scan<R: MetaRead + ?Sized>(
    r: &R,
    dir: &Inode,
    mut f: impl FnMut(PmAddr, Dirent) -> bool,
) -> Result<(), FsError> {
    if !dir.is_dir() {
        return Err(FsError::NotDir);
    }
    let mut block = vec![0u8; BLOCK_SIZE as usize];
    for fb in 0..file_block_count(dir.size) {
        let Some(b) = bmap(r, dir, fb)? else { continue };
        r.read_meta(PmAddr(b.byte_offset()), &mut block);
        for s in 0..DIRENTS_PER_BLOCK {
            let slot = &block[s * DIRENT_SIZE..(s + 1) * DIRENT_SIZE];
            let d = Dirent::decode(slot)
                .map_err(|e| FsError::corrupt(format!("directory {b}, slot {s}: {e}")))?;
            if let Some(d) = d {
                if !r.geo().is_valid_ino(d.ino) {
                    return Err(FsError::corrupt(format!(
                        "directory {b}, slot {s}: inode {} out of range",
                        d.ino.0
                    )));
                }
                if f(PmAddr(b.byte_offset() + (s * DIRENT_SIZE) as u64), d) {
                    return Ok(());
                }
            }
        }
    }
    Ok(())
}

impl Txn<'_> {
    /// Adds an entry to directory `dir` (whose inode the caller writes back).
    pub fn dir_add(
        &mut self,
        dir: &mut Inode,
        name: &[u8],
        ino: Ino,
        ftype: FileType,
    ) -> Result<(), FsError> {
        let entry = Dirent { ino, ftype, name: name.to_vec() }.encode();
        let mut block = vec![0u8; BLOCK_SIZE as usize];
        let nblocks = file_block_count(dir.size);
        for fb in 0..nblocks {
            let Some(b) = bmap(self, dir, fb)? else { continue };
            self.read_meta(PmAddr(b.byte_offset()), &mut block);
            for s in 0..DIRENTS_PER_BLOCK {
                if block[s * DIRENT_SIZE..s * DIRENT_SIZE + 4] == [0, 0, 0, 0] {
                    self.write_meta(PmAddr(b.byte_offset() + (s * DIRENT_SIZE) as u64), &entry);
                    return Ok(());
                }
            }
        }
        let b = self.alloc_meta_block()?;
        self.write_meta(PmAddr(b.byte_offset()), &entry);
        self.set_bmap(dir, nblocks, b)?;
        dir.size = (nblocks + 1) * BLOCK_SIZE;
        Ok(())
    }

    /// Clears the entry slot at `slot`.
    pub fn dir_remove(&mut self, slot: PmAddr) {
        self.write_meta(slot, &[0u8; 8]);
    }
}
