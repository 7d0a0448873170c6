//! Regression (issue 18): nothing locked the image. A second `nicfs daemon` on an image in use
//! started, re-applied 12,307 journal records to the live file system and ran beside the
//! first; `nicfs mkfs` on it succeeded and the running daemon died of SIGBUS when the file
//! was truncated under its mapping. Now every owner (daemon, mkfs, fsck) takes an exclusive
//! lock first and the others refuse with a clear error, touching nothing.
//!
//! Regression (issue 28): a mounted front end held nothing. While it waited for a back end that
//! had died, `nicfs mkfs` reformatted the image under it (the mount listed the old files, reads
//! returned zeros, writes failed with EIO, every file was gone) and `fsck --repair` was
//! accepted too. Now a front end holds the image for its lifetime against the tools that
//! rewrite it, while a new back end may still start. And the refusals printed a 20-frame
//! backtrace when `RUST_BACKTRACE=1` was set; a user error is one line whatever the environment.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nicfs::mount::{comm_path, open_pm, scratch_dir};
use nicfs_comm::CommRegion;
use nicfs_frontend::{Client, FrontendConfig, Fs, OpenFlags};

mod common;

use common::Daemon;

/// `nicfs args` with its output captured, and `RUST_BACKTRACE=1` set as a developer's shell
/// might have it: a refusal must still be one line.
fn nicfs(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_nicfs"));
    c.args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).env("RUST_BACKTRACE", "1");
    c
}

