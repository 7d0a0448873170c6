//! Where a request's work runs and how the shared FTL structures are guarded: the part of an
//! architecture the HIL and FTL consult as a request goes along.
//!
//! The request path itself is the same coroutine in every architecture (fetch, parse, cache
//! lookup, translation, flash, cache update, DMA, completion); at fixed points it calls
//! [`Flow::enter`], and around the shared tables [`Flow::lock`] and [`Flow::lock_line`]:
//!
//! ```text
//!              Fetch        Translate          Flash          Cache / Post
//!   softssd    hil core ─────────────────────────────────────────────────▶ (one core)
//!   tradition  core i   ── index / mapping / line locks ─────────────────▶ (the same core)
//!   pipessd    fetch ──SPSC──▶ ftl ──SPSC──▶ fil (wait list) ──SPSC──▶ post
//!   deepflash  gather ───────▶ trans[lpn range] ───────▶ fcmd ──────────▶ gather
//! ```

use std::cell::RefCell;
use std::rc::Rc;

use nand::Lpn;
use sim::stats::LogHistogram;
use sim::sync::{Lock, LockClass, LockStats, LockTable, StageQueue, StageQueueSpec, StageQueueStats};
use sim::{CoreId, Cx, Role, SimDuration};

use crate::arch::config::LockConfig;

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

/// A table shared by every request, guarded by one lock in a lock-based firmware.
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
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Occupied {
    /// Wait until the line holds its data (FIFO per line).
    Wait,
    /// Read around the cache (DeepFlash).
    Bypass,
}

/// Locks of a lock-based firmware.
struct Locks {
    queues: Lock,
    index: Lock,
    mapping: Lock,
    lines: Option<LockTable<u32>>,
    classes: Vec<Rc<LockClass>>,
}

impl Locks {
    fn new(cx: &Cx, cfg: &LockConfig, with_lines: bool) -> Locks {
        let class = |name: &'static str| LockClass::new(name);
        let (q, i, m, l) =
            (class("nvme queues"), class("cache index"), class("mapping table"), class("cache line"));
        let lock = |c: &Rc<LockClass>| Lock::new(cx, c, cfg.table, cfg.costs);
        Locks {
            queues: lock(&q),
            index: lock(&i),
            mapping: lock(&m),
            lines: with_lines.then(|| LockTable::new(cx, &l, cfg.line, cfg.costs)),
            classes: if with_lines { vec![q, i, m, l] } else { vec![q, i, m] },
        }
    }

    fn table(&self, t: Table) -> &Lock {
        match t {
            Table::Queues => &self.queues,
            Table::Index => &self.index,
            Table::Mapping => &self.mapping,
        }
    }
}

/// The stage queues of a pipeline, and the time requests spent on its wait list.
struct Pipeline {
    /// Stage cores: fetch, FTL, FIL, post.
    cores: [CoreId; 4],
    /// Into the FTL, FIL and post stages.
    queues: [StageQueue; 3],
    wait_list: RefCell<LogHistogram>,
}

/// DeepFlash's function threads.
struct Functions {
    gather: CoreId,
    trans: Vec<CoreId>,
    fcmd: CoreId,
    /// One queue into each function core (several producers share it).
    queues: Vec<StageQueue>,
    locks: Locks,
    /// LPNs per translation core's range.
    range: u32,
}

impl Functions {
    fn queue_to(&self, core: CoreId) -> &StageQueue {
        self.queues.iter().find(|q| q.core() == core).expect("a queue into every function core")
    }
}

enum Kind {
    Plain,
    Locked(Box<Locks>),
    Pipeline(Box<Pipeline>),
    Functions(Box<Functions>),
}

/// An architecture's placement and synchronisation of a request's work.
pub struct Flow {
    cx: Cx,
    roles: [Role; 5],
    lock_role: Role,
    kind: Kind,
}

