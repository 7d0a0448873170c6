//! Crash recovery, deterministic: a device over a NAND image runs concurrent writers (FUA
//! writes, flushes, reads) with GC active, and is dropped at a random virtual instant, as a
//! kill -9 would leave it (every page program made so far is in the image; the write cache and
//! everything in flight are gone). Reopening recovers from the OOB, and every block must read
//! a version the crash oracle allows: nothing durable lost, nothing foreign. Every few cycles a
//! clean shutdown checkpoints instead, and the reopened device must mount clean with every
//! acknowledged write. The cycles are the shared harness's (`testkit::crash`).

use std::path::PathBuf;
use std::rc::Rc;

use firmware::config::DeviceConfig;
use firmware::device::{Device, OpenedAs};
use firmware::hil::{AdminCommand, AdminResult, Controller, HostData, NvmeCommand, Priority, Status};
use firmware::system::System;
use testkit::crash::{CrashPlan, Reopen, Reopened, crash_cycles};

/// The shared small device with a 256 KiB write cache and a small CMT: GC, translation-page
/// traffic and cache write-backs all happen within a few cycles.
const FTL: &str =
    "cache = { capacity = '256KiB' }\nmapping = { kind = 'dftl', cmt = '16KiB', segment_entries = 16 }";

const QUEUES: u16 = 4;

#[test]
fn durable_writes_survive_crashes_at_random_instants_with_gc_active() {
    crashes(crate::small_device("recovery", FTL), 40, 512);
}

/// Every architecture recovers the same way (fewer cycles each: the layers below are shared).
#[test]
fn every_architecture_survives_crashes() {
    for arch in ["tradition", "pipessd", "deepflash"] {
        crashes(crate::arch_device("recovery", arch, FTL), 25, 200);
    }
}

/// One SSD over a NAND image, opened afresh each cycle.
struct Image {
    cfg: DeviceConfig,
    path: PathBuf,
}

impl Reopen for Image {
    fn open(&mut self, seed: u64) -> Result<(Box<dyn System>, Reopened), String> {
        let (dev, opened) = Device::open_image(&self.cfg, &self.path, seed).map_err(|e| e.to_string())?;
        let how = match opened.how {
            OpenedAs::Created => Reopened::Created,
            OpenedAs::Clean => Reopened::Clean,
            OpenedAs::Recovered { .. } => Reopened::Recovered,
        };
        Ok((Box::new(dev), how))
    }

    fn checkpoint(&mut self, sys: &dyn System) -> Result<(), firmware::system::SystemError> {
        sys.checkpoint()
    }
}

/// `cycles` crash (or clean-stop) and remount cycles of the device `cfg` (seed and cycles from
/// `SSDLAB_RECOVERY_SEED` and `SSDLAB_RECOVERY_CYCLES` when set); at least `min_erases`
/// blocks must have been erased on the way.
fn crashes(cfg: DeviceConfig, cycles: u32, min_erases: u64) {
    let seed: u64 = std::env::var("SSDLAB_RECOVERY_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(7);
    let cycles: u32 =
        std::env::var("SSDLAB_RECOVERY_CYCLES").ok().and_then(|v| v.parse().ok()).unwrap_or(cycles);
    let arch = cfg.architecture.name(cfg.controller.cores.len());
    let dir = tempfile::tempdir().unwrap();
    let mut image = Image { cfg, path: dir.path().join("nand.img") };
    let plan = CrashPlan { cycles, seed, queues: QUEUES, ..CrashPlan::default() };
    let o = crash_cycles(&plan, &mut image)
        .unwrap_or_else(|e| panic!("{arch} (SSDLAB_RECOVERY_SEED={seed}): {e}"));
    eprintln!(
        "recovery ({arch}): {cycles} cycles ({} recovered, {} clean), {} of {} blocks written, {} writes, {} blocks erased",
        o.recovered, o.clean, o.written_blocks, o.blocks, o.writes, o.erases
    );
    assert!(
        o.recovered >= cycles * 3 / 4 && o.clean >= cycles / 5,
        "{} recoveries, {} clean mounts",
        o.recovered,
        o.clean
    );
    // Enough data went through the device that GC erased blocks many times over.
    assert!(
        o.written_blocks > o.blocks * 4 / 5 && o.erases > min_erases,
        "{arch}: too little written to test anything"
    );
}

fn create_queues(dev: &Device, ctl: &Rc<Controller>) {
    let c = ctl.clone();
    let ok = dev
        .platform
        .sim
        .block_on(async move {
            let mut ok = true;
            for qid in 1..=QUEUES {
                ok &= c
                    .admin(AdminCommand::CreateIoQueue { qid, priority: Priority::Medium, nvm_set: 0 })
                    .await
                    == AdminResult::Done;
            }
            ok
        })
        .unwrap();
    assert!(ok, "creating the I/O queues failed");
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
