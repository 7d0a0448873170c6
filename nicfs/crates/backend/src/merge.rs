//! Stage 3, Merge: fold a batch into per-inode plans with range trees.
//!
//! * inode updates merge (size as one `Max`/`Set` effect, attributes last-writer-wins);
//! * truncations become one range clear (from the smallest size) plus clipping;
//! * data ranges merge in a range map (newer bytes win), and ranges that are contiguous both
//!   in the file and in log data coalesce into one copy;
//! * namespace records stay in order between the merged runs.

use std::collections::{BTreeMap, BTreeSet};

use nicfs_layout::{BLOCK_SIZE, Ino, LogOp, SetAttrMask};
use nicfs_pm::PmAddr;

use crate::fetch::{Batch, Entry};
use crate::locate::Located;

/// Non-overlapping byte ranges of a file, each mapped to a source address in log data.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeMap {
    /// start -> (end, source address of `start`).
    map: BTreeMap<u64, (u64, u64)>,
}

impl RangeMap {
    /// Inserts `[start, end)` from `src`, overwriting overlapped parts of older ranges.
    pub fn insert(&mut self, start: u64, end: u64, src: u64) {
        if start >= end {
            return;
        }
        self.clear(start, end);
        let (mut s, mut e, mut a) = (start, end, src);
        // Coalesce with the left neighbour.
        if let Some((&ls, &(le, la))) = self.map.range(..s).next_back()
            && le == s
            && la + (le - ls) == a
        {
            self.map.remove(&ls);
            s = ls;
            a = la;
        }
        // Coalesce with the right neighbour.
        if let Some(&(re, ra)) = self.map.get(&e)
            && a + (e - s) == ra
        {
            self.map.remove(&e);
            e = re;
        }
        self.map.insert(s, (e, a));
    }

    /// Removes `[start, end)`, splitting ranges that straddle its edges.
    pub fn clear(&mut self, start: u64, end: u64) {
        let overlapping: Vec<(u64, (u64, u64))> =
            self.map.range(..end).filter(|(_, (e, _))| *e > start).map(|(s, v)| (*s, *v)).collect();
        for (s, (e, a)) in overlapping {
            self.map.remove(&s);
            if s < start {
                self.map.insert(s, (start, a));
            }
            if e > end {
                self.map.insert(end, (e, a + (end - s)));
            }
        }
    }

    /// The ranges in file order: (start, end, source).
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64, PmAddr)> + '_ {
        self.map.iter().map(|(s, (e, a))| (*s, *e, PmAddr(*a)))
    }

    /// Number of ranges.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether there are no ranges.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// The merged size effect of a run of writes and truncations.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SizeOp {
    /// No size change.
    Keep,
    /// `size = max(size, n)` (writes only).
    Max(u64),
    /// `size = n` (after a truncation).
    Set(u64),
}

/// Everything a run does to one inode.
#[derive(Clone, Debug)]
pub struct InodePlan {
    /// The inode.
    pub ino: Ino,
    /// Size effect.
    pub size: SizeOp,
    /// Clear (free/zero) everything from this size on first.
    pub min_trunc: Option<u64>,
    /// Data to copy.
    pub ranges: RangeMap,
    /// New permission bits / owner / group / atime / mtime (last writer wins).
    pub mode: Option<u32>,
    /// New owner.
    pub uid: Option<u32>,
    /// New group.
    pub gid: Option<u32>,
    /// New access time.
    pub atime: Option<i64>,
    /// New modification time.
    pub mtime: Option<i64>,
    /// New change time.
    pub ctime: Option<i64>,
    /// File blocks that Data Locate found unallocated: the index-block point set Patch fills.
    pub new_blocks: BTreeSet<u64>,
    /// Records folded into this plan.
    pub records: usize,
}

impl InodePlan {
    fn new(ino: Ino) -> InodePlan {
        InodePlan {
            ino,
            size: SizeOp::Keep,
            min_trunc: None,
            ranges: RangeMap::default(),
            mode: None,
            uid: None,
            gid: None,
            atime: None,
            mtime: None,
            ctime: None,
            new_blocks: BTreeSet::new(),
            records: 0,
        }
    }

    fn write(&mut self, offset: u64, len: u64, src: PmAddr, t: i64) {
        let end = offset + len;
        self.ranges.insert(offset, end, src.get());
        self.size = match self.size {
            SizeOp::Keep => SizeOp::Max(end),
            SizeOp::Max(m) => SizeOp::Max(m.max(end)),
            SizeOp::Set(s) => SizeOp::Set(s.max(end)),
        };
        self.mtime = Some(t);
        self.ctime = Some(t);
    }

    fn truncate(&mut self, size: u64, t: i64) {
        self.ranges.clear(size, u64::MAX);
        self.min_trunc = Some(self.min_trunc.map_or(size, |m| m.min(size)));
        self.size = SizeOp::Set(size);
        self.mtime = Some(t);
        self.ctime = Some(t);
    }

    fn setattr(&mut self, mask: SetAttrMask, mode: u32, uid: u32, gid: u32, times: &[u8], t: i64) {
        let time =
            |i: usize| times.get(i..i + 8).map_or(0, |b| i64::from_le_bytes(b.try_into().expect("8 bytes")));
        if mask.has(SetAttrMask::MODE) {
            self.mode = Some(mode);
        }
        if mask.has(SetAttrMask::UID) {
            self.uid = Some(uid);
        }
        if mask.has(SetAttrMask::GID) {
            self.gid = Some(gid);
        }
        if mask.has(SetAttrMask::ATIME) {
            self.atime = Some(time(0));
        }
        if mask.has(SetAttrMask::MTIME) {
            self.mtime = Some(time(8));
        }
        self.ctime = Some(t);
    }
}

