//! Per-block update lists (pointing into log data) and pending directory changes.

use std::collections::{BTreeMap, HashMap};

use nicfs_layout::{BLOCK_SIZE, FileType, Ino};
use nicfs_pm::{Pm, PmAddr};

/// One logged write's bytes within one block.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct BlockUpdate {
    /// Log sequence number.
    pub seq: u64,
    /// Offset within the block.
    pub off: u32,
    /// Bytes.
    pub len: u32,
    /// Where the bytes are in the log data region.
    pub src: PmAddr,
}

/// Not-yet-applied updates of one file, by file block, plus its truncations.
#[derive(Default, Debug)]
pub(crate) struct FileUpdates {
    blocks: BTreeMap<u64, Vec<BlockUpdate>>,
    truncs: Vec<(u64, u64)>,
}

impl FileUpdates {
    /// Records a logged write of `len` bytes at `offset` whose payload starts at `src`.
    pub(crate) fn add_write(&mut self, seq: u64, offset: u64, len: u64, src: PmAddr) {
        let mut pos = offset;
        let end = offset + len;
        while pos < end {
            let fb = pos / BLOCK_SIZE;
            let off = pos % BLOCK_SIZE;
            let n = (BLOCK_SIZE - off).min(end - pos);
            let u = BlockUpdate { seq, off: off as u32, len: n as u32, src: src.add(pos - offset) };
            self.blocks.entry(fb).or_default().push(u);
            pos += n;
        }
    }

    /// Records a logged truncation.
    pub(crate) fn add_trunc(&mut self, seq: u64, size: u64) {
        self.truncs.push((seq, size));
    }

    /// Drops everything the back end has applied (sequence numbers below `head`).
    pub(crate) fn prune(&mut self, head: u64) {
        self.blocks.retain(|_, v| {
            v.retain(|u| u.seq >= head);
            !v.is_empty()
        });
        self.truncs.retain(|(s, _)| *s >= head);
    }

    /// Whether a truncation at or after `head` (not yet applied) is pending.
    pub(crate) fn has_pending_trunc(&self, head: u64) -> bool {
        self.truncs.iter().any(|(s, _)| *s >= head)
    }

    /// Whether nothing is pending.
    pub(crate) fn is_empty(&self) -> bool {
        self.blocks.is_empty() && self.truncs.is_empty()
    }

    /// Applies pending changes (seq >= `head`) to `buf`, the public content of bytes
    /// `at..at + buf.len()` of block `fb`, in log order.
    pub(crate) fn overlay(&self, pm: &dyn Pm, fb: u64, head: u64, at: usize, buf: &mut [u8]) {
        let writes = self.blocks.get(&fb).map(Vec::as_slice).unwrap_or(&[]);
        let mut wi = writes.iter().filter(|u| u.seq >= head).peekable();
        let mut ti = self.truncs.iter().filter(|(s, _)| *s >= head).peekable();
        // The part of the block `buf` holds, as block offsets.
        let (lo, hi) = (at as u64, (at + buf.len()) as u64);
        let start = fb * BLOCK_SIZE + lo;
        loop {
            let next_w = wi.peek().map(|u| u.seq);
            let next_t = ti.peek().map(|(s, _)| *s);
            match (next_w, next_t) {
                (None, None) => break,
                (Some(w), t) if t.is_none_or(|t| w < t) => {
                    let u = wi.next().expect("peeked");
                    let (a, b) = ((u.off as u64).max(lo), ((u.off + u.len) as u64).min(hi));
                    if a < b {
                        let src = u.src.add(a - u.off as u64);
                        pm.read(src, &mut buf[(a - lo) as usize..(b - lo) as usize]);
                    }
                }
                _ => {
                    let (_, size) = ti.next().expect("peeked");
                    if *size <= start {
                        buf.fill(0);
                    } else if *size < start + (hi - lo) {
                        buf[(*size - start) as usize..].fill(0);
                    }
                }
            }
        }
    }
}

/// A pending change to one directory entry: insert (Some) or remove (None).
#[derive(Clone, Debug)]
pub(crate) struct DirUpdate {
    /// Log sequence number.
    pub seq: u64,
    /// Entry name.
    pub name: Vec<u8>,
    /// New target, or removal.
    pub target: Option<(Ino, FileType)>,
}

