//! Seeded property loops: random jobs, checked invariants, and convergence of the mix, the
//! block-size split and the Zipf skew. Every failure message carries the case's seed.

use std::collections::HashMap;

use rand::{RngExt, SeedableRng};
use sim::SimRng;

use super::*;

/// A random valid job for case `seed`, as option strings (so failures print readably).
fn random_options(seed: u64) -> Vec<String> {
    let mut rng = SimRng::seed_from_u64(seed);
    let pick = |rng: &mut SimRng, xs: &[&str]| xs[rng.random_range(0..xs.len())].to_string();
    let mut o = vec![format!(
        "rw={}",
        pick(&mut rng, &["read", "write", "randread", "randwrite", "rw", "randrw", "trim", "randtrim"])
    )];
    match rng.random_range(0..3) {
        0 => o.push(format!("bs={}", pick(&mut rng, &["512", "4k", "8k", "16k", "128k", "4k,64k", ",8k"]))),
        1 => o.push(format!(
            "bssplit={}",
            pick(&mut rng, &["4k/50:64k/50", "512/10:4k/60:1m/30", "4k/25:8k:16k,32k/100"])
        )),
        _ => {}
    }
    if rng.random_bool(0.3) {
        o.push(format!("ba={}", pick(&mut rng, &["512", "4k", "8k", "64k"])));
    }
    if rng.random_bool(0.5) {
        o.push(format!("size={}", pick(&mut rng, &["1m", "10%", "3m", "100%", "64m"])));
    }
    if rng.random_bool(0.5) {
        o.push(format!("offset={}", pick(&mut rng, &["0", "1m", "33%", "512", "90%"])));
    }
    if rng.random_bool(0.5) {
        let d = ["random", "zipf:1.2", "zipf:0.5", "pareto:0.3", "zoned:60/10:30/20:10/70", "hotcold:5/95"];
        o.push(format!("random_distribution={}", pick(&mut rng, &d)));
    }
    if rng.random_bool(0.3) {
        o.push("norandommap".into());
    }
    o.push(format!("rwmixread={}", rng.random_range(0..=100)));
    o.push("numjobs=3".into());
    o.push("offset_increment=1m".into());
    o.push("time_based".into());
    o.push("runtime=1".into());
    o
}

#[test]
fn random_jobs_stay_in_range_aligned_and_in_direction() {
    for case in 0..300u64 {
        let options = random_options(case);
        let refs: Vec<&str> = options.iter().map(String::as_str).collect();
        let spec = job(&refs);
        let clone = (case % 3) as u32;
        let mut s = JobStream::new(&spec, clone, CAP, LBA, case)
            .unwrap_or_else(|e| panic!("case {case} {options:?}: {e}"));
        let region = s.region();
        assert!(region.end <= CAP && region.start < region.end, "case {case}");
        for _ in 0..2000 {
            let r = s.next().unwrap();
            let why = || format!("case {case} {options:?}: {r:?} in {region:?}");
            assert!(spec.rw.issues(r.op), "{}", why());
            assert!(r.offset >= region.start && r.offset + r.len as u64 <= region.end, "{}", why());
            assert!(r.offset.is_multiple_of(LBA as u64) && r.len.is_multiple_of(LBA), "{}", why());
            assert!(
                spec.block_sizes(r.op).iter().any(|&(b, w)| b.bytes() == r.len as u64 && w > 0),
                "{}",
                why()
            );
            if spec.rw.is_random() {
                let align = spec.blockalign.get(r.op).map_or_else(
                    || spec.block_sizes(r.op).iter().map(|&(b, _)| b.bytes()).min().unwrap(),
                    |a| a.bytes(),
                );
                assert!((r.offset - region.start).is_multiple_of(align), "{} align {align}", why());
            }
        }
    }
}

#[test]
fn random_jobs_are_deterministic() {
    for case in 0..50u64 {
        let options = random_options(case);
        let refs: Vec<&str> = options.iter().map(String::as_str).collect();
        let spec = job(&refs);
        assert_eq!(take(&spec, 1, case, 300), take(&spec, 1, case, 300), "case {case} {options:?}");
    }
}

#[test]
fn the_mix_converges_to_rwmixread() {
    for (case, pct) in [(0u64, 0u32), (1, 30), (2, 50), (3, 70), (4, 100)] {
        let spec = job(&["rw=randrw", &format!("rwmixread={pct}"), "time_based", "runtime=1"]);
        let n = 100_000;
        let reads = take(&spec, 0, case, n).iter().filter(|r| r.op == IoOp::Read).count();
        let share = reads as f64 / n as f64;
        assert!((share - pct as f64 / 100.0).abs() < 0.01, "case {case}: rwmixread={pct} gave {share}");
    }
}

#[test]
fn bssplit_frequencies_converge_to_the_weights() {
    let spec = job(&["rw=randwrite", "bssplit=4k/10:16k/60:1m/30", "time_based", "runtime=1"]);
    let n = 100_000;
    let mut counts: HashMap<u32, usize> = HashMap::new();
    for r in take(&spec, 0, 11, n) {
        *counts.entry(r.len).or_default() += 1;
    }
    for (len, weight) in [(4096u32, 0.1), (16384, 0.6), (1 << 20, 0.3)] {
        let share = counts[&len] as f64 / n as f64;
        assert!((share - weight).abs() < 0.01, "seed 11: {len} bytes got {share}, want {weight}");
    }
}

#[test]
fn zipf_sends_the_expected_share_to_the_hottest_tenth() {
    let theta = 1.2;
    let blocks = 10_000u64;
    let spec = job(&[
        "rw=randread",
        &format!("size={}", blocks * 4096),
        &format!("random_distribution=zipf:{theta}"),
        "time_based",
        "runtime=1",
    ]);
    let draws = 400_000;
    let mut counts = vec![0u64; blocks as usize];
    for r in take(&spec, 0, 21, draws) {
        counts[(r.offset / 4096) as usize] += 1;
    }
    // Exact share of ranks 1..=n/10 under P(k) ~ k^-theta.
    let h = |n: u64| (1..=n).map(|k| (k as f64).powf(-theta)).sum::<f64>();
    let expected = h(blocks / 10) / h(blocks);
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let top: u64 = counts[..(blocks / 10) as usize].iter().sum();
    let share = top as f64 / draws as f64;
    assert!((share - expected).abs() < 0.01, "seed 21: top 10% got {share}, expected {expected}");
    assert!(expected > 0.8, "theta=1.2 is strongly skewed ({expected})");
    // The hottest blocks are scattered, not packed at the start of the region.
    let first_tenth: u64 =
        take(&spec, 0, 21, 20_000).iter().filter(|r| r.offset / 4096 < blocks / 10).count() as u64;
    assert!(first_tenth < 20_000 / 2, "seed 21: {first_tenth} of 20000 hit the first tenth");
}

#[test]
fn uniform_draws_spread_evenly() {
    let spec = job(&["rw=randread", "size=400k", "norandommap", "time_based", "runtime=1"]);
    let mut counts = [0u32; 100];
    for r in take(&spec, 0, 31, 100_000) {
        counts[(r.offset / 4096) as usize] += 1;
    }
    assert!(counts.iter().all(|&c| (800..1200).contains(&c)), "seed 31: {counts:?}");
}
