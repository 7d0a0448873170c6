//! Running fio-like jobs against a device through its NVMe controller: each clone of a job gets
//! its own queue pair (sharing queues round robin when there are more clones than queues) and
//! keeps `iodepth` commands in flight, paced in simulated time by its rate caps, recording only
//! what completes after its ramp time.

use std::cell::RefCell;
use std::rc::Rc;

use firmware::system::System;
use firmware::trace::Phases;
use serde::Serialize;
use sim::stats::{Histogram, LogHistogram};
use sim::trace::{Trace, TraceWindow};
use sim::{Deadlock, SimDuration, SimTime};

use crate::interface::HostInterface;
use crate::series::Series;
use crate::session::{Io, QueueKind, Session};
use crate::workload::{IoOp, JobError, JobSpec, JobStream, check_jobs, instantiate};

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

/// One flow's CMT lookups, counted over the whole run (ageing aside: the flows are bound
/// after it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowCmt {
    /// Segments its partition holds (`None`: the CMT is shared).
    pub segments: Option<u32>,
    /// Lookups that found their segment cached (by whichever flow loaded it).
    pub hits: u64,
    /// Lookups that loaded their segment.
    pub misses: u64,
}

/// What one flow measured: a job (all its clones), a trace replay, or a volume of one (or the
/// volumes grouped as `others`).
#[derive(Clone, Debug, Default)]
pub struct FlowMetrics {
    /// The job's name (or the trace's).
    pub name: String,
    /// The submission queues its commands go to (set when its clones or workers are given
    /// their queues).
    pub queues: Vec<u16>,
    /// Its reads, writes and trims.
    pub ops: [OpMetrics; 3],
    /// Its last completion (its measured window runs from the run's window start to here).
    pub window_end: SimTime,
    /// Its data-cache partition's lines and reads (only when `ftl.cache.partition` splits the
    /// cache between flows).
    pub cache: Option<firmware::ftl::PartCounts>,
    /// Its CMT lookups (with more than one flow, under DFTL) and its CMT partition.
    pub cmt: Option<FlowCmt>,
}

impl FlowMetrics {
    /// A flow named `name` that has measured nothing yet.
    pub fn new(name: impl Into<String>) -> FlowMetrics {
        FlowMetrics { name: name.into(), ..FlowMetrics::default() }
    }
}

