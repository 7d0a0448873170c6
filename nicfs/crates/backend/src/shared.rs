//! State shared by the back end's threads, and the per-log processing steps.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use nicfs_comm::CommRegion;
use nicfs_pm::SharedPm;
use nicfs_store::{Engine, FsError, LineCache, LogSpace, Space};

use crate::BackendConfig;
use crate::copy::CopyEngine;
use crate::cores::CorePool;
use crate::fetch::{Batch, fetch};
use crate::locate::{Located, locate};
use crate::merge::{Step, merge};
use crate::patch::{PatchStats, patch};

/// Counters, readable while the back end runs.
#[derive(Default)]
pub struct Counters {
    /// Records applied.
    pub records: AtomicU64,
    /// Records rejected.
    pub rejected: AtomicU64,
    /// Batches patched.
    pub batches: AtomicU64,
    /// Bytes copied by the copy engine.
    pub bytes: AtomicU64,
    /// Copy requests.
    pub copies: AtomicU64,
    /// Lease grants.
    pub grants: AtomicU64,
    /// Lease revocations.
    pub revocations: AtomicU64,
    /// Wall-clock ns spent in each stage (fetch, locate, merge, patch), summed over threads.
    pub stage_ns: [AtomicU64; 4],
}

/// Per-log state.
pub(crate) struct LogState {
    pub(crate) ls: LogSpace,
    /// Set after an unrecoverable error (corrupt log): the log is no longer processed.
    pub(crate) quarantined: AtomicBool,
    pub(crate) error: Mutex<Option<String>>,
    /// Serialises inline processing of this log (several threads may drain it through
    /// `DirectLink`s; two must never apply the same batch).
    pub(crate) inline: Mutex<()>,
}

/// Everything the back end's threads share.
pub struct Shared {
    pub(crate) cfg: BackendConfig,
    pub(crate) dma: SharedPm,
    pub(crate) space: Space,
    pub(crate) engine: Mutex<Engine>,
    pub(crate) cache: Arc<LineCache>,
    pub(crate) copy: CopyEngine,
    pub(crate) comm: Arc<CommRegion>,
    pub(crate) cores: CorePool,
    pub(crate) logs: Vec<LogState>,
    pub(crate) stop: AtomicBool,
    pub(crate) lease_lock: Mutex<()>,
    /// Counters.
    pub counters: Counters,
}

impl Shared {
    pub(crate) fn engine(&self) -> MutexGuard<'_, Engine> {
        self.engine.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Index-line cache counters.
    pub fn cache_stats(&self) -> nicfs_store::LineCacheStats {
        self.cache.stats()
    }

    /// The head of log `slot`.
    pub fn head(&self, slot: usize) -> u64 {
        self.logs[slot].ls.head(self.dma.as_ref())
    }

    /// The tail of log `slot`.
    pub fn tail(&self, slot: usize) -> u64 {
        self.logs[slot].ls.tail(self.dma.as_ref())
    }

    pub(crate) fn quarantine(&self, slot: usize, e: &FsError) {
        let l = &self.logs[slot];
        if !l.quarantined.swap(true, Ordering::AcqRel) {
            eprintln!("nicfs-backend: log {slot} quarantined: {e}");
            *l.error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
        }
    }

    /// Whether log `slot` was quarantined.
    pub fn is_quarantined(&self, slot: usize) -> bool {
        self.logs[slot].quarantined.load(Ordering::Acquire)
    }

    /// Runs `f` as pipeline stage `stage` (0..4) on a NIC core, timing it.
    fn run_stage<R>(&self, stage: usize, f: impl FnOnce() -> R) -> R {
        let t = std::time::Instant::now();
        let r = self.cores.run(f);
        self.counters.stage_ns[stage].fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
        r
    }

    /// Stage 1 on a NIC core.
    ///
    /// Public for drivers that schedule the stages themselves (the virtual-time model); the
    /// threaded pipeline and `step_inline` call them in order.
    pub fn stage_fetch(&self, slot: usize, next: u64, verify: bool) -> Result<Option<Batch>, FsError> {
        self.run_stage(0, || {
            fetch(self.dma.as_ref(), &self.space, &self.logs[slot].ls, next, self.cfg.batch_max, verify)
        })
    }

    /// Stage 2 on a NIC core.
    ///
    /// Public for drivers that schedule the stages themselves (the virtual-time model); the
    /// threaded pipeline and `step_inline` call them in order.
    pub fn stage_locate(&self, batch: &Batch) -> Located {
        self.run_stage(1, || locate(&self.space, &self.cache, batch))
    }

    /// Stage 3 on a NIC core.
    ///
    /// Public for drivers that schedule the stages themselves (the virtual-time model); the
    /// threaded pipeline and `step_inline` call them in order.
    pub fn stage_merge(&self, batch: &Batch, located: &Located) -> Vec<Step> {
        self.run_stage(2, || merge(batch, located))
    }

    /// Stage 4 on a NIC core (serialised by the engine lock).
    ///
    /// Public for drivers that schedule the stages themselves (the virtual-time model); the
    /// threaded pipeline and `step_inline` call them in order.
    pub fn stage_patch(&self, batch: &Batch, steps: &[Step]) -> Result<PatchStats, FsError> {
        self.run_stage(3, || {
            let mut eng = self.engine();
            let locks = self.comm.seqlocks();
            patch(&mut eng, &self.copy, Some(&locks), &self.logs[batch.slot as usize].ls, batch, steps)
        })
        .inspect(|s| self.count(s))
    }

    fn count(&self, s: &PatchStats) {
        let c = &self.counters;
        c.records.fetch_add(s.records, Ordering::Relaxed);
        c.rejected.fetch_add(s.rejected, Ordering::Relaxed);
        c.batches.fetch_add(1, Ordering::Relaxed);
        c.bytes.fetch_add(s.bytes, Ordering::Relaxed);
        c.copies.fetch_add(s.copies, Ordering::Relaxed);
    }

    /// Runs all four stages for one batch on the calling thread. Returns whether there was
    /// anything to do.
    pub fn step_inline(&self, slot: usize, verify: bool) -> Result<bool, FsError> {
        let _one_at_a_time = self.logs[slot].inline.lock().unwrap_or_else(|e| e.into_inner());
        if self.is_quarantined(slot) {
            return Err(FsError::corrupt(format!("log {slot} is quarantined")));
        }
        let next = self.head(slot);
        let r = (|| {
            let Some(batch) = self.stage_fetch(slot, next, verify)? else { return Ok(false) };
            let located = self.stage_locate(&batch);
            let steps = self.stage_merge(&batch, &located);
            self.stage_patch(&batch, &steps)?;
            Ok(true)
        })();
        if let Err(e) = &r {
            self.quarantine(slot, e);
        }
        r
    }

    /// Applies log `slot` up to its current tail on the calling thread.
    pub fn drain_inline(&self, slot: usize, verify: bool) -> Result<u64, FsError> {
        let mut n = 0;
        while self.step_inline(slot, verify)? {
            n += 1;
        }
        Ok(n)
    }
}
