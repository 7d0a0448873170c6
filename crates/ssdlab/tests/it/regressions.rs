//! Regression tests, named after what went wrong.

use crate::experiments::{build, device, run};

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
        dev.ftl.precondition(firmware::ftl::Precondition::SteadyState { overwrites: 1.5 }, &mut |_, _| {});
        let logical = dev.ftl.logical_units();
        run(&dev, &format!("rw=randwrite bs=4k iodepth=8 norandommap number_ios={logical}"), seed);
        dev.ftl.check_invariants().unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert!(dev.ftl.stats().gc_invocations > 0, "seed {seed}: GC ran");
    }
}
