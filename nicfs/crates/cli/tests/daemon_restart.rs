//! The back end is a separate process: kill it (SIGKILL) while a front end is attached and
//! writing, start it again, and the front end carries on; every acknowledged write is there
//! and the image is consistent.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use nicfs::mount::{comm_path, open_pm, scratch_dir};
use nicfs_comm::CommRegion;
use nicfs_frontend::{Client, FrontendConfig, Fs, OpenFlags};

fn nicfs(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_nicfs"));
    c.args(args).stdout(Stdio::null()).stderr(Stdio::null());
    c
}

fn start_daemon(pm: &str) -> Child {
    let child = nicfs(&["daemon", "--pm", pm]).spawn().expect("spawn daemon");
    for _ in 0..200 {
        if CommRegion::open(&comm_path(std::path::Path::new(pm)))
            .is_ok_and(|c| c.backend_pid().load(std::sync::atomic::Ordering::Acquire) == child.id() as u64)
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

#[test]
fn front_end_survives_a_back_end_crash_and_restart() {
    let pm_path = scratch_dir().join(format!("nicfs-restart-{}", std::process::id()));
    let pm = pm_path.to_str().unwrap().to_string();
    assert!(nicfs(&["mkfs", "--pm", &pm, "--size", "64MiB"]).status().unwrap().success());
    let mut daemon = start_daemon(&pm);
    let host = open_pm(&pm_path, None).unwrap();
    let comm = Arc::new(CommRegion::open(&comm_path(&pm_path)).unwrap());
    let fs = Fs::new(Client::attach(host, comm, FrontendConfig::default()).unwrap());
    let fd = fs.open("/f", OpenFlags::CREATE, 0o644).unwrap();
    for i in 0..200u64 {
        fs.pwrite(fd, &[i as u8; 1000], i * 1000).unwrap();
        if i == 100 {
            daemon.kill().unwrap();
            daemon.wait().unwrap();
            daemon = start_daemon(&pm);
        }
    }
    let mut buf = vec![0u8; 200_000];
    assert_eq!(fs.pread(fd, &mut buf, 0).unwrap(), 200_000);
    for i in 0..200usize {
        assert!(buf[i * 1000..(i + 1) * 1000].iter().all(|&b| b == i as u8), "record {i}");
    }
    fs.client().sync_all().unwrap();
    drop(fs);
    daemon.kill().unwrap();
    daemon.wait().unwrap();
    let out =
        Command::new(env!("CARGO_BIN_EXE_nicfs")).args(["fsck", "--pm", &pm, "--repair"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let _ = std::fs::remove_file(&pm_path);
    let _ = std::fs::remove_file(comm_path(&pm_path));
}

#[test]
fn a_killed_front_end_leaves_a_consistent_file_system() {
    let pm_path = scratch_dir().join(format!("nicfs-fekill-{}", std::process::id()));
    let pm = pm_path.to_str().unwrap().to_string();
    assert!(nicfs(&["mkfs", "--pm", &pm, "--size", "64MiB"]).status().unwrap().success());
    let mut ack = pm_path.as_os_str().to_owned();
    ack.push(".acks");
    nicfs::mpcheck::AckArray::open(std::path::Path::new(&ack), true).unwrap();
    let mut daemon = start_daemon(&pm);
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
    daemon.kill().unwrap();
    daemon.wait().unwrap();
    let out =
        Command::new(env!("CARGO_BIN_EXE_nicfs")).args(["fsck", "--pm", &pm, "--repair"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    for p in [pm_path.clone(), comm_path(&pm_path), std::path::PathBuf::from(&ack)] {
        let _ = std::fs::remove_file(p);
    }
}
