//! The SRAM data pool: page buffers granted first come, first served, several at a time.

use std::cell::Cell;

use sim::Cx;
use sim::sync::Notify;

/// Page buffers of the on-device SRAM.
pub(crate) struct Sram {
    free: Cell<u32>,
    capacity: u32,
    next_ticket: Cell<u64>,
    serving: Cell<u64>,
    changed: Notify,
}

impl Sram {
    pub fn new(cx: &Cx, pages: u32) -> Sram {
        Sram {
            free: Cell::new(pages),
            capacity: pages,
            next_ticket: Cell::new(0),
            serving: Cell::new(0),
            changed: Notify::new(cx, "sram page buffers"),
        }
    }

    /// Takes `n` page buffers (at most the pool), waiting behind earlier requests.
    pub async fn take(&self, n: u32) {
        let n = n.min(self.capacity);
        let ticket = self.next_ticket.get();
        self.next_ticket.set(ticket + 1);
        while self.serving.get() != ticket || self.free.get() < n {
            self.changed.notified().await;
        }
        self.free.set(self.free.get() - n);
        self.serving.set(ticket + 1);
        self.changed.notify_all();
    }

    /// Gives `n` page buffers back.
    pub fn give(&self, n: u32) {
        self.free.set((self.free.get() + n).min(self.capacity));
        self.changed.notify_all();
    }

    /// Buffers in use.
    pub fn used(&self) -> u32 {
        self.capacity - self.free.get()
    }
}
