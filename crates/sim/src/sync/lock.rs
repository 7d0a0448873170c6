//! Locks as multi-core firmware has them, with their cost charged on the core: a spin lock
//! (the waiting core stays busy, and is charged, while it spins) and a sleeping lock (the
//! waiting coroutine frees its core). Both hand over in FIFO order, like a ticket lock.
//!
//! A lock protects no data here: firmware state lives in the layers above, which the executor
//! runs one task at a time; a lock models the time a real controller spends taking it and
//! waiting for it. Taking a lock costs `acquire_cycles` on the taker's core, plus the
//! cache-line transfer latency when another core held it last (the lock word moves between
//! cores' caches). Statistics are kept per *class* ([`LockClass`]): every per-cache-line lock
//! of a firmware counts in one class, the way a profiler groups them.
//!
//! A spin lock whose holder runs on the waiter's own core cannot be spun for (the holder
//! could never run again), nor one that a waiter of the same core will get first, so such a
//! waiter sleeps instead, as coroutine firmware yields; so does a task that already holds
//! another lock of the same table. And a task that owns a lock takes its core back from a
//! spinner when it needs to run (resuming after a flash read, or handed a lock): otherwise two
//! cores could each spin for a lock whose owner waits for the other core.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::hash::Hash;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use rustc_hash::FxHashMap;

use crate::core::CoreId;
use crate::cx::Cx;
use crate::task::{Label, TaskKey, WaitOn};
use crate::time::{SimDuration, SimTime};

mod class;

pub use class::{LockClass, LockCosts, LockKind, LockStats};

struct Waiter {
    granted: Cell<bool>,
    /// The waiting task (its core can change while it waits: a sibling of a `join_all` may
    /// move it), or its core if it is not a task of the executor.
    task: Option<TaskKey>,
    core: CoreId,
    waker: RefCell<Option<Waker>>,
}

impl Waiter {
    fn core(&self, cx: &Cx) -> CoreId {
        self.task.and_then(|k| cx.inner.task_core(k)).unwrap_or(self.core)
    }
}

/// The state of one lock.
#[derive(Default)]
struct State {
    held: bool,
    holder: Option<TaskKey>,
    /// The task the lock belongs to (set when it is handed over, before that task runs
    /// again) and its core then: the spin rule's.
    owner: Option<(Option<TaskKey>, CoreId)>,
    /// The core of the previous owner: taking the lock from another core pays the transfer.
    last_core: Option<CoreId>,
    held_since: SimTime,
    waiters: VecDeque<Rc<Waiter>>,
}

impl State {
    fn idle(&self) -> bool {
        !self.held && self.waiters.is_empty()
    }
}

/// Where a lock's state lives: in a [`Lock`], or in a [`LockTable`] under a key.
trait Slot {
    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R;
    /// The lock is released and nobody waits: a table may drop its state.
    fn idle(&self) {}
    /// Whether `task` holds another lock of the same table (it must not spin then).
    fn holds_another(&self, _task: TaskKey) -> bool {
        false
    }
}

/// One lock.
pub struct Lock {
    cx: Cx,
    class: Rc<LockClass>,
    kind: LockKind,
    costs: LockCosts,
    state: RefCell<State>,
}

impl Slot for Lock {
    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        f(&mut self.state.borrow_mut())
    }
}

impl Lock {
    /// A free lock of `class`.
    pub fn new(cx: &Cx, class: &Rc<LockClass>, kind: LockKind, costs: LockCosts) -> Lock {
        Lock { cx: cx.clone(), class: class.clone(), kind, costs, state: RefCell::new(State::default()) }
    }

    /// Takes the lock (waiting in FIFO order while it is held) and returns the time spent
    /// getting it; [`release`](Self::release) gives it back.
    pub async fn acquire(&self) -> SimDuration {
        acquire(&self.cx, &self.class, self.kind, self.costs, self).await
    }

    /// Gives the lock back (to the first waiter, if any).
    pub fn release(&self) {
        release(&self.cx, &self.class, self);
    }
}

