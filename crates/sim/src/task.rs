//! The task table: one slot per spawned task, reused with a generation counter so that a stale
//! waker or timer never reaches a newer task in the same slot.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use crate::core::CoreId;
use crate::time::SimTime;

/// Identifies a task within one simulation (slot and generation).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct TaskKey {
    pub(crate) slot: u32,
    pub(crate) generation: u16,
}

/// A cheap, clonable name for tasks and primitives, shown in deadlock reports and traces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Label {
    /// A name known at compile time.
    Static(&'static str),
    /// A name built at run time.
    Owned(Rc<str>),
}

impl Label {
    /// The name as a string slice.
    pub fn as_str(&self) -> &str {
        match self {
            Label::Static(s) => s,
            Label::Owned(s) => s,
        }
    }
}

impl From<&'static str> for Label {
    fn from(s: &'static str) -> Self {
        Label::Static(s)
    }
}

impl From<String> for Label {
    fn from(s: String) -> Self {
        Label::Owned(s.into())
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a suspended task is waiting for; recorded by the primitives when they return
/// `Pending`, and shown when a run stops in a deadlock.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum WaitOn {
    /// Ready to run, or running.
    #[default]
    Runnable,
    /// Ready, waiting for its core to be free.
    Core,
    /// Sleeping until an instant.
    Sleep(SimTime),
    /// Busy on its core until an instant.
    Compute(SimTime),
    /// A oneshot completion.
    Oneshot(Label),
    /// A notify / wait queue.
    Notify(Label),
    /// A coroutine mutex, and the task holding it.
    Mutex(Label, Option<TaskKey>),
    /// An item from a ring.
    RingPop(Label),
    /// Space in a full ring.
    RingPush(Label),
    /// Another task's completion.
    Join(Label),
    /// A future from outside this crate.
    Other,
}

/// What keeps a run going.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A run goes on until it finishes.
    Foreground,
    /// A service loop that may wait forever.
    Daemon,
    /// A daemon that only observes (a sampler): it wakes no other task, so a run whose
    /// foreground tasks all wait while only watchers' timers are pending is a deadlock.
    Watcher,
}

pub(crate) type BoxFuture = Pin<Box<dyn Future<Output = ()>>>;

/// One task's bookkeeping.
pub(crate) struct Slot {
    pub generation: u16,
    pub alive: bool,
    pub fut: Option<BoxFuture>,
    /// Woken and not yet polled (in the ready queue, a core's run queue, or a reserved core).
    pub queued: bool,
    pub daemon: bool,
    /// A daemon that only observes (see [`Kind::Watcher`]): its timers are not pending work.
    pub watcher: bool,
    pub core: CoreId,
    pub name: Label,
    pub wait: WaitOn,
    /// The instant of the last timer set for this task through its own waker; a second timer
    /// for the same future instant would only wake it twice.
    pub armed: SimTime,
    /// The host request the task is serving (for traces).
    pub request: Option<u64>,
    /// What the task's compute counts as on its core (an index into the executor's roles).
    pub role: u16,
    /// Locks the task owns (it may take its core back from a spinner).
    pub locks_held: u16,
}

/// All tasks of a simulation.
#[derive(Default)]
pub(crate) struct TaskTable {
    slots: Vec<Slot>,
    free: Vec<u32>,
    live_foreground: usize,
}

impl TaskTable {
    pub fn insert(&mut self, core: CoreId, name: Label, kind: Kind, fut: BoxFuture) -> TaskKey {
        let daemon = kind != Kind::Foreground;
        if !daemon {
            self.live_foreground += 1;
        }
        let fresh = |generation| Slot {
            generation,
            alive: true,
            fut: Some(fut),
            queued: true,
            daemon,
            watcher: kind == Kind::Watcher,
            core,
            name,
            wait: WaitOn::Runnable,
            armed: SimTime::ZERO,
            request: None,
            role: 0,
            locks_held: 0,
        };
        match self.free.pop() {
            Some(slot) => {
                let s = &mut self.slots[slot as usize];
                let generation = s.generation;
                *s = fresh(generation);
                TaskKey { slot, generation }
            }
            None => {
                let slot = u32::try_from(self.slots.len()).expect("more than 2^32 live tasks");
                self.slots.push(fresh(0));
                TaskKey { slot, generation: 0 }
            }
        }
    }

    pub fn get(&self, key: TaskKey) -> Option<&Slot> {
        self.slots.get(key.slot as usize).filter(|s| s.alive && s.generation == key.generation)
    }

    pub fn get_mut(&mut self, key: TaskKey) -> Option<&mut Slot> {
        self.slots.get_mut(key.slot as usize).filter(|s| s.alive && s.generation == key.generation)
    }

    /// Retires a finished task; its future (already taken out for polling) is dropped by the
    /// caller outside any borrow.
    pub fn remove(&mut self, key: TaskKey) {
        let Some(s) = self.get_mut(key) else { return };
        s.alive = false;
        s.generation = s.generation.wrapping_add(1);
        s.fut = None;
        s.wait = WaitOn::Runnable;
        let daemon = s.daemon;
        self.free.push(key.slot);
        if !daemon {
            self.live_foreground -= 1;
        }
    }

    /// Live tasks that are not daemons.
    pub fn live_foreground(&self) -> usize {
        self.live_foreground
    }

    pub fn iter_alive(&self) -> impl Iterator<Item = (TaskKey, &Slot)> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.alive)
            .map(|(i, s)| (TaskKey { slot: i as u32, generation: s.generation }, s))
    }

    /// Takes every future out (to drop them outside the borrow when a simulation ends).
    pub fn drain_futures(&mut self) -> Vec<BoxFuture> {
        self.slots.iter_mut().filter_map(|s| s.fut.take()).collect()
    }
}
