//! A bounded FIFO ring between cores, as SoftSSD's available / used rings and PipeSSD's SPSC
//! queues: the producer pays an enqueue cost on its own core, an item becomes visible to the
//! consumer one notification (IPI) latency after it was pushed, and a full ring makes the
//! producer wait.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use serde::{Deserialize, Serialize};

use crate::cx::Cx;
use crate::task::{Label, WaitOn};
use crate::time::{SimDuration, SimTime};

/// Configuration of a ring.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RingSpec {
    /// Slots. Default: 1024.
    #[serde(default = "default_capacity")]
    pub capacity: usize,
    /// Cycles charged to the producer's core per push. Default: 0.
    #[serde(default)]
    pub enqueue_cycles: u64,
    /// Delay before the consumer sees a pushed item (IPI or doorbell latency). Default: 0.
    #[serde(default)]
    pub notify_latency: SimDuration,
}

fn default_capacity() -> usize {
    1024
}

impl Default for RingSpec {
    fn default() -> Self {
        RingSpec { capacity: default_capacity(), enqueue_cycles: 0, notify_latency: SimDuration::ZERO }
    }
}

/// Statistics of one ring.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RingStats {
    /// Items pushed.
    pub pushes: u64,
    /// Pushes that found the ring full and had to wait.
    pub full_stalls: u64,
    /// Highest occupancy seen.
    pub max_len: usize,
}

/// A producer waiting for space, with its item: the item enters the ring the moment a slot
/// frees, in the order the producers came, whenever the producers themselves run again.
struct PushWaiter<T> {
    item: RefCell<Option<T>>,
    waker: RefCell<Option<Waker>>,
}

struct State<T> {
    items: VecDeque<(SimTime, T)>,
    /// Consumers waiting for an item, oldest first, each with its registration number.
    /// Numbers grow along the queue, so a consumer knows in O(1) whether it is still queued:
    /// it is unless its number is below `first_waiting`.
    pop_waiters: VecDeque<(u64, Waker)>,
    /// The number the next registered consumer gets.
    next_waiter: u64,
    /// Every registration numbered below this has been woken (popped off `pop_waiters`).
    first_waiting: u64,
    push_waiters: VecDeque<Rc<PushWaiter<T>>>,
    stats: RingStats,
}

/// A bounded multi-producer, multi-consumer FIFO with modelled cost and latency.
pub struct Ring<T> {
    cx: Cx,
    label: Label,
    spec: RingSpec,
    state: RefCell<State<T>>,
}

impl<T> Ring<T> {
    /// A new empty ring.
    ///
    /// # Panics
    /// If `spec.capacity` is zero (validate configurations first).
    pub fn new(cx: &Cx, label: impl Into<Label>, spec: RingSpec) -> Self {
        let label = label.into();
        assert!(spec.capacity > 0, "ring '{label}' has zero capacity");
        Ring {
            cx: cx.clone(),
            label,
            state: RefCell::new(State {
                items: VecDeque::with_capacity(spec.capacity.min(4096)),
                pop_waiters: VecDeque::new(),
                next_waiter: 0,
                first_waiting: 0,
                push_waiters: VecDeque::new(),
                stats: RingStats::default(),
            }),
            spec,
        }
    }

    /// Pushes `item`: charges the enqueue cost on the caller's core, waits while the ring is
    /// full, and makes the item visible after the notification latency. Producers that find the
    /// ring full leave their item with the ring, which takes it in as soon as a slot frees, in
    /// the order the pushes were made: a later producer never overtakes a waiting one.
    pub async fn push(&self, item: T) {
        if self.spec.enqueue_cycles > 0 && !self.cx.core().is_unbound() {
            self.cx.compute(self.spec.enqueue_cycles).await;
        }
        if self.has_free_slot() {
            self.insert(item);
        } else {
            self.state.borrow_mut().stats.full_stalls += 1;
            Parked { ring: self, waiter: None, item: Some(item) }.await;
        }
    }

