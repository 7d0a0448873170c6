//! The model's parameters: persistent memory, the PCIe link, the SmartNIC, the host, and the
//! kernel paths of the baselines.
//!
//! Every field's doc ends with its default and says where the number comes from: a published
//! measurement (cited), this implementation measured on the development machine (`nicfs
//! figure calibrate` re-measures it), or an assumption. Where an assumption was chosen so that
//! the model matches one published number, the doc says so.

use serde::{Deserialize, Serialize};

/// Persistent memory: Intel Optane DC PMM (first generation), DIMMs interleaved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PmModel {
    /// Idle latency of a read that misses the CPU caches, ns. Source: Izraelevitz et al.,
    /// "Basic Performance Measurements of the Intel Optane DC Persistent Memory Module"
    /// (arXiv:1903.05714, 2019): 305 ns random, 169 ns sequential; metadata reads are random.
    /// Default: 305.
    pub read_latency_ns: u64,
    /// Latency of a fence after flushes or non-temporal stores, ns: a write is persistent once
    /// it reaches the memory controller (ADR). Source: Izraelevitz et al. 2019 (about 90 ns).
    /// Default: 90.
    pub write_latency_ns: u64,
    /// Read bandwidth of one DIMM, MB/s. Source: Izraelevitz et al. 2019 (about 6.6 GB/s).
    /// Default: 6600.
    pub read_mbps_per_dimm: u64,
    /// Write bandwidth of one DIMM, MB/s. Source: Izraelevitz et al. 2019 (about 2.3 GB/s).
    /// Default: 2300.
    pub write_mbps_per_dimm: u64,
    /// Interleaved DIMMs, whose bandwidth every agent shares (host cores, the NIC's DMA, the
    /// host copy engine). Assumption: a fully populated socket, as in the measurements above
    /// (6 DIMMs: about 39 GB/s read, 14 GB/s write); the paper does not say. Default: 6.
    pub dimms: u64,
    /// A host read of a PM line held in the CPU's last-level cache, ns. Assumption (an LLC hit
    /// on a server core of that generation, about 70 cycles). Default: 30.
    pub llc_hit_ns: u64,
    /// Metadata lines (reads of at most 128 bytes) the host LLC keeps, in 64-byte lines. File
    /// data is always read from PM (the studies' files are sized to exceed the LLC in spirit;
    /// see the crate docs). Assumption: 8 MiB of an LLC for metadata. Default: 131072.
    pub llc_lines: u64,
}

impl Default for PmModel {
    fn default() -> Self {
        PmModel {
            read_latency_ns: 305,
            write_latency_ns: 90,
            read_mbps_per_dimm: 6600,
            write_mbps_per_dimm: 2300,
            dimms: 6,
            llc_hit_ns: 30,
            llc_lines: 131_072,
        }
    }
}

/// The PCIe link between the SmartNIC and host memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PcieModel {
    /// Round trip of a small DMA read through the root complex, excluding the memory access
    /// itself (the PM model adds that), ns. Source: Neugebauer et al., "Understanding PCIe
    /// performance for end host networking" (SIGCOMM 2018) measure small DMA reads at roughly
    /// 0.5-1 µs end to end. Default: 600.
    pub rtt_ns: u64,
    /// Link bandwidth per direction, MB/s. Source: PCIe 3.0 x8 carries 7.88 GB/s (8 GT/s,
    /// 128b/130b); TLP and DLLP headers take about a fifth at 256-byte payloads (Neugebauer
    /// et al. 2018). Default: 6500.
    pub mbps: u64,
    /// NIC-core cycles to post one DMA descriptor and reap its completion. Assumption.
    /// Default: 300.
    pub descriptor_cycles: u64,
    /// Setup of one request to the host copy engine (an I/OAT-class DMA engine that moves bulk
    /// data from log to file blocks), ns. Assumption. Default: 500.
    pub copy_setup_ns: u64,
}

impl Default for PcieModel {
    fn default() -> Self {
        PcieModel { rtt_ns: 600, mbps: 6500, descriptor_cycles: 300, copy_setup_ns: 500 }
    }
}

