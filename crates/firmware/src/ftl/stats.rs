//! What the FTL counts.

use serde::Serialize;

/// FTL counters over a run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FtlStats {
    /// Mapping units written by the host (into the cache).
    pub host_units_written: u64,
    /// Mapping units read by the host.
    pub host_units_read: u64,
    /// Mapping units trimmed by the host.
    pub host_units_trimmed: u64,
    /// Pages programmed per stream: user, GC, mapping.
    pub pages_programmed: [u64; 3],
    /// Mapping units programmed per stream (translation pages count one unit each).
    pub units_programmed: [u64; 3],
    /// Units read back for read-modify-write of partial writes.
    pub rmw_reads: u64,
    /// GC victims collected.
    pub gc_invocations: u64,
    /// Valid units moved by GC and wear levelling.
    pub gc_units_moved: u64,
    /// Victims (of GC or wear levelling) being collected now: started, not yet erased. A
    /// level, not a count: what a run that ends mid-collection leaves in progress.
    pub gc_victims_in_progress: u64,
    /// The part of `gc_units_moved` moved out of the victims in progress.
    pub gc_units_moved_in_progress: u64,
    /// Blocks erased.
    pub blocks_erased: u64,
    /// Victims taken by static wear levelling.
    pub wl_migrations: u64,
    /// Host writes that had to wait for GC to free a block or, under paced GC, to admit them
    /// (each counted once, however long it waited).
    pub foreground_gc_waits: u64,
    /// Times a write waiting for room (host data, translation pages or GC) was woken.
    pub room_wakeups: u64,
    /// Times a request had to wait for a cache line to free up.
    pub cache_full_waits: u64,
    /// What the ECC did on host reads: outcomes, retries, bits corrected, decoder cycles
    /// (all zero when no bit errors are configured).
    pub ecc: crate::ecc::EccStats,
    /// Bad-block management: failed programs and erases, grown bad blocks, spares, end of
    /// life (all zero when no wear-out is modelled).
    pub media: crate::ftl::MediaStats,
    /// Translation pages GC rewrote itself because the pending mapping updates filled their
    /// DRAM budget (DFTL).
    pub gc_tpage_writes: u64,
    /// Pending mapping updates (GC's, to entries not cached) the DRAM budget holds (DFTL; 0
    /// with the full map).
    pub pending_budget: u64,
    /// The most pending mapping updates held at once.
    pub pending_high: u64,
    /// Flexible Data Placement's counters, per reclaim unit handle (`None` without FDP).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fdp: Option<crate::ftl::fdp::FdpStats>,
}

impl FtlStats {
    /// Zero counters for an FTL configured as `cfg` (with a zero per-handle count for each FDP
    /// reclaim unit handle).
    pub fn for_config(cfg: &crate::ftl::FtlConfig) -> FtlStats {
        FtlStats {
            fdp: cfg.fdp.as_ref().map(|f| crate::ftl::fdp::FdpStats {
                handles: vec![Default::default(); f.handles as usize],
                ..Default::default()
            }),
            ..FtlStats::default()
        }
    }

    /// Write amplification: units programmed by every stream over units written by the host.
    pub fn waf(&self) -> f64 {
        let flash: u64 = self.units_programmed.iter().sum();
        flash as f64 / self.host_units_written.max(1) as f64
    }

    /// [`waf`](Self::waf) of what happened between `before` (an earlier copy) and these.
    pub fn waf_since(&self, before: &FtlStats) -> f64 {
        let flash = |s: &FtlStats| s.units_programmed.iter().sum::<u64>();
        (flash(self) - flash(before)) as f64
            / (self.host_units_written - before.host_units_written).max(1) as f64
    }

    /// Write amplification of data only (user and GC streams, no translation pages).
    pub fn data_waf(&self) -> f64 {
        (self.units_programmed[0] + self.units_programmed[1]) as f64 / self.host_units_written.max(1) as f64
    }
}
