//! The live host (what `ssdlab serve` drives): data through the NVMe path, request checks, and
//! the measured window.

use firmware::config::DeviceConfig;
use firmware::device::Device;
use firmware::platform::StoreChoice;
use host::live::{LiveError, LiveHost, LiveOp, LiveRequest};
use host::run::RunOptions;
use sim::SimDuration;

fn device() -> Device {
    Device::build(&config(), &StoreChoice::Memory, 1).unwrap()
}

/// The small device of these tests.
fn config() -> DeviceConfig {
    DeviceConfig::from_toml(
        r#"
name = "live"
[geometry]
channels = 2
ways = 1
blocks = 32
pages = 16
page_size = "16KiB"
[ftl]
op = 0.25
"#,
        "live",
    )
    .unwrap()
}

fn request(offset: u64, len: u64, op: LiveOp) -> LiveRequest {
    LiveRequest { offset, len, fua: false, op }
}

/// A server idle before its first client is not a slow device: the window (and so IOPS and
/// bandwidth) starts at the first request.
#[test]
fn the_window_starts_at_the_first_request_and_data_reads_back() {
    let dev = device();
    let host = LiveHost::open(&dev, &RunOptions::default()).unwrap();
    let idle = SimDuration::from_millis(50);
    let (h, cx) = (host.clone(), dev.platform.sim.cx());
    let lba = host.lba_bytes();
    let got = dev
        .platform
        .sim
        .block_on(async move {
            cx.sleep(idle).await;
            let q = h.attach().await.unwrap();
            let data: Vec<u8> = (0..8 * lba).map(|i| (i % 251) as u8).collect();
            h.serve(q, request(lba, 8 * lba, LiveOp::Write(data.clone()))).await.unwrap();
            let back = h.serve(q, request(lba, 8 * lba, LiveOp::Read)).await.unwrap();
            let zeroes = h.serve(q, request(lba, lba, LiveOp::WriteZeroes)).await;
            let after = h.serve(q, request(lba, 2 * lba, LiveOp::Read)).await.unwrap().unwrap();
            let misaligned = h.serve(q, request(1, lba, LiveOp::Read)).await;
            let past_end = h.serve(q, request(h.capacity(), lba, LiveOp::Read)).await;
            let short = h.serve(q, request(0, 2 * lba, LiveOp::Write(vec![0; lba as usize]))).await;
            h.detach(q).await;
            (data, back, zeroes, after, misaligned, past_end, short)
        })
        .unwrap();
    let (data, back, zeroes, after, misaligned, past_end, short) = got;
    assert_eq!(back.as_deref(), Some(&data[..]));
    assert_eq!(zeroes, Ok(None));
    assert!(after[..lba as usize].iter().all(|&b| b == 0));
    assert_eq!(after[lba as usize..], data[lba as usize..2 * lba as usize]);
    for bad in [misaligned, past_end, short] {
        assert!(matches!(bad, Err(LiveError::Invalid(_))), "{bad:?}");
    }
    let r = host.finish(&dev);
    assert!(
        r.window_start.saturating_since(sim::SimTime::ZERO) >= idle,
        "window starts at {:?}",
        r.window_start
    );
    assert!(r.window() < idle, "the idle time before the first request is not measured: {:?}", r.window());
    assert_eq!(r.ops.iter().map(|o| o.count).sum::<u64>(), 4, "{:?}", r.ops);
}

