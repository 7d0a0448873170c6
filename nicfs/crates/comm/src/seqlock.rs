//! Per-inode sequence locks guarding public-space reads against concurrent patching.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::mono_ns;

/// A view of the seqlock array. Inodes hash to buckets; a bucket is odd while the back end
/// patches any inode in it. There is one writer at a time (the back end's patch lock).
pub struct SeqLocks<'a> {
    words: &'a [AtomicU64],
}

impl<'a> SeqLocks<'a> {
    pub(crate) fn new(words: &'a [AtomicU64]) -> SeqLocks<'a> {
        SeqLocks { words }
    }

    fn bucket(&self, ino: u32) -> &AtomicU64 {
        &self.words[ino as usize % self.words.len()]
    }

    /// Writer: marks `ino` as being patched (idempotent within one patch).
    pub fn write_begin(&self, ino: u32) {
        let b = self.bucket(ino);
        if b.load(Ordering::Relaxed).is_multiple_of(2) {
            b.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Writer: ends the patch of `ino`.
    pub fn write_end(&self, ino: u32) {
        let b = self.bucket(ino);
        if b.load(Ordering::Relaxed) % 2 == 1 {
            b.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Back end at start: ends any patch a crashed predecessor left open (odd counters).
    pub fn reset_all(&self) {
        for b in self.words {
            if b.load(Ordering::Acquire) % 2 == 1 {
                b.fetch_add(1, Ordering::AcqRel);
            }
        }
    }

    /// Reader: waits until no patch is in progress and returns the counter. After
    /// `stale_ns` of waiting on an odd counter (a back end that died mid-patch) it returns
    /// anyway; the caller's retry check then fails safe only if the back end restarts.
    pub fn read_begin(&self, ino: u32, stale_ns: u64) -> u64 {
        let b = self.bucket(ino);
        let start = mono_ns();
        loop {
            let v = b.load(Ordering::Acquire);
            if v.is_multiple_of(2) || mono_ns() - start > stale_ns {
                return v;
            }
            std::thread::yield_now();
        }
    }

    /// Reader: whether a read that began at `v` must be retried.
    pub fn read_retry(&self, ino: u32, v: u64) -> bool {
        std::sync::atomic::fence(Ordering::Acquire);
        self.bucket(ino).load(Ordering::Acquire) != v
    }
}