/// Locks named by a key (one per cache line, say), created when first taken and forgotten
/// when free, so that a table over millions of keys holds only the busy ones.
pub struct LockTable<K> {
    cx: Cx,
    class: Rc<LockClass>,
    kind: LockKind,
    costs: LockCosts,
    locks: RefCell<FxHashMap<K, State>>,
}

/// One key's lock in a table (what the free functions below work on).
struct Keyed<'a, K> {
    table: &'a LockTable<K>,
    key: K,
}

impl<K: Hash + Eq + Copy> Slot for Keyed<'_, K> {
    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        f(self.table.locks.borrow_mut().entry(self.key).or_default())
    }
    fn idle(&self) {
        let mut locks = self.table.locks.borrow_mut();
        if locks.get(&self.key).is_some_and(State::idle) {
            locks.remove(&self.key);
        }
    }
    fn holds_another(&self, task: TaskKey) -> bool {
        self.table.locks.borrow().iter().any(|(k, st)| *k != self.key && st.held && st.holder == Some(task))
    }
}

impl<K: Hash + Eq + Copy> LockTable<K> {
    /// An empty table of locks of `class`.
    pub fn new(cx: &Cx, class: &Rc<LockClass>, kind: LockKind, costs: LockCosts) -> Self {
        LockTable { cx: cx.clone(), class: class.clone(), kind, costs, locks: RefCell::default() }
    }

    /// Takes `key`'s lock; returns the time spent getting it.
    pub async fn acquire(&self, key: K) -> SimDuration {
        acquire(&self.cx, &self.class, self.kind, self.costs, &Keyed { table: self, key }).await
    }

    /// Gives `key`'s lock back.
    pub fn release(&self, key: K) {
        release(&self.cx, &self.class, &Keyed { table: self, key });
    }

    /// Whether `key`'s lock is held.
    pub fn is_held(&self, key: K) -> bool {
        self.locks.borrow().get(&key).is_some_and(|s| s.held)
    }

    /// Keys whose lock is held or waited for.
    pub fn busy(&self) -> usize {
        self.locks.borrow().len()
    }
}

async fn acquire(
    cx: &Cx,
    class: &LockClass,
    kind: LockKind,
    costs: LockCosts,
    slot: &impl Slot,
) -> SimDuration {
    let asked = cx.now();
    let me = cx.inner.current().map(|(k, _)| k);
    let core = cx.core();
    // Spinning while holding another lock of the table could close a cycle across cores (this
    // core spins for a lock whose holder waits for a core spinning for ours): sleep instead.
    let holding = me.is_some_and(|k| slot.holds_another(k));
    let waiter = slot.with(|st| {
        if !st.held {
            st.held = true;
            st.holder = me;
            st.owner = Some((me, core));
            return None;
        }
        // Spinning for a lock that a task of this very core holds, or will get first, would
        // never end (that task needs the core to run): sleep instead.
        let owner_core = st.owner.map(|(task, c)| task.and_then(|k| cx.inner.task_core(k)).unwrap_or(c));
        let spin = kind == LockKind::Spin
            && !holding
            && !core.is_unbound()
            && owner_core != Some(core)
            && st.waiters.iter().all(|w| w.core(cx) != core);
        let w = Rc::new(Waiter { granted: Cell::new(false), task: me, core, waker: RefCell::new(None) });
        st.waiters.push_back(w.clone());
        Some((w, spin, st.holder))
    });
    let contended = waiter.is_some();
    match (waiter, me) {
        (Some((w, spin, holder)), _) => {
            Granted { cx, waiter: w, spin: spin.then_some(me).flatten(), label: class.name.clone(), holder }
                .await;
            // The spin, unless a lock holder took the core meanwhile (charged then).
            if spin
                && let Some(k) = me
                && let Some(d) = cx.inner.stop_spinning(core, k)
            {
                cx.charge(core, d);
            }
        }
        (None, Some(k)) => cx.inner.hold_locks(k, 1),
        (None, None) => {}
    }
    let cost = slot.with(|st| {
        let moved = st.last_core.is_some_and(|c| c != core);
        st.holder = me;
        if moved { costs.transfer } else { SimDuration::ZERO }
    });
    // The core is stalled while the lock's cache line arrives: busy, like the atomic itself.
    if core.is_unbound() {
        cx.sleep(cost).await;
    } else {
        cx.compute_for(cx.cycles(core, costs.acquire_cycles) + cost).await;
    }
    let now = cx.now();
    slot.with(|st| st.held_since = now);
    let waited = now.since(asked);
    let mut s = class.stats.borrow_mut();
    s.acquisitions += 1;
    s.contended += contended as u64;
    s.total_wait += waited;
    s.waits.record(waited.as_nanos());
    waited
}