/// Pending directory changes per directory.
pub(crate) type DirUpdates = HashMap<Ino, Vec<DirUpdate>>;

#[cfg(test)]
mod tests {
    use super::*;
    use nicfs_pm::{FastPm, MappedFile};

    #[test]
    fn overlay_applies_writes_and_truncates_in_log_order() {
        let pm = FastPm::new(MappedFile::anonymous(8192).unwrap());
        pm.store(PmAddr(0), &[1u8; 100]);
        pm.store(PmAddr(100), &[2u8; 100]);
        let mut u = FileUpdates::default();
        u.add_write(5, 0, 100, PmAddr(0));
        u.add_trunc(6, 50);
        u.add_write(7, 60, 10, PmAddr(100));
        let mut buf = vec![9u8; 4096];
        u.overlay(&pm, 0, 0, 0, &mut buf);
        assert!(buf[..50].iter().all(|&b| b == 1));
        assert!(buf[50..60].iter().all(|&b| b == 0));
        assert!(buf[60..70].iter().all(|&b| b == 2));
        assert!(buf[70..].iter().all(|&b| b == 0));
        // Once the head passes seq 6, only the last write remains to overlay.
        let mut buf = vec![9u8; 4096];
        u.overlay(&pm, 0, 7, 0, &mut buf);
        // A part of the block sees the same bytes as the whole block does.
        let mut part = vec![9u8; 30];
        u.overlay(&pm, 0, 0, 45, &mut part);
        assert!(part[..5].iter().all(|&b| b == 1) && part[5..15].iter().all(|&b| b == 0));
        assert!(part[15..25].iter().all(|&b| b == 2) && part[25..].iter().all(|&b| b == 0));
        assert!(buf[..60].iter().all(|&b| b == 9));
        u.prune(8);
        assert!(u.is_empty());
    }

    #[test]
    fn writes_split_across_blocks() {
        let mut u = FileUpdates::default();
        u.add_write(1, 4000, 200, PmAddr(64));
        assert_eq!(u.blocks[&0][0], BlockUpdate { seq: 1, off: 4000, len: 96, src: PmAddr(64) });
        assert_eq!(u.blocks[&1][0], BlockUpdate { seq: 1, off: 0, len: 104, src: PmAddr(160) });
    }

    proptest::proptest! {
        /// Overlaying the update lists on an all-zero public block gives exactly the bytes a
        /// model file gets from the same writes and truncations, for every block.
        #[test]
        fn overlay_matches_a_byte_model(ops in proptest::collection::vec((0u64..3, 0u64..9000, 1u64..5000), 1..30)) {
            let pm = FastPm::new(MappedFile::anonymous(1 << 20).unwrap());
            let mut u = FileUpdates::default();
            let mut model = vec![0u8; 3 * 4096];
            let mut src = 0u64;
            for (seq, (kind, off, len)) in ops.into_iter().enumerate() {
                if kind == 0 {
                    let size = off.min(model.len() as u64) as usize;
                    model[size..].fill(0);
                    u.add_trunc(seq as u64, size as u64);
                } else {
                    let len = len.min(model.len() as u64 - off.min(model.len() as u64 - 1)) as usize;
                    let off = off.min(model.len() as u64 - 1) as usize;
                    let len = len.min(model.len() - off);
                    let data: Vec<u8> = (0..len).map(|k| (seq * 7 + k) as u8 | 1).collect();
                    pm.store(PmAddr(src), &data);
                    u.add_write(seq as u64, off as u64, len as u64, PmAddr(src));
                    model[off..off + len].copy_from_slice(&data);
                    src += len as u64;
                }
            }
            for fb in 0..3u64 {
                let mut block = vec![0u8; 4096];
                u.overlay(&pm, fb, 0, 0, &mut block);
                proptest::prop_assert_eq!(&block[..], &model[fb as usize * 4096..(fb as usize + 1) * 4096]);
                // Any part of the block, overlaid on its own, agrees.
                let (a, n) = ((fb as usize * 977) % 4000, 1 + (fb as usize * 131) % 96);
                let mut part = vec![0u8; n];
                u.overlay(&pm, fb, 0, a, &mut part);
                let base = fb as usize * 4096 + a;
                proptest::prop_assert_eq!(&part[..], &model[base..base + n]);
            }
        }
    }
}