/// CPU cycles of this implementation's code paths on a host core, measured with `nicfs
/// figure calibrate` on the development machine (a 2.3 GHz Xeon virtual machine shared with
/// other work; PM emulated in DRAM; the median of three runs, each the best of five). Data
/// movement is excluded (PM and the copy engine charge it); other DRAM accesses are not, so
/// these are upper bounds. NIC stages run `nic.cycles_per_host_cycle` times as many cycles.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CpuCosts {
    /// Front end: one write call, besides its bytes (leases, reservation, header, update
    /// lists, inode snapshot). Measured. Default: 2200.
    pub fe_write: u64,
    /// Front end: one read call (leases, inode view, seqlock, inode and index decode).
    /// Measured. Default: 1350.
    pub fe_read: u64,
    /// Front end: each further block of a read. Below what the calibration resolves (a 16 KiB
    /// read measured no slower than a 256 B one, copies excluded); assumption. Default: 50.
    pub fe_read_block: u64,
    /// Front end: per KiB written (the payload checksum). Measured. Default: 40.
    pub fe_write_kib: u64,
    /// Back end, Log Fetch: per record (header checksum, decode, validation). Measured.
    /// Default: 120.
    pub fetch_record: u64,
    /// Back end, Data Locate: per record (index-line cache lookups). Measured. Default: 150.
    pub locate_record: u64,
    /// Back end, Merge: per record (range trees). Measured. Default: 200.
    pub merge_record: u64,
    /// Back end, Patch: per batch (transaction, journal records and checksum, commit).
    /// Measured (a batch of one record). Default: 6700.
    pub patch_batch: u64,
    /// Back end, Patch: per record (plans, allocation, inode and bitmap lines). Measured
    /// (4 KiB appends in batches of 256). Default: 1650.
    pub patch_record: u64,
    /// In-place library baseline: per call (locking, lookups). Assumption (not measured).
    /// Default: 600.
    pub inplace_op: u64,
}

impl Default for CpuCosts {
    fn default() -> Self {
        CpuCosts {
            fe_write: 2200,
            fe_read: 1350,
            fe_read_block: 50,
            fe_write_kib: 40,
            fetch_record: 120,
            locate_record: 150,
            merge_record: 200,
            patch_batch: 6700,
            patch_record: 1650,
            inplace_op: 600,
        }
    }
}

/// The SmartNIC.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NicModel {
    /// Weak cores shared by all pipelines. Source: the NICFS paper's SmartNIC has 8 (PRESETS,
    /// NICFS); so does an NVIDIA BlueField-2 DPU (8 Arm Cortex-A72). Default: 8.
    pub cores: u64,
    /// Core clock, MHz. Assumption: BlueField-2 A72 cores run at 2.0-2.75 GHz depending on
    /// the part; the low end. Default: 2000.
    pub clock_mhz: u64,
    /// Cycles a NIC core needs per host-core cycle of the same code. Assumption: an A72 has
    /// roughly half a server core's throughput per cycle (iPipe, Liu et al., SIGCOMM 2019,
    /// characterise SmartNIC cores as several times slower than host cores). Default: 2.0.
    pub cycles_per_host_cycle: f64,
    /// Pause of a pipeline's fetch stage when its log is empty, ns. Assumption. Default: 1000.
    pub poll_ns: u64,
    /// Batches in flight between two stages (as the threaded pipeline's channels). Default: 2.
    pub ring_capacity: usize,
    /// What the pipelines' Patch stages hold while they apply a batch. The paper: each front
    /// end is served by its own pipeline, and back-end throughput doubles with two front ends
    /// (PRESETS, NICFS), so its Patch stages run concurrently. Default: `per_pipeline` (the
    /// paper's design); `engine` is this implementation's back end (one engine lock, one redo
    /// journal, every pipeline's Patch in turn).
    pub patch_lock: PatchLock,
    /// Context-switch cost, ns, paid each time a thread takes a NIC core that hosts more than
    /// one back-end thread (threads outnumber cores: four front ends' 16 stage threads on 8
    /// cores). A core with one thread pays nothing. The paper names the cost but does not state
    /// it. Assumption: 3,800 ns, the direct cost of a Linux context switch Li, Ding and Shen
    /// measured (ExpCS 2007, "Quantifying the cost of context switch"), without the indirect
    /// cache cost they also report. BENCHMARKS.md shows a sweep. Default: 3800.
    pub switch_ns: u64,
}

