//! FTL configuration: mapping, data cache, allocation, garbage collection, wear levelling,
//! over-provisioning, factory bad blocks and per-operation CPU costs.

use nand::Geometry;
use serde::{Deserialize, Serialize};
use sim::config::{ConfigError, ensure};
use sim::{ByteSize, SimDuration};

/// How logical pages map to physical units.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum MappingConfig {
    /// DFTL: a cached mapping table in DRAM over translation pages stored in flash.
    Dftl {
        /// DRAM for cached mapping entries (8 bytes each). Default: 4MiB.
        #[serde(default = "default_cmt")]
        cmt: ByteSize,
        /// Entries loaded and evicted together (1 = classic per-entry DFTL, which needs
        /// 8 bytes of bookkeeping per logical page). Default: 64.
        #[serde(default = "default_segment")]
        segment_entries: u32,
        /// DRAM for the mapping updates GC makes to entries whose segment is not cached, held
        /// until their translation page is rewritten (8 bytes each: the LPN and its new
        /// address). When it is full, GC rewrites translation pages itself before it moves
        /// more, but never into a plane's last free block (the updates then overflow the
        /// budget, and the report's high-water mark shows it). Default: 256 updates per
        /// translation page (so that one rewrite takes many), or the controller DRAM the data
        /// cache and the CMT leave, if that is less.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pending: Option<ByteSize>,
        /// How the CMT is split between flows (MQSim's `CMT_Sharing_Mode`): `"shared"`,
        /// `"equal"` or a share per flow (`[0.25, 0.75]`, summing to 1); a flow's lookups load
        /// segments into its own partition and evict only its own. See `ftl::partition`.
        /// Default: shared.
        #[serde(default, skip_serializing_if = "crate::ftl::Partition::is_shared")]
        partition: crate::ftl::Partition,
    },
    /// The entire page map in DRAM (no translation pages): the comparison point for DFTL.
    Full,
}

/// Pending mapping updates per translation page the default budget holds.
const PENDING_PER_TPAGE: u64 = 256;

/// The default budget for pending mapping updates over `logical` units, DRAM aside: 256 per
/// translation page (an eighth of the entries of an 8 KiB page).
pub(crate) fn default_pending(logical: u32, geo: &Geometry) -> u64 {
    let tpages = logical.div_ceil(geo.page_bytes() / 4) as u64;
    tpages * PENDING_PER_TPAGE * crate::ftl::map::PENDING_ENTRY_BYTES
}

fn default_cmt() -> ByteSize {
    ByteSize::mib(4)
}
fn default_segment() -> u32 {
    64
}

impl MappingConfig {
    /// Whether every flow shares the whole CMT (`mapping.partition`; the full map has no CMT).
    pub fn cmt_shared(&self) -> bool {
        match self {
            MappingConfig::Dftl { partition, .. } => partition.is_shared(),
            MappingConfig::Full => true,
        }
    }
}

impl Default for MappingConfig {
    fn default() -> Self {
        MappingConfig::Dftl {
            cmt: default_cmt(),
            segment_entries: default_segment(),
            pending: None,
            partition: Default::default(),
        }
    }
}

/// The write-back data cache.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    /// DRAM for cached data, in mapping-unit lines. Default: 64MiB.
    #[serde(default = "default_cache")]
    pub capacity: ByteSize,
    /// Keep data read from flash in the cache (in a free or clean line: a read never waits
    /// for a dirty line to be written back). Default: true.
    #[serde(default = "yes")]
    pub read_allocate: bool,
    /// How dirty lines reach flash. Default: array.
    #[serde(default)]
    pub write_back: WriteBackMode,
    /// Background flushing: once more than this fraction of the lines is dirty, write the
    /// least recently used dirty lines back ahead of need. Default: off.
    #[serde(default)]
    pub flush_threshold: Option<f64>,
    /// Background write-backs in flight at most (each a page on every plane of a die).
    /// Default: two per plane of the array.
    #[serde(default)]
    pub flush_parallel: Option<u32>,
    /// How the lines are split between flows: `"shared"` (one LRU order for all), `"equal"`
    /// (an equal share each) or a list of fractions, one per flow in the order of the jobs,
    /// summing to 1. A flow's lines are evicted only to make room for that flow. See
    /// `ftl::partition`. Default: shared.
    #[serde(default, skip_serializing_if = "crate::ftl::Partition::is_shared")]
    pub partition: crate::ftl::Partition,
}

