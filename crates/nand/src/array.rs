//! Flash array state and the NAND rules.
//!
//! Per block: write pointer, valid-unit count, erase count, bad flag. Per mapping unit: the LPN
//! it holds and whether it is still valid (one `u32`: bit 31 = valid, the rest = LPN + 1, so that
//! an all-zero table — which the OS hands out lazily — means "nothing written"). A page is free
//! above its block's write pointer, valid if any of its units is valid, else invalid.
//!
//! Rules enforced here (a violation is a firmware bug and panics naming the address): pages of
//! a block are programmed in order, a programmed page is not programmed again until its block
//! is erased, blocks are erased whole, bad blocks are neither programmed nor erased, only
//! programmed pages are read, and only valid units are invalidated.

use std::io;

use serde::Serialize;

use crate::address::{BlockIdx, Lpn, PageIdx, UnitAddr};
use crate::geometry::Geometry;
use crate::oob::Oob;
use crate::parity::{PageParity, ParityLayout};
use crate::store::PageStore;

const VALID: u32 = 1 << 31;
const NO_LPN: u32 = 0;

/// Largest LPN the array can record (31 bits hold LPN + 1; the top bit marks validity).
pub const MAX_LPN: u32 = VALID - 2;

/// The table entry for `lpn`, valid.
fn encode(lpn: Lpn) -> u32 {
    (lpn.0 + 1) | VALID
}

/// The LPN a table entry names, if any.
fn decode(raw: u32) -> Option<Lpn> {
    match raw & !VALID {
        NO_LPN => None,
        v => Some(Lpn(v - 1)),
    }
}

/// State of one erase block.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BlockState {
    /// Pages programmed since the last erase (the next page to program).
    pub write_ptr: u32,
    /// Units still valid.
    pub valid_units: u32,
    /// Times erased.
    pub erase_count: u32,
    /// Factory or grown bad block: never programmed or erased.
    pub bad: bool,
}

/// State of one page.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PageState {
    /// Erased, not yet programmed.
    Free,
    /// Programmed; at least one unit still valid.
    Valid,
    /// Programmed; every unit invalid.
    Invalid,
}

/// State of one mapping unit.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum UnitState {
    /// Its page is not programmed.
    Free,
    /// Holds the current copy of an LPN.
    Valid(Lpn),
    /// Holds a stale copy (or padding, `None`).
    Invalid(Option<Lpn>),
}

/// The flash array: state plus a page store for tags and payloads.
pub struct FlashArray {
    geo: Geometry,
    blocks: Vec<BlockState>,
    units: Vec<u32>,
    /// Page reads of each block since its last erase (read disturb). Not persisted: a
    /// restored or reopened array counts from zero.
    reads: Vec<u32>,
    store: Box<dyn PageStore>,
    next_seq: u64,
    /// Erase counts summed over the good blocks, and how many there are (kept as blocks are
    /// erased, aged and marked bad, so the mean wear costs nothing to read).
    wear: (u64, u64),
    /// The ECC parity encoded with every programmed page's data, if any, and a page's worth of
    /// room to encode it in.
    parity: Option<(PageParity, Vec<u8>)>,
}

impl FlashArray {
    /// A factory-fresh array (every block erased) over `store`.
    ///
    /// # Panics
    /// If `geo` does not validate (validate configurations first).
    pub fn new(geo: Geometry, store: Box<dyn PageStore>) -> Self {
        geo.validate().expect("FlashArray::new needs a validated geometry");
        FlashArray {
            blocks: vec![BlockState::default(); geo.total_blocks() as usize],
            units: vec![NO_LPN; geo.total_units() as usize],
            reads: vec![0; geo.total_blocks() as usize],
            wear: (0, geo.total_blocks() as u64),
            geo,
            store,
            next_seq: 1,
            parity: None,
        }
    }

    /// Counts [`wear`](Self::wear) again from the block table (after it was replaced).
    fn recount_wear(&mut self) {
        let good = self.blocks.iter().filter(|b| !b.bad);
        self.wear = good.fold((0, 0), |(sum, n), b| (sum + b.erase_count as u64, n + 1));
    }

