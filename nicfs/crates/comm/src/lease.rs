//! The lease table: time-limited read/write leases per inode, granted by the back end.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::mono_ns;

/// Set in a lease entry's writer word while the writer is revoked but its log is not yet
/// applied: the holder's checks fail, and every other requester still waits for the drain.
pub const REVOKED: u64 = 1 << 63;

/// Which access a lease allows.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LeaseMode {
    /// Shared: any number of readers.
    Read,
    /// Exclusive: one writer (who may also read).
    Write,
}

impl LeaseMode {
    /// Wire code (1 read, 2 write).
    pub fn code(self) -> u64 {
        match self {
            LeaseMode::Read => 1,
            LeaseMode::Write => 2,
        }
    }

    /// From a wire code.
    pub fn from_code(c: u64) -> Option<LeaseMode> {
        match c {
            1 => Some(LeaseMode::Read),
            2 => Some(LeaseMode::Write),
            _ => None,
        }
    }
}

/// One table entry (one cache line): ino, writer slot + 1, reader bitmap, expiry, the
/// operations in flight under read grants and under write grants, the writer generation and
/// the time of the last grant.
pub struct LeaseEntry<'a> {
    w: &'a [AtomicU64],
}

impl LeaseEntry<'_> {
    /// The inode this entry is for (0 = unused).
    pub fn ino(&self) -> u64 {
        self.w[0].load(Ordering::Acquire)
    }

    /// Writer slot + 1 (0 = none).
    pub fn writer(&self) -> u64 {
        self.w[1].load(Ordering::Acquire)
    }

    /// Bitmap of reader slots.
    pub fn readers(&self) -> u64 {
        self.w[2].load(Ordering::Acquire)
    }

    /// Expiry (monotonic ns); the grant is void after it.
    pub fn expiry(&self) -> u64 {
        self.w[3].load(Ordering::Acquire)
    }

    /// Operations in flight under this entry (read and write grants).
    pub fn active(&self) -> u64 {
        self.w[4].load(Ordering::Acquire) + self.w[5].load(Ordering::Acquire)
    }

    /// Operations in flight under write grants (the only ones that append to a log).
    pub fn active_writes(&self) -> u64 {
        self.w[5].load(Ordering::Acquire)
    }

    fn counter(&self, mode: LeaseMode) -> &AtomicU64 {
        match mode {
            LeaseMode::Read => &self.w[4],
            LeaseMode::Write => &self.w[5],
        }
    }

    /// Writer generation: bumped whenever the writer word changes (a grant, a revocation, the
    /// end of a revocation), so a waiter can tell whether what it observed still holds.
    pub fn generation(&self) -> u64 {
        self.w[6].load(Ordering::SeqCst)
    }

    /// When the current grant was made (monotonic ns).
    pub fn granted_at(&self) -> u64 {
        self.w[7].load(Ordering::Acquire)
    }

    /// Back end: forgets write operations of a writer that died inside them.
    pub fn reset_active_writes(&self) {
        self.w[5].store(0, Ordering::SeqCst);
    }

    /// Back end: records when a grant was made.
    pub fn set_granted_at(&self, now: u64) {
        self.w[7].store(now, Ordering::Release);
    }

    /// Back end: sets the grant. Writers and readers are replaced wholesale.
    pub fn set_grant(&self, ino: u64, writer: u64, readers: u64, expiry: u64) {
        self.w[0].store(ino, Ordering::Release);
        if self.w[1].swap(writer, Ordering::SeqCst) != writer {
            self.w[6].fetch_add(1, Ordering::SeqCst);
        }
        self.w[2].store(readers, Ordering::Release);
        self.w[3].store(expiry, Ordering::SeqCst);
    }

    /// Whether `slot` holds a grant allowing `mode` that is valid for at least `margin_ns`.
    pub fn allows(&self, ino: u64, slot: u32, mode: LeaseMode, margin_ns: u64) -> bool {
        if self.ino() != ino || mono_ns().saturating_add(margin_ns) >= self.expiry() {
            return false;
        }
        let me = slot as u64 + 1;
        match mode {
            LeaseMode::Write => self.writer() == me,
            LeaseMode::Read => self.writer() == me || self.readers() & (1 << slot) != 0,
        }
    }

    /// Front end: starts an operation under `slot`'s grant. Returns false (and undoes the
    /// bump) if the grant does not allow `mode`; on true the caller must call [`exit`].
    ///
    /// [`exit`]: Self::exit
    pub fn enter(&self, ino: u64, slot: u32, mode: LeaseMode, margin_ns: u64) -> bool {
        self.counter(mode).fetch_add(1, Ordering::SeqCst);
        if self.allows(ino, slot, mode, margin_ns) {
            true
        } else {
            self.exit(mode);
            false
        }
    }

    /// Front end: ends an operation started with `enter` in the same mode.
    pub fn exit(&self, mode: LeaseMode) {
        self.counter(mode).fetch_sub(1, Ordering::SeqCst);
    }
}