/// Runs `cmd` and waits up to 10 s for it to exit (a tool that does not refuse keeps running:
/// it is killed and the test fails).
fn run_bounded(mut cmd: Command) -> Output {
    let mut child = cmd.spawn().expect("spawn nicfs");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(10) {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "still running after 10 s, so it did not refuse: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// `out` is a refusal: a failure whose standard error is one line, without a backtrace.
fn one_line_error(out: &Output, what: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{what} succeeded: {stderr}");
    assert!(!stderr.to_lowercase().contains("backtrace"), "{what}: a backtrace:\n{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{what}: not one line:\n{stderr}");
    stderr
}

fn refused(out: &Output, what: &str) {
    let stderr = one_line_error(out, what);
    assert!(stderr.contains("is in use"), "{what}: no clear error: {stderr}");
}

/// A formatted 64 MiB image `nicfs-{name}-{pid}` on scratch space; its files are removed on
/// drop.
struct Image(std::path::PathBuf);

impl Image {
    fn new(name: &str) -> Image {
        let img = Image(scratch_dir().join(format!("nicfs-{name}-{}", std::process::id())));
        let out = nicfs(&["mkfs", "--pm", img.pm(), "--size", "64MiB"]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        img
    }

    fn pm(&self) -> &str {
        self.0.to_str().unwrap()
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        for ext in ["", ".comm", ".acks"] {
            let mut p = self.0.as_os_str().to_owned();
            p.push(ext);
            let _ = std::fs::remove_file(p);
        }
    }
}

/// A front-end process (`nicfs mp-worker`, which attaches as `nicfs mount` does), killed on
/// drop.
struct FrontEnd(Child);

impl FrontEnd {
    /// Starts one writing a shared file for a long time and waits until it holds a log space.
    fn start(img: &Image) -> FrontEnd {
        let mut acks = img.path().as_os_str().to_owned();
        acks.push(".acks");
        nicfs::mpcheck::AckArray::open(Path::new(&acks), true).unwrap();
        let args = ["mp-worker", "--pm", img.pm(), "--id", "0", "--workers", "1", "--mode", "shared"];
        let mut c = nicfs(&[&args[..], &["--ops", "100000000", "--seed", "1"]].concat());
        c.stdout(Stdio::null()).stderr(Stdio::null());
        let fe = FrontEnd(c.spawn().unwrap());
        let comm = CommRegion::open(&comm_path(img.path())).unwrap();
        let me = fe.0.id() as u64;
        for _ in 0..500 {
            if (0..nicfs_comm::MAX_SLOTS)
                .any(|i| comm.slot(i).owner.load(std::sync::atomic::Ordering::Acquire) == me)
            {
                std::thread::sleep(Duration::from_millis(200)); // and has written a while
                return fe;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the front end did not attach");
    }
}

impl Drop for FrontEnd {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn regression_issue_28_a_front_end_waiting_for_its_back_end_holds_the_image() {
    let img = Image::new("felock");
    let mut daemon = Daemon::start(img.pm(), &[]);
    let mut fe = FrontEnd::start(&img);
    daemon.kill();
    // The front end now waits (60 s by default) for a new back end: nobody owns the image.
    let pid = fe.0.id().to_string();
    for (what, args) in [
        ("mkfs", &["mkfs", "--pm", img.pm(), "--size", "64MiB"][..]),
        ("fsck --repair", &["fsck", "--repair", "--pm", img.pm()][..]),
    ] {
        let stderr = one_line_error(&run_bounded(nicfs(args)), what);
        assert!(
            stderr.contains("mounted") && stderr.contains(&pid),
            "{what}: the holder is not named: {stderr}"
        );
    }
    // A new back end may start, and the front end carries on with it.
    let mut daemon = Daemon::start(img.pm(), &[]);
    std::thread::sleep(Duration::from_millis(500));
    assert!(fe.0.try_wait().unwrap().is_none(), "the front end died");
    assert!(daemon.is_running());
    // The front end's hold ends with it, even killed.
    drop(fe);
    daemon.kill();
    let out = run_bounded(nicfs(&["fsck", "--repair", "--pm", img.pm()]));
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&out.stdout));
    let out = run_bounded(nicfs(&["mkfs", "--pm", img.pm(), "--size", "64MiB"]));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn regression_issue_28_refusals_are_one_line_even_with_rust_backtrace_set() {
    let img = Image::new("oneline");
    let _daemon = Daemon::start(img.pm(), &[]);
    let mnt = scratch_dir().join(format!("nicfs-oneline-mnt-{}", std::process::id()));
    let mnt = mnt.to_str().unwrap();
    refused(&run_bounded(nicfs(&["daemon", "--pm", img.pm()])), "daemon");
    refused(&run_bounded(nicfs(&["mkfs", "--pm", img.pm(), "--size", "64MiB"])), "mkfs");
    refused(&run_bounded(nicfs(&["mount", "--pm", img.pm(), "--with-daemon", mnt])), "mount --with-daemon");
    // A mount with no back end to attach to.
    let idle = Image::new("oneline-idle");
    let stderr = one_line_error(&run_bounded(nicfs(&["mount", "--pm", idle.pm(), mnt])), "mount");
    assert!(stderr.contains("nicfs daemon"), "{stderr}");
}

#[test]
fn regression_issue_18_a_second_owner_of_an_image_in_use_is_refused() {
    let pm_path = scratch_dir().join(format!("nicfs-lock-{}", std::process::id()));
    let pm = pm_path.to_str().unwrap().to_string();
    assert!(nicfs(&["mkfs", "--pm", &pm, "--size", "64MiB"]).output().unwrap().status.success());
    let mut daemon = Daemon::start(&pm, &[]);
    let host = open_pm(&pm_path, None).unwrap();
    let comm = Arc::new(CommRegion::open(&comm_path(&pm_path)).unwrap());
    let fs = Fs::new(Client::attach(host, comm, FrontendConfig::default()).unwrap());
    let fd = fs.open("/kept", OpenFlags::CREATE, 0o644).unwrap();
    fs.pwrite(fd, b"still here", 0).unwrap();

    refused(&run_bounded(nicfs(&["daemon", "--pm", &pm])), "a second daemon");
    refused(&run_bounded(nicfs(&["mkfs", "--pm", &pm, "--size", "64MiB"])), "mkfs");
    refused(&run_bounded(nicfs(&["fsck", "--pm", &pm])), "fsck");

    // The first daemon and its front end carry on with their data intact.
    assert!(daemon.is_running(), "the running daemon died");
    fs.pwrite(fd, b"!", 10).unwrap();
    fs.client().sync_all().unwrap();
    let mut buf = [0u8; 11];
    assert_eq!(fs.pread(fd, &mut buf, 0).unwrap(), 11);
    assert_eq!(&buf, b"still here!");
    drop(fs);
    daemon.kill();
    // The lock dies with its owner, even a killed one.
    let out = run_bounded(nicfs(&["fsck", "--pm", &pm]));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let _ = std::fs::remove_file(&pm_path);
    let _ = std::fs::remove_file(comm_path(&pm_path));
}
