//! The `fuser::Filesystem` implementation.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::SystemTime;

use fuser::{
    Filesystem, MountOption, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry,
    ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow,
};
use nicfs_frontend::{Client, FsError};
use nicfs_layout::{Ino, SetAttrMask, mode};

use crate::attr::{TTL, attr, dir_kind, errno, ns};
use crate::orphans::Orphans;

/// A NICFS front end behind FUSE. Unlinked-but-open files live on under hidden orphan names
/// until their last handle is released.
pub struct NicfsFuse {
    client: Client,
    orphans: Orphans,
}

impl NicfsFuse {
    /// Wraps an attached client and removes orphans a crash may have left.
    pub fn new(client: Client) -> NicfsFuse {
        Orphans::clean_after_crash(&client);
        NicfsFuse { client, orphans: Orphans::default() }
    }

    fn fix(&self, s: nicfs_frontend::Stat) -> nicfs_frontend::Stat {
        self.orphans.fix(s)
    }

    fn orphan_if_open(&mut self, parent: Ino, name: &[u8]) -> Result<bool, FsError> {
        self.orphans.orphan_if_open(&self.client, parent, name)
    }
}

/// Mounts `client` at `mountpoint` and serves requests until unmounted.
pub fn mount(client: Client, mountpoint: &Path) -> std::io::Result<()> {
    let opts = [
        MountOption::FSName("nicfs".into()),
        MountOption::Subtype("nicfs".into()),
        MountOption::DefaultPermissions,
        MountOption::AllowOther,
        MountOption::Dev,
        MountOption::Suid,
        MountOption::RW,
    ];
    fuser::mount2(NicfsFuse::new(client), mountpoint, &opts)
}

fn ino(i: u64) -> Ino {
    Ino(i.min(u32::MAX as u64) as u32)
}

fn tns(t: TimeOrNow) -> i64 {
    match t {
        TimeOrNow::SpecificTime(t) => ns(t),
        TimeOrNow::Now => ns(SystemTime::now()),
    }
}

