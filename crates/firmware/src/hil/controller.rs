//! The NVMe controller in software, as in SoftSSD: a fetcher coroutine scans doorbells,
//! arbitrates between submission queues and fetches commands over the link; per-queue worker
//! coroutines run each command to completion (see `handler.rs`). The host reaches it through
//! [`Controller::submit`] and [`Controller::admin`].

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use sim::sync::{Notify, Ring, RingSpec, oneshot};
use sim::trace::Track;
use sim::{ByteSize, CoreId, Cx, SimDuration};

use crate::flow::{Flow, Point, Table};
use crate::ftl::Ftl;
use crate::hil::arbiter::Arbiter;
use crate::hil::config::HostInterfaceConfig;
use crate::hil::link::{Dir, Link};
use crate::hil::namespace::Namespace;
use crate::hil::nvme::{CommandTiming, HostData, NvmeCommand, NvmeCompletion, Status};
use crate::hil::queues::{Entry, Interrupts, Priority, QueuePair, Work};
use crate::hil::smart::SmartCounters;
use crate::trace::Phases;

/// Where the host interface's coroutines run (chosen by the architecture).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HilLayout {
    /// SoftSSD: a fetcher and `host.workers_per_queue` workers per queue, all on one core.
    Workers {
        /// The core.
        core: CoreId,
    },
    /// One-to-many (Tradition-N): every core runs a fetcher that takes commands, under the
    /// queues' lock, for its own pool of request coroutines.
    PerCore {
        /// The cores.
        cores: Vec<CoreId>,
        /// Request coroutines per core.
        workers: u32,
    },
    /// Pipelines: a fetcher on the first stage's core starts a coroutine per command there,
    /// which the architecture's flow moves from stage to stage.
    PerCommand {
        /// The first stage's core.
        core: CoreId,
    },
}

/// The device side of the host interface.
pub struct Controller {
    pub(crate) cx: Cx,
    /// The core of admin commands (the first fetcher's).
    pub(crate) core: CoreId,
    layout: HilLayout,
    /// Per-core inboxes of the `PerCore` layout.
    inboxes: Vec<Ring<Work>>,
    pub(crate) cfg: HostInterfaceConfig,
    pub(crate) link: Link,
    pub(crate) ftl: Ftl,
    /// Bypass mode: commands complete without touching the FTL.
    pub(crate) bypass: bool,
    /// The architecture's placement of the work and its locks.
    pub(crate) flow: Rc<Flow>,
    pub(crate) queues: RefCell<Vec<Option<Rc<QueuePair>>>>,
    pub(crate) doorbell: Notify,
    pub(crate) arbiter: RefCell<Arbiter>,
    pub(crate) smart: RefCell<SmartCounters>,
    /// The namespace it exposes.
    pub(crate) ns: Namespace,
    /// A zoned namespace's zones (`None`: conventional).
    pub(crate) zones: Option<RefCell<crate::hil::zones::Zones>>,
    me: Weak<Controller>,
    /// Commands completed (for progress reporting).
    pub(crate) completed: Cell<u64>,
    /// The number the next submitted command gets.
    next_id: Cell<u64>,
}

impl Controller {
    /// Starts the controller's fetchers (and workers) as `layout` places them, its requests
    /// following `flow` (the FTL's). `bypass` completes commands without the FTL (to measure
    /// the host interface alone).
    pub fn start(
        cx: &Cx,
        layout: HilLayout,
        cfg: &HostInterfaceConfig,
        ftl: Ftl,
        flow: Rc<Flow>,
        bypass: bool,
    ) -> Rc<Controller> {
        let core = match &layout {
            HilLayout::Workers { core } | HilLayout::PerCommand { core } => *core,
            HilLayout::PerCore { cores, .. } => cores[0],
        };
        let inboxes = match &layout {
            HilLayout::PerCore { cores, .. } => cores
                .iter()
                .map(|c| {
                    let capacity = (cfg.queue_depth as usize + 1) * cfg.queues as usize;
                    Ring::new(
                        cx,
                        format!("core {} inbox", c.index()),
                        RingSpec { capacity, ..RingSpec::default() },
                    )
                })
                .collect(),
            _ => Vec::new(),
        };
        let ns = Namespace::new(cfg, ftl.logical_units(), ftl.fil().geometry().unit_bytes(), ftl.payload());
        let zones = crate::hil::zoned::zones_of(&ftl, cfg);
        let c = Rc::new_cyclic(|me| Controller {
            cx: cx.clone(),
            core,
            layout: layout.clone(),
            inboxes,
            cfg: cfg.clone(),
            link: Link::new(&cfg.link),
            ftl,
            bypass,
            flow,
            queues: RefCell::new((0..=cfg.queues).map(|_| None).collect()),
            doorbell: Notify::new(cx, "doorbell"),
            arbiter: RefCell::new(Arbiter::new(
                &cfg.arbitration,
                cfg.fetch_burst,
                cfg.queue_fetch_size,
                cfg.device_commands,
            )),
            smart: RefCell::new(SmartCounters::default()),
            ns,
            zones,
            me: me.clone(),
            completed: Cell::new(0),
            next_id: Cell::new(0),
        });
        match &layout {
            HilLayout::Workers { .. } | HilLayout::PerCommand { .. } => {
                let f = c.clone();
                cx.spawn_daemon(core, "nvme fetcher", async move { f.fetch_loop(None).await });
            }
            HilLayout::PerCore { cores, workers } => {
                for (i, &k) in cores.iter().enumerate() {
                    let f = c.clone();
                    cx.spawn_daemon(k, format!("core {} fetcher", k.index()), async move {
                        f.fetch_loop(Some(i)).await
                    });
                    for w in 0..*workers {
                        let f = c.clone();
                        cx.spawn_daemon(k, format!("core {} worker {w}", k.index()), async move {
                            f.core_worker(i).await
                        });
                    }
                }
            }
        }
        c
    }

