//! The event loop: a virtual clock, a timer heap ordered by (time, sequence), a FIFO of tasks
//! woken at the current instant, and the controller cores.
//!
//! Ordering rules (these make a run a pure function of its inputs):
//!
//! 1. Timers fire in order of their instant, ties broken by the order they were set.
//! 2. At an instant, every timer due then fires before any task woken at that instant runs;
//!    woken tasks then run in the order they were woken (a timer set for "now" is a wake).
//! 3. A core runs one task at a time; tasks waiting for a core take it in FIFO order.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::rc::Rc;
use std::task::Waker;

use rand::SeedableRng;

use crate::core::{CoreId, CoreSpec, CoreState, CoreStats};
use crate::cx::Cx;
use crate::deadlock::{BlockedTask, Deadlock};
use crate::rng::SimRng;
use crate::task::{BoxFuture, Kind, Label, TaskKey, TaskTable, WaitOn};
use crate::time::{SimDuration, SimTime};
use crate::timers::{self, Timers};
use crate::trace::Recorder;
use crate::waker;

mod dispatch;

/// Why [`Sim::run`] returned normally.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Every foreground (non-daemon) task finished.
    Idle,
    /// The time limit was reached with work still pending.
    TimeLimit,
    /// A task called [`Cx::stop`].
    Stopped,
}

enum TimerAction {
    /// Wake through a waker (any future, including ones inside foreign combinators).
    Wake(Waker),
    /// Wake a task of this executor directly.
    WakeTask(TaskKey),
    /// Hand a reserved core to its task after the context switch.
    Dispatch(TaskKey),
    /// Wake a watcher (a timer that is not pending work: see [`Kind::Watcher`]).
    WakeWatcher(TaskKey),
}

/// Shared state of one simulation; reached by tasks through [`Cx`].
pub(crate) struct Inner {
    exec_id: Cell<u16>,
    now: Cell<SimTime>,
    seq: Cell<u64>,
    timers: RefCell<Timers<TimerAction>>,
    /// Timers of watchers among `timers`: when they are all that is pending, nothing can wake
    /// a waiting foreground task.
    watcher_timers: Cell<usize>,
    ready: RefCell<VecDeque<TaskKey>>,
    tasks: RefCell<TaskTable>,
    cores: RefCell<Vec<CoreState>>,
    pub(crate) rng: RefCell<SimRng>,
    current: Cell<Option<(TaskKey, CoreId)>>,
    cur_wait: Cell<WaitOn>,
    cur_computing: Cell<bool>,
    /// The running task asked to move to another core.
    cur_migrate: Cell<Option<CoreId>>,
    /// The running task's role (index into `roles`), for per-role core time.
    cur_role: Cell<u16>,
    /// Role names; index 0 is `other`.
    roles: RefCell<Vec<Label>>,
    stop: Cell<bool>,
    events: Cell<u64>,
    pub(crate) trace: RefCell<Option<Recorder>>,
    /// Whether `trace` is active (checked on hot paths without borrowing).
    pub(crate) tracing: Cell<bool>,
}

impl Inner {
    /// This executor's number in the thread's registry (what its wakers carry).
    pub fn exec_id(&self) -> u16 {
        self.exec_id.get()
    }

    pub fn now(&self) -> SimTime {
        self.now.get()
    }

    /// The running task and its core, if a task is being polled.
    pub fn current(&self) -> Option<(TaskKey, CoreId)> {
        self.current.get()
    }

    /// Records what the running task is about to wait for (shown in deadlock reports).
    pub fn note_wait(&self, on: WaitOn) {
        self.cur_wait.set(on);
    }

    /// Marks the running task as computing: it keeps its core while suspended.
    pub fn note_computing(&self) {
        self.cur_computing.set(true);
    }

    pub fn request_stop(&self) {
        self.stop.set(true);
    }

    fn schedule(&self, at: SimTime, action: TimerAction) {
        let seq = self.seq.get();
        self.seq.set(seq + 1);
        self.timers.borrow_mut().push(timers::key(at.as_nanos(), seq), action);
    }