    /// The erase counts of the good blocks, summed, and the number of good blocks: their mean
    /// wear is the one over the other. Constant time.
    pub fn wear(&self) -> (u64, u64) {
        self.wear
    }

    /// Has every later program of a page with data encode its ECC parity under `layout` and
    /// the store keep it ([`crate::parity`]); `None` stops it. A store that keeps parity of its
    /// own code ([`PageStore::parity_layout`]) must be given that one.
    pub fn set_parity(&mut self, layout: Option<ParityLayout>) -> Result<(), String> {
        if let Some(own) = self.store.parity_layout()
            && layout != Some(own)
        {
            return Err(format!(
                "the page store keeps the parity of {own}, not {}",
                layout.map_or("none".to_string(), |l| l.to_string())
            ));
        }
        self.parity = match layout {
            None => None,
            Some(l) => {
                let p = PageParity::new(l, self.geo.page_bytes())?;
                let buf = vec![0u8; p.page_parity_bytes()];
                Some((p, buf))
            }
        };
        Ok(())
    }

    /// The ECC parity programs encode, if any.
    pub fn parity(&self) -> Option<&PageParity> {
        self.parity.as_ref().map(|(p, _)| p)
    }

    /// Reads `page`'s ECC parity into `parity` (one page's worth; zeroes if it has none): the
    /// spare bytes that come with a page read, so not counted as another read.
    pub fn read_parity(&mut self, page: PageIdx, parity: &mut [u8]) -> io::Result<()> {
        self.store.read_parity(page, parity)
    }

    /// Rebuilds an array from recovered state (used when reopening a NAND image): blocks as
    /// persisted, and the OOB of every programmed page. Of the units that name the same LPN,
    /// the one in the newest page (highest sequence number) is valid; the others are stale.
    pub fn restore(
        geo: Geometry,
        store: Box<dyn PageStore>,
        blocks: Vec<BlockState>,
        pages: impl IntoIterator<Item = (PageIdx, Oob)>,
    ) -> Self {
        let mut a = FlashArray::new(geo, store);
        assert_eq!(blocks.len(), a.blocks.len(), "restored block table has the wrong size");
        a.blocks = blocks;
        a.recount_wear();
        for b in &mut a.blocks {
            b.valid_units = 0;
        }
        // (LPN, first-write sequence, page sequence, unit) of every unit that names an LPN.
        let mut named: Vec<(u32, u64, u64, u32)> = Vec::new();
        for (page, oob) in pages {
            let block = a.geo.block_of(page);
            for (i, slot) in oob.slots().enumerate() {
                if let Some(lpn) = slot.lpn {
                    let u = a.geo.unit_addr(page, i as u32);
                    a.units[u.idx()] = encode(lpn);
                    a.blocks[block.idx()].valid_units += 1;
                    named.push((lpn.0, oob.born(i), oob.seq, u.0));
                }
            }
            a.next_seq = a.next_seq.max(oob.seq + 1);
        }
        a.keep_newest_copies(named);
        a
    }

    /// After a restore, where an LPN is named by several units (a crash left old copies that
    /// nothing had invalidated on the media), keeps the newest data valid and invalidates the
    /// rest. Newest means first written by the latest program — not programmed last: a GC copy
    /// of old data may be programmed after the host's newer write of the same LPN, and keeps
    /// its source's first-write number. Between copies of the same data (a GC copy and its
    /// source), the later page wins; within one page, the last slot.
    fn keep_newest_copies(&mut self, mut named: Vec<(u32, u64, u64, u32)>) {
        named.sort_unstable();
        for w in named.windows(2) {
            if w[0].0 == w[1].0 {
                self.invalidate(UnitAddr(w[0].3));
            }
        }
    }

