//! A coroutine mutex with FIFO hand-off, and the statistics that show lock contention (the
//! Tradition-N firmware's bottleneck).
//!
//! Unlocking hands the lock straight to the first waiter, so a releasing task cannot barge back
//! in ahead of tasks that queued before it.

use std::cell::{Cell, RefCell, RefMut};
use std::collections::VecDeque;
use std::future::Future;
use std::ops::{Deref, DerefMut};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use serde::Serialize;

use crate::cx::Cx;
use crate::task::{Label, TaskKey, WaitOn};
use crate::time::{SimDuration, SimTime};

/// Contention statistics of one mutex.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MutexStats {
    /// Successful acquisitions.
    pub acquisitions: u64,
    /// Acquisitions that had to wait.
    pub contended: u64,
    /// Total time spent waiting.
    pub total_wait: SimDuration,
    /// Longest single wait.
    pub max_wait: SimDuration,
}

struct Waiter {
    granted: Cell<bool>,
    since: SimTime,
    task: Option<TaskKey>,
    waker: RefCell<Option<Waker>>,
}

struct State {
    locked: bool,
    holder: Option<TaskKey>,
    waiters: VecDeque<Rc<Waiter>>,
    stats: MutexStats,
}

/// A mutex for tasks: `lock().await` suspends (freeing the core) until the lock is handed over.
pub struct Mutex<T> {
    cx: Cx,
    label: Label,
    state: RefCell<State>,
    value: RefCell<T>,
}

impl<T> Mutex<T> {
    /// A new unlocked mutex; `label` names it in deadlock reports and statistics.
    pub fn new(cx: &Cx, label: impl Into<Label>, value: T) -> Self {
        Mutex {
            cx: cx.clone(),
            label: label.into(),
            state: RefCell::new(State {
                locked: false,
                holder: None,
                waiters: VecDeque::new(),
                stats: MutexStats::default(),
            }),
            value: RefCell::new(value),
        }
    }

    /// Acquires the lock, waiting in FIFO order if it is held.
    pub fn lock(&self) -> Lock<'_, T> {
        Lock { mutex: self, waiter: None }
    }

    /// Acquires the lock if it is free.
    pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        let mut st = self.state.borrow_mut();
        if st.locked {
            return None;
        }
        st.locked = true;
        st.holder = self.cx.inner.current().map(|(k, _)| k);
        st.stats.acquisitions += 1;
        drop(st);
        Some(self.guard())
    }

    /// Contention statistics so far.
    pub fn stats(&self) -> MutexStats {
        self.state.borrow().stats.clone()
    }

    /// The mutex's name.
    pub fn label(&self) -> &Label {
        &self.label
    }

    fn guard(&self) -> MutexGuard<'_, T> {
        MutexGuard { mutex: self, value: Some(self.value.borrow_mut()) }
    }

    fn unlock(&self) {
        let next = {
            let mut st = self.state.borrow_mut();
            match st.waiters.pop_front() {
                Some(w) => {
                    let waited = self.cx.now().since(w.since);
                    st.stats.total_wait += waited;
                    st.stats.max_wait = st.stats.max_wait.max(waited);
                    st.stats.acquisitions += 1;
                    st.holder = w.task;
                    Some(w)
                }
                None => {
                    st.locked = false;
                    st.holder = None;
                    None
                }
            }
        };
        if let Some(w) = next {
            w.granted.set(true);
            if let Some(waker) = w.waker.borrow_mut().take() {
                waker.wake();
            }
        }
    }
}

/// Future of [`Mutex::lock`].
#[must_use = "lock does nothing unless awaited"]
pub struct Lock<'a, T> {
    mutex: &'a Mutex<T>,
    waiter: Option<Rc<Waiter>>,
}

