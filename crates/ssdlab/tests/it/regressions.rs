//! Regression tests, named after what went wrong.

use crate::experiments::{build, device, run, settle};

/// With many workers waiting for a cache line, a write-back that freed four lines woke four of
/// them; they took their lines and nobody started the next write-back, so the rest waited
/// forever (found by the SoftSSD worker sweep at 16 workers per queue). A request that gets
/// its line now wakes the next waiter while waiters outnumber the lines on their way.
#[test]
fn cache_line_waiters_always_make_progress() {
    let cfg = device(
        r#"
name = "small cache, many workers"
[geometry]
channels = 4
ways = 2
dies = 2
planes = 2
blocks = 64
pages = 64
page_size = "16KiB"
[controller]
dram = "64MiB"
[host]
queues = 8
workers_per_queue = 16
[ftl]
op = 0.25
cache = { capacity = "4MiB" }
"#,
    );
    let dev = build(&cfg, 1);
    let r = run(&dev, "rw=write bs=128k iodepth=16 numjobs=4 size=256m loops=2", 3);
    assert_eq!(r.ops[1].count, 4 * 2 * 2048);
    settle(&dev);
    dev.ftl.check_invariants().unwrap();
}

/// GC moved units whose mapping segments were not cached by loading them into the CMT, which
/// could evict a dirty segment and need a translation-page write — space in some plane that
/// only GC could free. With every plane at its last free block, GC waited for the mapping
/// write and the mapping write for GC (found by the snapshot test: DFTL with a tiny CMT, in
/// GC steady state). GC now changes such entries in DRAM and queues their translation pages
/// for the mapping flusher, and copies translation pages out of victims through its own
/// frontier: it never waits for space it is making.
#[test]
fn gc_never_waits_for_the_mapping_space_it_is_making() {
    let cfg = device(crate::TINY_CMT);
    for seed in [3, 4, 5] {
        let dev = build(&cfg, seed);
        dev.ftl
            .precondition(firmware::ftl::Precondition::SteadyState { overwrites: 1.5 }, &mut |_, _| {})
            .unwrap();
        let logical = dev.ftl.logical_units();
        run(&dev, &format!("rw=randwrite bs=4k iodepth=8 norandommap number_ios={logical}"), seed);
        settle(&dev);
        dev.ftl.check_invariants().unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert!(dev.ftl.stats().gc_invocations > 0, "seed {seed}: GC ran");
    }
}

/// `mqsim-default` cut to 256 blocks per plane with `gc.soft_free = 12` (the device of issue
/// 14's report), aged to steady state.
fn aged_mqsim_cut_down() -> (firmware::config::DeviceConfig, firmware::device::Device) {
    let mut cfg = firmware::presets::get("mqsim-default").unwrap().unwrap();
    cfg.geometry.blocks = 256;
    cfg.ftl.gc.soft_free = Some(12);
    cfg.validate().unwrap();
    let dev = build(&cfg, 1);
    dev.ftl
        .precondition(firmware::ftl::Precondition::SteadyState { overwrites: 2.0 }, &mut |_, _| {})
        .unwrap();
    (cfg, dev)
}

/// Issue 14: `--precondition steady-state` on `mqsim-default` cut to 256 blocks per plane with
/// `gc.soft_free = 12` ran 160 s and panicked: "the translation pages did not settle: GC kept
/// moving their units". After the overwrites every translation page was rewritten with GC
/// keeping each plane at its threshold; the victims were about 96% valid, so each collection
/// freed a few pages but put hundreds of translation pages (a page each) behind the map
/// again, and rewriting them forced the next collection. Now GC makes room for every
/// translation page first and the rewrite then collects nothing; a device too full for its
/// translation pages is an error, never a panic. The device of the report, whole (smaller
/// shapes with few planes converged even before: their rewrites emptied old mapping blocks
/// in the planes GC was collecting).
#[test]
fn steady_state_translation_pages_settle_on_nearly_full_victims() {
    let (_, dev) = aged_mqsim_cut_down();
    assert_eq!(dev.ftl.mapped_units(), dev.ftl.logical_units() as u64);
    assert_eq!(dev.ftl.dirty_segments(), 0, "every translation page is on flash");
    let r = run(&dev, "rw=randread bs=4k iodepth=8 number_ios=2000", 2);
    assert_eq!(r.ops[0].count, 2000);
}