    /// Pushes without cost or waiting (for hardware-side producers); gives the item back if
    /// the ring is full or producers are waiting.
    pub fn try_push(&self, item: T) -> Result<(), T> {
        if !self.has_free_slot() {
            return Err(item);
        }
        self.insert(item);
        Ok(())
    }

    /// Whether a new producer may insert now: a slot is free and nobody waits for one.
    fn has_free_slot(&self) -> bool {
        let st = self.state.borrow();
        st.push_waiters.is_empty() && st.items.len() < self.spec.capacity
    }

    fn insert(&self, item: T) {
        let at = self.cx.now() + self.spec.notify_latency;
        let mut st = self.state.borrow_mut();
        st.items.push_back((at, item));
        st.stats.pushes += 1;
        st.stats.max_len = st.stats.max_len.max(st.items.len());
        let waiter = st.pop_waiters.pop_front();
        if let Some((n, _)) = &waiter {
            st.first_waiting = n + 1;
        }
        drop(st);
        if let Some((_, w)) = waiter {
            self.cx.wake_at(at, &w);
        }
    }

    /// Takes the first item once it is visible, waiting if needed.
    pub fn pop(&self) -> Pop<'_, T> {
        Pop { ring: self, deadline: SimTime::MAX, armed_for: None, registered: None }
    }

    /// Like [`Ring::pop`], but gives up at `deadline` and returns `None` (for service loops that
    /// also wait on a timer).
    pub fn pop_until(&self, deadline: SimTime) -> Pop<'_, T> {
        Pop { ring: self, deadline, armed_for: None, registered: None }
    }

    /// Waits until an item is visible or `deadline` passes, without taking it: for a consumer
    /// that also waits on its own timers and takes items with [`Ring::try_pop`] (a service
    /// loop such as the FIL's).
    pub fn wait_until(&self, deadline: SimTime) -> WaitUntil<'_, T> {
        WaitUntil { ring: self, deadline, armed_for: None, registered: None }
    }

    /// Takes the first item if it is visible now; the first waiting producer's item takes the
    /// freed slot.
    pub fn try_pop(&self) -> Option<T> {
        let now = self.cx.now();
        let mut st = self.state.borrow_mut();
        match st.items.front() {
            Some((at, _)) if *at <= now => {}
            _ => return None,
        }
        let (_, item) = st.items.pop_front().expect("checked");
        let waiter = st.push_waiters.pop_front();
        drop(st);
        if let Some(w) = waiter {
            self.insert(w.item.borrow_mut().take().expect("a waiting producer holds its item"));
            if let Some(waker) = w.waker.borrow_mut().take() {
                waker.wake();
            }
        }
        Some(item)
    }

    /// Items in the ring (visible or not).
    pub fn len(&self) -> usize {
        self.state.borrow().items.len()
    }

    /// Whether the ring holds no item.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether every slot is taken.
    pub fn is_full(&self) -> bool {
        self.len() >= self.spec.capacity
    }

    /// Statistics so far.
    pub fn stats(&self) -> RingStats {
        self.state.borrow().stats.clone()
    }

    /// The ring's configuration.
    pub fn spec(&self) -> &RingSpec {
        &self.spec
    }
}

/// A push waiting for space: its item is handed to the ring at once, and the future completes
/// when the ring has taken it in.
struct Parked<'a, T> {
    ring: &'a Ring<T>,
    waiter: Option<Rc<PushWaiter<T>>>,
    item: Option<T>,
}

impl<T> Unpin for Parked<'_, T> {}