impl NicfsFuse {
    fn entry(&self, r: Result<nicfs_frontend::Stat, FsError>, reply: ReplyEntry) {
        match r {
            Ok(s) => reply.entry(&TTL, &attr(&self.fix(s)), 0),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn gid_for(&self, parent: Ino, req_gid: u32) -> (u32, bool) {
        match self.client.getattr(parent) {
            Ok(p) if p.mode & 0o2000 != 0 => (p.gid, true),
            _ => (req_gid, false),
        }
    }
}

impl Filesystem for NicfsFuse {
    fn lookup(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEntry) {
        if Orphans::is_hidden(ino(parent), name.as_bytes()) {
            return reply.error(libc::ENOENT);
        }
        self.entry(self.client.lookup(ino(parent), name.as_bytes()), reply);
    }

    fn getattr(&mut self, _req: &Request<'_>, i: u64, _fh: Option<u64>, reply: ReplyAttr) {
        match self.client.getattr(ino(i)) {
            Ok(s) => reply.attr(&TTL, &attr(&self.fix(s))),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn setattr(
        &mut self,
        _req: &Request<'_>,
        i: u64,
        m: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<u64>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<u32>,
        reply: ReplyAttr,
    ) {
        let i = ino(i);
        if let Some(s) = size
            && let Err(e) = self.client.truncate(i, s)
        {
            return reply.error(errno(&e));
        }
        let mut mask = 0u8;
        let mut new_mode = m.unwrap_or(0);
        if m.is_some() {
            mask |= SetAttrMask::MODE;
        }
        if uid.is_some() {
            mask |= SetAttrMask::UID;
        }
        if gid.is_some() {
            mask |= SetAttrMask::GID;
        }
        if (uid.is_some() || gid.is_some()) && m.is_none() {
            // chown clears set-user-id and set-group-id on non-directories, as on Linux.
            if let Ok(s) = self.client.getattr(i)
                && s.mode & mode::S_IFMT != mode::S_IFDIR
                && s.mode & 0o6000 != 0
            {
                mask |= SetAttrMask::MODE;
                new_mode = s.mode & !0o6000;
            }
        }
        if atime.is_some() {
            mask |= SetAttrMask::ATIME;
        }
        if mtime.is_some() {
            mask |= SetAttrMask::MTIME;
        }
        let r = if mask == 0 {
            self.client.getattr(i)
        } else {
            self.client.setattr(
                i,
                SetAttrMask(mask),
                new_mode,
                uid.unwrap_or(0),
                gid.unwrap_or(0),
                atime.map_or(0, tns),
                mtime.map_or(0, tns),
            )
        };
        match r {
            Ok(s) => reply.attr(&TTL, &attr(&self.fix(s))),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn readlink(&mut self, _req: &Request<'_>, i: u64, reply: ReplyData) {
        match self.client.readlink(ino(i)) {
            Ok(t) => reply.data(&t),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn mknod(
        &mut self,
        req: &Request<'_>,
        parent: u64,
        name: &OsStr,
        m: u32,
        _umask: u32,
        rdev: u32,
        reply: ReplyEntry,
    ) {
        let (gid, _) = self.gid_for(ino(parent), req.gid());
        let m = if m & mode::S_IFMT == 0 { m | mode::S_IFREG } else { m };
        self.entry(self.client.create(ino(parent), name.as_bytes(), m, req.uid(), gid, rdev, b""), reply);
    }

    fn mkdir(
        &mut self,
        req: &Request<'_>,
        parent: u64,
        name: &OsStr,
        m: u32,
        _umask: u32,
        reply: ReplyEntry,
    ) {
        let (gid, sgid) = self.gid_for(ino(parent), req.gid());
        let m = mode::S_IFDIR | (m & 0o7777) | if sgid { 0o2000 } else { 0 };
        self.entry(self.client.create(ino(parent), name.as_bytes(), m, req.uid(), gid, 0, b""), reply);
    }

    fn unlink(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEmpty) {
        match self.orphan_if_open(ino(parent), name.as_bytes()) {
            Ok(true) => return reply.ok(),
            Ok(false) => {}
            Err(e) => return reply.error(errno(&e)),
        }
        match self.client.remove(ino(parent), name.as_bytes(), false) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn rmdir(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEmpty) {
        match self.client.remove(ino(parent), name.as_bytes(), true) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn symlink(
        &mut self,
        req: &Request<'_>,
        parent: u64,
        link_name: &OsStr,
        target: &Path,
        reply: ReplyEntry,
    ) {
        let t = target.as_os_str().as_bytes();
        if t.is_empty() {
            return reply.error(libc::ENOENT);
        }
        let (gid, _) = self.gid_for(ino(parent), req.gid());
        self.entry(
            self.client.create(
                ino(parent),
                link_name.as_bytes(),
                mode::S_IFLNK | 0o777,
                req.uid(),
                gid,
                0,
                t,
            ),
            reply,
        );
    }

    fn rename(
        &mut self,
        _req: &Request<'_>,
        p: u64,
        name: &OsStr,
        np: u64,
        newname: &OsStr,
        flags: u32,
        reply: ReplyEmpty,
    ) {
        if flags != 0 {
            return reply.error(libc::EINVAL);
        }
        let same = self.client.lookup_ino(ino(p), name.as_bytes()).ok()
            == self.client.lookup_ino(ino(np), newname.as_bytes()).ok();
        if !same && let Err(e) = self.orphan_if_open(ino(np), newname.as_bytes()) {
            return reply.error(errno(&e));
        }
        match self.client.rename(ino(p), name.as_bytes(), ino(np), newname.as_bytes()) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn link(&mut self, _req: &Request<'_>, i: u64, np: u64, newname: &OsStr, reply: ReplyEntry) {
        self.entry(self.client.link(ino(i), ino(np), newname.as_bytes()), reply);
    }

    fn open(&mut self, _req: &Request<'_>, i: u64, _flags: i32, reply: ReplyOpen) {
        match self.client.getattr(ino(i)) {
            Ok(_) => {
                self.orphans.opened(i);
                reply.opened(0, 0)
            }
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn release(
        &mut self,
        _req: &Request<'_>,
        i: u64,
        _fh: u64,
        _flags: i32,
        _lock: Option<u64>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.orphans.released(&self.client, i);
        reply.ok();
    }

    fn read(
        &mut self,
        _req: &Request<'_>,
        i: u64,
        _fh: u64,
        off: i64,
        size: u32,
        _f: i32,
        _l: Option<u64>,
        reply: ReplyData,
    ) {
        let mut buf = vec![0u8; size as usize];
        match self.client.read(ino(i), off.max(0) as u64, &mut buf) {
            Ok(n) => reply.data(&buf[..n]),
            Err(e) => reply.error(errno(&e)),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &mut self,
        _req: &Request<'_>,
        i: u64,
        _fh: u64,
        off: i64,
        data: &[u8],
        _wf: u32,
        _f: i32,
        _l: Option<u64>,
        reply: ReplyWrite,
    ) {
        match self.client.write(ino(i), off.max(0) as u64, data) {
            Ok(n) => reply.written(n as u32),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn flush(&mut self, _req: &Request<'_>, _i: u64, _fh: u64, _lock: u64, reply: ReplyEmpty) {
        reply.ok();
    }

    fn fsync(&mut self, _req: &Request<'_>, _i: u64, _fh: u64, _datasync: bool, reply: ReplyEmpty) {
        reply.ok();
    }

    fn readdir(&mut self, _req: &Request<'_>, i: u64, _fh: u64, offset: i64, mut reply: ReplyDirectory) {
        let dir = ino(i);
        let entries = match self.client.readdir(dir) {
            Ok(e) => e,
            Err(e) => return reply.error(errno(&e)),
        };
        let parent = self.client.lookup_ino(dir, b"..").unwrap_or(dir);
        let mut all = vec![
            (dir.0 as u64, fuser::FileType::Directory, b".".to_vec()),
            (parent.0 as u64, fuser::FileType::Directory, b"..".to_vec()),
        ];
        all.extend(
            entries
                .into_iter()
                .filter(|e| !Orphans::is_hidden(dir, &e.name))
                .map(|e| (e.ino.0 as u64, dir_kind(e.ftype, None), e.name)),
        );
        for (k, (ino, kind, name)) in all.into_iter().enumerate().skip(offset.max(0) as usize) {
            if reply.add(ino, (k + 1) as i64, kind, OsStr::from_bytes(&name)) {
                break;
            }
        }
        reply.ok();
    }

    fn statfs(&mut self, _req: &Request<'_>, _i: u64, reply: ReplyStatfs) {
        let s = self.client.statfs();
        reply.statfs(s.blocks, s.free_blocks, s.free_blocks, s.inodes, s.free_inodes, 4096, 255, 4096);
    }

    fn access(&mut self, _req: &Request<'_>, _i: u64, _mask: i32, reply: ReplyEmpty) {
        reply.ok();
    }

    fn create(
        &mut self,
        req: &Request<'_>,
        parent: u64,
        name: &OsStr,
        m: u32,
        _umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        let (gid, _) = self.gid_for(ino(parent), req.gid());
        let m = if m & mode::S_IFMT == 0 { m | mode::S_IFREG } else { m };
        match self.client.create(ino(parent), name.as_bytes(), m, req.uid(), gid, 0, b"") {
            Ok(s) => {
                self.orphans.opened(s.ino.0 as u64);
                reply.created(&TTL, &attr(&s), 0, 0, 0)
            }
            Err(e) => reply.error(errno(&e)),
        }
    }
}
