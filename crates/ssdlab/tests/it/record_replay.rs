//! Issue 31, item 4: record live, replay in simulation. fio over NBD against `ssdlab serve
//! --timing model --record`, the recording replayed by `ssdlab replay` and set beside it by
//! `ssdlab compare`: the same requests in the same order on the same queue pairs, and the
//! simulated mean latency within 5% of the live model's. The live side compared is the
//! modelled latency the server recorded for each request (`device_ns`): what a client waits
//! on top of it (the server's reply delay and the NBD round trip) is outside any device model
//! (docs/record-replay.md measures both).

use std::path::Path;
use std::process::{Command as Process, Stdio};

use super::ok;
use super::serve::{Server, have};

/// The per-request table of `ssdlab compare LIVE SIM --per-request OUT`: rows of
/// (live modelled ns, simulated ns, same request and queue).
fn joined(path: &Path) -> Vec<(u64, u64, bool)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |c: &str| header.iter().position(|h| *h == c).unwrap_or_else(|| panic!("no {c}"));
    let (device, sim, same) = (col("live_device_ns"), col("sim_latency_ns"), col("same"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[device].parse().unwrap(), f[sim].parse().unwrap(), f[same] == "1")
        })
        .collect()
}

/// One recorded fio run at `iodepth`, replayed and compared.
fn record_and_replay(dir: &Path, iodepth: u32, ios: u32) {
    let (image, rec) = (dir.join(format!("qd{iodepth}.img")), dir.join(format!("qd{iodepth}.rec")));
    let args = ["softssd", "--quiet", "--timing", "model", "--record", rec.to_str().unwrap()];
    let server = Server::launch(dir, &image, &args, Stdio::piped());
    let uri = format!("nbd+unix:///ssdlab?socket={}", server.sock.display());
    let fio = Process::new("fio")
        .current_dir(dir)
        .args(["--name=rr", "--ioengine=nbd", &format!("--uri={uri}"), "--rw=randrw", "--bs=4k"])
        .args([&format!("--iodepth={iodepth}"), &format!("--number_ios={ios}"), "--size=1g"])
        .output()
        .expect("fio runs");
    assert!(fio.status.success(), "{}", String::from_utf8_lossy(&fio.stderr));
    let (_, err) = server.stop();
    assert!(err.contains(&format!("recorded {ios} requests")), "{err}");

    // The recording is in arrival order: a timed replay needs it so.
    let text = std::fs::read_to_string(&rec).unwrap();
    let times: Vec<u64> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("ssdlab"))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(times.len(), ios as usize);
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "arrivals out of order");

    let sim = dir.join(format!("qd{iodepth}.csv"));
    ok(&[
        "replay",
        rec.to_str().unwrap(),
        "softssd",
        "--blocks",
        "16",
        "--precondition",
        "none",
        "--per-request",
        sim.to_str().unwrap(),
    ]);
    let table = dir.join(format!("qd{iodepth}.joined.csv"));
    let summary = ok(&[
        "compare",
        rec.to_str().unwrap(),
        sim.to_str().unwrap(),
        "--per-request",
        table.to_str().unwrap(),
    ]);
    eprintln!("QD{iodepth}:\n{summary}");
    let want = format!(
        "{ios} requests: {ios} of {ios} in the same order (operation, offset, length), {ios} of {ios} on the same queue pair"
    );
    assert!(summary.starts_with(&want), "{summary}");
    let rows = joined(&table);
    assert_eq!(rows.len(), ios as usize);
    assert!(rows.iter().all(|r| r.2), "every request the same, on the same queue");
    let mean = |f: fn(&(u64, u64, bool)) -> u64| rows.iter().map(f).sum::<u64>() as f64 / rows.len() as f64;
    let (live, simulated) = (mean(|r| r.0), mean(|r| r.1));
    let error = (simulated / live - 1.0).abs();
    assert!(error < 0.05, "QD{iodepth}: simulated mean {simulated:.0} ns against live {live:.0} ns");
}

/// fio's nbd engine, 4 KiB random reads and writes, at QD 1 and QD 8 (skipped without fio).
#[test]
fn a_recorded_fio_run_replays_in_the_same_order_and_within_5_percent() {
    if !have("fio") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    record_and_replay(dir.path(), 1, 2000);
    record_and_replay(dir.path(), 8, 4000);
}

/// blkparse text from a real machine replays with each CPU's requests on its own queue pair
/// (CPU c on queue c mod Q + 1) when asked; without `--trace-queues`, round robin as before.
#[test]
fn blkparse_cpus_become_queue_pairs_with_trace_queues() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("sda.blkparse");
    let mut text = String::new();
    for i in 0..24u64 {
        let cpu = [0, 1, 3][i as usize % 3];
        let rwbs = if i % 2 == 0 { "R" } else { "WS" };
        text.push_str(&format!(
            "  8,0    {cpu}  {}  0.{:09}  {}  Q  {rwbs} {} + 8 [app]\n",
            i + 1,
            i * 100_000,
            1000 + cpu,
            i * 64
        ));
    }
    std::fs::write(&trace, text).unwrap();
    let qids = |extra: &[&str]| {
        let csv = dir.path().join("q.csv");
        let mut args = vec!["replay", trace.to_str().unwrap(), "--precondition", "none", "--blocks", "16"];
        args.extend_from_slice(&["--per-request", csv.to_str().unwrap()]);
        args.extend_from_slice(extra);
        ok(&args);
        queues_in_order(&std::fs::read_to_string(&csv).unwrap())
    };
    let by_cpu: Vec<u16> = (0..24).map(|i| [1, 2, 4][i % 3]).collect();
    assert_eq!(qids(&["--trace-queues"]), by_cpu);
    assert_eq!(qids(&[]), (0..24).map(|i| (i % 8) as u16 + 1).collect::<Vec<_>>(), "round robin over 8");
}