impl<T> Future for Parked<'_, T> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, task: &mut Context<'_>) -> Poll<()> {
        let r = self.ring;
        match &self.waiter {
            None => {
                let item = self.item.take().expect("polled again after completion");
                let w = Rc::new(PushWaiter {
                    item: RefCell::new(Some(item)),
                    waker: RefCell::new(Some(task.waker().clone())),
                });
                r.state.borrow_mut().push_waiters.push_back(w.clone());
                self.waiter = Some(w);
            }
            Some(w) if w.item.borrow().is_none() => {
                self.waiter = None;
                return Poll::Ready(());
            }
            Some(w) => *w.waker.borrow_mut() = Some(task.waker().clone()),
        }
        r.cx.note_wait(WaitOn::RingPush(r.label.clone()));
        Poll::Pending
    }
}

impl<T> Drop for Parked<'_, T> {
    /// An abandoned push takes its item back out of the queue of waiting producers.
    fn drop(&mut self) {
        if let Some(w) = self.waiter.take() {
            self.ring.state.borrow_mut().push_waiters.retain(|x| !Rc::ptr_eq(x, &w));
        }
    }
}

/// Future of [`Ring::pop`] and [`Ring::pop_until`].
#[must_use = "pop does nothing unless awaited"]
pub struct Pop<'a, T> {
    ring: &'a Ring<T>,
    deadline: SimTime,
    /// The instant a wake is already scheduled for.
    armed_for: Option<SimTime>,
    /// Our registration number and waker, while we may be in the ring's pop-waiter queue.
    registered: Option<(u64, Waker)>,
}

impl<T> State<T> {
    /// Whether registration `n` is still in the pop-waiter queue (not yet woken).
    fn waiting(&self, n: u64) -> bool {
        n >= self.first_waiting
    }

    /// Queues `waker` for the next item and returns its registration number.
    fn register(&mut self, waker: &Waker) -> u64 {
        let n = self.next_waiter;
        self.next_waiter += 1;
        self.pop_waiters.push_back((n, waker.clone()));
        n
    }

    /// Takes registration `n` out of the queue (a consumer that gave up or moved tasks).
    fn unregister(&mut self, n: u64) {
        if !self.waiting(n) {
            return;
        }
        if self.pop_waiters.back().is_some_and(|(m, _)| *m == n) {
            self.pop_waiters.pop_back(); // the usual case: the latest registration gives up
        } else {
            self.pop_waiters.retain(|(m, _)| *m != n);
        }
    }
}

impl<T> Drop for Pop<'_, T> {
    fn drop(&mut self) {
        if let Some((n, _)) = self.registered.take() {
            self.ring.state.borrow_mut().unregister(n);
        }
    }
}

impl<T> Future for Pop<'_, T> {
    type Output = Option<T>;
    fn poll(mut self: Pin<&mut Self>, task: &mut Context<'_>) -> Poll<Option<T>> {
        let r = self.ring;
        if let Some(item) = r.try_pop() {
            return Poll::Ready(Some(item));
        }
        let now = r.cx.now();
        if now >= self.deadline {
            return Poll::Ready(None);
        }
        let head = r.state.borrow().items.front().map(|(at, _)| *at);
        let wake = match head {
            Some(at) => Some(at.min(self.deadline)),
            None => {
                let mut st = r.state.borrow_mut();
                // Still queued with the same waker: keep our place (a spurious wake).
                let queued = match &self.registered {
                    Some((n, w)) if st.waiting(*n) => {
                        if w.will_wake(task.waker()) {
                            true
                        } else {
                            st.unregister(*n);
                            false
                        }
                    }
                    _ => false,
                };
                if !queued {
                    let n = st.register(task.waker());
                    self.registered = Some((n, task.waker().clone()));
                }
                drop(st);
                (self.deadline != SimTime::MAX).then_some(self.deadline)
            }
        };
        if let Some(at) = wake
            && self.armed_for.is_none_or(|armed| armed > at || armed <= now)
        {
            self.armed_for = Some(at);
            r.cx.wake_at(at, task.waker());
        }
        r.cx.note_wait(WaitOn::RingPop(r.label.clone()));
        Poll::Pending
    }
}

