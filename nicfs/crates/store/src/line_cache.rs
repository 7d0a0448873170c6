//! A cache of index-block lines (64 bytes = 16 block pointers), shared by the back end's
//! Data Locate and Patch stages so that resolving a file block rarely needs a DMA transfer.

use std::sync::Mutex;

/// Hit/miss counters.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct LineCacheStats {
    /// Lookups served from the cache.
    pub hits: u64,
    /// Lookups that went to PM.
    pub misses: u64,
}

struct Inner {
    epoch: u64,
    lines: crate::IntMap<u64, [u8; 64]>,
    order: Vec<u64>,
    hand: usize,
    stats: LineCacheStats,
}

/// A bounded cache keyed by PM line address, with clock-style replacement.
///
/// Writers of index lines must call [`update`](Self::update) (write-through) or
/// [`invalidate_all`](Self::invalidate_all); the cache never reads PM itself.
pub struct LineCache {
    capacity: usize,
    inner: Mutex<Inner>,
}

impl LineCache {
    /// A cache of at most `capacity` lines; 0 disables caching.
    pub fn new(capacity: usize) -> LineCache {
        LineCache {
            capacity,
            inner: Mutex::new(Inner {
                epoch: 0,
                lines: crate::IntMap::default(),
                order: Vec::new(),
                hand: 0,
                stats: LineCacheStats::default(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cached line at `addr`, counting a hit or a miss.
    pub fn get(&self, addr: u64) -> Option<[u8; 64]> {
        let mut g = self.lock();
        let r = g.lines.get(&addr).copied();
        if r.is_some() {
            g.stats.hits += 1
        } else {
            g.stats.misses += 1
        }
        r
    }

    /// Inserts or replaces the line at `addr`.
    pub fn update(&self, addr: u64, line: [u8; 64]) {
        let mut g = self.lock();
        self.insert_locked(&mut g, addr, line);
    }

    fn insert_locked(&self, g: &mut Inner, addr: u64, line: [u8; 64]) {
        if self.capacity == 0 {
            return;
        }
        if g.lines.insert(addr, line).is_none() {
            if g.order.len() < self.capacity {
                g.order.push(addr);
            } else {
                let hand = g.hand;
                let victim = std::mem::replace(&mut g.order[hand], addr);
                g.lines.remove(&victim);
                g.hand = (hand + 1) % self.capacity;
            }
        }
    }

    /// The commit epoch; read it before reading a line from PM and pass it to
    /// [`insert_if_current`](Self::insert_if_current).
    pub fn epoch(&self) -> u64 {
        self.lock().epoch
    }

    /// Inserts a line read from PM unless a commit was applied since `epoch` was read (the
    /// line might then be stale).
    pub fn insert_if_current(&self, addr: u64, line: [u8; 64], epoch: u64) {
        // Check and insert under one lock: a commit in between would make `line` stale.
        let mut g = self.lock();
        if g.epoch == epoch {
            self.insert_locked(&mut g, addr, line);
        }
    }

    /// Called after a commit has applied `lines` to PM: bumps the epoch and refreshes any
    /// cached copies.
    pub fn committed<'a>(&self, lines: impl Iterator<Item = (u64, &'a [u8; 64])>) {
        let mut g = self.lock();
        g.epoch += 1;
        for (addr, l) in lines {
            if let Some(c) = g.lines.get_mut(&addr) {
                *c = *l;
            }
        }
    }

    /// Drops the 64 lines of the block starting at byte `start`.
    pub fn invalidate_block(&self, start: u64) {
        let mut g = self.lock();
        if g.lines.is_empty() {
            return;
        }
        for i in 0..64 {
            g.lines.remove(&(start + i * 64));
        }
    }

    /// Inserts a line only if it is already cached (keeps cached copies coherent).
    pub fn refresh(&self, addr: u64, line: [u8; 64]) {
        let mut g = self.lock();
        if let Some(l) = g.lines.get_mut(&addr) {
            *l = line;
        }
    }

    /// Drops everything (after an aborted transaction).
    pub fn invalidate_all(&self) {
        let mut g = self.lock();
        g.lines.clear();
        g.order.clear();
        g.epoch += 1;
        g.hand = 0;
    }

    /// Counters so far.
    pub fn stats(&self) -> LineCacheStats {
        self.lock().stats
    }

    /// Whether caching is enabled.
    pub fn enabled(&self) -> bool {
        self.capacity > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_and_counts() {
        let c = LineCache::new(2);
        c.update(0, [1; 64]);
        c.update(64, [2; 64]);
        c.update(128, [3; 64]);
        assert_eq!(c.get(128), Some([3; 64]));
        assert_eq!(c.get(0), None);
        assert_eq!(c.stats(), LineCacheStats { hits: 1, misses: 1 });
        // A line read before a commit must not be inserted after it (regression: the check
        // and the insert once took the lock separately).
        let e = c.epoch();
        c.committed(std::iter::empty());
        c.insert_if_current(192, [9; 64], e);
        assert_eq!(c.get(192), None);
        let off = LineCache::new(0);
        off.update(0, [1; 64]);
        assert_eq!(off.get(0), None);
    }
}
