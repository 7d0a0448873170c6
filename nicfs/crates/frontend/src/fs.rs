//! The POSIX-like path and file-descriptor API on top of [`Client`].

use std::collections::HashMap;
use std::sync::Mutex;

use nicfs_layout::{Ino, ROOT_INO, mode};
use nicfs_store::FsError;

use crate::{Client, DirEntry, Stat};

/// An open file.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fd(pub u64);

/// How to open a file (a subset of `open(2)` flags).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct OpenFlags {
    /// Allow reads.
    pub read: bool,
    /// Allow writes.
    pub write: bool,
    /// Create if missing (`O_CREAT`).
    pub create: bool,
    /// With `create`: fail if it exists (`O_EXCL`).
    pub excl: bool,
    /// Truncate to zero on open (`O_TRUNC`).
    pub truncate: bool,
    /// Every write goes to the end (`O_APPEND`).
    pub append: bool,
}

impl OpenFlags {
    /// Read-only.
    pub const READ: OpenFlags =
        OpenFlags { read: true, write: false, create: false, excl: false, truncate: false, append: false };
    /// Read-write.
    pub const RDWR: OpenFlags =
        OpenFlags { read: true, write: true, create: false, excl: false, truncate: false, append: false };
    /// Read-write, created if missing.
    pub const CREATE: OpenFlags =
        OpenFlags { read: true, write: true, create: true, excl: false, truncate: false, append: false };
}

struct OpenFile {
    ino: Ino,
    pos: u64,
    flags: OpenFlags,
}

/// A file system handle for one process: paths, descriptors, and the client underneath.
pub struct Fs {
    client: Client,
    fds: Mutex<(u64, HashMap<u64, OpenFile>)>,
}

fn components(path: &str) -> Result<Vec<&[u8]>, FsError> {
    if !path.starts_with('/') {
        return Err(FsError::Invalid("paths must be absolute"));
    }
    Ok(path.split('/').filter(|c| !c.is_empty()).map(str::as_bytes).collect())
}

impl Fs {
    /// Wraps an attached client.
    pub fn new(client: Client) -> Fs {
        Fs { client, fds: Mutex::new((3, HashMap::new())) }
    }

    /// The client (inode-level API).
    pub fn client(&self) -> &Client {
        &self.client
    }

    fn fds(&self) -> std::sync::MutexGuard<'_, (u64, HashMap<u64, OpenFile>)> {
        self.fds.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Resolves an absolute path to an inode.
    pub fn resolve(&self, path: &str) -> Result<Ino, FsError> {
        let mut ino = ROOT_INO;
        for c in components(path)? {
            ino = self.client.lookup_ino(ino, c)?;
        }
        Ok(ino)
    }

