//! A [`Link`] that runs the back end on the caller's thread: deterministic single-threaded
//! operation for the crash checker and for tools.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use nicfs_comm::{LeaseMode, Msg, MsgKind};
use nicfs_frontend::Link;
use nicfs_store::FsError;

use crate::control::alloc_inodes;
use crate::leases::Decision;
use crate::shared::Shared;

/// Serves a front end's requests synchronously: drains are performed inline, revoked
/// writers' logs are applied inline. Only for front ends that share the caller's thread.
pub struct DirectLink {
    sh: Arc<Shared>,
    slot: usize,
    drains: Arc<AtomicBool>,
}

impl DirectLink {
    /// A link for log space `slot`.
    pub fn new(sh: Arc<Shared>, slot: usize) -> DirectLink {
        DirectLink { sh, slot, drains: Arc::new(AtomicBool::new(true)) }
    }

    /// A link that applies logs inline only while `drains` is true; otherwise a request that
    /// would (a drain, or a lease held by another writer) fails instead. For drivers that run
    /// the back end's stages themselves and must see every batch they apply (the
    /// virtual-time model, which opens the gate only while it sets up, untimed), and that keep
    /// a front end from ever needing a drain (by checking [`Client::log_room`] first).
    ///
    /// [`Client::log_room`]: nicfs_frontend::Client::log_room
    pub fn gated(sh: Arc<Shared>, slot: usize, drains: Arc<AtomicBool>) -> DirectLink {
        DirectLink { sh, slot, drains }
    }

    fn refuse(&self, what: &str) -> FsError {
        FsError::Backend(format!("log {}: {what} would apply a log inline (this link does not)", self.slot))
    }
}

impl Link for DirectLink {
    fn call(&mut self, kind: MsgKind, args: &[u64]) -> Result<Msg, FsError> {
        let sh = &self.sh;
        let ok = Msg::new(MsgKind::Ok, 0, &[]);
        match kind {
            MsgKind::Hello | MsgKind::Drain => {
                if !self.drains.load(Ordering::Acquire) && sh.head(self.slot) < sh.tail(self.slot) {
                    return Err(self.refuse("a drain"));
                }
                sh.drain_inline(self.slot, false)?;
                Ok(ok)
            }
            MsgKind::LeaseReq => {
                let mode = LeaseMode::from_code(args.get(1).copied().unwrap_or(0))
                    .ok_or(FsError::Invalid("lease mode"))?;
                let ino = args.first().copied().unwrap_or(0);
                for _ in 0..10_000 {
                    match sh.decide(self.slot, ino, mode) {
                        Decision::Grant(idx, exp) => {
                            return Ok(Msg::new(MsgKind::Lease, 0, &[idx as u64, exp]));
                        }
                        Decision::Wait { writer: Some(_), .. } if !self.drains.load(Ordering::Acquire) => {
                            return Err(self.refuse("a lease revocation"));
                        }
                        Decision::Wait { idx, writer } => match writer {
                            Some(w) => {
                                sh.drain_inline(w, false)?;
                                sh.finish_revocation(idx, ino, w);
                            }
                            None => std::thread::sleep(std::time::Duration::from_micros(100)),
                        },
                        Decision::Full => return Err(FsError::NoSpace),
                    }
                }
                Err(FsError::Backend("lease stays contended".into()))
            }
            MsgKind::AllocInodes => {
                let inos = alloc_inodes(sh, args.first().copied().unwrap_or(1));
                let mut a = vec![inos.len() as u64];
                a.extend(inos);
                Ok(Msg::new(MsgKind::Inodes, 0, &a))
            }
            MsgKind::Reserve => {
                let n = sh.grant_blocks(
                    self.slot,
                    args.first().copied().unwrap_or(0),
                    args.get(1).copied().unwrap_or(0),
                )?;
                Ok(Msg::new(MsgKind::Ok, 0, &[n]))
            }
            MsgKind::Goodbye => {
                sh.return_quota(self.slot);
                Ok(ok)
            }
            _ => Err(FsError::Invalid("unexpected request")),
        }
    }
}
