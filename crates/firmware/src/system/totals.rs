//! What a system reports: cheap cumulative counters for the time series ([`Sample`]) and the
//! full statistics for the report ([`Totals`]).

use sim::SimDuration;

use crate::fil::{FilStats, OpStats};
use crate::ftl::FtlStats;
use crate::hil::SmartLog;
use crate::power::Energy;
use crate::system::host::HostStack;

/// Cumulative counters at one instant (one per time-series interval boundary).
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Sample {
    /// Mapping units the host has written.
    pub host_units: u64,
    /// Mapping units programmed to flash (every stream).
    pub flash_units: u64,
    /// Free blocks (all planes).
    pub free_blocks: u64,
    /// Units moved by GC and wear levelling.
    pub gc_units_moved: u64,
    /// Blocks erased.
    pub erases: u64,
    /// Energy used so far, by component.
    pub energy: Energy,
    /// Host memory the storage stack occupies now, bytes (0 unless the FTL runs on the host).
    pub host_memory: u64,
    /// Host CPU time the storage stack has used so far, summed over its host cores, ns.
    pub host_busy_ns: u64,
    /// Host cores the storage stack runs on (0 unless the FTL runs on the host).
    pub host_cores: u32,
    /// Host page reads the ECC checked (each once), and of them those corrected at the first
    /// attempt, retried and uncorrectable (see [`crate::ecc::EccStats`]).
    pub ecc_reads: u64,
    /// Reads corrected at the first attempt.
    pub ecc_corrected: u64,
    /// Reads decoded after retry steps.
    pub ecc_retried: u64,
    /// Reads no attempt decoded.
    pub ecc_uncorrectable: u64,
    /// Bits of the codewords the ECC checked, every attempt.
    pub ecc_bits_checked: u64,
    /// Bit errors observed in them (codewords within t).
    pub ecc_bits_observed: u64,
    /// Time the ECC core spent decoding, ns.
    pub ecc_busy_ns: u64,
    /// Erase counts of the good blocks, summed (their mean wear is this over `good_blocks`).
    pub erase_count_sum: u64,
    /// Good blocks (0 where the system does not say).
    pub good_blocks: u64,
}

impl Sample {
    /// The counters of an FTL (its statistics `st` and free blocks) with the system's
    /// `energy`; no host side.
    pub fn of_ftl(st: &FtlStats, free_blocks: u64, energy: Energy) -> Sample {
        Sample {
            host_units: st.host_units_written,
            flash_units: st.units_programmed.iter().sum(),
            free_blocks,
            gc_units_moved: st.gc_units_moved,
            erases: st.blocks_erased,
            energy,
            ecc_reads: st.ecc.reads(),
            ecc_corrected: st.ecc.corrected_reads,
            ecc_retried: st.ecc.retried_reads,
            ecc_uncorrectable: st.ecc.uncorrectable_reads,
            ecc_bits_checked: st.ecc.bits_checked,
            ecc_bits_observed: st.ecc.bits_observed,
            ecc_busy_ns: st.ecc.busy_ns,
            ..Sample::default()
        }
    }

    /// The sample with the array's wear: `(erase counts summed, good blocks)`, as
    /// [`nand::FlashArray::wear`] gives them.
    pub fn with_wear(self, (erase_count_sum, good_blocks): (u64, u64)) -> Sample {
        Sample { erase_count_sum, good_blocks, ..self }
    }

    /// Adds `b`'s counters to these (several devices side by side; energy and the host side
    /// are the caller's).
    pub fn add_device(&mut self, b: &Sample) {
        self.host_units += b.host_units;
        self.flash_units += b.flash_units;
        self.free_blocks += b.free_blocks;
        self.gc_units_moved += b.gc_units_moved;
        self.erases += b.erases;
        self.ecc_reads += b.ecc_reads;
        self.ecc_corrected += b.ecc_corrected;
        self.ecc_retried += b.ecc_retried;
        self.ecc_uncorrectable += b.ecc_uncorrectable;
        self.ecc_bits_checked += b.ecc_bits_checked;
        self.ecc_bits_observed += b.ecc_bits_observed;
        self.ecc_busy_ns += b.ecc_busy_ns;
        self.erase_count_sum += b.erase_count_sum;
        self.good_blocks += b.good_blocks;
    }

    /// The sample with the host side's counters: its memory, busy time and cores now.
    pub fn with_host(self, host: &HostStack) -> Sample {
        Sample {
            host_memory: host.memory(),
            host_busy_ns: host.busy().as_nanos(),
            host_cores: host.cores().len() as u32,
            ..self
        }
    }
}

