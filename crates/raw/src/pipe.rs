//! A FIFO resource that serves one thing at a time at a fixed rate: a DMA engine, a
//! controller's command logic. Reservations are made in call order; each ends when the ones
//! before it and its own service time are done.

use std::cell::Cell;

use sim::{SimDuration, SimTime};

/// A first-come, first-served pipe.
#[derive(Debug, Default)]
pub(crate) struct Pipe {
    busy_until: Cell<SimTime>,
    busy: Cell<SimDuration>,
}

impl Pipe {
    /// Reserves `d` of service starting no earlier than `now`; returns when it ends.
    pub fn reserve(&self, now: SimTime, d: SimDuration) -> SimTime {
        let end = now.max(self.busy_until.get()) + d;
        self.busy_until.set(end);
        self.busy.set(self.busy.get() + d);
        end
    }

    /// Service time reserved so far.
    pub fn busy(&self) -> SimDuration {
        self.busy.get()
    }
}
