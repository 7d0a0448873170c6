//! The long conformance variant: at least ten full overwrites of a small device's logical
//! space, with GC and static wear levelling active. Ignored by default (tens of seconds in
//! release, minutes in debug); run it with
//!
//! ```text
//! cargo test -p ssdlab-firmware --release -- --ignored --nocapture
//! ```
//!
//! `SSDLAB_LONG_SEED=N` replaces the fixed seeds (to repeat a failure, or to try others).
//!
//! The run first fills the whole namespace sequentially (cold data), then runs rounds of random
//! reads, writes, trims, write-zeroes and flushes from concurrent clients, most of them aimed
//! at a hot eighth of the namespace, until the host has written [`OVERWRITES`] more times the
//! logical capacity. Every read is checked against the shadow store; between rounds, with
//! nothing in flight, the FTL's invariants are checked and so is every plane's erase-count
//! spread. The cold data only moves if static wear levelling moves it, so the spread stays
//! bounded only if static WL works. A failure message starts with the seed.
//!
//! It drives the device itself (rather than through `testkit::Conformance`) because it needs
//! what the suite's outcome does not expose: the bytes the host wrote, per-plane erase counts
//! between rounds, and a sequential fill before the random rounds.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Instant;

use firmware::config::DeviceConfig;
use firmware::device::Device;
use firmware::hil::{AdminCommand, AdminResult, Controller, HostData, NvmeCommand, Priority, Status};
use firmware::platform::StoreChoice;
use rand::RngExt;
use sim::{CoreId, SimRng};
use testkit::ShadowStore;

/// Host writes after the fill, in multiples of the logical capacity.
const OVERWRITES: u64 = 10;
/// Static wear levelling migrates a plane's coldest block once its spread exceeds this.
const THRESHOLD: u32 = 3;
/// How far past the threshold a plane's spread may get. Static WL looks at a plane only after
/// GC there has collected a victim (that erase can push the spread to threshold + 1 before the
/// look), and the coldest block may be open or free at that moment (the look then migrates
/// nothing, and another victim is erased before the next look): two erases of slack.
const SLACK: u32 = 2;
/// Concurrent clients, each on its own queue (the shared small device has 4).
const CLIENTS: u32 = 4;
/// Commands per client per round.
const OPS_PER_CLIENT: u32 = 1000;
/// Largest command, in logical blocks (512 B).
const MAX_BLOCKS: u32 = 64;
/// Relative weights of read, write, trim, write-zeroes and flush.
const MIX: [u32; 5] = [25, 60, 6, 4, 5];
/// Percentage of addressed commands aimed at the hot region (the first eighth of the LBAs).
const HOT_PCT: u32 = 85;
/// Rounds at most (a guard: the write target is reached long before).
const MAX_ROUNDS: u32 = 400;

/// The shared small device with a 256 KiB data cache, static wear levelling at [`THRESHOLD`]
/// and the FTL options `ftl`.
fn device(ftl: &str) -> DeviceConfig {
    crate::small_device(
        "conformance-long",
        &format!(
            "cache = {{ capacity = '256KiB' }}\nwl = {{ dynamic = true, static_threshold = {THRESHOLD} }}\n{ftl}"
        ),
    )
}

#[test]
#[ignore = "long: run with `cargo test -p ssdlab-firmware --release -- --ignored`"]
fn ten_overwrites_dftl_greedy_static_wl() {
    long_run("mapping = { kind = 'dftl', cmt = '16KiB', segment_entries = 16 }", 0x10_0001);
}

#[test]
#[ignore = "long: run with `cargo test -p ssdlab-firmware --release -- --ignored`"]
fn ten_overwrites_full_map_least_busy_cost_benefit_static_wl() {
    long_run(
        "mapping = { kind = 'full' }\nallocation = { kind = 'least-busy' }\ngc = { victim = 'cost-benefit' }",
        0x10_0002,
    );
}

