//! `ssdlab bench`: how fast the simulator runs on this machine (wall clock, one core).
//!
//! For careful numbers use the criterion benches (`cargo bench`); this command gives a quick
//! reading of the same quantities, the full firmware's speed in GC steady state, and the memory
//! footprint of a large metadata-only array.

use std::rc::Rc;
use std::time::Instant;

use anyhow::{Context, Result, ensure};
use firmware::ftl::Precondition;
use firmware::platform::{Platform, StoreChoice};
use host::phys::{PhysOp, PhysPattern, PhysWorkload};
use host::run::RunOptions;
use host::workload::JobSpec;
use nand::store::MetaStore;
use nand::{FlashArray, Geometry};
use sim::sync::{Ring, RingSpec};
use sim::{ByteSize, CoreId, CoreSpec, Frequency, Sim, SimDuration};

use crate::cli::BenchArgs;
use crate::named_device;

/// Blocks per plane of the full-firmware device: the default preset with its array cut down
/// (from 1048 in `softssd`) so that preconditioning takes seconds, not minutes. Everything else
/// (timing, cores, costs, caches, policies) is the preset's.
const FIRMWARE_BLOCKS: u32 = 64;
/// Overwrites the fast preconditioner does after its random fill.
const FIRMWARE_OVERWRITES: f64 = 2.0;
/// 4 KiB random reads measured.
const FIRMWARE_READS: u64 = 200_000;
/// 4 KiB random writes measured, after a warm-up that fills the data cache with dirty lines.
const FIRMWARE_WRITES: u64 = 300_000;

pub fn run(a: BenchArgs) -> Result<()> {
    ensure!(a.events >= 1000 && a.txns >= 1000, "--events and --txns must be at least 1000");
    println!("{:<50} {:>14} {:>12}", "measurement", "per wall sec", "wall time");
    let (n, secs) = timed(|| bare_timers(a.events));
    row("executor: bare timer events", n as f64 / secs, secs);
    let (n, secs) = timed(|| ping_pong(a.events / 10));
    row("executor: cross-core ring ping-pong events", n as f64 / secs, secs);
    for op in [PhysOp::Read, PhysOp::Program] {
        let (n, secs) = fil_transactions(op, a.txns)?;
        row(&format!("FIL: random {op:?} transactions (softssd)").to_lowercase(), n as f64 / secs, secs);
    }
    let capacity: ByteSize = a.capacity.parse().context("--capacity")?;
    memory(capacity)?;
    firmware_steady_state()?;
    if !a.quick {
        full_size(&a)?;
    }
    Ok(())
}

fn row(what: &str, rate: f64, secs: f64) {
    println!("{what:<50} {:>14} {secs:>11.2}s", report::grouped(rate));
}

fn timed(f: impl FnOnce() -> u64) -> (u64, f64) {
    let t = Instant::now();
    let n = f();
    (n, t.elapsed().as_secs_f64())
}

fn bare_timers(events: u64) -> u64 {
    let sim = Sim::new(1);
    let cx = sim.cx();
    let per_task = events / 2 / 1000;
    for _ in 0..1000 {
        let c = cx.clone();
        cx.spawn(CoreId::UNBOUND, "sleeper", async move {
            for _ in 0..per_task {
                let d = c.with_rng(|g| rand::Rng::next_u64(g) % 10_000);
                c.sleep(SimDuration::from_nanos(d + 1)).await;
            }
        });
    }
    sim.run().expect("no deadlock");
    sim.events()
}

fn ping_pong(rounds: u64) -> u64 {
    let sim = Sim::new(1);
    let a = sim.add_core(CoreSpec::new("a", Frequency::mhz(1000)));
    let b = sim.add_core(CoreSpec::new("b", Frequency::mhz(1000)));
    let cx = sim.cx();
    let spec = RingSpec { capacity: 16, enqueue_cycles: 20, notify_latency: SimDuration::from_nanos(300) };
    let ab = Rc::new(Ring::new(&cx, "ab", spec.clone()));
    let ba = Rc::new(Ring::new(&cx, "ba", spec));
    let (c, tx, rx) = (cx.clone(), ab.clone(), ba.clone());
    cx.spawn(a, "ping", async move {
        for i in 0..rounds {
            tx.push(i).await;
            rx.pop().await;
            c.compute(100).await;
        }
    });
    let c = cx.clone();
    cx.spawn_daemon(b, "pong", async move {
        while let Some(v) = ab.pop().await {
            c.compute(100).await;
            ba.push(v).await;
        }
    });
    sim.run().expect("no deadlock");
    sim.events()
}

fn fil_transactions(op: PhysOp, count: u64) -> Result<(u64, f64)> {
    let cfg = firmware::presets::get("softssd").expect("built in")?;
    let p = Platform::build(&cfg, &StoreChoice::Metadata, 1)?;
    let w = PhysWorkload { op, pattern: PhysPattern::Random, qd: 256, count, ..PhysWorkload::default() };
    let t = Instant::now();
    host::phys::run(&p, &w, &mut |_, _| {})?;
    Ok((count, t.elapsed().as_secs_f64()))
}

