//! The PM access API: the one seam every NICFS component reaches PM through.

use std::sync::Arc;

use crate::PmAddr;

/// Byte-addressable persistent memory.
///
/// **Callers** (front end, back end through its DMA model, recovery, fsck) must follow the
/// persistency protocol: data only counts as durable after a [`flush`](Pm::flush) of its
/// lines followed by a [`fence`](Pm::fence) (or a [`store_nt`](Pm::store_nt) followed by a
/// fence). Every access must lie inside `0..len()`; an access outside is a bug in the caller
/// and panics (on-PM values that feed addresses are validated by the layout parsers first).
///
/// **Implementers** must make all methods callable concurrently from many threads (and, for
/// file-backed maps, many processes); concurrent writers to the same bytes are the caller's
/// problem, not the implementer's. `store_u64_atomic` must be a single untearable 8-byte
/// store. Implementations must not reorder a `fence` before earlier flushes.
pub trait Pm: Send + Sync {
    /// Size of the namespace in bytes.
    fn len(&self) -> u64;

    /// Whether the namespace is empty (never true for a usable file system).
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies `buf.len()` bytes starting at `addr` into `buf`.
    fn read(&self, addr: PmAddr, buf: &mut [u8]);

    /// Ordinary (cached) store of `data` at `addr`.
    fn store(&self, addr: PmAddr, data: &[u8]);

    /// Non-temporal store: bypasses the cache, durable at the next fence without a flush.
    fn store_nt(&self, addr: PmAddr, data: &[u8]);

    /// Starts write-back of every cache line overlapping `addr..addr+len`.
    fn flush(&self, addr: PmAddr, len: u64);

    /// Store fence: every earlier flush and non-temporal store is durable when it returns.
    fn fence(&self);

    /// Untearable 8-byte store; `addr` must be 8-byte aligned.
    fn store_u64_atomic(&self, addr: PmAddr, value: u64);

    /// 8-byte load that never observes a torn `store_u64_atomic`; `addr` must be aligned.
    fn load_u64_atomic(&self, addr: PmAddr) -> u64;

    /// Convenience: `store` + `flush` (the caller still fences).
    fn persist(&self, addr: PmAddr, data: &[u8]) {
        self.store(addr, data);
        self.flush(addr, data.len() as u64);
    }

    /// Convenience: reads a little-endian `u64` (not atomic; see `load_u64_atomic`).
    fn read_u64(&self, addr: PmAddr) -> u64 {
        let mut b = [0u8; 8];
        self.read(addr, &mut b);
        u64::from_le_bytes(b)
    }
}

/// A PM namespace shared between threads.
pub type SharedPm = Arc<dyn Pm>;

/// Panics with a clear message when an access falls outside the namespace.
pub(crate) fn check_range(len: u64, addr: PmAddr, n: u64) {
    let end = addr.get().checked_add(n);
    assert!(
        end.is_some_and(|e| e <= len),
        "PM access out of range: {addr} + {n} bytes (namespace is {len} bytes)"
    );
}
