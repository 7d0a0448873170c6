//! The conformance run: rounds of random commands from concurrent clients against a device,
//! every read checked against the shadow store, invariants checked between rounds.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use firmware::config::DeviceConfig;
use firmware::device::Device;
use firmware::hil::{HostData, NvmeCommand, Status};
use firmware::platform::StoreChoice;
use firmware::system::{Front, System};
use rand::RngExt;
use sim::{CoreId, SimRng};

use crate::shadow::ShadowStore;

/// What the clients do.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Rounds; invariants are checked after each.
    pub rounds: u32,
    /// Concurrent clients (each on its own queue while queues last).
    pub clients: u32,
    /// Commands per client per round.
    pub ops_per_client: u32,
    /// Largest command, in logical blocks.
    pub max_blocks: u32,
    /// Relative weights of read, write, trim, write-zeroes and flush.
    pub mix: [u32; 5],
    /// Percentage of writes sent with FUA.
    pub fua_pct: u32,
    /// Only address the first `span` blocks (a hot region that forces overwrites and GC); 0 =
    /// the whole namespace.
    pub span: u64,
    /// Read back every block after the last round.
    pub verify_all: bool,
    /// The device may refuse writes (read-only at end of life: nothing written) and fail
    /// reads, and writes that read first, with a media error. Such commands are counted
    /// instead of failing the run; a write that failed with a media error leaves its blocks
    /// unknown until written again. A read must still never return wrong data.
    pub media_errors: bool,
    /// Virtual time the device sits idle, powered, after each round (retention; background
    /// work such as data refresh runs).
    pub idle_between_rounds: sim::SimDuration,
    /// FDP placement identifiers writes carry, one chosen at random per write (`None` in the
    /// list: a write without one); empty: no write carries one.
    pub pids: Vec<Option<u16>>,
}

impl Default for Plan {
    fn default() -> Self {
        Plan {
            rounds: 4,
            clients: 4,
            ops_per_client: 200,
            max_blocks: 48,
            mix: [40, 45, 6, 4, 5],
            fua_pct: 10,
            span: 0,
            verify_all: true,
            media_errors: false,
            idle_between_rounds: sim::SimDuration::ZERO,
            pids: Vec::new(),
        }
    }
}

/// A conformance run of one configuration with one seed.
pub struct Conformance {
    /// The device (it must use a payload store: the run builds it in memory).
    pub config: DeviceConfig,
    /// Seed of the device and of the clients.
    pub seed: u64,
    /// The workload.
    pub plan: Plan,
}

/// What a passing run did.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Commands completed.
    pub commands: u64,
    /// Blocks read back and compared.
    pub blocks_checked: u64,
    /// Write amplification at the end.
    pub waf: f64,
    /// GC victims collected.
    pub gc_invocations: u64,
    /// Blocks erased.
    pub erases: u64,
    /// Victims taken by static wear levelling.
    pub wl_migrations: u64,
    /// Largest erase-count spread at the end.
    pub erase_spread: u32,
    /// Host writes that waited for GC to free a block.
    pub foreground_waits: u64,
    /// Times a write waiting for room was woken.
    pub room_wakeups: u64,
    /// Commands that failed with a media error (`Plan::media_errors`).
    pub media_errors: u64,
    /// Writes, trims and write-zeroes refused because the device is read-only.
    pub refused: u64,
}

struct Shared {
    shadow: RefCell<ShadowStore>,
    busy: RefCell<Vec<bool>>,
    failure: RefCell<Option<String>>,
    commands: Cell<u64>,
    checked: Cell<u64>,
    media_errors: Cell<u64>,
    refused: Cell<u64>,
}

impl Conformance {
    /// Runs the plan on an SSD built from the configuration, in memory; the error names the
    /// seed, round and what went wrong.
    pub fn run(&self) -> Result<Outcome, String> {
        let dev = Device::build(&self.config, &StoreChoice::Memory, self.seed).map_err(|e| e.to_string())?;
        self.run_on(&dev)
    }

    /// Runs the plan on `dev`, any system with a payload store whose queues are not created
    /// yet (a bridge, a host-side FTL); `config` and `seed` only name the run.
    pub fn run_on(&self, dev: &dyn System) -> Result<Outcome, String> {
        self.run_observed(dev, &mut |_, _| {})
    }