/// What a pipeline's Patch stage holds while it applies a batch (see [`NicModel::patch_lock`]).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PatchLock {
    /// One lock for every pipeline (this implementation: one engine, one redo journal). The
    /// file system's state changes the same way either way; only the time differs.
    Engine,
    /// A lock per pipeline (the paper's pipelines: a journal per front end, whose commits share
    /// only the PM and PCIe channels).
    #[default]
    PerPipeline,
}

impl Default for NicModel {
    fn default() -> Self {
        NicModel {
            cores: 8,
            clock_mhz: 2000,
            cycles_per_host_cycle: 2.0,
            poll_ns: 1000,
            ring_capacity: 2,
            patch_lock: PatchLock::PerPipeline,
            switch_ns: 3800,
        }
    }
}

impl NicModel {
    /// NIC cycles of one context switch ([`NicModel::switch_ns`] at the core clock).
    pub fn switch_cycles(&self) -> u64 {
        self.switch_ns * self.clock_mhz / 1000
    }
}

/// The host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostModel {
    /// Core clock, MHz (the calibration machine's). Default: 2300.
    pub clock_mhz: u64,
    /// DRAM copy bandwidth of one core, MB/s (page-cache copies of the ext4 baseline).
    /// Assumption. Default: 10000.
    pub dram_mbps: u64,
}

impl Default for HostModel {
    fn default() -> Self {
        HostModel { clock_mhz: 2300, dram_mbps: 10_000 }
    }
}

/// The kernel paths of the Ext4-DAX-style and Ext4-style baselines. Nothing here can be
/// measured on this machine (its kernel has no PM); the sources say what each number rests on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KernelModel {
    /// Entering and leaving the kernel for one call, ns. Assumption: a null system call costs
    /// about 100 ns on a server core without speculation mitigations and more with them;
    /// FlexSC (Soares and Stumm, OSDI 2010) also measures the cache pollution it leaves.
    /// Default: 150.
    pub syscall_ns: u64,
    /// VFS and ext4 work of a write that allocates nothing (file lookup, locks, timestamps,
    /// iomap lookup of mapped blocks), ns. Assumption. Default: 1000.
    pub vfs_write_ns: u64,
    /// VFS and ext4 work of a read, ns. Assumption. Default: 600.
    pub vfs_read_ns: u64,
    /// Block allocation and extent update of a write that allocates, ns. Assumption, chosen
    /// (with `commit_cpu_ns`) so that a 4 KiB O_DSYNC append on the Ext4-DAX model costs about
    /// the 9.0 µs SplitFS (Kadekodi et al., SOSP 2019, Table 1) measured on ext4-DAX: this is
    /// fitted to that one number. Default: 2500.
    pub alloc_ns: u64,
    /// CPU of one jbd2 commit (handle, descriptor, waking the journal thread, waiting for it),
    /// ns. Assumption, fitted with `alloc_ns` as said there. Default: 2500.
    pub commit_cpu_ns: u64,
    /// Metadata blocks a commit of an allocating write journals (inode table block, block
    /// bitmap, group descriptor, extent block), each a whole 4 KiB block, as jbd2 logs them.
    /// Source: ext4's on-disk layout. Default: 4.
    pub commit_blocks: u64,
    /// Journal size, 4 KiB blocks; a checkpoint writes the journaled metadata blocks home
    /// when a quarter of it is used (jbd2's low-water mark). Source: mke2fs's 128 MiB default
    /// journal for large file systems. Default: 32768.
    pub journal_blocks: u64,
    /// Block layer of the Ext4-style baseline (bio set-up, the pmem driver, completion) per
    /// 4 KiB page written back or read in, ns. Assumption. Default: 1500.
    pub bio_ns: u64,
    /// `fdatasync` path of the Ext4-style baseline besides its I/O (writeback scan, waits),
    /// ns. Assumption. Default: 1500.
    pub fsync_ns: u64,
}

