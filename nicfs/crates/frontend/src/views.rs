//! Building views: public space (read under the inode's seqlock) plus this process's
//! not-yet-applied updates.

use std::collections::BTreeMap;

use nicfs_layout::{BLOCK_SIZE, FileType, Ino, Inode};
use nicfs_pm::PmAddr;
use nicfs_store::{FsError, bmap, dir_entries, file_block_count, read_inode};

use crate::client::{Client, State};

/// How long a reader waits on a seqlock held by a back end that may have died (ns).
const STALE_NS: u64 = 2_000_000_000;

impl Client {
    /// Runs `f` against the public space until it observes no concurrent patch of `ino`.
    pub(crate) fn stable<R>(
        &self,
        ino: Ino,
        mut f: impl FnMut() -> Result<R, FsError>,
    ) -> Result<R, FsError> {
        let locks = self.comm.seqlocks();
        let mut last = None;
        for _ in 0..1000 {
            let v = locks.read_begin(ino.0, STALE_NS);
            let r = f();
            if !locks.read_retry(ino.0, v) {
                return r;
            }
            last = Some(r);
        }
        last.unwrap_or_else(|| Err(FsError::Backend("public space never stable".into())))
    }

    pub(crate) fn head(&self, st: &State) -> u64 {
        st.log.space().head(self.pm.as_ref())
    }

    /// The logical inode: this process's latest pending snapshot, or the public inode.
    pub(crate) fn inode_view(&self, st: &mut State, ino: Ino) -> Result<Inode, FsError> {
        let v = match st.inodes.get(&ino) {
            Some(v) => v.clone(),
            None => {
                let h = self.head(st);
                let v = match st.snaps.get(&ino) {
                    Some((seq, snap)) if *seq >= h => snap.clone(),
                    _ => self.stable(ino, || read_inode(&self.space, ino))?,
                };
                st.inodes.insert(ino, v.clone());
                v
            }
        };
        if v.nlink == 0 {
            return Err(FsError::NotFound);
        }
        Ok(v)
    }

    /// The logical directory: public entries plus pending inserts and removals.
    pub(crate) fn dir_view<'s>(
        &self,
        st: &'s mut State,
        dir: Ino,
    ) -> Result<&'s BTreeMap<Vec<u8>, (Ino, FileType)>, FsError> {
        if !st.dirs.contains_key(&dir) {
            let v = self.inode_view(st, dir)?;
            if !v.is_dir() {
                return Err(FsError::NotDir);
            }
            let h = self.head(st);
            let public = self.stable(dir, || {
                let pi = read_inode(&self.space, dir)?;
                if pi.nlink == 0 || !pi.is_dir() {
                    return Ok(Vec::new());
                }
                dir_entries(&self.space, &pi)
            })?;
            let mut map: BTreeMap<Vec<u8>, (Ino, FileType)> =
                public.into_iter().map(|(_, d)| (d.name, (d.ino, d.ftype))).collect();
            if let Some(p) = st.dir_pending.get_mut(&dir) {
                p.retain(|u| u.seq >= h);
                for u in p.iter() {
                    match u.target {
                        Some(t) => map.insert(u.name.clone(), t),
                        None => map.remove(&u.name),
                    };
                }
            }
            st.dirs.insert(dir, map);
        }
        Ok(st.dirs.get(&dir).expect("just inserted"))
    }

    /// Looks `name` up in the view of `dir`.
    pub(crate) fn lookup_view(
        &self,
        st: &mut State,
        dir: Ino,
        name: &[u8],
    ) -> Result<Option<(Ino, FileType)>, FsError> {
        Ok(self.dir_view(st, dir)?.get(name).copied())
    }

    /// Reads bytes `at..at + buf.len()` of file block `fb` of `ino`: public bytes plus pending
    /// updates at or after `head`. Only those bytes are read from PM.
    fn read_block(
        &self,
        st: &State,
        ino: Ino,
        fb: u64,
        head: u64,
        at: usize,
        buf: &mut [u8],
    ) -> Result<(), FsError> {
        self.stable(ino, || {
            let pi = read_inode(&self.space, ino)?;
            let block = if pi.nlink > 0 && fb < file_block_count(pi.size) {
                bmap(&self.space, &pi, fb)?
            } else {
                None
            };
            match block {
                Some(b) => self.pm.read(PmAddr(b.byte_offset() + at as u64), buf),
                None => buf.fill(0),
            }
            Ok(())
        })?;
        if let Some(u) = st.files.get(&ino) {
            u.overlay(self.pm.as_ref(), fb, head, at, buf);
        }
        Ok(())
    }

    /// Reads at `offset` into `buf` (lease held by the caller).
    pub(crate) fn read_locked(
        &self,
        st: &mut State,
        ino: Ino,
        offset: u64,
        buf: &mut [u8],
    ) -> Result<usize, FsError> {
        let v = self.inode_view(st, ino)?;
        if v.is_dir() {
            return Err(FsError::IsDir);
        }
        if offset >= v.size {
            return Ok(0);
        }
        let n = (buf.len() as u64).min(v.size - offset) as usize;
        let head = self.head(st);
        if let Some(u) = st.files.get_mut(&ino) {
            u.prune(head);
        }
        let mut done = 0usize;
        while done < n {
            let pos = offset + done as u64;
            let fb = pos / BLOCK_SIZE;
            let off = (pos % BLOCK_SIZE) as usize;
            let k = (BLOCK_SIZE as usize - off).min(n - done);
            self.read_block(st, ino, fb, head, off, &mut buf[done..done + k])?;
            done += k;
        }
        Ok(n)
    }
}
