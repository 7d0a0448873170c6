//! NICFS in the model: the real front ends and the real back-end stages, run as tasks on
//! simulated host and NIC cores, with every PM access they make charged by `devices.rs`.
//!
//! ```text
//!  host core f: front end f ──(log room? else wait)── Client::write/read ── charge host
//!  NIC cores:   pipeline f = fetch ─ring─ locate ─ring─ merge ─ring─ patch   (stage k of
//!               pipeline f on core (4f + k) mod cores; "no pipeline": one task does all four)
//!               patch holds its pipeline's lock (`nic.patch_lock = per_pipeline`, the paper's
//!               design) or the one engine lock (`engine`, this implementation's one journal)
//!               while it charges its DMA and the host copy engine's work
//! ```
//!
//! Thread placement: stage k of pipeline f runs on NIC core (4f + k) mod cores, so up to two
//! front ends every thread has a core of its own, and four front ends put two threads on each
//! of the eight cores. A core that hosts more than one thread charges `nic.switch_ns` each time
//! a thread takes it (threads yield the core when they wait: an optimistic reading of threads
//! that would otherwise spin away their time slice); a core with one thread charges nothing.
//!
//! Ordering rule: a step's effects (an append, a patched batch) happen when the step starts,
//! its time is charged after, so another task may see them up to one step early (a front end
//! may find log space freed one batch before the patch's modelled end). Throughput over many
//! steps is not affected.

use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use nicfs_backend::{BackendConfig, Batch, DirectLink, DmaModel, Located, Shared, Step, open_parts};
use nicfs_comm::CommRegion;
use nicfs_frontend::{Client, FrontendConfig, FsError};
use nicfs_layout::{BLOCK_SIZE, FormatConfig, Ino, ROOT_INO, mode};
use nicfs_pm::{FastPm, MappedFile, SharedPm};
use nicfs_store::mkfs;
use sim::sync::{Mutex as SimMutex, Notify, Ring, RingSpec};
use sim::{CoreId, CoreSpec, Cx, Frequency, Sim, SimDuration};

use crate::config::{PatchLock, TimedConfig};
use crate::devices::Devices;
use crate::meter::{Agent, Llc, MeterPm};
use crate::study::{Access, Phase, PhaseResult, process_offsets};

/// How the NICFS machine is built.
#[derive(Clone, Debug, PartialEq)]
pub struct NicfsSetup {
    /// Front ends (processes), each with its own log and file. 1..=8.
    pub fronts: usize,
    /// Log data per front end, bytes (small logs: sustained throughput, bounded by the back end).
    pub log_bytes: u64,
    /// Bytes of file space per front end.
    pub file_bytes: u64,
    /// Run the four stages as a pipeline (false: one task per front end runs them in turn).
    pub pipeline: bool,
    /// Index-block cache lines (0: none).
    pub index_cache_lines: usize,
    /// Records per batch.
    pub batch_max: usize,
}

impl Default for NicfsSetup {
    fn default() -> Self {
        let be = BackendConfig::default();
        NicfsSetup {
            fronts: 1,
            log_bytes: 4 << 20,
            file_bytes: 32 << 20,
            pipeline: be.pipeline,
            index_cache_lines: be.index_cache_lines,
            batch_max: be.batch_max,
        }
    }
}

/// A formatted NICFS with its front ends attached, ready to run phases in virtual time.
pub struct NicfsMachine {
    cfg: TimedConfig,
    setup: NicfsSetup,
    host: Arc<MeterPm>,
    nic: Arc<MeterPm>,
    copy: Arc<MeterPm>,
    sh: Arc<Shared>,
    clients: Arc<Vec<Client>>,
    inos: Vec<Ino>,
}

fn fs_err(e: FsError) -> String {
    e.to_string()
}