/// A view of the lease table.
pub struct LeaseTable<'a> {
    words: &'a [AtomicU64],
}

impl<'a> LeaseTable<'a> {
    pub(crate) fn new(words: &'a [AtomicU64]) -> LeaseTable<'a> {
        LeaseTable { words }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.words.len() / 8
    }

    /// Whether the table has no entries (never).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entry `idx`, if in range.
    pub fn entry(&self, idx: usize) -> Option<LeaseEntry<'a>> {
        self.words.get(idx * 8..idx * 8 + 8).map(|w| LeaseEntry { w })
    }

    /// The entry for `ino`, if there is one (never claims). Entries are never emptied once
    /// claimed, so the probe may stop at the first empty entry, as claiming does.
    pub fn find(&self, ino: u64) -> Option<usize> {
        for (i, e) in self.probe(ino) {
            if e.ino() == ino {
                return Some(i);
            }
            if e.ino() == 0 {
                return None;
            }
        }
        None
    }

    /// The entries in the order a lookup of `ino` visits them (open addressing).
    fn probe(&self, ino: u64) -> impl Iterator<Item = (usize, LeaseEntry<'a>)> + '_ {
        let n = self.len();
        let start = (ino as usize).wrapping_mul(0x9E37_79B9) % n;
        (0..n).filter_map(move |k| self.entry((start + k) % n).map(|e| ((start + k) % n, e)))
    }

    /// Back end: the entry for `ino`, claiming a free or expired-and-idle one if needed.
    pub fn find_or_claim(&self, ino: u64) -> Option<usize> {
        let now = mono_ns();
        let mut reusable = None;
        for (i, e) in self.probe(ino) {
            if e.ino() == ino {
                return Some(i);
            }
            if e.ino() == 0 {
                return Some(*reusable.get_or_insert(i)).inspect(|&i| self.claim(i, ino));
            }
            // Only an entry nobody holds can be reused: an expired writer may still have
            // records of that inode in its log, and its entry is what makes others wait.
            if reusable.is_none() && e.expiry() < now && e.active() == 0 && e.writer() == 0 {
                reusable = Some(i);
            }
        }
        reusable.inspect(|&i| self.claim(i, ino))
    }

    fn claim(&self, i: usize, ino: u64) {
        if let Some(e) = self.entry(i)
            && e.ino() != ino
        {
            e.set_grant(ino, 0, 0, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_and_checks() {
        let words: Vec<AtomicU64> = (0..8 * 16).map(|_| AtomicU64::new(0)).collect();
        let t = LeaseTable::new(&words);
        assert_eq!(t.find(42), None);
        let i = t.find_or_claim(42).unwrap();
        assert_eq!(t.find_or_claim(42), Some(i));
        assert_eq!(t.find(42), Some(i));
        let e = t.entry(i).unwrap();
        e.set_grant(42, 3, 0b1, mono_ns() + 1_000_000_000);
        assert!(e.enter(42, 2, LeaseMode::Write, 0));
        assert_eq!(e.active_writes(), 1);
        e.exit(LeaseMode::Write);
        assert!(e.allows(42, 0, LeaseMode::Read, 0));
        assert!(!e.allows(42, 0, LeaseMode::Write, 0));
        assert!(!e.allows(42, 1, LeaseMode::Read, 0));
        assert!(!e.allows(43, 2, LeaseMode::Write, 0));
        assert_eq!(e.active(), 0);
        e.set_grant(42, 3, 0, 0);
        assert!(!e.enter(42, 2, LeaseMode::Write, 0), "expired grants allow nothing");
    }
}
