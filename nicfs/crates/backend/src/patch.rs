//! Stage 4, Patch: apply a merged batch to the public space in one journaled transaction
//! that also advances the log head; bulk data goes through the host copy engine.

use nicfs_comm::SeqLocks;
use nicfs_layout::{Ino, LogOp};
use nicfs_store::{Engine, FsError, LogSpace, Txn};

use crate::copy::{CopyEngine, CopyReq};
use crate::fetch::{Batch, Entry};
use crate::locate::Located;
use crate::merge::{InodePlan, SizeOp, Step, merge};

/// What one patch did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PatchStats {
    /// Records applied (including rejected ones: they are consumed too).
    pub records: u64,
    /// Records rejected because they no longer made sense (logged as warnings).
    pub rejected: u64,
    /// Data bytes copied by the copy engine.
    pub bytes: u64,
    /// Copy requests issued (after coalescing).
    pub copies: u64,
    /// Journal transactions committed.
    pub commits: u64,
}

impl PatchStats {
    fn add(&mut self, o: PatchStats) {
        self.records += o.records;
        self.rejected += o.rejected;
        self.bytes += o.bytes;
        self.copies += o.copies;
        self.commits += o.commits;
    }
}

fn batch_inos(batch: &Batch) -> Vec<Ino> {
    let mut v = Vec::new();
    for e in &batch.entries {
        match e.hdr.op {
            LogOp::Write { ino, .. } | LogOp::Truncate { ino, .. } | LogOp::SetAttr { ino, .. } => {
                v.push(ino)
            }
            LogOp::Create { parent, ino, .. }
            | LogOp::Link { parent, ino }
            | LogOp::Unlink { parent, ino } => v.extend([parent, ino]),
            LogOp::Rename { src_parent, dst_parent, ino, replaced, .. } => {
                v.extend([src_parent, dst_parent, ino, replaced])
            }
        }
    }
    v.sort();
    v.dedup();
    v
}

fn apply_plan(
    txn: &mut Txn<'_>,
    copy: &CopyEngine,
    p: &InodePlan,
    st: &mut PatchStats,
) -> Result<(), FsError> {
    let mut t = txn.get_inode(p.ino)?;
    if t.nlink == 0 {
        return Err(FsError::NotFound);
    }
    if t.is_dir() && (!p.ranges.is_empty() || p.size != SizeOp::Keep) {
        return Err(FsError::IsDir);
    }
    if let Some(m) = p.min_trunc
        && m < t.size
    {
        txn.clear_from(&mut t, m)?;
        t.size = m;
    }
    // Allocate everything first, so that a failure leaves no data copied in place.
    let mut reqs = Vec::new();
    for (s, e, src) in p.ranges.iter() {
        for c in txn.map_write(&mut t, s, e - s)? {
            reqs.push(CopyReq { src: src.add(c.file_off - s), dst: c.dst, len: c.len });
        }
    }
    match p.size {
        SizeOp::Keep => {}
        SizeOp::Max(n) => t.size = t.size.max(n),
        SizeOp::Set(n) => t.size = n,
    }
    if let Some(m) = p.mode {
        t.mode = (t.mode & nicfs_layout::mode::S_IFMT) | (m & 0o7777);
    }
    t.uid = p.uid.unwrap_or(t.uid);
    t.gid = p.gid.unwrap_or(t.gid);
    t.atime = p.atime.unwrap_or(t.atime);
    t.mtime = p.mtime.unwrap_or(t.mtime);
    t.ctime = p.ctime.unwrap_or(t.ctime);
    st.bytes += copy.run(&reqs);
    st.copies += reqs.len() as u64;
    txn.put_inode(p.ino, &t);
    Ok(())
}

fn apply_ns(txn: &mut Txn<'_>, e: &Entry) -> Result<(), FsError> {
    let p = &e.payload;
    let t = e.hdr.time_ns;
    match e.hdr.op {
        LogOp::Create { parent, ino, mode, uid, gid, rdev, name_len } => {
            let n = name_len as usize;
            txn.op_create(parent, ino, mode, uid, gid, rdev, &p[..n], &p[n..], t)
        }
        LogOp::Link { parent, ino } => txn.op_link(parent, ino, p, t),
        LogOp::Unlink { parent, ino } => {
            let is_dir = txn.get_inode(ino)?.is_dir();
            txn.op_remove(parent, p, is_dir, t).map(|_| ())
        }
        LogOp::Rename { src_parent, dst_parent, src_len, .. } => {
            let n = src_len as usize;
            txn.op_rename(src_parent, &p[..n], dst_parent, &p[n..], t)
        }
        _ => Err(FsError::Invalid("not a namespace record")),
    }
}

fn apply(
    eng: &mut Engine,
    copy: &CopyEngine,
    ls: &LogSpace,
    batch: &Batch,
    steps: &[Step],
) -> Result<PatchStats, FsError> {
    let mut st = PatchStats { records: batch.entries.len() as u64, commits: 1, ..PatchStats::default() };
    let mut txn = eng.begin();
    for step in steps {
        match step {
            Step::Data(plans) => {
                for p in plans {
                    let sp = txn.savepoint();
                    if let Err(e) = apply_plan(&mut txn, copy, p, &mut st) {
                        txn.rollback(sp);
                        st.rejected += p.records as u64;
                        eprintln!("nicfs-backend: log {}: rejected update of {}: {e}", ls.index, p.ino);
                    }
                }
            }
            Step::Namespace(e) => {
                let sp = txn.savepoint();
                if let Err(err) = apply_ns(&mut txn, e) {
                    txn.rollback(sp);
                    st.rejected += 1;
                    eprintln!(
                        "nicfs-backend: log {} seq {}: rejected {:?}: {err}",
                        ls.index, e.hdr.seq, e.hdr.op
                    );
                }
            }
        }
    }
    txn.write_meta(ls.head_addr(), &ls.head_words(batch.end));
    txn.commit()?;
    eng.alloc_mut().release_blocks(batch.reserved_blocks());
    Ok(st)
}

/// Applies `batch` (merged into `steps`) and advances the log head past it, atomically.
/// A transaction too large for the journal is split in halves, each re-merged.
pub fn patch(
    eng: &mut Engine,
    copy: &CopyEngine,
    locks: Option<&SeqLocks<'_>>,
    ls: &LogSpace,
    batch: &Batch,
    steps: &[Step],
) -> Result<PatchStats, FsError> {
    let inos = batch_inos(batch);
    if let Some(l) = locks {
        inos.iter().for_each(|i| l.write_begin(i.0));
    }
    let r = match apply(eng, copy, ls, batch, steps) {
        Err(FsError::TxnTooLarge { .. }) if batch.entries.len() > 1 => {
            let mid = batch.entries.len() / 2;
            let first = Batch {
                slot: batch.slot,
                first: batch.first,
                end: batch.first + mid as u64,
                entries: batch.entries[..mid].to_vec(),
            };
            let second = Batch {
                slot: batch.slot,
                first: first.end,
                end: batch.end,
                entries: batch.entries[mid..].to_vec(),
            };
            let mut total = PatchStats::default();
            let mut res = Ok(());
            for half in [first, second] {
                let steps = merge(&half, &Located::default());
                match patch(eng, copy, None, ls, &half, &steps) {
                    Ok(s) => total.add(s),
                    Err(e) => {
                        res = Err(e);
                        break;
                    }
                }
            }
            res.map(|_| total)
        }
        other => other,
    };
    if let Some(l) = locks {
        inos.iter().for_each(|i| l.write_end(i.0));
    }
    r
}
