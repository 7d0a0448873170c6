//! Namespace operations: lookup, readdir, create, link, unlink/rmdir, rename.

use nicfs_comm::LeaseMode;
use nicfs_layout::{FileType, Ino, Inode, LogOp, NAME_MAX, ROOT_INO, is_valid_name, mode};
use nicfs_store::{FsError, now_ns};

use crate::client::{Client, State};
use crate::updates::DirUpdate;
use crate::{DirEntry, Stat};

fn check_name(name: &[u8]) -> Result<(), FsError> {
    if name.len() > NAME_MAX {
        return Err(FsError::NameTooLong);
    }
    if !is_valid_name(name) {
        return Err(FsError::Invalid("bad file name"));
    }
    Ok(())
}

impl Client {
    fn dir_change(&self, st: &mut State, dir: Ino, seq: u64, name: &[u8], target: Option<(Ino, FileType)>) {
        st.dir_pending.entry(dir).or_default().push(DirUpdate { seq, name: name.to_vec(), target });
        if let Some(map) = st.dirs.get_mut(&dir) {
            match target {
                Some(t) => map.insert(name.to_vec(), t),
                None => map.remove(name),
            };
        }
    }

    fn touch_dir(&self, st: &mut State, dir: Ino, seq: u64, t: i64, nlink_delta: i32) -> Result<(), FsError> {
        let mut d = self.inode_view(st, dir)?;
        d.mtime = t;
        d.ctime = t;
        d.nlink = (d.nlink as i64 + nlink_delta as i64).max(0) as u32;
        self.record(st, dir, seq, d);
        Ok(())
    }

    /// The inode named `name` in `dir`.
    pub fn lookup_ino(&self, dir: Ino, name: &[u8]) -> Result<Ino, FsError> {
        if name.len() > NAME_MAX {
            return Err(FsError::NameTooLong);
        }
        let mut st = self.lock();
        self.with_leases(&mut st, &[(dir, LeaseMode::Read)], |c, st| {
            if name == b"." {
                return Ok(dir);
            }
            if name == b".." {
                let d = c.inode_view(st, dir)?;
                return Ok(if dir == ROOT_INO || d.parent.is_none() { ROOT_INO } else { d.parent });
            }
            c.lookup_view(st, dir, name)?.map(|(i, _)| i).ok_or(FsError::NotFound)
        })
    }

    /// Looks up `name` in `dir` and returns its attributes.
    pub fn lookup(&self, dir: Ino, name: &[u8]) -> Result<Stat, FsError> {
        let ino = self.lookup_ino(dir, name)?;
        self.getattr(ino)
    }

    /// The entries of directory `dir` (without `.` and `..`).
    pub fn readdir(&self, dir: Ino) -> Result<Vec<DirEntry>, FsError> {
        let mut st = self.lock();
        self.with_leases(&mut st, &[(dir, LeaseMode::Read)], |c, st| {
            Ok(c.dir_view(st, dir)?
                .iter()
                .map(|(n, (i, t))| DirEntry { name: n.clone(), ino: *i, ftype: *t })
                .collect())
        })
    }

    /// Creates `name` in `parent` (file, directory, device, FIFO or, with a non-empty
    /// `target`, a symbolic link) and returns its attributes.
    #[allow(clippy::too_many_arguments)]
    pub fn create(
        &self,
        parent: Ino,
        name: &[u8],
        mode_bits: u32,
        uid: u32,
        gid: u32,
        rdev: u32,
        target: &[u8],
    ) -> Result<Stat, FsError> {
        check_name(name)?;
        if target.len() > 4096 {
            return Err(FsError::NameTooLong);
        }
        let mut st = self.lock();
        let ino = self.take_ino(&mut st)?;
        let r = self.with_leases(&mut st, &[(parent, LeaseMode::Write), (ino, LeaseMode::Write)], |c, st| {
            if c.lookup_view(st, parent, name)?.is_some() {
                return Err(FsError::Exists);
            }
            let t = now_ns();
            let op =
                LogOp::Create { parent, ino, mode: mode_bits, uid, gid, rdev, name_len: name.len() as u16 };
            let (seq, src) = c.append(st, op, &[name, target], t)?;
            if !target.is_empty() {
                st.files.entry(ino).or_default().add_write(
                    seq,
                    0,
                    target.len() as u64,
                    src.add(name.len() as u64),
                );
            }
            let is_dir = mode_bits & mode::S_IFMT == mode::S_IFDIR;
            let n = Inode {
                mode: mode_bits,
                uid,
                gid,
                nlink: if is_dir { 2 } else { 1 },
                size: target.len() as u64,
                atime: t,
                mtime: t,
                ctime: t,
                parent: if is_dir { parent } else { Ino(0) },
                rdev,
                ..Inode::default()
            };
            c.record(st, ino, seq, n.clone());
            st.dirs.insert(ino, Default::default());
            c.dir_change(st, parent, seq, name, Some((ino, FileType::from_mode(mode_bits))));
            c.touch_dir(st, parent, seq, t, if is_dir { 1 } else { 0 })?;
            Ok(Stat::of(ino, &n))
        });
        if r.is_err() {
            st.free_inos.push(ino);
        }
        r
    }