/// The full firmware (HIL, FTL, FIL, ECC) of the default preset on a device in GC steady
/// state: 4 KiB random reads at QD32, then 4 KiB random writes at QD32 once the data cache is
/// full of dirty lines, so that every write costs a write-back and GC runs.
fn firmware_steady_state() -> Result<()> {
    let mut cfg = named_device::load(None)?;
    cfg.geometry.blocks = FIRMWARE_BLOCKS;
    cfg.validate().map_err(|e| anyhow::anyhow!("bench device: {e}"))?;
    let what = format!("{}, {FIRMWARE_BLOCKS} blocks/plane", cfg.name);
    let kind = Precondition::SteadyState { overwrites: FIRMWARE_OVERWRITES };
    let t = Instant::now();
    let p =
        ssdlab::prepare(&cfg, &StoreChoice::Metadata, 1, ssdlab::Start::Precondition(kind), &mut |_, _| {})?;
    let secs = t.elapsed().as_secs_f64();
    let units = p.device.ftl.logical_units() as f64 * (1.0 + FIRMWARE_OVERWRITES);
    let ctl = &p.device.controller;
    let logical = (ctl.capacity_lbas() * ctl.lba_bytes() as u64) as f64 / (1u64 << 30) as f64;
    println!("full firmware on {what} ({} raw, {logical:.1}GiB logical):", cfg.geometry.capacity());
    row(&format!("  fast precondition {} (mapping units)", ssdlab::describe(kind)), units / secs, secs);

    let (report, secs) = firmware_jobs(&p, "randread", FIRMWARE_READS, 1)?;
    row("  4k random read, QD32 (requests)", FIRMWARE_READS as f64 / secs, secs);
    let cmt = report
        .cache
        .mapping
        .as_ref()
        .map_or(String::new(), |m| format!(", CMT hits {:.1}%", m.ratio * 100.0));
    println!("    simulated {:.0} IOPS{cmt}", report.total.iops);

    let line = cfg.geometry.mapping_unit.bytes();
    firmware_jobs(&p, "randwrite", cfg.ftl.cache.capacity.bytes() / line * 5 / 4, 2)?;
    let before = p.device.ftl.stats();
    let (report, secs) = firmware_jobs(&p, "randwrite", FIRMWARE_WRITES, 3)?;
    let after = p.device.ftl.stats();
    row("  4k random write, QD32, GC steady state (requests)", FIRMWARE_WRITES as f64 / secs, secs);
    println!(
        "    simulated {:.0} IOPS; WAF {:.2} and {} GC victims while measured",
        report.total.iops,
        after.waf_since(&before),
        after.gc_invocations - before.gc_invocations
    );
    Ok(())
}

/// Warm-up writes between two looks at the free pool.
const WARMUP_CHUNK: u64 = 200_000;

/// A full-size device as a user runs it (`--full-size`, `--blocks`): steady-state
/// preconditioning, random reads, then random writes past the write cliff, on the metadata
/// store, with the peak memory of the process.
///
/// A device aged to steady state starts with its free pool at the GC threshold, and GC (the
/// FIL's last priority) only keeps pace once host writes have used that pool down to the hard
/// threshold: the write cliff. Past it, GC's pace is bursty (stalls of seconds while it frees
/// blocks, and on DFTL a long trough of translation-page rewrites; docs/write-path.md), so the
/// warm-up only takes the device to the cliff and the measured window is long (`--writes`,
/// a million by default) to average over many of GC's cycles.
fn full_size(a: &BenchArgs) -> Result<()> {
    let mut cfg = named_device::load(Some(&a.full_size))?;
    named_device::single_ssd(&cfg, "bench")?;
    if let Some(b) = a.blocks {
        cfg.geometry.blocks = b;
        cfg.validate().map_err(|e| anyhow::anyhow!("--blocks {b}: {e}"))?;
    }
    let kind = Precondition::SteadyState { overwrites: FIRMWARE_OVERWRITES };
    println!("full size: {} ({} raw), metadata store, one 4k QD32 job:", cfg.name, cfg.geometry.capacity());
    eprintln!(
        "  (minutes at full size: preconditioning, reads, then writes past the write cliff; --quick skips these rows)"
    );
    let t = Instant::now();
    let p =
        ssdlab::prepare(&cfg, &StoreChoice::Metadata, 1, ssdlab::Start::Precondition(kind), &mut |_, _| {})?;
    let secs = t.elapsed().as_secs_f64();
    let units = p.device.ftl.logical_units() as f64 * (1.0 + FIRMWARE_OVERWRITES);
    row(&format!("  fast precondition {} (mapping units)", ssdlab::describe(kind)), units / secs, secs);
    println!("    peak RSS so far {}", peak_rss());

    let (report, secs) = firmware_jobs(&p, "randread", a.reads, 1)?;
    row("  4k random read (requests)", a.reads as f64 / secs, secs);
    println!("    simulated {:.0} IOPS, mean {:.0} us", report.total.iops, mean_us(&report, "read"));

    let ftl = &p.device.ftl;
    let geo = &p.device.platform.config.geometry;
    let planes = (geo.total_dies() * geo.planes) as u64;
    let cliff = planes * (p.device.platform.config.ftl.gc.hard_free as u64 + 2);
    let (t, mut warm) = (Instant::now(), 0u64);
    let limit = ftl.logical_units() as u64 * 2;
    // Down the free pool to the cliff; stop early if GC keeps pace before it.
    loop {
        let free = ftl.free_blocks();
        if free <= cliff {
            break;
        }
        warm += WARMUP_CHUNK;
        firmware_jobs(&p, "randwrite", WARMUP_CHUNK, 1 + warm / WARMUP_CHUNK)?;
        eprintln!(
            "  warm-up: {} writes, {} free blocks ({} before), {:.0}s",
            report::grouped(warm as f64),
            ftl.free_blocks(),
            free,
            t.elapsed().as_secs_f64()
        );
        if free.saturating_sub(ftl.free_blocks()) < planes {
            break;
        }
        ensure!(warm < limit, "the free pool was still shrinking after {warm} warm-up writes");
    }
    let before = ftl.stats();
    let (report, secs) = firmware_jobs(&p, "randwrite", a.writes, u64::MAX)?;
    let after = ftl.stats();
    row("  4k random write, past the write cliff (requests)", a.writes as f64 / secs, secs);
    let moved = after.gc_units_moved - before.gc_units_moved;
    println!(
        "    simulated {:.0} IOPS, mean {:.0} us, max {:.1} s; WAF {:.2}, {} GC victims while measured ({} warm-up writes first)",
        report.total.iops,
        mean_us(&report, "write"),
        report.ops.get("write").map_or(f64::NAN, |o| o.latency_ns.max as f64 / 1e9),
        after.waf_since(&before),
        after.gc_invocations - before.gc_invocations,
        report::grouped(warm as f64),
    );
    // What the simulator's write speed depends on: the flash work behind each host write.
    println!(
        "    {} units moved by GC while measured: {} per wall second",
        report::grouped(moved as f64),
        report::grouped(moved as f64 / secs)
    );
    println!("  peak RSS {}", peak_rss());
    Ok(())
}