    /// Arranges for `waker` to be woken at `at` (at once if `at` is not in the future).
    pub fn wake_at(&self, at: SimTime, waker: &Waker) {
        // A waker of one of this executor's tasks is handled here, without the waker itself.
        let own = waker::own_task(waker, self.exec_id.get());
        if at <= self.now() {
            match own {
                Some(key) => self.wake(key),
                None => waker.wake_by_ref(),
            }
            return;
        }
        let action = match own {
            Some(key) => {
                if self.current.get().is_some_and(|(k, _)| k == key) {
                    let mut tasks = self.tasks.borrow_mut();
                    let slot = tasks.get_mut(key).expect("the running task is live");
                    if slot.armed == at {
                        return; // a timer for this instant is already pending for this task
                    }
                    slot.armed = at;
                    if slot.watcher {
                        drop(tasks);
                        self.watcher_timers.set(self.watcher_timers.get() + 1);
                        return self.schedule(at, TimerAction::WakeWatcher(key));
                    }
                }
                TimerAction::WakeTask(key)
            }
            None => TimerAction::Wake(waker.clone()),
        };
        self.schedule(at, action);
    }

    /// Makes a task runnable at the current instant (idempotent until it is polled).
    pub fn wake(&self, key: TaskKey) {
        let mut tasks = self.tasks.borrow_mut();
        if let Some(slot) = tasks.get_mut(key)
            && !slot.queued
        {
            slot.queued = true;
            self.ready.borrow_mut().push_back(key);
        }
    }

    pub fn spawn(&self, core: CoreId, name: Label, kind: Kind, fut: BoxFuture) -> TaskKey {
        if !core.is_unbound() {
            let n = self.cores.borrow().len();
            assert!(core.index() < n, "spawn on core {} but only {n} cores exist", core.index());
        }
        let key = self.tasks.borrow_mut().insert(core, name, kind, fut);
        self.ready.borrow_mut().push_back(key);
        key
    }

    /// Statistics of every core, in the order they were added.
    pub fn core_stats(&self) -> Vec<CoreStats> {
        let roles = self.roles.borrow();
        self.cores.borrow().iter().map(|c| c.stats(&roles)).collect()
    }

    /// The duration of `cycles` on `core`.
    pub fn cycles(&self, core: CoreId, cycles: u64) -> SimDuration {
        self.cores.borrow()[core.index()].cycles(cycles)
    }

    /// The core task `key` runs on now (tasks can move: [`Cx::migrate`]).
    pub fn task_core(&self, key: TaskKey) -> Option<CoreId> {
        self.tasks.borrow().get(key).map(|s| s.core)
    }

    /// The index of role `name`, naming it if it is new.
    pub fn role(&self, name: &str) -> u16 {
        let mut roles = self.roles.borrow_mut();
        if let Some(i) = roles.iter().position(|r| r.as_str() == name) {
            return i as u16;
        }
        assert!(roles.len() < u16::MAX as usize, "too many roles");
        roles.push(Label::from(name.to_string()));
        (roles.len() - 1) as u16
    }

    /// Sets the running task's role (what its compute counts as on its core).
    pub fn set_role(&self, role: u16) {
        self.cur_role.set(role);
    }

    /// Asks to move the running task to `core` (it leaves its core when it suspends, and runs
    /// on `core` when next woken).
    pub fn note_migrate(&self, core: CoreId) {
        self.cur_migrate.set(Some(core));
    }

    /// The request the running task serves.
    pub fn current_request(&self) -> Option<u64> {
        let (key, _) = self.current.get()?;
        self.tasks.borrow().get(key).and_then(|s| s.request)
    }

    /// Tags the running task with the request it serves.
    pub fn set_current_request(&self, request: Option<u64>) {
        if let Some((key, _)) = self.current.get()
            && let Some(slot) = self.tasks.borrow_mut().get_mut(key)
        {
            slot.request = request;
        }
    }

    fn fire(&self, action: TimerAction) {
        match action {
            TimerAction::Wake(w) => w.wake(),
            TimerAction::WakeTask(key) => self.wake(key),
            TimerAction::Dispatch(key) => self.ready.borrow_mut().push_back(key),
            TimerAction::WakeWatcher(key) => {
                self.watcher_timers.set(self.watcher_timers.get() - 1);
                self.wake(key);
            }
        }
    }

