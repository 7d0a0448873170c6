//! Replaying a block trace against a device.
//!
//! ```text
//!   TraceReader ──record──> AddressMap ──commands──> timed:       issue at start + (t - t0) / speed
//!   (streaming)            (volume base, align,                 rate:        issue record k at start + k / iops
//!                            fold, max transfer)                closed-loop: keep N outstanding
//!                                                  ──> Session::issue ──> NVMe queue pairs
//! ```
//!
//! * **Timed**: a dispatcher reads the trace in order and issues each record at its timestamp
//!   (relative to the first record's), scaled by `speed` (2 = twice as fast). A record whose
//!   time has passed — the trace is not sorted, or the device is slower than the trace — is
//!   issued at once, and the lag is measured. At most `max_outstanding` commands are in flight
//!   from the host; beyond that the dispatcher waits (and the lag grows).
//! * **Rate** (open loop): the same dispatcher, but record k is due at k / `iops` seconds after
//!   the start, whatever its timestamp: a trace preloaded into memory and fed at a fixed rate,
//!   as the PipeSSD paper replays its traces. Nothing waits for completions except the
//!   `max_outstanding` bound (counted in `host_stalls`, and the lag grows).
//! * **Closed loop**: `depth` workers each take the next record and issue it when their last
//!   one completed; timestamps are ignored.
//!
//! Memory does not grow with the trace: records are read as they are issued. Flush records and
//! zero-length requests are counted and skipped. A bad line stops the replay with its file and
//! line (or is counted and skipped under `skip_bad_lines`).

mod map;
mod scan;
mod stats;
mod volumes;

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::rc::Rc;

use firmware::system::System;
use sim::stats::Histogram;
use sim::sync::Notify;
use sim::{SimDuration, SimTime};

pub use map::{AddressMap, Align, Mapped};
pub use scan::{TraceScan, VolumeScan, scan};
pub use stats::{ReplayStats, VolumeStats};
pub use volumes::{
    FlowPlan, Layout, LayoutReport, Others, Plan, REGION_ALIGN, VolumeFlows, VolumeLayout, VolumeSettings,
};

use crate::run::{HostResults, Progress, RunError, RunOptions};
use crate::session::{Io, QueueKind, Session};
use crate::trace::{ReadOptions, TraceError, TraceOp, TraceReader, TraceRecord};
use crate::workload::IoOp;

/// How to pace a replay.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum ReplayMode {
    /// Issue at the trace's timestamps, `speed` times as fast (must be > 0).
    Timed {
        /// Time compression: 2.0 replays twice as fast, 0.5 at half speed.
        speed: f64,
    },
    /// Open loop at a fixed rate: record k is issued `k / iops` seconds after the start,
    /// ignoring timestamps (`iops` must be > 0).
    Rate {
        /// Records issued per second of simulated time.
        iops: f64,
    },
    /// Keep `depth` commands outstanding, ignoring timestamps.
    ClosedLoop {
        /// Commands in flight.
        depth: u32,
    },
}

/// A replay to run.
#[derive(Clone, Debug)]
pub struct ReplaySpec {
    /// The trace file.
    pub path: PathBuf,
    /// How to read it (format, bad lines).
    pub read: ReadOptions,
    /// Pacing.
    pub mode: ReplayMode,
    /// Alignment of unaligned requests.
    pub align: Align,
    /// Base offsets per volume (bytes).
    pub volume_offsets: std::collections::BTreeMap<u32, u64>,
    /// Base offset of other volumes: volume number times this (bytes; 0 = all at 0).
    pub volume_stride: u64,
    /// Queue pairs to spread commands over (round robin); with volume flows, the most queue
    /// pairs the flows get (one each, shared round robin beyond).
    pub queues: u32,
    /// Timed and rate modes: most commands in flight from the host.
    pub max_outstanding: u32,
    /// Stop after this many records.
    pub max_records: Option<u64>,
    /// Where the trace's writes land on a device whose FTL runs on the host.
    pub placement: Option<firmware::hil::Placement>,
    /// Each write carries its volume's number as its FDP placement identifier (the volumes of
    /// a multi-volume trace as streams: `--pid-per-volume`).
    pub pid_per_volume: bool,
    /// Where the volumes go: base offsets (folded by default) or regions by footprint.
    pub layout: Layout,
    /// The volumes as flows of their own (`None`: the whole trace is one flow).
    pub volume_flows: Option<VolumeFlows>,
    /// Each volume's requests and footprint, from a [`scan`] already made (`None`: the replay
    /// scans the trace itself when it needs them).
    pub scanned: Option<std::collections::BTreeMap<u32, VolumeScan>>,
    /// Each request on the queue the trace names ([`TraceRecord::queue`]: a recording's queue
    /// pair, blkparse's CPU), on queue pair `queue mod Q + 1` of the device's Q; requests
    /// without one go round robin. `None`: on for ssdlab recordings, off for other formats.
    pub trace_queues: Option<bool>,
    /// Replay only this flow (by index in the plan), the others' records read and dropped, on
    /// the same layout, queues and classes as the shared replay: `--alone`'s solo runs.
    pub only_flow: Option<u32>,
}

