//! Running tasks on the controller cores: dispatch of a woken task to its core, the cores' run
//! queues and context switches, polling a task, lock spinning, and the core time each is
//! charged (the third of the ordering rules in `executor.rs`).

use std::task::{Context, Poll};

use super::{Inner, TimerAction};
use crate::core::CoreId;
use crate::task::{Label, TaskKey, WaitOn};
use crate::time::SimDuration;
use crate::trace::{Span, Track};
use crate::waker;

impl Inner {
    /// Charges `d` of busy time to `core` (utilisation statistics).
    pub fn charge(&self, core: CoreId, d: SimDuration) {
        if !core.is_unbound() {
            self.cores.borrow_mut()[core.index()].add_busy(self.cur_role.get(), d.as_nanos());
            if self.tracing.get() {
                let (name, request) = match self.current.get().and_then(|(k, _)| {
                    self.tasks.borrow().get(k).map(|slot| (slot.name.clone(), slot.request))
                }) {
                    Some(v) => v,
                    None => (Label::Static("(outside a task)"), None),
                };
                self.trace_core(core, d, name, request);
            }
        }
    }

    /// The running task `key` would spin on `core` for a lock: it keeps the core busy, unless a
    /// task holding a lock needs the core. Returns whether it spins: a task that holds a lock
    /// and waits in the core's run queue gets the core first instead (moved to the front), as
    /// one woken while the core spins takes it (see `dispatch`); the spinner could be waiting,
    /// through other cores, for that very task.
    pub fn start_spinning(&self, core: CoreId, key: TaskKey) -> bool {
        let mut cores = self.cores.borrow_mut();
        let c = &mut cores[core.index()];
        if c.spinning.is_some_and(|(k, _)| k == key) {
            return true;
        }
        let tasks = self.tasks.borrow();
        if let Some(i) = c.runq.iter().position(|&k| tasks.get(k).is_some_and(|s| s.locks_held > 0)) {
            let holder = c.runq.remove(i).expect("found");
            c.runq.push_front(holder);
            return false;
        }
        c.spinning = Some((key, self.now()));
        true
    }

    /// Task `key` stops spinning on `core`: how long it spun, if it still held the core (a
    /// spinner that lost its core to a lock holder was charged then).
    pub fn stop_spinning(&self, core: CoreId, key: TaskKey) -> Option<SimDuration> {
        let mut cores = self.cores.borrow_mut();
        let c = &mut cores[core.index()];
        match c.spinning {
            Some((k, since)) if k == key => {
                c.spinning = None;
                Some(self.now().since(since))
            }
            _ => None,
        }
    }

    /// Counts a lock task `key` came to own (`+1`) or gave back (`-1`).
    pub fn hold_locks(&self, key: TaskKey, delta: i32) {
        if let Some(s) = self.tasks.borrow_mut().get_mut(key) {
            s.locks_held =
                s.locks_held.checked_add_signed(delta as i16).expect("locks held stay non-negative");
        }
    }

    /// The role spinning counts as.
    fn roles_lock_wait(&self) -> u16 {
        self.role("lock wait")
    }

    /// Records that `core` is busy from now for `d` (a compute or a context switch).
    fn trace_core(&self, core: CoreId, d: SimDuration, name: Label, request: Option<u64>) {
        if let Some(r) = self.trace.borrow_mut().as_mut() {
            r.record(Span {
                track: Track::Core(core.index() as u16),
                start: self.now(),
                dur: d,
                name,
                request,
            });
        }
    }

    /// Runs a woken task if its core allows, else queues it on the core.
    pub(super) fn dispatch(&self, key: TaskKey) {
        let (core, holds_locks) = match self.tasks.borrow().get(key) {
            Some(slot) => (slot.core, slot.locks_held > 0),
            None => return,
        };
        if core.is_unbound() {
            return self.poll_task(key, core);
        }
        let mut cores = self.cores.borrow_mut();
        let c = &mut cores[core.index()];
        // A task that holds a lock takes the core from a task merely spinning for one: the
        // spinner could be waiting, through other cores, for this very task.
        if holds_locks
            && let Some((spinner, since)) = c.spinning
            && c.holder == Some(spinner)
            && spinner != key
        {
            c.spinning = None;
            c.holder = None;
            c.add_busy(self.roles_lock_wait(), self.now().since(since).as_nanos());
        }
        match c.holder {
            Some(holder) if holder == key => {
                drop(cores);
                self.poll_task(key, core);
            }
            Some(_) => {
                c.runq.push_back(key);
                c.max_run_queue = c.max_run_queue.max(c.runq.len());
                drop(cores);
                if let Some(slot) = self.tasks.borrow_mut().get_mut(key) {
                    slot.wait = WaitOn::Core;
                }
            }
            None => {
                c.holder = Some(key);
                c.switches += 1;
                let switch = c.switch;
                if switch.is_zero() {
                    drop(cores);
                    self.poll_task(key, core);
                } else {
                    c.add_busy(0, switch.as_nanos());
                    drop(cores);
                    if self.tracing.get() {
                        self.trace_core(core, switch, Label::Static("context switch"), None);
                    }
                    self.schedule(self.now() + switch, TimerAction::Dispatch(key));
                }
            }
        }
    }

    /// Gives a core up and hands it to the next task in its run queue.
    fn release_core(&self, core: CoreId) {
        let mut cores = self.cores.borrow_mut();
        let c = &mut cores[core.index()];
        c.holder = None;
        let Some(next) = c.runq.pop_front() else {
            return;
        };
        c.holder = Some(next);
        c.switches += 1;
        let switch = c.switch;
        if switch.is_zero() {
            drop(cores);
            self.ready.borrow_mut().push_back(next);
        } else {
            c.add_busy(0, switch.as_nanos());
            drop(cores);
            if self.tracing.get() {
                self.trace_core(core, switch, Label::Static("context switch"), None);
            }
            self.schedule(self.now() + switch, TimerAction::Dispatch(next));
        }
    }

    fn poll_task(&self, key: TaskKey, core: CoreId) {
        let (mut fut, role) = {
            let mut tasks = self.tasks.borrow_mut();
            let Some(slot) = tasks.get_mut(key) else {
                return;
            };
            slot.queued = false;
            match slot.fut.take() {
                Some(f) => (f, slot.role),
                None => return,
            }
        };
        self.current.set(Some((key, core)));
        self.cur_computing.set(false);
        self.cur_role.set(role);
        debug_assert!(matches!(self.cur_wait.take(), WaitOn::Runnable), "no wait is noted between polls");
        let waker = waker::task_waker(self.exec_id.get(), key);
        let result = fut.as_mut().poll(&mut Context::from_waker(&waker));
        self.current.set(None);
        let wait = self.cur_wait.take();
        let migrate = self.cur_migrate.take();
        let role = self.cur_role.replace(0);
        let keep_core = match result {
            Poll::Ready(()) => {
                self.tasks.borrow_mut().remove(key);
                drop(fut);
                false
            }
            Poll::Pending => {
                // A future that noted nothing waits on something this crate does not know.
                let wait = match wait {
                    WaitOn::Runnable => WaitOn::Other,
                    w => w,
                };
                let mut tasks = self.tasks.borrow_mut();
                let slot = tasks.get_mut(key).expect("a polled task stays in the table");
                slot.fut = Some(fut);
                slot.wait = wait;
                slot.role = role;
                match migrate {
                    Some(to) => {
                        slot.core = to;
                        false // it leaves its core now
                    }
                    None => self.cur_computing.get(),
                }
            }
        };
        if !core.is_unbound() && !keep_core {
            self.release_core(core);
        }
    }
}
