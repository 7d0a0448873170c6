//! `nicfs mpcheck`: start a back end, spawn worker processes, add up their reports.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use anyhow::{Result, bail};
use nicfs::mount::{comm_path, scratch_dir};
use nicfs::mpcheck::{AckArray, Mode, WorkerReport};
use nicfs_backend::BackendConfig;
use nicfs_layout::FormatConfig;
use nicfs_pm::{FastPm, MappedFile};
use nicfs_store::mkfs;

use crate::cmd::start_backend;

pub(crate) fn parse_mode(s: &str) -> Result<Mode> {
    match s {
        "private" => Ok(Mode::Private),
        "shared" => Ok(Mode::Shared),
        "overlap" => Ok(Mode::Overlap),
        other => bail!("unknown mode {other:?} (private, shared or overlap)"),
    }
}

pub(crate) fn ack_path(pm: &Path) -> PathBuf {
    let mut s = pm.as_os_str().to_owned();
    s.push(".acks");
    PathBuf::from(s)
}

pub(crate) fn mpcheck(workers: u64, mode: &str, ops: u64, seed: u64) -> Result<()> {
    parse_mode(mode)?;
    if workers == 0 || workers > 8 {
        bail!("--workers must be in 1..=8");
    }
    let pm = scratch_dir().join(format!("nicfs-mpcheck-{}", std::process::id()));
    let fmt = FormatConfig {
        size_bytes: 64 << 20,
        inodes: 1024,
        log_spaces: 8,
        log_headers: 1024,
        log_data_bytes: 1 << 20,
        journal_blocks: 64,
    };
    mkfs(&FastPm::new(MappedFile::create(&pm, fmt.size_bytes)?), &fmt, seed)?;
    let _ = std::fs::remove_file(comm_path(&pm));
    let _acks = AckArray::open(&ack_path(&pm), true)?;
    let mut cfg = BackendConfig { lease_ms: 500, ..BackendConfig::free() };
    if std::env::var("NICFS_NOCACHE").is_ok() {
        cfg.index_cache_lines = 0;
    }
    if std::env::var("NICFS_NOPIPE").is_ok() {
        cfg.pipeline = false;
    }
    let (be, _lock) = start_backend(&pm, cfg, false)?;
    let exe = std::env::current_exe()?;
    let children: Vec<_> = (0..workers)
        .map(|id| {
            std::process::Command::new(&exe)
                .args(["mp-worker", "--pm"])
                .arg(&pm)
                .args(["--id", &id.to_string(), "--workers", &workers.to_string(), "--mode", mode])
                .args(["--ops", &ops.to_string(), "--seed", &seed.to_string()])
                .stdout(std::process::Stdio::piped())
                .spawn()
        })
        .collect::<std::io::Result<_>>()?;
    let mut total = WorkerReport::default();
    let mut failed = 0;
    for (id, c) in children.into_iter().enumerate() {
        let out = c.wait_with_output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        match serde_json::from_str::<WorkerReport>(text.trim()) {
            Ok(r) => {
                if let Some(p) = &r.first_problem {
                    println!("worker {id}: {p}");
                }
                total.reads += r.reads;
                total.writes += r.writes;
                total.stale += r.stale;
                total.torn += r.torn;
                total.errors += r.errors;
            }
            Err(_) => {
                failed += 1;
                println!("worker {id} failed: status {}, output {text:?}", out.status);
            }
        }
    }
    let c = &be.shared().counters;
    println!(
        "mpcheck {mode}: {workers} processes, {} writes, {} reads checked, {} stale, {} torn, {} errors, {} failed workers; back end: {} records, {} lease grants, {} revocations",
        total.writes,
        total.reads,
        total.stale,
        total.torn,
        total.errors,
        failed,
        c.records.load(Ordering::Relaxed),
        c.grants.load(Ordering::Relaxed),
        c.revocations.load(Ordering::Relaxed)
    );
    be.stop();
    for p in [pm.clone(), comm_path(&pm), ack_path(&pm)] {
        let _ = std::fs::remove_file(p);
    }
    if total.stale + total.torn + total.errors > 0 || failed > 0 {
        bail!("multi-process check failed");
    }
    Ok(())
}
