//! Where a request's work runs and how the shared FTL structures are guarded: the part of a
//! firmware architecture the HIL and the FTL consult as a request goes along. This module sits
//! below both; an architecture (`arch`) builds a [`Flow`] from the mechanisms here and hands
//! it to the HIL and the FTL when they are built.
//!
//! The request path itself is the same coroutine in every architecture (fetch, parse, cache
//! lookup, translation, flash, cache update, DMA, completion); at fixed points it calls
//! [`Flow::hop`] (move to the core that does this part of the work), and around the shared
//! tables [`Flow::lock`] and [`Flow::lock_line`]:
//!
//! ```text
//!   Point:      Fetch        Translate          Flash          Cache / Post
//!   no route    one core ───────────────────────────────────────────────▶ (where it runs)
//!   locks       core i   ── table / line locks ────────────────────────▶ (the same core)
//!   a route     core a ──queue──▶ core b ──queue──▶ core c ──queue──▶ core d
//! ```
//!
//! The mechanisms are generic: a [`Route`] names the stage queue a request passes next, the
//! [`Locks`] guard whichever tables an architecture shares, and [`Occupied`] says what a read
//! does about a line another request is filling. No architecture is named here.

mod locks;

use std::cell::RefCell;
use std::future::Future;

use nand::Lpn;
use sim::stats::LogHistogram;
use sim::sync::{LockStats, StageQueue, StageQueueStats};
use sim::{CoreId, Cx, Role, SimDuration};

pub use locks::Locks;

/// A point on a request's path.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Point {
    /// Fetching and parsing the command.
    Fetch,
    /// Cache lookup and address translation.
    Translate,
    /// Submitting flash transactions.
    Flash,
    /// Updating the cache with what flash returned.
    Cache,
    /// Moving data to the host and posting the completion.
    Post,
}

impl Point {
    const ALL: [Point; 5] = [Point::Fetch, Point::Translate, Point::Flash, Point::Cache, Point::Post];

    /// The name of the core-time role the work at this point counts as.
    fn role_name(self) -> &'static str {
        match self {
            Point::Fetch => "fetch",
            Point::Translate => "ftl",
            Point::Flash => "fil",
            Point::Cache => "cache",
            Point::Post => "post",
        }
    }
}

/// A table shared by every request, guarded by a lock in a lock-based firmware.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Table {
    /// The NVMe submission queues (fetching).
    Queues,
    /// The data cache's index.
    Index,
    /// The mapping table.
    Mapping,
}

/// What a request does about a cache line another request is filling.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Occupied {
    /// Wait until the line holds its data (FIFO per line).
    #[default]
    Wait,
    /// Read around the cache.
    Bypass,
}

/// How requests move between cores: the stage queue a request passes next.
///
/// The [`Flow`] calls [`next_hop`](Route::next_hop) when a request reaches a point, passes the
/// queue returned and asks again, until the answer is `None`. An implementer answers from
/// plain data (no await, no borrow of firmware state) and must make the walk end: each queue
/// it names must take the request closer to where the work runs.
pub trait Route {
    /// The queue a request running on `here` passes next on its way to the core that does the
    /// work of `point` (`lpn`: the unit it translates, if any), or `None` once it is there.
    fn next_hop(&self, here: CoreId, point: Point, lpn: Option<Lpn>) -> Option<&StageQueue>;
    /// Every queue of the route, for statistics.
    fn queues(&self) -> &[StageQueue];
}

/// Statistics of an architecture's locks, queues and wait list.
#[derive(Clone, Debug, Default)]
pub struct FlowStats {
    /// Each lock class: its name and statistics.
    pub locks: Vec<(String, LockStats)>,
    /// Each stage queue: its name and statistics.
    pub queues: Vec<(String, StageQueueStats)>,
    /// A per-line wait list (PipeSSD's): how long each sub-request that found its cache line
    /// busy waited there for it (ns).
    pub wait_list: Option<LogHistogram>,
}

/// An architecture's placement and synchronisation of a request's work.
pub struct Flow {
    cx: Cx,
    roles: [Role; 5],
    lock_role: Role,
    route: Option<Box<dyn Route>>,
    locks: Option<Locks>,
    occupied: Occupied,
    wait_list: Option<RefCell<LogHistogram>>,
}

impl Flow {
    /// Everything where it runs, no locks: what an FTL without an architecture (a test, the
    /// untimed ageing) and SoftSSD's single-core firmware use.
    pub fn plain(cx: &Cx) -> Flow {
        Flow {
            cx: cx.clone(),
            roles: Point::ALL.map(|p| cx.role(p.role_name())),
            lock_role: cx.role("lock wait"),
            route: None,
            locks: None,
            occupied: Occupied::Wait,
            wait_list: None,
        }
    }

