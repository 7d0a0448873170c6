//! Issue 17: what a new user met when starting `ssdlab serve`, and with many clients. Each
//! test says what went wrong before.

use std::process::Stdio;

use live::ListenAddr;

use crate::serve::client::RawClient;
use crate::serve::{BLOCK, Server, pattern};
use crate::{fails, ok, ssdlab};

/// Item 3: `ssdlab serve pipessd --image p.img`, the example in `serve --help`, failed with
/// `ftl.op: each plane keeps 1.1 spare blocks but GC needs at least 6`, as `--blocks 16` was
/// the default for every preset. Every single-SSD preset serves with its defaults; the others
/// (bridges, host-side FTLs, zoned namespaces) are refused in one line.
#[test]
fn every_preset_serves_with_its_defaults() {
    let presets = ok(&["presets"]);
    let names: Vec<&str> = firmware::presets::names().collect();
    assert!(names.len() >= 5 && names.iter().all(|n| presets.contains(n)), "{presets}");
    for name in names {
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("p.img");
        let args = [name, "--timing", "none", "--quiet"];
        let cfg = firmware::presets::get(name).unwrap().unwrap();
        if !cfg.system.is_ssd() {
            // Bridges and host-side FTLs are for run, replay and figure: one line says so.
            let err = fails(&["serve", name, "--image", image.to_str().unwrap()]);
            assert!(err.contains("drives a single SSD"), "{name}: {err}");
            continue;
        }
        if cfg.ftl.zoned_ns().is_some() {
            // A zoned namespace has zone commands NBD cannot carry: one line says so.
            let err = fails(&["serve", name, "--image", image.to_str().unwrap()]);
            assert!(err.contains("NBD cannot carry"), "{name}: {err}");
            continue;
        }
        let server = Server::launch(dir.path(), &image, &args, Stdio::piped());
        let mut c = RawClient::open(&server.addr(), "", true);
        assert!(c.size >= 1 << 30, "{name}: a {} byte export", c.size);
        let at = c.size / 2 / BLOCK * BLOCK;
        assert_eq!(c.write(at, &pattern(at / BLOCK, 1, 2)).error, 0, "{name}");
        assert_eq!(c.read(at, 2 * BLOCK as u32).data, pattern(at / BLOCK, 1, 2), "{name}");
        c.disconnect();
        let (_, stderr) = server.stop();
        assert!(stderr.contains("blocks per plane"), "{name}: {stderr}");
    }
}

/// Item 2: each connection took an NVMe queue pair of its own, so the 13th fio job on
/// softssd's 12 queues was refused, and the reason showed only with `LIBNBD_DEBUG=1`.
/// Connections now share the queue pairs up to `--max-connections`; the one after the limit
/// is told why, and the server says so.
#[test]
fn more_connections_than_queue_pairs_are_served_up_to_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("nand.img");
    // The tiny device has 16 queue pairs (the default).
    let extra = ["--timing", "none", "--max-connections", "40"];
    let server = Server::start(dir.path(), &image, &extra);
    let mut clients: Vec<RawClient> = (0..40).map(|_| RawClient::open(&server.addr(), "", true)).collect();
    for (i, c) in clients.iter_mut().enumerate() {
        let block = i as u64 * 4;
        assert_eq!(c.write(block * BLOCK, &pattern(block, 1, 4)).error, 0, "client {i}");
    }
    for (i, c) in clients.iter_mut().enumerate().rev() {
        let block = i as u64 * 4;
        assert_eq!(c.read(block * BLOCK, 4 * BLOCK as u32).data, pattern(block, 1, 4), "client {i}");
    }
    let addr = server.addr();
    let refused = std::panic::catch_unwind(move || RawClient::open(&addr, "", true)).err().expect("refused");
    let why = refused.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(why.contains("ErrPolicy") && why.contains("--max-connections"), "{why}");
    // A place freed is a place taken.
    clients.pop().unwrap().disconnect();
    let mut again = RawClient::open(&server.addr(), "", true);
    assert_eq!(again.read(0, 4 * BLOCK as u32).data, pattern(0, 1, 4));
    again.disconnect();
    for c in clients {
        c.disconnect();
    }
    let (stdout, stderr) = server.stop();
    assert!(stdout.contains("live: 41 connections"), "{stdout}");
    assert!(
        stderr.contains("refused a connection: the server is at its limit of 40 connections"),
        "{stderr}"
    );
}

/// Item 7: `--listen localhost:PORT` was rejected (only numeric addresses parsed).
#[test]
fn listen_takes_a_host_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(
        dir.path(),
        &dir.path().join("nand.img"),
        &["--timing", "none", "--listen", "localhost:0"],
    );
    let port = server.tcp_port();
    let mut c = RawClient::open(&ListenAddr::Tcp(([127, 0, 0, 1], port).into()), "", true);
    assert_eq!(c.write(0, &pattern(0, 1, 1)).error, 0);
    c.disconnect();
    server.stop();
}