impl ReplaySpec {
    /// A replay of `path` with default settings: timed at speed 1, widened, all volumes at 0,
    /// 8 queues, at most 1024 commands in flight.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        ReplaySpec {
            path: path.into(),
            read: ReadOptions::default(),
            mode: ReplayMode::Timed { speed: 1.0 },
            align: Align::Widen,
            volume_offsets: Default::default(),
            volume_stride: 0,
            queues: 8,
            max_outstanding: 1024,
            max_records: None,
            placement: None,
            pid_per_volume: false,
            layout: Layout::Offsets,
            volume_flows: None,
            scanned: None,
            trace_queues: None,
            only_flow: None,
        }
    }

    /// Checks the settings.
    pub fn validate(&self) -> Result<(), String> {
        match self.mode {
            ReplayMode::Timed { speed } if !(speed.is_finite() && speed > 0.0) => {
                return Err(format!("speed must be a positive number (got {speed})"));
            }
            ReplayMode::Rate { iops } if !(iops.is_finite() && iops > 0.0) => {
                return Err(format!(
                    "the open-loop rate must be a positive number of requests per second (got {iops})"
                ));
            }
            ReplayMode::ClosedLoop { depth: 0 } => {
                return Err("the closed-loop depth must be at least 1".into());
            }
            _ => {}
        }
        if self.queues == 0 {
            return Err("queues must be at least 1".into());
        }
        if self.pid_per_volume && self.placement.is_some() {
            return Err("give --placement or --pid-per-volume, not both".into());
        }
        let pids = self.volume_flows.as_ref().is_some_and(|f| f.volumes.values().any(|v| v.pid.is_some()));
        if pids && self.placement.is_some() {
            return Err("give --placement or volumes' pid=, not both".into());
        }
        if self.layout != Layout::Offsets && (!self.volume_offsets.is_empty() || self.volume_stride != 0) {
            return Err(
                "--layout footprint places every volume: leave out --volume-offset and --volume-stride"
                    .into(),
            );
        }
        if self.max_outstanding == 0 {
            return Err("max_outstanding must be at least 1".into());
        }
        if self.trace_queues == Some(true) && self.volume_flows.is_some() {
            return Err(
                "--trace-queues puts requests on the trace's own queues: leave out the volume flows".into()
            );
        }
        Ok(())
    }
}

/// The replay's state shared by its tasks.
struct Replay {
    session: Rc<Session>,
    reader: RefCell<TraceReader>,
    map: AddressMap,
    spec: ReplaySpec,
    plan: Plan,
    stats: RefCell<ReplayStats>,
    /// Commands mapped but not yet taken by a worker (closed loop).
    pending: RefCell<VecDeque<Command>>,
    error: RefCell<Option<TraceError>>,
    lag: RefCell<Histogram>,
    outstanding: Cell<u32>,
    room: Notify,
    issued: Cell<u64>,
    /// The system's host cores (commands and workers are spread over them).
    host_cores: Vec<sim::CoreId>,
    /// Requests go on the trace's queues ([`ReplaySpec::trace_queues`]).
    trace_queues: bool,
}

