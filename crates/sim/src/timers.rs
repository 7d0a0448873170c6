//! The timer queue: a binary heap over (instant, sequence number) keys.
//!
//! The sequence number in the key makes keys unique, so the order is total: earlier instant
//! first, ties in the order the timers were set (the executor's ordering rule 1). (A radix
//! heap, which exploits that timers are never set in the past, measured slower here: the
//! queue is a few hundred timers deep and their instants span microseconds to milliseconds,
//! so entries moved between buckets more often than a binary heap moves them.)

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A timer's key: its instant (high 64 bits) and sequence number (low 64 bits).
pub(crate) type Key = u128;

/// The key of a timer at `at_ns` set `seq`-th.
pub(crate) fn key(at_ns: u64, seq: u64) -> Key {
    ((at_ns as u128) << 64) | seq as u128
}

/// The instant of a key, in nanoseconds.
pub(crate) fn instant(key: Key) -> u64 {
    (key >> 64) as u64
}

struct Entry<A> {
    key: Key,
    action: A,
}

impl<A> PartialEq for Entry<A> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl<A> Eq for Entry<A> {}
impl<A> PartialOrd for Entry<A> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<A> Ord for Entry<A> {
    /// Reversed, so that the heap pops the smallest key first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
    }
}

/// A priority queue of timers, smallest key first.
pub(crate) struct Timers<A> {
    heap: BinaryHeap<Entry<A>>,
}

impl<A> Default for Timers<A> {
    fn default() -> Self {
        Timers { heap: BinaryHeap::new() }
    }
}

impl<A> Timers<A> {
    /// Adds a timer.
    pub fn push(&mut self, key: Key, action: A) {
        self.heap.push(Entry { key, action });
    }

    /// Timers queued.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// The smallest key, if any.
    pub fn peek(&self) -> Option<Key> {
        self.heap.peek().map(|e| e.key)
    }

    /// Removes and returns the timer with the smallest key.
    pub fn pop(&mut self) -> Option<(Key, A)> {
        self.heap.pop().map(|e| (e.key, e.action))
    }

    /// Takes every timer out, in no particular order.
    pub fn drain(&mut self) -> Vec<A> {
        self.heap.drain().map(|e| e.action).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Popping returns every timer in (instant, sequence) order, whatever the mix of
        /// pushes and pops, as long as nothing is pushed into the past.
        #[test]
        fn pops_in_key_order(ops in proptest::collection::vec((any::<bool>(), 0u64..5_000), 1..400)) {
            let mut t = Timers::default();
            let mut model: Vec<Key> = Vec::new();
            let (mut now, mut seq) = (0u64, 0u64);
            for (pop, d) in ops {
                if pop {
                    model.sort_unstable();
                    let want = (!model.is_empty()).then(|| model.remove(0));
                    prop_assert_eq!(t.peek(), want);
                    let got = t.pop().map(|(k, ())| k);
                    prop_assert_eq!(got, want);
                    if let Some(k) = got {
                        now = instant(k);
                    }
                } else {
                    let k = key(now + d, seq);
                    seq += 1;
                    t.push(k, ());
                    model.push(k);
                }
                prop_assert_eq!(t.len(), model.len());
            }
        }
    }

    #[test]
    fn equal_instants_pop_in_the_order_they_were_set() {
        let mut t = Timers::default();
        for seq in 0..5 {
            t.push(key(100, 10 - seq), seq);
        }
        t.push(key(50, 99), 99);
        let order: Vec<u64> = std::iter::from_fn(|| t.pop().map(|(_, a)| a)).collect();
        assert_eq!(order, vec![99, 4, 3, 2, 1, 0]);
        assert_eq!(t.drain(), Vec::<u64>::new());
    }
}