/// A request longer than the device's maximum transfer becomes several NVMe commands, each
/// with its own part of the data, and reads back whole.
#[test]
fn requests_longer_than_the_maximum_transfer_are_split_and_read_back() {
    let dev = device();
    let max = dev.platform.config.host.max_transfer.bytes();
    let host = LiveHost::open(&dev, &RunOptions::default()).unwrap();
    let lba = host.lba_bytes();
    let len = 2 * max + 3 * lba;
    assert!(len < host.capacity());
    let data: Vec<u8> = (0..len).map(|i| (i % 253) as u8 ^ (i / 4096) as u8).collect();
    let (h, d) = (host.clone(), data.clone());
    let (written, back) = dev
        .platform
        .sim
        .block_on(async move {
            let q = h.attach().await.unwrap();
            let written = h.serve(q, request(lba, len, LiveOp::Write(d))).await;
            let back = h.serve(q, request(lba, len, LiveOp::Read)).await.unwrap().unwrap();
            h.detach(q).await;
            (written, back)
        })
        .unwrap();
    assert_eq!(written, Ok(None));
    assert_eq!(back.len(), data.len());
    assert!(back == data, "the parts landed in order");
    let r = host.finish(&dev);
    let commands: u64 = r.ops.iter().map(|o| o.count).sum();
    assert_eq!(commands, 6, "three commands each way: {:?}", r.ops);
}

/// Issue 17, item 2: each connection took a queue pair of its own, so a device with 12 queue
/// pairs refused its 13th client (and `queues = 64` was silently capped at 63). Connections
/// now share the queue pairs, least loaded first, up to a connection limit.
#[test]
fn more_connections_than_queue_pairs_share_them_up_to_the_limit() {
    let dev = device();
    let queues = dev.platform.config.host.queues;
    assert!(queues >= 2, "the test device has {queues} queue pairs");
    let host = LiveHost::open(&dev, &RunOptions::default()).unwrap();
    let limit = 3 * queues as usize + 1;
    host.limit_connections(limit);
    let lba = host.lba_bytes();
    let h = host.clone();
    let (qids, refused, data_ok, reused) = dev
        .platform
        .sim
        .block_on(async move {
            let mut qids = Vec::new();
            for _ in 0..limit {
                qids.push(h.attach().await.unwrap());
            }
            let refused = h.attach().await;
            // Two connections on one queue pair, each with its own data.
            let (a, b) = (qids[0], qids[queues as usize]);
            assert_eq!(a, b);
            let (x, y) = (vec![7u8; lba as usize], vec![9u8; lba as usize]);
            h.serve(a, request(0, lba, LiveOp::Write(x.clone()))).await.unwrap();
            h.serve(b, request(lba, lba, LiveOp::Write(y.clone()))).await.unwrap();
            let back = h.serve(b, request(0, 2 * lba, LiveOp::Read)).await.unwrap().unwrap();
            let data_ok = back == [x, y].concat();
            // One connection leaves: its place (and queue pair) is taken by the next.
            h.detach(qids[1]).await;
            let reused = h.attach().await.unwrap();
            for q in qids.iter().skip(2).chain([&qids[0], &reused]) {
                h.detach(*q).await;
            }
            (qids, refused, data_ok, reused)
        })
        .unwrap();
    let expected: Vec<u16> = (0..limit).map(|i| (i % queues as usize) as u16 + 1).collect();
    assert_eq!(qids, expected, "spread round the queue pairs, least loaded first");
    assert_eq!(refused, Err(host::live::AttachError::Full { limit }));
    assert!(data_ok, "connections sharing a queue pair keep their data apart");
    assert_eq!(reused, qids[1]);
    assert_eq!(host.connections(), 0);
}

/// A device with more than 63 queue pairs uses all of them (a 64-bit mask capped them).
#[test]
fn all_of_64_queue_pairs_are_used() {
    let mut cfg = config();
    cfg.host.queues = 64;
    let dev = Device::build(&cfg, &StoreChoice::Memory, 1).unwrap();
    let host = LiveHost::open(&dev, &RunOptions::default()).unwrap();
    let h = host.clone();
    let qids = dev
        .platform
        .sim
        .block_on(async move {
            let mut qids = Vec::new();
            for _ in 0..64 {
                qids.push(h.attach().await.unwrap());
            }
            let lba = h.lba_bytes();
            h.serve(64, request(0, lba, LiveOp::Write(vec![1; lba as usize]))).await.unwrap();
            qids
        })
        .unwrap();
    assert_eq!(qids, (1..=64).collect::<Vec<u16>>());
}
