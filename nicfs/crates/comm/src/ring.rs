//! A single-producer single-consumer ring of 64-byte messages in shared memory.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::Msg;

/// Entries per ring.
pub const RING_ENTRIES: usize = 32;
/// Bytes a ring occupies: head line, tail line, entries.
pub const RING_BYTES: usize = 128 + RING_ENTRIES * 64;

/// A view of one ring inside the comm region.
pub struct Ring<'a> {
    head: &'a AtomicU64,
    tail: &'a AtomicU64,
    slots: &'a [AtomicU64],
}

impl<'a> Ring<'a> {
    /// Views `words` (RING_BYTES / 8 atomics) as a ring.
    pub(crate) fn new(words: &'a [AtomicU64]) -> Ring<'a> {
        Ring { head: &words[0], tail: &words[8], slots: &words[16..16 + RING_ENTRIES * 8] }
    }

    /// Enqueues (producer only); false if full.
    pub fn push(&self, m: &Msg) -> bool {
        let t = self.tail.load(Ordering::Relaxed);
        if t.wrapping_sub(self.head.load(Ordering::Acquire)) >= RING_ENTRIES as u64 {
            return false;
        }
        let i = (t % RING_ENTRIES as u64) as usize * 8;
        for (k, w) in m.encode().iter().enumerate() {
            self.slots[i + k].store(*w, Ordering::Relaxed);
        }
        self.tail.store(t.wrapping_add(1), Ordering::Release);
        true
    }

    /// Dequeues (consumer only). A slot that does not decode is skipped and reported as
    /// `Some(None)` so that a corrupt region cannot wedge the consumer.
    pub fn pop(&self) -> Option<Option<Msg>> {
        let h = self.head.load(Ordering::Relaxed);
        if h == self.tail.load(Ordering::Acquire) {
            return None;
        }
        let i = (h % RING_ENTRIES as u64) as usize * 8;
        let mut w = [0u64; 8];
        for (k, x) in w.iter_mut().enumerate() {
            *x = self.slots[i + k].load(Ordering::Relaxed);
        }
        self.head.store(h.wrapping_add(1), Ordering::Release);
        Some(Msg::decode(&w))
    }

    /// Drops everything queued (used when a slot changes owner).
    pub fn reset(&self) {
        self.head.store(self.tail.load(Ordering::Acquire), Ordering::Release);
    }
}
