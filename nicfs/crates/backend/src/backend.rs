//! Starting, recovering and stopping the back end.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use nicfs_comm::CommRegion;
use nicfs_pm::SharedPm;
use nicfs_store::{Engine, FsError, JournalStats, LineCache, LogSpace, Space, replay_journal};

use crate::copy::CopyEngine;
use crate::cores::CorePool;
use crate::dma::DmaPm;
use crate::shared::{Counters, LogState, Shared};
use crate::{BackendConfig, control, pipeline};

/// What mount-time recovery did.
#[derive(Clone, Debug, Default)]
pub struct RecoveryReport {
    /// Journal replay.
    pub journal: JournalStats,
    /// Batches replayed per log space.
    pub batches: Vec<u64>,
    /// Records rejected while replaying.
    pub rejected: u64,
    /// Logs that could not be replayed (corrupt), with the reason.
    pub errors: Vec<String>,
}

/// Opens the file system for the back end and recovers it: re-applies a committed journal
/// transaction, then replays every log from its head (checking payload checksums). Recovery
/// is idempotent. Corrupt logs are quarantined and reported, never followed.
pub fn open(
    host: SharedPm,
    comm: Arc<CommRegion>,
    cfg: BackendConfig,
) -> Result<(Arc<Shared>, RecoveryReport), FsError> {
    open_with(host, comm, cfg, true)
}

/// Like [`open`]; with `replay_logs == false` only the journal is replayed and the logs are
/// left for the pipelines to apply (used to measure drain throughput).
pub fn open_with(
    host: SharedPm,
    comm: Arc<CommRegion>,
    cfg: BackendConfig,
    replay_logs: bool,
) -> Result<(Arc<Shared>, RecoveryReport), FsError> {
    let dma: SharedPm = Arc::new(DmaPm::new(host.clone(), cfg.dma.clone()));
    open_parts(host.clone(), dma, host, comm, cfg, replay_logs)
}

/// Like [`open_with`], with the two ways the back end reaches PM given separately: `nic` for
/// everything the NIC reads and writes over its DMA channel, `copy` for the host copy engine
/// that moves bulk data. [`open_with`] passes the DMA cost model over `host` and `host`; a
/// timed model passes its own metered views. `host` is only read for the superblock.
pub fn open_parts(
    host: SharedPm,
    nic: SharedPm,
    copy: SharedPm,
    comm: Arc<CommRegion>,
    cfg: BackendConfig,
    replay_logs: bool,
) -> Result<(Arc<Shared>, RecoveryReport), FsError> {
    cfg.validate().map_err(|e| FsError::Backend(e.to_string()))?;
    let (host_space, sb) = Space::open_checked(host.clone())?;
    if let Some(e) = &sb.primary {
        eprintln!(
            "nicfs-backend: primary superblock unusable ({e}): using the backup; run `nicfs fsck --repair`"
        );
    }
    let geo = *host_space.geo_ref();
    let dma = nic;
    let mut report =
        RecoveryReport { journal: replay_journal(dma.as_ref(), &geo)?, ..RecoveryReport::default() };
    let space = host_space.with_pm(dma.clone());
    let cache = Arc::new(LineCache::new(cfg.index_cache_lines));
    let engine = Engine::new(space.clone(), cache.clone())?;
    let mut logs = Vec::new();
    let mut bad = Vec::new();
    for i in 0..geo.log_spaces {
        let ls = match LogSpace::open(&space, i) {
            Ok(ls) => ls,
            Err(e) => {
                bad.push((i as usize, e));
                LogSpace { index: i, geo: geo.log_space(i) }
            }
        };
        logs.push(LogState {
            ls,
            quarantined: AtomicBool::new(false),
            error: Mutex::new(None),
            inline: Mutex::new(()),
        });
    }
    let sh = Arc::new(Shared {
        cores: CorePool::new(cfg.workers, cfg.slowdown),
        cfg,
        dma,
        space,
        engine: Mutex::new(engine),
        cache,
        copy: CopyEngine::new(copy),
        comm,
        logs,
        stop: AtomicBool::new(false),
        lease_lock: Mutex::new(()),
        counters: Counters::default(),
    });
    for (i, e) in bad {
        sh.quarantine(i, &e);
    }
    for i in 0..sh.logs.len() {
        if sh.is_quarantined(i) || !replay_logs {
            report.batches.push(0);
            continue;
        }
        let before = sh.counters.rejected.load(Ordering::Relaxed);
        match sh.drain_inline(i, true) {
            Ok(n) => report.batches.push(n),
            Err(_) => report.batches.push(0),
        }
        report.rejected += sh.counters.rejected.load(Ordering::Relaxed) - before;
    }
    sh.recount_reservations();
    for l in &sh.logs {
        if let Some(e) = l.error.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            report.errors.push(format!("log {}: {e}", l.ls.index));
        }
    }
    sh.comm.seqlocks().reset_all();
    sh.comm.backend_pid().store(std::process::id() as u64, Ordering::Release);
    Ok((sh, report))
}

/// A running back end: one pipeline per log space plus the control thread.
pub struct Backend {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    report: RecoveryReport,
}

impl Backend {
    /// Recovers the file system and starts the threads.
    pub fn start(host: SharedPm, comm: Arc<CommRegion>, cfg: BackendConfig) -> Result<Backend, FsError> {
        Backend::start_with(host, comm, cfg, true)
    }

    /// Like [`start`](Self::start); `replay_logs == false` leaves log replay to the pipelines.
    pub fn start_with(
        host: SharedPm,
        comm: Arc<CommRegion>,
        cfg: BackendConfig,
        replay_logs: bool,
    ) -> Result<Backend, FsError> {
        let (shared, report) = open_with(host, comm, cfg, replay_logs)?;
        let mut threads = Vec::new();
        for slot in 0..shared.logs.len() {
            let spawned =
                pipeline::spawn(&shared, slot).map_err(|e| FsError::Backend(format!("cannot spawn: {e}")));
            match spawned {
                Ok(t) => threads.extend(t),
                Err(e) => {
                    shared.stop.store(true, Ordering::Release);
                    threads.into_iter().for_each(|t| drop(t.join()));
                    return Err(e);
                }
            }
        }
        let sh = shared.clone();
        threads.push(
            std::thread::Builder::new()
                .name("nicfs-control".into())
                .spawn(move || control::control_loop(sh))
                .map_err(|e| FsError::Backend(format!("cannot spawn: {e}")))?,
        );
        Ok(Backend { shared, threads, report })
    }

    /// The shared state (counters, heads and tails).
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// What recovery did at start.
    pub fn recovery(&self) -> &RecoveryReport {
        &self.report
    }

    /// Stops all threads (logs not yet applied stay on PM and are replayed at the next start).
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        self.halt();
    }
}
