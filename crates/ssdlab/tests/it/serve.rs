//! `ssdlab serve`: data through NBD, clean restarts, and the crash test (kill -9 at a random
//! moment; every flushed write must read back, and no read may return data never written).
//!
//! The crash test runs `SSDLAB_CRASH_CYCLES` cycles (default 50); its seed is printed and can
//! be fixed with `SSDLAB_CRASH_SEED`.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command as Process, Stdio};
use std::time::{Duration, Instant};

use live::ListenAddr;
use live::proto::{CmdFlags, Command, RequestHeader};
use rand::{RngExt, SeedableRng};
use sim::SimRng as StdRng;
use testkit::durability::{Durability, FlushMark, Issued, read_stamp, stamp};

#[path = "../../../live/tests/live/client.rs"]
#[allow(dead_code)]
pub(crate) mod client;

use client::RawClient;

/// 2 ch x 2 ways x 2 planes x 48 blocks x 16 pages x 16 KiB, 20% spare: small enough that GC
/// runs in every crash cycle.
const TINY: &str = r#"
name = "serve tiny"
[geometry]
channels = 2
ways = 2
planes = 2
blocks = 48
pages = 16
page_size = "16KiB"
[ftl]
op = 0.2
"#;

pub(crate) const BLOCK: u64 = 4096;

/// `ssdlab serve` on the tiny device, as a child process on a Unix socket.
pub(crate) struct Server {
    child: Child,
    pub(crate) sock: PathBuf,
}

impl Server {
    pub(crate) fn start(dir: &Path, image: &Path, extra: &[&str]) -> Server {
        let stderr =
            if std::env::var_os("SSDLAB_SERVE_STDERR").is_some() { Stdio::inherit() } else { Stdio::piped() };
        let mut args = vec!["--quiet"];
        args.extend_from_slice(extra);
        Server::start_with(dir, image, &args, stderr)
    }

    /// [`start`](Self::start) with standard error going to `stderr`, and stats lines unless
    /// `extra` says `--quiet`.
    pub(crate) fn start_with(dir: &Path, image: &Path, extra: &[&str], stderr: Stdio) -> Server {
        let cfg = dir.join("tiny.toml");
        if !cfg.exists() {
            std::fs::write(&cfg, TINY).unwrap();
        }
        let mut args = vec![cfg.to_str().unwrap(), "--blocks", "0"];
        args.extend_from_slice(extra);
        Server::launch(dir, image, &args, stderr)
    }

    /// `ssdlab serve ARGS --image IMAGE --unix DIR/nbd.sock`, once it listens.
    pub(crate) fn launch(dir: &Path, image: &Path, args: &[&str], stderr: Stdio) -> Server {
        let sock = dir.join("nbd.sock");
        let _ = std::fs::remove_file(&sock);
        let child = Process::new(env!("CARGO_BIN_EXE_ssdlab"))
            .arg("serve")
            .args(args)
            .arg("--image")
            .arg(image)
            .arg("--unix")
            .arg(&sock)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("ssdlab serve starts");
        let mut s = Server { child, sock };
        let deadline = Instant::now() + Duration::from_secs(120);
        // The socket is bound before the image is opened; the greeting comes once it serves.
        let greeted = |sock: &Path| {
            let Ok(mut c) = std::os::unix::net::UnixStream::connect(sock) else { return false };
            let _ = c.set_read_timeout(Some(Duration::from_secs(1)));
            let mut magic = [0u8; 8];
            std::io::Read::read_exact(&mut c, &mut magic).is_ok() && &magic == b"NBDMAGIC"
        };
        while !greeted(&s.sock) {
            if let Some(status) = s.child.try_wait().unwrap() {
                let mut err = String::new();
                if let Some(e) = s.child.stderr.as_mut() {
                    std::io::Read::read_to_string(e, &mut err).unwrap();
                }
                panic!("ssdlab serve exited ({status}) before listening: {err}");
            }
            assert!(Instant::now() < deadline, "ssdlab serve did not listen within two minutes");
            std::thread::sleep(Duration::from_millis(5));
        }
        s
    }

