//! Writing and replaying the redo journal.

use std::collections::BTreeMap;

use nicfs_layout::{BLOCK_SIZE, Geometry, JOURNAL_RECORD_SIZE, JournalHeader, split_record};
use nicfs_pm::{Pm, PmAddr};

use crate::{FsError, Space};

/// Journal sequence state of a mounted engine.
pub(crate) struct Journal {
    seq: u64,
}

impl Journal {
    pub(crate) fn load(space: &Space) -> Result<Journal, FsError> {
        let geo = space.geo_ref();
        let mut hdr = [0u8; 28];
        space.pm().read(PmAddr(geo.journal_start as u64 * BLOCK_SIZE), &mut hdr);
        let h = JournalHeader::decode(&hdr, geo.journal_blocks)?;
        Ok(Journal { seq: h.seq })
    }
}

fn hdr_addr(geo: &Geometry) -> PmAddr {
    PmAddr(geo.journal_start as u64 * BLOCK_SIZE)
}

fn rec_addr(geo: &Geometry) -> PmAddr {
    PmAddr((geo.journal_start as u64 + 1) * BLOCK_SIZE)
}

fn apply_line(pm: &dyn Pm, addr: u64, line: &[u8]) {
    for w in 0..8 {
        let v = u64::from_le_bytes(line[w * 8..w * 8 + 8].try_into().expect("8 bytes"));
        pm.store_u64_atomic(PmAddr(addr + w as u64 * 8), v);
    }
    pm.flush(PmAddr(addr), 64);
}

/// Writes `lines` as one journal transaction and applies them (three fences: direct writes,
/// commit, apply).
pub(crate) fn commit_lines(space: &Space, journal: &mut Journal, lines: &BTreeMap<u64, [u8; 64]>) {
    let pm = space.pm();
    let geo = space.geo_ref();
    // Blocks the transaction wrote directly (fresh index/directory blocks, data) must be
    // durable before any part of the commit record can be: otherwise a crash could leave a
    // valid commit pointing at a lost block (found by the crash checker, seed 83).
    pm.fence();
    if lines.is_empty() {
        return;
    }
    let mut recs = Vec::with_capacity(lines.len() * JOURNAL_RECORD_SIZE);
    for (addr, l) in lines {
        recs.extend_from_slice(&addr.to_le_bytes());
        recs.extend_from_slice(l);
    }
    pm.store(rec_addr(geo), &recs);
    pm.flush(rec_addr(geo), recs.len() as u64);
    journal.seq += 1;
    let h = JournalHeader { seq: journal.seq, nrec: lines.len() as u32, committed: true };
    pm.persist(hdr_addr(geo), &h.encode(&recs));
    pm.fence(); // commit point
    for (addr, l) in lines {
        apply_line(pm.as_ref(), *addr, l);
    }
    pm.fence();
}

/// What recovery found in the journal.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct JournalStats {
    /// A committed transaction was (re-)applied.
    pub applied: bool,
    /// Its record count.
    pub records: u32,
    /// A header claimed a commit but failed its checksum (a torn commit, ignored).
    pub torn: bool,
}

/// Writes an empty journal: a header with its magic, no records, not committed (the caller
/// fences). `mkfs` starts with it, so that the first commit's header, torn by a crash, still
/// has its magic in every version of that word (a zeroed header torn by the first commit was
/// unreadable: found by the crash checker's 8-byte torn images).
pub fn write_empty_journal(pm: &dyn Pm, geo: &Geometry, seq: u64) {
    let mut line = [0u8; 64];
    let h = JournalHeader { seq, nrec: 0, committed: false }.encode(&[]);
    line[..h.len()].copy_from_slice(&h);
    pm.store(hdr_addr(geo), &line);
    pm.flush(hdr_addr(geo), 64);
}

/// Discards whatever the journal holds (an empty journal). For `fsck --repair`, after a
/// committed transaction was applied for good, or when the header itself is corrupt and
/// nothing in the journal can be trusted.
pub fn reset_journal(pm: &dyn Pm, geo: &Geometry) {
    write_empty_journal(pm, geo, 0);
    pm.fence();
}

/// Whether a journal record may target `addr`: metadata regions and log head lines only.
fn legal_target(geo: &Geometry, addr: u64) -> bool {
    if !addr.is_multiple_of(64) {
        return false;
    }
    let block = addr / BLOCK_SIZE;
    let in_meta = block >= geo.ibitmap_start as u64 && block < (geo.data_start + geo.data_blocks) as u64;
    let in_log_super = block >= geo.log_start as u64
        && block < geo.total_blocks as u64
        && (block - geo.log_start as u64).is_multiple_of(geo.log_space_blocks as u64)
        && addr % BLOCK_SIZE == nicfs_layout::LOG_HEAD_OFFSET;
    in_meta || in_log_super
}

/// Re-applies a committed journal transaction, if any (idempotent). A committed header whose
/// checksum fails is a torn commit and is ignored; records that target anything but metadata
/// are reported as corruption and nothing is applied.
pub fn replay_journal(pm: &dyn Pm, geo: &Geometry) -> Result<JournalStats, FsError> {
    let mut hdr = [0u8; 28];
    pm.read(hdr_addr(geo), &mut hdr);
    let h = JournalHeader::decode(&hdr, geo.journal_blocks)?;
    if !h.committed {
        return Ok(JournalStats::default());
    }
    let mut recs = vec![0u8; h.nrec as usize * JOURNAL_RECORD_SIZE];
    pm.read(rec_addr(geo), &mut recs);
    if JournalHeader::verify(&hdr, &recs).is_err() {
        return Ok(JournalStats { torn: true, ..JournalStats::default() });
    }
    for r in recs.chunks(JOURNAL_RECORD_SIZE) {
        let (addr, _) = split_record(r);
        if !legal_target(geo, addr) {
            return Err(FsError::corrupt(format!("journal record targets {addr:#x}, outside metadata")));
        }
    }
    for r in recs.chunks(JOURNAL_RECORD_SIZE) {
        let (addr, line) = split_record(r);
        apply_line(pm, addr, line);
    }
    pm.fence();
    Ok(JournalStats { applied: true, records: h.nrec, torn: false })
}
