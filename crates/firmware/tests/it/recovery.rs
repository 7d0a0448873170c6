//! Crash recovery, deterministic: a device over a NAND image runs concurrent writers (FUA
//! writes, flushes, reads) with GC active, and is dropped at a random virtual instant, as a
//! kill -9 would leave it (every page program made so far is in the image; the write cache and
//! everything in flight are gone). Reopening recovers from the OOB, and every block must read
//! a version the crash oracle allows: nothing durable lost, nothing foreign. Every few cycles a
//! clean shutdown checkpoints instead, and the reopened device must mount clean with every
//! acknowledged write.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use firmware::device::{Device, OpenedAs};
use firmware::hil::{AdminCommand, AdminResult, Controller, HostData, NvmeCommand, Priority, Status};
use rand::{RngExt, SeedableRng};
use sim::{CoreId, SimDuration, SimRng};
use testkit::durability::{Durability, read_stamp, stamp};

/// The shared small device with a 256 KiB write cache and a small CMT: GC, translation-page
/// traffic and cache write-backs all happen within a few cycles.
const FTL: &str =
    "cache = { capacity = '256KiB' }\nmapping = { kind = 'dftl', cmt = '16KiB', segment_entries = 16 }";

const QUEUES: u16 = 4;
/// Writers per queue (each keeps one command in flight).
const PER_QUEUE: u16 = 4;
/// Largest write, in logical blocks.
const MAX_BLOCKS: u64 = 64;

struct Shared {
    oracle: RefCell<Durability>,
    busy: RefCell<Vec<bool>>,
    stop: Cell<bool>,
    version: Cell<u64>,
    lba_bytes: usize,
}

#[test]
fn durable_writes_survive_crashes_at_random_instants_with_gc_active() {
    crash_cycles(crate::small_device("recovery", FTL), 40, 512);
}

/// Every architecture recovers the same way (fewer cycles each: the layers below are shared).
#[test]
fn every_architecture_survives_crashes() {
    for arch in ["tradition", "pipessd", "deepflash"] {
        crash_cycles(crate::arch_device("recovery", arch, FTL), 25, 200);
    }
}