    /// The TCP port the server bound with `--listen 127.0.0.1:0`, from its start-up message
    /// (the rest of standard error is left unread).
    pub(crate) fn tcp_port(&mut self) -> u16 {
        let err = self.child.stderr.as_mut().expect("stderr is piped (unset SSDLAB_SERVE_STDERR)");
        let mut reader = std::io::BufReader::new(err);
        let mut line = String::new();
        loop {
            line.clear();
            let n = std::io::BufRead::read_line(&mut reader, &mut line).unwrap();
            assert!(n > 0, "ssdlab serve announced no TCP address");
            if let Some(rest) = line.split("nbd://127.0.0.1:").nth(1) {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                return digits.parse().expect("a port number");
            }
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn addr(&self) -> ListenAddr {
        ListenAddr::Unix(self.sock.clone())
    }

    pub(crate) fn kill(mut self) {
        let _ = self.child.kill(); // SIGKILL
        self.child.wait().unwrap();
    }

    /// SIGTERM, then the clean shutdown's output.
    pub(crate) fn stop(mut self) -> (String, String) {
        // SAFETY: plain kill(2) on our own child.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let status = self.child.wait().unwrap();
        let read = |r: Option<&mut dyn std::io::Read>| {
            let mut text = String::new();
            if let Some(r) = r {
                r.read_to_string(&mut text).unwrap();
            }
            text
        };
        let o = read(self.child.stdout.as_mut().map(|s| s as &mut dyn std::io::Read));
        let e = read(self.child.stderr.as_mut().map(|s| s as &mut dyn std::io::Read));
        assert!(status.success(), "serve failed: {e}");
        (o, e)
    }
}

impl Drop for Server {
    /// A failing test must not leave its server running.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Data of `version` of `block`: every 8 bytes say which, so a read names what it returned.
pub(crate) fn pattern(block: u64, version: u64, blocks: u64) -> Vec<u8> {
    stamp(block, blocks, version, BLOCK as usize)
}

fn send(
    c: &mut RawClient,
    cmd: Command,
    flags: CmdFlags,
    cookie: u64,
    offset: u64,
    data: &[u8],
    len: u32,
) -> std::io::Result<()> {
    let mut bytes = RequestHeader { flags, command: cmd, cookie, offset, length: len }.encode().to_vec();
    bytes.extend_from_slice(data);
    c.stream.write_all(&bytes)
}

enum Pending {
    Write { issued: Issued, fua: bool },
    Flush(FlushMark),
    Read,
}

/// Runs random pipelined writes, write-zeroes, flushes and reads until the connection dies or
/// `ops` are done; keeps the oracle up to date.
fn workload(c: &mut RawClient, oracle: &mut Durability, rng: &mut StdRng, ops: u32, next_version: &mut u64) {
    let n = oracle.len();
    let mut pending: HashMap<u64, Pending> = HashMap::new();
    let mut busy = vec![false; n as usize];
    let mut cookie = 1_000u64;
    for _ in 0..ops {
        // Keep up to 8 requests in flight.
        while pending.len() >= 8 {
            if !reap(c, oracle, &mut pending, &mut busy) {
                return;
            }
        }
        cookie += 1;
        let r: f64 = rng.random();
        let sent = if r < 0.06 {
            pending.insert(cookie, Pending::Flush(oracle.flush_sent()));
            send(c, Command::Flush, CmdFlags::EMPTY, cookie, 0, &[], 0)
        } else if r < 0.16 {
            let block = rng.random_range(0..n);
            pending.insert(cookie, Pending::Read);
            send(c, Command::Read, CmdFlags::EMPTY, cookie, block * BLOCK, &[], BLOCK as u32)
        } else {
            let blocks = rng.random_range(1..=4u64).min(n);
            let block = rng.random_range(0..=n - blocks);
            if (block..block + blocks).any(|b| busy[b as usize]) {
                continue;
            }
            let zero = rng.random_bool(0.05);
            let fua = rng.random_bool(0.1);
            let version = if zero { 0 } else { *next_version };
            *next_version += 1;
            busy[block as usize..(block + blocks) as usize].fill(true);
            pending.insert(cookie, Pending::Write { issued: oracle.issue(block, blocks, version), fua });
            let flags = if fua { CmdFlags::FUA } else { CmdFlags::EMPTY };
            if zero {
                send(c, Command::WriteZeroes, flags, cookie, block * BLOCK, &[], (blocks * BLOCK) as u32)
            } else {
                let data = pattern(block, version, blocks);
                send(c, Command::Write, flags, cookie, block * BLOCK, &data, data.len() as u32)
            }
        };
        if sent.is_err() {
            return;
        }
    }
    while !pending.is_empty() {
        if !reap(c, oracle, &mut pending, &mut busy) {
            return;
        }
    }
}

/// Receives one reply and applies it; false when the connection is gone.
fn reap(
    c: &mut RawClient,
    oracle: &mut Durability,
    pending: &mut HashMap<u64, Pending>,
    busy: &mut [bool],
) -> bool {
    let Ok(reply) = c.recv() else { return false };
    assert_eq!(reply.error, 0, "request failed: {}", reply.message);
    match pending.remove(&reply.cookie).expect("a reply to a request we sent") {
        Pending::Write { issued, fua } => {
            let (first, blocks) = (issued.first(), issued.blocks());
            busy[first as usize..(first + blocks) as usize].fill(false);
            oracle.acked(issued, fua);
        }
        Pending::Flush(mark) => oracle.flushed(mark),
        Pending::Read => {}
    }
    true
}

/// Reads every block and checks it against the oracle.
fn verify(c: &mut RawClient, oracle: &mut Durability, cycle: u32, seed: u64, image: &Path) {
    // Every group of blocks that was ever written, and every 16th group besides (never-written
    // blocks must read as zeroes, but reading all of them each cycle only costs time).
    const AT_ONCE: u64 = 16;
    for first in (0..oracle.len()).step_by(AT_ONCE as usize) {
        let n = AT_ONCE.min(oracle.len() - first);
        let chunk = first / AT_ONCE;
        if chunk % 16 != cycle as u64 % 16 && !(first..first + n).any(|b| oracle.written(b)) {
            continue;
        }
        let r = c.read(first * BLOCK, (n * BLOCK) as u32);
        assert_eq!(r.error, 0, "read of blocks {first}.. failed after recovery: {}", r.message);
        for (i, data) in r.data.chunks(BLOCK as usize).enumerate() {
            let b = first + i as u64;
            if let Err(e) = oracle.check_after_crash(b, read_stamp(data)) {
                let again = read_stamp(&c.read(b * BLOCK, BLOCK as u32).data);
                let kept = std::env::temp_dir().join(format!("ssdlab-crash-{seed}.img"));
                let kept = match std::fs::copy(image, &kept) {
                    Ok(_) => format!("image kept as {}", kept.display()),
                    Err(err) => format!("could not keep the image: {err}"),
                };
                panic!(
                    "cycle {cycle} (SSDLAB_CRASH_SEED={seed}): block {b} {e} (read again: {again:?}); {kept}"
                );
            }
        }
    }
}

/// The crash test, on a device small enough that GC runs in every cycle.
#[test]
fn flushed_writes_survive_kill_9_and_nothing_unwritten_appears() {
    let cycles: u32 = std::env::var("SSDLAB_CRASH_CYCLES").ok().and_then(|v| v.parse().ok()).unwrap_or(50);
    let seed: u64 =
        std::env::var("SSDLAB_CRASH_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or_else(|| {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
        });
    eprintln!("crash test: {cycles} cycles, SSDLAB_CRASH_SEED={seed}");
    let mut rng = StdRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("nand.img");
    let mut oracle = Durability::new(0);
    let mut next_version = 1u64;
    let started = Instant::now();
    for cycle in 0..cycles {
        let server = Server::start(dir.path(), &image, &["--timing", "none"]);
        let mut c = RawClient::open(&server.addr(), "", true);
        if oracle.is_empty() {
            oracle = Durability::new(c.size / BLOCK);
        }
        verify(&mut c, &mut oracle, cycle, seed, &image);
        // Kill at a random moment while the workload runs.
        let delay = Duration::from_millis(rng.random_range(20..300));
        let pid = server.child.id();
        let killer = std::thread::spawn(move || {
            std::thread::sleep(delay);
            // SAFETY: plain kill(2) of the server we started.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        });
        workload(&mut c, &mut oracle, &mut rng, u32::MAX, &mut next_version);
        killer.join().unwrap();
        server.kill();
        if cycles >= 200 && (cycle + 1) % 100 == 0 {
            eprintln!("crash test: {} of {cycles} cycles in {:.0?}", cycle + 1, started.elapsed());
        }
    }
    // A last start verifies the last crash.
    let server = Server::start(dir.path(), &image, &["--timing", "none"]);
    let mut c = RawClient::open(&server.addr(), "", true);
    verify(&mut c, &mut oracle, cycles, seed, &image);
    let (durable, written) = (oracle.durable_blocks(), oracle.written_blocks());
    eprintln!(
        "crash test: {cycles} cycles in {:.1?}; {durable} of {} blocks hold durable data; {} versions written",
        started.elapsed(),
        oracle.len(),
        next_version - 1
    );
    assert!(durable > written / 2 && written > 1000, "the workload wrote too little to test anything");
    c.disconnect();
    server.kill();
}

#[test]
fn a_clean_restart_keeps_data_and_trims_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("nand.img");
    let json = dir.path().join("serve.json");
    let server = Server::start(dir.path(), &image, &["--timing", "none", "--json", json.to_str().unwrap()]);
    let mut c = RawClient::open(&server.addr(), "", true);
    assert_eq!(c.size % BLOCK, 0);
    let a = pattern(3, 7, 2);
    assert_eq!(c.write(3 * BLOCK, &a).error, 0);
    assert_eq!(c.write(9 * BLOCK, &pattern(9, 8, 1)).error, 0);
    let trim = c.call(Command::Trim, CmdFlags::EMPTY, 9 * BLOCK, BLOCK as u32, &[]);
    assert_eq!(trim.error, 0);
    assert_eq!(c.read(3 * BLOCK, 2 * BLOCK as u32).data, a);
    // Unaligned and out-of-range requests get errors; the connection keeps serving.
    assert_ne!(c.read(c.size, BLOCK as u32).error, 0);
    assert_eq!(c.read(4 * BLOCK, BLOCK as u32).data, pattern(4, 7, 1));
    c.disconnect();
    let (stdout, _) = server.stop();
    assert!(stdout.contains("live: 1 connections"), "{stdout}");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["live"]["opened"], "created");
    assert_eq!(report["ops"]["write"]["count"].as_u64(), Some(2), "{}", report["ops"]);

    // Reopened clean from the checkpoint: the data is there and the trimmed block reads zeroes.
    let server = Server::start(dir.path(), &image, &["--timing", "none", "--json", json.to_str().unwrap()]);
    let mut c = RawClient::open(&server.addr(), "", true);
    assert_eq!(c.read(3 * BLOCK, 2 * BLOCK as u32).data, a);
    assert!(c.read(9 * BLOCK, BLOCK as u32).data.iter().all(|&b| b == 0));
    c.disconnect();
    server.stop();
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["live"]["opened"], "clean");

    // After a kill -9 the next start recovers from the OOB, and says so.
    let server = Server::start(dir.path(), &image, &["--timing", "none"]);
    server.kill();
    let server = Server::start(dir.path(), &image, &["--timing", "none", "--json", json.to_str().unwrap()]);
    let mut c = RawClient::open(&server.addr(), "", true);
    assert_eq!(c.read(3 * BLOCK, 2 * BLOCK as u32).data, a);
    c.disconnect();
    server.stop();
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(report["live"]["opened"].as_str().unwrap().starts_with("recovered"), "{}", report["live"]);
}

/// A client that sends a burst of large reads and vanishes before the replies are written
/// must cost only its own connection: the server keeps serving others and stops cleanly. (The
/// binary restores SIGPIPE's default for `ssdlab run | head`; serving must not die of it.)
#[test]
fn a_client_vanishing_with_replies_in_flight_harms_nobody_else() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &dir.path().join("nand.img"), &["--timing", "model"]);
    let mut other = RawClient::open(&server.addr(), "", false);
    assert_eq!(other.write(0, &pattern(0, 1, 4)).error, 0);
    for _ in 0..3 {
        let mut c = RawClient::open(&server.addr(), "", false);
        for _ in 0..64 {
            c.send(Command::Read, CmdFlags::EMPTY, 0, 1 << 20, &[]);
        }
        drop(c); // gone without reading a single reply
    }
    std::thread::sleep(Duration::from_millis(300)); // the replies meet a closed socket
    assert_eq!(other.read(0, 4 * BLOCK as u32).data, pattern(0, 1, 4), "the other client is still served");
    other.disconnect();
    let (stdout, _) = server.stop();
    assert!(stdout.contains("live: 4 connections"), "{stdout}");
}