/// The aged device starts at its GC threshold, and a run ends with its last completion. The
/// translation pages used to be written into the free blocks below the threshold, so the first
/// write sent every plane collecting nearly full victims; and the run waited for that
/// background work: 3,000 writes measured over 77 ms ran 20 s of simulated GC after them
/// (with a WAF of 131). In DFTL steady state that work never ends at all.
#[test]
fn aged_device_starts_at_its_gc_threshold_and_the_run_ends_with_the_host() {
    let (cfg, dev) = aged_mqsim_cut_down();
    let planes = (cfg.geometry.total_dies() * cfg.geometry.planes) as u64;
    let soft = cfg.ftl.gc.soft(cfg.geometry.blocks) as u64;
    assert!(
        dev.ftl.free_blocks() >= planes * soft,
        "{} free blocks after ageing, below the {planes} planes' threshold of {soft}",
        dev.ftl.free_blocks()
    );
    let r = run(&dev, "rw=randwrite bs=4k iodepth=32 number_ios=3000", 3);
    assert_eq!(r.ops[1].count, 3000);
    let end = dev.platform.sim.now();
    assert!(
        end <= r.window_end + sim::SimDuration::from_millis(5),
        "the run went on {:?} past its last completion",
        end.saturating_since(r.window_end)
    );
    let st = dev.ftl.stats();
    let waf = st.units_programmed.iter().sum::<u64>() as f64 / st.host_units_written as f64;
    assert!(waf < 2.0, "WAF {waf:.2} over 3,000 writes from the aged device");
}

/// `ssdlab age` on `mqsim-default` cut to 100 blocks per plane with `gc.soft_free = 5` and an
/// 8 MiB cache ran for more than 20 minutes without finishing: bringing the aged device to rest
/// never ended. The fast preconditioner leaves every plane at its threshold of 5 free blocks,
/// and at that size the threshold and the open blocks take nearly all the spare space: what is
/// left is at most a unit per closed block (511 or 512 valid units of 512). Writing the cache
/// back opened a user block in most planes (5 free, then 4) but made only a few units stale in
/// each, and GC collected forever: a 511-unit victim moves in 256 two-unit pages (the odd unit
/// padded into a page of its own), a whole block, so each collection freed one block, filled
/// another and left a victim like itself. Simulated time ran on (20 s took seconds) with the
/// free count stuck. GC now stops when the plane cannot gain a block; the 256 MiB cache, whose
/// write-back makes about a block of units stale per plane, still brings every plane back.
/// Here the same planes, 4 of them, with a 256 KiB cache: 3 of the 4 looped the same way.
#[test]
fn bringing_an_aged_device_to_rest_ends_when_gc_cannot_gain_a_block() {
    let mut cfg = firmware::presets::get("mqsim-default").unwrap().unwrap();
    (cfg.geometry.channels, cfg.geometry.ways, cfg.geometry.dies) = (2, 1, 1);
    cfg.geometry.blocks = 100;
    (cfg.ftl.gc.soft_free, cfg.ftl.gc.hard_free) = (Some(5), 2);
    cfg.ftl.cache.capacity = sim::ByteSize::kib(256);
    cfg.validate().unwrap();
    let dev = build(&cfg, 1);
    dev.ftl
        .precondition(firmware::ftl::Precondition::SteadyState { overwrites: 2.0 }, &mut |_, _| {})
        .unwrap();
    let planes = (cfg.geometry.total_dies() * cfg.geometry.planes) as u64;
    let soft = cfg.ftl.gc.soft(cfg.geometry.blocks) as u64;
    assert_eq!(dev.ftl.free_blocks(), planes * soft + 1, "every plane at its threshold (one above)");

    // What `quiesce` does first, with a limit: write the cache back and let GC finish.
    dev.ftl.set_quiescing(true);
    let ftl = dev.ftl.clone();
    dev.platform.sim.cx().spawn(dev.ftl.core(), "flush", async move { ftl.flush().await });
    dev.settle(sim::SimDuration::from_secs(10)).unwrap_or_else(|e| panic!("{e}"));
    dev.ftl.set_quiescing(false);
    assert_eq!(dev.ftl.dirty_lines(), 0);
    assert!(
        dev.ftl.free_blocks() < planes * soft,
        "{} free blocks: the write-back should have left planes below the threshold that GC cannot get back to",
        dev.ftl.free_blocks()
    );
    dev.ftl.check_invariants().unwrap();
    dev.quiesce().unwrap();
    dev.ftl.check_invariants().unwrap();
}