impl NicfsMachine {
    /// Formats an in-memory PM namespace, opens the back end and attaches the front ends,
    /// each with one empty file. Untimed.
    pub fn new(cfg: &TimedConfig, setup: &NicfsSetup) -> Result<NicfsMachine, String> {
        cfg.validate().map_err(|e| e.to_string())?;
        if !(1..=8).contains(&setup.fronts) {
            return Err("front ends must be 1..=8".into());
        }
        let headers = ((setup.log_bytes / 256).next_power_of_two() as u32).clamp(64, 1 << 20);
        let fronts = setup.fronts as u64;
        let fmt = FormatConfig {
            size_bytes: (64 << 20)
                + fronts * (setup.file_bytes + setup.file_bytes / 256)
                + fronts * (setup.log_bytes + 4096 + headers as u64 * 64),
            inodes: 1024,
            log_spaces: setup.fronts as u32,
            log_headers: headers,
            log_data_bytes: setup.log_bytes,
            journal_blocks: 512,
        };
        let raw: SharedPm =
            Arc::new(FastPm::new(MappedFile::anonymous(fmt.size_bytes).map_err(|e| e.to_string())?));
        mkfs(raw.as_ref(), &fmt, 1).map_err(fs_err)?;
        let llc = Arc::new(Mutex::new(Llc::new(cfg.pm.llc_lines as usize)));
        let host = Arc::new(MeterPm::new(raw.clone(), Agent::Host, llc.clone()));
        let nic = Arc::new(MeterPm::new(raw.clone(), Agent::Nic, llc.clone()));
        let copy = Arc::new(MeterPm::new(raw.clone(), Agent::Copy, llc));
        let be = BackendConfig {
            workers: cfg.nic.cores as usize,
            slowdown: 1.0,
            dma: DmaModel { latency_ns: 0, bandwidth_mbps: 0 },
            index_cache_lines: setup.index_cache_lines,
            pipeline: setup.pipeline,
            batch_max: setup.batch_max,
            // No grant may expire (and be renewed) during a run: that would depend on the
            // wall clock, and a renewal drops cached views, which changes what is read.
            lease_ms: 3_600_000,
            ..BackendConfig::default()
        };
        let comm = Arc::new(CommRegion::anonymous().map_err(|e| e.to_string())?);
        let (sh, _) = open_parts(raw, nic.clone(), copy.clone(), comm.clone(), be, true).map_err(fs_err)?;
        let mut clients = Vec::new();
        let mut inos = Vec::new();
        // Set-up (untimed) may apply logs inline (a create in the root revokes another front
        // end's lease on it); timed phases may not.
        let gate = Arc::new(AtomicBool::new(true));
        for f in 0..setup.fronts {
            let link = Box::new(DirectLink::gated(sh.clone(), f, gate.clone()));
            let fe = FrontendConfig { lease_margin_ms: 0, ..FrontendConfig::default() };
            let host_pm: SharedPm = host.clone();
            let c = Client::attach_with(host_pm, comm.clone(), f as u32, link, fe).map_err(fs_err)?;
            let st = c
                .create(ROOT_INO, format!("f{f}").as_bytes(), mode::S_IFREG | 0o644, 0, 0, 0, b"")
                .map_err(fs_err)?;
            inos.push(st.ino);
            clients.push(c);
        }
        let m = NicfsMachine {
            cfg: cfg.clone(),
            setup: setup.clone(),
            host,
            nic,
            copy,
            sh,
            clients: Arc::new(clients),
            inos,
        };
        // The set-up's records are applied untimed.
        m.settle()?;
        gate.store(false, Ordering::Release);
        Ok(m)
    }

    /// Applies every pending record, untimed.
    pub fn settle(&self) -> Result<(), String> {
        for f in 0..self.setup.fronts {
            self.sh.drain_inline(f, false).map_err(fs_err)?;
        }
        self.host.take();
        self.nic.take();
        self.copy.take();
        Ok(())
    }

    /// Runs `phase` on every front end at once, the back end working beside them, and returns
    /// what the front ends achieved (their last operation's end).
    pub fn run(&self, phase: &Phase, seed: u64) -> Result<PhaseResult, String> {
        self.run_with(phase, seed, true)
    }

    /// The drain measurement: the front ends log `phase` (writes) with the back end idle (their
    /// logs must hold it all), then the back end alone applies everything. Returns (front
    /// ends, back end).
    pub fn run_split(&self, phase: &Phase, seed: u64) -> Result<(PhaseResult, PhaseResult), String> {
        let fe = self.run_with(phase, seed, false)?;
        let be = self.drain_timed(seed)?;
        Ok((fe, be))
    }

