//! What `stat` and `readdir` return.

use nicfs_layout::{FileType, Ino, Inode};

/// File attributes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stat {
    /// Inode number.
    pub ino: Ino,
    /// Type and permissions.
    pub mode: u32,
    /// Hard links.
    pub nlink: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Size in bytes.
    pub size: u64,
    /// 512-byte units allocated (estimated from the size).
    pub blocks: u64,
    /// Access time (ns).
    pub atime: i64,
    /// Modification time (ns).
    pub mtime: i64,
    /// Change time (ns).
    pub ctime: i64,
    /// Device number.
    pub rdev: u32,
}

impl Stat {
    pub(crate) fn of(ino: Ino, i: &Inode) -> Stat {
        Stat {
            ino,
            mode: i.mode,
            nlink: i.nlink,
            uid: i.uid,
            gid: i.gid,
            size: i.size,
            blocks: i.size.div_ceil(4096) * 8,
            atime: i.atime,
            mtime: i.mtime,
            ctime: i.ctime,
            rdev: i.rdev,
        }
    }
}

/// One directory entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    /// Name.
    pub name: Vec<u8>,
    /// Target inode.
    pub ino: Ino,
    /// Target type.
    pub ftype: FileType,
}
