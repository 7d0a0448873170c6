//! Stage 1, Log Fetch: read new log headers (headers only) through DMA.

use nicfs_layout::{LOG_HEADER_SIZE, LogHeader, LogOp};
use nicfs_pm::{Pm, PmAddr};
use nicfs_store::{FsError, LogSpace, Space};

/// A fetched record: its header, the PM address of its payload, and the payload itself for
/// small (non-write) records.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The header.
    pub hdr: LogHeader,
    /// Where the payload is.
    pub src: PmAddr,
    /// The payload of namespace and attribute records (names, times).
    pub payload: Vec<u8>,
}

/// A run of consecutive records of one log.
#[derive(Clone, Debug)]
pub struct Batch {
    /// The log space.
    pub slot: u32,
    /// First sequence number.
    pub first: u64,
    /// One past the last sequence number (the head after this batch).
    pub end: u64,
    /// Records in order.
    pub entries: Vec<Entry>,
}

impl Batch {
    /// Blocks the batch's records reserved (released once the batch is applied).
    pub fn reserved_blocks(&self) -> u64 {
        self.entries.iter().map(|e| e.hdr.op.reserved_blocks(e.hdr.data_len)).sum()
    }
}

/// Fetches up to `max` records starting at `next` (but never past the tail).
/// `verify_data` also checks write payload checksums (recovery does; the live path trusts
/// payloads its own host wrote moments ago).
pub fn fetch(
    dma: &dyn Pm,
    space: &Space,
    ls: &LogSpace,
    next: u64,
    max: usize,
    verify_data: bool,
) -> Result<Option<Batch>, FsError> {
    let tail = ls.tail(dma);
    if tail <= next {
        return Ok(None);
    }
    if tail - next > ls.geo.headers as u64 {
        return Err(FsError::corrupt(format!(
            "log {}: tail {tail} is more than a log ahead of {next}",
            ls.index
        )));
    }
    let end = tail.min(next + max as u64);
    // Read headers with as few transfers as possible (one, or two across the wrap).
    let mut raw = vec![0u8; ((end - next) as usize) * LOG_HEADER_SIZE];
    let mut seq = next;
    while seq < end {
        let slot = seq % ls.geo.headers as u64;
        let n = (end - seq).min(ls.geo.headers as u64 - slot);
        let at = ((seq - next) as usize) * LOG_HEADER_SIZE;
        dma.read(ls.header_addr(seq), &mut raw[at..at + n as usize * LOG_HEADER_SIZE]);
        seq += n;
    }
    let mut entries = Vec::with_capacity((end - next) as usize);
    for (k, chunk) in raw.chunks(LOG_HEADER_SIZE).enumerate() {
        let s = next + k as u64;
        let hdr = LogHeader::decode(chunk)
            .map_err(|e| FsError::corrupt(format!("log {} seq {s}: {e}", ls.index)))?;
        if hdr.seq != s {
            return Err(FsError::corrupt(format!("log {} seq {s}: header holds seq {}", ls.index, hdr.seq)));
        }
        hdr.validate(space.geo_ref())
            .map_err(|e| FsError::corrupt(format!("log {} seq {s}: {e}", ls.index)))?;
        if hdr.data_pos % ls.geo.data_bytes + hdr.data_len as u64 > ls.geo.data_bytes {
            return Err(FsError::corrupt(format!("log {} seq {s}: payload wraps", ls.index)));
        }
        let src = ls.data_addr(hdr.data_pos);
        let payload = if matches!(hdr.op, LogOp::Write { .. }) && !verify_data {
            Vec::new()
        } else {
            let p = ls.read_payload(dma, &hdr)?;
            if matches!(hdr.op, LogOp::Write { .. }) { Vec::new() } else { p }
        };
        entries.push(Entry { hdr, src, payload });
    }
    Ok(Some(Batch { slot: ls.index, first: next, end, entries }))
}