    fn cores(&self, sim: &Sim) -> (Vec<CoreId>, Vec<CoreId>) {
        let host = (0..self.setup.fronts)
            .map(|f| {
                sim.add_core(CoreSpec::new(format!("host {f}"), Frequency::mhz(self.cfg.host.clock_mhz)))
            })
            .collect();
        let threads = self.nic_threads();
        let nic = (0..self.cfg.nic.cores as usize)
            .map(|k| {
                let mut spec = CoreSpec::new(format!("nic {k}"), Frequency::mhz(self.cfg.nic.clock_mhz));
                if threads[k] > 1 {
                    spec.switch_cycles = self.cfg.nic.switch_cycles();
                }
                sim.add_core(spec)
            })
            .collect();
        (host, nic)
    }

    /// The NIC core of stage `k` (0..4) of pipeline `f`; without a pipeline, of its one task.
    fn nic_core(&self, f: usize, k: usize) -> usize {
        let n = self.cfg.nic.cores as usize;
        if self.setup.pipeline { (4 * f + k) % n } else { f % n }
    }

    /// Back-end threads placed on each NIC core.
    pub fn nic_threads(&self) -> Vec<usize> {
        let mut t = vec![0; self.cfg.nic.cores as usize];
        let stages = if self.setup.pipeline { 4 } else { 1 };
        for f in 0..self.setup.fronts {
            for k in 0..stages {
                t[self.nic_core(f, k)] += 1;
            }
        }
        t
    }

    fn run_with(&self, phase: &Phase, seed: u64, with_backend: bool) -> Result<PhaseResult, String> {
        let sim = Sim::new(seed);
        let cx = sim.cx();
        let (host_cores, nic_cores) = self.cores(&sim);
        let dev = Rc::new(Devices::new(&self.cfg));
        let rooms: Vec<Rc<Notify>> =
            (0..self.setup.fronts).map(|f| Rc::new(Notify::new(&cx, format!("log room {f}")))).collect();
        let failure: Rc<std::cell::RefCell<Option<String>>> = Rc::default();
        if with_backend {
            self.spawn_pipelines(&cx, &nic_cores, &dev, &rooms, false, &failure, &Rc::default());
        }
        let ends: Rc<std::cell::RefCell<Vec<SimDuration>>> = Rc::default();
        for f in 0..self.setup.fronts {
            let (cx2, dev, room, ends, failure) =
                (cx.clone(), dev.clone(), rooms[f].clone(), ends.clone(), failure.clone());
            let (clients, host, cpu) = (self.clients.clone(), self.host.clone(), self.cfg.cpu.clone());
            let (ino, phase) = (self.inos[f], phase.clone());
            let offs = process_offsets(&phase, self.setup.file_bytes, seed, f);
            cx.spawn(host_cores[f], format!("front end {f}"), async move {
                let c = &clients[f];
                let mut buf = vec![(f as u8).wrapping_add(1); phase.size];
                for (i, off) in offs.into_iter().enumerate() {
                    let r = match phase.access {
                        Access::Write => {
                            while !c.log_room(phase.size as u64) {
                                room.notified().await;
                            }
                            buf[0] = i as u8;
                            c.write(ino, off, &buf)
                                .map(|_| cpu.fe_write + cpu.fe_write_kib * phase.size as u64 / 1024)
                        }
                        Access::Read => c.read(ino, off, &mut buf).map(|n| {
                            cpu.fe_read + cpu.fe_read_block * (n as u64).div_ceil(BLOCK_SIZE).max(1)
                        }),
                    };
                    match r {
                        Ok(cycles) => dev.host(&cx2, cycles, &host.take()).await,
                        Err(e) => {
                            failure.borrow_mut().get_or_insert(format!("front end {f}: {e}"));
                            return;
                        }
                    }
                }
                ends.borrow_mut().push(cx2.now().saturating_since(sim::SimTime::ZERO));
            });
        }
        let run = sim.run();
        if let Some(e) = failure.borrow_mut().take() {
            return Err(e);
        }
        run.map_err(|d| d.to_string())?;
        let elapsed = ends.borrow().iter().copied().max().unwrap_or(SimDuration::ZERO);
        let ops = phase.ops * self.setup.fronts as u64;
        Ok(PhaseResult::new(elapsed, ops, ops * phase.size as u64, &sim, &dev))
    }

