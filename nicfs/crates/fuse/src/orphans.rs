//! Open files whose last name was removed: kept under a hidden name until the last close.
//!
//! POSIX lets a process keep using a file after its last name is removed. The adapter moves
//! such a file to `.nicfs_orphan_<ino>` in the root (invisible to lookup and readdir, reported
//! with one link less) and removes it when its last handle is released, like an orphan list;
//! orphans left by a crash are removed at the next mount.

use std::collections::HashMap;

use nicfs_frontend::{Client, FsError, Stat};
use nicfs_layout::{Ino, ROOT_INO, mode};

/// Prefix of the hidden names.
pub(crate) const ORPHAN_PREFIX: &[u8] = b".nicfs_orphan_";

/// Open-handle counts and orphaned inodes.
#[derive(Default)]
pub(crate) struct Orphans {
    open: HashMap<u64, u32>,
    hidden: HashMap<u64, Vec<u8>>,
}

impl Orphans {
    /// Removes orphans a crash left behind.
    pub(crate) fn clean_after_crash(client: &Client) {
        if let Ok(entries) = client.readdir(ROOT_INO) {
            for e in entries.into_iter().filter(|e| e.name.starts_with(ORPHAN_PREFIX)) {
                let _ = client.remove(ROOT_INO, &e.name, false);
            }
        }
    }

    /// Whether `name` in `dir` is a hidden orphan name.
    pub(crate) fn is_hidden(dir: Ino, name: &[u8]) -> bool {
        dir == ROOT_INO && name.starts_with(ORPHAN_PREFIX)
    }

    /// Counts an opened handle.
    pub(crate) fn opened(&mut self, ino: u64) {
        *self.open.entry(ino).or_default() += 1;
    }

    /// Counts a released handle; removes the orphan when it was the last.
    pub(crate) fn released(&mut self, client: &Client, ino: u64) {
        let n = self.open.entry(ino).or_default();
        *n = n.saturating_sub(1);
        if *n == 0 {
            self.open.remove(&ino);
            if let Some(hidden) = self.hidden.remove(&ino) {
                let _ = client.remove(ROOT_INO, &hidden, false);
            }
        }
    }

    /// Attributes as POSIX reports them: an orphan has lost its last link.
    pub(crate) fn fix(&self, mut s: Stat) -> Stat {
        if self.hidden.contains_key(&(s.ino.0 as u64)) {
            s.nlink = s.nlink.saturating_sub(1);
        }
        s
    }

    /// If `name` in `parent` is the last name of an open file, moves it to an orphan name and
    /// returns true (the caller then must not remove it).
    pub(crate) fn orphan_if_open(
        &mut self,
        client: &Client,
        parent: Ino,
        name: &[u8],
    ) -> Result<bool, FsError> {
        let Ok(i) = client.lookup_ino(parent, name) else { return Ok(false) };
        let st = client.getattr(i)?;
        let open = self.open.get(&(i.0 as u64)).copied().unwrap_or(0) > 0;
        if !open || st.nlink != 1 || st.mode & mode::S_IFMT == mode::S_IFDIR {
            return Ok(false);
        }
        let hidden = [ORPHAN_PREFIX, i.0.to_string().as_bytes()].concat();
        client.rename(parent, name, ROOT_INO, &hidden)?;
        self.hidden.insert(i.0 as u64, hidden);
        Ok(true)
    }
}