fn release(cx: &Cx, class: &LockClass, slot: &impl Slot) {
    let now = cx.now();
    let next = slot.with(|st| {
        assert!(st.held, "release of a lock that is not held");
        class.stats.borrow_mut().total_hold += now.since(st.held_since);
        st.last_core = Some(cx.core()); // the lock word is in the releasing core's cache
        if let Some(k) = st.holder {
            cx.inner.hold_locks(k, -1);
        }
        match st.waiters.pop_front() {
            Some(w) => {
                st.owner = Some((w.task, w.core(cx))); // handed over: stays held, now by the waiter
                st.holder = w.task;
                if let Some(k) = w.task {
                    cx.inner.hold_locks(k, 1); // it owns the lock before it runs again
                }
                Some(w)
            }
            None => {
                st.held = false;
                st.holder = None;
                st.owner = None;
                None
            }
        }
    });
    match next {
        Some(w) => {
            w.granted.set(true);
            if let Some(waker) = w.waker.borrow_mut().take() {
                waker.wake();
            }
        }
        None => slot.idle(),
    }
}

/// Waits until the lock is handed over; a spinning waiter keeps its core.
struct Granted<'a> {
    cx: &'a Cx,
    waiter: Rc<Waiter>,
    /// The spinning task, if the waiter spins.
    spin: Option<TaskKey>,
    label: Label,
    holder: Option<TaskKey>,
}

