//! The softssd preset against the measured shape of the SoftSSD board (PRESETS.md): throughput
//! grows with threads from 1 to 16 and peaks at 32 (all 32 chips busy); at 1-4 threads writes
//! are slower than reads; at high thread counts the software host interface caps both.
//!
//! Threads are fio jobs at queue depth 1 issuing 16 KiB random I/O over a 2 GiB region that was
//! written sequentially first; writes are measured after the 512 MiB data cache has filled.

use crate::experiments::{build, run};

/// IOPS of `rw` at queue depth 1 with `jobs` jobs, on a device already preconditioned.
fn iops(dev: &firmware::device::Device, rw: &str, jobs: u32, seed: u64) -> f64 {
    let r = run(
        dev,
        &format!("rw={rw} bs=16k iodepth=1 numjobs={jobs} size=2g runtime=200ms time_based ramp_time=20ms"),
        seed,
    );
    let m = if rw == "randread" { &r.ops[0] } else { &r.ops[1] };
    m.count as f64 / r.window().as_secs_f64()
}

fn preconditioned() -> firmware::device::Device {
    let cfg = firmware::presets::get("softssd").unwrap().unwrap();
    let dev = build(&cfg, 1);
    run(&dev, "rw=write bs=128k iodepth=16 numjobs=4 size=2g offset_increment=512m io_size=512m", 1);
    // Fill the 512 MiB cache with dirty data so that later writes must evict.
    run(&dev, "rw=randwrite bs=16k iodepth=8 numjobs=8 size=2g number_ios=6000", 2);
    dev
}

#[test]
fn softssd_throughput_shape() {
    let dev = preconditioned();
    let jobs = [1u32, 4, 16, 32, 48, 64];
    let reads: Vec<f64> = jobs.iter().map(|&j| iops(&dev, "randread", j, 10 + j as u64)).collect();
    let writes: Vec<f64> = jobs.iter().map(|&j| iops(&dev, "randwrite", j, 100 + j as u64)).collect();
    println!("jobs {jobs:?}\nreads  {reads:.0?}\nwrites {writes:.0?}");
    // Writes (cache full): rise from 1 to 16 to 32 jobs, then flatten (32 within 15% of 64,
    // 48 within 5%).
    assert!(writes[0] < writes[2] && writes[2] < writes[3], "{writes:?}");
    assert!(writes[3] / writes[5] > 0.85 && (writes[4] / writes[5] - 1.0).abs() < 0.05, "{writes:?}");
    // Reads rise from 1 to 16 jobs and are flat past 32.
    assert!(reads[0] * 3.0 < reads[2], "{reads:?}");
    assert!((reads[5] / reads[3] - 1.0).abs() < 0.05, "{reads:?}");
    // At 1 and 4 jobs writes are slower than reads.
    assert!(writes[0] < reads[0] && writes[1] < reads[1], "{reads:?} {writes:?}");
    // At 64 jobs the software host interface (about 25,000 commands/s) caps both.
    for v in [reads[5], writes[5]] {
        assert!((v / 25_000.0 - 1.0).abs() < 0.08, "{v:.0} at 64 jobs");
    }
}

#[test]
#[ignore]
fn softssd_thread_sweep() {
    let dev = preconditioned();
    println!("{:>5} {:>10} {:>10}", "jobs", "read IOPS", "write IOPS");
    for (i, jobs) in [1u32, 2, 4, 8, 16, 24, 32, 48, 64].into_iter().enumerate() {
        let r = iops(&dev, "randread", jobs, 10 + i as u64);
        let w = iops(&dev, "randwrite", jobs, 100 + i as u64);
        println!("{jobs:>5} {r:>10.0} {w:>10.0}");
    }
}

/// SoftSSD's "threads" may be its coroutine workers rather than host jobs: this sweeps the
/// workers of one queue with the host keeping 256 commands queued.
#[test]
#[ignore]
fn softssd_worker_sweep() {
    println!("{:>8} {:>10} {:>10}", "workers", "read IOPS", "write IOPS");
    for workers in [1u32, 2, 4, 8, 16, 32, 64] {
        let mut cfg = firmware::presets::get("softssd").unwrap().unwrap();
        cfg.host.workers_per_queue = workers;
        let dev = build(&cfg, 1);
        run(&dev, "rw=write bs=128k iodepth=16 numjobs=4 size=2g offset_increment=512m io_size=512m", 1);
        run(&dev, "rw=randwrite bs=16k iodepth=8 numjobs=8 size=2g number_ios=6000", 2);
        let mut out = Vec::new();
        for rw in ["randread", "randwrite"] {
            let r = run(
                &dev,
                &format!(
                    "rw={rw} bs=16k iodepth=256 numjobs=1 size=2g runtime=200ms time_based ramp_time=20ms"
                ),
                3,
            );
            let m = if rw == "randread" { &r.ops[0] } else { &r.ops[1] };
            out.push(m.count as f64 / r.window().as_secs_f64());
        }
        println!("{workers:>8} {:>10.0} {:>10.0}", out[0], out[1]);
    }
}

/// Wall-clock speed of the simulator on the default preset: run with --release.
#[test]
#[ignore]
fn simulator_speed_random_reads() {
    let preset = std::env::var("SSDLAB_PRESET").unwrap_or_else(|_| "softssd".into());
    let cfg = firmware::presets::get(&preset).unwrap().unwrap();
    let dev = build(&cfg, 1);
    run(&dev, "rw=write bs=128k iodepth=16 numjobs=4 size=2g offset_increment=512m io_size=512m", 1);
    let (t, e0) = (std::time::Instant::now(), dev.platform.sim.events());
    let r = run(&dev, "rw=randread bs=4k iodepth=32 numjobs=4 size=2g number_ios=250000 norandommap", 2);
    let secs = t.elapsed().as_secs_f64();
    let n = r.ops[0].count as f64;
    let events = (dev.platform.sim.events() - e0) as f64;
    println!(
        "{n} reads in {secs:.2}s wall: {:.0} requests/s, {:.1} events per request",
        n / secs,
        events / n
    );
}