/// How dirty cache lines reach flash.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteBackMode {
    /// Background write-backs keep the whole array programming while the cache is short of
    /// lines: once fewer lines are left than a full pool of write-backs frees, up to
    /// `flush_parallel` of them run, each a page on every plane of a die; a request waits only
    /// for a free line. Throughput is then bounded by the flash, not by the requests waiting.
    #[default]
    Array,
    /// A request that finds no free or clean line writes the oldest dirty page back itself
    /// and waits for it, as SoftSSD's firmware does: the write-backs in flight are the
    /// requests waiting for a line.
    OnDemand,
}

fn default_cache() -> ByteSize {
    ByteSize::mib(64)
}
fn yes() -> bool {
    true
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            capacity: default_cache(),
            read_allocate: true,
            write_back: WriteBackMode::default(),
            flush_threshold: None,
            flush_parallel: None,
            partition: crate::ftl::Partition::default(),
        }
    }
}

impl CacheConfig {
    /// Write-backs in flight at most on `geo`.
    pub fn flush_parallel(&self, geo: &Geometry) -> u32 {
        self.flush_parallel.unwrap_or(2 * geo.total_dies() * geo.planes)
    }
}

/// One dimension of a static allocation order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Dim {
    /// Channel.
    C,
    /// Way (chip on a channel).
    W,
    /// Die.
    D,
    /// Plane.
    P,
}

/// Which plane the next user page goes to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum AllocConfig {
    /// Stripe consecutive pages over the array in a fixed order, first letter fastest.
    Static {
        /// A permutation of C, W, D, P. Default: "CWDP".
        #[serde(default = "default_order")]
        order: String,
    },
    /// The die with the fewest transactions queued or running in the FIL.
    LeastBusy,
    /// The plane with the fewest valid units (most room).
    LeastUtilised,
}

fn default_order() -> String {
    "CWDP".into()
}

impl Default for AllocConfig {
    fn default() -> Self {
        AllocConfig::Static { order: default_order() }
    }
}

impl AllocConfig {
    /// The parsed static order, fastest dimension first.
    pub fn order(&self) -> Option<[Dim; 4]> {
        let AllocConfig::Static { order } = self else { return None };
        let dims: Vec<Dim> = order
            .chars()
            .filter_map(|c| match c.to_ascii_uppercase() {
                'C' => Some(Dim::C),
                'W' => Some(Dim::W),
                'D' => Some(Dim::D),
                'P' => Some(Dim::P),
                _ => None,
            })
            .collect();
        let all = [Dim::C, Dim::W, Dim::D, Dim::P].iter().all(|d| dims.contains(d));
        (dims.len() == 4 && order.len() == 4 && all).then(|| [dims[0], dims[1], dims[2], dims[3]])
    }
}

/// How GC chooses a victim block.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VictimPolicy {
    /// Fewest valid units.
    #[default]
    Greedy,
    /// Highest (1 - u) / 2u x age (Kawaguchi et al.).
    CostBenefit,
    /// A random full block.
    Random,
    /// The block that was filled longest ago.
    Fifo,
}