    /// [`run_on`](Self::run_on), calling `after_round(round, dev)` after each round's checks
    /// (and its idle time).
    pub fn run_observed(
        &self,
        dev: &dyn System,
        after_round: &mut dyn FnMut(u32, &dyn System),
    ) -> Result<Outcome, String> {
        let fail = |round: u32, what: String| format!("seed {} round {round}: {what}", self.seed);
        let ctl = dev.front();
        let lbas = ctl.capacity_lbas();
        let queues = self.plan.clients.min(dev.queues()).max(1);
        let c2 = ctl.clone();
        let created = dev
            .sim()
            .block_on(async move {
                for q in 1..=queues as u16 {
                    c2.create_queue(q).await?;
                }
                Ok::<(), firmware::system::QueueError>(())
            })
            .map_err(|d| fail(0, d.to_string()))?;
        created.map_err(|e| fail(0, format!("creating I/O queues failed: {e}")))?;
        let shared = Rc::new(Shared {
            shadow: RefCell::new(ShadowStore::new(lbas, ctl.lba_bytes() as usize)),
            busy: RefCell::new(vec![false; lbas as usize]),
            failure: RefCell::new(None),
            commands: Cell::new(0),
            checked: Cell::new(0),
            media_errors: Cell::new(0),
            refused: Cell::new(0),
        });
        let span = if self.plan.span == 0 { lbas } else { self.plan.span.min(lbas) };
        let mut rng = <SimRng as rand::SeedableRng>::seed_from_u64(self.seed ^ 0x5eed);
        for round in 0..self.plan.rounds {
            let cx = dev.sim().cx();
            for c in 0..self.plan.clients {
                let client = Client {
                    ctl: ctl.clone(),
                    shared: shared.clone(),
                    qid: (c % queues) as u16 + 1,
                    rng: sim::rng::fork(&mut rng),
                    plan: self.plan.clone(),
                    span,
                };
                cx.spawn(CoreId::UNBOUND, format!("client {c}"), client.run());
            }
            dev.sim().run().map_err(|d| fail(round, d.to_string()))?;
            if let Some(f) = shared.failure.borrow().clone() {
                return Err(fail(round, f));
            }
            dev.check_invariants().map_err(|e| fail(round, format!("invariant violated: {e}")))?;
            if !self.plan.idle_between_rounds.is_zero() {
                let until = dev.sim().now() + self.plan.idle_between_rounds;
                dev.sim().run_through(until).map_err(|d| fail(round, d.to_string()))?;
            }
            after_round(round, dev);
        }
        if self.plan.verify_all {
            let (c, s) = (ctl.clone(), shared.clone());
            let tolerant = self.plan.media_errors;
            dev.sim()
                .block_on(verify_all(c, s, lbas, tolerant))
                .map_err(|d| fail(self.plan.rounds, d.to_string()))?;
            if let Some(f) = shared.failure.borrow().clone() {
                return Err(fail(self.plan.rounds, format!("final read-back: {f}")));
            }
        }
        let totals = dev.totals();
        let st = &totals.ftl;
        let counts = &totals.erase_counts;
        Ok(Outcome {
            commands: shared.commands.get(),
            blocks_checked: shared.checked.get(),
            waf: st.waf(),
            gc_invocations: st.gc_invocations,
            erases: st.blocks_erased,
            wl_migrations: st.wl_migrations,
            erase_spread: counts.iter().max().unwrap_or(&0) - counts.iter().min().unwrap_or(&0),
            foreground_waits: st.foreground_gc_waits,
            room_wakeups: st.room_wakeups,
            media_errors: shared.media_errors.get(),
            refused: shared.refused.get(),
        })
    }
}

/// Reads every block back and compares it with the shadow store (`tolerant`: a media error
/// is counted, not a failure).
async fn verify_all(ctl: Front, s: Rc<Shared>, lbas: u64, tolerant: bool) {
    let chunk = 256u64;
    let mut lba = 0;
    while lba < lbas {
        let n = chunk.min(lbas - lba) as u32;
        let c = ctl.submit(1, NvmeCommand::read(lba, n)).await;
        match (c.status, c.data) {
            (Status::Success, HostData::Bytes(b)) => {
                if let Some((bad, v)) = s.shadow.borrow().check(lba, &b) {
                    *s.failure.borrow_mut() = Some(format!("block {bad} does not hold write version {v}"));
                    return;
                }
                s.checked.set(s.checked.get() + n as u64);
            }
            (Status::UnrecoveredRead, _) if tolerant => s.media_errors.set(s.media_errors.get() + 1),
            (status, _) => {
                *s.failure.borrow_mut() = Some(format!("read of {n} blocks at {lba} failed: {status:?}"));
                return;
            }
        }
        lba += n as u64;
    }
}

struct Client {
    ctl: Front,
    shared: Rc<Shared>,
    qid: u16,
    rng: SimRng,
    plan: Plan,
    span: u64,
}

