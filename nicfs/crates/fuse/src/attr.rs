//! Converting NICFS attributes and errors to FUSE's.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fuser::{FileAttr, FileType as FuseType};
use nicfs_frontend::{FsError, Stat};
use nicfs_layout::{FileType, mode};

/// How long the kernel may cache attributes and entries. Zero: other front ends may change
/// the file system behind this mount at any time.
pub(crate) const TTL: Duration = Duration::ZERO;

pub(crate) fn time(ns: i64) -> SystemTime {
    if ns >= 0 {
        UNIX_EPOCH + Duration::from_nanos(ns as u64)
    } else {
        UNIX_EPOCH - Duration::from_nanos(ns.unsigned_abs())
    }
}

pub(crate) fn ns(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i64,
        Err(e) => -(e.duration().as_nanos() as i64),
    }
}

pub(crate) fn kind(m: u32) -> FuseType {
    match m & mode::S_IFMT {
        mode::S_IFDIR => FuseType::Directory,
        mode::S_IFLNK => FuseType::Symlink,
        0o010000 => FuseType::NamedPipe,
        0o020000 => FuseType::CharDevice,
        0o060000 => FuseType::BlockDevice,
        0o140000 => FuseType::Socket,
        _ => FuseType::RegularFile,
    }
}

pub(crate) fn dir_kind(t: FileType, m: Option<u32>) -> FuseType {
    match t {
        FileType::Regular => FuseType::RegularFile,
        FileType::Directory => FuseType::Directory,
        FileType::Symlink => FuseType::Symlink,
        FileType::Other => m.map_or(FuseType::RegularFile, kind),
    }
}

pub(crate) fn attr(s: &Stat) -> FileAttr {
    FileAttr {
        ino: s.ino.0 as u64,
        size: s.size,
        blocks: s.blocks,
        atime: time(s.atime),
        mtime: time(s.mtime),
        ctime: time(s.ctime),
        crtime: time(s.ctime),
        kind: kind(s.mode),
        perm: (s.mode & 0o7777) as u16,
        nlink: s.nlink,
        uid: s.uid,
        gid: s.gid,
        rdev: s.rdev,
        blksize: 4096,
        flags: 0,
    }
}

pub(crate) fn errno(e: &FsError) -> i32 {
    e.errno()
}
