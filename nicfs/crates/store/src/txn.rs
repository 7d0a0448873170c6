//! Transactions over the public space, and the engine that owns allocation and the journal.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use nicfs_layout::{BLOCK_SIZE, BlockNo, Geometry, INODE_SIZE, Ino, Inode};
use nicfs_pm::PmAddr;

use crate::journal::{Journal, commit_lines};
use crate::{Allocator, FsError, LineCache, MetaRead, Space, read_inode};

/// The 64-byte lines that bytes `start..end` touch, each as (line address, first byte, end):
/// the part of the range inside the line.
fn line_spans(start: u64, end: u64) -> impl Iterator<Item = (u64, u64, u64)> {
    ((start & !63)..end).step_by(64).map(move |la| (la, la.max(start), (la + 64).min(end)))
}

/// The mutable public space: geometry, allocator, journal and index-line cache. One engine
/// per mounted file system; transactions borrow it exclusively.
pub struct Engine {
    space: Space,
    alloc: Allocator,
    journal: Journal,
    cache: Arc<LineCache>,
}

impl Engine {
    /// Opens the engine over `space` (replay the journal first; see `replay_journal`).
    pub fn new(space: Space, cache: Arc<LineCache>) -> Result<Engine, FsError> {
        let alloc = Allocator::load(&space);
        let journal = Journal::load(&space)?;
        Ok(Engine { space, alloc, journal, cache })
    }

    /// The space.
    pub fn space(&self) -> &Space {
        &self.space
    }

    /// The allocator (inode grants for front ends).
    pub fn alloc_mut(&mut self) -> &mut Allocator {
        &mut self.alloc
    }

    /// The index-line cache.
    pub fn cache(&self) -> &Arc<LineCache> {
        &self.cache
    }

    /// Starts a transaction.
    pub fn begin(&mut self) -> Txn<'_> {
        Txn {
            eng: self,
            lines: BTreeMap::new(),
            fresh: crate::IntSet::default(),
            known: crate::IntSet::default(),
            known_lines: BTreeMap::new(),
            allocated: Vec::new(),
            freed: Vec::new(),
            inodes_freed: Vec::new(),
            touched: BTreeSet::new(),
        }
    }
}

/// A point a transaction can roll back to (see [`Txn::savepoint`]).
pub struct Savepoint {
    lines: BTreeMap<u64, [u8; 64]>,
    fresh: crate::IntSet<u32>,
    known: crate::IntSet<u32>,
    known_lines: BTreeMap<u64, [u8; 64]>,
    allocated: usize,
    freed: usize,
    inodes_freed: usize,
    touched: BTreeSet<Ino>,
}

/// A set of staged metadata changes, committed atomically through the redo journal.
pub struct Txn<'a> {
    eng: &'a mut Engine,
    lines: BTreeMap<u64, [u8; 64]>,
    fresh: crate::IntSet<u32>,
    /// Fresh metadata blocks (index, directory, symbolic link) allocated zeroed: every byte
    /// of them was written through this transaction, so it reads them from memory, not PM
    /// (the back end would otherwise re-read its own index-block writes by DMA, per record).
    known: crate::IntSet<u32>,
    /// The lines written to `known` blocks (the others are zero).
    known_lines: BTreeMap<u64, [u8; 64]>,
    allocated: Vec<BlockNo>,
    freed: Vec<BlockNo>,
    inodes_freed: Vec<Ino>,
    touched: BTreeSet<Ino>,
}

