//! What a lock is configured with (how a waiter waits, what taking it costs) and the class
//! its statistics are kept in.

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::stats::LogHistogram;
use crate::task::Label;
use crate::time::SimDuration;

/// How a waiter waits.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LockKind {
    /// The waiting core spins: it stays busy (and is charged) until the lock is handed over.
    #[default]
    Spin,
    /// The waiting coroutine sleeps: its core runs other tasks meanwhile.
    Sleep,
}

/// What taking a lock costs.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockCosts {
    /// Cycles on the taker's core per acquisition (the atomic operation and the fences, and
    /// the release folded in). Default: 0.
    #[serde(default)]
    pub acquire_cycles: u64,
    /// Extra latency when the lock was last held on another core (the lock's cache line moves
    /// to the taker). Default: 0.
    #[serde(default)]
    pub transfer: SimDuration,
}

/// Statistics of one lock class.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LockStats {
    /// Acquisitions.
    pub acquisitions: u64,
    /// Acquisitions that found the lock held and waited.
    pub contended: u64,
    /// Time from asking for the lock to holding it, summed (contended or not).
    pub total_wait: SimDuration,
    /// Time held, summed.
    pub total_hold: SimDuration,
    /// Distribution of waits (ns), one sample per acquisition.
    pub waits: LogHistogram,
}

impl LockStats {
    /// Share of acquisitions that waited.
    pub fn contended_share(&self) -> f64 {
        if self.acquisitions == 0 { 0.0 } else { self.contended as f64 / self.acquisitions as f64 }
    }

    /// Mean wait per acquisition.
    pub fn mean_wait(&self) -> SimDuration {
        SimDuration::from_nanos(self.total_wait.as_nanos().checked_div(self.acquisitions).unwrap_or(0))
    }
}

/// A named group of locks whose statistics are kept together.
pub struct LockClass {
    pub(super) name: Label,
    pub(super) stats: RefCell<LockStats>,
}

impl LockClass {
    /// A new class.
    pub fn new(name: impl Into<Label>) -> Rc<LockClass> {
        Rc::new(LockClass { name: name.into(), stats: RefCell::new(LockStats::default()) })
    }

    /// The class's name.
    pub fn name(&self) -> &Label {
        &self.name
    }

    /// Statistics so far.
    pub fn stats(&self) -> LockStats {
        self.stats.borrow().clone()
    }
}
