//! A single-producer, single-consumer lock-free queue between two pipeline stages on two cores,
//! as PipeSSD joins its stages: the request itself travels through it (its coroutine moves to
//! the next stage's core), paying an enqueue cost on the producer's core, the cache-line
//! transfer latency between the cores, and a dequeue cost on the consumer's core. Items leave
//! in the order they entered; a full queue makes the producer wait.
//!
//! ```text
//!   stage core A ── enqueue (cycles on A) ──▶ [ transfer latency ] ──▶ core B's FIFO ── dequeue (cycles on B)
//! ```

use std::cell::RefCell;

use serde::{Deserialize, Serialize};

use crate::core::CoreId;
use crate::cx::Cx;
use crate::sync::Notify;
use crate::task::Label;
use crate::time::{SimDuration, SimTime};

/// Configuration of a stage queue.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageQueueSpec {
    /// Slots. Default: 1024.
    #[serde(default = "default_capacity")]
    pub capacity: usize,
    /// Cycles on the producer's core per item. Default: 0.
    #[serde(default)]
    pub enqueue_cycles: u64,
    /// Cycles on the consumer's core per item. Default: 0.
    #[serde(default)]
    pub dequeue_cycles: u64,
    /// Latency of the item's cache lines moving from the producer's core to the consumer's.
    /// Default: 0.
    #[serde(default)]
    pub transfer: SimDuration,
}

fn default_capacity() -> usize {
    1024
}

impl Default for StageQueueSpec {
    fn default() -> Self {
        StageQueueSpec {
            capacity: default_capacity(),
            enqueue_cycles: 0,
            dequeue_cycles: 0,
            transfer: SimDuration::ZERO,
        }
    }
}

/// What a stage queue saw.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StageQueueStats {
    /// Items that went through.
    pub items: u64,
    /// Most items in the queue at once (entered, not yet taken by the consumer).
    pub max_occupancy: usize,
    /// Occupancy integrated over time (item-nanoseconds): divide by the elapsed time for the
    /// mean occupancy.
    pub occupancy_ns: u128,
    /// Time items spent in the queue, summed.
    pub total_wait: SimDuration,
    /// Producers that found the queue full.
    pub full_stalls: u64,
}

struct State {
    occupancy: usize,
    since: SimTime,
    stats: StageQueueStats,
}

/// A queue into the stage running on `core`.
pub struct StageQueue {
    cx: Cx,
    label: Label,
    core: CoreId,
    spec: StageQueueSpec,
    state: RefCell<State>,
    space: Notify,
}

impl StageQueue {
    /// A queue delivering to `core`.
    ///
    /// # Panics
    /// If the capacity is zero (validate configurations first).
    pub fn new(cx: &Cx, label: impl Into<Label>, core: CoreId, spec: StageQueueSpec) -> Self {
        let label = label.into();
        assert!(spec.capacity > 0, "stage queue '{label}' has zero capacity");
        StageQueue {
            cx: cx.clone(),
            space: Notify::new(cx, format!("{label} space")),
            label,
            core,
            spec,
            state: RefCell::new(State {
                occupancy: 0,
                since: SimTime::ZERO,
                stats: StageQueueStats::default(),
            }),
        }
    }

    /// The queue's name.
    pub fn label(&self) -> &Label {
        &self.label
    }

    /// The consumer's core.
    pub fn core(&self) -> CoreId {
        self.core
    }

    /// Moves the running task into the consumer's stage: waits while the queue is full, pays
    /// the enqueue cost here, travels, waits its turn on the consumer's core and pays the
    /// dequeue cost there.
    pub async fn pass(&self) {
        if self.state.borrow().occupancy >= self.spec.capacity {
            self.state.borrow_mut().stats.full_stalls += 1;
            while self.state.borrow().occupancy >= self.spec.capacity {
                self.space.notified().await;
            }
        }
        if !self.cx.core().is_unbound() {
            self.cx.compute(self.spec.enqueue_cycles).await;
        }
        let entered = self.cx.now();
        self.change(1);
        self.cx.migrate(self.core, self.spec.transfer).await;
        self.change(-1);
        self.state.borrow_mut().stats.total_wait += self.cx.now().since(entered);
        self.space.notify_one();
        if !self.core.is_unbound() {
            self.cx.compute(self.spec.dequeue_cycles).await;
        }
    }

    fn change(&self, by: isize) {
        let now = self.cx.now();
        let mut st = self.state.borrow_mut();
        let elapsed = now.since(st.since).as_nanos() as u128;
        st.stats.occupancy_ns += elapsed * st.occupancy as u128;
        st.since = now;
        st.occupancy = st.occupancy.checked_add_signed(by).expect("occupancy stays non-negative");
        if by > 0 {
            st.stats.items += 1;
            st.stats.max_occupancy = st.stats.max_occupancy.max(st.occupancy);
        }
    }

    /// Items in the queue now.
    pub fn occupancy(&self) -> usize {
        self.state.borrow().occupancy
    }

    /// Statistics so far (the occupancy integral brought up to now).
    pub fn stats(&self) -> StageQueueStats {
        let now = self.cx.now();
        let st = self.state.borrow();
        let mut s = st.stats.clone();
        s.occupancy_ns += now.since(st.since).as_nanos() as u128 * st.occupancy as u128;
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CoreSpec, Frequency, Sim};
    use std::rc::Rc;

    /// Three requests pass from stage A to stage B: each pays 100 ns on A, 50 ns in transit and
    /// 200 ns on B, where they are served one at a time in the order they entered.
    #[test]
    fn items_cross_in_order_paying_both_sides() {
        let sim = Sim::new(1);
        let a = sim.add_core(CoreSpec::new("a", Frequency::mhz(1000)));
        let b = sim.add_core(CoreSpec::new("b", Frequency::mhz(1000)));
        let cx = sim.cx();
        let spec = StageQueueSpec {
            enqueue_cycles: 100,
            dequeue_cycles: 200,
            transfer: SimDuration::from_nanos(50),
            ..StageQueueSpec::default()
        };
        let q = Rc::new(StageQueue::new(&cx, "a->b", b, spec));
        let done = Rc::new(RefCell::new(Vec::new()));
        for i in 0..3 {
            let (q, c, d) = (q.clone(), cx.clone(), done.clone());
            cx.spawn(a, format!("req{i}"), async move {
                q.pass().await;
                assert_eq!(c.core(), q.core());
                d.borrow_mut().push((i, c.now().as_nanos()));
            });
        }
        sim.run().unwrap();
        // Enqueues end at 100, 200, 300; arrivals at 150, 250, 350; B serves 150-350,
        // 350-550, 550-750.
        assert_eq!(*done.borrow(), vec![(0, 350), (1, 550), (2, 750)]);
        let s = q.stats();
        assert_eq!((s.items, s.max_occupancy), (3, 2));
        assert_eq!(s.total_wait, SimDuration::from_nanos(50 + 150 + 250)); // entry to dequeue start
        let busy: Vec<u64> = sim.core_stats().iter().map(|c| c.busy.as_nanos()).collect();
        assert_eq!(busy, vec![300, 600]);
    }
}
