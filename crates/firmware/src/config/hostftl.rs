//! The configuration of a raw flash array under a host-side FTL (`[system] kind = "host-ftl"`):
//! the array's controllers and data path, the host it runs on, and the FTL's own choices. The
//! FTL itself lives in `ssdlab-hostftl`; its policies (GC victim choice, thresholds, wear
//! levelling, over-provisioning) come from the device's `[ftl]` section.

use serde::{Deserialize, Serialize};
use sim::config::{ConfigError, ensure};
use sim::{ByteSize, SimDuration};

use crate::config::{ArrayConfig, HostStackConfig};

/// How the FTL writes host data.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteMode {
    /// Super-page writes for writes of at least `super_page_min`, pipelined page writes
    /// otherwise (the paper's choice).
    #[default]
    Auto,
    /// Every write as pipelined page writes (4 KiB sectors aggregated in the SRAM pool).
    Pipelined,
    /// Every write that fills a super-page as one; the rest pipelined.
    SuperPage,
}

/// CPU cycles of the FTL's work on the host core of the thread doing it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostFtlCosts {
    /// Per mapping unit looked up. Default: 300.
    #[serde(default = "c300")]
    pub lookup: u64,
    /// Per page allocated. Default: 600.
    #[serde(default = "c600")]
    pub allocate: u64,
    /// Per mapping unit remapped after its program. Default: 300.
    #[serde(default = "c300")]
    pub update: u64,
    /// Per raw command built and issued (driver, doorbell). Default: 1500.
    #[serde(default = "c1500")]
    pub command: u64,
    /// Per raw completion handled (interrupt, bookkeeping). Default: 1500.
    #[serde(default = "c1500")]
    pub completion: u64,
    /// Per unit GC moves. Default: 300.
    #[serde(default = "c300")]
    pub gc_unit: u64,
    /// Per KiB copied into the host write buffer. Default: 300 (about 10 GB/s per 3 GHz core,
    /// an assumption).
    #[serde(default = "c300")]
    pub copy_per_kib: u64,
}

fn c300() -> u64 {
    300
}
fn c600() -> u64 {
    600
}
fn c1500() -> u64 {
    1500
}

impl Default for HostFtlCosts {
    fn default() -> Self {
        HostFtlCosts {
            lookup: 300,
            allocate: 600,
            update: 300,
            command: 1500,
            completion: 1500,
            gc_unit: 300,
            copy_per_kib: 300,
        }
    }
}

/// The write path.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WritePath {
    /// Super-page or pipelined page writes. Default: auto.
    #[serde(default)]
    pub mode: WriteMode,
    /// In auto mode, writes at least this large go as super-pages. Default: one super-page
    /// (a page on every channel of a group).
    #[serde(default)]
    pub super_page_min: Option<ByteSize>,
    /// A host write buffer: writes complete once copied into host memory and are written to
    /// flash in the background (0: none, a write completes when its sectors are in the
    /// array's SRAM). Default: 0.
    #[serde(default)]
    pub buffer: ByteSize,
}

impl Default for WritePath {
    fn default() -> Self {
        WritePath { mode: WriteMode::Auto, super_page_min: None, buffer: ByteSize(0) }
    }
}

/// When the host runs GC.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostGcConfig {
    /// Defer background GC while the host is in a write burst (more than `burst` host writes
    /// in flight), as long as no plane is down to its hard threshold. Default: true.
    #[serde(default = "yes")]
    pub defer: bool,
    /// Host writes in flight that make a burst. Default: 8.
    #[serde(default = "eight")]
    pub burst: u32,
    /// How often deferred GC looks again. Default: 1ms.
    #[serde(default = "ms1")]
    pub poll: SimDuration,
}

fn yes() -> bool {
    true
}
fn eight() -> u32 {
    8
}
fn ms1() -> SimDuration {
    SimDuration::from_millis(1)
}

impl Default for HostGcConfig {
    fn default() -> Self {
        HostGcConfig { defer: true, burst: 8, poll: ms1() }
    }
}

/// Host memory of the FTL's tables.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostFtlMemory {
    /// Bytes per mapping entry. Default: 8.
    #[serde(default = "b8")]
    pub entry_bytes: u32,
    /// Allocate the whole mapping table at start (true), or an entry when a unit is first
    /// written (false: the table grows with the data). Default: true.
    #[serde(default = "yes")]
    pub preallocate: bool,
    /// Bytes of bookkeeping per flash block (state, valid count, erase count). Default: 64.
    #[serde(default = "b64")]
    pub block_bytes: u32,
}

fn b8() -> u32 {
    8
}
fn b64() -> u32 {
    64
}

impl Default for HostFtlMemory {
    fn default() -> Self {
        HostFtlMemory { entry_bytes: 8, preallocate: true, block_bytes: 64 }
    }
}

/// A raw flash array under a host-side FTL.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostFtlConfig {
    /// Logical channel groups; channels are numbered group-major. Default: 1.
    #[serde(default = "one")]
    pub groups: u32,
    /// The flash array controllers, SRAM pool and DMA engine.
    #[serde(default)]
    pub array: ArrayConfig,
    /// The host: cores, driver costs per host command, fixed memory.
    #[serde(default)]
    pub host: HostStackConfig,
    /// The FTL's CPU costs on the host.
    #[serde(default)]
    pub costs: HostFtlCosts,
    /// The write path.
    #[serde(default)]
    pub write: WritePath,
    /// Host-scheduled GC.
    #[serde(default)]
    pub gc: HostGcConfig,
    /// Host memory of the tables.
    #[serde(default)]
    pub memory: HostFtlMemory,
}

fn one() -> u32 {
    1
}

impl HostFtlConfig {
    /// Checks every field against the array (`channels`, page and unit bytes); the error
    /// names the first bad one.
    pub fn validate(&self, channels: u32, page_bytes: u64, unit_bytes: u64) -> Result<(), ConfigError> {
        ensure(self.groups >= 1 && channels.is_multiple_of(self.groups), "groups", || {
            format!("must divide the {channels} channels (got {})", self.groups)
        })?;
        self.array.validate(channels, page_bytes).map_err(|e| e.within("array"))?;
        let per_group = channels / self.groups;
        let cpc = self.array.channels_per_controller;
        ensure(
            per_group.is_multiple_of(cpc) || cpc.is_multiple_of(per_group),
            "array.channels_per_controller",
            || format!("a controller's {cpc} channels must tile the groups of {per_group}"),
        )?;
        self.host.validate().map_err(|e| e.within("host"))?;
        if let Some(m) = self.write.super_page_min {
            ensure(m.bytes() >= unit_bytes, "write.super_page_min", || {
                format!("must be at least a mapping unit ({unit_bytes}B)")
            })?;
        }
        ensure(self.memory.entry_bytes >= 1, "memory.entry_bytes", || "must be at least 1".into())?;
        ensure(!self.gc.poll.is_zero(), "gc.poll", || "must be above zero".into())
    }
}
