//! The crash oracle: what each block may read after a crash, under volatile write-cache
//! semantics. An acknowledged write may be lost until it is durable (written with FUA, or
//! acknowledged before a flush that completed); a durable write never is; and no block may
//! ever read data that was not written to it.
//!
//! Blocks are written as [`stamp`]s (the block number and a version, repeated), so a read shows
//! exactly which write it returns ([`read_stamp`]).

/// Bytes of `blocks` blocks of `block_bytes` from `first`, written as `version` (0: zeroes):
/// every 8 bytes hold `block << 32 | version`, little-endian.
pub fn stamp(first: u64, blocks: u64, version: u64, block_bytes: usize) -> Vec<u8> {
    let mut d = Vec::with_capacity(blocks as usize * block_bytes);
    for b in first..first + blocks {
        let word = if version == 0 { 0 } else { b << 32 | version };
        for _ in 0..block_bytes / 8 {
            d.extend_from_slice(&word.to_le_bytes());
        }
    }
    d
}

/// What one block's read shows: `None` for zeroes, or `(block, version)` of a [`stamp`];
/// anything else (torn, foreign) is an error.
pub fn read_stamp(data: &[u8]) -> Result<Option<(u64, u64)>, String> {
    if data.iter().all(|&b| b == 0) {
        return Ok(None);
    }
    let first = &data[..8];
    if data.chunks(8).any(|c| c != first) {
        return Err("torn or foreign data".into());
    }
    let w = u64::from_le_bytes(first.try_into().expect("8 bytes"));
    Ok(Some((w >> 32, w & 0xffff_ffff)))
}

/// What one block may hold.
#[derive(Clone, Debug, Default)]
struct History {
    /// Versions written (0 = zeroes), oldest first; the indices below point into it.
    versions: Vec<u64>,
    /// The newest version known durable; `None`: the block may still read as never written.
    durable: Option<usize>,
    /// The newest acknowledged version.
    acked: Option<usize>,
}

/// Which writes each block has seen, which were acknowledged and which are durable.
#[derive(Clone, Debug)]
pub struct Durability {
    blocks: Vec<History>,
}

/// A write in flight: the blocks it covers and each one's version index.
#[derive(Clone, Debug)]
pub struct Issued {
    first: u64,
    idx: Vec<usize>,
}

impl Issued {
    /// The first block written.
    pub fn first(&self) -> u64 {
        self.first
    }

    /// Blocks written.
    pub fn blocks(&self) -> u64 {
        self.idx.len() as u64
    }
}

/// The acknowledged versions when a flush was sent: durable once it completes.
#[derive(Clone, Debug)]
pub struct FlushMark(Vec<Option<usize>>);

impl Durability {
    /// `blocks` never-written blocks.
    pub fn new(blocks: u64) -> Self {
        Durability { blocks: vec![History::default(); blocks as usize] }
    }

    /// Blocks tracked.
    pub fn len(&self) -> u64 {
        self.blocks.len() as u64
    }

    /// Whether no blocks are tracked.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Records a write of `version` (0: zeroes) to `blocks` blocks from `first`, sent now. From
    /// this moment on a crash may leave it in place.
    pub fn issue(&mut self, first: u64, blocks: u64, version: u64) -> Issued {
        let idx = (first..first + blocks)
            .map(|b| {
                let h = &mut self.blocks[b as usize];
                h.versions.push(version);
                h.versions.len() - 1
            })
            .collect();
        Issued { first, idx }
    }

    /// The write was acknowledged (durable at once with FUA).
    pub fn acked(&mut self, w: Issued, fua: bool) {
        for (b, i) in (w.first..).zip(w.idx) {
            let h = &mut self.blocks[b as usize];
            h.acked = Some(h.acked.map_or(i, |a| a.max(i)));
            if fua {
                h.durable = Some(h.durable.map_or(i, |d| d.max(i)));
            }
        }
    }

    /// A flush is sent now: what it will make durable.
    pub fn flush_sent(&self) -> FlushMark {
        FlushMark(self.blocks.iter().map(|h| h.acked).collect())
    }

    /// The flush completed.
    pub fn flushed(&mut self, mark: FlushMark) {
        for (h, acked) in self.blocks.iter_mut().zip(mark.0) {
            if let Some(a) = acked {
                h.durable = Some(h.durable.map_or(a, |d| d.max(a)));
            }
        }
    }

    /// Whether `block` was ever written.
    pub fn written(&self, block: u64) -> bool {
        !self.blocks[block as usize].versions.is_empty()
    }

