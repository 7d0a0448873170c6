//! Back-pressure for one connection: a bound on requests and payload bytes in flight, taken by
//! the reader before it reads a payload and given back once the reply is sent.
//!
//! Only the connection's reader acquires; any thread releases. Both are a couple of atomic
//! operations unless the reader has to wait.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Condvar, Mutex};

/// Counts requests and bytes between "read from the socket" and "reply written".
#[derive(Debug)]
pub struct Gate {
    requests: AtomicUsize,
    bytes: AtomicU64,
    waiting: AtomicBool,
    lock: Mutex<()>,
    freed: Condvar,
    max_requests: usize,
    max_bytes: u64,
}

impl Gate {
    /// A gate admitting up to `max_requests` requests and `max_bytes` payload bytes at once.
    pub fn new(max_requests: usize, max_bytes: u64) -> Gate {
        Gate {
            requests: AtomicUsize::new(0),
            bytes: AtomicU64::new(0),
            waiting: AtomicBool::new(false),
            lock: Mutex::new(()),
            freed: Condvar::new(),
            max_requests,
            max_bytes,
        }
    }

    fn fits(&self, bytes: u64) -> bool {
        let r = self.requests.load(SeqCst);
        r == 0 || (r < self.max_requests && self.bytes.load(SeqCst) + bytes <= self.max_bytes)
    }

    fn take(&self, bytes: u64) {
        self.requests.fetch_add(1, SeqCst);
        self.bytes.fetch_add(bytes, SeqCst);
    }

    /// Takes room for one request with `bytes` of payload if it fits now. A request always fits
    /// when nothing is in flight, so a single large request cannot wait forever.
    pub fn try_acquire(&self, bytes: u64) -> bool {
        let fits = self.fits(bytes);
        if fits {
            self.take(bytes);
        }
        fits
    }

    /// Waits until one more request with `bytes` of payload fits, and takes the room.
    pub fn acquire(&self, bytes: u64) {
        if self.try_acquire(bytes) {
            return;
        }
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            // Announce the wait before re-checking: a release that misses the flag happened
            // before the re-check, which then sees its effect.
            self.waiting.store(true, SeqCst);
            if self.fits(bytes) {
                self.waiting.store(false, SeqCst);
                self.take(bytes);
                return;
            }
            guard = self.freed.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Returns `requests` requests carrying `bytes` in total.
    pub fn release(&self, requests: usize, bytes: u64) {
        self.requests.fetch_sub(requests, SeqCst);
        self.bytes.fetch_sub(bytes, SeqCst);
        if self.waiting.load(SeqCst) {
            let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.freed.notify_all();
        }
    }

    /// (requests, bytes) in flight now.
    pub fn in_flight(&self) -> (usize, u64) {
        (self.requests.load(SeqCst), self.bytes.load(SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::mpsc;

    #[test]
    fn acquire_blocks_until_release() {
        let gate = Arc::new(Gate::new(2, 100));
        gate.acquire(60);
        gate.acquire(0);
        assert!(!gate.try_acquire(0), "two requests is the limit");
        assert_eq!(gate.in_flight(), (2, 60));
        let (tx, rx) = mpsc::channel();
        let g = gate.clone();
        let t = std::thread::spawn(move || {
            g.acquire(50);
            tx.send(()).unwrap();
        });
        gate.release(1, 0);
        // One request with 60 bytes in flight: 60 + 50 > 100 still blocks.
        assert!(rx.try_recv().is_err());
        assert!(!gate.try_acquire(50));
        gate.release(1, 60);
        rx.recv().unwrap();
        t.join().unwrap();
        assert_eq!(gate.in_flight(), (1, 50));
    }

    #[test]
    fn an_oversized_request_is_admitted_alone() {
        let gate = Gate::new(4, 10);
        assert!(gate.try_acquire(1000));
        assert_eq!(gate.in_flight(), (1, 1000));
        assert!(!gate.try_acquire(1));
    }
}