/// Garbage collection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GcConfig {
    /// Victim selection. Default: greedy.
    #[serde(default)]
    pub victim: VictimPolicy,
    /// Background GC starts when a plane has fewer free blocks than this. Default: 2% of the
    /// plane's blocks, at least hard_free + 2.
    #[serde(default)]
    pub soft_free: Option<u32>,
    /// Foreground GC: host writes to a plane wait while it has this many free blocks or fewer
    /// (the rest are kept for GC and mapping writes). Default: 2.
    #[serde(default = "default_hard")]
    pub hard_free: u32,
    /// How background GC (a plane between the hard and the soft threshold) is paced against
    /// host writes. Default: paced.
    #[serde(default)]
    pub pacing: GcPacing,
    /// Under `paced`: the fraction of a block's units that must be stale for background GC to
    /// collect it without host writes to pace it. Default: the stale fraction of a victim in
    /// the steady state of FIFO cleaning under uniform random writes at this over-provisioning
    /// (Desnoyers 2012; 0.137 at 7%), which greedy's victims reach or beat.
    #[serde(default)]
    pub worthwhile_stale: Option<f64>,
    /// Under `paced`: a plane with this many free blocks or fewer admits host writes only as
    /// fast as its GC regains space (each victim's stale units, earned as its valid units
    /// move), and its GC collects whatever its victims gain (while its GC is not running, for
    /// want of a victim that could free a block, writes are admitted). Default: hard_free + 1;
    /// equal to hard_free, no admission (host writes run the plane down to the hard threshold).
    #[serde(default)]
    pub admit_free: Option<u32>,
}

/// How background GC is paced (docs/write-path.md, "GC pacing").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcPacing {
    /// A plane below the soft threshold is collected flat out, whatever its victims gain (the
    /// behaviour before pacing; it collects nearly full victims while the host is idle).
    Eager,
    /// Below the soft threshold, a victim with at least `worthwhile_stale` of its units stale
    /// is collected at once; a poorer one only as host and mapping writes consume the plane's
    /// space, (soft - free) / (soft - hard) blocks regained per block consumed (0 at the soft
    /// threshold, 1 at the hard one). An idle host pays for no poor victims.
    #[default]
    Paced,
}

fn default_hard() -> u32 {
    2
}

impl Default for GcConfig {
    fn default() -> Self {
        GcConfig {
            victim: VictimPolicy::Greedy,
            soft_free: None,
            hard_free: default_hard(),
            pacing: GcPacing::default(),
            worthwhile_stale: None,
            admit_free: None,
        }
    }
}

impl GcConfig {
    /// The background threshold for planes of `blocks` blocks.
    pub fn soft(&self, blocks: u32) -> u32 {
        self.soft_free.unwrap_or((blocks / 50).max(self.hard_free + 2))
    }

    /// The free-block level at or below which host writes are admitted against GC's progress
    /// (see [`admit_free`](Self::admit_free)); `hard_free` when nothing is admitted that way
    /// (eager GC).
    pub fn admission(&self) -> u32 {
        match self.pacing {
            GcPacing::Paced => self.admit_free.unwrap_or(self.hard_free + 1),
            GcPacing::Eager => self.hard_free,
        }
    }

    /// The stale fraction that makes a victim worth collecting at once, at over-provisioning
    /// `op` (see [`worthwhile_stale`](Self::worthwhile_stale)).
    pub fn worthwhile(&self, op: f64) -> f64 {
        self.worthwhile_stale.unwrap_or_else(|| 1.0 - crate::ftl::gc::theory::fifo_victim_valid(op))
    }
}

/// Wear levelling.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WlConfig {
    /// Dynamic WL: open the free block with the lowest erase count. Default: true.
    #[serde(default = "yes")]
    pub dynamic: bool,
    /// Static WL: when a plane's erase-count spread exceeds this, migrate its coldest block.
    /// Default: off.
    #[serde(default)]
    pub static_threshold: Option<u32>,
}

impl Default for WlConfig {
    fn default() -> Self {
        WlConfig { dynamic: true, static_threshold: None }
    }
}

/// FTL CPU costs, in cycles of the core the FTL runs on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtlCosts {
    /// Per mapping unit: cache lookup and mapping-table hit. Default: 400.
    #[serde(default = "c400")]
    pub lookup: u64,
    /// Per cached-mapping-table miss, besides the flash read. Default: 1500.
    #[serde(default = "c1500")]
    pub cmt_miss: u64,
    /// Per page written back from the cache (allocation, OOB, mapping update). Default: 1500.
    #[serde(default = "c1500")]
    pub write_back: u64,
    /// Per unit migrated by GC. Default: 600.
    #[serde(default = "c600")]
    pub gc_unit: u64,
    /// Per unit trimmed. Default: 100.
    #[serde(default = "c100")]
    pub trim: u64,
}