/// Issue 27: the summary said "GC 0 victims, 133902 units moved, 0 erases" on `consumer-tlc`
/// (randrw from the aged state). No wear levelling: a run ends with its last host completion,
/// and the planes' collections were under way, their units moved and counted, their victims
/// not yet erased or counted. The FTL now counts the victims in progress and the units moved
/// out of them; both go back to zero as the collections finish.
#[test]
fn units_moved_by_collections_in_progress_are_counted_as_such() {
    let cfg = device(crate::SMALL);
    let dev = build(&cfg, 1);
    dev.ftl
        .precondition(firmware::ftl::Precondition::SteadyState { overwrites: 2.0 }, &mut |_, _| {})
        .unwrap();
    run(&dev, "rw=randwrite bs=4k iodepth=32 number_ios=30000", 1);
    let st = dev.ftl.stats();
    assert!(st.gc_victims_in_progress > 0, "GC under way at the end of this run: {st:?}");
    assert!(
        st.gc_units_moved_in_progress > 0 && st.gc_units_moved_in_progress <= st.gc_units_moved,
        "{st:?}"
    );
    assert_eq!(st.wl_migrations, 0);
    settle(&dev);
    let after = dev.ftl.stats();
    assert_eq!((after.gc_victims_in_progress, after.gc_units_moved_in_progress), (0, 0), "{after:?}");
    assert!(
        after.gc_invocations + after.wl_migrations
            >= st.gc_invocations + st.wl_migrations + st.gc_victims_in_progress,
        "the collections in progress finished and were counted: {st:?} then {after:?}"
    );
    assert_eq!(
        after.blocks_erased - st.blocks_erased,
        after.gc_invocations + after.wl_migrations - st.gc_invocations - st.wl_migrations
    );
    dev.ftl.check_invariants().unwrap();
}

/// Preconditioning a device that was written already is refused with an error, not a panic
/// (it asserted before).
#[test]
fn preconditioning_twice_is_an_error() {
    let dev = build(&device(crate::SMALL), 1);
    let aged = firmware::ftl::Precondition::RandomFill;
    dev.ftl.precondition(aged, &mut |_, _| {}).unwrap();
    let e = dev.ftl.precondition(aged, &mut |_, _| {}).unwrap_err();
    assert!(matches!(e, firmware::ftl::PreconditionError::NotFresh), "{e}");
}

/// Issue 26: Tradition-N never finished a public VMware trace at depth 32 (100% CPU, constant
/// memory). A request coroutine that held the cache index was queued for its core behind
/// another that then spun for a cache line held on a second core, whose holder spun for the
/// cache index: a cycle the spin rule broke only for a lock holder woken *while* the core spun,
/// not for one already queued. And the run did not stop: the time-series sampler's timer kept
/// the clock going, so the executor never saw that nothing else could happen. A spinner now
/// gives its core to a queued lock holder, and a sampler's timers are not pending work.
///
/// Seeded random traces of mixed sizes (512 B to 64 KiB writes, 4 to 64 KiB reads) over a
/// 32 MiB region of an aged device, so that misses hold cache lines across flash reads and
/// requests overlap on them, replayed closed-loop at depths 32 to 64 on every architecture:
/// every command completes, or the run fails naming the waiting tasks. (Before the fix each
/// of these traces hung Tradition-4 at every depth.) And the shared reproducer, cut from that
/// trace, where this checkout has it.
#[test]
fn mixed_overlapping_requests_finish_on_every_architecture() {
    use rand::{RngExt, SeedableRng};
    let dir = tempfile::tempdir().unwrap();
    let records = 2000;
    for seed in [1u64, 2] {
        let mut rng = sim::SimRng::seed_from_u64(seed);
        let mut trace = String::new();
        for i in 0..records {
            let (op, sizes): (char, &[u32]) = if rng.random_range(0..100) < 30 {
                ('r', &[4096, 16_384, 65_536])
            } else {
                ('w', &[512, 1536, 4096, 8192, 8192, 8192, 16_384, 24_576])
            };
            let bytes = sizes[rng.random_range(0..sizes.len())];
            let lba = rng.random_range(0..65_536u64);
            trace += &format!("0,{lba},{bytes},{op},{:.6}\n", i as f64 * 1e-6);
        }
        let path = dir.path().join(format!("mixed-{seed}.spc"));
        std::fs::write(&path, trace).unwrap();
        for kind in ["softssd", "tradition", "pipessd", "deepflash"] {
            for depth in ["32", "48", "64"] {
                let json = dir.path().join("r.json");
                let out = crate::ssdlab(&[
                    "replay",
                    path.to_str().unwrap(),
                    "pipessd",
                    "--blocks",
                    "128",
                    "--mode",
                    "closed",
                    "--depth",
                    depth,
                    "--set",
                    &format!("architecture.kind={kind}"),
                    "--json",
                    json.to_str().unwrap(),
                ]);
                let stderr = String::from_utf8_lossy(&out.stderr);
                let what = format!("seed {seed}, {kind}, depth {depth}");
                assert!(out.status.success(), "{what}: {stderr}");
                let r: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
                assert_eq!(r["total"]["count"], records, "{what}: every command completed");
            }
        }
    }
    let repro = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/repro-tradition-livelock.spc");
    if repro.exists() {
        let args = ["--precondition", "none", "--set", "architecture.kind=tradition", "--mode", "closed"];
        let out = crate::ok(&[&["replay", repro.to_str().unwrap(), "pipessd"][..], &args[..]].concat());
        assert!(out.contains("172 records -> 172 commands"), "{out}");
    }
}

