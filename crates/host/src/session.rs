//! What every host-side driver (fio-like jobs, trace replays) shares: creating the queue
//! pairs, issuing one command and recording its completion (results, time series, per-request
//! sink, trace), sampling the device over time, and running the simulation to the end.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use firmware::hil::{HostData, NvmeCommand, NvmeCompletion, Status};
use firmware::system::{Front, System};
use sim::trace::TraceWindow;
use sim::{CoreId, Cx, Deadlock, SimDuration, SimTime, Stop};

use crate::interface::Port;
use crate::run::{FlowCmt, HostResults, Progress, RequestRecord, RequestSink, RunError, RunOptions};
use crate::series::Series;
use crate::workload::IoOp;

/// One host I/O.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Io {
    /// The issuing clone (job clone or replay worker).
    pub clone: u32,
    /// Its flow (an index into [`HostResults::flows`]; a flow the results do not have is
    /// counted in the totals only).
    pub flow: u32,
    /// The submission queue.
    pub qid: u16,
    /// Direction.
    pub op: IoOp,
    /// Byte offset (LBA-aligned).
    pub offset: u64,
    /// Bytes (a multiple of the LBA size).
    pub len: u64,
    /// Where a write should land (host-side FTLs).
    pub placement: Option<firmware::hil::Placement>,
}

/// How a queue pair is created: its arbitration class and the planes its writes go to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct QueueKind {
    pub priority: firmware::hil::Priority,
    /// The NVM set's planes (`None`: the whole array).
    pub planes: Option<Vec<u32>>,
}

/// A run in progress.
pub(crate) struct Session {
    pub front: Front,
    pub cx: Cx,
    /// When the run started (after the queues were created).
    pub start: SimTime,
    pub results: RefCell<HostResults>,
    done: Cell<u64>,
    /// Host tasks (job slots, replay workers) still running: the run ends when the last one
    /// does, whatever the device is still doing in the background.
    host_tasks: Cell<u32>,
    series: RefCell<Series>,
    finished: Cell<bool>,
    sink: Option<Rc<RefCell<dyn RequestSink>>>,
    traced: bool,
    payload: bool,
    /// The legacy command port all workers share (`None` under NVMe).
    port: Option<Port>,
}

impl Session {
    /// Creates the queue pairs 1..=`queues` that do not exist yet, starts the time-series
    /// sampler and, if asked, the trace. Results count from `ramp` after the start.
    pub fn open(
        dev: &dyn System,
        queues: u32,
        ramp: SimDuration,
        opts: &RunOptions,
    ) -> Result<Session, RunError> {
        Session::open_with(dev, queues, &[], ramp, opts)
    }

    /// [`open`](Self::open), queue `q` created as `kinds[q - 1]` says (its arbitration class
    /// and the planes its writes are confined to; medium and unconfined beyond the list).
    pub fn open_with(
        dev: &dyn System,
        queues: u32,
        kinds: &[QueueKind],
        ramp: SimDuration,
        opts: &RunOptions,
    ) -> Result<Session, RunError> {
        let front = dev.front();
        let c = front.clone();
        let kinds = kinds.to_vec();
        let created = dev.sim().block_on(async move {
            for q in 1..=queues as u16 {
                let r = match kinds.get(q as usize - 1) {
                    // A class or a set: (re)created so that it has them.
                    Some(k) if k.priority != firmware::hil::Priority::Medium || k.planes.is_some() => {
                        c.create_queue_with(q, k.priority, k.planes.as_deref()).await
                    }
                    _ if c.has_queue(q) => Ok(()),
                    _ => c.create_queue(q).await,
                };
                r.map_err(|r| (q, r))?;
            }
            Ok(())
        })?;
        created.map_err(|(q, r)| RunError::Queue(q, r))?;
        let cx = dev.sim().cx();
        let start = cx.now();
        let s = Session {
            payload: front.payload(),
            front,
            start,
            results: RefCell::new(HostResults {
                window_start: start + ramp,
                window_end: start + ramp,
                queues,
                interface: opts.interface,
                ..HostResults::default()
            }),
            done: Cell::new(0),
            host_tasks: Cell::new(0),
            series: RefCell::new(Series::new(start, dev.sample(), opts.interval, opts.max_points)),
            finished: Cell::new(false),
            sink: opts.per_request.clone(),
            traced: opts.trace.is_some(),
            port: opts.interface.port_slots().map(|n| Port::new(&cx, "legacy port slot", n)),
            cx: cx.clone(),
        };
        if let Some(w) = opts.trace {
            let shift =
                |t: SimTime| if t == SimTime::MAX { t } else { start + t.saturating_since(SimTime::ZERO) };
            cx.trace_start(TraceWindow { from: shift(w.from), until: shift(w.until), ..w });
        }
        Ok(s)
    }