fn c100() -> u64 {
    100
}
fn c400() -> u64 {
    400
}
fn c600() -> u64 {
    600
}
fn c1500() -> u64 {
    1500
}

impl Default for FtlCosts {
    fn default() -> Self {
        FtlCosts { lookup: 400, cmt_miss: 1500, write_back: 1500, gc_unit: 600, trim: 100 }
    }
}

/// The flash translation layer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtlConfig {
    /// Over-provisioning: the fraction of raw capacity hidden from the host, in (0, 1).
    /// Default: 0.07.
    #[serde(default = "default_op")]
    pub op: f64,
    /// Logical-to-physical mapping. Default: DFTL with a 4 MiB CMT.
    #[serde(default)]
    pub mapping: MappingConfig,
    /// Data cache. Default: 64 MiB, read-allocate.
    #[serde(default)]
    pub cache: CacheConfig,
    /// Allocation of user pages. Default: static CWDP.
    #[serde(default)]
    pub allocation: AllocConfig,
    /// Garbage collection. Default: greedy.
    #[serde(default)]
    pub gc: GcConfig,
    /// Wear levelling. Default: dynamic only.
    #[serde(default)]
    pub wl: WlConfig,
    /// Fraction of blocks that are factory bad (placed with the run's seed). Default: 0.
    #[serde(default)]
    pub bad_block_rate: f64,
    /// CPU costs.
    #[serde(default)]
    pub costs: FtlCosts,
    /// Complete host commands without touching the FTL (to measure the host interface alone).
    /// Default: false.
    #[serde(default)]
    pub bypass: bool,
    /// Background data refresh (scrubbing), under the ECC's error model. Default: every day.
    #[serde(default)]
    pub refresh: RefreshConfig,
    /// A zoned namespace (NVMe ZNS) instead of the conventional one. Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zoned: Option<crate::ftl::zoned::ZonedConfig>,
    /// NVMe Flexible Data Placement (`[ftl.fdp]`, docs/fdp.md). Default: off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fdp: Option<crate::ftl::fdp::FdpConfig>,
}

/// Background data refresh: the FTL looks at every closed block at an interval of virtual
/// time and rewrites (through its plane's GC) those whose worst page, read now, would have
/// close to as many bit errors per codeword as the ECC corrects. Only under the ECC's error
/// model (`[ecc.errors]`); without it nothing ages.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefreshConfig {
    /// How often every closed block is looked at (`"0"`: never, refresh off). Default: 1d.
    #[serde(default = "default_refresh_interval")]
    pub interval: SimDuration,
    /// A block is rewritten once its worst page's expected bit errors per codeword reach this
    /// fraction of `ecc.correctable`, in (0, 1]. Default: 0.5 (chosen: half the code's
    /// strength leaves room for the spread of the count around its mean; see docs/errors.md).
    #[serde(default = "default_refresh_threshold")]
    pub threshold: f64,
}

fn default_refresh_interval() -> SimDuration {
    SimDuration::from_secs(86_400)
}

fn default_refresh_threshold() -> f64 {
    0.5
}

impl Default for RefreshConfig {
    fn default() -> Self {
        RefreshConfig { interval: default_refresh_interval(), threshold: default_refresh_threshold() }
    }
}

fn default_op() -> f64 {
    0.07
}

impl Default for FtlConfig {
    fn default() -> Self {
        FtlConfig {
            op: default_op(),
            mapping: MappingConfig::default(),
            cache: CacheConfig::default(),
            allocation: AllocConfig::default(),
            gc: GcConfig::default(),
            wl: WlConfig::default(),
            bad_block_rate: 0.0,
            costs: FtlCosts::default(),
            bypass: false,
            refresh: RefreshConfig::default(),
            zoned: None,
            fdp: None,
        }
    }
}