    /// The back end alone applies every pending record; returns its result (records as ops,
    /// write payload bytes as bytes).
    fn drain_timed(&self, seed: u64) -> Result<PhaseResult, String> {
        let pending: u64 = (0..self.setup.fronts).map(|f| self.sh.tail(f) - self.sh.head(f)).sum();
        let sim = Sim::new(seed);
        let cx = sim.cx();
        let (_, nic_cores) = self.cores(&sim);
        let dev = Rc::new(Devices::new(&self.cfg));
        let failure: Rc<std::cell::RefCell<Option<String>>> = Rc::default();
        let bytes = Rc::new(std::cell::Cell::new(0u64));
        self.spawn_pipelines(&cx, &nic_cores, &dev, &[], true, &failure, &bytes);
        let run = sim.run();
        if let Some(e) = failure.borrow_mut().take() {
            return Err(e);
        }
        run.map_err(|d| d.to_string())?;
        let elapsed = sim.now().saturating_since(sim::SimTime::ZERO);
        Ok(PhaseResult::new(elapsed, pending, bytes.get(), &sim, &dev))
    }

    /// Spawns the back end: per front end a pipeline of four stage tasks (or one task). With
    /// `until_empty` the tasks are foreground and end once their log is applied; otherwise
    /// they are daemons that poll forever.
    #[allow(clippy::too_many_arguments)]
    fn spawn_pipelines(
        &self,
        cx: &Cx,
        nic_cores: &[CoreId],
        dev: &Rc<Devices>,
        rooms: &[Rc<Notify>],
        until_empty: bool,
        failure: &Rc<std::cell::RefCell<Option<String>>>,
        bytes: &Rc<std::cell::Cell<u64>>,
    ) {
        let engine = Rc::new(SimMutex::new(cx, "engine (journal)", ()));
        for f in 0..self.setup.fronts {
            let engine = match self.cfg.nic.patch_lock {
                PatchLock::Engine => engine.clone(),
                PatchLock::PerPipeline => Rc::new(SimMutex::new(cx, format!("journal {f}"), ())),
            };
            let ctx = StageCtx {
                cx: cx.clone(),
                sh: self.sh.clone(),
                nic: self.nic.clone(),
                copy: self.copy.clone(),
                dev: dev.clone(),
                cfg: self.cfg.clone(),
                engine,
                room: rooms.get(f).cloned(),
                failure: failure.clone(),
                bytes: bytes.clone(),
                slot: f,
            };
            let spawn =
                |core: CoreId,
                 name: String,
                 fut: std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>| {
                    if until_empty {
                        drop(cx.spawn(core, name, fut));
                    } else {
                        drop(cx.spawn_daemon(core, name, fut));
                    }
                };
            if !self.setup.pipeline {
                let core = nic_cores[self.nic_core(f, 0)];
                spawn(core, format!("serial {f}"), Box::pin(serial(ctx, until_empty)));
                continue;
            }
            let spec = RingSpec { capacity: self.cfg.nic.ring_capacity, ..RingSpec::default() };
            let r1 = Rc::new(Ring::new(cx, format!("fetched {f}"), spec.clone()));
            let r2 = Rc::new(Ring::new(cx, format!("located {f}"), spec.clone()));
            let r3 = Rc::new(Ring::new(cx, format!("merged {f}"), spec));
            let core = |k: usize| nic_cores[self.nic_core(f, k)];
            let c = Rc::new(ctx);
            spawn(core(0), format!("fetch {f}"), Box::pin(fetch_stage(c.clone(), r1.clone(), until_empty)));
            spawn(core(1), format!("locate {f}"), Box::pin(locate_stage(c.clone(), r1, r2.clone())));
            spawn(core(2), format!("merge {f}"), Box::pin(merge_stage(c.clone(), r2, r3.clone())));
            spawn(core(3), format!("patch {f}"), Box::pin(patch_stage(c, r3)));
        }
    }
}

/// What a stage task needs.
struct StageCtx {
    cx: Cx,
    sh: Arc<Shared>,
    nic: Arc<MeterPm>,
    copy: Arc<MeterPm>,
    dev: Rc<Devices>,
    cfg: TimedConfig,
    engine: Rc<SimMutex<()>>,
    room: Option<Rc<Notify>>,
    failure: Rc<std::cell::RefCell<Option<String>>>,
    bytes: Rc<std::cell::Cell<u64>>,
    slot: usize,
}

impl StageCtx {
    fn fail(&self, e: impl std::fmt::Display) {
        self.failure.borrow_mut().get_or_insert(format!("back end, log {}: {e}", self.slot));
    }

