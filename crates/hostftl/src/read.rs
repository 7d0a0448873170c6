//! The read path: units still in host memory are served from there; the rest are looked up in
//! the map and read with one raw command per controller (as many pages as a command names),
//! their blocks pinned against GC until the data is back.

use std::collections::BTreeMap;
use std::rc::Rc;

use firmware::fil::TxnSource;
use firmware::ftl::{MediaError, UnitData};
use firmware::trace::Phases;
use nand::{DataTag, Lpn, PageIdx};
use raw::{RawCommand, RawOp, RawStatus};

use crate::ftl::{Critical, Inner};

impl Inner {
    /// Reads units for one host command, in order; unwritten units read as zeroes. Adds the
    /// time spent to `ph`.
    pub async fn read_units(
        self: &Rc<Self>,
        lpns: &[Lpn],
        ph: &mut Phases,
    ) -> Vec<Result<UnitData, MediaError>> {
        self.cpu(self.cfg.costs.lookup * lpns.len() as u64).await;
        self.stats.borrow_mut().host_units_read += lpns.len() as u64;
        let ub = self.geo.unit_bytes() as usize;
        let mut out: Vec<Option<Result<UnitData, MediaError>>> = vec![None; lpns.len()];
        // Page -> (index in `lpns`, slot) of the units to read from it.
        let mut pages: BTreeMap<PageIdx, Vec<(usize, u32)>> = BTreeMap::new();
        let (mut hits, mut misses) = self.hits.get();
        for (i, lpn) in lpns.iter().enumerate() {
            if let Some(p) = self.pending.borrow().get(&lpn.0) {
                out[i] = Some(Ok(p.data.clone()));
                hits += 1;
                continue;
            }
            match self.lookup(*lpn) {
                None => out[i] = Some(Ok(UnitData::zero(self.payload, ub))),
                Some(u) => {
                    let (page, slot) = self.geo.unit_page(u);
                    pages.entry(page).or_default().push((i, slot));
                    misses += 1;
                }
            }
        }
        self.hits.set((hits, misses));
        if !pages.is_empty() {
            self.read_pages(pages, &mut out, ph).await;
        }
        out.into_iter().map(|r| r.expect("every unit answered")).collect()
    }

    /// Reads `pages` (pinned meanwhile) and fills in the units each was read for.
    async fn read_pages(
        self: &Rc<Self>,
        pages: BTreeMap<PageIdx, Vec<(usize, u32)>>,
        out: &mut [Option<Result<UnitData, MediaError>>],
        ph: &mut Phases,
    ) {
        let upp = self.geo.units_per_page();
        let timing = self.raw.fil().timing().clone();
        // Commands by (controller, bytes per page): as many pages as a command names.
        let mut groups: BTreeMap<(usize, u32), Vec<(PageIdx, Vec<(usize, u32)>)>> = BTreeMap::new();
        for (page, units) in pages {
            self.blocks.borrow_mut().pin(self.geo.block_of(page));
            let bytes = timing.partial_xfer_bytes(units.len() as u32, upp, self.geo.unit_bytes());
            let bytes = if units.len() as u32 >= upp { 0 } else { bytes };
            let c = self.raw.controller_of(self.geo.ppa(page).channel as u32);
            groups.entry((c, bytes)).or_default().push((page, units));
        }
        let max = self.raw.config().max_ppas();
        let mut waiting = Vec::new();
        for ((_, bytes), list) in groups {
            for chunk in list.chunks(max) {
                let cmd = RawCommand {
                    op: RawOp::Read { bytes, want_data: self.payload },
                    source: TxnSource::User,
                    ppas: chunk.iter().map(|(p, _)| self.geo.ppa(*p)).collect(),
                };
                waiting.push((chunk.to_vec(), self.raw.submit(cmd)));
            }
        }
        let commands = waiting.len() as u64;
        self.cpu(self.cfg.costs.command * commands).await;
        let ub = self.geo.unit_bytes() as usize;
        let mut critical = Critical::default();
        for (chunk, done) in waiting {
            let c = done.await;
            for (k, (page, units)) in chunk.iter().enumerate() {
                self.unpin(self.geo.block_of(*page));
                for &(i, slot) in units {
                    out[i] = Some(match (&c.status, c.results.get(k)) {
                        (RawStatus::Ok, Some(r)) => Ok(match &r.data {
                            Some(d) => {
                                UnitData::Bytes(d[slot as usize * ub..(slot as usize + 1) * ub].into())
                            }
                            None => {
                                UnitData::Tag(r.oob.as_ref().map_or(DataTag(0), |o| o.tag(slot as usize)))
                            }
                        }),
                        (s, _) => Err(MediaError::Store(format!("{s:?}"))),
                    });
                }
            }
            critical.see(c);
        }
        critical.add_to(ph, self.cx.now());
        self.cpu(self.cfg.costs.completion * commands).await;
    }

    /// A read of `block` is over.
    pub fn unpin(&self, block: nand::BlockIdx) {
        let mut blocks = self.blocks.borrow_mut();
        blocks.unpin(block);
        if blocks.info(block).pins == 0 {
            drop(blocks);
            self.unpinned.notify_all();
        }
    }
}