/// First LPN value used to tag translation pages in the OOB (above every host LPN).
pub const TRANSLATION_LPN_BASE: u32 = 0x7000_0000;

impl FtlConfig {
    /// DRAM for pending mapping updates (DFTL's `pending`; its default given `geo` and `dram`,
    /// the controller's); 0 with the full map.
    pub fn pending_bytes(&self, geo: &Geometry, dram: ByteSize) -> u64 {
        match &self.mapping {
            MappingConfig::Dftl { cmt, pending, .. } => pending.map_or_else(
                || {
                    let left = dram.bytes().saturating_sub(self.cache.capacity.bytes() + cmt.bytes());
                    default_pending(self.logical_units(geo), geo).min(left)
                },
                |p| p.bytes(),
            ),
            MappingConfig::Full => 0,
        }
    }

    /// This configuration with its defaults that depend on the controller's `dram` filled in
    /// (DFTL's pending-update budget).
    pub fn resolved(&self, geo: &Geometry, dram: ByteSize) -> FtlConfig {
        let mut cfg = self.clone();
        let bytes = self.pending_bytes(geo, dram);
        if let MappingConfig::Dftl { pending, .. } = &mut cfg.mapping {
            *pending = Some(ByteSize(bytes));
        }
        cfg
    }

    /// The zoned namespace, if the namespace is zoned (`[ftl.zoned]` present and enabled).
    pub fn zoned_ns(&self) -> Option<&crate::ftl::zoned::ZonedConfig> {
        self.zoned.as_ref().filter(|z| z.enabled)
    }

    /// Host-visible mapping units for `geo`.
    pub fn logical_units(&self, geo: &Geometry) -> u32 {
        match self.zoned_ns() {
            // Every zone's size (units past a zone's capacity are never written).
            Some(z) => {
                let l = z.layout(geo, self.op);
                (l.zones as u64 * l.size_units).min(u32::MAX as u64) as u32
            }
            None => ((geo.total_units() as f64) * (1.0 - self.op)).floor() as u32,
        }
    }