    /// Blocks with a durable version.
    pub fn durable_blocks(&self) -> u64 {
        self.blocks.iter().filter(|h| h.durable.is_some()).count() as u64
    }

    /// Blocks ever written.
    pub fn written_blocks(&self) -> u64 {
        self.blocks.iter().filter(|h| !h.versions.is_empty()).count() as u64
    }

    /// Checks what `block` read after a crash (as [`read_stamp`] decoded it) and makes that the
    /// block's durable state: a crash may keep any write at or after the durable one, but
    /// nothing older and nothing never written here.
    pub fn check_after_crash(
        &mut self,
        block: u64,
        got: Result<Option<(u64, u64)>, String>,
    ) -> Result<(), String> {
        let v = match got? {
            None => 0,
            Some((b, _)) if b != block => return Err(format!("holds data of block {b}")),
            Some((_, v)) => v,
        };
        let h = &mut self.blocks[block as usize];
        let from = h.durable.unwrap_or(0);
        let ok = h.versions[from.min(h.versions.len())..].iter().rposition(|&x| x == v).map(|i| i + from);
        match ok {
            Some(i) => {
                h.versions.truncate(i + 1);
                h.durable = Some(i);
                h.acked = Some(i);
                Ok(())
            }
            None if v == 0 && h.durable.is_none() => {
                h.versions.clear();
                h.acked = None;
                Ok(())
            }
            None => Err(format!(
                "read version {v}; durable index {:?}, acknowledged {:?}, of versions {:?}",
                h.durable, h.acked, h.versions
            )),
        }
    }

    /// After a clean shutdown every acknowledged write is durable; checks what `block` read.
    pub fn check_after_clean_stop(
        &mut self,
        block: u64,
        got: Result<Option<(u64, u64)>, String>,
    ) -> Result<(), String> {
        let h = &mut self.blocks[block as usize];
        if let Some(a) = h.acked {
            h.durable = Some(h.durable.map_or(a, |d| d.max(a)));
        }
        self.check_after_crash(block, got)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: usize = 64;

    #[test]
    fn stamps_read_back_and_foreign_data_is_refused() {
        let d = stamp(7, 2, 3, B);
        assert_eq!(read_stamp(&d[..B]), Ok(Some((7, 3))));
        assert_eq!(read_stamp(&d[B..]), Ok(Some((8, 3))));
        assert_eq!(read_stamp(&stamp(7, 1, 0, B)), Ok(None));
        let mut torn = d[..B].to_vec();
        torn[B - 1] ^= 1;
        assert!(read_stamp(&torn).is_err());
    }

    #[test]
    fn a_crash_may_lose_only_what_was_not_durable() {
        let mut o = Durability::new(4);
        let w1 = o.issue(0, 2, 1);
        o.acked(w1, false);
        let mark = o.flush_sent();
        let w2 = o.issue(0, 1, 2);
        o.flushed(mark);
        o.acked(w2, false);
        // Block 0: version 1 is durable, 2 only acknowledged: either may be read, not zeroes.
        assert!(o.clone().check_after_crash(0, Ok(Some((0, 2)))).is_ok());
        assert!(o.clone().check_after_crash(0, Ok(Some((0, 1)))).is_ok());
        assert!(o.clone().check_after_crash(0, Ok(None)).is_err());
        // Nothing foreign, nothing never written.
        assert!(o.clone().check_after_crash(0, Ok(Some((1, 1)))).is_err());
        assert!(o.clone().check_after_crash(0, Ok(Some((0, 9)))).is_err());
        // Block 2 was never written: zeroes only.
        assert!(o.clone().check_after_crash(2, Ok(None)).is_ok());
        assert!(o.clone().check_after_crash(2, Ok(Some((2, 1)))).is_err());
        // What a read finds becomes durable: after reading 1, a later 2 is gone for good.
        o.check_after_crash(0, Ok(Some((0, 1)))).unwrap();
        assert!(o.clone().check_after_crash(0, Ok(Some((0, 2)))).is_err());
    }

    #[test]
    fn fua_is_durable_at_once_and_a_clean_stop_keeps_everything_acknowledged() {
        let mut o = Durability::new(2);
        let w = o.issue(0, 1, 5);
        o.acked(w, true);
        assert!(o.clone().check_after_crash(0, Ok(None)).is_err());
        let w = o.issue(1, 1, 6);
        o.acked(w, false);
        assert!(o.clone().check_after_crash(1, Ok(None)).is_ok());
        assert!(o.check_after_clean_stop(1, Ok(None)).is_err());
    }
}
