//! Paced background GC (docs/write-path.md, "GC pacing"): a host that writes slowly does not pay
//! for collecting nearly full victims, and sustained writes still make progress.
//!
//! The device: 1 plane of 256 blocks of 32 4 KiB pages, 10% over-provisioning of which GC keeps
//! 12 blocks free (soft threshold), the full map and an 8 KiB cache, so random writes leave
//! greedy victims 85-90% valid, below the 20% stale that FIFO's steady state at 10% (the
//! default `worthwhile_stale`) gains. After sustained random writes (the plane at the hard
//! threshold), a minute idle, then a slow phase of writes, one every 10 ms: eager GC uses the
//! idle time to collect its way back to the soft threshold, paced GC collects poor victims only
//! as writes consume space.

use crate::experiments::{build, device, run, settle};

/// What GC did under `pacing`.
struct Phases {
    /// Units moved per host unit written in the sustained phase.
    sustained: f64,
    /// Units moved while the host was idle.
    idle: u64,
    /// Units moved per host unit written in the slow phase.
    slow: f64,
}

fn phases(pacing: &str) -> Phases {
    let cfg = device(&format!(
        r#"
name = "gc-pacing"
[geometry]
channels = 1
ways = 1
blocks = 256
pages = 32
page_size = "4KiB"
[controller]
dram = "64MiB"
[ftl]
op = 0.10
mapping = {{ kind = "full" }}
cache = {{ capacity = "8KiB" }}
gc = {{ victim = "greedy", soft_free = 12, hard_free = 2, pacing = "{pacing}" }}
"#
    ));
    let dev = build(&cfg, 11);
    let logical = dev.ftl.logical_units() as u64;
    run(&dev, &format!("rw=write bs=128k iodepth=4 size={}", logical * 4096), 1);
    let start = dev.ftl.stats();
    run(&dev, &format!("rw=randwrite bs=4k iodepth=16 norandommap number_ios={}", 2 * logical), 2);
    let sustained = dev.ftl.stats();
    settle(&dev);
    let idle = dev.ftl.stats();
    run(&dev, "rw=randwrite bs=4k iodepth=1 norandommap rate_iops=100 number_ios=2000", 3);
    let slow = dev.ftl.stats();
    let moved = |a: &firmware::ftl::FtlStats, b: &firmware::ftl::FtlStats| {
        (b.gc_units_moved - a.gc_units_moved) as f64 / (b.host_units_written - a.host_units_written) as f64
    };
    Phases {
        sustained: moved(&start, &sustained),
        idle: idle.gc_units_moved - sustained.gc_units_moved,
        slow: moved(&idle, &slow),
    }
}

#[test]
fn a_slow_host_does_not_pay_for_collecting_nearly_full_victims() {
    let (eager, paced) = (phases("eager"), phases("paced"));
    let all = format!(
        "units moved per host unit sustained / units moved idle / per host unit slow: eager {:.2} / {} / {:.2}, \
         paced {:.2} / {} / {:.2}",
        eager.sustained, eager.idle, eager.slow, paced.sustained, paced.idle, paced.slow
    );
    assert!(eager.idle > 1000, "eager GC did not catch up while the host was idle: {all}");
    assert!(paced.idle < eager.idle / 10, "paced GC collected poor victims while the host was idle: {all}");
    assert!(paced.slow < 0.75 * eager.slow, "paced GC made slow writes pay for catching up: {all}");
    // Sustained writes reach the hard threshold either way and move about as much.
    assert!((paced.sustained / eager.sustained - 1.0).abs() < 0.15, "{all}");
}