    /// Rebuilds an array from a snapshot: block states and the raw unit table exactly as
    /// [`raw_units`](Self::raw_units) gave them. Checks that the two agree (units only in
    /// programmed pages, valid counts matching) and says what does not.
    pub fn from_raw(
        geo: Geometry,
        store: Box<dyn PageStore>,
        blocks: Vec<BlockState>,
        units: Vec<u32>,
        next_seq: u64,
    ) -> Result<Self, String> {
        let mut a = FlashArray::new(geo, store);
        if blocks.len() != a.blocks.len() || units.len() != a.units.len() {
            return Err(format!(
                "{} blocks and {} units, but the geometry has {} and {}",
                blocks.len(),
                units.len(),
                a.blocks.len(),
                a.units.len()
            ));
        }
        let upp = a.geo.units_per_page() as usize;
        let upb = a.geo.units_per_block() as usize;
        for (i, b) in blocks.iter().enumerate() {
            if b.write_ptr > a.geo.pages || (b.bad && b.write_ptr != 0) {
                return Err(format!("block {i}: write pointer {} (bad: {})", b.write_ptr, b.bad));
            }
            let table = &units[i * upb..(i + 1) * upb];
            let (used, free) = table.split_at(b.write_ptr as usize * upp);
            if free.iter().any(|&u| u != NO_LPN) {
                return Err(format!("block {i}: units recorded above the write pointer {}", b.write_ptr));
            }
            let valid = used.iter().filter(|&&u| u & VALID != 0).count() as u32;
            if used.iter().any(|&u| u & VALID != 0 && decode(u).is_none()) || valid != b.valid_units {
                return Err(format!(
                    "block {i}: {valid} valid units, the block table says {}",
                    b.valid_units
                ));
            }
        }
        a.blocks = blocks;
        a.recount_wear();
        a.units = units;
        a.next_seq = next_seq.max(1);
        Ok(a)
    }

    /// The raw unit table (one `u32` per unit: bit 31 valid, the rest LPN + 1), for snapshots.
    pub fn raw_units(&self) -> &[u32] {
        &self.units
    }

    /// The page store, to look inside (e.g. a [`MetaStore`](crate::store::MetaStore)'s tags).
    pub fn store(&self) -> &dyn PageStore {
        &*self.store
    }

    /// The geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    /// A block's state.
    pub fn block(&self, b: BlockIdx) -> &BlockState {
        &self.blocks[b.idx()]
    }

    /// Every block's state, in flat order.
    pub fn blocks(&self) -> &[BlockState] {
        &self.blocks
    }

    /// The sequence number the next program will get.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Whether the store keeps page payloads.
    pub fn keeps_payload(&self) -> bool {
        self.store.keeps_payload()
    }

    /// Programs `page` with `oob` (one slot per mapping unit; its sequence number is assigned
    /// here) and, for payload stores, `data` (a whole page). Returns the sequence number.
    ///
    /// # Panics
    /// On a NAND-rule violation (out-of-order program, reprogram without erase, bad block),
    /// or if `oob` does not have one slot per unit.
    pub fn program(&mut self, page: PageIdx, oob: &Oob, data: Option<&[u8]>) -> io::Result<u64> {
        let geo = &self.geo;
        let block = geo.block_of(page);
        let offset = geo.page_in_block(page);
        let b = &self.blocks[block.idx()];
        if b.bad {
            panic!("NAND rule violated: program of {} in bad block {}", geo.ppa(page), block.0);
        }
        if offset != b.write_ptr {
            let why = if offset < b.write_ptr {
                "the page is already programmed; reprogramming needs an erase of the whole block"
            } else {
                "pages of a block must be programmed in order"
            };
            panic!(
                "NAND rule violated: program of {} but the block's next programmable page is {} ({why})",
                geo.ppa(page),
                b.write_ptr
            );
        }
        let upp = geo.units_per_page() as usize;
        let n = oob.units() as usize;
        assert_eq!(n, upp, "program of {} with {n} OOB slots for {upp} units", geo.ppa(page));
        let mut valid = 0;
        let base = page.idx() * upp;
        for i in 0..upp {
            self.units[base + i] = match oob.lpn(i) {
                Some(lpn) => {
                    assert!(lpn.0 <= MAX_LPN, "LPN {} is beyond the array's 31-bit LPN space", lpn.0);
                    valid += 1;
                    encode(lpn)
                }
                None => NO_LPN,
            };
        }
        let b = &mut self.blocks[block.idx()];
        b.write_ptr += 1;
        b.valid_units += valid;
        let seq = self.next_seq;
        self.next_seq += 1;
        let mut oob = *oob;
        oob.seq = seq;
        match (&mut self.parity, data) {
            (Some((code, buf)), Some(d)) => {
                code.encode_page(d, buf);
                self.store.program(page, &oob, data, Some(buf))?
            }
            _ => self.store.program(page, &oob, data, None)?,
        }
        Ok(seq)
    }

