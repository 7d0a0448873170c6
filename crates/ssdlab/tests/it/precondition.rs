//! The fast preconditioner against a full simulation of the same ageing on a small device:
//! free blocks, the distribution of valid units over closed blocks, and the WAF of the first
//! measured interval must agree within the stated tolerances.
//!
//! Tolerances (also in docs/preconditioning.md): free blocks within 10% + 4; mean closed-block
//! occupancy within 0.02 of a block and its standard deviation within 0.02 (the full run's
//! 128 KiB data cache absorbs and reorders some overwrites, which the fast path does not
//! model); two-sample KS statistic of the occupancy distributions below 0.2; first-interval
//! WAF within 5%.

use firmware::device::Device;
use firmware::ftl::Precondition;

use crate::SMALL;
use crate::experiments::{build, device, run, settle};

/// The shared small device with a full map, a 128 KiB cache and no firmware or host costs.
/// GC is eager: the fast path leaves every plane at its soft threshold, which is where eager GC
/// brings a device written to steady state and then left idle; paced GC, which collects
/// poor victims only as writes consume space, leaves it nearer the hard threshold
/// (docs/preconditioning.md).
fn small() -> firmware::config::DeviceConfig {
    device(&format!(
        r#"{SMALL}mapping = {{ kind = "full" }}
gc = {{ pacing = "eager" }}
cache = {{ capacity = "128KiB" }}
costs = {{ lookup = 0, cmt_miss = 0, write_back = 0, gc_unit = 0, trim = 0 }}
[controller]
dram = "64MiB"
[host]
costs = {{ fetch = 0, parse = 0, dma = 0, completion = 0 }}
"#
    ))
}

/// Free blocks in all planes, and the valid-unit occupancy (0..=1) of every closed block,
/// sorted.
fn state(dev: &Device) -> (u64, Vec<f64>) {
    let array = dev.platform.fil.array().borrow();
    let geo = array.geometry().clone();
    let upb = geo.units_per_block() as f64;
    let mut occ: Vec<f64> = array
        .blocks()
        .iter()
        .filter(|b| b.write_ptr == geo.pages)
        .map(|b| b.valid_units as f64 / upb)
        .collect();
    occ.sort_by(f64::total_cmp);
    (dev.ftl.free_blocks(), occ)
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    let m = v.iter().sum::<f64>() / v.len() as f64;
    (m, (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len() as f64).sqrt())
}

/// Largest gap between the two empirical distribution functions (two-sample KS statistic).
fn ks(a: &[f64], b: &[f64]) -> f64 {
    let cdf = |v: &[f64], x: f64| v.partition_point(|&y| y <= x) as f64 / v.len() as f64;
    a.iter().chain(b).map(|&x| (cdf(a, x) - cdf(b, x)).abs()).fold(0.0, f64::max)
}

/// Data WAF of random 4 KiB overwrites of `times` the logical capacity.
fn measured_waf(dev: &Device, times: u64) -> f64 {
    let before = dev.ftl.stats();
    let writes = times * dev.ftl.logical_units() as u64;
    run(dev, &format!("rw=randwrite bs=4k iodepth=16 norandommap number_ios={writes}"), 9);
    let after = dev.ftl.stats();
    let flash = (after.units_programmed[0] + after.units_programmed[1])
        - (before.units_programmed[0] + before.units_programmed[1]);
    flash as f64 / (after.host_units_written - before.host_units_written) as f64
}

#[test]
fn fast_steady_state_matches_full_simulation() {
    let cfg = small();
    let full = build(&cfg, 1);
    let logical = full.ftl.logical_units() as u64;
    run(&full, "rw=randwrite bs=4k iodepth=16", 1); // every unit once, random order
    run(&full, &format!("rw=randwrite bs=4k iodepth=16 norandommap number_ios={}", 2 * logical), 2);
    settle(&full); // GC back to its threshold, as the fast path leaves it
    let fast = build(&cfg, 1);
    fast.ftl.precondition(Precondition::SteadyState { overwrites: 2.0 }, &mut |_, _| {}).unwrap();
    fast.ftl.check_invariants().unwrap();

    let (full_free, full_occ) = state(&full);
    let (fast_free, fast_occ) = state(&fast);
    let ((fm, fs), (qm, qs)) = (mean_sd(&full_occ), mean_sd(&fast_occ));
    let gap = ks(&full_occ, &fast_occ);
    let (full_waf, fast_waf) = (measured_waf(&full, 1), measured_waf(&fast, 1));
    println!("free blocks: full {full_free}, fast {fast_free}");
    println!("closed-block occupancy mean/sd: full {fm:.4}/{fs:.4}, fast {qm:.4}/{qs:.4}; KS {gap:.3}");
    println!("first interval WAF: full {full_waf:.3}, fast {fast_waf:.3}");
    assert!(
        (full_free as f64 - fast_free as f64).abs() <= 0.1 * full_free as f64 + 4.0,
        "{full_free} vs {fast_free}"
    );
    assert!((fm - qm).abs() < 0.02 && (fs - qs).abs() < 0.02, "occupancy {fm:.4}/{fs:.4} vs {qm:.4}/{qs:.4}");
    assert!(gap < 0.2, "occupancy distributions: KS {gap:.3}");
    assert!((fast_waf / full_waf - 1.0).abs() < 0.05, "WAF {full_waf:.3} vs {fast_waf:.3}");
}

#[test]
fn fast_sequential_fill_matches_full_simulation() {
    let cfg = small();
    let full = build(&cfg, 1);
    let bytes = full.ftl.logical_units() as u64 * 4096;
    run(&full, &format!("rw=write bs=128k iodepth=1 size={bytes}"), 1);
    run(&full, "rw=read bs=128k iodepth=1 number_ios=1", 1); // nothing else changes the state
    settle(&full);
    let fast = build(&cfg, 1);
    fast.ftl.precondition(Precondition::SeqFill, &mut |_, _| {}).unwrap();
    fast.ftl.check_invariants().unwrap();
    let (full_free, _) = state(&full);
    let (fast_free, _) = state(&fast);
    // The full run still holds the last cache's worth of units dirty in DRAM: 128 KiB, a
    // quarter of a 512 KiB block, so at most one block's difference.
    let cached_blocks = 1;
    assert!(
        full_free.abs_diff(fast_free) <= cached_blocks,
        "free blocks: full {full_free}, fast {fast_free}"
    );
    let (a, b) = (measured_waf(&full, 1), measured_waf(&fast, 1));
    println!("seq fill, first interval WAF: full {a:.3}, fast {b:.3}");
    assert!((a / b - 1.0).abs() < 0.05, "{a:.3} vs {b:.3}");
}
