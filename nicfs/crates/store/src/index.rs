//! File block index: 10 direct pointers, one indirect and one double-indirect index block.

use nicfs_layout::{BLOCK_SIZE, BlockNo, DIRECT_BLOCKS, Inode, PTRS_PER_BLOCK};
use nicfs_pm::PmAddr;

use crate::{FsError, MetaRead, Txn};

/// Where the pointer for a file block lives.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// `inode.direct[i]`.
    Direct(usize),
    /// Entry `i` of the indirect block.
    Indirect(u64),
    /// Entry `j` of the `i`-th block listed in the double-indirect block.
    Double(u64, u64),
}

pub(crate) fn slot_of(fblock: u64) -> Result<Slot, FsError> {
    let d = DIRECT_BLOCKS as u64;
    if fblock < d {
        return Ok(Slot::Direct(fblock as usize));
    }
    let f = fblock - d;
    if f < PTRS_PER_BLOCK {
        return Ok(Slot::Indirect(f));
    }
    let f = f - PTRS_PER_BLOCK;
    if f < PTRS_PER_BLOCK * PTRS_PER_BLOCK {
        return Ok(Slot::Double(f / PTRS_PER_BLOCK, f % PTRS_PER_BLOCK));
    }
    Err(FsError::TooBig)
}

/// Number of file blocks needed for `size` bytes.
pub fn file_block_count(size: u64) -> u64 {
    size.div_ceil(BLOCK_SIZE)
}

/// Reads pointer `i` of index block `b`, validating the result.
pub(crate) fn read_ptr<R: MetaRead + ?Sized>(r: &R, b: BlockNo, i: u64) -> Result<BlockNo, FsError> {
    if !r.geo().is_data_block(b) {
        return Err(FsError::corrupt(format!("index pointer to {b} outside the data region")));
    }
    let addr = b.byte_offset() + i * 4;
    let line_addr = addr & !63;
    let mut line = [0u8; 64];
    r.read_index_line(PmAddr(line_addr), &mut line);
    let at = (addr - line_addr) as usize;
    let p = BlockNo(u32::from_le_bytes(line[at..at + 4].try_into().expect("4 bytes")));
    check_ptr(r, p)?;
    Ok(p)
}

fn check_ptr<R: MetaRead + ?Sized>(r: &R, p: BlockNo) -> Result<(), FsError> {
    if !p.is_none() && !r.geo().is_data_block(p) {
        return Err(FsError::corrupt(format!("block pointer {} outside the data region", p.0)));
    }
    Ok(())
}

/// The physical block holding file block `fblock` of `inode`, or `None` for a hole.
pub fn bmap<R: MetaRead + ?Sized>(r: &R, inode: &Inode, fblock: u64) -> Result<Option<BlockNo>, FsError> {
    let p = match slot_of(fblock)? {
        Slot::Direct(i) => inode.direct[i],
        Slot::Indirect(i) => {
            if inode.indirect.is_none() {
                return Ok(None);
            }
            read_ptr(r, inode.indirect, i)?
        }
        Slot::Double(i, j) => {
            if inode.dindirect.is_none() {
                return Ok(None);
            }
            let mid = read_ptr(r, inode.dindirect, i)?;
            if mid.is_none() {
                return Ok(None);
            }
            read_ptr(r, mid, j)?
        }
    };
    check_ptr(r, p)?;
    Ok(if p.is_none() { None } else { Some(p) })
}

/// The blocks that mapping `len` bytes at `offset` into `inode` (as `r` shows it) would
/// allocate: file blocks that are holes, plus missing index blocks on their paths. Equals
/// [`Inode::worst_case_blocks`] for an inode with no blocks, and never exceeds it.
pub fn blocks_to_map<R: MetaRead + ?Sized>(
    r: &R,
    inode: &Inode,
    offset: u64,
    len: u64,
) -> Result<u64, FsError> {
    if len == 0 {
        return Ok(0);
    }
    let first = offset / BLOCK_SIZE;
    let last = (offset.saturating_add(len) - 1) / BLOCK_SIZE;
    let mut n = 0;
    let mut indirect_counted = false;
    let mut dind_counted = false;
    // Second-level blocks already counted as missing (by index in the double-indirect block).
    let mut mids_counted: Vec<u64> = Vec::new();
    for fb in first..=last {
        match slot_of(fb)? {
            Slot::Direct(i) => n += u64::from(inode.direct[i].is_none()),
            Slot::Indirect(i) => {
                if inode.indirect.is_none() {
                    n += 1 + u64::from(!std::mem::replace(&mut indirect_counted, true));
                } else {
                    n += u64::from(read_ptr(r, inode.indirect, i)?.is_none());
                }
            }
            Slot::Double(i, j) => {
                let mid = if inode.dindirect.is_none() {
                    n += u64::from(!std::mem::replace(&mut dind_counted, true));
                    BlockNo(0)
                } else {
                    read_ptr(r, inode.dindirect, i)?
                };
                if mid.is_none() {
                    if mids_counted.last() != Some(&i) {
                        mids_counted.push(i);
                        n += 1;
                    }
                    n += 1;
                } else {
                    n += u64::from(read_ptr(r, mid, j)?.is_none());
                }
            }
        }
    }
    Ok(n)
}