/// What a run measured on the host side.
#[derive(Clone, Debug, Default)]
pub struct HostResults {
    /// Reads, writes and trims.
    pub ops: [OpMetrics; 3],
    /// The same by flow (issue 30): one per job, in the order of the jobs, or for a trace
    /// replay one (or one per volume, `ReplaySpec::volume_flows`); each command counts in its
    /// flow and in `ops`.
    pub flows: Vec<FlowMetrics>,
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
    /// What a trace replay did to the trace (replays only).
    pub replay: Option<crate::replay::ReplayStats>,
    /// What serving live did (`ssdlab serve` only; filled in by the server).
    pub live: Option<crate::live::LiveStats>,
    /// How the host reached the device.
    pub interface: HostInterface,
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
    /// NVMe queue pairs, or the legacy synchronous path (one command per worker through one
    /// shared port).
    pub interface: HostInterface,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            interval: SimDuration::from_micros(100),
            max_points: 1000,
            per_request: None,
            trace: None,
            interface: HostInterface::Nvme,
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
    pub(crate) fn add(
        &mut self,
        ok: bool,
        measured: bool,
        bytes: u64,
        latency: SimDuration,
        phases: &Phases,
    ) {
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
    #[error(transparent)]
    Job(#[from] JobError),
    /// The device stopped making progress (a firmware bug, reported with what waits on what).
    #[error(transparent)]
    Deadlock(#[from] Deadlock),
    /// The device refused to create a queue.
    #[error("creating I/O queue {0}: {1}")]
    Queue(u16, #[source] firmware::system::QueueError),
    /// The trace could not be read, or has a bad line.
    #[error(transparent)]
    Trace(#[from] crate::trace::TraceError),
    /// The replay settings are invalid.
    #[error("replay: {0}")]
    Replay(String),
    /// A job names a place the device does not have, or a device that places writes itself.
    #[error(transparent)]
    Placement(firmware::system::SystemError),
    /// A replay names a place the device does not have, or a device that places writes itself.
    #[error("replay: {0}")]
    ReplayPlacement(#[source] firmware::system::SystemError),
    /// A `zonemode=zbd` job cannot run on the device.
    #[error("zonemode=zbd: {0}")]
    Zones(String),
    /// A job's isolation knobs (confinement, queue priority) cannot work on this device.
    #[error("{0}")]
    Isolation(String),
    /// The data cache cannot be split between the flows as `ftl.cache.partition` says.
    #[error("ftl.cache.partition: {0}")]
    Partition(String),
    /// The CMT cannot be split between the flows as `ftl.mapping.partition` says.
    #[error("ftl.mapping.partition: {0}")]
    CmtPartition(String),
}

impl RunError {
    /// The error of a partitioned data cache or, if only the CMT is partitioned, of the CMT
    /// (`why` is told what is partitioned: "cache" or "CMT").
    pub(crate) fn partitioned(dev: &dyn System, why: impl Fn(&str) -> String) -> RunError {
        match dev.config().ftl.cache.partition.is_shared() {
            false => RunError::Partition(why("cache")),
            true => RunError::CmtPartition(why("CMT")),
        }
    }
}

/// Whether the data cache or the CMT is split between flows (each knows a flow by its queues).
pub(crate) fn partitioned(dev: &dyn System) -> bool {
    let ftl = &dev.config().ftl;
    !ftl.cache.partition.is_shared() || !ftl.mapping.cmt_shared()
}

/// Checks that `flows` flows can split the device's data cache as `ftl.cache.partition` says
/// and its CMT as `ftl.mapping.partition` says (nothing to check for shared ones).
pub(crate) fn check_partition(dev: &dyn System, flows: u32) -> Result<(), RunError> {
    if !dev.config().ftl.cache.partition.is_shared() {
        dev.front().check_flows(flows).map_err(RunError::Partition)?;
    }
    if !dev.config().ftl.mapping.cmt_shared() {
        dev.front().check_cmt_flows(flows).map_err(RunError::CmtPartition)?;
    }
    Ok(())
}

/// Checks that `jobs` can run on `dev`, as [`run_jobs_with`] does before it starts them, without
/// running anything: every job fits the device ([`check_jobs`]) and every placement names a
/// place the device has. Cheap; call it before ageing the device.
pub fn check(dev: &dyn System, jobs: &[JobSpec]) -> Result<(), RunError> {
    let front = dev.front();
    check_jobs(jobs, front.capacity_lbas() * front.lba_bytes() as u64, front.lba_bytes())?;
    for p in jobs.iter().filter_map(|j| j.placement) {
        dev.check_placement(p).map_err(RunError::Placement)?;
    }
    for pid in jobs.iter().flat_map(|j| j.plids.iter().copied()) {
        dev.check_placement(firmware::hil::Placement::Pid(pid)).map_err(RunError::Placement)?;
    }
    let host_zones = |j: &JobSpec| j.zbd.as_ref().is_some_and(|z| z.zonesize.is_some());
    if dev.config().ftl.zoned_ns().is_none() && jobs.iter().any(|j| j.zbd.is_some() && !host_zones(j)) {
        return Err(RunError::Zones(
            "the device has no zoned namespace: give it an [ftl.zoned] table (or give zonesize for host-side zones)"
                .into(),
        ));
    }
    crate::zbd::ZoneBook::check(dev, jobs)?;
    let clones: u32 = jobs.iter().map(|j| j.numjobs).sum();
    queue_plan(dev, jobs, clones.min(dev.queues()).max(1))?;
    check_partition(dev, jobs.len() as u32)
}

/// Each job's queue kind: its priority class (which needs weighted arbitration) and the planes
/// it is confined to; errors in one line name the job and the option.
fn queue_kinds(dev: &dyn System, jobs: &[JobSpec]) -> Result<Vec<QueueKind>, RunError> {
    let cfg = dev.config();
    let weighted = !matches!(cfg.host.arbitration, firmware::hil::Arbitration::RoundRobin);
    let mut kinds = Vec::with_capacity(jobs.len());
    for j in jobs {
        let isolation = |why: String| RunError::Isolation(format!("job {}: {why}", j.name));
        if j.queue_priority.is_some() && !weighted {
            return Err(priority_needs_weighted(&format!("job {}: queue_priority", j.name)));
        }
        let planes = j.confine.planes_on(&cfg.geometry).map_err(isolation)?;
        kinds.push(QueueKind { priority: j.queue_priority.unwrap_or_default(), planes });
    }
    Ok(kinds)
}

/// The one refusal of a priority class set while the device arbitrates round robin, for a job's
/// `queue_priority` and a replay volume's `priority` alike (`what` names the option): classes
/// would silently do nothing.
pub(crate) fn priority_needs_weighted(what: &str) -> RunError {
    RunError::Isolation(format!(
        "{what} needs weighted round robin arbitration (set host.arbitration = {{ kind = \"weighted\" }})"
    ))
}

/// Each of `queues` queues' kind, from the clones it serves (clone `i` of the run, jobs' clones
/// in order, uses queue `i % queues + 1`): clones that share a queue (more clones than queues)
/// must want the same class and planes.
fn queue_plan(dev: &dyn System, jobs: &[JobSpec], queues: u32) -> Result<Vec<QueueKind>, RunError> {
    let job_kinds = queue_kinds(dev, jobs)?;
    let clones: Vec<usize> =
        jobs.iter().enumerate().flat_map(|(j, s)| std::iter::repeat_n(j, s.numjobs as usize)).collect();
    let mut kinds: Vec<Option<(usize, QueueKind)>> = vec![None; queues as usize];
    let partitioned = partitioned(dev);
    for (i, &job) in clones.iter().enumerate() {
        let q = i % queues as usize;
        let want = &job_kinds[job];
        match &kinds[q] {
            Some((other, _)) if partitioned && *other != job => {
                return Err(RunError::partitioned(dev, |what| {
                    format!(
                        "jobs {} and {} share queue {} (the device has {} I/O queues for {} clones), but a partitioned {what} knows a flow by its queues; raise host.queues or lower numjobs",
                        jobs[*other].name,
                        jobs[job].name,
                        q + 1,
                        dev.queues(),
                        clones.len()
                    )
                }));
            }
            None => kinds[q] = Some((job, want.clone())),
            Some((other, k)) if k != want => {
                return Err(RunError::Isolation(format!(
                    "jobs {} and {} share queue {} (the device has {} I/O queues for {} clones) but ask for different queue_priority or channels/ways/dies/planes; raise host.queues or lower numjobs",
                    jobs[*other].name,
                    jobs[job].name,
                    q + 1,
                    dev.queues(),
                    clones.len()
                )));
            }
            Some(_) => {}
        }
    }
    Ok(kinds.into_iter().map(|k| k.map(|(_, k)| k).unwrap_or_default()).collect())
}

/// Registers, before the device is aged, where a fill places the data of each confined job:
/// its region on its planes (so that a confined flow reads what is on its planes from the
/// start). Jobs that are not confined leave the fill as it is.
pub fn confine_fill(dev: &dyn System, jobs: &[JobSpec]) -> Result<(), RunError> {
    let kinds = queue_kinds(dev, jobs)?;
    if kinds.iter().all(|k| k.planes.is_none()) {
        return Ok(());
    }
    let front = dev.front();
    let lba = front.lba_bytes() as u64;
    let capacity = front.capacity_lbas() * lba;
    let instances = instantiate(jobs, capacity, front.lba_bytes(), 0)?;
    for inst in &instances {
        if let Some(planes) = &kinds[inst.job].planes {
            let r = inst.stream.region();
            front
                .confine_fill(planes, r.start / lba..r.end.div_ceil(lba))
                .map_err(|e| RunError::Isolation(format!("job {}: {e}", jobs[inst.job].name)))?;
        }
    }
    Ok(())
}

/// Runs `jobs` on `dev` to completion (every stream exhausted or every runtime over), creating
/// the queue pairs it needs that do not exist yet (so runs can follow each other on one
/// device). Calls `progress` every few milliseconds of simulated time.
pub fn run_jobs(
    dev: &dyn System,
    jobs: &[JobSpec],
    seed: u64,
    progress: &mut dyn FnMut(Progress),
) -> Result<HostResults, RunError> {
    run_jobs_with(dev, jobs, seed, &RunOptions::default(), progress)
}

/// [`run_jobs`] with options: the time-series interval and a per-request sink.
pub fn run_jobs_with(
    dev: &dyn System,
    jobs: &[JobSpec],
    seed: u64,
    opts: &RunOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<HostResults, RunError> {
    check(dev, jobs)?;
    let front = dev.front();
    let capacity = front.capacity_lbas() * front.lba_bytes() as u64;
    let instances = instantiate(jobs, capacity, front.lba_bytes(), seed)?;
    // Legacy: every worker through one port, one command each.
    let legacy = opts.interface.is_legacy();
    let queues = if legacy { 1 } else { (instances.len() as u32).min(dev.queues()).max(1) };
    let ramp = instances.iter().map(|i| i.stream.spec().ramp_time).max().unwrap_or_default();
    let kinds = queue_plan(dev, jobs, queues)?;
    let session = Rc::new(Session::open_with(dev, queues, &kinds, ramp, opts)?);
    let queue_flows: Vec<Option<u32>> = (0..queues as usize)
        .map(|q| instances.get(q).map(|inst| inst.job as u32)) // clone i uses queue i % queues + 1
        .collect();
    session.bind_flows(dev, &queue_flows, jobs.len() as u32)?;
    let zones = match jobs.iter().any(|j| j.zbd.is_some()) {
        true => Some(Rc::new(crate::zbd::ZoneBook::read(dev, jobs)?)),
        false => None,
    };
    let start = session.start;
    let total: Option<u64> = instances
        .iter()
        .map(|i| if i.stream.spec().time_based { None } else { i.stream.spec().number_ios })
        .sum();
    {
        let mut r = session.results.borrow_mut();
        r.clones = instances.len() as u32;
        r.flows = jobs.iter().map(|j| FlowMetrics::new(j.name.clone())).collect();
    }
    let host_cores = dev.host_cores();
    for (i, inst) in instances.into_iter().enumerate() {
        let qid = (i as u32 % queues) as u16 + 1;
        {
            let mut r = session.results.borrow_mut();
            let queues = &mut r.flows[inst.job].queues;
            if !queues.contains(&qid) {
                queues.push(qid);
            }
        }
        let spec = inst.stream.spec().clone();
        let clone = Rc::new(Clone_ {
            index: i as u32,
            flow: inst.job as u32,
            placement: spec.placement,
            zones: spec.zbd.as_ref().and(zones.clone()),
            qid,
            stream: RefCell::new(inst.stream),
            next_start: RefCell::new([start; 3]),
            deadline: spec.runtime.map(|r| start + spec.ramp_time + r),
            ramp_end: start + spec.ramp_time,
            session: session.clone(),
        });
        let depth = if legacy { 1 } else { spec.iodepth };
        for slot in 0..depth {
            let c = clone.clone();
            let core = Session::worker_core(&host_cores, i);
            session.spawn_host(core, format!("{} clone {} slot {slot}", spec.name, inst.clone), async move {
                c.run().await
            });
        }
    }
    session.run(dev, total, progress)?;
    Ok(session.finish(dev))
}

/// One running clone of a job.
struct Clone_ {
    index: u32,
    /// The job it is a clone of.
    flow: u32,
    placement: Option<firmware::hil::Placement>,
    /// The zones, for a `zonemode=zbd` job.
    zones: Option<Rc<crate::zbd::ZoneBook>>,
    qid: u16,
    stream: RefCell<JobStream>,
    /// Earliest start of the next I/O per direction (rate caps).
    next_start: RefCell<[SimTime; 3]>,
    deadline: Option<SimTime>,
    ramp_end: SimTime,
    session: Rc<Session>,
}

impl Clone_ {
    /// The FDP placement identifier of the next write (`fdp_pli`), if the job has them.
    fn pid(&self) -> Option<firmware::hil::Placement> {
        let mut s = self.stream.borrow_mut();
        s.next_pid().map(firmware::hil::Placement::Pid)
    }

    async fn run(self: Rc<Self>) {
        self.clone().issue_all().await;
        if self.stream.borrow().spec().end_fsync {
            // fio's end_fsync: the clone's data made durable before it ends (not an I/O).
            self.session.front.submit(self.qid, firmware::hil::NvmeCommand::flush()).await;
        }
    }

    async fn issue_all(self: Rc<Self>) {
        let cx = &self.session.cx;
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
            let mut io = Io {
                clone: self.index,
                flow: self.flow,
                qid: self.qid,
                op: req.op,
                offset: req.offset,
                len: req.len as u64,
                placement: self.placement.or_else(|| self.pid()),
            };
            let Some(zones) = &self.zones else {
                self.session.issue(&io, self.ramp_end).await;
                continue;
            };
            let opts = self.stream.borrow().spec().zbd.clone().expect("a zbd job");
            match io.op {
                IoOp::Write => {
                    let region = self.stream.borrow().region();
                    let front = &self.session.front;
                    let Some((z, at, len)) =
                        zones.take(front, self.qid, &opts, &region, io.offset, io.len).await
                    else {
                        return; // no zone starts in the job's region
                    };
                    (io.offset, io.len) = (at, len);
                    let ok = self.session.issue(&io, self.ramp_end).await;
                    zones.written(front, self.qid, z, ok.then_some(len)).await;
                }
                _ => {
                    io.offset = zones.read_at(&opts, io.offset, io.len);
                    self.session.issue(&io, self.ramp_end).await;
                }
            }
        }
    }
}
