//! Awaiting several futures at once from one task (a request waiting on all its sub-requests'
//! flash reads, say).
//!
//! Each child future gets its own waker that flags it and wakes the parent task, so a wake
//! polls only the children that asked for it: joining n futures costs O(n) polls in all, not
//! O(n) per wake.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

/// A child's waker: flags the child and wakes the parent.
struct ChildWaker {
    woken: AtomicBool,
    parent: Mutex<Option<Waker>>,
}

impl Wake for ChildWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Relaxed);
        if let Some(w) = self.parent.lock().expect("child waker lock").as_ref() {
            w.wake_by_ref();
        }
    }
}

struct Child<F: Future> {
    future: Option<Pin<Box<F>>>,
    output: Option<F::Output>,
    waker: Arc<ChildWaker>,
    std_waker: Waker,
}

/// Future of [`join_all`].
#[must_use = "join_all does nothing unless awaited"]
pub struct JoinAll<F: Future> {
    children: Vec<Child<F>>,
    pending: usize,
    /// The parent waker the children were last given.
    parent: Option<Waker>,
}

/// Runs every future concurrently within the calling task and returns their outputs in order.
pub fn join_all<F: Future>(futures: impl IntoIterator<Item = F>) -> JoinAll<F> {
    let children: Vec<Child<F>> = futures
        .into_iter()
        .map(|f| {
            let waker = Arc::new(ChildWaker { woken: AtomicBool::new(true), parent: Mutex::new(None) });
            Child { future: Some(Box::pin(f)), output: None, std_waker: Waker::from(waker.clone()), waker }
        })
        .collect();
    let pending = children.len();
    JoinAll { children, pending, parent: None }
}

// The futures are pinned in their own boxes and outputs are never pinned, so moving a JoinAll
// is fine.
impl<F: Future> Unpin for JoinAll<F> {}

impl<F: Future> Future for JoinAll<F> {
    type Output = Vec<F::Output>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Vec<F::Output>> {
        let this = &mut *self;
        if this.parent.as_ref().is_none_or(|p| !p.will_wake(cx.waker())) {
            this.parent = Some(cx.waker().clone());
            for c in &this.children {
                *c.waker.parent.lock().expect("child waker lock") = Some(cx.waker().clone());
            }
        }
        for c in &mut this.children {
            let Some(f) = &mut c.future else { continue };
            if !c.waker.woken.swap(false, Ordering::Relaxed) {
                continue;
            }
            if let Poll::Ready(v) = f.as_mut().poll(&mut Context::from_waker(&c.std_waker)) {
                c.output = Some(v);
                c.future = None;
                this.pending -= 1;
            }
        }
        if this.pending > 0 {
            return Poll::Pending;
        }
        Poll::Ready(
            this.children.iter_mut().map(|c| c.output.take().expect("every future finished")).collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Sim, SimDuration};
    use std::cell::Cell;
    use std::rc::Rc;

    #[test]
    fn outputs_in_order_and_concurrently() {
        let sim = Sim::new(1);
        let cx = sim.cx();
        let c = cx.clone();
        let (out, at) = sim
            .block_on(async move {
                let futs = [30u64, 10, 20].map(|d| {
                    let c = c.clone();
                    async move {
                        c.sleep(SimDuration::from_nanos(d)).await;
                        d
                    }
                });
                (join_all(futs).await, c.now().as_nanos())
            })
            .unwrap();
        assert_eq!(out, vec![30, 10, 20]);
        assert_eq!(at, 30, "the sleeps overlap");
    }

    #[test]
    fn a_wake_polls_only_the_child_that_was_woken() {
        let sim = Sim::new(1);
        let cx = sim.cx();
        let polls = Rc::new(Cell::new(0u32));
        let (c, p) = (cx.clone(), polls.clone());
        sim.block_on(async move {
            let futs = (0..50u64).map(|i| {
                let (c, p) = (c.clone(), p.clone());
                std::future::poll_fn(move |task| {
                    p.set(p.get() + 1);
                    if c.now().as_nanos() > i {
                        return Poll::Ready(i);
                    }
                    c.inner.wake_at(crate::SimTime::from_nanos(i + 1), task.waker());
                    Poll::Pending
                })
            });
            join_all(futs).await
        })
        .unwrap();
        // Each child is polled once to start and once when its own timer fires.
        assert_eq!(polls.get(), 100);
    }
}
