//! A notify / wait queue: tasks wait in FIFO order; `notify_one` releases the first waiter (or
//! leaves one permit if nobody waits), `notify_all` releases every current waiter.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use crate::cx::Cx;
use crate::task::{Label, WaitOn};

#[derive(Copy, Clone, PartialEq, Eq)]
enum Mark {
    Waiting,
    /// Released by `notify_one`: if the waiter goes away unobserved, the release passes on.
    One,
    All,
}

struct Waiter {
    mark: Cell<Mark>,
    waker: RefCell<Option<Waker>>,
}

/// A FIFO wait queue with at most one stored permit.
pub struct Notify {
    cx: Cx,
    label: Label,
    permit: Cell<bool>,
    waiters: RefCell<VecDeque<Rc<Waiter>>>,
}

impl Notify {
    /// A new wait queue; `label` names it in deadlock reports.
    pub fn new(cx: &Cx, label: impl Into<Label>) -> Self {
        Notify {
            cx: cx.clone(),
            label: label.into(),
            permit: Cell::new(false),
            waiters: RefCell::new(VecDeque::new()),
        }
    }

    /// Releases the first waiter, or stores a permit for the next `notified()` if none waits.
    pub fn notify_one(&self) {
        let first = self.waiters.borrow_mut().pop_front();
        match first {
            Some(w) => release(&w, Mark::One),
            None => self.permit.set(true),
        }
    }

    /// Releases every task waiting now; stores no permit.
    pub fn notify_all(&self) {
        let all = std::mem::take(&mut *self.waiters.borrow_mut());
        for w in all {
            release(&w, Mark::All);
        }
    }

    /// Number of tasks waiting.
    pub fn waiters(&self) -> usize {
        self.waiters.borrow().len()
    }

    /// Waits for a notification (consumes a stored permit at once if there is one).
    pub fn notified(&self) -> Notified<'_> {
        Notified { notify: self, waiter: None, done: false }
    }
}

fn release(w: &Waiter, mark: Mark) {
    w.mark.set(mark);
    if let Some(waker) = w.waker.borrow_mut().take() {
        waker.wake();
    }
}

/// Future of [`Notify::notified`].
#[must_use = "notified does nothing unless awaited"]
pub struct Notified<'a> {
    notify: &'a Notify,
    waiter: Option<Rc<Waiter>>,
    done: bool,
}

impl Future for Notified<'_> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, task: &mut Context<'_>) -> Poll<()> {
        if self.done {
            return Poll::Ready(());
        }
        let n = self.notify;
        match &self.waiter {
            None => {
                if n.permit.replace(false) {
                    self.done = true;
                    return Poll::Ready(());
                }
                let w = Rc::new(Waiter {
                    mark: Cell::new(Mark::Waiting),
                    waker: RefCell::new(Some(task.waker().clone())),
                });
                n.waiters.borrow_mut().push_back(w.clone());
                self.waiter = Some(w);
            }
            Some(w) => {
                if w.mark.get() != Mark::Waiting {
                    self.done = true;
                    self.waiter = None;
                    return Poll::Ready(());
                }
                *w.waker.borrow_mut() = Some(task.waker().clone());
            }
        }
        n.cx.note_wait(WaitOn::Notify(n.label.clone()));
        Poll::Pending
    }
}

impl Drop for Notified<'_> {
    fn drop(&mut self) {
        let Some(w) = self.waiter.take() else { return };
        match w.mark.get() {
            Mark::Waiting => self.notify.waiters.borrow_mut().retain(|x| !Rc::ptr_eq(x, &w)),
            Mark::One => self.notify.notify_one(),
            Mark::All => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CoreId, Sim, SimDuration};

    #[test]
    fn waiters_are_released_in_fifo_order() {
        let sim = Sim::new(1);
        let cx = sim.cx();
        let n = Rc::new(Notify::new(&cx, "q"));
        let order = Rc::new(RefCell::new(Vec::new()));
        for i in 0..3 {
            let (n, order) = (n.clone(), order.clone());
            cx.spawn(CoreId::UNBOUND, format!("w{i}"), async move {
                n.notified().await;
                order.borrow_mut().push(i);
            });
        }
        let c = cx.clone();
        cx.spawn(CoreId::UNBOUND, "notifier", async move {
            for _ in 0..3 {
                c.sleep(SimDuration::from_nanos(1)).await;
                n.notify_one();
            }
        });
        sim.run().unwrap();
        assert_eq!(*order.borrow(), vec![0, 1, 2]);
    }

    #[test]
    fn permit_is_stored_once() {
        let sim = Sim::new(1);
        let cx = sim.cx();
        let n = Rc::new(Notify::new(&cx, "q"));
        n.notify_one();
        n.notify_one();
        let n2 = n.clone();
        sim.block_on(async move { n2.notified().await }).unwrap();
        let err = sim.block_on(async move { n.notified().await }).unwrap_err();
        assert!(err.to_string().contains("notify 'q'"), "{err}");
    }
}
