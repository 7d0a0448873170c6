//! Lease decisions: grant, or revoke conflicting holders and wait.
//!
//! A write lease is exclusive; read leases are shared. Reclaiming a write lease first makes
//! the holder's in-flight operations finish (its `active` count drops to zero), then waits
//! until the back end has applied the holder's log up to the tail it had at that moment, so
//! the new holder reads the public space with every acknowledged update in it.

use std::sync::atomic::Ordering;

use nicfs_comm::{LeaseMode, REVOKED, mono_ns};

use crate::shared::Shared;

/// A grant is not revoked within this long of being made, so that its holder gets to use it
/// at least once (without it, four processes contending for one file revoke each other's
/// grants before any of them can enter an operation).
pub(crate) const MIN_HOLD_NS: u64 = 1_000_000;

/// What to do with a lease request.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Granted: table index and expiry.
    Grant(usize, u64),
    /// Conflicting holders were revoked; wait for in-flight operations and, if a writer was
    /// revoked, for its log to be applied.
    Wait {
        /// Table index.
        idx: usize,
        /// The revoked writer's slot.
        writer: Option<usize>,
    },
    /// The lease table is full of live leases.
    Full,
}

impl Shared {
    pub(crate) fn decide(&self, slot: usize, ino: u64, mode: LeaseMode) -> Decision {
        let _g = self.lease_lock.lock().unwrap_or_else(|e| e.into_inner());
        let table = self.comm.leases();
        let Some(idx) = table.find_or_claim(ino) else { return Decision::Full };
        let e = table.entry(idx).expect("index from table");
        let now = mono_ns();
        let valid = e.expiry() > now;
        // A writer's grant may have expired, but its log can still hold updates of `ino`:
        // it counts as a conflict until the log is applied and the writer field cleared.
        let w_word = e.writer();
        let w = w_word & !REVOKED;
        let r = if valid { e.readers() } else { 0 };
        let me = slot as u64 + 1;
        let bit = 1u64 << slot;
        let other_writer = w != 0 && w != me;
        let conflict = match mode {
            LeaseMode::Write => other_writer || r & !bit != 0,
            LeaseMode::Read => other_writer,
        };
        if !conflict {
            let expiry = (now + self.cfg.lease_ms * 1_000_000).max(if valid { e.expiry() } else { 0 });
            match mode {
                LeaseMode::Write => e.set_grant(ino, me, 0, expiry),
                LeaseMode::Read => e.set_grant(ino, if w == me { me } else { 0 }, r | bit, expiry),
            }
            e.set_granted_at(now);
            self.counters.grants.fetch_add(1, Ordering::Relaxed);
            return Decision::Grant(idx, expiry);
        }
        if valid && now < e.granted_at().saturating_add(MIN_HOLD_NS) {
            // Too young to revoke: ask again later, revoking nothing yet.
            return Decision::Wait { idx, writer: None };
        }
        let writer_word = if other_writer { w | REVOKED } else { w_word };
        match mode {
            LeaseMode::Write => e.set_grant(ino, writer_word, 0, e.expiry()),
            LeaseMode::Read => e.set_grant(ino, writer_word, r, e.expiry()),
        }
        self.counters.revocations.fetch_add(1, Ordering::Relaxed);
        Decision::Wait { idx, writer: other_writer.then(|| (w - 1) as usize) }
    }

    /// Called once a revoked writer's log has been applied: clears the writer word if it still
    /// names that revoked writer.
    pub(crate) fn finish_revocation(&self, idx: usize, ino: u64, writer_slot: usize) {
        let _g = self.lease_lock.lock().unwrap_or_else(|e| e.into_inner());
        let table = self.comm.leases();
        if let Some(e) = table.entry(idx)
            && e.ino() == ino
            && e.writer() == (writer_slot as u64 + 1) | REVOKED
        {
            e.set_grant(ino, 0, e.readers(), e.expiry());
        }
    }