    fn deadlock(&self) -> Deadlock {
        let tasks = self.tasks.borrow();
        let cores = self.cores.borrow();
        let describe = |on: &WaitOn| -> String {
            match on {
                WaitOn::Mutex(name, Some(holder)) => {
                    let h = tasks.get(*holder).map_or("a finished task".into(), |s| s.name.to_string());
                    format!("mutex '{name}' held by task '{h}'")
                }
                other => crate::deadlock::describe(other),
            }
        };
        let blocked = tasks
            .iter_alive()
            .map(|(_, s)| BlockedTask {
                name: s.name.to_string(),
                core: if s.core.is_unbound() {
                    "unbound".into()
                } else {
                    cores[s.core.index()].spec.name.clone()
                },
                daemon: s.daemon,
                waiting_on: describe(&s.wait),
            })
            .collect();
        Deadlock { at: self.now(), tasks: blocked }
    }
}

/// A simulation: owns the executor, the cores and the RNG.
///
/// ```
/// use sim::{Sim, SimDuration, SimTime};
/// let sim = Sim::new(42);
/// let cx = sim.cx();
/// let out = sim.block_on(async move {
///     cx.sleep(SimDuration::from_micros(5)).await;
///     cx.now()
/// });
/// assert_eq!(out.unwrap(), SimTime::from_nanos(5_000));
/// ```
pub struct Sim {
    inner: Rc<Inner>,
}