/// Issue 32: on public traces `pipessd` writes spent 53-94% of their latency in the `fw` phase
/// while its cores were 2-8% busy. The phases were wrong, not the pipeline: where requests
/// move between cores a command's unit writes run one after another, but only the last one's
/// phases were counted (as for concurrent ones, whose last is the critical path), so the
/// others' time, mostly waiting for cache lines, fell into the remainder, `fw`. Now the phases
/// of sequential unit writes add up; on the flow without stages (SoftSSD), nothing changes.
#[test]
fn multi_unit_writes_through_a_pipeline_count_their_cache_waits() {
    let mut cfg = firmware::presets::get("pipessd").unwrap().unwrap();
    cfg.geometry.blocks = 128;
    cfg.ftl.cache.capacity = sim::ByteSize(1 << 20);
    cfg.validate().unwrap();
    let dev = build(&cfg, 1);
    // 64 KiB writes (16 units) at depth 32 into a 1 MiB cache: lines wait for write-backs.
    let r = run(&dev, "rw=randwrite bs=64k iodepth=32 number_ios=2000", 1);
    let w = &r.ops[1];
    assert_eq!(w.count, 2000);
    let mean = |d: sim::SimDuration| d.as_nanos() as f64 / w.count as f64;
    let (cache, fw, latency) = (mean(w.phases.cache), mean(w.phases.firmware), w.latency.mean());
    assert!(cache > 0.5 * latency, "the cache waits are counted: cache {cache} ns of {latency} ns");
    assert!(fw < 0.05 * latency, "fw is firmware time, not the other units' waits: {fw} ns of {latency} ns");
}

/// With cache programming on, a die whose array was programming took the next program into
/// its cache register as long as programs kept coming, and a host read to that die waited
/// behind the whole chain: on `consumer-tlc` a reader beside two writers saw reads of 1.8 s
/// (21 ms on this small device). A die now stops chaining while a host or mapping read waits
/// for it, so a read waits at most for what its die is doing (an erase, a program) and what
/// is queued ahead of it.
#[test]
fn reads_do_not_wait_behind_chained_cache_programs() {
    let mut cfg = device(crate::SMALL);
    cfg.timing.cache_program = true;
    cfg.validate().unwrap();
    let dev = build(&cfg, 1);
    let jobs = [
        crate::experiments::job("rw=randread bs=4k iodepth=8 number_ios=20000"),
        crate::experiments::job("rw=randwrite bs=16k iodepth=4 numjobs=2 number_ios=20000"),
    ];
    let r = host::run::run_jobs(&dev, &jobs, 1, &mut |_| {}).unwrap();
    let reads = &r.ops[0];
    assert_eq!(reads.count, 20000);
    let t = cfg.timing.model(cfg.geometry.page_size.bytes() as u32, 0);
    let slowest_prog = (0..cfg.geometry.pages).map(|p| t.t_prog(p)).max().unwrap();
    let bound = t.t_erase + slowest_prog + slowest_prog + sim::SimDuration::from_millis(1);
    let max = sim::SimDuration::from_nanos(reads.latency.max());
    assert!(max < bound, "slowest read {max} (bound: an erase, two programs and 1 ms, {bound})");
}