    /// Requests move between cores along `route`.
    pub fn with_route(mut self, route: Box<dyn Route>) -> Flow {
        self.route = Some(route);
        self
    }

    /// Shared tables guarded by `locks`.
    pub fn with_locks(mut self, locks: Locks) -> Flow {
        self.locks = Some(locks);
        self
    }

    /// A read finding its line being filled does `occupied`.
    pub fn with_occupied(mut self, occupied: Occupied) -> Flow {
        self.occupied = occupied;
        self
    }

    /// Sub-requests that find their line busy wait on a list whose waits are recorded.
    pub fn with_wait_list(mut self) -> Flow {
        self.wait_list = Some(RefCell::default());
        self
    }

    /// The running task's compute counts as `point`'s role from here (a task that stays where
    /// it is, such as a fetcher).
    pub fn set_role(&self, point: Point) {
        self.cx.set_role(self.roles[point as usize]);
    }

    /// The running request reaches `point` (`lpn`: the unit it translates). Its compute counts
    /// as that point's role from here. Where requests move between cores, returns the move to
    /// await; otherwise there is nothing to await (no future is made: the request path calls
    /// this several times per request).
    #[inline]
    pub fn hop(&self, point: Point, lpn: Option<Lpn>) -> Option<impl Future<Output = ()> + '_> {
        match &self.route {
            None => {
                self.set_role(point);
                None
            }
            Some(route) => Some(async move {
                while let Some(q) = route.next_hop(self.cx.core(), point, lpn) {
                    q.pass().await;
                }
                // After the move: the enqueue cost counts as the part of the work it ends.
                self.set_role(point);
            }),
        }
    }

    /// Runs `work` one after the other where requests move between cores (a coroutine runs on
    /// one core at a time: concurrent sub-requests of one coroutine would drag each other
    /// between stages), else concurrently. The outputs in order.
    pub async fn each<F: Future>(&self, work: impl IntoIterator<Item = F>) -> Vec<F::Output> {
        if self.migrates() {
            let mut out = Vec::new();
            for w in work {
                out.push(w.await);
            }
            out
        } else {
            sim::join_all(work).await
        }
    }

    /// Takes `table`'s lock, if it has one (`at`: the point the request is at), and returns
    /// the time spent getting it.
    pub async fn lock(&self, table: Table, at: Point) -> SimDuration {
        let Some(lock) = self.locks.as_ref().and_then(|l| l.table(table)) else { return SimDuration::ZERO };
        self.cx.set_role(self.lock_role);
        let waited = lock.acquire().await;
        self.set_role(at);
        waited
    }

    /// Gives `table`'s lock back.
    pub fn unlock(&self, table: Table) {
        if let Some(lock) = self.locks.as_ref().and_then(|l| l.table(table)) {
            lock.release();
        }
    }

    /// Takes the lock of `lpn`'s cache line (lock-based firmware) and returns the time spent
    /// getting it. A request that fills a line holds it until the line holds the data.
    pub async fn lock_line(&self, lpn: Lpn, at: Point) -> SimDuration {
        let Some(lines) = self.locks.as_ref().and_then(|l| l.lines()) else { return SimDuration::ZERO };
        self.cx.set_role(self.lock_role);
        let waited = lines.acquire(lpn.0).await;
        self.set_role(at);
        waited
    }

    /// Gives `lpn`'s line lock back.
    pub fn unlock_line(&self, lpn: Lpn) {
        if let Some(lines) = self.locks.as_ref().and_then(|l| l.lines()) {
            lines.release(lpn.0);
        }
    }

    /// Whether requests move between cores.
    pub fn migrates(&self) -> bool {
        self.route.is_some()
    }

    /// Whether any table is guarded by a lock.
    pub fn has_locks(&self) -> bool {
        self.locks.is_some()
    }

    /// Whether line locks are in use (a request then waits for a busy line by taking its lock).
    pub fn has_line_locks(&self) -> bool {
        self.locks.as_ref().is_some_and(|l| l.lines().is_some())
    }

    /// What a read does about a line another request is filling.
    pub fn occupied(&self) -> Occupied {
        self.occupied
    }

    /// A request waited `d` for its cache line (recorded where there is a wait list).
    pub fn waited_for_line(&self, d: SimDuration) {
        if let Some(w) = &self.wait_list {
            w.borrow_mut().record(d.as_nanos());
        }
    }

    /// Statistics of the locks, stage queues and wait list.
    pub fn stats(&self) -> FlowStats {
        FlowStats {
            locks: self.locks.as_ref().map(Locks::stats).unwrap_or_default(),
            queues: self.route.as_ref().map_or_else(Vec::new, |r| {
                r.queues().iter().map(|q| (q.label().to_string(), q.stats())).collect()
            }),
            wait_list: self.wait_list.as_ref().map(|w| w.borrow().clone()),
        }
    }
}
