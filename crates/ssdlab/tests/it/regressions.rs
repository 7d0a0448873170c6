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
