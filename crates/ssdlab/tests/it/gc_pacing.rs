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
    // Paced GC still takes the plane one block above the admission level (`admit_free`, hard
    // + 1 here), where it collects whatever its victims gain: 253 units here (129 when that
    // level was the hard threshold), against eager GC's way back to the soft threshold.
    assert!(paced.idle < eager.idle / 4, "paced GC collected poor victims while the host was idle: {all}");
    assert!(paced.slow < 0.75 * eager.slow, "paced GC made slow writes pay for catching up: {all}");
    // Sustained writes reach the hard threshold either way and move about as much.
    assert!((paced.sustained / eager.sustained - 1.0).abs() < 0.15, "{all}");
}

/// Write latency and per-interval host writes after the cliff of a run of `mqsim-default` cut
/// to 2 channels of 100-block planes (32 planes, a 16 MiB cache), 200,000 random 4 KiB writes
/// from the aged state, with `settings` (`--set` values).
struct Steady {
    /// 200 ms intervals after the first third of the run with no host write completed.
    empty: usize,
    /// The slowest write, ns.
    max_ns: f64,
    /// Pending mapping updates' budget and high-water mark, bytes; GC's translation pages.
    dram: serde_json::Value,
    waf: f64,
}

fn steady(settings: &[&str]) -> Steady {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut args = vec!["run", "mqsim-default", "--blocks", "100", "--store", "metadata"];
    for s in ["geometry.channels=2", "ftl.cache.capacity=16MiB"].iter().chain(settings) {
        args.extend(["--set", s]);
    }
    args.extend(["--rw", "randwrite", "--bs", "4k", "--iodepth", "32", "--numjobs", "1"]);
    args.extend(["--number-ios", "200000", "--interval", "200ms", "--json", json.to_str().unwrap()]);
    crate::ok(&args);
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let w: Vec<f64> =
        r["timeseries"]["write_iops"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    Steady {
        empty: w[w.len() / 3..].iter().filter(|&&x| x == 0.0).count(),
        max_ns: r["ops"]["write"]["latency_ns"]["max"].as_f64().unwrap(),
        dram: r["dram"].clone(),
        waf: r["waf"]["waf"].as_f64().unwrap(),
    }
}

/// Host-write admission (`ftl.gc.admit_free`, docs/write-path.md): at GC steady state host
/// writes advance in every interval. Without it (admission at the hard threshold, the
/// behaviour before) the planes run down to the hard threshold together and every write waits
/// until GC frees whole blocks: 17 empty intervals and a 1.3 s write on this device (at a
/// lower WAF: admission holds a plane one block further from empty, which 100-block planes
/// feel; docs/write-path.md).
#[test]
fn host_writes_advance_in_every_interval_at_gc_steady_state() {
    let off = steady(&["ftl.gc.admit_free=1"]);
    let on = steady(&[]);
    let all = format!(
        "empty 200 ms intervals / slowest write: without admission {} / {:.0} ms, with {} / {:.0} ms",
        off.empty,
        off.max_ns / 1e6,
        on.empty,
        on.max_ns / 1e6
    );
    assert!(
        off.empty > 10,
        "the device no longer stalls without admission, so this test shows nothing: {all}"
    );
    assert_eq!(on.empty, 0, "{all}");
    assert!(on.max_ns < off.max_ns / 2.0, "{all}");
}

/// The pending mapping updates stay within their DRAM budget, GC rewriting translation pages
/// itself when it is full; the default budget keeps those rewrites rare, a small one makes GC
/// write many (and costs write amplification), and the report says so.
#[test]
fn pending_mapping_updates_stay_within_their_dram_budget() {
    let small = steady(&["ftl.mapping.pending=256KiB"]);
    let default = steady(&[]);
    let n = |s: &Steady, k: &str| s.dram[k].as_u64().unwrap();
    let all = format!(
        "small budget: {} WAF {:.2}; default: {} WAF {:.2}",
        small.dram, small.waf, default.dram, default.waf
    );
    assert_eq!(n(&small, "pending_budget_bytes"), 256 << 10, "{all}");
    // GC may be one GC page's updates (4 here) past the budget before it checks again.
    assert!(n(&small, "pending_high_bytes") <= (256 << 10) + 4 * 8, "{all}");
    assert!(n(&small, "gc_tpage_writes") > 10 * n(&default, "gc_tpage_writes").max(1), "{all}");
    assert!(n(&default, "pending_high_bytes") <= n(&default, "pending_budget_bytes"), "{all}");
    assert!(n(&default, "pending_high_bytes") > 0, "{all}");
    assert!(small.waf > default.waf, "{all}");
}