impl<'a, T> Future for Lock<'a, T> {
    type Output = MutexGuard<'a, T>;
    fn poll(mut self: Pin<&mut Self>, task: &mut Context<'_>) -> Poll<MutexGuard<'a, T>> {
        let m = self.mutex;
        match &self.waiter {
            None => {
                let mut st = m.state.borrow_mut();
                if !st.locked {
                    st.locked = true;
                    st.holder = m.cx.inner.current().map(|(k, _)| k);
                    st.stats.acquisitions += 1;
                    drop(st);
                    return Poll::Ready(m.guard());
                }
                st.stats.contended += 1;
                let w = Rc::new(Waiter {
                    granted: Cell::new(false),
                    since: m.cx.now(),
                    task: m.cx.inner.current().map(|(k, _)| k),
                    waker: RefCell::new(Some(task.waker().clone())),
                });
                st.waiters.push_back(w.clone());
                drop(st);
                self.waiter = Some(w);
            }
            Some(w) => {
                if w.granted.get() {
                    self.waiter = None;
                    return Poll::Ready(m.guard());
                }
                *w.waker.borrow_mut() = Some(task.waker().clone());
            }
        }
        let holder = m.state.borrow().holder;
        m.cx.note_wait(WaitOn::Mutex(m.label.clone(), holder));
        Poll::Pending
    }
}

impl<T> Drop for Lock<'_, T> {
    fn drop(&mut self) {
        let Some(w) = self.waiter.take() else { return };
        if w.granted.get() {
            self.mutex.unlock(); // handed to us but never taken: pass it on
        } else {
            self.mutex.state.borrow_mut().waiters.retain(|x| !Rc::ptr_eq(x, &w));
        }
    }
}

/// Exclusive access to the protected value; unlocks (handing over to the next waiter) on drop.
pub struct MutexGuard<'a, T> {
    mutex: &'a Mutex<T>,
    value: Option<RefMut<'a, T>>,
}

impl<T> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.value.as_ref().expect("guard holds the value until dropped")
    }
}

impl<T> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.value.as_mut().expect("guard holds the value until dropped")
    }
}

impl<T> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        self.value = None;
        self.mutex.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CoreId, Sim};

    #[test]
    fn fifo_hand_off_and_contention_stats() {
        let sim = Sim::new(1);
        let cx = sim.cx();
        let m = Rc::new(Mutex::new(&cx, "cache line", Vec::new()));
        for i in 0..3u64 {
            let (m, c) = (m.clone(), cx.clone());
            cx.spawn(CoreId::UNBOUND, format!("t{i}"), async move {
                let mut g = m.lock().await;
                g.push(i);
                c.sleep(SimDuration::from_nanos(10)).await; // hold across a suspension
            });
        }
        sim.run().unwrap();
        assert_eq!(*m.try_lock().unwrap(), vec![0, 1, 2]);
        let s = m.stats();
        assert_eq!(s.acquisitions, 4);
        assert_eq!(s.contended, 2);
        assert_eq!(s.total_wait, SimDuration::from_nanos(10 + 20));
        assert_eq!(s.max_wait, SimDuration::from_nanos(20));
    }

    #[test]
    fn deadlock_names_the_holder() {
        let sim = Sim::new(1);
        let cx = sim.cx();
        let m = Rc::new(Mutex::new(&cx, "gtd", ()));
        let (m1, c1) = (m.clone(), cx.clone());
        cx.spawn(CoreId::UNBOUND, "holder", async move {
            let _g = m1.lock().await;
            let n = crate::sync::Notify::new(&c1, "never");
            n.notified().await;
        });
        cx.spawn(CoreId::UNBOUND, "waiter", async move {
            let _g = m.lock().await;
        });
        let err = sim.run().unwrap_err().to_string();
        assert!(
            err.contains("task 'waiter' on core 'unbound' waits on mutex 'gtd' held by task 'holder'"),
            "{err}"
        );
        assert!(err.contains("task 'holder' on core 'unbound' waits on notify 'never'"), "{err}");
    }
}
