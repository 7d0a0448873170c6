//! Where a submitter waits for its transaction: a slot per transaction in flight, reused, so
//! that submitting allocates nothing beyond the transaction itself, and the answer travels as
//! one pointer.
//!
//! ```text
//!   enqueue: open a slot ─▶ Box<Txn> (slot number inside) ─▶ available ring ─▶ FIL engine
//!   finish:  engine puts the Box<Txn> in its slot, visible after the used-ring latency,
//!            and wakes the waiting receiver
//!   receive: the receiver takes the Box<Txn> out as a TxnResult and frees the slot
//! ```

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use sim::{SimTime, WaitOn};

use crate::fil::handle::Shared;
use crate::fil::txn::{Txn, TxnResult};

/// One transaction's place.
#[derive(Default)]
struct Slot {
    /// The finished transaction, once the FIL has answered.
    done: Option<Box<Txn>>,
    /// When the answer becomes visible to the receiver (used-ring latency).
    visible_at: SimTime,
    /// The receiver waiting for the answer.
    waker: Option<Waker>,
    /// The receiver went away: the slot frees itself when the answer comes.
    abandoned: bool,
}

/// The slots of every transaction in flight.
#[derive(Default)]
pub(crate) struct Completions {
    slots: RefCell<(Vec<Slot>, Vec<u32>)>,
}

impl Completions {
    /// A slot for a new transaction.
    pub fn open(&self) -> u32 {
        let (slots, free) = &mut *self.slots.borrow_mut();
        match free.pop() {
            Some(i) => i,
            None => {
                slots.push(Slot::default());
                slots.len() as u32 - 1
            }
        }
    }

    /// The FIL's answer to the transaction of `txn.slot`, visible at `at`. Returns the waker
    /// to wake at `at`, if a receiver waits.
    pub fn finish(&self, txn: Box<Txn>, at: SimTime) -> Option<Waker> {
        let (slots, free) = &mut *self.slots.borrow_mut();
        let i = txn.slot;
        let s = &mut slots[i as usize];
        if s.abandoned {
            *s = Slot::default();
            free.push(i);
            return None;
        }
        s.done = Some(txn);
        s.visible_at = at;
        s.waker.take()
    }
}

/// Awaits the FIL's answer to one transaction ([`Fil::enqueue`](crate::fil::Fil::enqueue)).
#[must_use = "the answer is lost unless awaited"]
pub struct TxnReceiver {
    pub(crate) sh: Rc<Shared>,
    /// The slot, or `u32::MAX` once the answer was taken.
    pub(crate) slot: u32,
    /// A wake is scheduled for when the answer becomes visible.
    pub(crate) armed: bool,
}

impl TxnReceiver {
    /// Whether the answer has arrived and is visible.
    pub fn is_ready(&self) -> bool {
        let (slots, _) = &*self.sh.completions.slots.borrow();
        slots.get(self.slot as usize).is_some_and(|s| s.done.is_some() && self.sh.cx.now() >= s.visible_at)
    }
}

impl Future for TxnReceiver {
    type Output = TxnResult;
    fn poll(mut self: Pin<&mut Self>, task: &mut Context<'_>) -> Poll<TxnResult> {
        let now = self.sh.cx.now();
        let sh = self.sh.clone();
        let mut guard = sh.completions.slots.borrow_mut();
        let (slots, free) = &mut *guard;
        let i = self.slot;
        let s = slots.get_mut(i as usize).expect("polled after the answer was taken");
        if s.done.is_some() {
            if now >= s.visible_at {
                let txn = s.done.take().expect("checked");
                *s = Slot::default();
                free.push(i);
                self.slot = u32::MAX;
                return Poll::Ready(TxnResult(txn));
            }
            let at = s.visible_at;
            drop(guard);
            if !self.armed {
                self.armed = true;
                sh.cx.wake_at(at, task.waker());
            }
        } else {
            if !s.waker.as_ref().is_some_and(|w| w.will_wake(task.waker())) {
                s.waker = Some(task.waker().clone());
            }
            drop(guard);
        }
        sh.cx.note_wait(WaitOn::Oneshot(sim::Label::Static("flash transaction")));
        Poll::Pending
    }
}

impl Drop for TxnReceiver {
    fn drop(&mut self) {
        if self.slot == u32::MAX {
            return;
        }
        let (slots, free) = &mut *self.sh.completions.slots.borrow_mut();
        let s = &mut slots[self.slot as usize];
        if s.done.is_some() {
            *s = Slot::default();
            free.push(self.slot);
        } else {
            s.abandoned = true;
            s.waker = None;
        }
    }
}
