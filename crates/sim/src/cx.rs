//! [`Cx`], the context through which firmware reaches time, cores, tasks and randomness.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use crate::core::CoreId;
use crate::executor::Inner;
use crate::rng::SimRng;
use crate::sync::oneshot;
use crate::task::{Kind, Label, WaitOn};
use crate::time::{SimDuration, SimTime};
use crate::trace::{Recorder, Span, Trace, TraceWindow, Track};

/// A handle on the running simulation. Cheap to clone; every task holds one.
///
/// Nothing in firmware reads a wall clock, spawns a thread or draws randomness except through
/// this value.
#[derive(Clone)]
pub struct Cx {
    pub(crate) inner: Rc<Inner>,
}

impl Cx {
    /// The current virtual time.
    pub fn now(&self) -> SimTime {
        self.inner.now()
    }

    /// The core of the running task ([`CoreId::UNBOUND`] outside a task or for unbound tasks).
    pub fn core(&self) -> CoreId {
        self.inner.current().map_or(CoreId::UNBOUND, |(_, c)| c)
    }

    /// Keeps the running task's core busy for `cycles` cycles of that core's clock; other tasks
    /// on the core wait. Zero cycles completes at once without yielding.
    ///
    /// # Panics
    /// When polled by a task on [`CoreId::UNBOUND`] (which has no clock; use
    /// [`Cx::compute_for`]).
    pub fn compute(&self, cycles: u64) -> Compute<'_> {
        Compute { cx: self, cost: Cost::Cycles(cycles), end: None }
    }

    /// Keeps the running task's core busy for a fixed duration.
    pub fn compute_for(&self, d: SimDuration) -> Compute<'_> {
        Compute { cx: self, cost: Cost::Time(d), end: None }
    }

    /// The duration of `cycles` cycles on `core`.
    pub fn cycles(&self, core: CoreId, cycles: u64) -> SimDuration {
        self.inner.cycles(core, cycles)
    }

    /// Names a role (fetch, FTL, FIL, lock spin, ...) whose compute a core's statistics count
    /// apart; the same name always gives the same role.
    pub fn role(&self, name: &str) -> Role {
        Role(self.inner.role(name))
    }

    /// Sets the running task's role: its compute counts as that role on whatever core runs
    /// it, until set again. A task starts as role `other`.
    pub fn set_role(&self, role: Role) {
        self.inner.set_role(role.0);
    }

    /// Moves the running task to `core`: it gives its core up now and runs on `core` from
    /// `latency` later (in FIFO order with the other tasks waiting for that core). How a
    /// request passes from one pipeline stage's core to the next.
    pub fn migrate(&self, core: CoreId, latency: SimDuration) -> Migrate<'_> {
        Migrate { cx: self, to: core, latency, arrive: None }
    }

    /// Suspends the running task for `d` (its core is free meanwhile).
    pub fn sleep(&self, d: SimDuration) -> Sleep<'_> {
        self.sleep_until(self.now() + d)
    }

    /// Suspends the running task until `t` (at once if `t` has passed).
    pub fn sleep_until(&self, t: SimTime) -> Sleep<'_> {
        Sleep { cx: self, until: t, armed: false }
    }

    /// Lets every other task woken at this instant run first.
    pub fn yield_now(&self) -> YieldNow {
        YieldNow { yielded: false }
    }

    /// Spawns a foreground task: [`Sim::run`](crate::Sim::run) keeps going until it finishes.
    pub fn spawn<T: 'static>(
        &self,
        core: CoreId,
        name: impl Into<Label>,
        fut: impl Future<Output = T> + 'static,
    ) -> JoinHandle<T> {
        self.spawn_inner(core, name.into(), Kind::Foreground, fut)
    }

    /// Spawns a daemon: a service loop that may wait forever without making the run a
    /// deadlock, and does not keep [`Sim::run`](crate::Sim::run) going.
    pub fn spawn_daemon<T: 'static>(
        &self,
        core: CoreId,
        name: impl Into<Label>,
        fut: impl Future<Output = T> + 'static,
    ) -> JoinHandle<T> {
        self.spawn_inner(core, name.into(), Kind::Daemon, fut)
    }

    /// Spawns a watcher: a daemon that only observes (samples statistics on a timer) and wakes
    /// no other task. Its timers are not pending work: when every foreground task waits and
    /// only watchers' timers are left, the run is a [`Deadlock`](crate::Deadlock), as it would
    /// be with no timer at all, instead of a clock that ticks on forever.
    pub fn spawn_watcher<T: 'static>(
        &self,
        core: CoreId,
        name: impl Into<Label>,
        fut: impl Future<Output = T> + 'static,
    ) -> JoinHandle<T> {
        self.spawn_inner(core, name.into(), Kind::Watcher, fut)
    }

    fn spawn_inner<T: 'static>(
        &self,
        core: CoreId,
        name: Label,
        kind: Kind,
        fut: impl Future<Output = T> + 'static,
    ) -> JoinHandle<T> {
        let (tx, rx) = oneshot::channel(self, name.clone());
        let task = async move {
            tx.send(fut.await);
        };
        self.inner.spawn(core, name.clone(), kind, Box::pin(task));
        JoinHandle { rx, name }
    }

    /// Runs `f` with the simulation's RNG. Do not hold on to draws across runs of different
    /// seeds: the stream is the only source of randomness in a run.
    pub fn with_rng<R>(&self, f: impl FnOnce(&mut SimRng) -> R) -> R {
        f(&mut self.inner.rng.borrow_mut())
    }

    /// An independent generator forked from the simulation's RNG (see [`crate::rng::fork`]).
    pub fn fork_rng(&self) -> SimRng {
        self.with_rng(crate::rng::fork)
    }

    /// Ends the current [`Sim::run`](crate::Sim::run) with
    /// [`Stop::Stopped`](crate::Stop::Stopped) once the tasks
    /// woken at this instant have run.
    pub fn stop(&self) {
        self.inner.request_stop();
    }

    /// Statistics of every core, in the order they were added (as
    /// [`Sim::core_stats`](crate::Sim::core_stats)).
    pub fn core_stats(&self) -> Vec<crate::CoreStats> {
        self.inner.core_stats()
    }

    /// Charges `d` of busy time to `core` without suspending anyone (for work a model accounts
    /// for analytically, such as hardware running in parallel).
    pub fn charge(&self, core: CoreId, d: SimDuration) {
        self.inner.charge(core, d);
    }

    /// Starts recording a trace (replacing any active one); see [`crate::trace`].
    pub fn trace_start(&self, window: TraceWindow) {
        *self.inner.trace.borrow_mut() = Some(Recorder::new(window));
        self.inner.tracing.set(true);
    }

    /// Stops the active trace and returns it.
    pub fn trace_take(&self) -> Option<Trace> {
        self.inner.tracing.set(false);
        self.inner.trace.borrow_mut().take().map(Recorder::into_trace)
    }

    /// Whether a trace is recording (callers skip building spans otherwise).
    pub fn tracing(&self) -> bool {
        self.inner.tracing.get()
    }

    /// A request was submitted now: returns whether the trace follows it.
    pub fn trace_admit(&self, id: u64) -> bool {
        let now = self.now();
        self.inner.trace.borrow_mut().as_mut().is_some_and(|r| r.admit(id, now))
    }

    /// A request finished now.
    pub fn trace_finish(&self, id: u64) {
        let now = self.now();
        if let Some(r) = self.inner.trace.borrow_mut().as_mut() {
            r.finish(id, now);
        }
    }

    /// Records a span, if a trace is active and wants it.
    pub fn trace_span(
        &self,
        track: Track,
        start: SimTime,
        dur: SimDuration,
        name: impl Into<Label>,
        request: Option<u64>,
    ) {
        if let Some(r) = self.inner.trace.borrow_mut().as_mut() {
            r.record(Span { track, start, dur, name: name.into(), request });
        }
    }

    /// Tags the running task with the host request it serves (`None` when done), so that the
    /// spans it causes — on its core, and in the flash transactions it submits — name it.
    pub fn set_request(&self, request: Option<u64>) {
        self.inner.set_current_request(request);
    }

    /// The host request the running task serves.
    pub fn request(&self) -> Option<u64> {
        self.inner.current_request()
    }

    /// Records what the running task is about to wait for, shown if the run deadlocks. A
    /// future written outside this crate calls it just before returning `Pending`.
    pub fn note_wait(&self, on: WaitOn) {
        self.inner.note_wait(on);
    }

    /// Arranges for `waker` to be woken at `at` (at once if `at` has passed): how a future
    /// written outside this crate waits for an instant without a task of its own.
    pub fn wake_at(&self, at: SimTime, waker: &std::task::Waker) {
        self.inner.wake_at(at, waker);
    }
}

