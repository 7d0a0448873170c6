//! The FTL's shared state and its construction. Every request coroutine holds an [`Ftl`]
//! handle; state is borrowed only between awaits, never across one.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use nand::{BlockIdx, Geometry};
use rand::RngExt;
use sim::{CoreId, Cx, SimRng};

use crate::ecc::Ecc;
use crate::fil::Fil;
use crate::flow::{Flow, FlowStats};
use crate::ftl::alloc::Allocator;
use crate::ftl::blocks::BlockManager;
use crate::ftl::cache::DataCache;
use crate::ftl::config::FtlConfig;
use crate::ftl::gc::Gc;
use crate::ftl::map::Mapping;
use crate::ftl::policies::Policies;
use crate::ftl::retire::BadBlocks;
use crate::ftl::stats::FtlStats;
use crate::ftl::waits::Waits;
use crate::ftl::writeback_policy::WriteBack;

/// What an FTL is built from besides its configuration.
pub struct Setup {
    /// The simulation.
    pub cx: Cx,
    /// The core its background work (GC, write-backs, mapping rewrites) is spawned on.
    pub core: CoreId,
    /// The FIL over the array.
    pub fil: Fil,
    /// The ECC engine, if bit errors are modelled.
    pub ecc: Option<Ecc>,
    /// The architecture's placement of the work and its locks.
    pub flow: Rc<Flow>,
    /// The swappable policies.
    pub policies: Policies,
}

/// The flash translation layer. Cheap to clone.
#[derive(Clone)]
pub struct Ftl {
    pub(crate) inner: Rc<FtlInner>,
}

pub(crate) struct FtlInner {
    pub cx: Cx,
    /// The core FTL coroutines (and GC tasks) run on.
    pub core: CoreId,
    me: Weak<FtlInner>,
    pub fil: Fil,
    pub ecc: Option<Ecc>,
    pub geo: Geometry,
    pub cfg: FtlConfig,
    pub logical: u32,
    pub payload: bool,
    pub unit_bytes: usize,
    /// The mapping part: the table, and DFTL's cache of it.
    pub map: Mapping,
    pub cache: RefCell<DataCache>,
    pub blocks: RefCell<BlockManager>,
    pub alloc: RefCell<Allocator>,
    pub waits: Waits,
    /// The write-back part: when dirty lines go to flash, and the write-backs in flight.
    pub wb: WriteBack,
    /// The device is being brought to rest: the mapping flusher stops (the translation pages
    /// are written untimed afterwards), so GC can reach its threshold and end.
    pub quiescing: std::cell::Cell<bool>,
    pub stats: RefCell<FtlStats>,
    /// The GC part: planes being collected, victim and wear-levelling policies.
    pub gc: Gc,
    /// Bad-block management: blocks retiring, the spares, end of life.
    pub bad: BadBlocks,
    /// The architecture's placement of the work and its locks (see `flow`).
    pub flow: Rc<Flow>,
    pub rng: RefCell<SimRng>,
    /// The zoned namespace's data path, if the namespace is zoned (GC and refresh are off).
    pub zoned: Option<crate::ftl::zoned::Zoned>,
    /// Flexible Data Placement's state (`None` without FDP).
    pub fdp: Option<RefCell<crate::ftl::fdp::Fdp>>,
    /// NVM sets: plane subsets host data can be confined to (none defined: no confinement).
    pub sets: RefCell<crate::ftl::sets::Sets>,
    /// The data-cache partition of each submission queue's flow (indexed by queue id; see
    /// `ftl::partition`). Empty: every queue uses the first (with a shared cache, the only) one.
    pub queue_part: RefCell<Vec<u8>>,
    /// The flow of each submission queue (indexed by queue id), for counting flash work per
    /// flow (see `ftl::partition`). Empty: one flow, nothing attributed.
    pub queue_flow: RefCell<Vec<crate::fil::FlowTag>>,
}

impl Ftl {
    /// An FTL over the FIL's (fresh) array, set up `with` its core, flow and policies: marks
    /// factory bad blocks, sizes the cache and mapping table. `cfg` must be validated for this
    /// geometry.
    pub fn new(with: Setup, cfg: &FtlConfig) -> Ftl {
        let geo = with.fil.geometry().clone();
        let mut rng = with.cx.fork_rng();
        let bad = pick_bad_blocks(&geo, cfg.bad_block_rate, &mut rng);
        {
            let mut array = with.fil.array().borrow_mut();
            for &b in &bad {
                array.mark_bad(b).expect("marking a factory bad block");
            }
        }
        let blocks = BlockManager::new(&geo, cfg.wl.dynamic, &bad);
        Ftl::assemble(with, cfg, blocks, rng)
    }