/// Issue 17, item 1: `ssdlab serve 2>&1 | head -2` kept listening after `head` exited but
/// refused every client (`server policy prevents NBD_OPT_GO`: the stats line had panicked the
/// device thread), and SIGINT then exited 101 without a checkpoint. Printing must never take
/// the device down.
#[test]
fn a_closed_stderr_neither_stops_serving_nor_the_clean_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("nand.img");
    let json = dir.path().join("serve.json");
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader); // `head` has exited
    let extra = ["--timing", "none", "--stats", "-", "--json", json.to_str().unwrap()];
    let server = Server::start_with(dir.path(), &image, &extra, Stdio::from(writer));
    let mut c = RawClient::open(&server.addr(), "", true);
    assert_eq!(c.write(0, &pattern(0, 1, 2)).error, 0);
    // Long enough for a stats line (once a second) to meet the closed pipe.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(c.read(0, 2 * BLOCK as u32).data, pattern(0, 1, 2));
    c.disconnect();
    let mut again = RawClient::open(&server.addr(), "", true);
    assert_eq!(again.read(0, 2 * BLOCK as u32).data, pattern(0, 1, 2), "a new client is served");
    again.disconnect();
    let (stdout, _) = server.stop(); // asserts a successful exit
    assert!(stdout.contains("live: 2 connections"), "{stdout}");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["live"]["connections"], 2);
    // The shutdown checkpointed: the next start mounts clean.
    let server = Server::start(dir.path(), &image, &["--timing", "none", "--json", json.to_str().unwrap()]);
    server.stop();
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["live"]["opened"], "clean", "{}", report["live"]);
}