impl Sim {
    /// A simulation with no cores whose RNG is seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        let inner = Rc::new(Inner {
            exec_id: Cell::new(0),
            now: Cell::new(SimTime::ZERO),
            seq: Cell::new(0),
            timers: RefCell::new(Timers::default()),
            watcher_timers: Cell::new(0),
            ready: RefCell::new(VecDeque::new()),
            tasks: RefCell::new(TaskTable::default()),
            cores: RefCell::new(Vec::new()),
            rng: RefCell::new(SimRng::seed_from_u64(seed)),
            current: Cell::new(None),
            cur_wait: Cell::new(WaitOn::Runnable),
            cur_computing: Cell::new(false),
            cur_migrate: Cell::new(None),
            cur_role: Cell::new(0),
            roles: RefCell::new(vec![Label::Static("other")]),
            stop: Cell::new(false),
            events: Cell::new(0),
            trace: RefCell::new(None),
            tracing: Cell::new(false),
        });
        inner.exec_id.set(waker::register(&inner));
        Sim { inner }
    }

    /// Adds a controller core and returns its id.
    ///
    /// # Panics
    /// If the clock is zero (validate configurations before building a simulation).
    pub fn add_core(&self, spec: CoreSpec) -> CoreId {
        let mut cores = self.inner.cores.borrow_mut();
        assert!(cores.len() < u16::MAX as usize, "too many cores");
        cores.push(CoreState::new(spec));
        CoreId((cores.len() - 1) as u16)
    }

    /// A context handle for spawning tasks and reaching the simulation.
    pub fn cx(&self) -> Cx {
        Cx { inner: self.inner.clone() }
    }

    /// The current virtual time.
    pub fn now(&self) -> SimTime {
        self.inner.now()
    }

    /// Events processed so far (timers fired plus task dispatches).
    pub fn events(&self) -> u64 {
        self.inner.events.get()
    }

    /// Statistics of every core, in the order they were added.
    pub fn core_stats(&self) -> Vec<CoreStats> {
        self.inner.core_stats()
    }

    /// Runs until every foreground task has finished (see [`Sim::run_until`]).
    pub fn run(&self) -> Result<Stop, Deadlock> {
        self.run_until(SimTime::MAX)
    }

    /// Runs for `d` more virtual time, or until idle.
    pub fn run_for(&self, d: SimDuration) -> Result<Stop, Deadlock> {
        self.run_until(self.now() + d)
    }

    /// Runs for at least `d` more virtual time, or up to the next timer if that is later, or
    /// until idle: a driver that runs in slices (to report progress) and calls this between
    /// them pays nothing for idle virtual time. Between runs nothing is ready, so nothing
    /// happens before the next timer, and where the slices end changes no simulated result.
    pub fn run_slice(&self, d: SimDuration) -> Result<Stop, Deadlock> {
        let limit = self.now() + d;
        self.run_until(self.next_timer().map_or(limit, |t| t.max(limit)))
    }

    /// Runs until every foreground task has finished ([`Stop::Idle`]; daemons may still be
    /// waiting), the clock would pass `limit` ([`Stop::TimeLimit`]; the clock is left at
    /// `limit`), or a task calls [`Cx::stop`]. If foreground tasks remain but nothing can ever
    /// wake them, returns the [`Deadlock`] with what each task waits on.
    pub fn run_until(&self, limit: SimTime) -> Result<Stop, Deadlock> {
        self.run_to(limit, true)
    }

    /// Like [`run_until`](Self::run_until), but the clock always reaches `limit` unless a task
    /// stops the run: finishing every foreground task does not stop it early, so virtual time
    /// keeps in step with an outside clock while the device is idle (live serving). Returns
    /// [`Stop::TimeLimit`] or [`Stop::Stopped`].
    pub fn run_through(&self, limit: SimTime) -> Result<Stop, Deadlock> {
        self.run_to(limit, false)
    }

    /// When the next timer fires, if any is pending (after a run returned, nothing is ready to
    /// run, so this is when the simulation next has something to do).
    pub fn next_timer(&self) -> Option<SimTime> {
        self.inner.timers.borrow().peek().map(|k| SimTime::from_nanos(timers::instant(k)))
    }

    fn run_to(&self, limit: SimTime, idle_stops: bool) -> Result<Stop, Deadlock> {
        let inner = &*self.inner;
        let _running = waker::Running::enter(inner);
        inner.stop.set(false);
        loop {
            loop {
                let next = inner.ready.borrow_mut().pop_front();
                let Some(key) = next else { break };
                inner.events.set(inner.events.get() + 1);
                inner.dispatch(key);
            }
            if inner.stop.get() {
                return Ok(Stop::Stopped);
            }
            let idle = inner.tasks.borrow().live_foreground() == 0;
            if idle && idle_stops {
                return Ok(Stop::Idle);
            }
            let (next, work_pending) = {
                let timers = inner.timers.borrow();
                (
                    timers.peek().map(|k| SimTime::from_nanos(timers::instant(k))),
                    timers.len() > inner.watcher_timers.get(),
                )
            };
            // Foreground tasks wait and nothing but a watcher's timer could ever wake one.
            if !idle && !work_pending {
                return Err(inner.deadlock());
            }
            let Some(at) = next else {
                if limit == SimTime::MAX {
                    return Ok(Stop::Idle);
                }
                inner.now.set(limit.max(inner.now()));
                return Ok(Stop::TimeLimit);
            };
            if at > limit {
                inner.now.set(limit.max(inner.now()));
                return Ok(Stop::TimeLimit);
            }
            inner.now.set(at);
            loop {
                let due = {
                    let mut timers = inner.timers.borrow_mut();
                    match timers.peek() {
                        Some(k) if timers::instant(k) == at.as_nanos() => timers.pop(),
                        _ => None,
                    }
                };
                let Some((_, action)) = due else { break };
                inner.events.set(inner.events.get() + 1);
                inner.fire(action);
            }
        }
    }

    /// Spawns `fut` as a foreground task on an unbound core, runs until it completes, and
    /// returns its output.
    pub fn block_on<T: 'static>(&self, fut: impl Future<Output = T> + 'static) -> Result<T, Deadlock> {
        let out = Rc::new(Cell::new(None));
        let slot = out.clone();
        let inner = self.inner.clone();
        let main = async move {
            slot.set(Some(fut.await));
            inner.request_stop();
        };
        self.inner.spawn(CoreId::UNBOUND, "main".into(), Kind::Foreground, Box::pin(main));
        loop {
            self.run()?;
            if let Some(v) = out.take() {
                return Ok(v);
            }
        }
    }
}

impl Drop for Sim {
    /// Drops every task (breaking the task -> context -> executor cycle) and pending timer.
    fn drop(&mut self) {
        let futures = self.inner.tasks.borrow_mut().drain_futures();
        drop(futures);
        let timers = self.inner.timers.borrow_mut().drain();
        drop(timers);
        self.inner.ready.borrow_mut().clear();
    }
}
