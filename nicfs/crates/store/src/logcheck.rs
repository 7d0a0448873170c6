//! Offline check and repair of the private logs: a log whose super block, head or tail words,
//! headers or payloads are corrupt is quarantined by the back end (never followed), so the
//! file system would not mount; `fsck --repair` makes it usable again.
//!
//! What can be restored is restored: the static part of the super block from the geometry, a
//! corrupt head word from its copy (or the copy from the head), a corrupt tail word from the
//! log itself (the end of the run of checksummed records from the head on). What cannot is
//! cut: the log ends before its first corrupt record, and the header slots of the records
//! dropped are wiped, so that no later scan takes them for valid records.

use nicfs_layout::{LOG_HEADER_SIZE, LogSuper};
use nicfs_pm::PmAddr;

use crate::{FsError, LogSpace, Space};

/// How to repair one log: the super block's words rewritten (head twice, tail), and its
/// static part too if `rewrite_static`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogFix {
    /// Rewrite the static part of the super block from the geometry.
    pub rewrite_static: bool,
    /// The head to write (both copies).
    pub head: u64,
    /// The tail to write.
    pub tail: u64,
    /// Records from `tail` on that are dropped (the first of them is corrupt; the ones after
    /// it may depend on it). Their header slots are wiped.
    pub dropped: u64,
}

/// What the check found in one log.
#[derive(Clone, Debug)]
pub struct LogCheck {
    /// The log space.
    pub index: u32,
    /// Valid records not yet applied (they are replayed at the next mount).
    pub pending: u64,
    /// The problems, in words.
    pub problems: Vec<String>,
    /// Their repair (`Some` when there are problems).
    pub fix: Option<LogFix>,
}

/// The first sequence number from `head` on (at most a log's worth) whose record is not
/// valid, with the reason, or the end of the run if it ends at `limit`.
fn valid_run(space: &Space, ls: &LogSpace, head: u64, limit: u64) -> (u64, Option<FsError>) {
    let pm = space.pm().as_ref();
    let end = limit.min(head.saturating_add(ls.geo.headers as u64));
    for seq in head..end {
        if let Err(e) = ls.read_header(pm, space, seq).and_then(|h| ls.read_payload(pm, &h).map(|_| ())) {
            return (seq, Some(e));
        }
    }
    (end, None)
}

/// One past the highest sequence number any header slot of the log holds validly (0 if
/// none): where to restart a log whose head is lost.
fn past_last_record(space: &Space, ls: &LogSpace) -> u64 {
    let pm = space.pm().as_ref();
    let mut past = 0;
    for slot in 0..ls.geo.headers as u64 {
        let mut b = [0u8; LOG_HEADER_SIZE];
        pm.read(ls.header_addr(slot), &mut b);
        if let Ok(h) = nicfs_layout::LogHeader::decode(&b)
            && h.seq % ls.geo.headers as u64 == slot
        {
            past = past.max(h.seq + 1);
        }
    }
    past
}

/// Checks log `index`: its super block (static part, head word and its copy, tail word), and
/// every record from head to tail (header and payload checksums, sequence numbers, geometry
/// limits).
pub fn check_log(space: &Space, index: u32) -> LogCheck {
    let mut problems = Vec::new();
    let pm = space.pm().as_ref();
    let g = *space.geo_ref();
    let ls = LogSpace { index, geo: g.log_space(index) };
    let mut b = [0u8; 28];
    pm.read(PmAddr(ls.geo.super_block.byte_offset()), &mut b);
    let rewrite_static = match LogSuper::decode(&b, &g, index) {
        Ok(_) => false,
        Err(e) => {
            problems.push(format!("log {index}: {e}"));
            true
        }
    };
    let head = match ls.checked_head(pm) {
        (Ok(h), Ok(c)) if h == c => Some(h),
        (Ok(h), Ok(c)) => {
            problems.push(format!("log {index}: head {h} and its copy {c} differ (the head word is kept)"));
            Some(h)
        }
        (Ok(h), Err(e)) => {
            problems.push(format!("log {index}: head copy: {e} (the head word says {h})"));
            Some(h)
        }
        (Err(e), Ok(c)) => {
            problems.push(format!("log {index}: {e} (its copy says {c})"));
            Some(c)
        }
        (Err(e), Err(_)) => {
            problems.push(format!("log {index}: {e}, and its copy too"));
            None
        }
    };
    let tail = ls.checked_tail(pm);
    let (head, tail, dropped, pending) = match (head, tail) {
        (Some(h), Ok(t)) if t < h => {
            problems.push(format!("log {index}: tail {t} is behind head {h}"));
            (h, h, 0, 0)
        }
        (Some(h), Ok(t)) => match valid_run(space, &ls, h, t) {
            (end, Some(e)) => {
                problems.push(format!("{e} ({} records from there on cannot be replayed)", t - end));
                (h, end, t - end, end - h)
            }
            (end, None) if end < t => {
                problems.push(format!("log {index}: tail {t} is more than a log ahead of head {h}"));
                (h, end, t - end, end - h)
            }
            (end, None) => (h, end, 0, end - h),
        },
        (Some(h), Err(e)) => {
            let (end, _) = valid_run(space, &ls, h, u64::MAX);
            problems.push(format!("log {index}: {e} (the valid records from the head end at {end})"));
            (h, end, 0, end - h)
        }
        (None, t) => {
            let t = t.unwrap_or_else(|e| {
                problems.push(format!("log {index}: {e}"));
                past_last_record(space, &ls)
            });
            problems.push(format!(
                "log {index}: head lost: the log is emptied at {t} (records not yet applied, if any, are lost)"
            ));
            (t, t, 0, 0)
        }
    };
    let fix = (!problems.is_empty()).then_some(LogFix { rewrite_static, head, tail, dropped });
    LogCheck { index, pending, problems, fix }
}

/// Applies `fix` to log `index` (offline: nothing else may use the image).
pub fn repair_log(space: &Space, index: u32, fix: &LogFix) -> Result<(), FsError> {
    let pm = space.pm().as_ref();
    let geo = space.geo_ref().log_space(index);
    let ls = LogSpace { index, geo };
    if fix.tail < fix.head {
        return Err(FsError::corrupt(format!("log {index}: cannot cut below its head")));
    }
    if fix.rewrite_static {
        let s = LogSuper { index, headers: geo.headers, data_bytes: geo.data_bytes };
        pm.persist(PmAddr(geo.super_block.byte_offset()), &s.encode());
    }
    for seq in fix.tail..fix.tail + fix.dropped.min(geo.headers as u64) {
        // Only a slot that holds the dropped record itself: another may hold a kept one.
        let mut b = [0u8; LOG_HEADER_SIZE];
        pm.read(ls.header_addr(seq), &mut b);
        if nicfs_layout::LogHeader::decode(&b).is_ok_and(|h| h.seq == seq) {
            pm.persist(ls.header_addr(seq), &[0u8; LOG_HEADER_SIZE]);
        }
    }
    pm.fence();
    pm.persist(ls.head_addr(), &ls.head_words(fix.head));
    pm.store_u64_atomic(ls.tail_addr(), ls.tail_word(fix.tail));
    pm.flush(ls.tail_addr(), 8);
    pm.fence();
    Ok(())
}