impl Client {
    async fn run(mut self) {
        for _ in 0..self.plan.ops_per_client {
            if self.shared.failure.borrow().is_some() {
                return;
            }
            let op = self.pick_op();
            if op == 4 {
                self.command(NvmeCommand::flush(), None).await;
                continue;
            }
            let Some((slba, nlb)) = self.lock_range() else { continue };
            match op {
                0 => {
                    let c = self.ctl.submit(self.qid, NvmeCommand::read(slba, nlb)).await;
                    match (c.status, c.data) {
                        (Status::Success, HostData::Bytes(b)) => {
                            if let Some((bad, v)) = self.shared.shadow.borrow().check(slba, &b) {
                                self.failed(format!("read of {nlb} blocks at {slba}: block {bad} does not hold write version {v}"));
                            }
                            self.shared.checked.set(self.shared.checked.get() + nlb as u64);
                        }
                        (Status::UnrecoveredRead, _) if self.plan.media_errors => {
                            self.shared.media_errors.set(self.shared.media_errors.get() + 1);
                        }
                        (status, _) => self.failed(format!("read of {nlb} blocks at {slba}: {status:?}")),
                    }
                }
                1 => {
                    let v = self.shared.shadow.borrow_mut().next_version();
                    let data = self.shared.shadow.borrow().data(slba, nlb, v);
                    let mut cmd = NvmeCommand::write(slba, nlb, HostData::Bytes(data));
                    cmd.fua = self.rng.random_range(0..100) < self.plan.fua_pct;
                    if !self.plan.pids.is_empty() {
                        let pid = self.plan.pids[self.rng.random_range(0..self.plan.pids.len())];
                        cmd.placement = pid.map(firmware::hil::Placement::Pid);
                    }
                    if self.command(cmd, Some((slba, nlb))).await {
                        self.shared.shadow.borrow_mut().record(slba, nlb, v);
                    }
                }
                2 => {
                    if self.command(NvmeCommand::deallocate(vec![(slba, nlb)]), Some((slba, nlb))).await {
                        // Deallocate drops whole mapping units only; partial ones keep their data.
                        let spu = (self.ctl.unit_bytes() / self.ctl.lba_bytes()) as u64;
                        let (first, end) = (slba.div_ceil(spu) * spu, (slba + nlb as u64) / spu * spu);
                        if end > first {
                            self.shared.shadow.borrow_mut().record(first, (end - first) as u32, 0);
                        }
                    }
                }
                _ => {
                    if self.command(NvmeCommand::write_zeroes(slba, nlb), Some((slba, nlb))).await {
                        self.shared.shadow.borrow_mut().record(slba, nlb, 0);
                    }
                }
            }
            self.unlock(slba, nlb);
        }
    }

    fn pick_op(&mut self) -> usize {
        let total: u32 = self.plan.mix.iter().sum();
        let mut r = self.rng.random_range(0..total.max(1));
        for (i, &w) in self.plan.mix.iter().enumerate() {
            if r < w {
                return i;
            }
            r -= w;
        }
        0
    }

    /// Submits a command that must succeed; records a failure otherwise (under
    /// `Plan::media_errors`, counts a refusal or a media error instead, and forgets the blocks
    /// a write failed part-way on).
    async fn command(&self, cmd: NvmeCommand, range: Option<(u64, u32)>) -> bool {
        let what = format!("{:?} of {:?}", cmd.opcode, range);
        let c = self.ctl.submit(self.qid, cmd).await;
        let sh = &self.shared;
        sh.commands.set(sh.commands.get() + 1);
        match c.status {
            Status::Success => return true,
            Status::WriteProtected if self.plan.media_errors => sh.refused.set(sh.refused.get() + 1),
            Status::UnrecoveredRead if self.plan.media_errors => {
                sh.media_errors.set(sh.media_errors.get() + 1);
                if let Some((slba, nlb)) = range {
                    sh.shadow.borrow_mut().forget(slba, nlb);
                }
            }
            s => self.failed(format!("{what}: {s:?}")),
        }
        false
    }

    fn failed(&self, what: String) {
        self.shared.failure.borrow_mut().get_or_insert(what);
    }

    /// A random range no other client has in flight, marked busy.
    fn lock_range(&mut self) -> Option<(u64, u32)> {
        for _ in 0..16 {
            let nlb = self.rng.random_range(1..=self.plan.max_blocks).min(self.span as u32);
            let slba = self.rng.random_range(0..=self.span - nlb as u64);
            let mut busy = self.shared.busy.borrow_mut();
            let r = slba as usize..slba as usize + nlb as usize;
            if busy[r.clone()].iter().all(|b| !b) {
                busy[r].fill(true);
                return Some((slba, nlb));
            }
        }
        None
    }

    fn unlock(&self, slba: u64, nlb: u32) {
        self.shared.busy.borrow_mut()[slba as usize..slba as usize + nlb as usize].fill(false);
    }
}
