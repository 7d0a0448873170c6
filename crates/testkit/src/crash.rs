//! Crash cycles against any system over NAND images: concurrent writers (FUA writes, flushes,
//! reads) run until a random virtual instant, then the system is dropped as a kill -9 would
//! leave it, or (every few cycles) shut down cleanly. Each reopening must give back, block by
//! block, a version the crash oracle ([`Durability`]) allows: nothing durable lost, nothing
//! foreign, and after a clean stop every acknowledged write.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use firmware::hil::{HostData, NvmeCommand, Status};
use firmware::system::{Front, System};
use rand::{RngExt, SeedableRng};
use sim::{SimDuration, SimRng};

use crate::durability::{Durability, read_stamp, stamp};

/// How a system came back from its images.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Reopened {
    /// New images.
    Created,
    /// From a clean shutdown's checkpoint.
    Clean,
    /// Recovered from what a crash left.
    Recovered,
}

/// What a crash run does.
#[derive(Clone, Debug)]
pub struct CrashPlan {
    /// Crash (or clean-stop) cycles.
    pub cycles: u32,
    /// Seed of the writers and of the crash instants.
    pub seed: u64,
    /// I/O queues used, and writers per queue (each keeps one command in flight).
    pub queues: u16,
    /// Writers per queue.
    pub per_queue: u16,
    /// Largest write, in logical blocks.
    pub max_blocks: u64,
    /// Every this many cycles the stop is clean (checkpointed) instead of a crash.
    pub clean_every: u32,
    /// Range of the simulated time writers run before the stop, us.
    pub run_us: (u64, u64),
}

impl Default for CrashPlan {
    fn default() -> Self {
        CrashPlan {
            cycles: 20,
            seed: 7,
            queues: 4,
            per_queue: 4,
            max_blocks: 64,
            clean_every: 5,
            run_us: (10_000, 150_000),
        }
    }
}

/// What a passing crash run saw.
#[derive(Clone, Debug, Default)]
pub struct CrashOutcome {
    /// Cycles that recovered after a crash.
    pub recovered: u32,
    /// Cycles that mounted clean.
    pub clean: u32,
    /// Blocks written at least once.
    pub written_blocks: u64,
    /// Blocks of the namespace.
    pub blocks: u64,
    /// Writes acknowledged.
    pub writes: u64,
    /// Blocks erased, summed over the cycles (each system's count before its stop).
    pub erases: u64,
}

/// The system under test, reopened from its images once per cycle.
pub trait Reopen {
    /// Opens the system from its images (creating them the first time), with `seed`.
    fn open(&mut self, seed: u64) -> Result<(Box<dyn System>, Reopened), String>;
    /// Shuts it down cleanly, so that the next open mounts clean.
    fn checkpoint(&mut self, sys: &dyn System) -> Result<(), firmware::system::SystemError>;
}

struct Shared {
    oracle: RefCell<Durability>,
    busy: RefCell<Vec<bool>>,
    stop: Cell<bool>,
    version: Cell<u64>,
    lba_bytes: usize,
}