    /// An FTL with `blocks` as its block roles and empty maps (the caller fills them).
    pub(crate) fn assemble(with: Setup, cfg: &FtlConfig, blocks: BlockManager, rng: SimRng) -> Ftl {
        let ftl = Ftl::parts(with, cfg, blocks, rng);
        ftl.inner.start_refresh();
        if ftl.inner.zoned.is_some() {
            let me = ftl.inner.clone();
            ftl.inner.cx.spawn_daemon(ftl.inner.core, "zone writer", async move { me.zone_writer().await });
        }
        ftl
    }

    /// The FTL's parts, nothing started.
    fn parts(with: Setup, cfg: &FtlConfig, blocks: BlockManager, rng: SimRng) -> Ftl {
        let Setup { cx, core, fil, ecc, flow, policies } = with;
        let cx = &cx;
        let geo = fil.geometry().clone();
        let payload = fil.array().borrow().keeps_payload();
        let logical = cfg.logical_units(&geo);
        let lines = (cfg.cache.capacity.bytes() / geo.mapping_unit.bytes()) as u32;
        let planes = (geo.total_dies() * geo.planes) as usize;
        let map = Mapping::new(&cfg.mapping, logical, &geo, payload);
        let tpages = map.dftl.as_ref().map_or(0, |d| d.borrow().tpages());
        let mut alloc = Allocator::with(&geo, policies.placement);
        let stats = FtlStats::for_config(cfg);
        let fdp = cfg.fdp.as_ref().map(|f| {
            alloc.enable_fdp(f.handles, f.isolation == crate::ftl::fdp::Isolation::Persistently);
            RefCell::new(crate::ftl::fdp::Fdp::new(f, &geo, logical))
        });
        // GC cannot work with fewer spare blocks than a configuration may start with.
        let end_of_life = cfg.gc.soft(geo.blocks) + 2;
        Ftl {
            inner: Rc::new_cyclic(|me| FtlInner {
                cx: cx.clone(),
                core,
                me: me.clone(),
                ecc,
                bad: BadBlocks::new(&geo, logical, tpages, end_of_life),
                map,
                cache: RefCell::new(DataCache::new(lines)),
                blocks: RefCell::new(blocks),
                alloc: RefCell::new(alloc),
                waits: Waits::new(cx),
                wb: WriteBack::new(cx, policies.write_back),
                quiescing: std::cell::Cell::new(false),
                stats: RefCell::new(stats),
                gc: Gc::new(
                    planes,
                    policies.victim,
                    policies.wl,
                    paced_worthwhile(cfg, &geo),
                    cfg.gc.admission(),
                    cfg.gc.hard_free,
                ),
                flow,
                rng: RefCell::new(rng),
                zoned: cfg.zoned_ns().map(|z| crate::ftl::zoned::Zoned::new(cx, z, &geo, cfg.op)),
                fdp,
                sets: RefCell::default(),
                queue_part: RefCell::default(),
                queue_flow: RefCell::default(),
                unit_bytes: geo.unit_bytes() as usize,
                logical,
                payload,
                cfg: cfg.clone(),
                geo,
                fil,
            }),
        }
    }

    /// Host-visible mapping units.
    pub fn logical_units(&self) -> u32 {
        self.inner.logical
    }

    /// Whether unit data carries bytes (payload stores) or tags.
    pub fn payload(&self) -> bool {
        self.inner.payload
    }

    /// Counters so far.
    pub fn stats(&self) -> FtlStats {
        let mut st = self.inner.stats.borrow().clone();
        if let Some(d) = &self.inner.map.dftl {
            let d = d.borrow();
            (st.pending_budget, st.pending_high) = (d.pending_budget, d.pending_high);
        }
        if let Some(e) = &self.inner.ecc {
            st.ecc.with_engine(e);
        }
        st
    }

    /// (hits, misses) of the data cache.
    pub fn cache_hits(&self) -> (u64, u64) {
        let c = self.inner.cache.borrow();
        (c.hits, c.misses)
    }

    /// (hits, misses) of the cached mapping table (`None` with the full map in DRAM).
    pub fn cmt_hits(&self) -> Option<(u64, u64)> {
        self.inner.map.cmt_hits()
    }