    fn parent_of<'p>(&self, path: &'p str) -> Result<(Ino, &'p [u8]), FsError> {
        let comps = components(path)?;
        let (last, dirs) = comps.split_last().ok_or(FsError::Invalid("the root has no parent"))?;
        let mut ino = ROOT_INO;
        for c in dirs {
            ino = self.client.lookup_ino(ino, c)?;
        }
        Ok((ino, last))
    }

    /// Opens (and maybe creates) a file.
    pub fn open(&self, path: &str, flags: OpenFlags, perm: u32) -> Result<Fd, FsError> {
        let (parent, name) = self.parent_of(path)?;
        let ino = match self.client.lookup_ino(parent, name) {
            Ok(_) if flags.create && flags.excl => return Err(FsError::Exists),
            Ok(i) => i,
            Err(FsError::NotFound) if flags.create => {
                match self.client.create(parent, name, mode::S_IFREG | (perm & 0o7777), 0, 0, 0, b"") {
                    Ok(st) => st.ino,
                    // Another process created it in between: open that one.
                    Err(FsError::Exists) if !flags.excl => self.client.lookup_ino(parent, name)?,
                    Err(e) => return Err(e),
                }
            }
            Err(e) => return Err(e),
        };
        let st = self.client.getattr(ino)?;
        if st.mode & mode::S_IFMT == mode::S_IFDIR && flags.write {
            return Err(FsError::IsDir);
        }
        if flags.truncate && flags.write && st.size != 0 {
            self.client.truncate(ino, 0)?;
        }
        let mut g = self.fds();
        let fd = g.0;
        g.0 += 1;
        g.1.insert(fd, OpenFile { ino, pos: 0, flags });
        Ok(Fd(fd))
    }

    /// Closes a descriptor.
    pub fn close(&self, fd: Fd) -> Result<(), FsError> {
        self.fds().1.remove(&fd.0).map(|_| ()).ok_or(FsError::BadHandle)
    }

    fn file(&self, fd: Fd) -> Result<(Ino, u64, OpenFlags), FsError> {
        let g = self.fds();
        let f = g.1.get(&fd.0).ok_or(FsError::BadHandle)?;
        Ok((f.ino, f.pos, f.flags))
    }

    fn set_pos(&self, fd: Fd, pos: u64) {
        if let Some(f) = self.fds().1.get_mut(&fd.0) {
            f.pos = pos;
        }
    }

    /// Reads at the current position and advances it.
    pub fn read(&self, fd: Fd, buf: &mut [u8]) -> Result<usize, FsError> {
        let (ino, pos, flags) = self.file(fd)?;
        if !flags.read {
            return Err(FsError::BadHandle);
        }
        let n = self.client.read(ino, pos, buf)?;
        self.set_pos(fd, pos + n as u64);
        Ok(n)
    }

    /// Writes at the current position (or the end, with `append`) and advances it.
    pub fn write(&self, fd: Fd, data: &[u8]) -> Result<usize, FsError> {
        let (ino, mut pos, flags) = self.file(fd)?;
        if !flags.write {
            return Err(FsError::BadHandle);
        }
        if flags.append {
            pos = self.client.getattr(ino)?.size;
        }
        let n = self.client.write(ino, pos, data)?;
        self.set_pos(fd, pos + n as u64);
        Ok(n)
    }

    /// Reads at `offset` without moving the position.
    pub fn pread(&self, fd: Fd, buf: &mut [u8], offset: u64) -> Result<usize, FsError> {
        let (ino, _, flags) = self.file(fd)?;
        if !flags.read {
            return Err(FsError::BadHandle);
        }
        self.client.read(ino, offset, buf)
    }

    /// Writes at `offset` without moving the position.
    pub fn pwrite(&self, fd: Fd, data: &[u8], offset: u64) -> Result<usize, FsError> {
        let (ino, _, flags) = self.file(fd)?;
        if !flags.write {
            return Err(FsError::BadHandle);
        }
        self.client.write(ino, offset, data)
    }

    /// Every update is durable when its call returns, so `fsync` only checks the descriptor.
    pub fn fsync(&self, fd: Fd) -> Result<(), FsError> {
        self.file(fd).map(|_| ())
    }

    /// Sets the size of an open file.
    pub fn ftruncate(&self, fd: Fd, size: u64) -> Result<(), FsError> {
        let (ino, _, flags) = self.file(fd)?;
        if !flags.write {
            return Err(FsError::BadHandle);
        }
        self.client.truncate(ino, size)
    }

    /// Sets the size of a file by path.
    pub fn truncate(&self, path: &str, size: u64) -> Result<(), FsError> {
        let ino = self.resolve(path)?;
        self.client.truncate(ino, size)
    }

    /// Removes a file.
    pub fn unlink(&self, path: &str) -> Result<(), FsError> {
        let (p, n) = self.parent_of(path)?;
        self.client.remove(p, n, false)
    }

    /// Creates a directory.
    pub fn mkdir(&self, path: &str, perm: u32) -> Result<(), FsError> {
        let (p, n) = self.parent_of(path)?;
        self.client.create(p, n, mode::S_IFDIR | (perm & 0o7777), 0, 0, 0, b"").map(|_| ())
    }

    /// Removes an empty directory.
    pub fn rmdir(&self, path: &str) -> Result<(), FsError> {
        let (p, n) = self.parent_of(path)?;
        self.client.remove(p, n, true)
    }

    /// Lists a directory (without `.` and `..`).
    pub fn readdir(&self, path: &str) -> Result<Vec<DirEntry>, FsError> {
        let ino = self.resolve(path)?;
        self.client.readdir(ino)
    }

    /// Renames `from` to `to`.
    pub fn rename(&self, from: &str, to: &str) -> Result<(), FsError> {
        let (sp, sn) = self.parent_of(from)?;
        let (dp, dn) = self.parent_of(to)?;
        self.client.rename(sp, sn, dp, dn)
    }

    /// Attributes by path.
    pub fn stat(&self, path: &str) -> Result<Stat, FsError> {
        let ino = self.resolve(path)?;
        self.client.getattr(ino)
    }

    /// Attributes of an open file.
    pub fn fstat(&self, fd: Fd) -> Result<Stat, FsError> {
        let (ino, _, _) = self.file(fd)?;
        self.client.getattr(ino)
    }
}