    fn rc(&self) -> Rc<Controller> {
        self.me.upgrade().expect("controller alive")
    }

    /// The simulation context the controller runs in.
    pub fn cx(&self) -> &Cx {
        &self.cx
    }

    /// The namespace it exposes: capacity, block and unit sizes, transfer limit, payload.
    pub fn namespace(&self) -> Namespace {
        self.ns
    }

    /// Namespace size in logical blocks.
    pub fn capacity_lbas(&self) -> u64 {
        self.ns.capacity_lbas
    }

    /// Logical block size in bytes.
    pub fn lba_bytes(&self) -> u32 {
        self.ns.lba_bytes
    }

    /// Mapping unit size in bytes.
    pub fn unit_bytes(&self) -> u32 {
        self.ns.unit_bytes
    }

    /// Whether data moves as bytes (payload stores) rather than tags.
    pub fn payload(&self) -> bool {
        self.ns.payload
    }

    /// The link (for its byte counters).
    pub fn link(&self) -> &Link {
        &self.link
    }

    /// Whether I/O queue pair `qid` exists.
    pub fn has_queue(&self, qid: u16) -> bool {
        self.queues.borrow().get(qid as usize).is_some_and(Option::is_some)
    }

    /// Commands completed so far.
    pub fn completed(&self) -> u64 {
        self.completed.get()
    }

    /// Creates I/O queue pair `qid` (1-based) and its workers.
    pub(crate) fn create_queue(&self, qid: u16, priority: Priority, nvm_set: u16) -> Result<(), Status> {
        if nvm_set > u8::MAX as u16 || !self.ftl.has_set(nvm_set as u8) {
            return Err(Status::InvalidField(format!("NVM set {nvm_set} does not exist")));
        }
        let mut qs = self.queues.borrow_mut();
        let slot = qs.get_mut(qid as usize).filter(|_| qid >= 1).ok_or(Status::InvalidQueue)?;
        if slot.is_some() {
            return Err(Status::InvalidField(format!("queue {qid} already exists")));
        }
        let mut q = QueuePair::new(&self.cx, qid, self.cfg.queue_depth, priority);
        q.nvm_set = nvm_set;
        let q = Rc::new(q);
        *slot = Some(q.clone());
        drop(qs);
        if !matches!(self.layout, HilLayout::Workers { .. }) {
            return Ok(()); // the fetchers' own workers (or one coroutine per command) serve it
        }
        for w in 0..self.cfg.workers_per_queue {
            let (me, q) = (self.rc(), q.clone());
            self.cx.spawn_daemon(self.core, format!("sq{qid} worker {w}"), async move { me.worker(q).await });
        }
        Ok(())
    }

    /// Deletes I/O queue pair `qid`: its workers exit once its commands are done.
    pub(crate) fn delete_queue(&self, qid: u16) -> Result<(), Status> {
        let q = self
            .queues
            .borrow_mut()
            .get_mut(qid as usize)
            .and_then(Option::take)
            .ok_or(Status::InvalidQueue)?;
        q.deleted.set(true);
        for _ in 0..self.cfg.workers_per_queue {
            if q.inbox.try_push(Work::Stop).is_err() {
                break; // a full inbox: workers will find the queue deleted when it drains
            }
        }
        Ok(())
    }