    /// Adds hard link `name` in `parent` to `ino`.
    pub fn link(&self, ino: Ino, parent: Ino, name: &[u8]) -> Result<Stat, FsError> {
        check_name(name)?;
        let mut st = self.lock();
        self.with_leases(&mut st, &[(parent, LeaseMode::Write), (ino, LeaseMode::Write)], |c, st| {
            let mut v = c.inode_view(st, ino)?;
            if v.is_dir() {
                return Err(FsError::NotPermitted);
            }
            if v.nlink >= 65_000 {
                return Err(FsError::TooManyLinks);
            }
            if c.lookup_view(st, parent, name)?.is_some() {
                return Err(FsError::Exists);
            }
            let t = now_ns();
            let (seq, _) = c.append(st, LogOp::Link { parent, ino }, &[name], t)?;
            v.nlink += 1;
            v.ctime = t;
            c.record(st, ino, seq, v.clone());
            c.dir_change(st, parent, seq, name, Some((ino, FileType::from_mode(v.mode))));
            c.touch_dir(st, parent, seq, t, 0)?;
            Ok(Stat::of(ino, &v))
        })
    }

    /// Removes a non-directory (`want_dir == false`, unlink) or an empty directory (rmdir).
    pub fn remove(&self, parent: Ino, name: &[u8], want_dir: bool) -> Result<(), FsError> {
        if name == b"." {
            return Err(FsError::Invalid("cannot remove ."));
        }
        if name == b".." {
            return Err(FsError::NotEmpty);
        }
        check_name(name)?;
        let mut st = self.lock();
        let target = self.with_leases(&mut st, &[(parent, LeaseMode::Write)], |c, st| {
            c.lookup_view(st, parent, name)?.map(|(i, _)| i).ok_or(FsError::NotFound)
        })?;
        self.with_leases(&mut st, &[(parent, LeaseMode::Write), (target, LeaseMode::Write)], |c, st| {
            if c.lookup_view(st, parent, name)?.map(|(i, _)| i) != Some(target) {
                return Err(FsError::Backend("directory changed concurrently; retry".into()));
            }
            let mut v = c.inode_view(st, target)?;
            if v.is_dir() != want_dir {
                return Err(if want_dir { FsError::NotDir } else { FsError::IsDir });
            }
            if v.is_dir() && !c.dir_view(st, target)?.is_empty() {
                return Err(FsError::NotEmpty);
            }
            let t = now_ns();
            let (seq, _) = c.append(st, LogOp::Unlink { parent, ino: target }, &[name], t)?;
            v.nlink = if v.is_dir() { 0 } else { v.nlink - 1 };
            v.ctime = t;
            c.record(st, target, seq, v.clone());
            c.dir_change(st, parent, seq, name, None);
            c.touch_dir(st, parent, seq, t, if v.is_dir() { -1 } else { 0 })?;
            Ok(())
        })
    }

    fn is_under(&self, st: &mut State, mut dir: Ino, ancestor: Ino) -> Result<bool, FsError> {
        for _ in 0..self.space.geo_ref().inode_count {
            if dir == ancestor {
                return Ok(true);
            }
            if dir == ROOT_INO || dir.is_none() {
                return Ok(false);
            }
            dir = self.inode_view(st, dir)?.parent;
        }
        Err(FsError::corrupt("directory parent chain loops"))
    }