pub(crate) fn have(tool: &str) -> bool {
    let found = Process::new(tool).arg("--version").output().is_ok();
    if !found {
        eprintln!("{tool} not installed; skipping (CI installs it)");
    }
    found
}

/// Real clients against the simulated device: nbdinfo's size and flags, fio's nbd engine with
/// crc32c verification, and a byte-identical nbdcopy round trip.
#[test]
fn real_clients_work_against_the_simulated_device() {
    if !(have("fio") && have("nbdinfo") && have("nbdcopy")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &dir.path().join("nand.img"), &["--timing", "none"]);
    let uri = format!("nbd+unix:///ssdlab?socket={}", server.sock.display());
    let info = Process::new("nbdinfo").args(["--json", &uri]).output().unwrap();
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).expect("nbdinfo --json");
    let export = &info["exports"][0];
    let size = export["export-size"].as_u64().unwrap();
    assert_eq!(size % BLOCK, 0);
    for flag in ["can_flush", "can_fua", "can_trim", "can_zero", "can_multi_conn"] {
        assert_eq!(export[flag], true, "{flag}: {export}");
    }
    client::fio_verify(&uri, "16m");
    // nbdcopy: a file in, the device out, byte for byte.
    let input = dir.path().join("in.bin");
    let data: Vec<u8> = (0..size as usize).map(|i| (i * 31 % 251) as u8).collect();
    std::fs::write(&input, &data).unwrap();
    let output = dir.path().join("out.bin");
    for (from, to) in [(input.to_str().unwrap(), uri.as_str()), (uri.as_str(), output.to_str().unwrap())] {
        let st = Process::new("nbdcopy").args([from, to]).output().unwrap();
        assert!(st.status.success(), "nbdcopy {from} {to}: {}", String::from_utf8_lossy(&st.stderr));
    }
    assert!(std::fs::read(&output).unwrap() == data, "nbdcopy round trip differs");
    server.stop();
}