/// Runs `plan` against the system `reopen` opens; the error names the cycle and the seed.
pub fn crash_cycles(plan: &CrashPlan, reopen: &mut dyn Reopen) -> Result<CrashOutcome, String> {
    let mut rng = SimRng::seed_from_u64(plan.seed);
    let mut shared: Option<Rc<Shared>> = None;
    let mut out = CrashOutcome::default();
    for cycle in 0..=plan.cycles {
        let fail = |what: String| format!("cycle {cycle} (seed {}): {what}", plan.seed);
        let (sys, how) = reopen.open(plan.seed ^ cycle as u64).map_err(fail)?;
        let front = sys.front();
        let s = shared
            .get_or_insert_with(|| {
                Rc::new(Shared {
                    oracle: RefCell::new(Durability::new(front.capacity_lbas())),
                    busy: RefCell::new(vec![false; front.capacity_lbas() as usize]),
                    stop: Cell::new(false),
                    version: Cell::new(1),
                    lba_bytes: front.lba_bytes() as usize,
                })
            })
            .clone();
        match (cycle, how) {
            (0, Reopened::Created) => {}
            (0, h) => return Err(fail(format!("new images opened as {h:?}"))),
            (_, Reopened::Created) => return Err(fail("the images were created again".into())),
            (_, Reopened::Clean) => out.clean += 1,
            (_, Reopened::Recovered) => out.recovered += 1,
        }
        let f = front.clone();
        let queues = plan.queues;
        sys.sim()
            .block_on(async move {
                for q in 1..=queues {
                    f.create_queue(q).await?;
                }
                Ok::<(), firmware::system::QueueError>(())
            })
            .map_err(|d| fail(d.to_string()))?
            .map_err(|e| fail(e.to_string()))?;
        verify(&*sys, &front, &s, how == Reopened::Clean).map_err(&fail)?;
        sys.check_invariants().map_err(|e| fail(format!("invariant violated after mounting: {e}")))?;
        if cycle == plan.cycles {
            break;
        }
        s.stop.set(false);
        s.busy.borrow_mut().fill(false); // what was in flight at the crash is gone
        let cx = sys.sim().cx();
        for c in 0..plan.queues * plan.per_queue {
            let w = Writer {
                front: front.clone(),
                s: s.clone(),
                qid: c % plan.queues + 1,
                rng: sim::rng::fork(&mut rng),
                max: plan.max_blocks,
            };
            cx.spawn(sim::CoreId::UNBOUND, format!("writer {c}"), w.run());
        }
        let limit =
            sys.sim().now() + SimDuration::from_micros(rng.random_range(plan.run_us.0..plan.run_us.1));
        sys.sim().run_through(limit).map_err(|d| fail(d.to_string()))?;
        if cycle % plan.clean_every == plan.clean_every - 1 {
            s.stop.set(true);
            sys.sim().run().map_err(|d| fail(d.to_string()))?;
            reopen.checkpoint(&*sys).map_err(|e| fail(format!("checkpoint: {e}")))?;
        }
        out.erases += sys.totals().ftl.blocks_erased;
        drop(sys); // a crash, unless the checkpoint above made it a clean stop
    }
    let s = shared.expect("at least one cycle");
    let o = s.oracle.borrow();
    out.written_blocks = o.written_blocks();
    out.blocks = o.len();
    out.writes = s.version.get() - 1;
    Ok(out)
}

/// Reads every block and checks it against the oracle (which then takes what it read as
/// durable).
fn verify(sys: &dyn System, front: &Front, s: &Rc<Shared>, clean: bool) -> Result<(), String> {
    let (c, s2) = (front.clone(), s.clone());
    let lbas = front.capacity_lbas();
    sys.sim()
        .block_on(async move {
            for first in (0..lbas).step_by(256) {
                let n = 256.min(lbas - first);
                let r = c.submit(1, NvmeCommand::read(first, n as u32)).await;
                let HostData::Bytes(data) = r.data else {
                    return Err(format!("read of {n} blocks at {first}: {:?}", r.status));
                };
                let mut o = s2.oracle.borrow_mut();
                for (i, block) in data.chunks(s2.lba_bytes).enumerate() {
                    let b = first + i as u64;
                    let got = read_stamp(block);
                    let checked =
                        if clean { o.check_after_clean_stop(b, got) } else { o.check_after_crash(b, got) };
                    checked.map_err(|e| format!("block {b} {e}"))?;
                }
            }
            Ok(())
        })
        .map_err(|d| d.to_string())?
}

struct Writer {
    front: Front,
    s: Rc<Shared>,
    qid: u16,
    rng: SimRng,
    max: u64,
}

impl Writer {
    async fn run(mut self) {
        let lbas = self.s.busy.borrow().len() as u64;
        while !self.s.stop.get() {
            let r: f64 = self.rng.random();
            if r < 0.05 {
                let mark = self.s.oracle.borrow().flush_sent();
                let c = self.front.submit(self.qid, NvmeCommand::flush()).await;
                assert_eq!(c.status, Status::Success, "flush failed");
                self.s.oracle.borrow_mut().flushed(mark);
                continue;
            }
            let n = self.rng.random_range(1..=self.max);
            let first = self.rng.random_range(0..=lbas - n);
            let range = first as usize..(first + n) as usize;
            if self.s.busy.borrow()[range.clone()].iter().any(|&b| b) {
                continue;
            }
            self.s.busy.borrow_mut()[range.clone()].fill(true);
            if r < 0.15 {
                let c = self.front.submit(self.qid, NvmeCommand::read(first, n as u32)).await;
                assert_eq!(c.status, Status::Success, "read failed");
            } else {
                let version = self.s.version.get();
                self.s.version.set(version + 1);
                let fua = self.rng.random_bool(0.1);
                let mut cmd = NvmeCommand::write(
                    first,
                    n as u32,
                    HostData::Bytes(stamp(first, n, version, self.s.lba_bytes)),
                );
                cmd.fua = fua;
                let issued = self.s.oracle.borrow_mut().issue(first, n, version);
                let c = self.front.submit(self.qid, cmd).await;
                assert_eq!(c.status, Status::Success, "write failed");
                self.s.oracle.borrow_mut().acked(issued, fua);
            }
            self.s.busy.borrow_mut()[range].fill(false);
        }
    }
}