/// Checks that `spec` can be replayed on `dev`, as [`replay`] does before it starts, and
/// returns its plan (layout, flows, queues): the settings are valid, the placements name places
/// the device has, the named volumes are in the trace, the regions fit. Reads the trace once
/// if `spec.scanned` does not already say what its volumes are.
pub fn check(dev: &dyn System, spec: &ReplaySpec) -> Result<Plan, RunError> {
    spec.validate().map_err(RunError::Replay)?;
    if let Some(p) = spec.placement {
        dev.check_placement(p).map_err(RunError::ReplayPlacement)?;
    }
    if spec.pid_per_volume {
        // Volume 0's identifier, at least, must exist (the device has FDP); a volume beyond
        // the handles is refused command by command (Invalid Placement Handle), counted.
        dev.check_placement(firmware::hil::Placement::Pid(0)).map_err(RunError::ReplayPlacement)?;
    }
    if let Some(f) = &spec.volume_flows {
        for (v, s) in &f.volumes {
            if let Some(pid) = s.pid {
                dev.check_placement(firmware::hil::Placement::Pid(pid))
                    .map_err(|e| RunError::Replay(format!("volume {v}: {e}")))?;
            }
        }
        let classes = f.volumes.values().any(|s| s.priority.is_some());
        if classes && !matches!(dev.front(), firmware::system::Front::Nvme(_)) {
            return Err(RunError::Replay(
                "volume priorities need an NVMe controller's arbitration; this device's front end has none"
                    .into(),
            ));
        }
        let weighted = matches!(dev.config().host.arbitration, firmware::hil::Arbitration::Weighted { .. });
        if let Some((v, _)) = f.volumes.iter().find(|(_, s)| s.priority.is_some() && !weighted) {
            return Err(crate::run::priority_needs_weighted(&format!("volume {v}: priority")));
        }
    }
    let scanned;
    let volumes = match &spec.scanned {
        Some(v) => v,
        None => {
            scanned = scan(spec)?.volumes;
            &scanned
        }
    };
    let ctl = dev.front();
    let lba = ctl.lba_bytes() as u64;
    let unit = (ctl.unit_bytes() as u64).max(lba);
    let plan = volumes::plan(&volumes::PlanInput {
        capacity: ctl.capacity_lbas() * lba / unit * unit,
        unit,
        device_queues: dev.queues(),
        queues: spec.queues,
        volumes,
        offsets: &spec.volume_offsets,
        stride: spec.volume_stride,
        layout: spec.layout,
        flows: spec.volume_flows.as_ref(),
        name: spec.path.file_name().map_or_else(|| "trace".into(), |n| n.to_string_lossy().into_owned()),
    })
    .map_err(RunError::Replay)?;
    let shared_queues = plan.flows.len() > 1 && plan.flows.iter().any(|f| f.queue.is_none());
    if shared_queues && crate::run::partitioned(dev) {
        return Err(RunError::partitioned(dev, |what| {
            format!(
                "the trace's flows share queues; a partitioned {what} knows a flow by its queues (give each volume flow its own queue)"
            )
        }));
    }
    crate::run::check_partition(dev, plan.flows.len() as u32)?;
    Ok(plan)
}