enum Cost {
    Cycles(u64),
    Time(SimDuration),
}

/// Future of [`Cx::compute`] / [`Cx::compute_for`].
#[must_use = "compute does nothing unless awaited"]
pub struct Compute<'a> {
    cx: &'a Cx,
    cost: Cost,
    end: Option<SimTime>,
}

impl Future for Compute<'_> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, task: &mut Context<'_>) -> Poll<()> {
        let inner = &self.cx.inner;
        let end = match self.end {
            Some(end) => end,
            None => {
                let core = self.cx.core();
                let d = match self.cost {
                    Cost::Time(d) => d,
                    Cost::Cycles(c) => {
                        assert!(!core.is_unbound(), "compute(cycles) on an unbound task; use compute_for");
                        if c == 0 {
                            return Poll::Ready(()); // zero-cost steps are common (presets leave costs at 0)
                        }
                        inner.cycles(core, c)
                    }
                };
                if d.is_zero() {
                    return Poll::Ready(());
                }
                inner.charge(core, d);
                let end = inner.now() + d;
                inner.wake_at(end, task.waker());
                self.end = Some(end);
                end
            }
        };
        if inner.now() >= end {
            return Poll::Ready(());
        }
        inner.note_computing();
        inner.note_wait(WaitOn::Compute(end));
        Poll::Pending
    }
}