impl Default for KernelModel {
    fn default() -> Self {
        KernelModel {
            syscall_ns: 150,
            vfs_write_ns: 1000,
            vfs_read_ns: 600,
            alloc_ns: 2500,
            commit_cpu_ns: 2500,
            commit_blocks: 4,
            journal_blocks: 32_768,
            bio_ns: 1500,
            fsync_ns: 1500,
        }
    }
}

/// Everything the model charges time for.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimedConfig {
    /// Persistent memory.
    pub pm: PmModel,
    /// The PCIe link and the host copy engine.
    pub pcie: PcieModel,
    /// The SmartNIC.
    pub nic: NicModel,
    /// The host.
    pub host: HostModel,
    /// Cycles of this implementation's code paths.
    pub cpu: CpuCosts,
    /// Kernel paths of the baselines.
    pub kernel: KernelModel,
}

/// A configuration field that fails validation.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid timed model: `{field}` {reason}")]
pub struct TimedConfigError {
    /// The field.
    pub field: &'static str,
    /// Why.
    pub reason: &'static str,
}

impl TimedConfig {
    /// Checks the fields.
    pub fn validate(&self) -> Result<(), TimedConfigError> {
        let bad = |field, reason| Err(TimedConfigError { field, reason });
        let positive = [
            ("pm.read_mbps_per_dimm", self.pm.read_mbps_per_dimm),
            ("pm.write_mbps_per_dimm", self.pm.write_mbps_per_dimm),
            ("pm.dimms", self.pm.dimms),
            ("pcie.mbps", self.pcie.mbps),
            ("nic.cores", self.nic.cores),
            ("nic.clock_mhz", self.nic.clock_mhz),
            ("host.clock_mhz", self.host.clock_mhz),
            ("host.dram_mbps", self.host.dram_mbps),
            ("kernel.journal_blocks", self.kernel.journal_blocks),
        ];
        for (field, v) in positive {
            if v == 0 {
                return bad(field, "must be positive");
            }
        }
        if self.nic.cores > 64 {
            return bad("nic.cores", "must be at most 64");
        }
        if !(0.1..=100.0).contains(&self.nic.cycles_per_host_cycle) {
            return bad("nic.cycles_per_host_cycle", "must be in 0.1..=100");
        }
        if self.nic.switch_ns > 1_000_000 {
            return bad("nic.switch_ns", "must be at most 1,000,000 (1 ms)");
        }
        if self.nic.ring_capacity == 0 {
            return bad("nic.ring_capacity", "must be positive");
        }
        Ok(())
    }

    /// NIC cycles for code that takes `host_cycles` on a host core.
    pub fn nic_cycles(&self, host_cycles: u64) -> u64 {
        (host_cycles as f64 * self.nic.cycles_per_host_cycle).round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_fields_parse_with_defaults() {
        TimedConfig::default().validate().unwrap();
        let c: TimedConfig = toml::from_str("[pm]\ndimms = 1\n[nic]\ncores = 4").unwrap();
        assert_eq!(c.pm.dimms, 1);
        assert_eq!(c.nic.cores, 4);
        assert_eq!(c.pm.read_latency_ns, 305);
        let c: TimedConfig = toml::from_str("[nic]\npatch_lock = \"engine\"\nswitch_ns = 0").unwrap();
        assert_eq!((c.nic.patch_lock, c.nic.switch_cycles()), (PatchLock::Engine, 0));
        assert_eq!(NicModel::default().switch_cycles(), 7600);
        assert!(toml::from_str::<TimedConfig>("[pm]\nbogus = 1").is_err());
        let bad = TimedConfig { pm: PmModel { dimms: 0, ..PmModel::default() }, ..TimedConfig::default() };
        assert_eq!(bad.validate().unwrap_err().field, "pm.dimms");
    }
}