/// Replays `spec` on `dev` and returns what the host measured, with the replay's counts in
/// [`HostResults::replay`].
pub fn replay(
    dev: &dyn System,
    spec: &ReplaySpec,
    opts: &RunOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<HostResults, RunError> {
    let mut plan = check(dev, spec)?;
    if let Some(only) = spec.only_flow {
        for (flow, _) in plan.route.values_mut() {
            flow.take_if(|f| *f != only);
        }
    }
    let reader = TraceReader::open(&spec.path, spec.read)?;
    let ctl = dev.front();
    let host = &dev.config().host;
    let lba = ctl.lba_bytes() as u64;
    let unit = (ctl.unit_bytes() as u64).max(lba);
    let map = AddressMap {
        capacity: ctl.capacity_lbas() * lba / unit * unit,
        unit,
        lba,
        max_transfer: (host.max_transfer.bytes() / lba * lba).max(lba),
        offsets: spec.volume_offsets.clone(),
        stride: spec.volume_stride,
        regions: plan.regions.clone(),
        align: spec.align,
    };
    // A recording's requests on its own queue pairs, unless told otherwise; the device's
    // queue pairs then all exist, so that queue q of the trace is queue pair q.
    let trace_queues = spec.trace_queues.unwrap_or(reader.format() == crate::trace::TraceFormat::Recording)
        && spec.volume_flows.is_none();
    let queues = if trace_queues { dev.queues().max(1) } else { plan.queues };
    let kinds: Vec<QueueKind> = (1..=queues as u16)
        .map(|q| QueueKind {
            priority: plan.priorities.get(&q).copied().unwrap_or(firmware::hil::Priority::Medium),
            planes: None,
        })
        .collect();
    let session = Rc::new(Session::open_with(dev, queues, &kinds, SimDuration::ZERO, opts)?);
    let queue_flows: Vec<Option<u32>> = (1..=queues as u16)
        .map(|q| plan.flows.iter().position(|f| f.queue == Some(q)).map(|f| f as u32))
        .collect();
    session.bind_flows(dev, &queue_flows, plan.flows.len() as u32)?;
    // One flow for the whole trace (on every queue), or one per volume (or group of volumes).
    session.results.borrow_mut().flows = plan
        .flows
        .iter()
        .map(|f| crate::run::FlowMetrics {
            queues: f.queue.map_or_else(|| (1..=queues as u16).collect(), |q| vec![q]),
            ..crate::run::FlowMetrics::new(f.name.clone())
        })
        .collect();
    let cx = session.cx.clone();
    let mut stats = ReplayStats::new(&spec.path, &reader, spec.mode, spec.align);
    stats.layout = Some(LayoutReport { queues, ..plan.report.clone() });
    let r = Rc::new(Replay {
        session: session.clone(),
        reader: RefCell::new(reader),
        map,
        spec: spec.clone(),
        plan,
        stats: RefCell::new(stats),
        pending: RefCell::new(VecDeque::new()),
        error: RefCell::new(None),
        lag: RefCell::new(Histogram::new()),
        outstanding: Cell::new(0),
        room: Notify::new(&cx, "replay: room for a command"),
        issued: Cell::new(0),
        host_cores: dev.host_cores(),
        trace_queues,
    });
    match spec.mode {
        ReplayMode::Timed { speed } => {
            let r2 = r.clone();
            session.spawn_host(sim::CoreId::UNBOUND, "replay dispatcher", async move {
                r2.dispatch(Pace::Timestamps { speed }).await
            });
        }
        ReplayMode::Rate { iops } => {
            let r2 = r.clone();
            session.spawn_host(sim::CoreId::UNBOUND, "replay dispatcher", async move {
                r2.dispatch(Pace::Fixed { iops }).await
            });
        }
        ReplayMode::ClosedLoop { depth } => {
            for w in 0..depth {
                let r2 = r.clone();
                let core = Session::worker_core(&r.host_cores, w as usize);
                session.spawn_host(core, format!("replay worker {w}"), async move { r2.work(w).await });
            }
        }
    }
    session.run(dev, spec.max_records, progress)?;
    if let Some(e) = r.error.borrow_mut().take() {
        return Err(e.into());
    }
    let mut results = session.finish(dev);
    let mut stats = r.stats.borrow().clone();
    stats.finish(&r.reader.borrow(), &r.lag.borrow(), r.issued.get());
    results.replay = Some(stats);
    Ok(results)
}

impl Replay {
    /// The next record to replay, counting what it skips; `None` at the end, after the record
    /// limit, or on an error (kept for the caller).
    fn next_record(&self) -> Option<TraceRecord> {
        if self.error.borrow().is_some() {
            return None;
        }
        loop {
            if self.spec.max_records.is_some_and(|m| self.stats.borrow().records >= m) {
                return None;
            }
            let next = self.reader.borrow_mut().next()?;
            match next {
                Err(e) => {
                    *self.error.borrow_mut() = Some(e);
                    return None;
                }
                Ok(rec) => {
                    let mut st = self.stats.borrow_mut();
                    st.records += 1;
                    st.volume(rec.volume).count(rec.op, rec.len);
                    match rec.op {
                        TraceOp::Flush => st.skipped_flushes += 1,
                        _ if rec.len == 0 => st.skipped_zero_length += 1,
                        _ if self.route(rec.volume).0.is_none() => st.dropped += 1,
                        _ => return Some(rec),
                    }
                }
            }
        }
    }

    /// Maps a record to its commands and counts what mapping changed.
    fn commands(&self, rec: &TraceRecord) -> Vec<Command> {
        let op = match rec.op {
            TraceOp::Read => IoOp::Read,
            TraceOp::Write => IoOp::Write,
            TraceOp::Trim => IoOp::Trim,
            TraceOp::Flush => unreachable!("flushes are skipped"),
        };
        let m = self.map.map(rec.volume, rec.offset, rec.len);
        self.stats.borrow_mut().count_mapping(&m);
        m.pieces.into_iter().map(|(o, n)| (op, o, n, rec.volume, rec.queue)).collect()
    }

    /// A volume's flow (`None`: dropped) and placement identifier. A volume the plan has not
    /// seen (the trace changed since it was scanned) goes to the first flow.
    fn route(&self, volume: u32) -> (Option<u32>, Option<u16>) {
        self.plan.route.get(&volume).copied().unwrap_or((Some(0), None))
    }

    fn io(&self, (op, offset, len, volume, queue): Command) -> Io {
        let n = self.issued.get();
        self.issued.set(n + 1);
        let queues = self.session.results.borrow().queues as u64;
        let (flow, pid) = self.route(volume);
        let flow = flow.unwrap_or(0);
        let qid = match queue {
            Some(q) if self.trace_queues => (u64::from(q) % queues) as u16 + 1,
            _ => self.plan.flows[flow as usize].queue.unwrap_or((n % queues) as u16 + 1),
        };
        let placement = match (pid, self.spec.pid_per_volume) {
            _ if op != IoOp::Write => self.spec.placement,
            (Some(p), _) => Some(firmware::hil::Placement::Pid(p)),
            (None, true) => Some(firmware::hil::Placement::Pid(volume as u16)),
            (None, false) => self.spec.placement,
        };
        Io { clone: 0, flow, qid, op, offset, len, placement }
    }

    /// Timed and rate modes: issue each record when it is due (at its scaled timestamp, or
    /// the next tick of the fixed rate).
    async fn dispatch(self: Rc<Self>, pace: Pace) {
        let cx = self.session.cx.clone();
        let start = cx.now();
        let (mut first, mut last) = (None::<u64>, 0u64);
        let mut k = 0u64;
        while let Some(rec) = self.next_record() {
            let after_ns = match pace {
                Pace::Timestamps { speed } => {
                    let t = rec.time_ns.unwrap_or(last);
                    if t < last {
                        self.stats.borrow_mut().out_of_order += 1;
                    }
                    last = last.max(t);
                    let t0 = *first.get_or_insert(t);
                    (t.saturating_sub(t0) as f64 / speed).round() as u64
                }
                Pace::Fixed { iops } => (k as f64 * 1e9 / iops).round() as u64,
            };
            k += 1;
            let due = start + SimDuration::from_nanos(after_ns);
            if due > cx.now() {
                cx.sleep_until(due).await;
            }
            for cmd in self.commands(&rec) {
                while self.outstanding.get() >= self.spec.max_outstanding {
                    self.stats.borrow_mut().host_stalls += 1;
                    self.room.notified().await;
                }
                self.lag.borrow_mut().record(cx.now().saturating_since(due).as_nanos());
                self.outstanding.set(self.outstanding.get() + 1);
                let io = self.io(cmd);
                let me = self.clone();
                let core = Session::worker_core(&self.host_cores, self.issued.get() as usize);
                self.session.spawn_host(core, "replay command", async move {
                    me.session.issue(&io, SimTime::ZERO).await;
                    me.outstanding.set(me.outstanding.get() - 1);
                    me.room.notify_one();
                });
            }
        }
    }

    /// Closed loop: one of `depth` workers.
    async fn work(self: Rc<Self>, _worker: u32) {
        loop {
            let next = self.pending.borrow_mut().pop_front();
            let cmd = match next {
                Some(c) => c,
                None => {
                    let Some(rec) = self.next_record() else { return };
                    let mut cmds = self.commands(&rec).into_iter();
                    let first = cmds.next().expect("a record maps to at least one command");
                    self.pending.borrow_mut().extend(cmds);
                    first
                }
            };
            let io = self.io(cmd);
            self.session.issue(&io, SimTime::ZERO).await;
        }
    }
}

/// When the dispatcher issues record k.
#[derive(Copy, Clone, Debug)]
enum Pace {
    /// At its timestamp (relative to the first record's) over `speed`.
    Timestamps { speed: f64 },
    /// At k / `iops` seconds.
    Fixed { iops: f64 },
}

/// One command a record maps to: operation, byte offset, length, the record's volume and
/// its queue in the trace.
type Command = (IoOp, u64, u64, u32, Option<u32>);