/// QEMU's `qemu-io` writes patterns (plain, FUA, zeroes, a discard) over TCP and a Unix socket
/// and reads them back from a second process, and again after a kill -9 and a restart.
#[test]
fn qemu_io_patterns_read_back_across_connections_and_a_crash() {
    if !have("qemu-io") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("nand.img");
    let tcp = ["--timing", "none", "--listen", "127.0.0.1:0"];
    let qemu_io = |uri: &str, cmds: &[&str]| {
        let mut c = Process::new("qemu-io");
        c.args(["-f", "raw", uri]);
        for cmd in cmds {
            c.args(["-c", cmd]);
        }
        let out = c.output().unwrap();
        let text =
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        // qemu-io reports a failed command (a pattern mismatch included) in its output but may
        // still exit 0.
        assert!(
            out.status.success() && !text.contains("fail") && !text.contains("error"),
            "qemu-io {cmds:?}: {text}"
        );
        text
    };
    let unix = |s: &Server| format!("nbd+unix:///ssdlab?socket={}", s.sock.display());
    let mut server = Server::start(dir.path(), &image, &tcp);
    let port = server.tcp_port();
    qemu_io(
        &format!("nbd://127.0.0.1:{port}/ssdlab"),
        &[
            "write -P 0xab 0 64k",
            "write -f -P 0x5a 1m 64k",
            "write -P 0x11 2m 64k",
            "write -z 2m 16k",
            "discard 3m 64k",
            "flush",
        ],
    );
    let checks = ["read -P 0xab 0 64k", "read -P 0x5a 1m 64k", "read -P 0 2m 16k", "read -P 0x11 2064k 48k"];
    let out = qemu_io(&unix(&server), &checks);
    assert!(out.contains("read 65536/65536 bytes at offset 0"), "{out}");
    server.kill();
    let server = Server::start(dir.path(), &image, &["--timing", "none"]);
    qemu_io(&unix(&server), &checks);
    server.stop();
}