/// What the clients share.
struct Shared {
    ctl: Rc<Controller>,
    shadow: RefCell<ShadowStore>,
    busy: RefCell<Vec<bool>>,
    failure: RefCell<Option<String>>,
    commands: Cell<u64>,
    lbas_written: Cell<u64>,
    lbas_checked: Cell<u64>,
}

impl Shared {
    fn failed(&self, what: String) {
        self.failure.borrow_mut().get_or_insert(what);
    }
}

fn long_run(ftl: &str, seed: u64) {
    let seed = std::env::var("SSDLAB_LONG_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(seed);
    let wall = Instant::now();
    let fail = |round: u32, what: String| -> ! { panic!("seed {seed} round {round} [{ftl}]: {what}") };
    let cfg = device(ftl);
    let dev = Device::build(&cfg, &StoreChoice::Memory, seed).unwrap_or_else(|e| fail(0, e.to_string()));
    let ctl = dev.controller.clone();
    let lbas = ctl.capacity_lbas();
    let c2 = ctl.clone();
    let created = dev.platform.sim.block_on(async move {
        let mut ok = true;
        for q in 1..=CLIENTS as u16 {
            ok &= c2
                .admin(AdminCommand::CreateIoQueue { qid: q, priority: Priority::Medium, nvm_set: 0 })
                .await
                == AdminResult::Done;
        }
        ok
    });
    if created != Ok(true) {
        fail(0, format!("creating I/O queues: {created:?}"));
    }
    let shared = Rc::new(Shared {
        shadow: RefCell::new(ShadowStore::new(lbas, ctl.lba_bytes() as usize)),
        busy: RefCell::new(vec![false; lbas as usize]),
        failure: RefCell::new(None),
        commands: Cell::new(0),
        lbas_written: Cell::new(0),
        lbas_checked: Cell::new(0),
        ctl,
    });
    let cx = dev.platform.sim.cx();
    let check = |round: u32| -> u32 {
        if let Some(f) = shared.failure.borrow().clone() {
            fail(round, f);
        }
        dev.ftl.check_invariants().unwrap_or_else(|e| fail(round, format!("invariant violated: {e}")));
        let spread = plane_spreads(&dev).into_iter().max().unwrap_or(0);
        if spread > THRESHOLD + SLACK {
            fail(round, format!("a plane's erase-count spread is {spread} > {THRESHOLD} + {SLACK}"));
        }
        spread
    };

    // Round 0: fill the namespace sequentially, one quarter per client.
    for c in 0..CLIENTS {
        let (s, range) =
            (shared.clone(), lbas * c as u64 / CLIENTS as u64..lbas * (c + 1) as u64 / CLIENTS as u64);
        cx.spawn(CoreId::UNBOUND, format!("fill {c}"), async move {
            let mut lba = range.start;
            while lba < range.end && s.failure.borrow().is_none() {
                let nlb = (MAX_BLOCKS as u64).min(range.end - lba) as u32;
                write(&s, c as u16 + 1, lba, nlb, false).await;
                lba += nlb as u64;
            }
        });
    }
    dev.platform.sim.run().unwrap_or_else(|d| fail(0, d.to_string()));
    let mut max_spread = check(0);

    // Random rounds until the host has written OVERWRITES more times the namespace.
    let target = (OVERWRITES + 1) * lbas;
    let mut rng = <SimRng as rand::SeedableRng>::seed_from_u64(seed ^ 0x5eed);
    let mut round = 0;
    while shared.lbas_written.get() < target {
        round += 1;
        if round > MAX_ROUNDS {
            fail(
                round,
                format!("wrote only {} of {target} blocks in {MAX_ROUNDS} rounds", shared.lbas_written.get()),
            );
        }
        for c in 0..CLIENTS {
            let client = Client { s: shared.clone(), qid: c as u16 + 1, rng: sim::rng::fork(&mut rng), lbas };
            cx.spawn(CoreId::UNBOUND, format!("client {c}"), client.run());
        }
        dev.platform.sim.run().unwrap_or_else(|d| fail(round, d.to_string()));
        max_spread = max_spread.max(check(round));
    }

    // Read every block back.
    let s = shared.clone();
    dev.platform.sim.block_on(verify_all(s, lbas)).unwrap_or_else(|d| fail(round, d.to_string()));
    if let Some(f) = shared.failure.borrow().clone() {
        fail(round, format!("final read-back: {f}"));
    }

    let st = dev.ftl.stats();
    let counts: Vec<u32> =
        dev.platform.fil.array().borrow().blocks().iter().filter(|b| !b.bad).map(|b| b.erase_count).collect();
    let (min, max) = (*counts.iter().min().unwrap(), *counts.iter().max().unwrap());
    let mean = counts.iter().map(|&c| c as f64).sum::<f64>() / counts.len() as f64;
    println!(
        "[{ftl}] seed {seed}: {rounds} rounds, {cmds} commands, host wrote {ow:.2} x the {mib} MiB namespace \
         ({units} units), {checked} blocks read back and checked; WAF {waf:.3}; GC victims {gc}, static-WL \
         migrations {wl}, erases {erases}; erase counts min {min} / mean {mean:.1} / max {max}; largest plane \
         spread seen {max_spread} (limit {THRESHOLD} + {SLACK}); simulated {sim_ms:.0} ms; wall {wall:.2?}",
        rounds = round,
        cmds = shared.commands.get(),
        ow = shared.lbas_written.get() as f64 / lbas as f64,
        mib = (lbas * shared.ctl.lba_bytes() as u64) >> 20,
        units = st.host_units_written,
        checked = shared.lbas_checked.get(),
        waf = st.waf(),
        gc = st.gc_invocations,
        wl = st.wl_migrations,
        erases = st.blocks_erased,
        sim_ms = dev.platform.sim.now().as_nanos() as f64 / 1e6,
        wall = wall.elapsed(),
    );
    let ctx = format!("seed {seed} [{ftl}]: {st:?}");
    assert!(shared.lbas_written.get() >= target, "{ctx}");
    assert!(st.gc_invocations > 0, "GC never ran: {ctx}");
    assert!(st.wl_migrations > 0, "static wear levelling never migrated a block: {ctx}");
    assert!(max_spread <= THRESHOLD + SLACK, "{ctx}");
}

/// Erase-count spread (max - min over good blocks) of every plane.
fn plane_spreads(dev: &Device) -> Vec<u32> {
    let per_plane = dev.platform.config.geometry.blocks as usize;
    let array = dev.platform.fil.array().borrow();
    array
        .blocks()
        .chunks(per_plane)
        .map(|plane| {
            let counts = || plane.iter().filter(|b| !b.bad).map(|b| b.erase_count);
            counts().max().unwrap_or(0) - counts().min().unwrap_or(0)
        })
        .collect()
}

/// Writes `nlb` blocks at `slba` (already marked busy) and records them in the shadow store.
async fn write(s: &Shared, qid: u16, slba: u64, nlb: u32, fua: bool) {
    let v = s.shadow.borrow_mut().next_version();
    let data = s.shadow.borrow().data(slba, nlb, v);
    let mut cmd = NvmeCommand::write(slba, nlb, HostData::Bytes(data));
    cmd.fua = fua;
    if command(s, qid, cmd).await {
        s.shadow.borrow_mut().record(slba, nlb, v);
        s.lbas_written.set(s.lbas_written.get() + nlb as u64);
    }
}

/// Submits a command that must succeed; records a failure otherwise.
async fn command(s: &Shared, qid: u16, cmd: NvmeCommand) -> bool {
    let what = format!("{:?} of {} blocks at {}", cmd.opcode, cmd.nlb, cmd.slba);
    let c = s.ctl.submit(qid, cmd).await;
    s.commands.set(s.commands.get() + 1);
    if c.status != Status::Success {
        s.failed(format!("{what}: {:?}", c.status));
        return false;
    }
    true
}

/// Reads `nlb` blocks at `slba` and compares them with the shadow store.
async fn read(s: &Shared, qid: u16, slba: u64, nlb: u32) {
    let c = s.ctl.submit(qid, NvmeCommand::read(slba, nlb)).await;
    s.commands.set(s.commands.get() + 1);
    match (c.status, c.data) {
        (Status::Success, HostData::Bytes(b)) => {
            if let Some((bad, v)) = s.shadow.borrow().check(slba, &b) {
                s.failed(format!(
                    "read of {nlb} blocks at {slba}: block {bad} does not hold write version {v}"
                ));
            }
            s.lbas_checked.set(s.lbas_checked.get() + nlb as u64);
        }
        (status, _) => s.failed(format!("read of {nlb} blocks at {slba}: {status:?}")),
    }
}

/// Reads every block back, 256 at a time.
async fn verify_all(s: Rc<Shared>, lbas: u64) {
    let mut lba = 0;
    while lba < lbas && s.failure.borrow().is_none() {
        let n = 256.min(lbas - lba) as u32;
        read(&s, 1, lba, n).await;
        lba += n as u64;
    }
}

/// One client of a random round.
struct Client {
    s: Rc<Shared>,
    qid: u16,
    rng: SimRng,
    lbas: u64,
}

impl Client {
    async fn run(mut self) {
        let total: u32 = MIX.iter().sum();
        for _ in 0..OPS_PER_CLIENT {
            if self.s.failure.borrow().is_some() {
                return;
            }
            let op = self.pick_op(total);
            if op == 4 {
                command(&self.s, self.qid, NvmeCommand::flush()).await;
                continue;
            }
            let Some((slba, nlb)) = self.lock_range() else { continue };
            let s = &self.s;
            match op {
                0 => read(s, self.qid, slba, nlb).await,
                1 => write(s, self.qid, slba, nlb, self.rng.random_range(0..100) < 5).await,
                2 => {
                    if command(s, self.qid, NvmeCommand::deallocate(vec![(slba, nlb)])).await {
                        // Deallocate drops whole mapping units only; partial ones keep their data.
                        let spu = (s.ctl.unit_bytes() / s.ctl.lba_bytes()) as u64;
                        let (first, end) = (slba.div_ceil(spu) * spu, (slba + nlb as u64) / spu * spu);
                        if end > first {
                            s.shadow.borrow_mut().record(first, (end - first) as u32, 0);
                        }
                    }
                }
                _ => {
                    if command(s, self.qid, NvmeCommand::write_zeroes(slba, nlb)).await {
                        s.shadow.borrow_mut().record(slba, nlb, 0);
                    }
                }
            }
            self.s.busy.borrow_mut()[slba as usize..(slba + nlb as u64) as usize].fill(false);
        }
    }

    /// An index into [`MIX`], drawn by weight.
    fn pick_op(&mut self, total: u32) -> usize {
        let mut r = self.rng.random_range(0..total);
        for (i, &w) in MIX.iter().enumerate() {
            if r < w {
                return i;
            }
            r -= w;
        }
        0
    }

    /// A random range no other client has in flight, marked busy: in the hot region (the first
    /// eighth of the namespace) [`HOT_PCT`] percent of the time, anywhere otherwise.
    fn lock_range(&mut self) -> Option<(u64, u32)> {
        let span = if self.rng.random_range(0..100) < HOT_PCT { self.lbas / 8 } else { self.lbas };
        for _ in 0..16 {
            let nlb = self.rng.random_range(1..=MAX_BLOCKS).min(span as u32);
            let slba = self.rng.random_range(0..=span - nlb as u64);
            let mut busy = self.s.busy.borrow_mut();
            let r = slba as usize..(slba + nlb as u64) as usize;
            if busy[r.clone()].iter().all(|b| !b) {
                busy[r].fill(true);
                return Some((slba, nlb));
            }
        }
        None
    }
}
