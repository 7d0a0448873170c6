//! The per-process client: attachment to a log space, leases, and data operations.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};

use nicfs_comm::{CommRegion, LeaseMode, MsgKind};
use nicfs_layout::{FileType, Ino, Inode, LogOp, SetAttrMask};
use nicfs_pm::SharedPm;
use nicfs_store::{FsError, LogSpace, Space, blocks_to_map, now_ns, read_inode};

use crate::channel::{Link, RingLink};
use crate::logwriter::LogWriter;
use crate::updates::{DirUpdates, FileUpdates};
use crate::{FrontendConfig, Stat};

/// Blocks asked for at a time when the quota runs short (the back end grants less when space
/// is scarce): 1 MiB, so a stream of small writes asks about once per 256 blocks.
const GRANT_BLOCKS: u64 = 256;

/// Mutable per-process state, behind one lock.
pub(crate) struct State {
    pub(crate) log: LogWriter,
    pub(crate) chan: Box<dyn Link>,
    /// Inode cache: logical inode views, valid while the inode's lease is held.
    pub(crate) inodes: HashMap<Ino, Inode>,
    /// Latest logged state of each inode this process changed: (seq, inode).
    pub(crate) snaps: HashMap<Ino, (u64, Inode)>,
    /// Directory views: name -> (inode, type).
    pub(crate) dirs: HashMap<Ino, BTreeMap<Vec<u8>, (Ino, FileType)>>,
    pub(crate) dir_pending: DirUpdates,
    /// Per-file, per-block update lists.
    pub(crate) files: HashMap<Ino, FileUpdates>,
    pub(crate) leases: HashMap<Ino, usize>,
    pub(crate) free_inos: Vec<Ino>,
}

/// A front end attached to one private log space. All methods take `&self` and may be called
/// from many threads (they serialise on one internal lock).
pub struct Client {
    pub(crate) pm: SharedPm,
    pub(crate) space: Space,
    pub(crate) comm: Arc<CommRegion>,
    pub(crate) slot: u32,
    pub(crate) cfg: FrontendConfig,
    st: Mutex<State>,
}

impl Client {
    /// Attaches to a free log space. The back end must be running (it answers `Hello` once
    /// any leftover records of a dead previous owner are applied).
    pub fn attach(pm: SharedPm, comm: Arc<CommRegion>, cfg: FrontendConfig) -> Result<Client, FsError> {
        cfg.validate().map_err(|_| FsError::Invalid("front-end configuration"))?;
        let space = Space::open(pm.clone())?;
        let pid = std::process::id() as u64;
        let slot = comm
            .claim_slot(pid, space.geo_ref().log_spaces as usize)
            .ok_or_else(|| FsError::Backend("no free log space".into()))?;
        comm.slot(slot).resp.reset();
        let link = Box::new(RingLink::new(comm.clone(), slot, cfg.request_timeout_ms, cfg.backend_wait_ms));
        match Client::attach_with(pm, comm.clone(), slot as u32, link, cfg) {
            Ok(c) => Ok(c),
            Err(e) => {
                comm.slot(slot).owner.store(0, std::sync::atomic::Ordering::Release);
                Err(e)
            }
        }
    }

    /// Attaches to log space `slot` through an explicit link (e.g. a back end running in the
    /// same thread, for deterministic tests). The caller owns the slot.
    pub fn attach_with(
        pm: SharedPm,
        comm: Arc<CommRegion>,
        slot: u32,
        mut chan: Box<dyn Link>,
        cfg: FrontendConfig,
    ) -> Result<Client, FsError> {
        cfg.validate().map_err(|_| FsError::Invalid("front-end configuration"))?;
        let space = Space::open(pm.clone())?;
        chan.call(MsgKind::Hello, &[std::process::id() as u64])?;
        let ls = LogSpace::open(&space, slot)?;
        let log = LogWriter::open(pm.as_ref(), ls);
        let st = State {
            log,
            chan,
            inodes: HashMap::new(),
            snaps: HashMap::new(),
            dirs: HashMap::new(),
            dir_pending: HashMap::new(),
            files: HashMap::new(),
            leases: HashMap::new(),
            free_inos: Vec::new(),
        };
        Ok(Client { pm, space, comm, slot, cfg, st: Mutex::new(st) })
    }