/// Future of [`Ring::wait_until`].
#[must_use = "wait_until does nothing unless awaited"]
pub struct WaitUntil<'a, T> {
    ring: &'a Ring<T>,
    deadline: SimTime,
    armed_for: Option<SimTime>,
    registered: Option<(u64, Waker)>,
}

impl<T> Future for WaitUntil<'_, T> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, task: &mut Context<'_>) -> Poll<()> {
        let r = self.ring;
        let now = r.cx.now();
        let head = r.state.borrow().items.front().map(|(at, _)| *at);
        if now >= self.deadline || head.is_some_and(|at| at <= now) {
            return Poll::Ready(());
        }
        let wake = match head {
            Some(at) => at.min(self.deadline),
            None => {
                let mut st = r.state.borrow_mut();
                let queued = self
                    .registered
                    .as_ref()
                    .is_some_and(|(n, w)| st.waiting(*n) && w.will_wake(task.waker()));
                if !queued {
                    if let Some((n, _)) = self.registered.take() {
                        st.unregister(n);
                    }
                    let n = st.register(task.waker());
                    self.registered = Some((n, task.waker().clone()));
                }
                self.deadline
            }
        };
        if wake != SimTime::MAX && self.armed_for != Some(wake) {
            self.armed_for = Some(wake);
            r.cx.wake_at(wake, task.waker());
        }
        r.cx.note_wait(WaitOn::RingPop(r.label.clone()));
        Poll::Pending
    }
}

