//! A counted resource with first-come, first-served waiting: command slots of a port, a
//! bridge's queue, conversion engines, an array controller's command slots.

use std::cell::Cell;

use sim::Cx;
use sim::sync::Notify;

/// `n` slots; a task takes one with [`acquire`](Self::acquire) (waiting in FIFO order while
/// none is free) and gives it back with [`release`](Self::release), which hands it straight to
/// the longest waiter.
pub struct Slots {
    slots: u32,
    busy: Cell<u32>,
    free: Notify,
}

impl Slots {
    /// `slots` slots (at least one), all free; `label` names the wait in deadlock reports.
    pub fn new(cx: &Cx, label: &'static str, slots: u32) -> Slots {
        Slots { slots: slots.max(1), busy: Cell::new(0), free: Notify::new(cx, label) }
    }

    /// Waits for a slot and takes it.
    pub async fn acquire(&self) {
        if self.busy.get() < self.slots && self.free.waiters() == 0 {
            self.busy.set(self.busy.get() + 1);
            return;
        }
        self.free.notified().await; // the releaser hands its slot over
    }

    /// Gives a slot back: to the longest waiter, if any.
    pub fn release(&self) {
        if self.free.waiters() > 0 {
            self.free.notify_one();
        } else {
            self.busy.set(self.busy.get() - 1);
        }
    }

    /// Slots taken now.
    pub fn busy(&self) -> u32 {
        self.busy.get()
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use sim::{CoreId, Sim, SimDuration};

    use super::*;

    #[test]
    fn waiters_take_freed_slots_in_arrival_order() {
        let sim = Sim::new(1);
        let cx = sim.cx();
        let slots = Rc::new(Slots::new(&cx, "test slots", 2));
        let order = Rc::new(RefCell::new(Vec::new()));
        for i in 0..5u64 {
            let (s, o, c) = (slots.clone(), order.clone(), cx.clone());
            cx.spawn(CoreId::UNBOUND, format!("t{i}"), async move {
                c.sleep(SimDuration::from_nanos(i)).await;
                s.acquire().await;
                o.borrow_mut().push((i, c.now().as_nanos()));
                c.sleep(SimDuration::from_nanos(100)).await;
                s.release();
            });
        }
        sim.run().unwrap();
        assert_eq!(*order.borrow(), vec![(0, 0), (1, 1), (2, 100), (3, 101), (4, 200)]);
        assert_eq!(slots.busy(), 0);
    }
}
