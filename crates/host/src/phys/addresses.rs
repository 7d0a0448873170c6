//! Address generation: which page each transaction of a physical workload touches.
//!
//! Target dies are ordered channel first (die 0 of way 0 on every channel, then way 1, ...), so
//! a stripe spreads consecutive transactions over channels before loading any one channel
//! twice. Programs fill each die plane by plane in lockstep (page k of every used plane before
//! page k + 1), which keeps multi-plane partners at the same page offset and pages of a block
//! in order.

use firmware::fil::{FlashOp, FlashRequest, PageWrite, TxnSource};
use nand::{DieIdx, Geometry, Oob, PageIdx, Ppa};
use rand::RngExt;
use sim::SimRng;

use crate::phys::workload::{PhysOp, PhysPattern, PhysWorkload, READ_BLOCKS, Span};

pub(crate) struct Addresses {
    geo: Geometry,
    span: Span,
    targets: Vec<DieIdx>,
    pattern: PhysPattern,
    /// Pages programmed so far on each target die (all planes together).
    programmed: Vec<u64>,
    /// First block (per plane) programs may use.
    first_fresh: u32,
    read_bytes: u32,
    next: u64,
}

impl Addresses {
    pub fn new(geo: &Geometry, w: &PhysWorkload) -> Self {
        let span = w.span(geo);
        let mut targets = Vec::with_capacity(span.die_count() as usize);
        for die in 0..span.dies {
            for way in 0..span.ways {
                for channel in 0..span.channels {
                    let ppa = Ppa {
                        channel: channel as u16,
                        way: way as u16,
                        die: die as u8,
                        plane: 0,
                        block: 0,
                        page: 0,
                    };
                    targets.push(geo.die_idx(ppa));
                }
            }
        }
        let reads = matches!(w.op, PhysOp::Read | PhysOp::Mixed);
        Addresses {
            geo: geo.clone(),
            span,
            programmed: vec![0; targets.len()],
            targets,
            pattern: w.pattern,
            first_fresh: if reads { READ_BLOCKS } else { 0 },
            read_bytes: w.read_bytes.map_or(0, |b| b.bytes() as u32),
            next: 0,
        }
    }

    /// Pages to program before the run so that reads have data: every page of the first
    /// `READ_BLOCKS` blocks of each used plane of each target die.
    pub fn prefill(&self) -> Vec<PageIdx> {
        let mut pages = Vec::new();
        for &die in &self.targets {
            for plane in 0..self.span.planes {
                for block in 0..READ_BLOCKS {
                    let b = self.geo.block_idx(die, plane, block);
                    pages.extend((0..self.geo.pages).map(|p| self.geo.page_of(b, p)));
                }
            }
        }
        pages
    }

    /// Every block a program of this workload may touch (all blocks after the read region on
    /// the used planes of the target dies).
    pub fn program_blocks(&self) -> Vec<nand::BlockIdx> {
        let mut blocks = Vec::new();
        for &die in &self.targets {
            for plane in 0..self.span.planes {
                blocks.extend((self.first_fresh..self.geo.blocks).map(|b| self.geo.block_idx(die, plane, b)));
            }
        }
        blocks
    }

    /// The die for the next transaction (stripe: planes of one die back to back).
    fn die(&self, i: u64, rng: &mut SimRng) -> usize {
        match self.pattern {
            PhysPattern::Stripe => ((i / self.span.planes as u64) % self.targets.len() as u64) as usize,
            PhysPattern::Random => rng.random_range(0..self.targets.len()),
        }
    }

    /// The next request for operation `op`.
    pub fn next(&mut self, op: FlashOp, rng: &mut SimRng) -> FlashRequest {
        let i = self.next;
        self.next += 1;
        let t = self.die(i, rng);
        let die = self.targets[t];
        let (geo, planes) = (&self.geo, self.span.planes);
        match op {
            FlashOp::Program => {
                let k = self.programmed[t];
                self.programmed[t] += 1;
                let (plane, j) = ((k % planes as u64) as u32, k / planes as u64);
                let block = self.first_fresh + (j / geo.pages as u64) as u32;
                let page = geo.page_of(geo.block_idx(die, plane, block), (j % geo.pages as u64) as u32);
                let write = PageWrite { oob: Oob::empty(geo.units_per_page()), data: None };
                FlashRequest::program(TxnSource::User, page, write)
            }
            FlashOp::Read => {
                let span = (READ_BLOCKS * geo.pages) as u64;
                let (plane, j) = match self.pattern {
                    PhysPattern::Stripe => {
                        let round = i / (planes as u64 * self.targets.len() as u64);
                        ((i % planes as u64) as u32, round % span)
                    }
                    PhysPattern::Random => (rng.random_range(0..planes), rng.random_range(0..span)),
                };
                let block = geo.block_idx(die, plane, (j / geo.pages as u64) as u32);
                let mut req =
                    FlashRequest::read(TxnSource::User, geo.page_of(block, (j % geo.pages as u64) as u32));
                req.xfer_bytes = self.read_bytes;
                req
            }
            FlashOp::Erase => {
                let round = i / (planes as u64 * self.targets.len() as u64);
                let plane = (i % planes as u64) as u32;
                let block = geo.block_idx(die, plane, (round % geo.blocks as u64) as u32);
                FlashRequest::erase(TxnSource::User, geo.page_of(block, 0))
            }
        }
    }
}
