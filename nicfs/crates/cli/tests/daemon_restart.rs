//! The back end is a separate process: kill it (SIGKILL) while a front end is attached and
//! writing, start it again, and the front end carries on; every acknowledged write is there
//! and the image is consistent.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use nicfs::mount::{comm_path, open_pm, scratch_dir};
use nicfs_comm::CommRegion;
use nicfs_frontend::{Client, FrontendConfig, Fs, OpenFlags};

mod common;

use common::{Daemon, nicfs};

/// Stops `daemon`, checks the image with `fsck --repair` (it must be clean) and removes the
/// image's files and `extra`.
fn finish(mut daemon: Daemon, pm_path: &std::path::Path, extra: &[PathBuf]) {
    daemon.kill();
    let out = Command::new(env!("CARGO_BIN_EXE_nicfs"))
        .args(["fsck", "--repair", "--pm"])
        .arg(pm_path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    for p in [pm_path.to_path_buf(), comm_path(pm_path)].iter().chain(extra) {
        let _ = std::fs::remove_file(p);
    }
}

/// A formatted 64 MiB image `nicfs-{name}-{pid}`, a daemon on it (with `daemon_args`) and a
/// front end attached with `fe`.
fn image_with_daemon(name: &str, daemon_args: &[&str], fe: FrontendConfig) -> (PathBuf, String, Daemon, Fs) {
    let pm_path = scratch_dir().join(format!("nicfs-{name}-{}", std::process::id()));
    let pm = pm_path.to_str().unwrap().to_string();
    assert!(nicfs(&["mkfs", "--pm", &pm, "--size", "64MiB"]).status().unwrap().success());
    let daemon = Daemon::start(&pm, daemon_args);
    let host = open_pm(&pm_path, None).unwrap();
    let comm = Arc::new(CommRegion::open(&comm_path(&pm_path)).unwrap());
    let fs = Fs::new(Client::attach(host, comm, fe).unwrap());
    (pm_path, pm, daemon, fs)
}

#[test]
fn front_end_survives_a_back_end_crash_and_restart() {
    let (pm_path, pm, mut daemon, fs) = image_with_daemon("restart", &[], FrontendConfig::default());
    let fd = fs.open("/f", OpenFlags::CREATE, 0o644).unwrap();
    for i in 0..200u64 {
        fs.pwrite(fd, &[i as u8; 1000], i * 1000).unwrap();
        if i == 100 {
            daemon.kill();
            daemon = Daemon::start(&pm, &[]);
        }
    }
    let mut buf = vec![0u8; 200_000];
    assert_eq!(fs.pread(fd, &mut buf, 0).unwrap(), 200_000);
    for i in 0..200usize {
        assert!(buf[i * 1000..(i + 1) * 1000].iter().all(|&b| b == i as u8), "record {i}");
    }
    fs.client().sync_all().unwrap();
    drop(fs);
    finish(daemon, &pm_path, &[]);
}

#[test]
fn a_killed_front_end_leaves_a_consistent_file_system() {
    let pm_path = scratch_dir().join(format!("nicfs-fekill-{}", std::process::id()));
    let pm = pm_path.to_str().unwrap().to_string();
    assert!(nicfs(&["mkfs", "--pm", &pm, "--size", "64MiB"]).status().unwrap().success());
    let mut ack = pm_path.as_os_str().to_owned();
    ack.push(".acks");
    nicfs::mpcheck::AckArray::open(std::path::Path::new(&ack), true).unwrap();
    let daemon = Daemon::start(&pm, &[]);
    // A worker process writing the shared file, killed in the middle of its run.
    let mut worker = nicfs(&[
        "mp-worker",
        "--pm",
        &pm,
        "--id",
        "0",
        "--workers",
        "1",
        "--mode",
        "shared",
        "--ops",
        "1000000",
        "--seed",
        "1",
    ])
    .spawn()
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    worker.kill().unwrap();
    worker.wait().unwrap();
    // Another front end can take over the file (the dead writer's log is applied first).
    let host = open_pm(&pm_path, None).unwrap();
    let comm = Arc::new(CommRegion::open(&comm_path(&pm_path)).unwrap());
    let fs = Fs::new(Client::attach(host, comm, FrontendConfig::default()).unwrap());
    let fd = fs.open("/shared", OpenFlags::RDWR, 0).unwrap();
    fs.pwrite(fd, b"after", 0).unwrap();
    let mut b = [0u8; 5];
    fs.pread(fd, &mut b, 0).unwrap();
    assert_eq!(&b, b"after");
    fs.client().sync_all().unwrap();
    drop(fs);
    finish(daemon, &pm_path, &[PathBuf::from(&ack)]);
}

/// Regression (issue 18): after kill -9 of the daemon every operation, reads of old files
/// included, returned EIO (a front end gave up one second after the back end's process died),
/// and one writer got a short write (61,440 of 65,536 bytes). Now reads of applied data go on
/// without the back end, other calls wait for it to be restarted (bounded), and a write is
/// whole or an error.
#[test]
fn regression_issue_18_front_ends_wait_for_a_restarted_back_end() {
    let cfg_path = scratch_dir().join(format!("nicfs-wait-{}.toml", std::process::id()));
    std::fs::write(&cfg_path, "lease_ms = 100\n").unwrap();
    let cfg = cfg_path.to_str().unwrap().to_string();
    let fe = FrontendConfig { backend_wait_ms: 60_000, max_record_bytes: 4096, ..FrontendConfig::default() };
    let (pm_path, pm, mut daemon, fs) = image_with_daemon("wait", &["--config", &cfg], fe);
    let old: Vec<u8> = (0..65536u32).map(|i| (i % 251) as u8).collect();
    let fd = fs.open("/old", OpenFlags::CREATE, 0o644).unwrap();
    assert_eq!(fs.pwrite(fd, &old, 0).unwrap(), old.len());
    fs.client().sync_all().unwrap();
    daemon.kill();
    // Leases have expired and the back end has been gone for longer than the old cut-off.
    std::thread::sleep(Duration::from_millis(1500));
    let mut back = vec![0u8; old.len()];
    assert_eq!(fs.pread(fd, &mut back, 0).unwrap(), old.len(), "a read of applied data without the back end");
    assert_eq!(back, old);
    assert_eq!(fs.stat("/old").unwrap().size, old.len() as u64);
    let restart = std::thread::spawn({
        let (pm, cfg) = (pm.clone(), cfg.clone());
        move || {
            std::thread::sleep(Duration::from_millis(1000));
            Daemon::start(&pm, &["--config", &cfg])
        }
    });
    // Sixteen records, logged once a new back end grants the leases and the reservation.
    let new: Vec<u8> = old.iter().map(|b| b ^ 0x5a).collect();
    let fd2 = fs.open("/new", OpenFlags::CREATE, 0o644).unwrap();
    assert_eq!(fs.pwrite(fd2, &new, 0).unwrap(), new.len(), "the write must wait and be whole");
    let daemon = restart.join().unwrap();
    fs.client().sync_all().unwrap();
    assert_eq!(fs.pread(fd2, &mut back, 0).unwrap(), new.len());
    assert_eq!(back, new);
    drop(fs);
    finish(daemon, &pm_path, &[cfg_path]);
}

/// The wait is bounded: with no back end coming back, a call that needs one fails with EIO.
#[test]
fn a_back_end_that_stays_away_fails_calls_after_the_bound() {
    let fe = FrontendConfig { backend_wait_ms: 300, ..FrontendConfig::default() };
    let (pm_path, _pm, mut daemon, fs) = image_with_daemon("away", &[], fe);
    daemon.kill();
    let e = fs.open("/f", OpenFlags::CREATE, 0o644).unwrap_err();
    assert_eq!(e.errno(), 5, "{e}");
    assert!(e.to_string().contains("did not come back"), "{e}");
    drop(fs);
    for p in [pm_path.clone(), comm_path(&pm_path)] {
        let _ = std::fs::remove_file(p);
    }
}