impl Future for Granted<'_> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, task: &mut Context<'_>) -> Poll<()> {
        if self.waiter.granted.get() {
            return Poll::Ready(());
        }
        *self.waiter.waker.borrow_mut() = Some(task.waker().clone());
        // It holds its core while it spins (whenever it runs again after losing it too),
        // unless a task that holds a lock waits for the core.
        if let Some(k) = self.spin
            && self.cx.inner.start_spinning(self.cx.core(), k)
        {
            self.cx.inner.note_computing();
        }
        self.cx.note_wait(WaitOn::Mutex(self.label.clone(), self.holder));
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CoreSpec, Frequency, Sim};

    fn two_cores(sim: &Sim) -> (CoreId, CoreId) {
        (
            sim.add_core(CoreSpec::new("a", Frequency::mhz(1000))),
            sim.add_core(CoreSpec::new("b", Frequency::mhz(1000))),
        )
    }

    /// Core a holds the lock for 1 us of compute; core b asks at once and spins: b is busy the
    /// whole microsecond, then pays the acquisition and the cache-line transfer.
    #[test]
    fn a_spinning_core_is_charged_while_it_waits() {
        let sim = Sim::new(1);
        let (a, b) = two_cores(&sim);
        let cx = sim.cx();
        let class = LockClass::new("index");
        let costs = LockCosts { acquire_cycles: 100, transfer: SimDuration::from_nanos(50) };
        let lock = Rc::new(Lock::new(&cx, &class, LockKind::Spin, costs));
        let (l, c) = (lock.clone(), cx.clone());
        cx.spawn(a, "holder", async move {
            l.acquire().await;
            c.compute(1_000).await;
            l.release();
        });
        let (l, c) = (lock.clone(), cx.clone());
        let got = Rc::new(Cell::new(SimTime::ZERO));
        let g = got.clone();
        cx.spawn(b, "spinner", async move {
            l.acquire().await;
            g.set(c.now());
            l.release();
        });
        sim.run().unwrap();
        // Holder: 100 ns to take it, holds 1000 ns, releases at 1100. Spinner: granted at 1100,
        // then 100 ns of acquisition and 50 ns of transfer.
        assert_eq!(got.get(), SimTime::from_nanos(1_250));
        let busy: Vec<u64> = sim.core_stats().iter().map(|c| c.busy.as_nanos()).collect();
        assert_eq!(
            busy,
            vec![1_100, 1_100 + 100 + 50],
            "b spun 1100 ns, then took it and waited for its line"
        );
        let s = class.stats();
        assert_eq!((s.acquisitions, s.contended), (2, 1));
        assert_eq!(s.total_wait, SimDuration::from_nanos(100 + 1_250));
        assert_eq!(s.total_hold, SimDuration::from_nanos(1_000));
    }

    /// A sleeping waiter frees its core: another task on it runs while it waits.
    #[test]
    fn a_sleeping_waiter_frees_its_core_and_keys_are_independent() {
        let sim = Sim::new(1);
        let (a, b) = two_cores(&sim);
        let cx = sim.cx();
        let class = LockClass::new("line");
        let table = Rc::new(LockTable::new(&cx, &class, LockKind::Sleep, LockCosts::default()));
        let (t, c) = (table.clone(), cx.clone());
        cx.spawn(a, "filler", async move {
            t.acquire(7u32).await;
            c.sleep(SimDuration::from_micros(5)).await; // a flash read, lock held
            t.release(7);
        });
        let order = Rc::new(RefCell::new(Vec::new()));
        for (name, key) in [("same line", 7u32), ("other line", 8u32)] {
            let (t, c, o) = (table.clone(), cx.clone(), order.clone());
            cx.spawn(b, name, async move {
                t.acquire(key).await;
                o.borrow_mut().push((name, c.now().as_nanos()));
                t.release(key);
            });
        }
        sim.run().unwrap();
        assert_eq!(*order.borrow(), vec![("other line", 0), ("same line", 5_000)]);
        assert_eq!(sim.core_stats()[1].busy, SimDuration::ZERO, "nobody spun");
        assert_eq!(table.busy(), 0, "free locks are forgotten");
        assert_eq!(class.stats().contended, 1);
    }

    /// Many tasks on three cores take one spin lock, some holding it across a sleep: a waiter
    /// must never spin on a core whose task the lock is handed to first (it would keep that
    /// task from running, forever). Every task gets through.
    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri (600 acquisitions); the other lock tests take the same paths")]
    fn spinning_never_starves_the_owner_of_its_core() {
        let sim = Sim::new(1);
        let cores: Vec<CoreId> =
            (0..3).map(|i| sim.add_core(CoreSpec::new(format!("c{i}"), Frequency::mhz(1000)))).collect();
        let cx = sim.cx();
        let class = LockClass::new("hot");
        let lock = Rc::new(Lock::new(
            &cx,
            &class,
            LockKind::Spin,
            LockCosts { acquire_cycles: 7, ..Default::default() },
        ));
        let done = Rc::new(Cell::new(0));
        for i in 0..30u64 {
            let (l, c, d) = (lock.clone(), cx.clone(), done.clone());
            cx.spawn(cores[i as usize % 3], format!("t{i}"), async move {
                for round in 0..20u64 {
                    c.sleep(SimDuration::from_nanos((i * 7 + round * 13) % 50)).await;
                    l.acquire().await;
                    if (i + round) % 3 == 0 {
                        c.sleep(SimDuration::from_nanos(40)).await; // held while suspended
                    } else {
                        c.compute(20).await;
                    }
                    l.release();
                }
                d.set(d.get() + 1);
            });
        }
        sim.run().expect("no task is left spinning for a lock it can never get");
        assert_eq!(done.get(), 30);
        assert_eq!(class.stats().acquisitions, 600);
        assert!(class.stats().contended > 0);
    }

    /// Two tasks hold a lock each across a sleep (a flash read); a task on each one's core spins
    /// for the other's lock. When a holder wakes, its core is held by a spinner that waits, via
    /// the other core, for this very holder: the holder must take its core back.
    #[test]
    fn a_lock_holder_takes_its_core_back_from_a_spinner() {
        let sim = Sim::new(1);
        let (a, b) = two_cores(&sim);
        let cx = sim.cx();
        let class = LockClass::new("line");
        let table = Rc::new(LockTable::new(&cx, &class, LockKind::Spin, LockCosts::default()));
        let done = Rc::new(RefCell::new(Vec::new()));
        let jobs: [(CoreId, u32, u64, &str); 4] =
            [(a, 1, 0, "holder a"), (b, 2, 0, "holder b"), (b, 1, 10, "spinner b"), (a, 2, 10, "spinner a")];
        for (core, key, start, name) in jobs {
            let (t, c, d) = (table.clone(), cx.clone(), done.clone());
            cx.spawn(core, name, async move {
                c.sleep(SimDuration::from_nanos(start)).await;
                t.acquire(key).await;
                if start == 0 {
                    c.sleep(SimDuration::from_nanos(100)).await; // held across a flash read
                }
                t.release(key);
                d.borrow_mut().push(name);
            });
        }
        sim.run().expect("holders get their cores back");
        assert_eq!(done.borrow().len(), 4);
        assert!(sim.core_stats().iter().all(|c| c.busy > SimDuration::ZERO), "both cores spun");
    }

    /// Issue 26 (Tradition-N's livelock): a lock holder that is already queued for its core
    /// when another task of that core starts to spin must get the core, not only one woken
    /// while the core spins. H holds `one` and waits for core a behind S; S spins for `two`,
    /// held by T on core b, which spins for `one`. Before, S kept core a forever.
    #[test]
    fn a_spinner_gives_its_core_to_a_lock_holder_queued_for_it() {
        let sim = Sim::new(1);
        let (a, b) = two_cores(&sim);
        let cx = sim.cx();
        let class = LockClass::new("table");
        let lock = |_| Rc::new(Lock::new(&cx, &class, LockKind::Spin, LockCosts::default()));
        let (one, two) = (lock(1), lock(2));
        let done = Rc::new(RefCell::new(Vec::new()));
        let us = SimDuration::from_nanos;
        let (l, c, d) = (one.clone(), cx.clone(), done.clone());
        cx.spawn(a, "H", async move {
            l.acquire().await;
            c.sleep(us(10)).await; // wakes while X computes: queued behind S
            l.release();
            d.borrow_mut().push("H");
        });
        let (c, d) = (cx.clone(), done.clone());
        cx.spawn(a, "X", async move {
            c.sleep(us(1)).await;
            c.compute_for(us(100)).await;
            d.borrow_mut().push("X");
        });
        let (l, c, d) = (two.clone(), cx.clone(), done.clone());
        cx.spawn(a, "S", async move {
            c.sleep(us(5)).await; // queued behind X
            l.acquire().await;
            l.release();
            d.borrow_mut().push("S");
        });
        let (l1, l2, c, d) = (one.clone(), two.clone(), cx.clone(), done.clone());
        cx.spawn(b, "T", async move {
            l2.acquire().await;
            c.sleep(us(20)).await;
            l1.acquire().await; // held by H: spins on core b
            l1.release();
            l2.release();
            d.borrow_mut().push("T");
        });
        sim.run().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(*done.borrow(), vec!["X", "H", "T", "S"]);
    }

    /// Waiters are served in the order they asked.
    #[test]
    fn waiters_take_the_lock_in_fifo_order() {
        let sim = Sim::new(1);
        let cx = sim.cx();
        let lock = Rc::new(Lock::new(&cx, &LockClass::new("l"), LockKind::Sleep, LockCosts::default()));
        let order = Rc::new(RefCell::new(Vec::new()));
        for i in 0..4 {
            let (l, c, o) = (lock.clone(), cx.clone(), order.clone());
            cx.spawn(CoreId::UNBOUND, format!("t{i}"), async move {
                l.acquire().await;
                o.borrow_mut().push(i);
                c.sleep(SimDuration::from_nanos(10)).await;
                l.release();
            });
        }
        sim.run().unwrap();
        assert_eq!(*order.borrow(), vec![0, 1, 2, 3]);
    }
}
