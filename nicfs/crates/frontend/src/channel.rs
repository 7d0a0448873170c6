//! Request/reply calls to the back end: the [`Link`] seam and its shared-memory ring
//! implementation.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use nicfs_comm::{CommRegion, Msg, MsgKind, mono_ns, pid_alive};
use nicfs_store::FsError;

/// How a front end reaches the back end with small requests (lease, inode grants, drain).
///
/// Called by the front end with its state lock held and no lease operation in flight; the
/// implementation blocks until the reply arrives. Implementations must not call back into
/// the front end.
pub trait Link: Send {
    /// Sends `kind(args)` and returns the reply (an `Err` reply becomes an error).
    fn call(&mut self, kind: MsgKind, args: &[u64]) -> Result<Msg, FsError>;
}

/// The comm channel: this process's slot rings in the shared comm region.
pub struct RingLink {
    comm: Arc<CommRegion>,
    slot: usize,
    next_id: u32,
    timeout_ns: u64,
}

impl RingLink {
    /// A link over `slot` of `comm`.
    pub fn new(comm: Arc<CommRegion>, slot: usize, timeout_ms: u64) -> RingLink {
        // Start ids away from those a previous owner of the slot may have left in the ring.
        let next_id = (mono_ns() as u32).max(1);
        RingLink { comm, slot, next_id, timeout_ns: timeout_ms * 1_000_000 }
    }

    fn wait(&self, start: u64, spins: &mut u32) -> Result<(), FsError> {
        *spins += 1;
        if *spins < 200 {
            std::hint::spin_loop();
        } else if *spins < 2000 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
        if (*spins).is_multiple_of(1024) {
            let elapsed = mono_ns() - start;
            let pid = self.comm.backend_pid().load(Ordering::Acquire);
            if elapsed > self.timeout_ns {
                return Err(FsError::Backend("no reply from the back end".into()));
            }
            if pid != 0 && !pid_alive(pid) && elapsed > 1_000_000_000 {
                return Err(FsError::Backend("the back end is not running".into()));
            }
        }
        Ok(())
    }
}

impl Link for RingLink {
    fn call(&mut self, kind: MsgKind, args: &[u64]) -> Result<Msg, FsError> {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1).max(1);
        let s = self.comm.slot(self.slot);
        let start = mono_ns();
        let msg = Msg::new(kind, id, args);
        let mut spins = 0u32;
        let mut backend = self.comm.backend_pid().load(Ordering::Acquire);
        while !s.req.push(&msg) {
            self.wait(start, &mut spins)?;
        }
        loop {
            match s.resp.pop() {
                Some(Some(r)) if r.id == id => return check(kind, r),
                Some(_) => continue, // a stale or garbled reply
                None => {
                    self.wait(start, &mut spins)?;
                    // A restarted back end never saw a request its predecessor had taken:
                    // send it again (every request is safe to repeat).
                    let now = self.comm.backend_pid().load(Ordering::Acquire);
                    if now != backend && now != 0 {
                        backend = now;
                        while !s.req.push(&msg) {
                            self.wait(start, &mut spins)?;
                        }
                    }
                }
            }
        }
    }
}

/// Turns an `Err` reply into an error.
pub fn check(kind: MsgKind, r: Msg) -> Result<Msg, FsError> {
    if r.kind == MsgKind::Err {
        let errno = r.args[0];
        return Err(match errno {
            28 => FsError::NoSpace,
            _ => FsError::Backend(format!("request {kind:?} failed with errno {errno}")),
        });
    }
    Ok(r)
}