/// What the host side of a host-side FTL used.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostUse {
    /// Host cores the storage stack runs on.
    pub cores: u32,
    /// Their busy time, summed.
    pub busy: SimDuration,
    /// Host memory occupied at the end, bytes.
    pub memory: u64,
    /// The most host memory occupied at once, bytes.
    pub peak_memory: u64,
    /// Host memory at the end by use (name, bytes).
    pub memory_by_use: Vec<(String, u64)>,
}

/// Everything a report needs from a system at the end of a run.
#[derive(Clone, Debug)]
pub struct Totals {
    /// FTL counters (summed over every FTL of the system).
    pub ftl: FtlStats,
    /// FIL statistics (per-die and per-channel vectors of every array, in order).
    pub fil: FilStats,
    /// Erase count of every good block.
    pub erase_counts: Vec<u32>,
    /// Data (or host buffer) cache (hits, misses).
    pub cache: (u64, u64),
    /// Cached mapping table (hits, misses), for DFTL.
    pub cmt: Option<(u64, u64)>,
    /// Mapping units written by the host and not yet on flash.
    pub dirty_units: u64,
    /// Free blocks.
    pub free_blocks: u64,
    /// Bytes over the host link: (to device, to host).
    pub link: (u64, u64),
    /// The SMART / health log.
    pub smart: SmartLog,
    /// Energy used so far.
    pub energy: Energy,
    /// Host resources (host-side FTLs only).
    pub host: Option<HostUse>,
    /// The firmware architecture's name (`softssd`, `tradition-4`, ...; `host-ftl` for a
    /// host-side FTL).
    pub architecture: String,
    /// Its locks, stage queues and wait list (a bridge's: its first drive's).
    pub flow: crate::flow::FlowStats,
    /// A zoned namespace's zones (`None`: conventional).
    pub zones: Option<crate::ftl::zoned::ZoneReport>,
}

/// Adds `b`'s FTL counters to `a`'s (several FTLs side by side).
pub fn merge_ftl(a: &mut FtlStats, b: &FtlStats) {
    a.host_units_written += b.host_units_written;
    a.host_units_read += b.host_units_read;
    a.host_units_trimmed += b.host_units_trimmed;
    for i in 0..3 {
        a.pages_programmed[i] += b.pages_programmed[i];
        a.units_programmed[i] += b.units_programmed[i];
    }
    a.rmw_reads += b.rmw_reads;
    a.gc_invocations += b.gc_invocations;
    a.gc_units_moved += b.gc_units_moved;
    a.gc_victims_in_progress += b.gc_victims_in_progress;
    a.gc_units_moved_in_progress += b.gc_units_moved_in_progress;
    a.blocks_erased += b.blocks_erased;
    a.wl_migrations += b.wl_migrations;
    a.foreground_gc_waits += b.foreground_gc_waits;
    a.room_wakeups += b.room_wakeups;
    a.cache_full_waits += b.cache_full_waits;
    a.ecc.merge(&b.ecc);
    a.media.merge(&b.media);
    a.gc_tpage_writes += b.gc_tpage_writes;
    a.pending_budget += b.pending_budget;
    a.pending_high += b.pending_high;
    match (&mut a.fdp, &b.fdp) {
        (Some(x), Some(y)) => x.merge(y),
        (None, Some(y)) => a.fdp = Some(y.clone()),
        _ => {}
    }
}

fn merge_op(a: &mut OpStats, b: &OpStats) {
    a.count += b.count;
    a.bytes += b.bytes;
    a.latency.merge(&b.latency);
    a.command.merge(&b.command);
    a.ring += b.ring;
    a.queue_wait += b.queue_wait;
    a.channel_wait += b.channel_wait;
    a.command_total += b.command_total;
    a.transfer += b.transfer;
}

/// Adds `b`'s statistics to `a`'s: counts and distributions add, per-die and per-channel
/// vectors are appended (several arrays side by side).
pub fn merge_fil(a: &mut FilStats, b: &FilStats) {
    merge_op(&mut a.read, &b.read);
    merge_op(&mut a.program, &b.program);
    merge_op(&mut a.erase, &b.erase);
    for (x, y) in a.by_source.iter_mut().zip(b.by_source) {
        *x += y;
    }
    for ((_, x), (_, y)) in a.program_by_page_type.iter_mut().zip(&b.program_by_page_type) {
        x.merge(y);
    }
    a.batches += b.batches;
    a.multi_plane_txns += b.multi_plane_txns;
    a.die_busy_ns.extend_from_slice(&b.die_busy_ns);
    a.channel_busy_ns.extend_from_slice(&b.channel_busy_ns);
    a.die_ops.extend_from_slice(&b.die_ops);
    a.max_queued = a.max_queued.max(b.max_queued);
}
