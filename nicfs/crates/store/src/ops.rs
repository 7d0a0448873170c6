//! File-system operations as transaction steps: what the back end's Patch stage, recovery and
//! the in-place baseline apply. Each checks its preconditions and fails without staging
//! anything partial that the caller would have to undo (callers abort on error anyway).

use nicfs_layout::{BLOCK_SIZE, FileType, Ino, Inode, ROOT_INO, SetAttrMask, is_valid_name, mode};
use nicfs_pm::PmAddr;

use crate::{FsError, MetaRead, Txn, bmap, dir_entries, dir_lookup};

/// Largest hard-link count.
const LINK_MAX: u32 = 65_000;

/// Current wall-clock time in ns since the epoch (operation timestamps only).
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// Where one piece of a write lands in PM.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct WriteChunk {
    /// Offset within the file.
    pub file_off: u64,
    /// Destination in PM.
    pub dst: PmAddr,
    /// Bytes.
    pub len: u64,
}

fn check_name(name: &[u8]) -> Result<(), FsError> {
    if name.len() > nicfs_layout::NAME_MAX {
        return Err(FsError::NameTooLong);
    }
    if !is_valid_name(name) {
        return Err(FsError::Invalid("bad name"));
    }
    Ok(())
}

impl Txn<'_> {
    /// Reads a live directory inode.
    pub fn dir_inode(&self, ino: Ino) -> Result<Inode, FsError> {
        let d = self.get_inode(ino)?;
        if d.nlink == 0 {
            return Err(FsError::NotFound);
        }
        if !d.is_dir() {
            return Err(FsError::NotDir);
        }
        Ok(d)
    }

    /// Creates `ino` as `name` in `parent`. `target` is a symbolic link's target (else empty).
    #[allow(clippy::too_many_arguments)]
    pub fn op_create(
        &mut self,
        parent: Ino,
        ino: Ino,
        mode_bits: u32,
        uid: u32,
        gid: u32,
        rdev: u32,
        name: &[u8],
        target: &[u8],
        time: i64,
    ) -> Result<(), FsError> {
        check_name(name)?;
        let mut p = self.dir_inode(parent)?;
        if dir_lookup(self, &p, name)?.is_some() {
            return Err(FsError::Exists);
        }
        let old = self.get_inode(ino)?;
        if old.nlink != 0 || ino == ROOT_INO {
            return Err(FsError::corrupt(format!("create of {ino}, which is in use")));
        }
        let is_dir = mode_bits & mode::S_IFMT == mode::S_IFDIR;
        let mut n = Inode {
            mode: mode_bits,
            uid,
            gid,
            nlink: if is_dir { 2 } else { 1 },
            atime: time,
            mtime: time,
            ctime: time,
            parent: if is_dir { parent } else { Ino(0) },
            rdev,
            generation: old.generation.wrapping_add(1),
            ..Inode::default()
        };
        if mode_bits & mode::S_IFMT == mode::S_IFLNK && !target.is_empty() {
            if target.len() > BLOCK_SIZE as usize {
                return Err(FsError::NameTooLong);
            }
            let b = self.alloc_meta_block()?;
            self.write_meta(PmAddr(b.byte_offset()), target);
            n.direct[0] = b;
            n.size = target.len() as u64;
        }
        self.mark_inode_used(ino);
        self.put_inode(ino, &n);
        self.dir_add(&mut p, name, ino, FileType::from_mode(mode_bits))?;
        if is_dir {
            p.nlink += 1;
        }
        p.mtime = time;
        p.ctime = time;
        self.put_inode(parent, &p);
        Ok(())
    }

    /// Adds hard link `name` in `parent` to `ino`.
    pub fn op_link(&mut self, parent: Ino, ino: Ino, name: &[u8], time: i64) -> Result<(), FsError> {
        check_name(name)?;
        let mut p = self.dir_inode(parent)?;
        let mut t = self.get_inode(ino)?;
        if t.nlink == 0 {
            return Err(FsError::NotFound);
        }
        if t.is_dir() {
            return Err(FsError::NotPermitted);
        }
        if t.nlink >= LINK_MAX {
            return Err(FsError::TooManyLinks);
        }
        if dir_lookup(self, &p, name)?.is_some() {
            return Err(FsError::Exists);
        }
        t.nlink += 1;
        t.ctime = time;
        self.put_inode(ino, &t);
        self.dir_add(&mut p, name, ino, FileType::from_mode(t.mode))?;
        p.mtime = time;
        p.ctime = time;
        self.put_inode(parent, &p);
        Ok(())
    }

    /// Drops one link of `ino`, freeing it (and its blocks) at zero.
    fn drop_link(&mut self, ino: Ino, t: &mut Inode, time: i64) -> Result<(), FsError> {
        if t.is_dir() || t.nlink <= 1 {
            self.free_from(t, 0)?;
            self.free_inode(ino);
        } else {
            t.nlink -= 1;
            t.ctime = time;
            self.put_inode(ino, t);
        }
        Ok(())
    }

    /// Removes `name` from `parent`: a non-directory (`unlink`) or an empty directory (`rmdir`),
    /// as `want_dir` says.
    pub fn op_remove(&mut self, parent: Ino, name: &[u8], want_dir: bool, time: i64) -> Result<Ino, FsError> {
        let mut p = self.dir_inode(parent)?;
        let (slot, d) = dir_lookup(self, &p, name)?.ok_or(FsError::NotFound)?;
        let mut t = self.get_inode(d.ino)?;
        if t.is_dir() != want_dir {
            return Err(if want_dir { FsError::NotDir } else { FsError::IsDir });
        }
        if t.is_dir() {
            if !dir_entries(self, &t)?.is_empty() {
                return Err(FsError::NotEmpty);
            }
            p.nlink = p.nlink.saturating_sub(1);
        }
        self.dir_remove(slot);
        self.drop_link(d.ino, &mut t, time)?;
        p.mtime = time;
        p.ctime = time;
        self.put_inode(parent, &p);
        Ok(d.ino)
    }

    /// Whether `dir` is `ancestor` or lies below it.
    fn is_under(&self, mut dir: Ino, ancestor: Ino) -> Result<bool, FsError> {
        for _ in 0..self.geo().inode_count {
            if dir == ancestor {
                return Ok(true);
            }
            if dir == ROOT_INO || dir.is_none() {
                return Ok(false);
            }
            dir = self.get_inode(dir)?.parent;
        }
        Err(FsError::corrupt("directory parent chain loops"))
    }

    /// Renames `sname` in `sp` to `dname` in `dp`, replacing a compatible target.
    pub fn op_rename(
        &mut self,
        sp: Ino,
        sname: &[u8],
        dp: Ino,
        dname: &[u8],
        time: i64,
    ) -> Result<(), FsError> {
        check_name(dname)?;
        let sdir = self.dir_inode(sp)?;
        let (sslot, sd) = dir_lookup(self, &sdir, sname)?.ok_or(FsError::NotFound)?;
        let ddir = self.dir_inode(dp)?;
        let mut moved = self.get_inode(sd.ino)?;
        if moved.is_dir() && self.is_under(dp, sd.ino)? {
            return Err(FsError::Invalid("rename of a directory into itself"));
        }
        if let Some((_, dd)) = dir_lookup(self, &ddir, dname)? {
            if dd.ino == sd.ino {
                return Ok(());
            }
            let target = self.get_inode(dd.ino)?;
            match (moved.is_dir(), target.is_dir()) {
                (true, false) => return Err(FsError::NotDir),
                (false, true) => return Err(FsError::IsDir),
                _ => {}
            }
            self.op_remove(dp, dname, target.is_dir(), time)?;
        }
        // Re-read: removal may have changed the directories.
        let mut sdir = self.dir_inode(sp)?;
        self.dir_remove(sslot);
        if sp == dp {
            self.dir_add(&mut sdir, dname, sd.ino, sd.ftype)?;
            sdir.mtime = time;
            sdir.ctime = time;
            self.put_inode(sp, &sdir);
        } else {
            let mut ddir = self.dir_inode(dp)?;
            self.dir_add(&mut ddir, dname, sd.ino, sd.ftype)?;
            if moved.is_dir() {
                sdir.nlink = sdir.nlink.saturating_sub(1);
                ddir.nlink += 1;
                moved.parent = dp;
            }
            for (ino, d) in [(sp, &mut sdir), (dp, &mut ddir)] {
                d.mtime = time;
                d.ctime = time;
                self.put_inode(ino, d);
            }
        }
        moved.ctime = time;
        self.put_inode(sd.ino, &moved);
        Ok(())
    }

    /// Changes attributes selected by `mask`.
    #[allow(clippy::too_many_arguments)]
    pub fn op_setattr(
        &mut self,
        ino: Ino,
        mask: SetAttrMask,
        mode_bits: u32,
        uid: u32,
        gid: u32,
        atime: i64,
        mtime: i64,
        time: i64,
    ) -> Result<(), FsError> {
        let mut t = self.get_inode(ino)?;
        if t.nlink == 0 {
            return Err(FsError::NotFound);
        }
        if mask.has(SetAttrMask::MODE) {
            t.mode = (t.mode & mode::S_IFMT) | (mode_bits & 0o7777);
        }
        if mask.has(SetAttrMask::UID) {
            t.uid = uid;
        }
        if mask.has(SetAttrMask::GID) {
            t.gid = gid;
        }
        if mask.has(SetAttrMask::ATIME) {
            t.atime = atime;
        }
        if mask.has(SetAttrMask::MTIME) {
            t.mtime = mtime;
        }
        t.ctime = time;
        self.put_inode(ino, &t);
        Ok(())
    }

    /// Sets the size of `ino`: frees blocks past the end and zeroes the tail of the last
    /// partial block in place (so later growth reads zeroes).
    pub fn op_truncate(&mut self, ino: Ino, size: u64, time: i64) -> Result<(), FsError> {
        let mut t = self.get_inode(ino)?;
        if t.nlink == 0 {
            return Err(FsError::NotFound);
        }
        if t.is_dir() {
            return Err(FsError::IsDir);
        }
        if size > Inode::max_size() {
            return Err(FsError::TooBig);
        }
        self.clear_from(&mut t, size)?;
        t.size = size;
        t.mtime = time;
        t.ctime = time;
        self.put_inode(ino, &t);
        Ok(())
    }

    /// Frees blocks of `t` beyond byte `size` and zeroes the partial tail (data, in place).
    pub fn clear_from(&mut self, t: &mut Inode, size: u64) -> Result<(), FsError> {
        if size >= t.size {
            return Ok(());
        }
        self.free_from(t, size.div_ceil(BLOCK_SIZE))?;
        let tail = size % BLOCK_SIZE;
        if tail != 0
            && let Some(b) = bmap(self, t, size / BLOCK_SIZE)?
        {
            let at = PmAddr(b.byte_offset() + tail);
            let zeros = vec![0u8; (BLOCK_SIZE - tail) as usize];
            let pm = self.space().pm().clone();
            pm.store(at, &zeros);
            pm.flush(at, zeros.len() as u64);
        }
        Ok(())
    }

    /// Resolves `offset..offset+len` of `t` to PM chunks, allocating holes (fresh blocks are
    /// zeroed where the write covers them only partly). Contiguous blocks give one chunk.
    /// The caller copies the data, updates size/times and writes the inode back.
    pub fn map_write(&mut self, t: &mut Inode, offset: u64, len: u64) -> Result<Vec<WriteChunk>, FsError> {
        let end = offset.checked_add(len).filter(|e| *e <= Inode::max_size()).ok_or(FsError::TooBig)?;
        let mut out: Vec<WriteChunk> = Vec::new();
        let mut pos = offset;
        while pos < end {
            let fb = pos / BLOCK_SIZE;
            let in_off = pos % BLOCK_SIZE;
            let n = (BLOCK_SIZE - in_off).min(end - pos);
            let b = match bmap(self, t, fb)? {
                Some(b) => b,
                None => {
                    let b = self.alloc_block(n != BLOCK_SIZE)?;
                    self.set_bmap(t, fb, b)?;
                    b
                }
            };
            let dst = PmAddr(b.byte_offset() + in_off);
            match out.last_mut() {
                Some(c) if c.dst.get() + c.len == dst.get() => c.len += n,
                _ => out.push(WriteChunk { file_off: pos, dst, len: n }),
            }
            pos += n;
        }
        Ok(out)
    }
}