    /// Logical units currently mapped.
    pub fn mapped_units(&self) -> u64 {
        self.inner.map.mapped_units(self.inner.logical)
    }

    /// Free blocks in every plane.
    pub fn free_blocks(&self) -> u64 {
        self.inner.blocks.borrow().total_free()
    }

    /// Available spare as SMART reports it: the worst plane's spare blocks (good blocks beyond
    /// what its data needs) above the end-of-life level, as a percentage of a plane without
    /// bad blocks (see `ftl::retire`).
    pub fn spare_percent(&self) -> f64 {
        self.inner.bad.available_percent(&self.inner.blocks.borrow(), self.inner.geo.blocks)
    }

    /// The rated P/E cycles of the error model's wear-out curve, when one is configured
    /// (SMART's percentage used counts against it rather than the timing's endurance).
    pub fn rated_pe(&self) -> Option<u32> {
        self.inner.ecc.as_ref().and_then(|e| e.rated_pe())
    }

    /// Whether the device is read-only (its spare blocks ran out): host writes, trims and
    /// write-zeroes fail; reads go on.
    pub fn read_only(&self) -> bool {
        self.inner.bad.read_only.get()
    }

    /// Cache lines holding data newer than flash (dirty, or on their way: a run ends with the
    /// host's last completion, write-backs may still be in flight).
    pub fn dirty_lines(&self) -> u64 {
        let c = self.inner.cache.borrow();
        (c.dirty_count() + c.writing_count()) as u64
    }

    /// Mapping segments in DRAM newer than their translation page (DFTL).
    pub fn dirty_segments(&self) -> u64 {
        self.inner.map.dirty_segments()
    }

    /// Writes every translation page from the map in DRAM at once, without simulating time,
    /// so that flash holds the whole map (before a snapshot). Returns the pages written, or why
    /// they could not be (the page store failed, or GC found no room for them).
    pub fn write_translation_pages_now(&self) -> Result<u32, crate::ftl::PreconditionError> {
        self.inner.write_all_translation_pages()
    }

    /// Says whether the device is being brought to rest. While it is, the mapping flusher does
    /// not run: rewriting translation pages in GC steady state never ends by itself (each
    /// rewrite takes free space whose collection moves units whose pages then need
    /// rewriting), and the rest writes them all untimed
    /// ([`write_translation_pages_now`](Self::write_translation_pages_now)).
    pub fn set_quiescing(&self, on: bool) {
        self.inner.quiescing.set(on);
    }

    /// Statistics of the architecture's locks, stage queues and wait list.
    pub fn flow_stats(&self) -> FlowStats {
        self.inner.flow.stats()
    }

    /// The core FTL coroutines run on.
    pub fn core(&self) -> CoreId {
        self.inner.core
    }

    /// The FIL underneath.
    pub fn fil(&self) -> &Fil {
        &self.inner.fil
    }

    /// Bytes of RAM the FTL's tables occupy (mapping, CMT bookkeeping, cache lines).
    pub fn resident_bytes(&self) -> usize {
        let i = &self.inner;
        i.map.resident_bytes() + i.cache.borrow().resident_bytes(i.unit_bytes)
    }
}

impl FtlInner {
    /// A counted handle on this FTL (for tasks it spawns).
    pub fn self_rc(&self) -> Rc<FtlInner> {
        self.me.upgrade().expect("the FTL is alive while its methods run")
    }
}

/// `rate` of the blocks, chosen with the run's RNG.
fn pick_bad_blocks(geo: &Geometry, rate: f64, rng: &mut SimRng) -> Vec<BlockIdx> {
    let n = (geo.total_blocks() as f64 * rate).round() as usize;
    let mut is_bad = vec![false; geo.total_blocks() as usize];
    let mut chosen = 0;
    while chosen < n {
        let b = rng.random_range(0..geo.total_blocks()) as usize;
        if !is_bad[b] {
            is_bad[b] = true;
            chosen += 1;
        }
    }
    (0..geo.total_blocks()).filter(|&b| is_bad[b as usize]).map(BlockIdx).collect()
}

/// Under paced GC, the stale units that make a victim worth collecting at once.
fn paced_worthwhile(cfg: &FtlConfig, geo: &Geometry) -> Option<u32> {
    (cfg.gc.pacing == crate::ftl::config::GcPacing::Paced)
        .then(|| (cfg.gc.worthwhile(cfg.op) * geo.units_per_block() as f64).ceil() as u32)
}