    /// The log space (and comm slot) this client writes.
    pub fn slot(&self) -> u32 {
        self.slot
    }

    /// The public space.
    pub fn space(&self) -> &Space {
        &self.space
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Number of this process's log records not yet applied by the back end.
    pub fn pending_records(&self) -> u64 {
        let st = self.lock();
        st.log.tail() - st.log.space().head(self.pm.as_ref())
    }

    /// Whether a record with `len` payload bytes can be logged now without waiting for the
    /// back end to apply older ones (back-pressure). A driver that runs the back end itself
    /// checks this before a call that logs.
    pub fn log_room(&self, len: u64) -> bool {
        let mut st = self.lock();
        let State { log, .. } = &mut *st;
        log.has_room(self.pm.as_ref(), len)
    }

    /// Waits until the back end has applied every record this process logged.
    pub fn sync_all(&self) -> Result<(), FsError> {
        let mut st = self.lock();
        let tail = st.log.tail();
        if tail == 0 || st.log.space().head(self.pm.as_ref()) >= tail {
            return Ok(());
        }
        let State { chan, .. } = &mut *st;
        chan.call(MsgKind::Drain, &[tail - 1])?;
        Ok(())
    }

    fn ensure(&self, st: &mut State, ino: Ino, mode: LeaseMode) -> Result<usize, FsError> {
        let margin = self.cfg.lease_margin_ms * 1_000_000;
        if let Some(&idx) = st.leases.get(&ino)
            && self.comm.leases().entry(idx).is_some_and(|e| e.allows(ino.0 as u64, self.slot, mode, margin))
        {
            return Ok(idx);
        }
        let r = st.chan.call(MsgKind::LeaseReq, &[ino.0 as u64, mode.code()])?;
        let idx = r.args[0] as usize;
        if self.comm.leases().entry(idx).is_none() {
            return Err(FsError::Backend("lease index out of range".into()));
        }
        st.leases.insert(ino, idx);
        // The grant is new: whatever we cached about `ino` may be stale.
        st.inodes.remove(&ino);
        st.dirs.remove(&ino);
        Ok(idx)
    }

    /// Whether the back end is gone (its process died and no new one has started yet).
    fn backend_down(&self) -> bool {
        let pid = self.comm.backend_pid().load(Ordering::Acquire);
        pid != 0 && !nicfs_comm::pid_alive(pid)
    }

    /// Whether `ino` can be read without a lease while the back end is down: no other front
    /// end can have acknowledged updates of it that are not in the public space. That holds
    /// when nobody else holds its write grant, or the other writer's grant has expired (so it
    /// cannot start another write until a back end returns), it has no write in flight, and
    /// its log is fully applied.
    fn readable_without_lease(&self, ino: Ino) -> bool {
        let table = self.comm.leases();
        let Some(e) = table.find(ino.0 as u64).and_then(|i| table.entry(i)) else { return true };
        let w = e.writer() & !nicfs_comm::REVOKED;
        if w == 0 || w == self.slot as u64 + 1 {
            return true;
        }
        let applied = LogSpace::open(&self.space, (w - 1) as u32)
            .is_ok_and(|ls| ls.head(self.pm.as_ref()) >= ls.tail(self.pm.as_ref()));
        e.expiry() <= nicfs_comm::mono_ns() && e.active_writes() == 0 && applied
    }

    /// Runs `f` while holding leases `need` (each at least in the given mode).
    ///
    /// While the back end is down, read leases that cannot be had are not needed where
    /// [`readable_without_lease`](Self::readable_without_lease) allows: reads of applied data
    /// keep working. Cached views of such inodes are dropped first (no grant vouches for them).
    /// Everything else waits for the back end (see `FrontendConfig::backend_wait_ms`).
    pub(crate) fn with_leases<R>(
        &self,
        st: &mut State,
        need: &[(Ino, LeaseMode)],
        f: impl FnOnce(&Client, &mut State) -> Result<R, FsError>,
    ) -> Result<R, FsError> {
        let mut uniq: Vec<(Ino, LeaseMode)> = Vec::new();
        for &(ino, m) in need {
            match uniq.iter_mut().find(|(i, _)| *i == ino) {
                Some(e) if m == LeaseMode::Write => e.1 = m,
                Some(_) => {}
                None => uniq.push((ino, m)),
            }
        }
        let margin = self.cfg.lease_margin_ms * 1_000_000;
        if uniq.iter().all(|&(_, m)| m == LeaseMode::Read) && self.backend_down() {
            let held = |&(ino, m): &(Ino, LeaseMode)| {
                st.leases.get(&ino).is_some_and(|&i| {
                    self.comm.leases().entry(i).is_some_and(|e| e.allows(ino.0 as u64, self.slot, m, margin))
                })
            };
            if !uniq.iter().all(held) && uniq.iter().all(|&(ino, _)| self.readable_without_lease(ino)) {
                for (ino, _) in &uniq {
                    st.inodes.remove(ino);
                    st.dirs.remove(ino);
                }
                return f(self, st);
            }
        }
        let table = self.comm.leases();
        let mut f = Some(f);
        for _attempt in 0..10_000 {
            let mut idxs = Vec::with_capacity(uniq.len());
            for &(ino, m) in &uniq {
                idxs.push(self.ensure(st, ino, m)?);
            }
            let mut entered = 0;
            for (k, &(ino, m)) in uniq.iter().enumerate() {
                let e = table.entry(idxs[k]).expect("checked in ensure");
                if !e.enter(ino.0 as u64, self.slot, m, 0) {
                    break;
                }
                entered += 1;
            }
            if entered == uniq.len() {
                let r = (f.take().expect("called once"))(self, st);
                for (k, &i) in idxs.iter().enumerate() {
                    table.entry(i).expect("checked").exit(uniq[k].1);
                }
                return r;
            }
            for (k, &i) in idxs[..entered].iter().enumerate() {
                table.entry(i).expect("checked").exit(uniq[k].1);
            }
        }
        Err(FsError::Backend("could not keep leases (livelock)".into()))
    }

    /// Makes sure this slot's quota covers `need` blocks, asking the back end for more. When
    /// the back end has too few, the records of this front end that it has not applied yet
    /// may be what holds the space (their reservations, or the blocks of files they remove),
    /// so it drains this log and asks once more before failing with [`FsError::NoSpace`].
    pub(crate) fn ensure_quota(&self, st: &mut State, need: u64) -> Result<(), FsError> {
        let quota = self.comm.slot(self.slot as usize).quota;
        for attempt in 0..2 {
            let have = quota.load(Ordering::Acquire);
            if have >= need {
                return Ok(());
            }
            match st.chan.call(MsgKind::Reserve, &[need - have, (need - have).max(GRANT_BLOCKS)]) {
                Ok(_) => return Ok(()),
                Err(FsError::NoSpace) if attempt == 0 => {
                    let tail = st.log.tail();
                    if tail > 0 && st.log.space().head(self.pm.as_ref()) < tail {
                        st.chan.call(MsgKind::Drain, &[tail - 1])?;
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Err(FsError::NoSpace)
    }

    /// The blocks a write of `len` bytes at `offset` may allocate when applied: the holes of
    /// the range in the public space (and the index blocks above them), or the worst case
    /// while a truncation of this front end that could free blocks in between is pending.
    /// The write lease on `ino` keeps every other front end from changing it meanwhile.
    fn write_reserve(&self, st: &State, ino: Ino, offset: u64, len: u64) -> Result<u32, FsError> {
        let head = self.head(st);
        let worst = Inode::worst_case_blocks(offset, len);
        let n = if st.files.get(&ino).is_some_and(|f| f.has_pending_trunc(head)) {
            worst
        } else {
            self.stable(ino, || {
                let pi = read_inode(&self.space, ino)?;
                if pi.nlink == 0 { Ok(worst) } else { blocks_to_map(&self.space, &pi, offset, len) }
            })?
        };
        u32::try_from(n).map_err(|_| FsError::TooBig)
    }

    /// Appends a record and returns its sequence number and payload address; also prunes
    /// applied update lists now and then. The blocks the record reserves come out of the
    /// slot's quota (asked for first if short), so a record that could not be applied for
    /// lack of space is never logged.
    pub(crate) fn append(
        &self,
        st: &mut State,
        op: LogOp,
        payload: &[&[u8]],
        time: i64,
    ) -> Result<(u64, nicfs_pm::PmAddr), FsError> {
        let len: u64 = payload.iter().map(|p| p.len() as u64).sum();
        let need = op.reserved_blocks(len as u32);
        self.ensure_quota(st, need)?;
        let State { log, chan, .. } = st;
        let r = log.append(self.pm.as_ref(), chan.as_mut(), op, payload, time)?;
        // Logged: the record holds the reservation now (the back end releases it on apply).
        let quota = self.comm.slot(self.slot as usize).quota;
        let _ = quota.fetch_update(Ordering::AcqRel, Ordering::Acquire, |q| Some(q.saturating_sub(need)));
        if st.log.appends_since_prune >= 1024 {
            st.log.appends_since_prune = 0;
            let h = st.log.space().head(self.pm.as_ref());
            st.files.retain(|_, f| {
                f.prune(h);
                !f.is_empty()
            });
            st.dir_pending.retain(|_, v| {
                v.retain(|u| u.seq >= h);
                !v.is_empty()
            });
            st.snaps.retain(|_, (s, _)| *s >= h);
        }
        Ok(r)
    }

    pub(crate) fn record(&self, st: &mut State, ino: Ino, seq: u64, inode: Inode) {
        st.snaps.insert(ino, (seq, inode.clone()));
        st.inodes.insert(ino, inode);
    }

    /// Attributes of `ino`.
    pub fn getattr(&self, ino: Ino) -> Result<Stat, FsError> {
        let mut st = self.lock();
        self.with_leases(&mut st, &[(ino, LeaseMode::Read)], |c, st| {
            Ok(Stat::of(ino, &c.inode_view(st, ino)?))
        })
    }

    /// Reads up to `buf.len()` bytes at `offset`; returns the count (0 at end of file).
    pub fn read(&self, ino: Ino, offset: u64, buf: &mut [u8]) -> Result<usize, FsError> {
        let mut st = self.lock();
        self.with_leases(&mut st, &[(ino, LeaseMode::Read)], |c, st| c.read_locked(st, ino, offset, buf))
    }

    /// Writes `data` at `offset`; durable on return.
    pub fn write(&self, ino: Ino, offset: u64, data: &[u8]) -> Result<usize, FsError> {
        let mut st = self.lock();
        self.with_leases(&mut st, &[(ino, LeaseMode::Write)], |c, st| {
            let mut v = c.inode_view(st, ino)?;
            if v.is_dir() {
                return Err(FsError::IsDir);
            }
            let end = offset.checked_add(data.len() as u64).ok_or(FsError::TooBig)?;
            if end > Inode::max_size() {
                return Err(FsError::TooBig);
            }
            let max = c.cfg.max_record_bytes.min(st.log.space().geo.data_bytes / 4) as usize;
            // Reserve for every record first: a write that cannot be applied fails here, with
            // nothing logged, instead of being acknowledged and rejected later.
            let mut reserves = Vec::new();
            let mut off = offset;
            for chunk in data.chunks(max.max(1)) {
                reserves.push(c.write_reserve(st, ino, off, chunk.len() as u64)?);
                off += chunk.len() as u64;
            }
            c.ensure_quota(st, reserves.iter().map(|&r| r as u64).sum())?;
            let mut off = offset;
            for (chunk, reserve) in data.chunks(max.max(1)).zip(reserves) {
                let t = now_ns();
                let (seq, src) = c.append(st, LogOp::Write { ino, offset: off, reserve }, &[chunk], t)?;
                st.files.entry(ino).or_default().add_write(seq, off, chunk.len() as u64, src);
                off += chunk.len() as u64;
                v.size = v.size.max(off);
                v.mtime = t;
                v.ctime = t;
                c.record(st, ino, seq, v.clone());
            }
            Ok(data.len())
        })
    }

    /// Sets the size of `ino`.
    pub fn truncate(&self, ino: Ino, size: u64) -> Result<(), FsError> {
        let mut st = self.lock();
        self.with_leases(&mut st, &[(ino, LeaseMode::Write)], |c, st| {
            let mut v = c.inode_view(st, ino)?;
            if v.is_dir() {
                return Err(FsError::IsDir);
            }
            if size > Inode::max_size() {
                return Err(FsError::TooBig);
            }
            let t = now_ns();
            let (seq, _) = c.append(st, LogOp::Truncate { ino, size }, &[], t)?;
            st.files.entry(ino).or_default().add_trunc(seq, size);
            v.size = size;
            v.mtime = t;
            v.ctime = t;
            c.record(st, ino, seq, v);
            Ok(())
        })
    }

    /// Changes attributes selected by `mask` (see [`SetAttrMask`]).
    #[allow(clippy::too_many_arguments)]
    pub fn setattr(
        &self,
        ino: Ino,
        mask: SetAttrMask,
        mode: u32,
        uid: u32,
        gid: u32,
        atime: i64,
        mtime: i64,
    ) -> Result<Stat, FsError> {
        let mut st = self.lock();
        self.with_leases(&mut st, &[(ino, LeaseMode::Write)], |c, st| {
            let mut v = c.inode_view(st, ino)?;
            let t = now_ns();
            let mut times = [0u8; 16];
            times[..8].copy_from_slice(&atime.to_le_bytes());
            times[8..].copy_from_slice(&mtime.to_le_bytes());
            let (seq, _) = c.append(st, LogOp::SetAttr { ino, mask, mode, uid, gid }, &[&times], t)?;
            if mask.has(SetAttrMask::MODE) {
                v.mode = (v.mode & nicfs_layout::mode::S_IFMT) | (mode & 0o7777);
            }
            if mask.has(SetAttrMask::UID) {
                v.uid = uid;
            }
            if mask.has(SetAttrMask::GID) {
                v.gid = gid;
            }
            if mask.has(SetAttrMask::ATIME) {
                v.atime = atime;
            }
            if mask.has(SetAttrMask::MTIME) {
                v.mtime = mtime;
            }
            v.ctime = t;
            c.record(st, ino, seq, v.clone());
            Ok(Stat::of(ino, &v))
        })
    }

    pub(crate) fn take_ino(&self, st: &mut State) -> Result<Ino, FsError> {
        if let Some(i) = st.free_inos.pop() {
            return Ok(i);
        }
        let r = st.chan.call(MsgKind::AllocInodes, &[6])?;
        let n = (r.args[0] as usize).min(6);
        if n == 0 {
            return Err(FsError::NoSpace);
        }
        for k in 0..n {
            let ino = Ino(r.args[1 + k] as u32);
            if !self.space.geo_ref().is_valid_ino(ino) {
                return Err(FsError::Backend("granted inode out of range".into()));
            }
            st.free_inos.push(ino);
        }
        Ok(st.free_inos.pop().expect("n > 0"))
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // A dead back end cannot hear it (and waiting for a new one would stall the exit); the
        // next back end reaps the slot once this process is gone.
        if self.backend_down() {
            return;
        }
        let st = self.st.get_mut().unwrap_or_else(|e| e.into_inner());
        let _ = st.chan.call(MsgKind::Goodbye, &[]);
    }
}