/// `cycles` crash (or clean-stop) and remount cycles of the device `cfg` (seed and cycles from
/// `SSDLAB_RECOVERY_SEED` and `SSDLAB_RECOVERY_CYCLES` when set); at least `min_erases`
/// blocks must have been erased on the way.
fn crash_cycles(cfg: firmware::config::DeviceConfig, cycles: u32, min_erases: u64) {
    let seed: u64 = std::env::var("SSDLAB_RECOVERY_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(7);
    let cycles: u32 =
        std::env::var("SSDLAB_RECOVERY_CYCLES").ok().and_then(|v| v.parse().ok()).unwrap_or(cycles);
    let arch = cfg.architecture.name(cfg.controller.cores.len());
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("nand.img");
    let mut rng = SimRng::seed_from_u64(seed);
    let mut shared: Option<Rc<Shared>> = None;
    let (mut recovered, mut clean, mut erases) = (0, 0, 0);
    for cycle in 0..=cycles {
        let fail =
            |what: String| -> ! { panic!("{arch} cycle {cycle} (SSDLAB_RECOVERY_SEED={seed}): {what}") };
        let (dev, opened) =
            Device::open_image(&cfg, &image, seed ^ cycle as u64).unwrap_or_else(|e| fail(e.to_string()));
        let ctl = dev.controller.clone();
        let s = shared
            .get_or_insert_with(|| {
                Rc::new(Shared {
                    oracle: RefCell::new(Durability::new(ctl.capacity_lbas())),
                    busy: RefCell::new(vec![false; ctl.capacity_lbas() as usize]),
                    stop: Cell::new(false),
                    version: Cell::new(1),
                    lba_bytes: ctl.lba_bytes() as usize,
                })
            })
            .clone();
        let was_clean = matches!(opened.how, OpenedAs::Clean);
        match (cycle, &opened.how) {
            (0, OpenedAs::Created) => {}
            (0, how) => fail(format!("a new image opened as {how:?}")),
            (_, OpenedAs::Created) => fail("the image was created again".into()),
            (_, OpenedAs::Clean) => clean += 1,
            (_, OpenedAs::Recovered { .. }) => recovered += 1,
        }
        create_queues(&dev, &ctl);
        verify(&dev, &ctl, &s, was_clean).unwrap_or_else(|e| fail(e));
        dev.ftl
            .check_invariants()
            .unwrap_or_else(|e| fail(format!("invariant violated after mounting: {e}")));
        if cycle == cycles {
            break;
        }
        s.stop.set(false);
        s.busy.borrow_mut().fill(false); // what was in flight at the crash is gone
        let cx = dev.platform.sim.cx();
        for c in 0..QUEUES * PER_QUEUE {
            let qid = c % QUEUES + 1;
            let client = Client { ctl: ctl.clone(), s: s.clone(), qid, rng: sim::rng::fork(&mut rng) };
            cx.spawn(CoreId::UNBOUND, format!("client {c}"), client.run());
        }
        let limit = dev.platform.sim.now() + SimDuration::from_micros(rng.random_range(10_000..150_000));
        dev.platform.sim.run_through(limit).unwrap_or_else(|d| fail(d.to_string()));
        if cycle % 5 == 4 {
            // A clean shutdown: let the clients finish, then checkpoint.
            s.stop.set(true);
            dev.platform.sim.run().unwrap_or_else(|d| fail(d.to_string()));
            dev.checkpoint().unwrap_or_else(|e| fail(format!("checkpoint: {e}")));
        }
        erases += dev.ftl.stats().blocks_erased;
        drop(dev); // a crash, unless the checkpoint above made it a clean stop
    }
    let s = shared.expect("at least one cycle");
    let o = s.oracle.borrow();
    let written = o.written_blocks();
    eprintln!(
        "recovery ({arch}): {cycles} cycles ({recovered} recovered, {clean} clean), {written} of {} blocks written, {} durable, {} writes, {erases} blocks erased",
        o.len(),
        o.durable_blocks(),
        s.version.get() - 1
    );
    assert!(
        recovered >= cycles * 3 / 4 && clean >= cycles / 5,
        "{recovered} recoveries, {clean} clean mounts"
    );
    // Enough data went through the device that GC erased blocks many times over.
    assert!(written > o.len() * 4 / 5 && erases > min_erases, "{arch}: too little written to test anything");
}

fn create_queues(dev: &Device, ctl: &Rc<Controller>) {
    let c = ctl.clone();
    let ok = dev
        .platform
        .sim
        .block_on(async move {
            let mut ok = true;
            for qid in 1..=QUEUES {
                ok &= c.admin(AdminCommand::CreateIoQueue { qid, priority: Priority::Medium }).await
                    == AdminResult::Done;
            }
            ok
        })
        .unwrap();
    assert!(ok, "creating the I/O queues failed");
}

/// Reads every block and checks it against the oracle (which then takes what it read as
/// durable).
fn verify(dev: &Device, ctl: &Rc<Controller>, s: &Rc<Shared>, clean: bool) -> Result<(), String> {
    let (c, s2) = (ctl.clone(), s.clone());
    let lbas = ctl.capacity_lbas();
    dev.platform
        .sim
        .block_on(async move {
            let chunk = 256u64;
            for first in (0..lbas).step_by(chunk as usize) {
                let n = chunk.min(lbas - first);
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

struct Client {
    ctl: Rc<Controller>,
    s: Rc<Shared>,
    qid: u16,
    rng: SimRng,
}

impl Client {
    async fn run(mut self) {
        let lbas = self.s.busy.borrow().len() as u64;
        while !self.s.stop.get() {
            let r: f64 = self.rng.random();
            if r < 0.05 {
                let mark = self.s.oracle.borrow().flush_sent();
                let c = self.ctl.submit(self.qid, NvmeCommand::flush()).await;
                assert_eq!(c.status, Status::Success, "flush failed");
                self.s.oracle.borrow_mut().flushed(mark);
                continue;
            }
            let n = self.rng.random_range(1..=MAX_BLOCKS);
            let first = self.rng.random_range(0..=lbas - n);
            let range = first as usize..(first + n) as usize;
            if self.s.busy.borrow()[range.clone()].iter().any(|&b| b) {
                continue;
            }
            self.s.busy.borrow_mut()[range.clone()].fill(true);
            if r < 0.15 {
                let c = self.ctl.submit(self.qid, NvmeCommand::read(first, n as u32)).await;
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
                let c = self.ctl.submit(self.qid, cmd).await;
                assert_eq!(c.status, Status::Success, "write failed");
                self.s.oracle.borrow_mut().acked(issued, fua);
            }
            self.s.busy.borrow_mut()[range].fill(false);
        }
    }
}

/// The image store writes behind, on a thread of its own, which its drop stops after writing
/// the queue: a device that is dropped must drop its flash array (no reference cycle keeps it),
/// or the queue would never reach the file and a later open of the same image could race a
/// writer still emptying it.
#[test]
fn dropping_a_device_over_an_image_drops_its_flash_array() {
    let cfg = crate::small_device("drop", FTL);
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("nand.img");
    let (dev, _) = Device::open_image(&cfg, &image, 1).unwrap();
    let array = Rc::downgrade(dev.platform.fil.array());
    let ctl = dev.controller.clone();
    create_queues(&dev, &ctl);
    let c = ctl.clone();
    let lba = ctl.lba_bytes() as usize;
    dev.platform
        .sim
        .block_on(async move {
            let nlb = (64 << 10) / lba as u32; // 64 KiB writes, 4 MiB in all
            for i in 0..64u64 {
                let data = HostData::Bytes(vec![i as u8; nlb as usize * lba]);
                let done = c.submit(1, NvmeCommand::write(i * nlb as u64, nlb, data)).await;
                assert_eq!(done.status, Status::Success);
            }
        })
        .unwrap();
    // More than the 256 KiB write cache went in: pages were programmed (and queued).
    assert!(dev.ftl.stats().pages_programmed.iter().sum::<u64>() > 0);
    drop((dev, ctl));
    assert!(array.upgrade().is_none(), "the flash array (and its image writer) outlived the device");
}
