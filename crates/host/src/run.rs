//! Running fio-like jobs against a device through its NVMe controller: each clone of a job gets
//! its own queue pair (sharing queues round robin when there are more clones than queues) and
//! keeps `iodepth` commands in flight, paced in simulated time by its rate caps, recording only
//! what completes after its ramp time.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use firmware::device::Device;
use firmware::hil::{AdminCommand, AdminResult, Controller, HostData, NvmeCommand, Priority, Status};
use firmware::trace::Phases;
use serde::Serialize;
use sim::stats::{Histogram, LogHistogram};
use sim::trace::{Trace, TraceWindow};
use sim::{CoreId, Deadlock, SimDuration, SimTime, Stop};

use crate::series::{DeviceSample, Series};
use crate::workload::{IoOp, JobError, JobSpec, JobStream, instantiate};

/// What one direction measured.
#[derive(Clone, Debug, Default)]
pub struct OpMetrics {
    /// Commands completed in the measured window.
    pub count: u64,
    /// Bytes they moved.
    pub bytes: u64,
    /// Host-observed latency (submission to completion), ns.
    pub latency: Histogram,
    /// Summed phases (divide by `count` for the mean breakdown).
    pub phases: Phases,
    /// Distribution of each phase, ns, in [`Phases::entries`] order.
    pub phase_hist: Vec<LogHistogram>,
    /// Commands that failed.
    pub errors: u64,
}

/// What a run measured on the host side.
#[derive(Clone, Debug, Default)]
pub struct HostResults {
    /// Reads, writes and trims.
    pub ops: [OpMetrics; 3],
    /// Start of the measured window (end of the ramp).
    pub window_start: SimTime,
    /// Last completion.
    pub window_end: SimTime,
    /// Commands issued in all (ramp included).
    pub issued: u64,
    /// Clones run.
    pub clones: u32,
    /// Queue pairs used.
    pub queues: u32,
    /// Throughput, latency and device counters over time.
    pub series: Option<Series>,
    /// The event trace, if one was asked for.
    pub trace: Option<Trace>,
}

/// How to run, beyond the jobs.
#[derive(Clone)]
pub struct RunOptions {
    /// Initial time-series interval (it doubles to stay within `max_points`).
    pub interval: SimDuration,
    /// Most time-series points kept.
    pub max_points: usize,
    /// Where to send one record per completed command (`--per-request`).
    pub per_request: Option<Rc<RefCell<dyn RequestSink>>>,
    /// Record an event trace; `from` and `until` count from the start of the run.
    pub trace: Option<TraceWindow>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            interval: SimDuration::from_micros(100),
            max_points: 1000,
            per_request: None,
            trace: None,
        }
    }
}

/// One completed command, as the host saw it.
#[derive(Clone, Debug)]
pub struct RequestRecord {
    /// The controller's number for the command (submission order on the device; event traces
    /// use the same number).
    pub id: u64,
    /// The job clone that issued it.
    pub clone: u32,
    /// Its submission queue.
    pub qid: u16,
    /// Direction.
    pub op: IoOp,
    /// Byte offset and length.
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
    /// Submission and completion times.
    pub submitted: SimTime,
    /// When the host saw the completion.
    pub completed: SimTime,
    /// Whether it succeeded.
    pub ok: bool,
    /// Where its time went.
    pub phases: Phases,
}

/// Receives every completed command of a run.
pub trait RequestSink {
    /// One command completed.
    fn record(&mut self, r: &RequestRecord);
}

impl OpMetrics {
    /// Counts one completed command (`measured`: after the ramp).
    fn add(&mut self, ok: bool, measured: bool, bytes: u64, latency: SimDuration, phases: &Phases) {
        if !ok {
            self.errors += 1;
            return;
        }
        if !measured {
            return;
        }
        self.count += 1;
        self.bytes += bytes;
        self.latency.record_duration(latency);
        self.phases += *phases;
        if self.phase_hist.is_empty() {
            self.phase_hist = vec![LogHistogram::new(); phases.entries().len()];
        }
        for (h, (_, d)) in self.phase_hist.iter_mut().zip(phases.entries()) {
            h.record(d.as_nanos());
        }
    }
}

impl HostResults {
    /// The measured window.
    pub fn window(&self) -> SimDuration {
        self.window_end.saturating_since(self.window_start)
    }