impl Txn<'_> {
    fn write_ptr(&mut self, b: BlockNo, i: u64, p: BlockNo) {
        self.write_meta(PmAddr(b.byte_offset() + i * 4), &p.0.to_le_bytes());
    }

    fn ensure_index(&mut self, current: BlockNo) -> Result<(BlockNo, bool), FsError> {
        if current.is_none() { Ok((self.alloc_meta_block()?, true)) } else { Ok((current, false)) }
    }

    /// Points file block `fblock` of `inode` at `b`, allocating index blocks as needed. The
    /// caller writes the inode back.
    pub fn set_bmap(&mut self, inode: &mut Inode, fblock: u64, b: BlockNo) -> Result<(), FsError> {
        match slot_of(fblock)? {
            Slot::Direct(i) => inode.direct[i] = b,
            Slot::Indirect(i) => {
                let (ind, _) = self.ensure_index(inode.indirect)?;
                inode.indirect = ind;
                self.write_ptr(ind, i, b);
            }
            Slot::Double(i, j) => {
                let (dind, _) = self.ensure_index(inode.dindirect)?;
                inode.dindirect = dind;
                let mid = read_ptr(self, dind, i)?;
                let (mid, new) = self.ensure_index(mid)?;
                if new {
                    self.write_ptr(dind, i, mid);
                }
                self.write_ptr(mid, j, b);
            }
        }
        Ok(())
    }

    /// Frees every block of `inode` at file block `first` and beyond, and index blocks that
    /// become empty. The caller writes the inode back.
    pub fn free_from(&mut self, inode: &mut Inode, first: u64) -> Result<(), FsError> {
        for i in (first as usize)..DIRECT_BLOCKS {
            if !inode.direct[i].is_none() {
                self.free_block(inode.direct[i]);
                inode.direct[i] = BlockNo(0);
            }
        }
        let d = DIRECT_BLOCKS as u64;
        if !inode.indirect.is_none() {
            let start = first.saturating_sub(d);
            if self.free_index_entries(inode.indirect, start)? {
                self.free_block(inode.indirect);
                inode.indirect = BlockNo(0);
            }
        }
        if !inode.dindirect.is_none() {
            let start = first.saturating_sub(d + PTRS_PER_BLOCK);
            let dind = inode.dindirect;
            let mut all_empty = true;
            for i in 0..PTRS_PER_BLOCK {
                let mid = read_ptr(self, dind, i)?;
                if mid.is_none() {
                    continue;
                }
                let lo = i * PTRS_PER_BLOCK;
                let from = start.saturating_sub(lo);
                if from >= PTRS_PER_BLOCK {
                    all_empty = false;
                    continue;
                }
                if self.free_index_entries(mid, from)? {
                    self.free_block(mid);
                    self.write_ptr(dind, i, BlockNo(0));
                } else {
                    all_empty = false;
                }
            }
            if all_empty {
                self.free_block(dind);
                inode.dindirect = BlockNo(0);
            }
        }
        Ok(())
    }

    /// Frees entries `from..` of index block `b`; returns whether the block is now empty.
    fn free_index_entries(&mut self, b: BlockNo, from: u64) -> Result<bool, FsError> {
        let mut empty = true;
        for i in 0..PTRS_PER_BLOCK {
            let p = read_ptr(self, b, i)?;
            if p.is_none() {
                continue;
            }
            if i >= from {
                self.free_block(p);
                self.write_ptr(b, i, BlockNo(0));
            } else {
                empty = false;
            }
        }
        Ok(empty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_to_map_of_an_empty_inode_is_the_worst_case() {
        struct NoReads(nicfs_layout::Geometry);
        impl MetaRead for NoReads {
            fn geo(&self) -> &nicfs_layout::Geometry {
                &self.0
            }
            fn read_meta(&self, _: PmAddr, _: &mut [u8]) {
                panic!("an empty inode needs no index reads")
            }
        }
        let r =
            NoReads(nicfs_layout::Geometry::compute(&nicfs_layout::FormatConfig::small(4 << 20)).unwrap());
        let empty = Inode::default();
        for (off, len) in
            [(0, 1), (4095, 2), (9 * 4096, 8192), (1033 * 4096, 1026 * 4096), (3 << 30, 3 << 20)]
        {
            assert_eq!(
                blocks_to_map(&r, &empty, off, len).unwrap(),
                Inode::worst_case_blocks(off, len),
                "{off}+{len}"
            );
        }
    }

    #[test]
    fn slots_cover_the_address_space() {
        assert_eq!(slot_of(0).unwrap(), Slot::Direct(0));
        assert_eq!(slot_of(10).unwrap(), Slot::Indirect(0));
        assert_eq!(slot_of(10 + 1024).unwrap(), Slot::Double(0, 0));
        assert_eq!(slot_of(10 + 1024 + 1025).unwrap(), Slot::Double(1, 1));
        assert!(slot_of(10 + 1024 + 1024 * 1024).is_err());
        assert_eq!(file_block_count(4097), 2);
    }
}
