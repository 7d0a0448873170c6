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

pub(crate) struct Batch {
    pub op: FlashOp,
    pub die: DieIdx,
    pub txns: Vec<Box<Txn>>,
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