/// `fio` with crc32c verification over NBD: `args` added to a sequential 64 KiB job over
/// `size`.
fn fio_seq(uri: &str, size: &str, args: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let out = Process::new("fio")
        .current_dir(dir.path())
        .args(["--name=seq", "--ioengine=nbd", &format!("--uri={uri}"), "--rw=write", "--bs=64k"])
        .args(["--iodepth=16", &format!("--size={size}"), "--verify=crc32c", "--verify_fatal=1"])
        .args(["--verify_state_save=0"])
        .args(args)
        .output()
        .expect("fio runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("err= 0"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Issue 28, live: `ssdlab serve` on a device with the error model on at the bit-error rate
/// of an aged device (about 4 errors a 512 B codeword: TLC at its rated 3,000 P/E cycles after
/// a year, docs/errors.md) corrects the bits it really flips in the pages read from its image,
/// and fio's crc32c verification finds every block as written. The second start reads from
/// flash (its cache starts empty), so every read goes through the decoder.
#[test]
fn served_reads_of_an_aged_device_are_corrected_and_fio_verifies_them() {
    if !have("fio") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let aged = "[ecc.errors]\nrber = { e = 0.0, a = 0.0, k = 1.0, b = 1e-3, m = 0.0, n = 0.0, c = 0.0, p = 1.0, q = 1.0 }\n";
    std::fs::write(dir.path().join("tiny.toml"), format!("{TINY}{aged}")).unwrap();
    let (image, json) = (dir.path().join("nand.img"), dir.path().join("serve.json"));
    let args = ["--timing", "none", "--json", json.to_str().unwrap()];
    let server = Server::start(dir.path(), &image, &args);
    let uri = format!("nbd+unix:///ssdlab?socket={}", server.sock.display());
    fio_seq(&uri, "32m", &[]);
    server.stop();
    let server = Server::start(dir.path(), &image, &args);
    fio_seq(&uri, "32m", &["--verify_only"]);
    server.stop();
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let ecc = &report["ecc"];
    eprintln!("{ecc}");
    let n = |k: &str| ecc[k].as_u64().unwrap_or_else(|| panic!("{k}: {ecc}"));
    assert!(n("corrected_reads") > 100 && n("bits_corrected") > 1000, "{ecc}");
    assert_eq!(n("uncorrectable_reads"), 0, "{ecc}");
}

/// Issue 28, live: a read no attempt can decode reaches the NBD client as EIO, with no data.
#[test]
fn an_uncorrectable_served_read_is_an_eio() {
    let dir = tempfile::tempdir().unwrap();
    // 2e-2 of 4,096 bits: 82 errors a codeword, a floor no retry undoes.
    let dead = "[ecc.errors]\nrber = { e = 2e-2, a = 0.0, k = 1.0, b = 0.0, m = 1.0, n = 1.0, c = 0.0, p = 1.0, q = 1.0 }\n";
    std::fs::write(dir.path().join("tiny.toml"), format!("{TINY}{dead}")).unwrap();
    let image = dir.path().join("nand.img");
    let server = Server::start(dir.path(), &image, &["--timing", "none"]);
    let mut c = RawClient::open(&server.addr(), "", true);
    assert_eq!(c.write(0, &pattern(0, 1, 16)).error, 0);
    assert_eq!(c.call(Command::Flush, CmdFlags::EMPTY, 0, 0, &[]).error, 0);
    c.disconnect();
    server.stop();
    // Reopened: the cache is empty, so the read goes to flash.
    let server = Server::start(dir.path(), &image, &["--timing", "none"]);
    let mut c = RawClient::open(&server.addr(), "", true);
    let r = c.read(0, BLOCK as u32);
    assert_eq!(r.error, 5, "NBD_EIO: {}", r.message);
    assert!(r.data.is_empty() || r.data != pattern(0, 1, 1), "no data with the error");
    c.disconnect();
    server.stop();
}
