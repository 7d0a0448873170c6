//! Front end + back end in one process: the POSIX-like API end to end, before and after the
//! back end applies the logs, plus restart recovery.

use std::sync::Arc;

use nicfs_backend::{Backend, BackendConfig, DirectLink, open};
use nicfs_comm::CommRegion;
use nicfs_frontend::{Client, FrontendConfig, Fs, FsError, OpenFlags};
use nicfs_layout::FormatConfig;
use nicfs_pm::{FastPm, MappedFile, SharedPm};
use nicfs_store::{Space, fsck, mkfs};

fn pm(cfg: &FormatConfig) -> SharedPm {
    let pm: SharedPm = Arc::new(FastPm::new(MappedFile::anonymous(cfg.size_bytes).unwrap()));
    mkfs(pm.as_ref(), cfg, 7).unwrap();
    pm
}

fn exercise(fs: &Fs) {
    fs.mkdir("/d", 0o755).unwrap();
    let fd = fs.open("/d/f", OpenFlags::CREATE, 0o644).unwrap();
    let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
    assert_eq!(fs.write(fd, &data).unwrap(), data.len());
    let mut back = vec![0u8; data.len()];
    assert_eq!(fs.pread(fd, &mut back, 0).unwrap(), data.len());
    assert_eq!(back, data, "read-your-writes before the back end applies");
    fs.pwrite(fd, b"HELLO", 4090).unwrap();
    fs.ftruncate(fd, 5000).unwrap();
    fs.pwrite(fd, b"tail", 6000).unwrap();
    let st = fs.fstat(fd).unwrap();
    assert_eq!(st.size, 6004);
    let mut b = vec![0u8; 6004];
    fs.pread(fd, &mut b, 0).unwrap();
    assert_eq!(&b[4090..4095], b"HELLO");
    assert!(b[5000..6000].iter().all(|&x| x == 0));
    assert_eq!(&b[6000..], b"tail");
    fs.close(fd).unwrap();
    fs.rename("/d/f", "/g").unwrap();
    assert!(matches!(fs.stat("/d/f"), Err(FsError::NotFound)));
    assert_eq!(fs.stat("/g").unwrap().size, 6004);
    assert!(fs.rmdir("/").is_err());
    fs.rmdir("/d").unwrap();
    let names: Vec<_> = fs.readdir("/").unwrap().into_iter().map(|e| e.name).collect();
    assert_eq!(names, vec![b"g".to_vec()]);
    let fd = fs.open("/h", OpenFlags::CREATE, 0o600).unwrap();
    fs.write(fd, b"x").unwrap();
    fs.unlink("/h").unwrap();
    assert!(matches!(fs.stat("/h"), Err(FsError::NotFound)));
}

#[test]
fn threaded_back_end_applies_logs_and_recovery_is_clean() {
    let cfg = FormatConfig::small(16 << 20);
    let pm = pm(&cfg);
    let comm = Arc::new(CommRegion::anonymous().unwrap());
    let be = Backend::start(pm.clone(), comm.clone(), BackendConfig::free()).unwrap();
    let fs = Fs::new(Client::attach(pm.clone(), comm.clone(), FrontendConfig::default()).unwrap());
    exercise(&fs);
    fs.client().sync_all().unwrap();
    assert_eq!(fs.client().pending_records(), 0);
    let mut b = vec![0u8; 4];
    let fd = fs.open("/g", OpenFlags::READ, 0).unwrap();
    fs.pread(fd, &mut b, 6000).unwrap();
    assert_eq!(&b, b"tail", "reads after the back end applied the log");
    drop(fs);
    be.stop();
    let r = fsck(&Space::open(pm.clone()).unwrap());
    assert!(r.is_clean(), "{:?}", r.problems);
    let (_sh, rep) = open(pm.clone(), comm, BackendConfig::free()).unwrap();
    assert!(rep.errors.is_empty());
}

#[test]
fn direct_link_runs_single_threaded() {
    let cfg = FormatConfig::small(16 << 20);
    let pm = pm(&cfg);
    let comm = Arc::new(CommRegion::anonymous().unwrap());
    let (sh, _) = open(pm.clone(), comm.clone(), BackendConfig::free()).unwrap();
    let link = Box::new(DirectLink::new(sh.clone(), 0));
    let fs = Fs::new(Client::attach_with(pm.clone(), comm, 0, link, FrontendConfig::default()).unwrap());
    exercise(&fs);
    assert!(fs.client().pending_records() > 0);
    fs.client().sync_all().unwrap();
    assert_eq!(fs.client().pending_records(), 0);
    let r = fsck(&Space::open(pm.clone()).unwrap());
    assert!(r.is_clean(), "{:?}", r.problems);
}

#[test]
fn full_log_applies_back_pressure_instead_of_failing() {
    let mut cfg = FormatConfig::small(16 << 20);
    cfg.log_headers = 64;
    cfg.log_data_bytes = 64 << 10;
    let pm = pm(&cfg);
    let comm = Arc::new(CommRegion::anonymous().unwrap());
    let be = Backend::start(pm.clone(), comm.clone(), BackendConfig::free()).unwrap();
    let fs = Fs::new(Client::attach(pm.clone(), comm.clone(), FrontendConfig::default()).unwrap());
    let fd = fs.open("/big", OpenFlags::CREATE, 0o644).unwrap();
    // 2 MiB through a 64 KiB log with 64 headers: must wait for the back end, never fail.
    for i in 0..512u64 {
        fs.pwrite(fd, &[(i % 200) as u8; 4096], i * 4096).unwrap();
    }
    let mut b = [0u8; 4096];
    fs.pread(fd, &mut b, 300 * 4096).unwrap();
    assert!(b.iter().all(|&x| x == 100));
    drop(fs);
    be.stop();
}