impl MetaRead for Txn<'_> {
    fn geo(&self) -> &Geometry {
        self.eng.space.geo_ref()
    }

    fn read_meta(&self, addr: PmAddr, buf: &mut [u8]) {
        let (start, end) = (addr.get(), addr.get() + buf.len() as u64);
        if !buf.is_empty()
            && start / BLOCK_SIZE == (end - 1) / BLOCK_SIZE
            && self.known.contains(&((start / BLOCK_SIZE) as u32))
        {
            for (la, lo, hi) in line_spans(start, end) {
                let line = self.known_lines.get(&la).copied().unwrap_or([0u8; 64]);
                buf[(lo - start) as usize..(hi - start) as usize]
                    .copy_from_slice(&line[(lo - la) as usize..(hi - la) as usize]);
            }
            return;
        }
        // Skip the (DMA) read when staged lines cover the whole range.
        let covered =
            buf.is_empty() || ((start & !63)..end).step_by(64).all(|la| self.lines.contains_key(&la));
        if !covered {
            self.eng.space.pm().read(addr, buf);
        }
        for (&la, line) in self.lines.range((start & !63)..end) {
            let lo = la.max(start);
            let hi = (la + 64).min(end);
            if lo < hi {
                buf[(lo - start) as usize..(hi - start) as usize]
                    .copy_from_slice(&line[(lo - la) as usize..(hi - la) as usize]);
            }
        }
    }

    fn read_index_line(&self, addr: PmAddr, line: &mut [u8; 64]) {
        if let Some(l) = self.lines.get(&addr.get()) {
            *line = *l;
            return;
        }
        if self.known.contains(&((addr.get() / BLOCK_SIZE) as u32)) {
            *line = self.known_lines.get(&addr.get()).copied().unwrap_or([0u8; 64]);
            return;
        }
        let cache = &self.eng.cache;
        if let Some(l) = cache.get(addr.get()) {
            *line = l;
            return;
        }
        let epoch = cache.epoch();
        self.eng.space.pm().read(addr, line);
        if !self.fresh.contains(&((addr.get() / BLOCK_SIZE) as u32)) {
            cache.insert_if_current(addr.get(), *line, epoch);
        }
    }
}

impl<'a> Txn<'a> {
    /// The space being changed.
    pub fn space(&self) -> &Space {
        &self.eng.space
    }

    /// Stages `data` at `addr` (metadata), or writes it directly if `addr` lies in a block
    /// allocated by this transaction (unreferenced by committed state, so no journal needed).
    pub fn write_meta(&mut self, addr: PmAddr, data: &[u8]) {
        let block = (addr.get() / BLOCK_SIZE) as u32;
        if self.fresh.contains(&block) {
            let pm = self.eng.space.pm();
            pm.store(addr, data);
            pm.flush(addr, data.len() as u64);
            if self.known.contains(&block) {
                let start = addr.get();
                for (la, lo, hi) in line_spans(start, start + data.len() as u64) {
                    let line = self.known_lines.entry(la).or_insert([0u8; 64]);
                    line[(lo - la) as usize..(hi - la) as usize]
                        .copy_from_slice(&data[(lo - start) as usize..(hi - start) as usize]);
                }
            }
            return;
        }
        let start = addr.get();
        for (la, lo, hi) in line_spans(start, start + data.len() as u64) {
            if !self.lines.contains_key(&la) {
                let mut l = [0u8; 64];
                self.eng.space.pm().read(PmAddr(la), &mut l);
                self.lines.insert(la, l);
            }
            let line = self.lines.get_mut(&la).expect("just inserted");
            line[(lo - la) as usize..(hi - la) as usize]
                .copy_from_slice(&data[(lo - start) as usize..(hi - start) as usize]);
        }
    }

    /// Whether block `b` was allocated by this transaction.
    pub fn is_fresh(&self, b: BlockNo) -> bool {
        self.fresh.contains(&b.0)
    }

    fn bitmap_bit(&mut self, start: u32, index: u64, value: bool) {
        let addr = PmAddr(start as u64 * BLOCK_SIZE + index / 8);
        let mut byte = [0u8];
        self.read_meta(addr, &mut byte);
        let mask = 1u8 << (index % 8);
        byte[0] = if value { byte[0] | mask } else { byte[0] & !mask };
        self.write_meta(addr, &byte);
    }

    /// Allocates a data block (zeroed on PM if `zero`); it is written directly until commit.
    pub fn alloc_block(&mut self, zero: bool) -> Result<BlockNo, FsError> {
        let geo = *self.geo();
        let b = self.eng.alloc.take_block(&geo)?;
        self.allocated.push(b);
        self.bitmap_bit(geo.bbitmap_start, (b.0 - geo.data_start) as u64, true);
        self.fresh.insert(b.0);
        self.eng.cache.invalidate_block(b.byte_offset());
        if zero {
            let pm = self.eng.space.pm();
            pm.store(PmAddr(b.byte_offset()), &[0u8; BLOCK_SIZE as usize]);
            pm.flush(PmAddr(b.byte_offset()), BLOCK_SIZE);
        }
        Ok(b)
    }

    /// Allocates a zeroed metadata block (index, directory or symbolic-link block) that the
    /// caller writes only through [`write_meta`](Self::write_meta): the transaction then
    /// knows its content and reads it from memory.
    pub fn alloc_meta_block(&mut self) -> Result<BlockNo, FsError> {
        let b = self.alloc_block(true)?;
        self.known.insert(b.0);
        Ok(b)
    }

