//! Offline check and repair of the private logs: a log whose super block, headers or payloads
//! are corrupt is quarantined by the back end (never followed), so the file system would not
//! mount; `fsck --repair` makes it usable again by cutting the log at its last valid record.

use nicfs_layout::{BLOCK_SIZE, LogSuper};
use nicfs_pm::PmAddr;

use crate::{FsError, LogSpace, Space};

/// How to repair one log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogFix {
    /// Rewrite the static part of the log super block from the geometry, then cut the log at
    /// its head (its head and tail words cannot be trusted either).
    RewriteSuper,
    /// Set the tail to `tail`, dropping the `dropped` records from there on (the first of them
    /// is corrupt; the ones after it may depend on it).
    Truncate {
        /// The new tail.
        tail: u64,
        /// Records dropped.
        dropped: u64,
    },
}

/// What the check found in one log.
#[derive(Clone, Debug)]
pub struct LogCheck {
    /// The log space.
    pub index: u32,
    /// Valid records not yet applied (they are replayed at the next mount).
    pub pending: u64,
    /// The problem, in words.
    pub problem: Option<String>,
    /// Its repair.
    pub fix: Option<LogFix>,
}

/// Checks log `index`: its super block, and every record from head to tail (header and
/// payload checksums, sequence numbers, geometry limits).
pub fn check_log(space: &Space, index: u32) -> LogCheck {
    let mut c = LogCheck { index, pending: 0, problem: None, fix: None };
    let pm = space.pm().as_ref();
    let ls = match LogSpace::open(space, index) {
        Ok(ls) => ls,
        Err(e) => {
            c.problem = Some(format!("log {index}: {e}"));
            c.fix = Some(LogFix::RewriteSuper);
            return c;
        }
    };
    let (head, tail) = (ls.head(pm), ls.tail(pm));
    if tail < head {
        c.problem = Some(format!("log {index}: tail {tail} is behind head {head}"));
        c.fix = Some(LogFix::Truncate { tail: head, dropped: 0 });
        return c;
    }
    let end = tail.min(head.saturating_add(ls.geo.headers as u64));
    for seq in head..end {
        if let Err(e) = ls.read_header(pm, space, seq).and_then(|h| ls.read_payload(pm, &h).map(|_| ())) {
            c.problem = Some(format!("{e} ({} records from there on cannot be replayed)", tail - seq));
            c.fix = Some(LogFix::Truncate { tail: seq, dropped: tail - seq });
            return c;
        }
        c.pending += 1;
    }
    if end < tail {
        c.problem = Some(format!("log {index}: tail {tail} is more than a log ahead of head {head}"));
        c.fix = Some(LogFix::Truncate { tail: end, dropped: tail - end });
    }
    c
}

/// Applies `fix` to log `index` (offline: nothing else may use the image).
pub fn repair_log(space: &Space, index: u32, fix: &LogFix) -> Result<(), FsError> {
    let pm = space.pm().as_ref();
    let g = *space.geo_ref();
    let geo = g.log_space(index);
    let ls = LogSpace { index, geo };
    let tail = match *fix {
        LogFix::RewriteSuper => {
            let at = PmAddr(geo.super_block.byte_offset());
            let s = LogSuper { index, headers: geo.headers, data_bytes: geo.data_bytes };
            pm.store(at, &s.encode());
            pm.flush(at, BLOCK_SIZE.min(64));
            ls.head(pm)
        }
        LogFix::Truncate { tail, .. } => tail,
    };
    if tail < ls.head(pm) {
        return Err(FsError::corrupt(format!("log {index}: cannot cut below its head")));
    }
    pm.store_u64_atomic(ls.tail_addr(), tail);
    pm.flush(ls.tail_addr(), 8);
    pm.fence();
    Ok(())
}
