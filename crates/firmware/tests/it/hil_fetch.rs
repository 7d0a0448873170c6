//! The queue fetch size (`host.queue_fetch_size`, MQSim's `Queue_Fetch_Size`): how many
//! commands of one submission queue are inside the device at once.

use firmware::device::Device;
use firmware::hil::{HostData, NvmeCommand, Status};
use firmware::platform::StoreChoice;
use firmware::system::System;
use nand::DataTag;
use sim::{CoreId, SimDuration};

/// Submits `n` 4 KiB reads at once on queue 1 of a device with fetch size `limit` and returns
/// the most commands of the queue inside the device (fetched, not completed) at any instant.
fn most_inside(limit: Option<u32>, n: u64) -> usize {
    let mut cfg = crate::small_device("fetch", "cache = { capacity = '256KiB' }");
    cfg.host.workers_per_queue = 64;
    cfg.host.queue_fetch_size = limit;
    cfg.host.host_irq_latency = SimDuration::ZERO; // completion time = the moment it leaves
    cfg.host.link.mmio_latency = SimDuration::ZERO;
    cfg.validate().unwrap();
    let dev = Device::build(&cfg, &StoreChoice::Metadata, 1).unwrap();
    let front = dev.front();
    let cx = dev.platform.sim.cx();
    let done = dev
        .sim()
        .block_on(async move {
            front.create_queue(1).await.unwrap();
            // Data on flash, so that the reads take a while.
            let tags = HostData::Tags((1..=64).map(DataTag).collect());
            assert_eq!(front.submit(1, NvmeCommand::write(0, 64 * 8, tags)).await.status, Status::Success);
            assert_eq!(front.submit(1, NvmeCommand::flush()).await.status, Status::Success);
            let handles: Vec<_> = (0..n)
                .map(|i| {
                    let c = front.clone();
                    cx.spawn(CoreId::UNBOUND, format!("read {i}"), async move {
                        c.submit(1, NvmeCommand::read((i % 64) * 8, 8)).await
                    })
                })
                .collect();
            let mut out = Vec::new();
            for h in handles {
                out.push(h.await);
            }
            out
        })
        .unwrap();
    // Inside from the end of its fetch to its completion; an exit sorts before an entry at
    // the same instant.
    let mut events: Vec<(u64, i32)> = Vec::new();
    for c in &done {
        assert_eq!(c.status, Status::Success);
        let t = &c.timing;
        let inside = t.submitted + c.phases.queue_wait + c.phases.fetch;
        events.push((inside.as_nanos(), 1));
        events.push((t.completed.as_nanos(), -1));
    }
    events.sort();
    let (mut now, mut most) = (0i32, 0i32);
    for (_, d) in events {
        now += d;
        most = most.max(now);
    }
    most as usize
}

#[test]
fn the_queue_fetch_size_bounds_the_commands_of_a_queue_inside_the_device() {
    let unlimited = most_inside(None, 48);
    assert!(unlimited > 8, "without a limit more than 8 reads are inside at once (got {unlimited})");
    for limit in [1, 4, 8] {
        let most = most_inside(Some(limit), 48);
        assert_eq!(most, limit as usize, "fetch size {limit}");
    }
}

#[test]
fn a_queue_fetch_size_of_zero_is_refused_in_one_line() {
    let mut cfg = crate::small_device("fetch", "cache = { capacity = '256KiB' }");
    cfg.host.queue_fetch_size = Some(0);
    let e = cfg.validate().unwrap_err().to_string();
    assert!(e.contains("queue_fetch_size") && e.contains("at least 1"), "{e}");
    assert!(!e.contains('\n'), "{e}");
}