    /// Frees a data block; it becomes allocatable once the transaction commits.
    pub fn free_block(&mut self, b: BlockNo) {
        let geo = *self.geo();
        if !geo.is_data_block(b) {
            return;
        }
        self.bitmap_bit(geo.bbitmap_start, (b.0 - geo.data_start) as u64, false);
        self.freed.push(b);
    }

    /// Reads an inode through the staged view.
    pub fn get_inode(&self, ino: Ino) -> Result<Inode, FsError> {
        read_inode(self, ino)
    }

    /// Stages an inode.
    pub fn put_inode(&mut self, ino: Ino, inode: &Inode) {
        let addr = Space::inode_addr(self.geo(), ino);
        self.write_meta(addr, &inode.encode());
        self.touched.insert(ino);
    }

    /// Marks `ino` used on PM (it was reserved for a front end or is being created).
    pub fn mark_inode_used(&mut self, ino: Ino) {
        let geo = *self.geo();
        self.eng.alloc.mark_inode(ino);
        self.bitmap_bit(geo.ibitmap_start, ino.0 as u64, true);
    }

    /// Frees inode `ino` (zeroes its slot); allocatable again after commit.
    pub fn free_inode(&mut self, ino: Ino) {
        let geo = *self.geo();
        let addr = Space::inode_addr(&geo, ino);
        self.write_meta(addr, &[0u8; INODE_SIZE]);
        self.bitmap_bit(geo.ibitmap_start, ino.0 as u64, false);
        self.inodes_freed.push(ino);
        self.touched.insert(ino);
    }

    /// Inodes written by this transaction.
    pub fn touched(&self) -> &BTreeSet<Ino> {
        &self.touched
    }

    /// Number of staged lines (journal records the commit will need).
    pub fn staged_lines(&self) -> usize {
        self.lines.len()
    }

    /// Journal capacity in lines.
    pub fn capacity(&self) -> usize {
        nicfs_layout::JournalHeader::capacity(self.geo().journal_blocks) as usize
    }

    /// Commits: journal, fence, apply, fence. Direct writes the caller made to fresh blocks
    /// or file data (store + flush) become durable at the first fence, before the commit
    /// point. On `TxnTooLarge` nothing was written to the journal; the transaction is aborted.
    pub fn commit(self) -> Result<(), FsError> {
        let Txn { eng, lines, allocated, freed, inodes_freed, .. } = self;
        let cap = nicfs_layout::JournalHeader::capacity(eng.space.geo_ref().journal_blocks) as usize;
        if lines.len() > cap {
            for b in allocated {
                let geo = *eng.space.geo_ref();
                eng.alloc.release_block(&geo, b);
            }
            eng.cache.invalidate_all();
            return Err(FsError::TxnTooLarge { lines: lines.len(), capacity: cap });
        }
        commit_lines(&eng.space, &mut eng.journal, &lines);
        eng.cache.committed(lines.iter().map(|(a, l)| (*a, l)));
        let geo = *eng.space.geo_ref();
        for b in freed {
            eng.alloc.release_block(&geo, b);
        }
        for i in inodes_freed {
            eng.alloc.release_inode(i);
        }
        Ok(())
    }

    /// Remembers the current staged state.
    pub fn savepoint(&self) -> Savepoint {
        Savepoint {
            lines: self.lines.clone(),
            fresh: self.fresh.clone(),
            known: self.known.clone(),
            known_lines: self.known_lines.clone(),
            allocated: self.allocated.len(),
            freed: self.freed.len(),
            inodes_freed: self.inodes_freed.len(),
            touched: self.touched.clone(),
        }
    }

    /// Undoes everything staged since `sp` (blocks allocated since are returned).
    pub fn rollback(&mut self, sp: Savepoint) {
        let geo = *self.eng.space.geo_ref();
        for b in self.allocated.drain(sp.allocated..) {
            self.eng.alloc.release_block(&geo, b);
        }
        self.freed.truncate(sp.freed);
        self.inodes_freed.truncate(sp.inodes_freed);
        self.lines = sp.lines;
        self.fresh = sp.fresh;
        self.known = sp.known;
        self.known_lines = sp.known_lines;
        self.touched = sp.touched;
        self.eng.cache.invalidate_all();
    }

    /// Drops the staged changes and returns allocated blocks.
    pub fn abort(self) {
        let geo = *self.eng.space.geo_ref();
        for b in self.allocated {
            self.eng.alloc.release_block(&geo, b);
        }
        self.eng.cache.invalidate_all();
    }
}
