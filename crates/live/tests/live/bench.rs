//! fio 4 KiB random read and random write at queue depth 32 against this server (synchronous
//! `MemoryBackend`, and the same behind a worker thread as an asynchronous backend would be) and
//! against `nbdkit memory`, in the same run. Ignored by default; run it optimised:
//!
//! ```text
//! cargo test --release -p ssdlab-live --test live -- --ignored bench --nocapture
//! ```
//!
//! `LIVE_BENCH_SECONDS` (default 10) sets the duration of each measurement, `LIVE_BENCH_ROUNDS`
//! (default 3) how many times the targets are measured in turn; the median is reported.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use live::MemoryBackend;

use crate::backends::Threaded;
use crate::support::{have, run, serve, tcp};

const SIZE: u64 = 1 << 30;
const REGION: &str = "256m";

fn env(name: &str, default: u32) -> u32 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// IOPS of one fio run (terse output, version 3: field 8 read IOPS, field 49 write IOPS).
fn fio_iops(uri: &str, rw: &str, seconds: u32) -> f64 {
    let out = run(Command::new("fio").current_dir(std::env::temp_dir()).args([
        "--name=bench",
        "--ioengine=nbd",
        &format!("--uri={uri}"),
        &format!("--rw={rw}"),
        "--bs=4k",
        "--iodepth=32",
        &format!("--size={REGION}"),
        "--time_based",
        &format!("--runtime={seconds}"),
        "--output-format=terse",
        "--terse-version=3",
    ]));
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.split(';').count() > 50).expect("a terse result line");
    let fields: Vec<&str> = line.split(';').collect();
    let field = if rw == "randread" { 7 } else { 48 };
    fields[field].parse().expect("IOPS field")
}

fn fill(uri: &str) {
    run(Command::new("fio").current_dir(std::env::temp_dir()).args([
        "--name=fill",
        "--ioengine=nbd",
        &format!("--uri={uri}"),
        "--rw=write",
        "--bs=1m",
        "--iodepth=8",
        &format!("--size={REGION}"),
    ]));
}

struct Nbdkit(Child);

impl Drop for Nbdkit {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_nbdkit() -> (Nbdkit, String) {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new("nbdkit")
        .args(["--foreground", "--exit-with-parent", "-i", "127.0.0.1", "-p", &port.to_string()])
        .args(["memory", &SIZE.to_string()])
        .stdout(Stdio::null())
        .spawn()
        .expect("nbdkit starts");
    let kit = Nbdkit(child);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    (kit, format!("nbd://127.0.0.1:{port}"))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
#[ignore = "benchmark; run with --release -- --ignored bench --nocapture"]
fn bench_fio_4k_qd32_against_nbdkit_memory() {
    if !have("fio") || !have("nbdkit") {
        return;
    }
    let (seconds, rounds) = (env("LIVE_BENCH_SECONDS", 10), env("LIVE_BENCH_ROUNDS", 3));
    let sync = serve(Arc::new(MemoryBackend::new("mem", SIZE)));
    let threaded = serve(Arc::new(Threaded::new(MemoryBackend::new("mem", SIZE))));
    let (_kit, kit_uri) = start_nbdkit();
    let targets = [
        ("ssdlab-live MemoryBackend", tcp(&sync).uri()),
        ("ssdlab-live threaded backend", tcp(&threaded).uri()),
        ("nbdkit memory", kit_uri),
    ];
    for (_, uri) in &targets {
        fill(uri);
    }
    println!(
        "fio --ioengine=nbd --bs=4k --iodepth=32 --size={REGION} --runtime={seconds}, median of {rounds}"
    );
    for rw in ["randread", "randwrite"] {
        let mut samples = vec![Vec::new(); targets.len()];
        for _ in 0..rounds {
            for (i, (_, uri)) in targets.iter().enumerate() {
                samples[i].push(fio_iops(uri, rw, seconds));
            }
        }
        let medians: Vec<f64> = samples.into_iter().map(median).collect();
        let reference = medians[targets.len() - 1];
        for ((name, _), iops) in targets.iter().zip(&medians) {
            println!("{rw:>9}  {name:<30} {iops:>10.0} IOPS  {:>5.1}% of nbdkit", 100.0 * iops / reference);
            assert!(*iops > 0.0);
        }
    }
    let _ = sync.shutdown();
    let _ = threaded.shutdown();
}