/// Statistics of an architecture's locks, queues and wait list.
#[derive(Clone, Debug, Default)]
pub struct FlowStats {
    /// Each lock class: its name and statistics.
    pub locks: Vec<(String, LockStats)>,
    /// Each stage queue: its name and statistics.
    pub queues: Vec<(String, StageQueueStats)>,
    /// PipeSSD's wait list: how long each sub-request that found its cache line busy waited
    /// there for it (ns).
    pub wait_list: Option<LogHistogram>,
}

impl Flow {
    fn with(cx: &Cx, kind: Kind) -> Flow {
        Flow {
            cx: cx.clone(),
            roles: Point::ALL.map(|p| cx.role(p.role_name())),
            lock_role: cx.role("lock wait"),
            kind,
        }
    }

    /// SoftSSD: everything on one core, no locks.
    pub fn plain(cx: &Cx) -> Flow {
        Flow::with(cx, Kind::Plain)
    }

    /// Tradition-N: whole requests on each core, shared tables behind locks.
    pub fn locked(cx: &Cx, cfg: &LockConfig) -> Flow {
        Flow::with(cx, Kind::Locked(Box::new(Locks::new(cx, cfg, true))))
    }

    /// PipeSSD: four stages on four cores (fetch, FTL, FIL, post).
    pub fn pipeline(cx: &Cx, cores: [CoreId; 4], spec: StageQueueSpec) -> Flow {
        let q = |name: &'static str, core| StageQueue::new(cx, name, core, spec);
        let queues = [q("fetch -> ftl", cores[1]), q("ftl -> fil", cores[2]), q("fil -> post", cores[3])];
        Flow::with(cx, Kind::Pipeline(Box::new(Pipeline { cores, queues, wait_list: RefCell::default() })))
    }

    /// DeepFlash: gather / translation (by LPN range over `logical` units) / flash scheduling.
    pub fn functions(
        cx: &Cx,
        gather: CoreId,
        trans: Vec<CoreId>,
        fcmd: CoreId,
        spec: StageQueueSpec,
        locks: &LockConfig,
        logical: u32,
    ) -> Flow {
        let mut cores = vec![gather, fcmd];
        cores.extend(trans.iter().copied());
        let queues =
            cores.iter().map(|&c| StageQueue::new(cx, format!("into core {}", c.index()), c, spec)).collect();
        let range = logical.div_ceil(trans.len() as u32).max(1);
        Flow::with(
            cx,
            Kind::Functions(Box::new(Functions {
                gather,
                trans,
                fcmd,
                queues,
                locks: Locks::new(cx, locks, false),
                range,
            })),
        )
    }

    /// The running task's compute counts as `point`'s role from here (a task that stays where
    /// it is, such as a fetcher).
    pub fn set_role(&self, point: Point) {
        self.cx.set_role(self.roles[point as usize]);
    }

    /// The running request reaches `point`: its compute counts as that role from here, and it
    /// moves to the core that does this part of the work (`lpn`: the unit it translates).
    pub async fn enter(&self, point: Point, lpn: Option<Lpn>) {
        self.hop(point, lpn).await;
        // After the hop: the enqueue cost counts as the part of the work it ends.
        self.cx.set_role(self.roles[point as usize]);
    }

    async fn hop(&self, point: Point, lpn: Option<Lpn>) {
        match &self.kind {
            Kind::Plain | Kind::Locked(_) => {}
            Kind::Pipeline(p) => {
                let target = match point {
                    Point::Fetch => 0,
                    Point::Translate => 1,
                    Point::Flash => 2,
                    Point::Cache | Point::Post => 3,
                };
                let here = self.cx.core();
                let Some(mut stage) = p.cores.iter().position(|&c| c == here) else { return };
                // Forward only, stage by stage: a request never goes back up the pipeline.
                while stage < target {
                    p.queues[stage].pass().await;
                    stage += 1;
                }
            }
            Kind::Functions(f) => {
                let to = match point {
                    Point::Fetch | Point::Post => f.gather,
                    Point::Translate => {
                        let l = lpn.map_or(0, |l| l.0);
                        f.trans[((l / f.range) as usize).min(f.trans.len() - 1)]
                    }
                    Point::Flash => f.fcmd,
                    Point::Cache => return, // the cache is handled where the request is
                };
                if self.cx.core() != to && !self.cx.core().is_unbound() {
                    f.queue_to(to).pass().await;
                }
            }
        }
    }

