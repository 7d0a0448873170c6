//! The FIL's view of the flash hardware: which batch occupies each die's array and data
//! register, which batch owns each channel, and the batches in flight.
//!
//! A batch is one command to one die: a single transaction or a multi-plane group. Its phases:
//!
//! ```text
//! read:    Setup (channel+die) -> Array tR (die) -> ReadyOut (die, waits for channel) -> DataOut (channel+die)
//! program: DataIn: setup + data (channel+die) -> [Loaded: cache register full, array busy] -> Array tPROG (die)
//! erase:   Setup (channel+die) -> Array tBERS (die)
//! ```
//!
//! A die takes a new command only when both its array and its register are free — except that
//! with cache program on, a program may load its data while the array is still programming the
//! previous page.

use std::collections::VecDeque;

use nand::DieIdx;
use sim::SimTime;

use crate::fil::txn::{FlashOp, Txn};

pub(crate) type BatchId = u32;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    Setup,
    DataIn,
    Loaded,
    Array,
    ReadyOut,
    DataOut,
}

/// The transactions of one batch (one per plane; most batches are one or two).
pub(crate) type TxnBatch = smallvec::SmallVec<[Box<Txn>; 2]>;

pub(crate) struct Batch {
    pub op: FlashOp,
    pub die: DieIdx,
    pub txns: TxnBatch,
    pub phase: Phase,
}

#[derive(Default)]
pub(crate) struct DieHw {
    /// The batch whose array operation is running (or, for reads and erases, that holds the die
    /// from setup on).
    pub array: Option<BatchId>,
    /// The batch holding the data / cache register.
    pub reg: Option<BatchId>,
    /// When the die last went from idle to busy.
    pub busy_since: Option<SimTime>,
}

#[derive(Default)]
pub(crate) struct ChannelHw {
    /// The batch using the bus.
    pub owner: Option<BatchId>,
    /// When the owner took the bus.
    pub since: SimTime,
    /// Reads whose data is ready in a die register, waiting for the bus (FIFO).
    pub out_wait: VecDeque<BatchId>,
    /// Next die (within the channel) to consider for a new command.
    pub rr: u32,
    /// Already in the engine's to-kick list.
    pub dirty: bool,
}

/// Batches in flight, by id.
#[derive(Default)]
pub(crate) struct Batches {
    items: Vec<Option<Batch>>,
    free: Vec<BatchId>,
}

impl Batches {
    pub fn insert(&mut self, b: Batch) -> BatchId {
        match self.free.pop() {
            Some(id) => {
                self.items[id as usize] = Some(b);
                id
            }
            None => {
                self.items.push(Some(b));
                (self.items.len() - 1) as BatchId
            }
        }
    }

    pub fn get(&self, id: BatchId) -> &Batch {
        self.items[id as usize].as_ref().expect("live batch")
    }

    pub fn get_mut(&mut self, id: BatchId) -> &mut Batch {
        self.items[id as usize].as_mut().expect("live batch")
    }

    pub fn remove(&mut self, id: BatchId) -> Batch {
        self.free.push(id);
        self.items[id as usize].take().expect("live batch")
    }
}

/// A set of dies per channel (one bit per die of the channel, by its number within the channel).
pub(crate) struct DieSet {
    words_per_channel: usize,
    words: Vec<u64>,
}

impl DieSet {
    pub fn new(channels: usize, dies_per_channel: usize) -> Self {
        let words_per_channel = dies_per_channel.div_ceil(64);
        DieSet { words_per_channel, words: vec![0; channels * words_per_channel] }
    }

    pub fn insert(&mut self, ch: usize, die: usize) {
        self.words[ch * self.words_per_channel + die / 64] |= 1 << (die % 64);
    }

    pub fn remove(&mut self, ch: usize, die: usize) {
        self.words[ch * self.words_per_channel + die / 64] &= !(1 << (die % 64));
    }

    /// The first die of channel `ch` in the set within `from..end`.
    pub fn next(&self, ch: usize, from: usize, end: usize) -> Option<usize> {
        let words = &self.words[ch * self.words_per_channel..(ch + 1) * self.words_per_channel];
        let mut i = from;
        while i < end {
            let bits = words[i / 64] >> (i % 64);
            if bits != 0 {
                let found = i + bits.trailing_zeros() as usize;
                return (found < end).then_some(found);
            }
            i = (i / 64 + 1) * 64;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn die_set_finds_members_in_range_across_words() {
        let mut s = DieSet::new(2, 130);
        for d in [0, 5, 63, 64, 129] {
            s.insert(1, d);
        }
        s.insert(0, 7);
        let all: Vec<usize> = std::iter::successors(s.next(1, 0, 130), |&d| s.next(1, d + 1, 130)).collect();
        assert_eq!(all, vec![0, 5, 63, 64, 129]);
        assert_eq!(s.next(1, 6, 63), None, "63 is outside 6..63");
        assert_eq!(s.next(1, 6, 64), Some(63));
        assert_eq!(s.next(0, 0, 130), Some(7));
        s.remove(1, 63);
        assert_eq!(s.next(1, 6, 130), Some(64));
        assert_eq!(s.next(1, 130, 130), None);
    }
}