    /// Drops every grant held by `slot` (its owner detached or died).
    pub(crate) fn clear_leases(&self, slot: usize) {
        let _g = self.lease_lock.lock().unwrap_or_else(|e| e.into_inner());
        let table = self.comm.leases();
        let me = slot as u64 + 1;
        for i in 0..table.len() {
            let e = table.entry(i).expect("in range");
            if e.ino() != 0 && (e.writer() & !REVOKED == me || e.readers() & (1 << slot) != 0) {
                let w = if e.writer() & !REVOKED == me { 0 } else { e.writer() };
                if e.writer() & !REVOKED == me {
                    // Its log is applied (the caller checked); a write it died inside is over.
                    e.reset_active_writes();
                }
                e.set_grant(e.ino(), w, e.readers() & !(1 << slot), e.expiry());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use nicfs_comm::{CommRegion, LeaseMode, mono_ns};
    use nicfs_layout::FormatConfig;
    use nicfs_pm::{FastPm, MappedFile, SharedPm};

    use super::*;
    use crate::BackendConfig;

    fn shared() -> Arc<Shared> {
        let cfg = FormatConfig::small(8 << 20);
        let pm: SharedPm = Arc::new(FastPm::new(MappedFile::anonymous(cfg.size_bytes).unwrap()));
        nicfs_store::mkfs(pm.as_ref(), &cfg, 1).unwrap();
        let comm = Arc::new(CommRegion::anonymous().unwrap());
        crate::open(pm, comm, BackendConfig::free()).unwrap().0
    }

    fn age(sh: &Shared, idx: usize) {
        let e = sh.comm.leases().entry(idx).unwrap();
        e.set_granted_at(mono_ns().saturating_sub(10 * MIN_HOLD_NS));
    }

    #[test]
    fn readers_share_writers_exclude_and_revocation_waits_for_the_writer() {
        let sh = shared();
        let Decision::Grant(i, _) = sh.decide(0, 9, LeaseMode::Read) else { panic!("first reader") };
        assert!(matches!(sh.decide(1, 9, LeaseMode::Read), Decision::Grant(j, _) if j == i));
        // A young grant is not revoked yet.
        assert_eq!(sh.decide(2, 9, LeaseMode::Write), Decision::Wait { idx: i, writer: None });
        age(&sh, i);
        // Old enough: readers are revoked (no log to drain), then the writer gets it.
        assert_eq!(sh.decide(2, 9, LeaseMode::Write), Decision::Wait { idx: i, writer: None });
        assert!(matches!(sh.decide(2, 9, LeaseMode::Write), Decision::Grant(..)));
        age(&sh, i);
        // A reader now must wait for the writer's log: the writer is marked revoked.
        assert_eq!(sh.decide(0, 9, LeaseMode::Read), Decision::Wait { idx: i, writer: Some(2) });
        let e = sh.comm.leases().entry(i).unwrap();
        assert!(!e.allows(9, 2, LeaseMode::Write, 0), "a revoked writer can no longer write");
        // Until the revocation is finished, everybody else waits for the same writer.
        assert_eq!(sh.decide(1, 9, LeaseMode::Read), Decision::Wait { idx: i, writer: Some(2) });
        sh.finish_revocation(i, 9, 2);
        assert!(matches!(sh.decide(0, 9, LeaseMode::Read), Decision::Grant(..)));
    }

    #[test]
    fn an_expired_writer_still_blocks_until_its_log_is_applied() {
        let sh = shared();
        let Decision::Grant(i, _) = sh.decide(3, 5, LeaseMode::Write) else { panic!("grant") };
        let e = sh.comm.leases().entry(i).unwrap();
        e.set_grant(5, e.writer(), 0, 1); // expired long ago
        age(&sh, i);
        assert_eq!(sh.decide(0, 5, LeaseMode::Read), Decision::Wait { idx: i, writer: Some(3) });
        // The expired writer itself may simply take it back.
        assert!(matches!(sh.decide(3, 5, LeaseMode::Write), Decision::Grant(..)));
    }

    #[test]
    fn clearing_a_slot_drops_its_grants() {
        let sh = shared();
        let Decision::Grant(i, _) = sh.decide(1, 77, LeaseMode::Write) else { panic!("grant") };
        sh.clear_leases(1);
        let e = sh.comm.leases().entry(i).unwrap();
        assert_eq!(e.writer(), 0);
        assert!(matches!(sh.decide(0, 77, LeaseMode::Write), Decision::Grant(..)));
    }
}