/// Item 7: a port in use was reported only after a new image had been created (and left
/// behind).
#[test]
fn a_port_in_use_is_reported_before_the_image_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let listen = taken.local_addr().unwrap().to_string();
    let image = dir.path().join("new.img");
    let e = fails(&["serve", "--image", image.to_str().unwrap(), "--listen", &listen]);
    assert!(e.contains(&format!("cannot listen on {listen}")) && e.contains("in use"), "{e}");
    assert!(!image.exists(), "nothing is left behind");
}

/// Item 7: start-up errors said the OS error twice (`No such file or directory (os error 2):
/// No such file or directory (os error 2)`) and named library fields (`allow_non_loopback`)
/// instead of the flags the user typed; `--max-request 256MiB` and above failed naming
/// `max_in_flight_bytes`.
#[test]
fn start_up_errors_say_it_once_in_the_users_words() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir").join("x.img");
    let e = fails(&["serve", "--image", missing.to_str().unwrap(), "--unix", "/nonexistent-dir/s.sock"]);
    assert!(e.contains("cannot listen on /nonexistent-dir/s.sock"), "{e}");
    assert_eq!(e.matches("os error").count(), 1, "{e}");
    let sock = dir.path().join("s.sock");
    let e = fails(&["serve", "--image", missing.to_str().unwrap(), "--unix", sock.to_str().unwrap()]);
    assert_eq!(e.matches("os error 2").count(), 1, "{e}");
    assert!(!sock.exists(), "the socket file is removed when serving fails");
    let e = fails(&["serve", "--listen", "0.0.0.0:0", "--image", missing.to_str().unwrap()]);
    assert!(e.contains("--allow-remote") && !e.contains("allow_non_loopback"), "{e}");
    let e = fails(&["serve", "--max-request", "3MiB", "--image", missing.to_str().unwrap()]);
    assert!(e.contains("--max-request 3MiB"), "{e}");
    let image = dir.path().join("nand.img");
    let server = Server::start(dir.path(), &image, &["--timing", "none", "--max-request", "256MiB"]);
    let mut c = RawClient::open(&server.addr(), "", true);
    assert_eq!(c.read(0, 4 * BLOCK as u32).error, 0);
    c.disconnect();
    server.stop();
}

/// Item 7: `ssdlab run` had no `--blocks`, so comparing it with `serve` needed a config file.
#[test]
fn run_takes_blocks_as_serve_does() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let args = ["run", "--blocks", "16", "--precondition", "none", "--number-ios", "200"];
    let out = ssdlab(&[&args[..], &["--json", json.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let text = report.to_string();
    assert!(text.contains("\"blocks\":16"), "the report's configuration has 16 blocks per plane");
    let e = fails(&["run", "pipessd", "--blocks", "16", "--precondition", "none"]);
    assert!(e.contains("--blocks 16") && e.contains("ftl.op"), "{e}");
}

/// Item 4: the error count stayed 0 after dozens of EINVAL and ENOSPC replies (the server
/// answers those itself, before the device sees them), and the report gave only the
/// simulation's own latencies and rates. Errors are counted by errno, and each operation type
/// has what its clients saw in wall-clock time.
#[test]
fn the_live_report_counts_errors_by_errno_and_says_what_clients_saw() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("serve.json");
    let extra = ["--timing", "none", "--json", json.to_str().unwrap()];
    let server = Server::start(dir.path(), &dir.path().join("nand.img"), &extra);
    let mut c = RawClient::open(&server.addr(), "", true);
    for i in 0..3 {
        assert_eq!(c.write(i * BLOCK, &pattern(i, 1, 1)).error, 0);
    }
    assert_eq!(c.read(0, BLOCK as u32).error, 0);
    assert_ne!(c.read(c.size, BLOCK as u32).error, 0, "a read past the end");
    assert_ne!(c.write(c.size, &pattern(0, 1, 1)).error, 0, "a write past the end");
    assert_ne!(c.read(1, BLOCK as u32).error, 0, "a misaligned read");
    c.disconnect();
    let (stdout, _) = server.stop();
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let live = &report["live"];
    assert_eq!(live["errors"], 3, "{live}");
    assert_eq!(live["errors_by_errno"]["EINVAL"], 2, "{live}");
    assert_eq!(live["errors_by_errno"]["ENOSPC"], 1, "{live}");
    assert_eq!(live["client"]["write"]["count"], 3, "{live}");
    assert_eq!(live["client"]["read"]["count"], 1, "the device saw one read: {live}");
    assert_eq!(live["client"]["read"]["iops"], 1.0, "a lone read is 1 IOPS, not 1/latency: {live}");
    assert!(live["client"]["write"]["latency_mean_us"].as_f64().unwrap() > 0.0, "{live}");
    assert!(stdout.contains("as the clients saw it (wall clock"), "{stdout}");
    assert!(stdout.contains("errors: 2 EINVAL, 1 ENOSPC"), "{stdout}");
    assert!(stdout.contains("the simulated device"), "{stdout}");
}