    /// Metrics of one direction.
    pub fn op(&self, op: IoOp) -> &OpMetrics {
        &self.ops[op as usize]
    }
}

/// Progress of a run: commands completed and the total expected (`None` for time-based runs).
#[derive(Copy, Clone, Debug, Serialize)]
pub struct Progress {
    /// Commands completed.
    pub done: u64,
    /// Commands expected, if known.
    pub total: Option<u64>,
    /// Simulated time.
    pub now: SimTime,
}

/// Why a run could not complete.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A job is invalid for this device.
    #[error("{0}")]
    Job(#[from] JobError),
    /// The device stopped making progress (a firmware bug, reported with what waits on what).
    #[error(transparent)]
    Deadlock(#[from] Deadlock),
    /// The controller refused to create a queue.
    #[error("creating I/O queue {0}: {1:?}")]
    Queue(u16, AdminResult),
}

struct Shared {
    results: RefCell<HostResults>,
    done: Cell<u64>,
    series: RefCell<Series>,
    finished: Cell<bool>,
    sink: Option<Rc<RefCell<dyn RequestSink>>>,
}

/// Runs `jobs` on `dev` to completion (every stream exhausted or every runtime over), creating
/// the queue pairs it needs that do not exist yet (so runs can follow each other on one
/// device). Calls `progress` every few milliseconds of simulated time.
pub fn run_jobs(
    dev: &Device,
    jobs: &[JobSpec],
    seed: u64,
    progress: &mut dyn FnMut(Progress),
) -> Result<HostResults, RunError> {
    run_jobs_with(dev, jobs, seed, &RunOptions::default(), progress)
}

/// [`run_jobs`] with options: the time-series interval and a per-request sink.
pub fn run_jobs_with(
    dev: &Device,
    jobs: &[JobSpec],
    seed: u64,
    opts: &RunOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<HostResults, RunError> {
    let ctl = dev.controller.clone();
    let capacity = ctl.capacity_lbas() * ctl.lba_bytes() as u64;
    let instances = instantiate(jobs, capacity, ctl.lba_bytes(), seed)?;
    let queues = (instances.len() as u32).min(dev.platform.config.host.queues).max(1);
    let c = ctl.clone();
    let created = dev.platform.sim.block_on(async move {
        for q in (1..=queues as u16).filter(|&q| !c.has_queue(q)) {
            let r = c.admin(AdminCommand::CreateIoQueue { qid: q, priority: Priority::Medium }).await;
            if r != AdminResult::Done {
                return Err((q, r));
            }
        }
        Ok(())
    })?;
    created.map_err(|(q, r)| RunError::Queue(q, r))?;
    let start = dev.platform.sim.now();
    let total: Option<u64> = instances
        .iter()
        .map(|i| if i.stream.spec().time_based { None } else { i.stream.spec().number_ios })
        .sum();
    let ramp_end = start + instances.iter().map(|i| i.stream.spec().ramp_time).max().unwrap_or_default();
    let shared = Rc::new(Shared {
        results: RefCell::new(HostResults {
            window_start: ramp_end,
            window_end: ramp_end,
            clones: instances.len() as u32,
            queues,
            ..HostResults::default()
        }),
        done: Cell::new(0),
        series: RefCell::new(Series::new(start, DeviceSample::of(&dev.ftl), opts.interval, opts.max_points)),
        finished: Cell::new(false),
        sink: opts.per_request.clone(),
    });
    let cx = dev.platform.sim.cx();
    spawn_sampler(dev, shared.clone());
    if let Some(w) = opts.trace {
        let from = start + (w.from.saturating_since(SimTime::ZERO));
        let until = if w.until == SimTime::MAX {
            SimTime::MAX
        } else {
            start + w.until.saturating_since(SimTime::ZERO)
        };
        cx.trace_start(TraceWindow { from, until, ..w });
    }
    for (i, inst) in instances.into_iter().enumerate() {
        let spec = inst.stream.spec().clone();
        let clone = Rc::new(Clone_ {
            ctl: ctl.clone(),
            index: i as u32,
            qid: (i as u32 % queues) as u16 + 1,
            stream: RefCell::new(inst.stream),
            next_start: RefCell::new([start; 3]),
            deadline: spec.runtime.map(|r| start + spec.ramp_time + r),
            ramp_end: start + spec.ramp_time,
            shared: shared.clone(),
            payload: ctl.payload(),
        });
        for slot in 0..spec.iodepth {
            let c = clone.clone();
            cx.spawn(
                CoreId::UNBOUND,
                format!("{} clone {} slot {slot}", spec.name, inst.clone),
                async move { c.run().await },
            );
        }
    }
    let slice = SimDuration::from_millis(5);
    loop {
        let stop = dev.platform.sim.run_until(dev.platform.sim.now() + slice)?;
        progress(Progress { done: shared.done.get(), total, now: dev.platform.sim.now() });
        if stop == Stop::Idle {
            break;
        }
    }
    shared.finished.set(true);
    let mut results = shared.results.borrow().clone();
    let mut series = shared.series.borrow().clone();
    if !series.open_is_empty() {
        series.close(dev.platform.sim.now().max(results.window_end), DeviceSample::of(&dev.ftl));
    }
    results.series = Some(series);
    if opts.trace.is_some() {
        results.trace = cx.trace_take();
    }
    Ok(results)
}

/// Closes a time-series interval at every boundary until the run finishes.
fn spawn_sampler(dev: &Device, shared: Rc<Shared>) {
    let cx = dev.platform.sim.cx();
    let ftl = dev.ftl.clone();
    let c = cx.clone();
    cx.spawn_daemon(CoreId::UNBOUND, "time-series sampler", async move {
        loop {
            let at = shared.series.borrow().next_boundary();
            c.sleep_until(at).await;
            if shared.finished.get() {
                return;
            }
            shared.series.borrow_mut().close(at, DeviceSample::of(&ftl));
        }
    });
}

/// One running clone of a job.
struct Clone_ {
    ctl: Rc<Controller>,
    index: u32,
    qid: u16,
    stream: RefCell<JobStream>,
    /// Earliest start of the next I/O per direction (rate caps).
    next_start: RefCell<[SimTime; 3]>,
    deadline: Option<SimTime>,
    ramp_end: SimTime,
    shared: Rc<Shared>,
    payload: bool,
}

impl Clone_ {
    async fn run(self: Rc<Self>) {
        let cx = self.ctl.cx();
        loop {
            if self.deadline.is_some_and(|d| cx.now() >= d) {
                return;
            }
            let Some(req) = self.stream.borrow_mut().next() else { return };
            let gap = self.stream.borrow().spec().rate_gap(req.op, req.len);
            if !gap.is_zero() {
                let at = {
                    let mut next = self.next_start.borrow_mut();
                    let at = next[req.op as usize].max(cx.now());
                    next[req.op as usize] = at + gap;
                    at
                };
                cx.sleep_until(at).await;
                if self.deadline.is_some_and(|d| cx.now() >= d) {
                    return;
                }
            }
            let lba = self.ctl.lba_bytes() as u64;
            let (slba, nlb) = (req.offset / lba, (req.len as u64 / lba) as u32);
            let cmd = match req.op {
                IoOp::Read => NvmeCommand::read(slba, nlb),
                IoOp::Write => {
                    let data = if self.payload {
                        HostData::Bytes(vec![0x5a; req.len as usize])
                    } else {
                        HostData::None
                    };
                    NvmeCommand::write(slba, nlb, data)
                }
                IoOp::Trim => NvmeCommand::deallocate(vec![(slba, nlb)]),
            };
            self.shared.results.borrow_mut().issued += 1;
            let c = self.ctl.submit(self.qid, cmd).await;
            self.shared.done.set(self.shared.done.get() + 1);
            let ok = c.status == Status::Success;
            let latency = c.timing.completed.since(c.timing.submitted);
            if ok {
                self.shared.series.borrow_mut().record(req.op, req.len as u64, latency);
            }
            if let Some(sink) = &self.shared.sink {
                sink.borrow_mut().record(&RequestRecord {
                    id: c.timing.id,
                    clone: self.index,
                    qid: self.qid,
                    op: req.op,
                    offset: req.offset,
                    len: req.len as u64,
                    submitted: c.timing.submitted,
                    completed: c.timing.completed,
                    ok,
                    phases: c.phases,
                });
            }
            let mut r = self.shared.results.borrow_mut();
            r.window_end = r.window_end.max(c.timing.completed);
            r.ops[req.op as usize].add(
                ok,
                c.timing.submitted >= self.ramp_end,
                req.len as u64,
                latency,
                &c.phases,
            );
        }
    }
}
