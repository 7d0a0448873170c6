//! Where a connection's replies wait for the socket, and who writes them.
//!
//! Completions are queued here by whoever completes a request. Two parties drain the queue,
//! each sending everything queued in one vectored write (each reply's header and payload
//! together, replies whole, under the socket lock):
//!
//! 1. the connection's **reader**, right before it may block (reading the socket, waiting for
//!    in-flight budget) and after every few requests while it is busy. A backend that completes
//!    inside `submit` therefore costs no thread hand-off: its completions are queued without
//!    waking anyone and go out with the reader's next flush, batched per socket read;
//! 2. the **writer thread**, woken by a completion from another thread (an asynchronous
//!    backend's event loop) only while the reader is idle — blocked, or gone. It exits once the
//!    reader is done and every route has delivered, i.e. when every request has been answered.
//!
//! After a failed write nothing more is sent; completions are still drained so the budget
//! comes back and the connection can wind down.

use std::cell::Cell;
use std::io::{self, IoSlice, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::frame::{Completion, Deliver, Route, frame};
use super::gate::Gate;

thread_local! {
    /// The outbox whose reader runs on this thread (0 = none).
    static READER_OF: Cell<usize> = const { Cell::new(0) };
}

struct Pending {
    queue: Vec<Completion>,
    /// Parties that will still deliver: live routes, plus one for the reader until it is done.
    open: usize,
    writer_parked: bool,
    /// The reader is blocked (or gone) and will not flush soon: the writer must send.
    reader_idle: bool,
}

struct Sink {
    out: Box<dyn Write + Send>,
    failed: bool,
    on_error: Box<dyn FnMut(&io::Error) + Send>,
    heads: Vec<u8>,
}

/// The reply path of one connection (see the module docs).
pub(crate) struct Outbox {
    pending: Mutex<Pending>,
    wake: Condvar,
    sink: Mutex<Sink>,
    structured: bool,
    gate: Gate,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Marks the current thread as the reader of an outbox while alive.
pub(crate) struct ReaderThread(());

impl Drop for ReaderThread {
    fn drop(&mut self) {
        READER_OF.with(|r| r.set(0));
    }
}

impl Outbox {
    /// An outbox writing to `out`; `on_error` runs once if a write fails (e.g. to shut the
    /// socket down so the reader stops as well).
    pub(crate) fn new(
        out: Box<dyn Write + Send>,
        on_error: Box<dyn FnMut(&io::Error) + Send>,
        structured: bool,
        gate: Gate,
    ) -> Arc<Outbox> {
        Arc::new(Outbox {
            pending: Mutex::new(Pending {
                queue: Vec::new(),
                open: 1,
                writer_parked: false,
                reader_idle: false,
            }),
            wake: Condvar::new(),
            sink: Mutex::new(Sink { out, failed: false, on_error, heads: Vec::new() }),
            structured,
            gate,
        })
    }

    /// Declares the calling thread the reader: its completions wait for [`flush`](Self::flush).
    pub(crate) fn enter_reader(self: &Arc<Self>) -> ReaderThread {
        READER_OF.with(|r| r.set(Arc::as_ptr(self) as usize));
        ReaderThread(())
    }

    /// A route for one request (counted until it delivers).
    pub(crate) fn route(self: &Arc<Self>, cookie: u64, read: Option<(u64, u32)>, charge: u64) -> Route {
        lock(&self.pending).open += 1;
        Route::new(self.clone(), cookie, read, charge)
    }

    /// Reader: takes in-flight budget for a request, flushing queued replies first if it has
    /// to wait (they may be what frees the budget).
    pub(crate) fn admit(&self, charge: u64) {
        if !self.gate.try_acquire(charge) {
            self.idle_begin();
            self.gate.acquire(charge);
            self.idle_end();
        }
    }

    /// Reader: about to block. Flushes until nothing is queued, then hands later completions
    /// to the writer thread until [`idle_end`](Self::idle_end).
    pub(crate) fn idle_begin(&self) {
        loop {
            self.flush();
            let mut p = lock(&self.pending);
            if p.queue.is_empty() {
                p.reader_idle = true;
                return;
            }
        }
    }

    /// Reader: running again; it will flush what arrives meanwhile.
    pub(crate) fn idle_end(&self) {
        lock(&self.pending).reader_idle = false;
    }

    fn queue(&self, c: Completion) {
        let inline = READER_OF.with(|r| r.get() == self as *const Outbox as usize);
        let mut p = lock(&self.pending);
        p.queue.push(c);
        p.open -= 1;
        let wake = p.writer_parked && !inline && p.reader_idle;
        drop(p);
        if wake {
            self.wake.notify_one();
        }
    }

    /// Sends everything queued now (called by the reader before it blocks).
    pub(crate) fn flush(&self) {
        let batch = {
            let mut p = lock(&self.pending);
            if p.queue.is_empty() {
                return;
            }
            std::mem::take(&mut p.queue)
        };
        self.send(batch);
    }

    /// The reader will deliver no more: flush, and let the writer finish once the rest arrive.
    pub(crate) fn reader_done(&self) {
        self.flush();
        let mut p = lock(&self.pending);
        p.open -= 1;
        p.reader_idle = true;
        let wake = p.writer_parked;
        drop(p);
        if wake {
            self.wake.notify_one();
        }
    }

    /// The writer thread: sends completions from other threads until nothing is left open.
    pub(crate) fn run_writer(&self) {
        loop {
            let batch = {
                let mut p = lock(&self.pending);
                loop {
                    // Only while the reader is idle: a busy reader sends what is queued with
                    // its next flush, and a writer that also sent whenever it happened to be
                    // awake (a spurious wake-up, a late start) would race it for the socket.
                    if !p.queue.is_empty() && p.reader_idle {
                        break std::mem::take(&mut p.queue);
                    }
                    if p.open == 0 {
                        return;
                    }
                    p.writer_parked = true;
                    p = self.wake.wait(p).unwrap_or_else(|e| e.into_inner());
                    p.writer_parked = false;
                }
            };
            self.send(batch);
        }
    }

    fn send(&self, batch: Vec<Completion>) {
        let count = batch.len();
        let charge = batch.iter().map(|c| c.charge).sum();
        let mut sink = lock(&self.sink);
        let Sink { out, failed, on_error, heads } = &mut *sink;
        if !*failed {
            heads.clear();
            let mut parts = Vec::with_capacity(count);
            for c in batch {
                let start = heads.len();
                let payload = frame(c, self.structured, heads);
                parts.push((start, heads.len(), payload));
            }
            let mut slices = Vec::with_capacity(2 * count);
            for (start, end, payload) in &parts {
                slices.push(IoSlice::new(&heads[*start..*end]));
                if let Some(p) = payload {
                    slices.push(IoSlice::new(p));
                }
            }
            if let Err(e) = write_all_vectored(out, &mut slices).and_then(|()| out.flush()) {
                *failed = true;
                on_error(&e);
            }
        }
        drop(sink);
        self.gate.release(count, charge);
    }

    /// (requests, bytes) in flight now.
    #[cfg(test)]
    pub(crate) fn in_flight(&self) -> (usize, u64) {
        self.gate.in_flight()
    }
}

impl Deliver for Outbox {
    fn deliver(&self, c: Completion) {
        self.queue(c);
    }
}

/// Writes every slice, retrying short writes.
fn write_all_vectored(w: &mut dyn Write, mut bufs: &mut [IoSlice<'_>]) -> io::Result<()> {
    IoSlice::advance_slices(&mut bufs, 0);
    while !bufs.is_empty() {
        match w.write_vectored(bufs) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut bufs, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{Errno, SimpleReplyHeader};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A writer that accepts at most 7 bytes per call (short writes) into a shared buffer.
    #[derive(Clone, Default)]
    struct Dribble(Arc<Mutex<Vec<u8>>>);
    impl Write for Dribble {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let n = buf.len().min(7);
            lock(&self.0).extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    struct Broken;
    impl Write for Broken {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// The complete replies written so far (the last one may be half written). Cookies below 3
    /// are 4-byte reads; every other reply carries no data.
    fn replies(mut bytes: &[u8]) -> Vec<(u64, u32, Vec<u8>)> {
        let mut out = Vec::new();
        while bytes.len() >= 16 {
            let h = SimpleReplyHeader::decode(bytes[..16].try_into().unwrap()).unwrap();
            let len = if h.error == 0 && h.cookie < 3 { 4 } else { 0 };
            if bytes.len() < 16 + len {
                break;
            }
            out.push((h.cookie, h.error, bytes[16..16 + len].to_vec()));
            bytes = &bytes[16 + len..];
        }
        out
    }

    #[test]
    fn inline_completions_wait_for_the_reader_and_others_go_through_the_writer() {
        let out = Dribble::default();
        let outbox =
            Outbox::new(Box::new(out.clone()), Box::new(|e| panic!("{e}")), false, Gate::new(64, 1 << 20));
        let sent = || replies(&lock(&out.0)).iter().map(|r| r.0).collect::<Vec<_>>();
        std::thread::scope(|s| {
            let writer = s.spawn(|| outbox.run_writer());
            // A failed check must end the writer too, or the scope would wait for it forever.
            let checks = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _reader = outbox.enter_reader();
                // Completed on the reader thread: queued, nothing written until the flush.
                for i in 0..3u8 {
                    outbox.admit(4);
                    outbox.route(i.into(), Some((0, 4)), 4).deliver(Ok(Some(vec![i; 4])), "");
                }
                assert!(sent().is_empty());
                outbox.flush();
                assert_eq!(sent(), [0, 1, 2]);
                // Completed on another thread while the reader is busy: left for the reader.
                outbox.admit(0);
                let route = outbox.route(7, None, 0);
                s.spawn(move || route.deliver(Ok(None), "")).join().unwrap();
                assert_eq!(sent(), [0, 1, 2]);
                // The reader is about to block: it flushes first; from then on the writer sends.
                outbox.idle_begin();
                assert_eq!(sent(), [0, 1, 2, 7]);
                outbox.admit(0);
                let route = outbox.route(9, None, 0);
                s.spawn(move || route.deliver(Err(Errno::Io), "")).join().unwrap();
                // Only the writer thread can send it now (a generous liveness bound, not a timing check).
                for _ in 0..10_000 {
                    if sent().len() == 5 {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                assert_eq!(sent(), [0, 1, 2, 7, 9], "the writer thread sent the late completion");
                outbox.idle_end();
            }));
            outbox.reader_done();
            writer.join().unwrap();
            if let Err(panic) = checks {
                std::panic::resume_unwind(panic);
            }
        });
        let all = replies(&lock(&out.0));
        assert_eq!(all.len(), 5);
        assert_eq!(all[4], (9, 5, vec![]));
        assert_eq!(outbox.in_flight(), (0, 0));
    }

    #[test]
    fn after_a_write_error_completions_are_drained_and_the_budget_returned() {
        let errors = Arc::new(AtomicUsize::new(0));
        let e2 = errors.clone();
        let on_error = Box::new(move |_: &io::Error| {
            e2.fetch_add(1, Ordering::SeqCst);
        });
        let outbox = Outbox::new(Box::new(Broken), on_error, true, Gate::new(64, 1 << 20));
        for i in 0..5 {
            outbox.admit(8);
            outbox.route(i, Some((0, 8)), 8).deliver(Ok(Some(vec![0; 8])), "");
            outbox.flush();
        }
        outbox.reader_done();
        outbox.run_writer(); // returns at once: nothing open
        assert_eq!(errors.load(Ordering::SeqCst), 1);
        assert_eq!(outbox.in_flight(), (0, 0));
    }
}