    /// Host side: submits `cmd` to queue `qid` (waiting while the queue is full), rings the
    /// doorbell and waits for the completion.
    pub async fn submit(&self, qid: u16, cmd: NvmeCommand) -> NvmeCompletion {
        let submitted = self.cx.now();
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let fail = |status| NvmeCompletion {
            status,
            data: HostData::None,
            timing: CommandTiming { id, submitted, completed: submitted },
            phases: Phases::default(),
            result: 0,
        };
        let traced = self.cx.tracing() && self.cx.trace_admit(id);
        let label = traced.then(|| format!("{} {}", cmd.opcode.name(), ByteSize(self.ns.bytes(cmd.nlb))));
        let Some(q) = self.queues.borrow().get(qid as usize).cloned().flatten() else {
            return fail(Status::InvalidQueue);
        };
        while q.outstanding.get() + 1 >= q.depth {
            q.slot_free.notified().await;
        }
        q.outstanding.set(q.outstanding.get() + 1);
        let (tx, rx) = oneshot::channel(&self.cx, "nvme completion");
        self.cx.sleep(self.link.mmio_latency()).await; // the doorbell write crosses the link
        let cmd = NvmeCommand { nvm_set: q.nvm_set, sq: qid, ..cmd };
        q.sq.borrow_mut().push_back(Entry {
            id,
            cmd,
            reply: tx,
            submitted,
            fetch_start: submitted,
            fetched: submitted,
        });
        self.doorbell.notify_one();
        let c = rx.await.unwrap_or_else(|_| fail(Status::InternalError("controller stopped".into())));
        q.outstanding.set(q.outstanding.get() - 1);
        q.slot_free.notify_one();
        if let Some(label) = label {
            let t = &c.timing;
            self.cx.trace_span(
                Track::HostQueue(qid),
                t.submitted,
                t.completed.since(t.submitted),
                label,
                Some(id),
            );
            self.cx.trace_finish(id);
        }
        c
    }

    /// Fetches commands for the queues' workers, the fetcher's own core's workers (`PerCore`:
    /// `inbox` is that core's), or a coroutine per command.
    async fn fetch_loop(self: Rc<Self>, inbox: Option<usize>) {
        let flow = self.flow.clone();
        flow.set_role(Point::Fetch);
        // The queues' lock, in a lock-based firmware.
        let locked = flow.has_locks().then_some(&flow);
        loop {
            let waited = match locked {
                Some(f) => f.lock(Table::Queues, Point::Fetch).await,
                None => SimDuration::ZERO,
            };
            let pick = {
                let qs = self.queues.borrow();
                self.arbiter.borrow_mut().next(&qs)
            };
            let Some((q, n)) = pick else {
                if let Some(f) = locked {
                    f.unlock(Table::Queues);
                }
                self.doorbell.notified().await;
                continue;
            };
            let now = self.cx.now();
            let entries: Vec<Entry> = {
                let mut sq = q.sq.borrow_mut();
                (0..n).filter_map(|_| sq.pop_front()).map(|e| Entry { fetch_start: now, ..e }).collect()
            };
            if let Some(f) = locked {
                f.unlock(Table::Queues);
            }
            self.cx.compute(self.cfg.costs.fetch * entries.len() as u64).await;
            self.link.transfer(&self.cx, Dir::ToDevice, 64 * entries.len() as u64).await;
            let fetched = self.cx.now();
            q.in_device.set(q.in_device.get() + entries.len() as u32);
            for mut e in entries {
                // Time spent on the queues' lock shows as queue wait (the command waited to be
                // fetched meanwhile).
                e.fetched = fetched;
                e.fetch_start = e.fetch_start + waited.min(fetched.since(e.fetch_start));
                match (&self.layout, inbox) {
                    (HilLayout::PerCore { .. }, Some(i)) => {
                        if self.inboxes[i].try_push(Work::Routed(q.clone(), e)).is_err() {
                            unreachable!("a core's inbox holds every queue's worth of commands");
                        }
                    }
                    (HilLayout::PerCommand { core }, _) => {
                        let (me, q) = (self.rc(), q.clone());
                        self.cx.spawn(*core, "request", async move { me.serve(&q, e).await });
                    }
                    _ => {
                        if q.inbox.try_push(Work::Cmd(e)).is_err() {
                            unreachable!("an inbox holds a full queue's worth of commands");
                        }
                    }
                }
            }
        }
    }

    /// Runs one command and posts its completion on its queue.
    async fn serve(&self, q: &Rc<QueuePair>, e: Entry) {
        let irq = Interrupts {
            coalesce_count: self.cfg.coalesce_count,
            coalesce_time: self.cfg.coalesce_time,
            latency: self.link.mmio_latency() + self.cfg.host_irq_latency,
        };
        let (reply, completion) = self.handle(e).await;
        self.completed.set(self.completed.get() + 1);
        q.in_device.set(q.in_device.get() - 1);
        if self.cfg.queue_fetch_size.is_some() || self.cfg.device_commands.is_some() {
            self.doorbell.notify_one(); // room again: the fetcher looks once more
        }
        crate::hil::queues::post(&self.cx, q, irq, reply, completion);
    }

    /// A request coroutine of core `i` (`PerCore`): serves what that core's fetcher took.
    async fn core_worker(self: Rc<Self>, i: usize) {
        while let Some(work) = self.inboxes[i].pop().await {
            match work {
                Work::Routed(q, e) => self.serve(&q, e).await,
                Work::Cmd(_) | Work::Stop => unreachable!("a core's inbox holds routed commands"),
            }
        }
    }

    async fn worker(self: Rc<Self>, q: Rc<QueuePair>) {
        while let Some(work) = q.inbox.pop().await {
            let Work::Cmd(e) = work else { return };
            self.serve(&q, e).await;
            if q.deleted.get() && q.inbox.is_empty() {
                return;
            }
        }
    }
}
