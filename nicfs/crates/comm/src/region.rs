//! The comm region: a small shared mapping beside the PM file.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use nicfs_pm::{MapError, MappedFile};

use crate::ring::RING_BYTES;
use crate::{LeaseTable, Ring, SeqLocks, pid_alive};

/// Maximum number of front-end slots.
pub const MAX_SLOTS: usize = 64;
const MAGIC: u64 = u64::from_le_bytes(*b"NICFSCOM");
const HEADER: usize = 64;
const SLOT_BYTES: usize = 64 + 2 * RING_BYTES;
const LEASES: usize = 4096;
const SEQLOCKS: usize = 4096;
const SLOTS_AT: usize = HEADER;
const LEASES_AT: usize = SLOTS_AT + MAX_SLOTS * SLOT_BYTES;
const SEQ_AT: usize = LEASES_AT + LEASES * 64;
const TOTAL: usize = (SEQ_AT + SEQLOCKS * 8).div_ceil(4096) * 4096;

/// Why the comm region could not be used.
#[derive(Debug, thiserror::Error)]
pub enum CommError {
    /// Mapping failed.
    #[error(transparent)]
    Map(#[from] MapError),
    /// The file is not a comm region.
    #[error("not a NICFS comm region (bad magic or size)")]
    BadRegion,
}

/// One front end's slot: its owner, its block quota and its two rings.
pub struct Slot<'a> {
    /// Owner pid (0 = free).
    pub owner: &'a AtomicU64,
    /// Data blocks the back end reserved for this slot's front end and it has not yet spent
    /// on logged records. The back end adds to it when it grants a reservation; the front end
    /// subtracts what a record reserves once the record is logged. It belongs to the slot, not
    /// to one owner, and outlives a back-end restart (the region is a file).
    pub quota: &'a AtomicU64,
    /// Front end -> back end.
    pub req: Ring<'a>,
    /// Back end -> front end.
    pub resp: Ring<'a>,
}

/// The shared comm region.
pub struct CommRegion {
    map: MappedFile,
}

impl CommRegion {
    fn words(&self) -> &[AtomicU64] {
        // SAFETY: the mapping is TOTAL bytes, page aligned, lives as long as `self`, and is
        // only ever accessed through atomics.
        unsafe { std::slice::from_raw_parts(self.map.base().cast::<AtomicU64>(), TOTAL / 8) }
    }

    fn init(map: MappedFile) -> CommRegion {
        let r = CommRegion { map };
        r.words()[0].store(MAGIC, Ordering::Release);
        r
    }

    /// Creates (or resets) the region file at `path`; the back end does this at start.
    pub fn create(path: &Path) -> Result<CommRegion, CommError> {
        Ok(Self::init(MappedFile::create(path, TOTAL as u64)?))
    }

    /// A private region for a single process (back end and front ends as threads).
    pub fn anonymous() -> Result<CommRegion, CommError> {
        Ok(Self::init(MappedFile::anonymous(TOTAL as u64)?))
    }

    /// Opens an existing region (front ends).
    pub fn open(path: &Path) -> Result<CommRegion, CommError> {
        let map = MappedFile::open(path)?;
        if map.len() != TOTAL as u64 {
            return Err(CommError::BadRegion);
        }
        let r = CommRegion { map };
        if r.words()[0].load(Ordering::Acquire) != MAGIC {
            return Err(CommError::BadRegion);
        }
        Ok(r)
    }

    /// Back-end pid word.
    pub fn backend_pid(&self) -> &AtomicU64 {
        &self.words()[1]
    }

    /// Back-end heartbeat (monotonic ns of its last poll).
    pub fn heartbeat(&self) -> &AtomicU64 {
        &self.words()[2]
    }

    /// Slot `i` (< MAX_SLOTS).
    pub fn slot(&self, i: usize) -> Slot<'_> {
        let base = (SLOTS_AT + i * SLOT_BYTES) / 8;
        let w = &self.words()[base..base + SLOT_BYTES / 8];
        Slot {
            owner: &w[0],
            quota: &w[1],
            req: Ring::new(&w[8..8 + RING_BYTES / 8]),
            resp: Ring::new(&w[8 + RING_BYTES / 8..]),
        }
    }

    /// Claims a free slot below `nslots` for `pid` (or one whose owner died).
    pub fn claim_slot(&self, pid: u64, nslots: usize) -> Option<usize> {
        for i in 0..nslots.min(MAX_SLOTS) {
            let s = self.slot(i);
            let cur = s.owner.load(Ordering::Acquire);
            if (cur == 0 || !pid_alive(cur))
                && s.owner.compare_exchange(cur, pid, Ordering::AcqRel, Ordering::Acquire).is_ok()
            {
                return Some(i);
            }
        }
        None
    }

    /// The lease table.
    pub fn leases(&self) -> LeaseTable<'_> {
        LeaseTable::new(&self.words()[LEASES_AT / 8..SEQ_AT / 8])
    }

    /// The seqlock array.
    pub fn seqlocks(&self) -> SeqLocks<'_> {
        SeqLocks::new(&self.words()[SEQ_AT / 8..SEQ_AT / 8 + SEQLOCKS])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Msg, MsgKind};

    #[test]
    fn rings_carry_messages_between_two_mappings() {
        let path = std::env::temp_dir().join(format!("nicfs-comm-test-{}", std::process::id()));
        let a = CommRegion::create(&path).unwrap();
        let b = CommRegion::open(&path).unwrap();
        let me = std::process::id() as u64;
        let slot = a.claim_slot(me, 4).unwrap();
        assert_eq!(b.slot(slot).owner.load(Ordering::Acquire), me);
        for i in 0..32 {
            assert!(a.slot(slot).req.push(&Msg::new(MsgKind::Drain, i, &[i as u64])));
        }
        assert!(!a.slot(slot).req.push(&Msg::new(MsgKind::Drain, 99, &[])), "ring holds 32");
        for i in 0..32 {
            assert_eq!(b.slot(slot).req.pop().unwrap().unwrap().id, i);
        }
        assert!(b.slot(slot).req.pop().is_none());
        std::fs::remove_file(path).unwrap();
        assert!(matches!(CommRegion::open(Path::new("/nonexistent/x")), Err(CommError::Map(_))));
    }
}