    /// Reads `page`: its OOB (LPNs from the array; tags and sequence number as the store keeps
    /// them) and, if `data` is given and the store keeps payloads, its data.
    ///
    /// # Panics
    /// If the page is not programmed.
    pub fn read(&mut self, page: PageIdx, data: Option<&mut [u8]>) -> io::Result<Oob> {
        let mut oob = self.lpns_of(page);
        self.count_read(page);
        self.store.read(page, &mut oob, data)?;
        Ok(oob)
    }

    /// Reads `page`'s payload into `data` (zeroes if the store keeps none) and returns an OOB
    /// with its LPNs only: no tags, sequence or first-write numbers, which saves the store an
    /// access. For readers that want the bytes alone (a host read of a payload store).
    ///
    /// # Panics
    /// If the page is not programmed.
    pub fn read_payload(&mut self, page: PageIdx, data: &mut [u8]) -> io::Result<Oob> {
        let oob = self.lpns_of(page);
        self.count_read(page);
        self.store.read_payload(page, data)?;
        Ok(oob)
    }

    fn count_read(&mut self, page: PageIdx) {
        let r = &mut self.reads[self.geo.block_of(page).idx()];
        *r = r.saturating_add(1);
    }

    /// Page reads of `block` since its last erase (since the array was built or restored, if
    /// it has not been erased since): the read-disturb count of the error model.
    pub fn reads_since_erase(&self, block: BlockIdx) -> u32 {
        self.reads[block.idx()]
    }

    /// An OOB holding the LPNs the array knows for `page` (which must be programmed).
    fn lpns_of(&self, page: PageIdx) -> Oob {
        if self.page_state_of_block(page) == PageState::Free {
            panic!("NAND rule violated: read of {}, which is not programmed", self.geo.ppa(page));
        }
        let upp = self.geo.units_per_page();
        let mut oob = Oob::empty(upp);
        for i in 0..upp as usize {
            oob.set_lpn(i, decode(self.units[page.idx() * upp as usize + i]));
        }
        oob
    }

    /// Erases `block`: every page becomes free and the erase count grows by one.
    ///
    /// # Panics
    /// If the block is bad.
    pub fn erase(&mut self, block: BlockIdx) -> io::Result<()> {
        let b = &mut self.blocks[block.idx()];
        if b.bad {
            panic!(
                "NAND rule violated: erase of bad block {} ({})",
                block.0,
                self.geo.ppa(self.geo.page_of(block, 0))
            );
        }
        let programmed = b.write_ptr;
        self.reads[block.idx()] = 0;
        let b = &mut self.blocks[block.idx()];
        b.write_ptr = 0;
        b.valid_units = 0;
        b.erase_count += 1;
        let erase_count = b.erase_count;
        self.wear.0 += 1;
        let upb = self.geo.units_per_block() as usize;
        let first = block.idx() * upb;
        let used = programmed as usize * self.geo.units_per_page() as usize;
        self.units[first..first + used].fill(NO_LPN);
        self.store.erase(block, erase_count)
    }

    /// Gives an erased block the wear of `erase_count` erases at once (ageing a fresh array
    /// without erasing it block by block); the store records it as it records an erase.
    ///
    /// # Panics
    /// If the block is bad or programmed.
    pub fn set_erase_count(&mut self, block: BlockIdx, erase_count: u32) -> io::Result<()> {
        let b = &mut self.blocks[block.idx()];
        assert!(
            !b.bad && b.write_ptr == 0,
            "set_erase_count of block {}, which is bad or programmed",
            block.0
        );
        self.wear.0 = self.wear.0 - b.erase_count as u64 + erase_count as u64;
        b.erase_count = erase_count;
        self.store.erase(block, erase_count)
    }