    /// Tells the device which flow each queue serves (`queue_flows[q - 1]`, out of `flows`),
    /// so that it counts flash work and CMT lookups per flow (more than one flow), and splits
    /// its CMT between them if `ftl.mapping.partition` asks and its data cache if
    /// `ftl.cache.partition` asks; shared ones (the default) are left alone.
    pub fn bind_flows(
        &self,
        dev: &dyn System,
        queue_flows: &[Option<u32>],
        flows: u32,
    ) -> Result<(), RunError> {
        if flows > 1 {
            self.front.attribute_flows(queue_flows, flows);
        }
        if !dev.config().ftl.mapping.cmt_shared() {
            self.front.partition_cmt(flows).map_err(RunError::CmtPartition)?;
        }
        if dev.config().ftl.cache.partition.is_shared() {
            return Ok(());
        }
        self.front.bind_flows(queue_flows, flows).map_err(RunError::Partition)
    }

    /// Submits `io` (waiting while its queue is full) and records its completion; it counts
    /// in the results if it was submitted at or after `measured_from`. Returns whether it
    /// succeeded.
    pub async fn issue(&self, io: &Io, measured_from: SimTime) -> bool {
        let lba = self.front.lba_bytes() as u64;
        let (slba, nlb) = (io.offset / lba, (io.len / lba) as u32);
        let cmd = match io.op {
            IoOp::Read => NvmeCommand::read(slba, nlb),
            IoOp::Write => {
                let data =
                    if self.payload { HostData::Bytes(vec![0x5a; io.len as usize]) } else { HostData::None };
                let mut w = NvmeCommand::write(slba, nlb, data);
                w.placement = io.placement;
                w
            }
            IoOp::Trim => NvmeCommand::deallocate(vec![(slba, nlb)]),
        };
        self.issue_command(io, cmd, measured_from).await.status == Status::Success
    }

    /// Submits `cmd`, which does what `io` describes (waiting while its queue is full), records
    /// its completion like [`issue`](Self::issue) and returns it.
    pub async fn issue_command(&self, io: &Io, cmd: NvmeCommand, measured_from: SimTime) -> NvmeCompletion {
        self.results.borrow_mut().issued += 1;
        let issued = self.cx.now();
        if let Some(port) = &self.port {
            port.acquire().await;
        }
        let mut c = self.front.submit(io.qid, cmd).await;
        if let Some(port) = &self.port {
            port.release();
            // The wait for the port is host queueing, part of what the application sees.
            c.phases.queue_wait += c.timing.submitted.saturating_since(issued);
            c.timing.submitted = issued;
        }
        self.done.set(self.done.get() + 1);
        let ok = c.status == Status::Success;
        let latency = c.timing.completed.since(c.timing.submitted);
        if ok {
            self.series.borrow_mut().record(io.op, io.len, latency);
        }
        if let Some(sink) = &self.sink {
            sink.borrow_mut().record(&RequestRecord {
                id: c.timing.id,
                clone: io.clone,
                qid: io.qid,
                op: io.op,
                offset: io.offset,
                len: io.len,
                submitted: c.timing.submitted,
                completed: c.timing.completed,
                ok,
                phases: c.phases,
            });
        }
        let mut r = self.results.borrow_mut();
        r.window_end = r.window_end.max(c.timing.completed);
        let measured = c.timing.submitted >= measured_from;
        r.ops[io.op as usize].add(ok, measured, io.len, latency, &c.phases);
        // A run of one flow copies the totals at the end (see `finish`): no second recording.
        if r.flows.len() > 1
            && let Some(f) = r.flows.get_mut(io.flow as usize)
        {
            f.ops[io.op as usize].add(ok, measured, io.len, latency, &c.phases);
            f.window_end = f.window_end.max(c.timing.completed);
        }
        drop(r);
        c
    }

