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
///
/// A request to a back end that has died waits for a new one (up to the configured bound)
/// and is sent again to it: every request is safe to repeat.
pub struct RingLink {
    comm: Arc<CommRegion>,
    slot: usize,
    next_id: u32,
    timeout_ns: u64,
    backend_wait_ns: u64,
}

/// Progress of one call: when it started, when the back end was first seen dead.
struct Waiting {
    start: u64,
    dead_since: Option<u64>,
    spins: u32,
}

impl RingLink {
    /// A link over `slot` of `comm`: a running back end must answer within `timeout_ms`; a
    /// dead one must be back within `backend_wait_ms`.
    pub fn new(comm: Arc<CommRegion>, slot: usize, timeout_ms: u64, backend_wait_ms: u64) -> RingLink {
        // Start ids away from those a previous owner of the slot may have left in the ring.
        let next_id = (mono_ns() as u32).max(1);
        RingLink {
            comm,
            slot,
            next_id,
            timeout_ns: timeout_ms * 1_000_000,
            backend_wait_ns: backend_wait_ms * 1_000_000,
        }
    }

    fn wait(&self, w: &mut Waiting) -> Result<(), FsError> {
        w.spins += 1;
        if w.spins < 200 {
            std::hint::spin_loop();
        } else if w.spins < 2000 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
        if w.spins.is_multiple_of(1024) {
            let now = mono_ns();
            let pid = self.comm.backend_pid().load(Ordering::Acquire);
            if pid != 0 && !pid_alive(pid) {
                let since = *w.dead_since.get_or_insert(now);
                if now - since > self.backend_wait_ns {
                    return Err(FsError::Backend(format!(
                        "the back end (pid {pid}) is not running and did not come back within {} ms",
                        self.backend_wait_ns / 1_000_000
                    )));
                }
            } else {
                if w.dead_since.take().is_some() {
                    // A new back end: it gets the whole reply timeout.
                    w.start = now;
                }
                if now - w.start > self.timeout_ns {
                    return Err(FsError::Backend("no reply from the back end".into()));
                }
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
        let mut w = Waiting { start: mono_ns(), dead_since: None, spins: 0 };
        let msg = Msg::new(kind, id, args);
        let mut backend = self.comm.backend_pid().load(Ordering::Acquire);
        while !s.req.push(&msg) {
            self.wait(&mut w)?;
        }
        loop {
            match s.resp.pop() {
                Some(Some(r)) if r.id == id => return check(kind, r),
                Some(_) => continue, // a stale or garbled reply
                None => {
                    self.wait(&mut w)?;
                    // A restarted back end never saw a request its predecessor had taken:
                    // send it again (every request is safe to repeat).
                    let now = self.comm.backend_pid().load(Ordering::Acquire);
                    if now != backend && now != 0 {
                        backend = now;
                        while !s.req.push(&msg) {
                            self.wait(&mut w)?;
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
