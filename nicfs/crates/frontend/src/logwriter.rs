//! Appending to the private log: payload, header, then one atomic tail update.

use std::collections::VecDeque;

use nicfs_comm::MsgKind;
use nicfs_layout::{LogHeader, LogOp};
use nicfs_pm::{Pm, PmAddr};
use nicfs_store::{FsError, LogSpace};

use crate::channel::Link;

/// The writer side of one log space (owned by exactly one front end).
pub(crate) struct LogWriter {
    ls: LogSpace,
    tail: u64,
    pos: u64,
    /// Records not yet known to be applied: (seq, first data position).
    inflight: VecDeque<(u64, u64)>,
    /// Appends since the caller last pruned its update lists.
    pub(crate) appends_since_prune: u64,
}

impl LogWriter {
    /// Opens the writer; the back end has drained the log (head == tail) before `Hello` returns.
    pub(crate) fn open(pm: &dyn Pm, ls: LogSpace) -> LogWriter {
        let tail = ls.tail(pm);
        let d = ls.geo.data_bytes;
        // Start the data position on a fresh lap so no position is ever reused ambiguously.
        let pos = (tail.wrapping_mul(64) / d + 1) * d;
        LogWriter { ls, tail, pos, inflight: VecDeque::new(), appends_since_prune: 0 }
    }

    /// The log space.
    pub(crate) fn space(&self) -> &LogSpace {
        &self.ls
    }

    /// The next sequence number.
    pub(crate) fn tail(&self) -> u64 {
        self.tail
    }

    fn fits(&mut self, head: u64, len: u64) -> Option<u64> {
        while self.inflight.front().is_some_and(|(s, _)| *s < head) {
            self.inflight.pop_front();
        }
        if self.tail - head >= self.ls.geo.headers as u64 {
            return None;
        }
        let d = self.ls.geo.data_bytes;
        let mut p = self.pos;
        if p % d + len > d {
            p = (p / d + 1) * d;
        }
        let data_head = self.inflight.front().map_or(self.pos, |(_, dp)| *dp);
        if p + len - data_head > d { None } else { Some(p) }
    }

    /// Whether a record with `len` payload bytes fits in the log now (no drain needed).
    pub(crate) fn has_room(&mut self, pm: &dyn Pm, len: u64) -> bool {
        let head = self.ls.head(pm);
        self.fits(head, len).is_some()
    }

    /// Appends one record and returns (seq, PM address of the payload). Durable on return.
    /// When the log is full it asks the back end to drain and waits (back-pressure).
    pub(crate) fn append(
        &mut self,
        pm: &dyn Pm,
        chan: &mut dyn Link,
        op: LogOp,
        payload: &[&[u8]],
        time_ns: i64,
    ) -> Result<(u64, PmAddr), FsError> {
        let len: u64 = payload.iter().map(|p| p.len() as u64).sum();
        let pos = loop {
            let head = self.ls.head(pm);
            if let Some(p) = self.fits(head, len) {
                break p;
            }
            chan.call(MsgKind::Drain, &[self.tail.saturating_sub(1)])?;
        };
        let at = self.ls.data_addr(pos);
        let mut crc = crc32fast::Hasher::new();
        let mut off = 0u64;
        for p in payload {
            pm.store_nt(at.add(off), p);
            crc.update(p);
            off += p.len() as u64;
        }
        let seq = self.tail;
        let h = LogHeader { seq, data_pos: pos, data_len: len as u32, data_crc: crc.finalize(), time_ns, op };
        let ha = self.ls.header_addr(seq);
        pm.store(ha, &h.encode());
        pm.flush(ha, 64);
        pm.fence();
        pm.store_u64_atomic(self.ls.tail_addr(), self.ls.tail_word(seq + 1));
        pm.flush(self.ls.tail_addr(), 8);
        pm.fence();
        self.tail = seq + 1;
        self.pos = pos + len;
        self.inflight.push_back((seq, pos));
        self.appends_since_prune += 1;
        Ok((seq, at))
    }
}
