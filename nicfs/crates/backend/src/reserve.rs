//! Block reservations: a front end reserves the blocks a record may allocate before it logs
//! (and so before it acknowledges) the record, so applying an acknowledged write never fails
//! for lack of space.
//!
//! ```text
//!   front end: Reserve(need, want) ──> grant ≤ available ─> slot.quota += grant  (reserved += grant)
//!              log record (its header says how many blocks it reserved) ─> slot.quota -= reserve
//!   back end:  patch commits a batch ─> reserved -= Σ reserve of its records
//! ```
//!
//! `reserved` (in the allocator) is the sum of every slot's quota and every unapplied record's
//! reservation; logging moves blocks from a quota to a record without changing the sum. After
//! a restart the back end recounts it from the quota words and the unapplied records. A
//! front end that logs while the count is taken may be counted twice (quota read before its
//! decrement, record read after its append): that over-reserves by one record until the next
//! restart, never under-reserves.

use std::sync::atomic::Ordering;

use nicfs_store::FsError;

use crate::shared::Shared;

impl Shared {
    /// Reserves at least `need` and up to `want` blocks for `slot`'s front end and adds them to
    /// its quota. With little space left a front end gets only what it needs, so one front end
    /// cannot hoard what another needs.
    pub(crate) fn grant_blocks(&self, slot: usize, need: u64, want: u64) -> Result<u64, FsError> {
        let mut eng = self.engine();
        let alloc = eng.alloc_mut();
        let want = want.min(alloc.available_blocks() / 16).max(need);
        let n = alloc.reserve_blocks(need, want).ok_or(FsError::NoSpace)?;
        self.comm.slot(slot).quota.fetch_add(n, Ordering::AcqRel);
        Ok(n)
    }

    /// Releases `slot`'s unspent quota (its front end detached or died).
    pub(crate) fn return_quota(&self, slot: usize) {
        let q = self.comm.slot(slot).quota.swap(0, Ordering::AcqRel);
        if q > 0 {
            self.engine().alloc_mut().release_blocks(q);
        }
    }

    /// Sets the reservation count from the quota words and the records not yet applied (of
    /// logs that are not quarantined). Called once, after recovery.
    /// A log whose unapplied headers cannot be read is quarantined (as recovery would).
    pub(crate) fn recount_reservations(&self) {
        let mut total = 0u64;
        for slot in 0..self.logs.len() {
            total += self.comm.slot(slot).quota.load(Ordering::Acquire);
        }
        for (slot, l) in self.logs.iter().enumerate() {
            if self.is_quarantined(slot) {
                continue;
            }
            let (head, tail) = (self.head(slot), self.tail(slot));
            let pending: Result<u64, FsError> = (head..tail)
                .map(|seq| {
                    l.ls.read_header(self.dma.as_ref(), &self.space, seq)
                        .map(|h| h.op.reserved_blocks(h.data_len))
                })
                .sum();
            match pending {
                Ok(n) => total += n,
                Err(e) => self.quarantine(slot, &e),
            }
        }
        self.engine().alloc_mut().set_reserved_blocks(total);
    }

    /// Blocks currently reserved (granted or held by unapplied records).
    pub fn reserved_blocks(&self) -> u64 {
        self.engine().alloc_mut().reserved_blocks()
    }
}
