//! The legacy synchronous path against NVMe queues: one port holding one command serialises
//! the workers (latency grows with them, throughput does not), NCQ lets 32 through, and NVMe
//! keeps each worker's queue depth in flight.

use firmware::config::DeviceConfig;
use firmware::device::Device;
use firmware::platform::StoreChoice;
use host::interface::HostInterface;
use host::run::{HostResults, RunOptions, run_jobs_with};
use host::workload::{IoOp, JobSpec};

fn device() -> DeviceConfig {
    let text = r#"
name = "iface"
[geometry]
channels = 4
ways = 2
blocks = 32
pages = 64
page_size = "16KiB"
[host]
queues = 8
[ftl]
op = 0.25
mapping = { kind = "full" }
cache = { capacity = "1MiB" }
"#;
    DeviceConfig::from_toml(text, "iface").unwrap()
}

/// Random 4 KiB reads of a region written first, by `workers` clones.
fn run(interface: HostInterface, workers: u32, depth: u32) -> HostResults {
    let dev = Device::build(&device(), &StoreChoice::Metadata, 3).unwrap();
    let mut fill = JobSpec::new("fill");
    for (k, v) in [("rw", "write"), ("bs", "128k"), ("size", "8m"), ("iodepth", "8")] {
        fill.set(k, Some(v)).unwrap();
    }
    run_jobs_with(&dev, &[fill], 1, &RunOptions::default(), &mut |_| {}).unwrap();
    let mut job = JobSpec::new("reads");
    let (n, d) = (workers.to_string(), depth.to_string());
    for (k, v) in [
        ("rw", "randread"),
        ("bs", "4k"),
        ("size", "8m"),
        ("numjobs", &n),
        ("iodepth", &d),
        ("number_ios", "400"),
    ] {
        job.set(k, Some(v)).unwrap();
    }
    let opts = RunOptions { interface, ..RunOptions::default() };
    run_jobs_with(&dev, &[job], 7, &opts, &mut |_| {}).unwrap()
}

fn mean_us(r: &HostResults) -> f64 {
    r.op(IoOp::Read).latency.mean() / 1e3
}

fn iops(r: &HostResults) -> f64 {
    r.op(IoOp::Read).count as f64 / r.window().as_secs_f64()
}

#[test]
fn a_legacy_port_serialises_workers_and_ncq_and_queues_let_them_overlap() {
    let one = run(HostInterface::Legacy, 1, 32);
    let eight = run(HostInterface::Legacy, 8, 32);
    // One command at a time: eight workers wait for each other, the device does the same work.
    let ratio = mean_us(&eight) / mean_us(&one);
    assert!((6.0..9.0).contains(&ratio), "latency x{ratio:.2} with 8 workers on one legacy port");
    assert!((iops(&eight) / iops(&one) - 1.0).abs() < 0.15, "{} vs {} IOPS", iops(&eight), iops(&one));
    // In legacy mode iodepth is ignored: each worker has one command.
    assert_eq!(one.queues, 1);
    let ncq = run(HostInterface::LegacyNcq, 8, 32);
    assert!(iops(&ncq) > 3.0 * iops(&eight), "NCQ {} vs {} IOPS", iops(&ncq), iops(&eight));
    // Queued NVMe at depth 32 per worker: many more in flight, latency from queueing.
    let queued = run(HostInterface::Nvme, 1, 32);
    assert!(mean_us(&queued) > 5.0 * mean_us(&one), "{} vs {} us", mean_us(&queued), mean_us(&one));
}