/// Mean latency of `op` in a report, µs.
fn mean_us(r: &report::Report, op: &str) -> f64 {
    r.ops.get(op).map_or(f64::NAN, |o| o.latency_ns.mean / 1e3)
}

/// The process's peak resident memory (`VmHWM`), or `?` where /proc does not say.
fn peak_rss() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or("?".into(), |kib| ByteSize(kib << 10).to_string())
}

/// Runs `count` 4 KiB `rw` requests at QD32 from one job over the whole device; the report and
/// the wall time. Every call on a device needs its own `seed`: the same seed draws the same
/// addresses, and a run that rewrites what the one before it wrote measures cheap GC (victims
/// full of the units it just invalidated), not the steady state.
fn firmware_jobs(p: &ssdlab::Prepared, rw: &str, count: u64, seed: u64) -> Result<(report::Report, f64)> {
    let mut job = JobSpec::new("bench");
    for (k, v) in [("rw", rw), ("bs", "4k"), ("iodepth", "32"), ("number_ios", &count.to_string())] {
        job.set(k, Some(v)).with_context(|| format!("bench job option {k}"))?;
    }
    let t = Instant::now();
    let report = ssdlab::measure(p, &[job], seed, &RunOptions::default(), &mut |_| {})?;
    Ok((report, t.elapsed().as_secs_f64()))
}

fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    statm.split_whitespace().nth(1)?.parse::<u64>().ok().map(|pages| pages * 4096)
}

fn memory(capacity: ByteSize) -> Result<()> {
    // 8 channels x 8 ways x 2 dies x 2 planes, 512 pages of 16 KiB per block, 4 KiB units.
    let per_block = 512 * 16 * 1024u64;
    let blocks = capacity.bytes() / (256 * per_block);
    ensure!(blocks >= 1, "--capacity must be at least {}", ByteSize(256 * per_block));
    let geo = Geometry {
        channels: 8,
        ways: 8,
        dies: 2,
        planes: 2,
        blocks: blocks as u32,
        pages: 512,
        page_size: ByteSize::kib(16),
        oob_size: ByteSize(1872),
        mapping_unit: ByteSize::kib(4),
    };
    geo.validate().map_err(|e| anyhow::anyhow!("geometry for --capacity: {e}"))?;
    let before = resident_bytes().unwrap_or(0);
    let array = FlashArray::new(geo.clone(), Box::new(MetaStore::new(&geo)));
    let after = resident_bytes().unwrap_or(0);
    let pages = geo.total_pages() as f64;
    println!(
        "metadata-only array, {} raw ({} pages): {} allocated = {:.2} B/page; process RSS grew by {}",
        geo.capacity(),
        geo.total_pages(),
        ByteSize(array.resident_bytes() as u64),
        array.resident_bytes() as f64 / pages,
        ByteSize(after.saturating_sub(before) / (1 << 20) * (1 << 20))
    );
    Ok(())
}