    /// Marks the unit's copy stale and returns the LPN it held.
    ///
    /// # Panics
    /// If the unit is not valid.
    pub fn invalidate(&mut self, unit: UnitAddr) -> Lpn {
        let raw = self.units[unit.idx()];
        if raw & VALID == 0 {
            let (page, slot) = self.geo.unit_page(unit);
            panic!("invalidate of unit {slot} of {}, which is not valid", self.geo.ppa(page));
        }
        self.units[unit.idx()] = raw & !VALID;
        let block = self.geo.block_of(self.geo.unit_page(unit).0);
        self.blocks[block.idx()].valid_units -= 1;
        decode(raw).expect("a valid unit names an LPN")
    }

    /// Brings what [`invalidate`](Self::invalidate) of `unit` touches (its state, its block's
    /// counts) toward the CPU cache (a hint: see [`sim::prefetch`]).
    #[inline]
    pub fn prefetch_unit(&self, unit: UnitAddr) {
        if let Some(x) = self.units.get(unit.idx()) {
            sim::prefetch(x);
            let block = self.geo.block_of(self.geo.unit_page(unit).0);
            if let Some(b) = self.blocks.get(block.idx()) {
                sim::prefetch(b);
            }
        }
    }

    /// Brings what a read of `page` touches in the array (its units' LPNs, its block's write
    /// pointer and read count) toward the CPU cache (a hint: see [`sim::prefetch`]).
    #[inline]
    pub fn prefetch_page(&self, page: PageIdx) {
        let upp = self.geo.units_per_page() as usize;
        if let Some(x) = self.units.get(page.idx() * upp) {
            sim::prefetch(x);
            let block = self.geo.block_of(page).idx();
            if let (Some(b), Some(r)) = (self.blocks.get(block), self.reads.get(block)) {
                sim::prefetch(b);
                sim::prefetch(r);
            }
        }
    }

    /// The state of one mapping unit.
    pub fn unit(&self, unit: UnitAddr) -> UnitState {
        let (page, _) = self.geo.unit_page(unit);
        if self.page_state_of_block(page) == PageState::Free {
            return UnitState::Free;
        }
        let raw = self.units[unit.idx()];
        match (raw & VALID != 0, decode(raw)) {
            (true, Some(l)) => UnitState::Valid(l),
            (_, l) => UnitState::Invalid(l),
        }
    }

    fn page_state_of_block(&self, page: PageIdx) -> PageState {
        let b = &self.blocks[self.geo.block_of(page).idx()];
        if self.geo.page_in_block(page) >= b.write_ptr { PageState::Free } else { PageState::Invalid }
    }

    /// The state of one page.
    pub fn page_state(&self, page: PageIdx) -> PageState {
        if self.page_state_of_block(page) == PageState::Free {
            return PageState::Free;
        }
        let upp = self.geo.units_per_page() as usize;
        let units = &self.units[page.idx() * upp..(page.idx() + 1) * upp];
        if units.iter().any(|u| u & VALID != 0) { PageState::Valid } else { PageState::Invalid }
    }

    /// Marks a block bad (factory or grown).
    pub fn mark_bad(&mut self, block: BlockIdx) -> io::Result<()> {
        let b = &mut self.blocks[block.idx()];
        if !b.bad {
            self.wear = (self.wear.0 - b.erase_count as u64, self.wear.1 - 1);
        }
        b.bad = true;
        self.store.mark_bad(block)
    }

    /// Forces stored data to durable media (image stores).
    pub fn sync(&mut self) -> io::Result<()> {
        self.store.sync()
    }

    /// Bytes of RAM this array state and its store occupy (payloads included).
    pub fn resident_bytes(&self) -> usize {
        self.blocks.capacity() * size_of::<BlockState>()
            + self.units.capacity() * size_of::<u32>()
            + self.store.resident_bytes()
    }
}