    /// Spawns a host task (a job slot, a replay worker) on `core` (a host core of the system,
    /// or [`CoreId::UNBOUND`] where the host is not modelled): [`run`](Self::run) ends when the
    /// last one has finished.
    pub fn spawn_host(
        self: &Rc<Self>,
        core: CoreId,
        name: impl Into<sim::Label>,
        task: impl std::future::Future<Output = ()> + 'static,
    ) {
        self.host_tasks.set(self.host_tasks.get() + 1);
        let me = self.clone();
        self.cx.spawn(core, name, async move {
            task.await;
            me.host_tasks.set(me.host_tasks.get() - 1);
            if me.host_tasks.get() == 0 {
                me.cx.stop();
            }
        });
    }

    /// The core host worker `i` runs on: the system's host cores in turn, or none.
    pub fn worker_core(cores: &[CoreId], i: usize) -> CoreId {
        if cores.is_empty() { CoreId::UNBOUND } else { cores[i % cores.len()] }
    }

    /// Runs the simulation until every host task has finished (the moment the last command
    /// completes), sampling the series and calling `progress` every few milliseconds of
    /// simulated time, or at the next event after an idle stretch (`total`: commands expected,
    /// if known).
    ///
    /// The device's background work (write-backs, GC, translation-page rewrites) is not waited
    /// for: a host sees the run end with its last completion, and on a device in GC steady
    /// state that work never ends (rewriting translation pages takes free blocks, whose
    /// collection moves units whose translation pages then need rewriting). It stays
    /// suspended where it is and carries on if the same device runs again.
    pub fn run(
        self: &Rc<Self>,
        dev: &dyn System,
        total: Option<u64>,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), Deadlock> {
        self.start_sampler(dev);
        let slice = SimDuration::from_millis(5);
        let sim = dev.sim();
        loop {
            let stop = sim.run_slice(slice)?;
            progress(Progress { done: self.done.get(), total, now: sim.now() });
            if stop == Stop::Idle || self.host_tasks.get() == 0 {
                return Ok(());
            }
        }
    }

    /// Closes an interval of the series at every boundary until the run finishes.
    pub fn start_sampler(self: &Rc<Self>, dev: &dyn System) {
        let sample = dev.sampler();
        let me = self.clone();
        self.cx.spawn_watcher(CoreId::UNBOUND, "time-series sampler", async move {
            loop {
                let at = me.series.borrow().next_boundary();
                me.cx.sleep_until(at).await;
                if me.finished.get() {
                    return;
                }
                me.series.borrow_mut().close(at, sample());
            }
        });
    }

    /// Ends the run: the results with the series closed and the trace, if any.
    pub fn finish(&self, dev: &dyn System) -> HostResults {
        self.finished.set(true);
        let mut results = self.results.borrow().clone();
        for (f, part) in results.flows.iter_mut().zip(self.front.cache_partitions()) {
            f.cache = Some(part);
        }
        let flows = results.flows.len() as u32;
        if flows > 1 {
            let segments = self.front.cmt_partitions();
            let counts = self.front.cmt_flows(flows).unwrap_or_default();
            for (k, (f, (hits, misses))) in results.flows.iter_mut().zip(counts).enumerate() {
                f.cmt = Some(FlowCmt { segments: segments.get(k).copied(), hits, misses });
            }
        }
        if let [flow] = results.flows.as_mut_slice() {
            flow.ops = results.ops.clone();
            flow.window_end = results.window_end;
        }
        let mut series = self.series.borrow().clone();
        if !series.open_is_empty() {
            series.close(dev.sim().now().max(results.window_end), dev.sample());
        }
        results.series = Some(series);
        if self.traced {
            results.trace = self.cx.trace_take();
        }
        results
    }
}
