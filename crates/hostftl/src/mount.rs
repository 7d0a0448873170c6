//! Building the host-side FTL over a fresh array, or over one that holds data (a reopened
//! NAND image after a crash or a clean stop): the map is rebuilt from the array's valid units
//! (the newest copy of each LPN, by first-write number, as the array keeps them when it is
//! restored from the OOB), partly written blocks become write frontiers again, and writes
//! continue numbering after the newest write found.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use firmware::config::HostFtlConfig;
use firmware::ftl::{BlockManager, FtlConfig, FtlStats, Stream};
use firmware::system::HostStack;
use nand::{BlockIdx, UnitState};
use raw::RawArray;
use rustc_hash::FxHashMap;
use sim::sync::Notify;
use sim::{CoreId, Cx};

use crate::alloc::Placer;
use crate::ftl::{HostFtl, Inner, UNMAPPED};

/// What the FTL is built from.
pub struct Parts {
    /// The raw array.
    pub raw: Rc<RawArray>,
    /// The host it runs on.
    pub host: Rc<HostStack>,
    /// Its configuration.
    pub cfg: HostFtlConfig,
    /// The device's FTL policies.
    pub policy: FtlConfig,
    /// The host core GC runs on.
    pub gc_core: CoreId,
}

impl HostFtl {
    /// An FTL over `parts.raw`'s array: empty if the array is fresh, else mounted over its data
    /// (see the module docs); the error says what does not fit.
    pub fn open(cx: &Cx, parts: Parts) -> Result<HostFtl, MountError> {
        let geo = parts.raw.geometry().clone();
        let (states, has_data): (Vec<(u32, u32, bool)>, bool) = {
            let array = parts.raw.fil().array().borrow();
            let s: Vec<_> = array.blocks().iter().map(|b| (b.write_ptr, b.erase_count, b.bad)).collect();
            let data = s.iter().any(|b| b.0 > 0);
            (s, data)
        };
        let dynamic = parts.policy.wl.dynamic;
        let blocks = if has_data {
            BlockManager::restore(&geo, dynamic, states.iter().copied(), |_| (Stream::User, 0))
        } else {
            let bad: Vec<BlockIdx> =
                states.iter().enumerate().filter(|(_, s)| s.2).map(|(b, _)| BlockIdx(b as u32)).collect();
            BlockManager::new(&geo, dynamic, &bad)
        };
        let logical = parts.policy.logical_units(&geo);
        let payload = parts.raw.fil().array().borrow().keeps_payload();
        let placer = Placer::new(&geo, parts.cfg.groups, parts.policy.gc.hard_free);
        let planes = (geo.total_dies() * geo.planes) as usize;
        let ftl = HostFtl {
            inner: Rc::new(Inner {
                cx: cx.clone(),
                l2p: RefCell::new(vec![UNMAPPED; logical as usize]),
                blocks: RefCell::new(blocks),
                placer: RefCell::new(placer),
                pending: RefCell::new(FxHashMap::default()),
                seq: Cell::new(1),
                stats: RefCell::new(FtlStats::default()),
                hits: Cell::new((0, 0)),
                space: Notify::new(cx, "host ftl: free block"),
                programmed: Notify::new(cx, "host ftl: page programmed"),
                unpinned: Notify::new(cx, "host ftl: read done"),
                programs: Cell::new(0),
                writes: Cell::new(0),
                gc_active: RefCell::new(vec![false; planes]),
                mapped: Cell::new(0),
                deferrals: Cell::new(0),
                buffered: RefCell::new(std::collections::VecDeque::new()),
                buffer_work: Notify::new(cx, "host ftl: buffered writes"),
                drained: Notify::new(cx, "host ftl: buffer drained"),
                flushing: Cell::new(0),
                rng: RefCell::new(cx.fork_rng()),
                gc_core: parts.gc_core,
                raw: parts.raw,
                host: parts.host,
                cfg: parts.cfg,
                policy: parts.policy,
                logical,
                payload,
                geo,
            }),
        };
        if has_data {
            ftl.inner.rebuild(&states)?;
        }
        let i = &ftl.inner;
        i.host.set_memory("block table", geo_blocks(i) * i.cfg.memory.block_bytes as u64);
        i.account();
        if i.cfg.write.buffer.bytes() > 0 {
            i.start_flushers();
        }
        Ok(ftl)
    }
}

fn geo_blocks(i: &Inner) -> u64 {
    i.geo.total_blocks() as u64
}

impl Inner {
    /// Rebuilds the map and the frontiers from the array's data.
    fn rebuild(&self, states: &[(u32, u32, bool)]) -> Result<(), MountError> {
        let mut newest = 0u64;
        let mut array = self.raw.fil().array().borrow_mut();
        for (b, &(write_ptr, _, _)) in states.iter().enumerate() {
            let block = BlockIdx(b as u32);
            for p in 0..write_ptr {
                let page = self.geo.page_of(block, p);
                let mut valid = false;
                for s in 0..self.geo.units_per_page() {
                    let unit = self.geo.unit_addr(page, s);
                    if let UnitState::Valid(lpn) = array.unit(unit) {
                        if lpn.0 >= self.logical {
                            return Err(MountError::BeyondCapacity {
                                block: b as u32,
                                lpn: lpn.0,
                                logical: self.logical,
                            });
                        }
                        self.l2p.borrow_mut()[lpn.0 as usize] = unit.0;
                        self.mapped.set(self.mapped.get() + 1);
                        valid = true;
                    }
                }
                if valid {
                    let oob = array
                        .read(page, None)
                        .map_err(|source| MountError::Oob { block: b as u32, source })?;
                    newest = newest.max(oob.borns().iter().copied().max().unwrap_or(0)).max(oob.seq);
                }
            }
            if write_ptr > 0 && write_ptr < self.geo.pages {
                let mut blocks = self.blocks.borrow_mut();
                if !self.placer.borrow_mut().frontiers().adopt(Stream::User, block, write_ptr, &blocks) {
                    blocks.close(block);
                }
            }
        }
        self.seq.set(newest + 1);
        Ok(())
    }
}

/// Why an array's data could not be mounted under the host FTL's configuration.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MountError {
    /// A block holds an LPN beyond the configured capacity.
    #[error("block {block} holds LPN {lpn} beyond the {logical} logical units")]
    BeyondCapacity {
        /// The block.
        block: u32,
        /// The LPN.
        lpn: u32,
        /// Logical units configured.
        logical: u32,
    },
    /// A page's OOB could not be read.
    #[error("reading the OOB of block {block}: {source}")]
    Oob {
        /// The block.
        block: u32,
        /// What the page store said.
        source: std::io::Error,
    },
}