    /// Checks the FTL against the geometry and DRAM; the error names the first bad field.
    pub fn validate(&self, geo: &Geometry, dram: ByteSize) -> Result<(), ConfigError> {
        ensure(self.op.is_finite() && self.op > 0.0 && self.op < 1.0, "op", || {
            format!("over-provisioning must be between 0 and 1, exclusive (got {})", self.op)
        })?;
        ensure(
            self.bad_block_rate.is_finite() && (0.0..0.5).contains(&self.bad_block_rate),
            "bad_block_rate",
            || format!("must be at least 0 and below 0.5 (got {})", self.bad_block_rate),
        )?;
        if let Some(z) = self.zoned_ns() {
            ensure(self.fdp.is_none(), "fdp", || {
                "FDP places data on a conventional namespace; a zoned one places it by zones (drop one of the two)".into()
            })?;
            z.validate(geo, self.op, None)?;
            ensure(self.mapping == MappingConfig::Full, "mapping", || {
                "a zoned namespace keeps its map in DRAM: set mapping.kind = \"full\"".into()
            })?;
        }
        let units = self.logical_units(geo);
        ensure(units >= 1, "op", || "leaves no logical capacity".into())?;
        ensure(units < TRANSLATION_LPN_BASE, "op", || {
            format!("{units} logical units exceed the {TRANSLATION_LPN_BASE} an OOB can name")
        })?;
        if let Some(w) = self.gc.worthwhile_stale {
            ensure(w.is_finite() && (0.0..=1.0).contains(&w), "gc.worthwhile_stale", || {
                format!("must be a fraction of a block's units, from 0 to 1 (got {w})")
            })?;
        }
        let spare = geo.blocks as f64 * (self.op - self.bad_block_rate);
        let need = self.gc.soft(geo.blocks) + 2;
        // A zoned namespace has no GC: its spare blocks only replace bad ones and padding.
        ensure(self.zoned_ns().is_some() || spare >= need as f64, "op", || {
            format!(
                "each plane keeps {:.1} spare blocks but GC needs at least {need} (soft_free + 2); raise op or lower gc.soft_free",
                spare
            )
        })?;
        ensure(self.gc.hard_free >= 1, "gc.hard_free", || "must be at least 1".into())?;
        if let Some(f) = &self.fdp {
            f.validate(geo, spare, need)?;
        }
        let t = self.refresh.threshold;
        ensure(t.is_finite() && t > 0.0 && t <= 1.0, "refresh.threshold", || {
            format!("must be a fraction of ecc.correctable in (0, 1] (got {t})")
        })?;
        ensure(self.gc.soft(geo.blocks) > self.gc.hard_free, "gc.soft_free", || {
            format!("must be above gc.hard_free ({})", self.gc.hard_free)
        })?;
        if let Some(a) = self.gc.admit_free {
            let (hard, soft) = (self.gc.hard_free, self.gc.soft(geo.blocks));
            ensure(a >= hard && a < soft, "gc.admit_free", || {
                format!("must be from gc.hard_free ({hard}) to below the soft threshold ({soft}) (got {a})")
            })?;
        }
        if let AllocConfig::Static { order } = &self.allocation {
            ensure(self.allocation.order().is_some(), "allocation.order", || {
                format!("must be a permutation of C, W, D and P, such as CWDP (got {order:?})")
            })?;
        }
        if let Some(t) = self.cache.flush_threshold {
            ensure(t.is_finite() && t > 0.0 && t < 1.0, "cache.flush_threshold", || {
                format!("must be a fraction between 0 and 1, exclusive (got {t})")
            })?;
        }
        ensure(self.cache.flush_parallel != Some(0), "cache.flush_parallel", || "must be at least 1".into())?;
        if let Err(why) = self.cache.partition.validate() {
            return Err(ConfigError::new("cache.partition", why));
        }
        let unit = geo.mapping_unit.bytes();
        ensure(
            self.cache.capacity.bytes() >= unit * geo.units_per_page() as u64 * 2,
            "cache.capacity",
            || {
                format!(
                    "must hold at least two pages of lines ({})",
                    ByteSize(unit * geo.units_per_page() as u64 * 2)
                )
            },
        )?;
        let mut used = self.cache.capacity.bytes();
        if let MappingConfig::Dftl { cmt, segment_entries, partition, .. } = &self.mapping {
            if let Err(why) = partition.validate() {
                return Err(ConfigError::new("mapping.partition", why));
            }
            ensure(*segment_entries >= 1 && *segment_entries <= 4096, "mapping.segment_entries", || {
                format!("must be between 1 and 4096 (got {segment_entries})")
            })?;
            let entries_per_tpage = geo.page_bytes() / 4;
            ensure(entries_per_tpage.is_multiple_of(*segment_entries), "mapping.segment_entries", || {
                format!("must divide the {entries_per_tpage} entries of a translation page")
            })?;
            ensure(cmt.bytes() >= 8 * *segment_entries as u64 * 4, "mapping.cmt", || {
                format!("must hold at least four segments ({})", ByteSize(32 * *segment_entries as u64))
            })?;
            used += cmt.bytes() + self.pending_bytes(geo, dram);
        } else {
            used += 4 * units as u64;
        }
        ensure(used <= dram.bytes(), "cache.capacity", || {
            format!(
                "the data cache and mapping table (with its pending updates) need {} but the controller has {} of DRAM",
                ByteSize(used),
                dram
            )
        })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_orders_parse() {
        let a = AllocConfig::Static { order: "pdwc".into() };
        assert_eq!(a.order(), Some([Dim::P, Dim::D, Dim::W, Dim::C]));
        assert_eq!(AllocConfig::Static { order: "CWDD".into() }.order(), None);
        assert_eq!(AllocConfig::Static { order: "CWDPX".into() }.order(), None);
    }
}