    /// Log Fetch: returns the next batch, or `None` when the log is (momentarily) empty.
    async fn fetch(&self, next: u64) -> Result<Option<Batch>, ()> {
        let r = self.sh.stage_fetch(self.slot, next, false);
        let records = r.as_ref().map_or(0, |b| b.as_ref().map_or(0, |b| b.entries.len() as u64));
        let cycles = self.cfg.nic_cycles(self.cfg.cpu.fetch_record * records);
        self.dev.nic(&self.cx, cycles, &self.nic.take()).await;
        r.map_err(|e| self.fail(e))
    }

    async fn locate(&self, b: &Batch) -> Located {
        let l = self.sh.stage_locate(b);
        let cycles = self.cfg.nic_cycles(self.cfg.cpu.locate_record * b.entries.len() as u64);
        self.dev.nic(&self.cx, cycles, &self.nic.take()).await;
        l
    }

    async fn merge(&self, b: &Batch, l: &Located) -> Vec<Step> {
        let s = self.sh.stage_merge(b, l);
        let cycles = self.cfg.nic_cycles(self.cfg.cpu.merge_record * b.entries.len() as u64);
        self.dev.nic(&self.cx, cycles, &self.nic.take()).await;
        s
    }

    /// Patch, under its lock (the pipeline's or the engine's): the NIC's DMA, then the host
    /// copy engine's work.
    async fn patch(&self, b: &Batch, steps: &[Step]) -> Result<(), ()> {
        let _engine = self.engine.lock().await;
        let r = self.sh.stage_patch(b, steps);
        let (nic, copy) = (self.nic.take(), self.copy.take());
        let cpu = &self.cfg.cpu;
        let cycles = self.cfg.nic_cycles(cpu.patch_batch + cpu.patch_record * b.entries.len() as u64);
        self.dev.nic(&self.cx, cycles, &nic).await;
        let stats = r.map_err(|e| self.fail(e))?;
        self.dev.copy(&self.cx, stats.copies, &copy).await;
        self.bytes.set(self.bytes.get() + b.entries.iter().map(|e| e.hdr.data_len as u64).sum::<u64>());
        if let Some(room) = &self.room {
            room.notify_one();
        }
        Ok(())
    }
}

type Item = Option<(Batch, Option<Located>, Option<Vec<Step>>)>;

/// The next batch of the log, polling while it is empty; `None` at the end (the log is empty
/// and `until_empty`, or an error was recorded).
async fn next_batch(c: &StageCtx, next: &mut u64, until_empty: bool) -> Option<Batch> {
    loop {
        match c.fetch(*next).await {
            Ok(Some(b)) => {
                *next = b.end;
                return Some(b);
            }
            Ok(None) if !until_empty => c.cx.sleep(SimDuration::from_nanos(c.cfg.nic.poll_ns)).await,
            Ok(None) | Err(()) => return None,
        }
    }
}

async fn fetch_stage(c: Rc<StageCtx>, out: Rc<Ring<Item>>, until_empty: bool) {
    let mut next = c.sh.head(c.slot);
    c.nic.take();
    while let Some(b) = next_batch(&c, &mut next, until_empty).await {
        out.push(Some((b, None, None))).await;
    }
    out.push(None).await;
}

async fn locate_stage(c: Rc<StageCtx>, inp: Rc<Ring<Item>>, out: Rc<Ring<Item>>) {
    while let Some(Some((b, _, _))) = inp.pop().await {
        let l = c.locate(&b).await;
        out.push(Some((b, Some(l), None))).await;
    }
    out.push(None).await;
}

async fn merge_stage(c: Rc<StageCtx>, inp: Rc<Ring<Item>>, out: Rc<Ring<Item>>) {
    while let Some(Some((b, Some(l), _))) = inp.pop().await {
        let s = c.merge(&b, &l).await;
        out.push(Some((b, None, Some(s)))).await;
    }
    out.push(None).await;
}

async fn patch_stage(c: Rc<StageCtx>, inp: Rc<Ring<Item>>) {
    while let Some(Some((b, _, Some(s)))) = inp.pop().await {
        if c.patch(&b, &s).await.is_err() {
            return;
        }
    }
}

/// The "without pipeline" ablation: one task runs the four stages of each batch in turn.
async fn serial(c: StageCtx, until_empty: bool) {
    let mut next = c.sh.head(c.slot);
    c.nic.take();
    while let Some(b) = next_batch(&c, &mut next, until_empty).await {
        let l = c.locate(&b).await;
        let s = c.merge(&b, &l).await;
        if c.patch(&b, &s).await.is_err() {
            return;
        }
    }
}