/// A tiny log that wraps hundreds of times: random overwrites, extensions and truncations
/// are checked against a byte model while the back end applies concurrently, after a full
/// drain, and after a restart (recovery). The seed is printed on failure.
#[test]
fn log_wraps_many_times_without_losing_data() {
    let mut cfg = FormatConfig::small(16 << 20);
    cfg.log_headers = 64;
    cfg.log_data_bytes = 64 << 10;
    for seed in [1u64, 2, 3] {
        let pm = pm(&cfg);
        let comm = Arc::new(CommRegion::anonymous().unwrap());
        let be = Backend::start(pm.clone(), comm.clone(), BackendConfig::free()).unwrap();
        let fs = Fs::new(Client::attach(pm.clone(), comm.clone(), FrontendConfig::default()).unwrap());
        let fd = fs.open("/f", OpenFlags::CREATE, 0o644).unwrap();
        let mut model: Vec<u8> = Vec::new();
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n.max(1)
        };
        for i in 0..600u64 {
            match next(10) {
                0 => {
                    let size = next(150_000);
                    fs.ftruncate(fd, size).unwrap();
                    model.resize(size as usize, 0);
                }
                1..=6 => {
                    let off = next(150_000);
                    let len = 1 + next(20_000) as usize;
                    let data: Vec<u8> = (0..len).map(|k| (i as usize * 31 + k) as u8).collect();
                    fs.pwrite(fd, &data, off).unwrap();
                    if model.len() < off as usize + len {
                        model.resize(off as usize + len, 0);
                    }
                    model[off as usize..off as usize + len].copy_from_slice(&data);
                }
                _ => {
                    let off = next(model.len() as u64 + 1);
                    let mut buf = vec![0u8; 1 + next(30_000) as usize];
                    let n = fs.pread(fd, &mut buf, off).unwrap();
                    let end = (off as usize + buf.len()).min(model.len());
                    assert_eq!(&buf[..n], &model[off as usize..end], "seed {seed} op {i}: read at {off}");
                }
            }
        }
        fs.client().sync_all().unwrap();
        let mut all = vec![0u8; model.len()];
        assert_eq!(fs.pread(fd, &mut all, 0).unwrap(), model.len());
        assert!(all == model, "seed {seed}: content after drain");
        drop(fs);
        be.stop();
        let (_sh, rep) = nicfs_backend::open(pm.clone(), comm, BackendConfig::free()).unwrap();
        assert!(rep.errors.is_empty() && rep.rejected == 0, "seed {seed}: {rep:?}");
        let r = fsck(&Space::open(pm).unwrap());
        assert!(r.is_clean(), "seed {seed}: {:?}", r.problems);
    }
}

/// Regression (issue 18): space was not reserved when a write was logged. `dd` of 800 MiB
/// into 746 MiB free exited 0 and reported 838,860,800 bytes written; the file ended at
/// 780,955,648 bytes and the daemon logged 179 `rejected update ... no space left on device`.
/// Now the writer gets ENOSPC, every acknowledged byte is in the file, the back end rejects
/// nothing, and freeing space (even by a record still in the log) makes room again.
#[test]
fn regression_issue_18_a_full_file_system_fails_the_write_not_the_apply() {
    let cfg = FormatConfig::small(4 << 20);
    let pm = pm(&cfg);
    let comm = Arc::new(CommRegion::anonymous().unwrap());
    let (sh, _) = open(pm.clone(), comm.clone(), BackendConfig::free()).unwrap();
    let link = Box::new(DirectLink::new(sh.clone(), 0));
    let fs =
        Fs::new(Client::attach_with(pm.clone(), comm.clone(), 0, link, FrontendConfig::default()).unwrap());
    let fd = fs.open("/big", OpenFlags::CREATE, 0o644).unwrap();
    let chunk: Vec<u8> = (0..65536u32).map(|i| (i % 253) as u8).collect();
    let mut acked = 0u64;
    let err = loop {
        match fs.pwrite(fd, &chunk, acked) {
            Ok(n) => acked += n as u64,
            Err(e) => break e,
        }
        assert!(acked < 64 << 20, "a 4 MiB file system took 64 MiB");
    };
    assert!(matches!(err, FsError::NoSpace), "the writer must see ENOSPC, got {err:?}");
    assert!(acked > 1 << 20, "only {acked} bytes fit");
    fs.client().sync_all().unwrap();
    let rejected = sh.counters.rejected.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(rejected, 0, "the back end rejected acknowledged records");
    assert_eq!(fs.fstat(fd).unwrap().size, acked);
    let mut back = vec![0u8; chunk.len()];
    for off in (0..acked).step_by(chunk.len()) {
        fs.pread(fd, &mut back, off).unwrap();
        assert_eq!(back, chunk, "acknowledged data at {off}");
    }
    // A small write still fails; removing the file (logged, not yet applied) makes room.
    let fd2 = fs.open("/small", OpenFlags::CREATE, 0o644).unwrap();
    assert!(matches!(fs.pwrite(fd2, &chunk, 0), Err(FsError::NoSpace)));
    fs.close(fd).unwrap();
    fs.unlink("/big").unwrap();
    assert_eq!(fs.pwrite(fd2, &chunk, 0).unwrap(), chunk.len());
    fs.client().sync_all().unwrap();
    drop(fs);
    assert_eq!(sh.counters.rejected.load(std::sync::atomic::Ordering::Relaxed), 0);
    assert_eq!(sh.reserved_blocks(), 0, "every reservation came back");
    let f = fsck(&Space::open(pm).unwrap());
    assert!(f.is_clean(), "{:?}", f.problems);
}