/// A recording replays to the same report twice (wall-clock fields aside), each request on the
/// queue pair it names.
#[test]
fn a_recording_replays_deterministically_on_its_own_queue_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("hand.rec");
    let mut text = format!("{}\n# written by hand\n", host::trace::RECORDING_HEADER);
    for i in 0..40u64 {
        let (conn, queue) = if i % 2 == 0 { (0, 1) } else { (1, 3) };
        let op = ["read", "write", "write-zeroes", "read"][i as usize % 4];
        text.push_str(&format!("{} {conn} {queue} {op} {} 4096 - ok 60000 45000\n", i * 20_000, i * 8192));
    }
    text.push_str("800000 0 1 flush 0 0 - ok 90000 80000\n");
    std::fs::write(&rec, text).unwrap();
    let run = |n: u32| {
        let (json, csv) = (dir.path().join(format!("{n}.json")), dir.path().join(format!("{n}.csv")));
        ok(&[
            "replay",
            rec.to_str().unwrap(),
            "--precondition",
            "none",
            "--blocks",
            "16",
            "--json",
            json.to_str().unwrap(),
            "--per-request",
            csv.to_str().unwrap(),
        ]);
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let o = v.as_object_mut().unwrap();
        assert!(o.remove("wall_time_s").is_some() && o.remove("requests_per_wall_sec").is_some());
        (v, std::fs::read_to_string(&csv).unwrap())
    };
    let ((a, csv_a), (b, csv_b)) = (run(1), run(2));
    assert_eq!(a, b);
    assert_eq!(csv_a, csv_b);
    assert_eq!(a["replay"]["format"], "recording");
    assert_eq!(
        (a["replay"]["commands"].as_u64(), a["replay"]["skipped_flushes"].as_u64()),
        (Some(40), Some(1))
    );
    let want: Vec<u16> = (0..40).map(|i| if i % 2 == 0 { 1 } else { 3 }).collect();
    assert_eq!(queues_in_order(&csv_a), want);
}

/// A recording file that cannot be created is a one-line error before the image is made.
#[test]
fn a_recording_that_cannot_be_created_stops_serve_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("x.img");
    let sock = dir.path().join("x.sock");
    let out = super::ssdlab(&[
        "serve",
        "--image",
        image.to_str().unwrap(),
        "--unix",
        sock.to_str().unwrap(),
        "--record",
        "/nonexistent-dir/live.rec",
        "--duration",
        "1s",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("--record /nonexistent-dir/live.rec: cannot create the recording"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!image.exists(), "no image is left behind");
}

/// The recording reaches its file once a second without a clean shutdown: after a kill -9 it
/// holds every request answered before its last hand-over, and reads back as a recording.
#[test]
fn a_kill_9_keeps_the_recording_up_to_its_last_hand_over() {
    if !have("fio") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (image, rec) = (dir.path().join("k.img"), dir.path().join("k.rec"));
    let args = ["softssd", "--quiet", "--timing", "none", "--record", rec.to_str().unwrap()];
    let server = Server::launch(dir.path(), &image, &args, Stdio::piped());
    let uri = format!("nbd+unix:///ssdlab?socket={}", server.sock.display());
    let fio = Process::new("fio")
        .current_dir(dir.path())
        .args(["--name=w", "--ioengine=nbd", &format!("--uri={uri}"), "--rw=randwrite", "--bs=4k"])
        .args(["--iodepth=4", "--number_ios=1000", "--size=64m"])
        .output()
        .expect("fio runs");
    assert!(fio.status.success(), "{}", String::from_utf8_lossy(&fio.stderr));
    // The server is idle now; its next stats tick hands the buffer to the writer thread. Wait
    // for it (a liveness bound, not a measurement), then kill.
    let lines = || std::fs::read_to_string(&rec).map_or(0, |t| t.lines().count());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while lines() < 1002 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    server.kill();
    let reader = host::trace::TraceReader::open(&rec, host::trace::ReadOptions::default()).unwrap();
    let records: Vec<_> = reader.collect::<Result<_, _>>().unwrap();
    assert_eq!(records.len(), 1000, "every request answered before the kill");
    assert!(records.iter().all(|r| r.op == host::trace::TraceOp::Write && r.len == 4096));
}

/// The queue of every request of a per-request CSV (id, ..., qid, ...), in id order.
fn queues_in_order(csv: &str) -> Vec<u16> {
    let mut rows: Vec<(u64, u16)> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].parse().unwrap(), f[2].parse().unwrap())
        })
        .collect();
    rows.sort();
    rows.into_iter().map(|r| r.1).collect()
}