    /// Renames `sname` in `sp` to `dname` in `dp`, replacing a compatible target.
    pub fn rename(&self, sp: Ino, sname: &[u8], dp: Ino, dname: &[u8]) -> Result<(), FsError> {
        if sname == b"." || sname == b".." || dname == b"." || dname == b".." {
            return Err(FsError::Invalid("rename of . or .."));
        }
        check_name(sname)?;
        check_name(dname)?;
        let mut st = self.lock();
        let dirs = [(sp, LeaseMode::Write), (dp, LeaseMode::Write)];
        let (moved, replaced) = self.with_leases(&mut st, &dirs, |c, st| {
            let m = c.lookup_view(st, sp, sname)?.ok_or(FsError::NotFound)?;
            let r = c.lookup_view(st, dp, dname)?;
            Ok((m, r))
        })?;
        let mut need = dirs.to_vec();
        need.push((moved.0, LeaseMode::Write));
        if let Some((r, _)) = replaced {
            need.push((r, LeaseMode::Write));
        }
        self.with_leases(&mut st, &need, |c, st| {
            if c.lookup_view(st, sp, sname)? != Some(moved) || c.lookup_view(st, dp, dname)? != replaced {
                return Err(FsError::Backend("directory changed concurrently; retry".into()));
            }
            let mut mv = c.inode_view(st, moved.0)?;
            c.inode_view(st, dp)?;
            if mv.is_dir() && c.is_under(st, dp, moved.0)? {
                return Err(FsError::Invalid("rename of a directory into itself"));
            }
            let mut rv = None;
            if let Some((r, _)) = replaced {
                if r == moved.0 {
                    return Ok(());
                }
                let v = c.inode_view(st, r)?;
                match (mv.is_dir(), v.is_dir()) {
                    (true, false) => return Err(FsError::NotDir),
                    (false, true) => return Err(FsError::IsDir),
                    (true, true) if !c.dir_view(st, r)?.is_empty() => return Err(FsError::NotEmpty),
                    _ => {}
                }
                rv = Some((r, v));
            }
            let t = now_ns();
            let op = LogOp::Rename {
                src_parent: sp,
                dst_parent: dp,
                ino: moved.0,
                replaced: replaced.map_or(Ino(0), |r| r.0),
                src_len: sname.len() as u16,
            };
            let (seq, _) = c.append(st, op, &[sname, dname], t)?;
            if let Some((r, mut v)) = rv {
                v.nlink = if v.is_dir() { 0 } else { v.nlink - 1 };
                v.ctime = t;
                c.record(st, r, seq, v.clone());
                if v.is_dir() {
                    c.touch_dir(st, dp, seq, t, -1)?;
                }
            }
            c.dir_change(st, sp, seq, sname, None);
            c.dir_change(st, dp, seq, dname, Some(moved));
            if mv.is_dir() && sp != dp {
                mv.parent = dp;
                c.touch_dir(st, sp, seq, t, -1)?;
                c.touch_dir(st, dp, seq, t, 1)?;
            } else {
                c.touch_dir(st, sp, seq, t, 0)?;
                c.touch_dir(st, dp, seq, t, 0)?;
            }
            mv.ctime = t;
            c.record(st, moved.0, seq, mv);
            Ok(())
        })
    }

    /// The target of symbolic link `ino`.
    pub fn readlink(&self, ino: Ino) -> Result<Vec<u8>, FsError> {
        let mut st = self.lock();
        self.with_leases(&mut st, &[(ino, LeaseMode::Read)], |c, st| {
            let v = c.inode_view(st, ino)?;
            if !v.is_symlink() {
                return Err(FsError::Invalid("not a symbolic link"));
            }
            if v.size > 4096 {
                return Err(FsError::corrupt(format!("symbolic link {ino} claims {} bytes", v.size)));
            }
            let mut buf = vec![0u8; v.size as usize];
            let n = c.read_locked(st, ino, 0, &mut buf)?;
            buf.truncate(n);
            Ok(buf)
        })
    }
}
