//! Regression (issue 18): nothing locked the image. A second `nicfs daemon` on an image in use
//! started, re-applied 12,307 journal records to the live file system and ran beside the
//! first; `nicfs mkfs` on it succeeded and the running daemon died of SIGBUS when the file
//! was truncated under its mapping. Now every owner (daemon, mkfs, fsck) takes an exclusive
//! lock first and the others refuse with a clear error, touching nothing.

use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nicfs::mount::{comm_path, open_pm, scratch_dir};
use nicfs_comm::CommRegion;
use nicfs_frontend::{Client, FrontendConfig, Fs, OpenFlags};

mod common;

use common::Daemon;

fn nicfs(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_nicfs"));
    c.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
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

fn refused(out: &Output, what: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{what} succeeded on an image in use: {stderr}");
    assert!(stderr.contains("is in use"), "{what}: no clear error: {stderr}");
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