/// A role a core's busy time is counted under (see [`Cx::role`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Role(u16);

/// Future of [`Cx::migrate`].
#[must_use = "migrate does nothing unless awaited"]
pub struct Migrate<'a> {
    cx: &'a Cx,
    to: CoreId,
    latency: SimDuration,
    /// When the task arrives on its new core, once it has left the old one.
    arrive: Option<SimTime>,
}

impl Future for Migrate<'_> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, task: &mut Context<'_>) -> Poll<()> {
        if let Some(at) = self.arrive {
            if self.cx.now() >= at {
                return Poll::Ready(());
            }
            self.cx.note_wait(WaitOn::Sleep(at));
            return Poll::Pending; // woken early: the arrival wake is still pending
        }
        if self.cx.core() == self.to && self.latency.is_zero() {
            return Poll::Ready(());
        }
        let at = self.cx.now() + self.latency;
        self.arrive = Some(at);
        self.cx.inner.note_migrate(self.to);
        // Woken through this poll's waker, so that a migrate inside a combinator (one of
        // join_all's children) is polled again; the task runs on its new core from then.
        self.cx.wake_at(at, task.waker());
        self.cx.note_wait(WaitOn::Sleep(at));
        Poll::Pending
    }
}

/// Future of [`Cx::sleep`] / [`Cx::sleep_until`].
#[must_use = "sleep does nothing unless awaited"]
pub struct Sleep<'a> {
    cx: &'a Cx,
    until: SimTime,
    armed: bool,
}

impl Future for Sleep<'_> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, task: &mut Context<'_>) -> Poll<()> {
        if self.cx.now() >= self.until {
            return Poll::Ready(());
        }
        if !self.armed {
            self.armed = true;
            self.cx.wake_at(self.until, task.waker());
        }
        self.cx.note_wait(WaitOn::Sleep(self.until));
        Poll::Pending
    }
}

/// Future of [`Cx::yield_now`].
#[must_use = "yield_now does nothing unless awaited"]
pub struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, task: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        task.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Awaits a spawned task's output.
pub struct JoinHandle<T> {
    rx: oneshot::Receiver<T>,
    name: Label,
}

impl<T> JoinHandle<T> {
    /// The task's name.
    pub fn name(&self) -> &Label {
        &self.name
    }

    /// Whether the task has finished.
    pub fn is_finished(&self) -> bool {
        self.rx.is_ready()
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = T;
    fn poll(mut self: Pin<&mut Self>, task: &mut Context<'_>) -> Poll<T> {
        match Pin::new(&mut self.rx).poll(task) {
            Poll::Ready(Ok(v)) => Poll::Ready(v),
            // The task was dropped with its simulation: nothing can complete this join.
            Poll::Ready(Err(_)) => Poll::Pending,
            Poll::Pending => {
                let label = self.name.clone();
                self.rx.note(WaitOn::Join(label));
                Poll::Pending
            }
        }
    }
}