impl<T> Drop for WaitUntil<'_, T> {
    fn drop(&mut self) {
        if let Some((n, _)) = self.registered.take() {
            self.ring.state.borrow_mut().unregister(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CoreSpec, Frequency, Sim};
    use std::rc::Rc;

    #[test]
    fn items_arrive_after_latency_and_cost() {
        let sim = Sim::new(1);
        let core = sim.add_core(CoreSpec::new("ftl", Frequency::mhz(1000)));
        let cx = sim.cx();
        let spec = RingSpec { capacity: 2, enqueue_cycles: 100, notify_latency: SimDuration::from_nanos(50) };
        let ring = Rc::new(Ring::new(&cx, "avail", spec));
        let r = ring.clone();
        cx.spawn(core, "producer", async move {
            for i in 0..4u32 {
                r.push(i).await;
            }
        });
        let (r, c) = (ring.clone(), cx.clone());
        let got = sim
            .block_on(async move {
                let mut got = Vec::new();
                for _ in 0..4 {
                    let v = r.pop().await.unwrap();
                    got.push((v, c.now().as_nanos()));
                    c.sleep(SimDuration::from_nanos(1000)).await;
                }
                got
            })
            .unwrap();
        // Item 0: 100 ns enqueue + 50 ns latency. Items 1 and 2 are pushed at 200 and 300 ns;
        // the ring then holds two items, so item 3 waits for space until the consumer pops
        // item 1 at 1150 ns.
        assert_eq!(got, vec![(0, 150), (1, 1150), (2, 2150), (3, 3150)]);
        assert_eq!(ring.stats().full_stalls, 1);
        assert_eq!(ring.stats().max_len, 2);
    }

    #[test]
    fn producers_that_find_the_ring_full_keep_their_order() {
        // Capacity 1. Producers p0..p3 push at t=0 in order; the consumer pops one item every
        // 10 ns. A late producer arrives at t=10 right after the consumer freed a slot but
        // before waiting p1 has run: it must queue behind p1..p3, not take the slot.
        let sim = Sim::new(1);
        let cx = sim.cx();
        let spec = RingSpec { capacity: 1, ..RingSpec::default() };
        let ring = Rc::new(Ring::new(&cx, "r", spec));
        for i in 0..4u32 {
            let r = ring.clone();
            cx.spawn(crate::CoreId::UNBOUND, format!("p{i}"), async move { r.push(i).await });
        }
        let (r, c) = (ring.clone(), cx.clone());
        cx.spawn(crate::CoreId::UNBOUND, "late", async move {
            c.sleep(SimDuration::from_nanos(1)).await; // set the t=10 timer after the consumer's
            c.sleep_until(SimTime::from_nanos(10)).await;
            r.push(4).await;
        });
        let (r, c) = (ring.clone(), cx.clone());
        let got = sim
            .block_on(async move {
                let mut got = Vec::new();
                for _ in 0..5 {
                    c.sleep(SimDuration::from_nanos(10)).await;
                    got.push(r.pop().await.unwrap());
                }
                got
            })
            .unwrap();
        assert_eq!(got, vec![0, 1, 2, 3, 4]);
    }

    /// A consumer that pops several items in a row frees as many slots for waiting producers;
    /// a new producer arriving before they have run again must not take a free slot ahead of
    /// them. It did (the free slots outnumbered the producers granted one), so a write-back
    /// queued a block's later pages before the earlier pages waiting for space, and the FIL
    /// programmed them out of order (found by `ssdlab serve`'s shutdown flush, issue 14). Now a
    /// waiting producer's item enters the ring the moment its slot frees.
    #[test]
    fn a_new_producer_waits_behind_waiting_ones() {
        let sim = Sim::new(1);
        let cx = sim.cx();
        let ring = Rc::new(Ring::new(&cx, "r", RingSpec { capacity: 3, ..RingSpec::default() }));
        for i in 0..5u32 {
            let r = ring.clone();
            cx.spawn(crate::CoreId::UNBOUND, format!("p{i}"), async move { r.push(i).await });
        }
        // The late producer wakes at t=10 right after the consumer (its timer is set later), so
        // it runs after the consumer's pops but before the waiting p3 and p4 run again.
        let (r, c) = (ring.clone(), cx.clone());
        cx.spawn(crate::CoreId::UNBOUND, "late", async move {
            c.sleep(SimDuration::from_nanos(1)).await;
            c.sleep_until(SimTime::from_nanos(10)).await;
            r.push(5).await;
        });
        let (r, c) = (ring.clone(), cx.clone());
        let got = sim
            .block_on(async move {
                c.sleep(SimDuration::from_nanos(10)).await;
                // Three items out at once: the slots of waiting p3 and p4, and a free one.
                let mut got: Vec<u32> = (0..3).map(|_| r.try_pop().unwrap()).collect();
                for _ in 0..3 {
                    got.push(r.pop().await.unwrap());
                }
                got
            })
            .unwrap();
        assert_eq!(got, vec![0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn wait_until_returns_when_an_item_is_visible_or_at_the_deadline() {
        let sim = Sim::new(1);
        let cx = sim.cx();
        let spec = RingSpec { notify_latency: SimDuration::from_nanos(5), ..RingSpec::default() };
        let ring = Rc::new(Ring::<u8>::new(&cx, "r", spec));
        let (r, c) = (ring.clone(), cx.clone());
        cx.spawn(crate::CoreId::UNBOUND, "producer", async move {
            c.sleep(SimDuration::from_nanos(10)).await;
            r.push(7).await; // visible at 15
        });
        let (r, c) = (ring.clone(), cx.clone());
        let out = sim
            .block_on(async move {
                r.wait_until(SimTime::from_nanos(100)).await;
                let first = (c.now(), r.try_pop());
                r.wait_until(SimTime::from_nanos(40)).await;
                (first, c.now(), r.try_pop())
            })
            .unwrap();
        assert_eq!(out, ((SimTime::from_nanos(15), Some(7)), SimTime::from_nanos(40), None));
    }

    #[test]
    fn pop_until_times_out() {
        let sim = Sim::new(1);
        let cx = sim.cx();
        let ring = Rc::new(Ring::<u8>::new(&cx, "r", RingSpec::default()));
        let c = cx.clone();
        let out =
            sim.block_on(async move { (ring.pop_until(SimTime::from_nanos(30)).await, c.now()) }).unwrap();
        assert_eq!(out, (None, SimTime::from_nanos(30)));
    }
}
