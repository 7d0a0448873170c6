//! Opt-in: a real file system on the served device. `nbdfuse` exposes the export as a file,
//! a loop device makes it a block device, `mkfs.ext4` and `mount` put ext4 on it; files
//! written there must survive a kill -9 of the server (after unmount) and a clean restart.
//!
//! Needs root, /dev/fuse, loop devices, nbdfuse (libnbd-bin), e2fsprogs and fusermount3, so it
//! runs only with `SSDLAB_LOOP_TESTS=1` (`.ci/run` sets it when the machine can).

use std::path::{Path, PathBuf};
use std::process::{Child, Command as Process, Stdio};
use std::time::{Duration, Instant};

use rand::{RngExt, SeedableRng};
use sim::SimRng as StdRng;

use crate::serve::Server;

/// Runs a command; panics with its output if it fails.
fn sh(cmd: &str, args: &[&str]) -> String {
    let out = Process::new(cmd).args(args).output().unwrap_or_else(|e| panic!("{cmd}: {e}"));
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{cmd} {args:?} failed ({}): {text}", out.status);
    text
}

/// ext4 mounted on the export through nbdfuse and a loop device; unmounted, detached and
/// unfused on drop, also when a check fails, so that no mount outlives the test.
struct Mounted {
    fuse_dir: PathBuf,
    nbdfuse: Option<Child>,
    loop_dev: Option<String>,
    fs: Option<PathBuf>,
}

impl Mounted {
    fn attach(dir: &Path, server: &Server, mkfs: bool) -> Mounted {
        let fuse_dir = dir.join("fuse");
        let fs = dir.join("fs");
        for d in [&fuse_dir, &fs] {
            std::fs::create_dir_all(d).unwrap();
        }
        let uri = format!("nbd+unix:///ssdlab?socket={}", server.sock.display());
        let child = Process::new("nbdfuse")
            .arg(&fuse_dir)
            .arg(&uri)
            .stdout(Stdio::null())
            .spawn()
            .expect("nbdfuse starts");
        let mut m = Mounted { fuse_dir, nbdfuse: Some(child), loop_dev: None, fs: None };
        let file = m.fuse_dir.join("nbd");
        let deadline = Instant::now() + Duration::from_secs(30);
        while !file.exists() {
            assert!(Instant::now() < deadline, "nbdfuse did not show {} within 30 s", file.display());
            std::thread::sleep(Duration::from_millis(20));
        }
        let dev = sh("losetup", &["--find", "--show", file.to_str().unwrap()]).trim().to_string();
        m.loop_dev = Some(dev.clone());
        if mkfs {
            sh("mkfs.ext4", &["-q", "-F", &dev]);
        } else {
            // A clean file system: what the last mount wrote came back whole.
            sh("e2fsck", &["-f", "-n", &dev]);
        }
        sh("mount", &[&dev, fs.to_str().unwrap()]);
        m.fs = Some(fs);
        m
    }

    fn dir(&self) -> &Path {
        self.fs.as_deref().expect("mounted")
    }

    /// Unmounts (ext4 writes back and flushes), detaches the loop device and ends nbdfuse.
    fn detach(mut self) {
        self.teardown(true);
    }

    fn teardown(&mut self, strict: bool) {
        let run = |cmd: &str, args: &[&str]| {
            if strict {
                sh(cmd, args);
            } else {
                let _ = Process::new(cmd).args(args).output();
            }
        };
        if let Some(fs) = self.fs.take() {
            run("umount", &[fs.to_str().unwrap()]);
        }
        if let Some(dev) = self.loop_dev.take() {
            run("losetup", &["-d", &dev]);
        }
        if let Some(mut child) = self.nbdfuse.take() {
            run("fusermount3", &["-u", self.fuse_dir.to_str().unwrap()]);
            if !strict {
                let _ = child.kill();
            }
            let status = child.wait().unwrap();
            assert!(!strict || status.success(), "nbdfuse exited with {status}");
        }
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        self.teardown(false);
    }
}

/// Files of `count` pseudo-random sizes and contents (1 KiB to 2 MiB).
fn files(seed: u64, count: usize) -> Vec<(String, Vec<u8>)> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..count)
        .map(|i| {
            let len = rng.random_range(1024..2 << 20);
            (format!("f{seed}-{i}"), (0..len).map(|_| rng.random()).collect())
        })
        .collect()
}

fn write_all(dir: &Path, files: &[(String, Vec<u8>)]) {
    for (name, data) in files {
        std::fs::write(dir.join(name), data).unwrap();
    }
    sh("sync", &["-f", dir.to_str().unwrap()]);
}

fn check_all(dir: &Path, files: &[(String, Vec<u8>)]) {
    for (name, data) in files {
        let back = std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            back == *data,
            "{name}: {} bytes read back differ from the {} written",
            back.len(),
            data.len()
        );
    }
}

#[test]
fn ext4_through_nbdfuse_and_a_loop_device_survives_restarts() {
    if std::env::var_os("SSDLAB_LOOP_TESTS").is_none() {
        eprintln!(
            "skipped: set SSDLAB_LOOP_TESTS=1 to run (root, /dev/fuse, loop devices, nbdfuse, e2fsprogs, fusermount3)"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("nand.img");
    let none = ["--timing", "none"];
    let first = files(1, 24);
    let server = Server::start(dir.path(), &image, &none);
    let m = Mounted::attach(dir.path(), &server, true);
    write_all(m.dir(), &first);
    check_all(m.dir(), &first);
    m.detach();
    server.kill(); // kill -9: only what unmount flushed may be relied on

    let second = files(2, 8);
    let server = Server::start(dir.path(), &image, &none);
    let m = Mounted::attach(dir.path(), &server, false);
    check_all(m.dir(), &first);
    for (name, _) in first.iter().step_by(3) {
        std::fs::remove_file(m.dir().join(name)).unwrap(); // ext4 discards nothing by default
    }
    // Rewritten in place several times: ext4 issues no discards, so the device's GC has to
    // reclaim the old copies (the tiny device has about 77 MiB).
    for _ in 0..12 {
        write_all(m.dir(), &second);
    }
    m.detach();
    let (summary, _) = server.stop(); // a clean shutdown: checkpoint
    assert!(!summary.contains("GC 0 victims"), "GC never ran: {summary}");

    let server = Server::start(dir.path(), &image, &["--timing", "model"]);
    let m = Mounted::attach(dir.path(), &server, false);
    let kept: Vec<_> = first.iter().enumerate().filter(|(i, _)| i % 3 != 0).map(|(_, f)| f.clone()).collect();
    check_all(m.dir(), &kept);
    check_all(m.dir(), &second);
    for (name, _) in first.iter().step_by(3) {
        assert!(!m.dir().join(name).exists(), "{name} was deleted");
    }
    m.detach();
    server.stop();
}