/// One step of a merged batch, applied in order.
#[derive(Clone, Debug)]
pub enum Step {
    /// Merged data and attribute updates (one plan per inode).
    Data(Vec<InodePlan>),
    /// A namespace record, applied on its own.
    Namespace(Entry),
}

/// Merges a batch.
pub fn merge(batch: &Batch, located: &Located) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut run: BTreeMap<Ino, InodePlan> = BTreeMap::new();
    let flush = |run: &mut BTreeMap<Ino, InodePlan>, steps: &mut Vec<Step>| {
        if !run.is_empty() {
            steps.push(Step::Data(std::mem::take(run).into_values().collect()));
        }
    };
    for e in &batch.entries {
        let t = e.hdr.time_ns;
        match e.hdr.op {
            LogOp::Write { ino, offset, .. } => {
                let p = run.entry(ino).or_insert_with(|| InodePlan::new(ino));
                let len = e.hdr.data_len as u64;
                p.write(offset, len, e.src, t);
                p.records += 1;
                let mut fb = offset / BLOCK_SIZE;
                while fb * BLOCK_SIZE < offset + len {
                    if located.blocks.get(&(ino, fb)) == Some(&None) {
                        p.new_blocks.insert(fb);
                    }
                    fb += 1;
                }
            }
            LogOp::Truncate { ino, size } => {
                let p = run.entry(ino).or_insert_with(|| InodePlan::new(ino));
                p.truncate(size, t);
                p.records += 1;
            }
            LogOp::SetAttr { ino, mask, mode, uid, gid } => {
                let p = run.entry(ino).or_insert_with(|| InodePlan::new(ino));
                p.setattr(mask, mode, uid, gid, &e.payload, t);
                p.records += 1;
            }
            _ => {
                flush(&mut run, &mut steps);
                steps.push(Step::Namespace(e.clone()));
            }
        }
    }
    flush(&mut run, &mut steps);
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The model: a byte array where each byte remembers its source address.
    fn model_apply(model: &mut [Option<u64>], start: u64, end: u64, src: u64) {
        for i in start..end {
            model[i as usize] = Some(src + (i - start));
        }
    }

    proptest! {
        #[test]
        fn range_map_matches_a_byte_model(ops in proptest::collection::vec((0u64..200, 1u64..60, 0u64..10_000, any::<bool>()), 1..40)) {
            let mut m = RangeMap::default();
            let mut model = vec![None; 300];
            for (start, len, src, is_clear) in ops {
                let end = start + len;
                if is_clear {
                    m.clear(start, end);
                    for b in &mut model[start as usize..end as usize] { *b = None; }
                } else {
                    m.insert(start, end, src);
                    model_apply(&mut model, start, end, src);
                }
            }
            let mut got = vec![None; 300];
            let mut last_end = 0;
            for (s, e, a) in m.iter() {
                prop_assert!(s < e && s >= last_end, "ranges overlap or are empty");
                last_end = e;
                for i in s..e { got[i as usize] = Some(a.get() + (i - s)); }
            }
            prop_assert_eq!(got, model);
        }
    }

    #[test]
    fn contiguous_log_data_coalesces() {
        let mut m = RangeMap::default();
        m.insert(0, 100, 1000);
        m.insert(100, 200, 1100);
        m.insert(200, 300, 5000);
        assert_eq!(m.len(), 2);
        assert_eq!(m.iter().next(), Some((0, 200, PmAddr(1000))));
    }

    #[test]
    fn namespace_records_split_runs_in_log_order() {
        use crate::fetch::{Batch, Entry};
        use nicfs_layout::LogHeader;
        let e = |seq: u64, op: LogOp| Entry {
            hdr: LogHeader { seq, data_pos: 0, data_len: 10, data_crc: 0, time_ns: seq as i64, op },
            src: PmAddr(1000 * seq),
            payload: vec![b'x'; 1],
        };
        let batch = Batch {
            slot: 0,
            first: 0,
            end: 4,
            entries: vec![
                e(0, LogOp::Write { ino: Ino(5), offset: 0, reserve: 1 }),
                e(1, LogOp::Write { ino: Ino(5), offset: 10, reserve: 1 }),
                e(2, LogOp::Unlink { parent: Ino(1), ino: Ino(5) }),
                e(3, LogOp::Write { ino: Ino(6), offset: 0, reserve: 1 }),
            ],
        };
        let steps = merge(&batch, &Located::default());
        assert_eq!(steps.len(), 3);
        match &steps[0] {
            Step::Data(plans) => {
                assert_eq!(plans.len(), 1);
                assert_eq!(plans[0].records, 2);
                assert_eq!(plans[0].size, SizeOp::Max(20));
                assert_eq!(plans[0].ranges.len(), 2, "not contiguous in log data: no coalescing");
            }
            other => panic!("expected data, got {other:?}"),
        }
        assert!(matches!(&steps[1], Step::Namespace(x) if x.hdr.seq == 2));
        assert!(matches!(&steps[2], Step::Data(p) if p[0].ino == Ino(6)));
    }

    #[test]
    fn truncate_clips_and_sets_size() {
        let mut p = InodePlan::new(Ino(5));
        p.write(0, 8192, PmAddr(0), 1);
        p.truncate(100, 2);
        p.write(200, 10, PmAddr(9000), 3);
        assert_eq!(p.size, SizeOp::Set(210));
        assert_eq!(p.min_trunc, Some(100));
        let r: Vec<_> = p.ranges.iter().collect();
        assert_eq!(r, vec![(0, 100, PmAddr(0)), (200, 210, PmAddr(9000))]);
    }
}