    fn locks(&self) -> Option<&Locks> {
        match &self.kind {
            Kind::Locked(l) => Some(l),
            Kind::Functions(f) => Some(&f.locks),
            _ => None,
        }
    }

    /// Takes `table`'s lock (lock-based firmware only; `at`: the point the request is at) and
    /// returns the time spent getting it.
    pub async fn lock(&self, table: Table, at: Point) -> SimDuration {
        let Some(locks) = self.locks() else { return SimDuration::ZERO };
        if matches!(self.kind, Kind::Functions(_)) && table != Table::Index {
            return SimDuration::ZERO; // DeepFlash partitions the mapping: only the cache is shared
        }
        self.cx.set_role(self.lock_role);
        let waited = locks.table(table).acquire().await;
        self.cx.set_role(self.roles[at as usize]);
        waited
    }

    /// Gives `table`'s lock back.
    pub fn unlock(&self, table: Table) {
        if let Some(locks) = self.locks() {
            if matches!(self.kind, Kind::Functions(_)) && table != Table::Index {
                return;
            }
            locks.table(table).release();
        }
    }

    /// Takes the lock of `lpn`'s cache line (Tradition-N) and returns the time spent getting
    /// it. A request that fills a line holds it until the line holds the data.
    pub async fn lock_line(&self, lpn: Lpn, at: Point) -> SimDuration {
        let Some(lines) = self.locks().and_then(|l| l.lines.as_ref()) else { return SimDuration::ZERO };
        self.cx.set_role(self.lock_role);
        let waited = lines.acquire(lpn.0).await;
        self.cx.set_role(self.roles[at as usize]);
        waited
    }

    /// Gives `lpn`'s line lock back.
    pub fn unlock_line(&self, lpn: Lpn) {
        if let Some(lines) = self.locks().and_then(|l| l.lines.as_ref()) {
            lines.release(lpn.0);
        }
    }

    /// Whether requests move between cores: the units of one command are then handled one
    /// after the other, since a coroutine runs on one core at a time (concurrent sub-requests
    /// of one coroutine would drag each other between stages).
    pub fn migrates(&self) -> bool {
        matches!(self.kind, Kind::Pipeline(_) | Kind::Functions(_))
    }

    /// Whether any table is guarded by a lock.
    pub fn has_locks(&self) -> bool {
        self.locks().is_some()
    }

    /// Whether line locks are in use (a request then waits for a busy line by taking its lock).
    pub fn has_line_locks(&self) -> bool {
        self.locks().is_some_and(|l| l.lines.is_some())
    }

    /// What a read does about a line another request is filling.
    pub fn occupied(&self) -> Occupied {
        match self.kind {
            Kind::Functions(_) => Occupied::Bypass,
            _ => Occupied::Wait,
        }
    }

    /// A request waited `d` for its cache line (PipeSSD: on the wait list).
    pub fn waited_for_line(&self, d: SimDuration) {
        if let Kind::Pipeline(p) = &self.kind {
            p.wait_list.borrow_mut().record(d.as_nanos());
        }
    }

    /// Statistics of the locks, stage queues and wait list.
    pub fn stats(&self) -> FlowStats {
        let locks = |l: &Locks| l.classes.iter().map(|c| (c.name().to_string(), c.stats())).collect();
        let queues = |qs: &[StageQueue]| qs.iter().map(|q| (q.label().to_string(), q.stats())).collect();
        match &self.kind {
            Kind::Plain => FlowStats::default(),
            Kind::Locked(l) => FlowStats { locks: locks(l), ..FlowStats::default() },
            Kind::Pipeline(p) => FlowStats {
                queues: queues(&p.queues),
                wait_list: Some(p.wait_list.borrow().clone()),
                ..FlowStats::default()
            },
            Kind::Functions(f) => {
                FlowStats { locks: locks(&f.locks), queues: queues(&f.queues), wait_list: None }
            }
        }
    }
}
