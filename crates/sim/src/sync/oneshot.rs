//! A oneshot completion: one value, sent once, awaited once. The flash interface layer completes
//! a transaction through one, optionally after a delivery latency (a used ring's IPI).

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use crate::cx::Cx;
use crate::task::{Label, WaitOn};
use crate::time::{SimDuration, SimTime};

/// The sender was dropped without sending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the oneshot sender was dropped without sending")]
pub struct Canceled;

struct Shared<T> {
    cx: Cx,
    label: Label,
    value: RefCell<Option<T>>,
    /// When the value becomes visible to the receiver.
    visible_at: Cell<SimTime>,
    waker: RefCell<Option<Waker>>,
    /// A wake for the receiver is scheduled at `visible_at`.
    armed: Cell<bool>,
    sender_gone: Cell<bool>,
}

/// Sends the value.
pub struct Sender<T> {
    shared: Rc<Shared<T>>,
    sent: bool,
}

/// Awaits the value.
pub struct Receiver<T> {
    shared: Rc<Shared<T>>,
}

/// A new oneshot; `label` names it in deadlock reports.
pub fn channel<T>(cx: &Cx, label: impl Into<Label>) -> (Sender<T>, Receiver<T>) {
    let shared = Rc::new(Shared {
        cx: cx.clone(),
        label: label.into(),
        value: RefCell::new(None),
        visible_at: Cell::new(SimTime::ZERO),
        waker: RefCell::new(None),
        armed: Cell::new(false),
        sender_gone: Cell::new(false),
    });
    (Sender { shared: shared.clone(), sent: false }, Receiver { shared })
}

impl<T> Sender<T> {
    /// Sends `value`; the receiver sees it at once.
    pub fn send(self, value: T) {
        self.send_after(value, SimDuration::ZERO);
    }

    /// Sends `value`; the receiver sees it after `delay` (a notification latency).
    pub fn send_after(mut self, value: T, delay: SimDuration) {
        let s = &self.shared;
        let at = s.cx.now() + delay;
        *s.value.borrow_mut() = Some(value);
        s.visible_at.set(at);
        self.sent = true;
        if let Some(w) = s.waker.borrow_mut().take() {
            s.armed.set(true);
            s.cx.wake_at(at, &w);
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        if !self.sent {
            self.shared.sender_gone.set(true);
            if let Some(w) = self.shared.waker.borrow_mut().take() {
                w.wake();
            }
        }
    }
}

impl<T> Receiver<T> {
    /// Whether the value has arrived and is visible.
    pub fn is_ready(&self) -> bool {
        let s = &self.shared;
        s.value.borrow().is_some() && s.cx.now() >= s.visible_at.get()
    }

    /// Takes the value if it is visible, without waiting.
    pub fn try_recv(&mut self) -> Option<T> {
        if self.is_ready() { self.shared.value.borrow_mut().take() } else { None }
    }

    pub(crate) fn note(&self, on: WaitOn) {
        self.shared.cx.note_wait(on);
    }
}

impl<T> Future for Receiver<T> {
    type Output = Result<T, Canceled>;
    fn poll(self: Pin<&mut Self>, task: &mut Context<'_>) -> Poll<Self::Output> {
        let s = &self.shared;
        let has_value = s.value.borrow().is_some();
        if has_value {
            let at = s.visible_at.get();
            if s.cx.now() >= at {
                return Poll::Ready(Ok(s.value.borrow_mut().take().expect("checked")));
            }
            if !s.armed.get() {
                s.armed.set(true);
                s.cx.wake_at(at, task.waker());
            }
        } else if s.sender_gone.get() {
            return Poll::Ready(Err(Canceled));
        } else {
            *s.waker.borrow_mut() = Some(task.waker().clone());
        }
        s.cx.note_wait(WaitOn::Oneshot(s.label.clone()));
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CoreId, Sim};

    #[test]
    fn value_arrives_after_its_delay() {
        let sim = Sim::new(1);
        let cx = sim.cx();
        let (tx, rx) = channel::<u32>(&cx, "t");
        let c2 = cx.clone();
        cx.spawn(CoreId::UNBOUND, "sender", async move {
            c2.sleep(SimDuration::from_nanos(10)).await;
            tx.send_after(7, SimDuration::from_nanos(5));
        });
        let c3 = cx.clone();
        let got = sim.block_on(async move { (rx.await, c3.now()) }).unwrap();
        assert_eq!(got, (Ok(7), SimTime::from_nanos(15)));
    }

    #[test]
    fn dropped_sender_cancels() {
        let sim = Sim::new(1);
        let cx = sim.cx();
        let (tx, rx) = channel::<u32>(&cx, "t");
        cx.spawn(CoreId::UNBOUND, "dropper", async move { drop(tx) });
        assert_eq!(sim.block_on(rx).unwrap(), Err(Canceled));
    }
}
