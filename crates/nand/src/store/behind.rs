//! Write-behind for the image store: the file's writes, made by a thread of their own.
//!
//! ```text
//!   simulation thread                         image writer thread
//!   program / erase / mark bad
//!     push([(offset, bytes), ...]) ---queue--> pwrite each, in queue order
//!   read of a page still queued                     |
//!     wait(its number) <------- progress ----------'   (written = the last number in the file)
//!   sync: wait(everything), then fdatasync
//! ```
//!
//! Serving a device live, the kernel's copy of each programmed page into the page cache was
//! the largest single cost on the thread that runs the simulation (about a third of it for
//! random writes). Here that copy happens on another core while the simulation goes on.
//!
//! **Order is the contract.** Writes reach the file in the order they were pushed, and after a
//! failed write none of the later ones is written, so the file always holds a prefix of what
//! was pushed: exactly what a crash at some earlier moment would have left, which the image's
//! recovery handles (a program writes its data before its OOB record; an erase is a block-table
//! write after every program before it). A kill loses at most the queued tail, which only
//! holds data that nobody was promised: [`WriteBehind::sync`] waits for everything before it
//! syncs. A failed write is kept, and every later call returns it.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// Bytes queued before [`WriteBehind::push`] waits for the writer (bounds memory and what a
/// kill loses).
const QUEUE_BYTES: usize = 4 << 20;
/// Bytes queued before a push wakes an idle writer: the writer works in batches, so that the
/// caller pays a wake-up (a system call and, on a small machine, a preempted thread) per batch
/// rather than per page.
const WAKE_BYTES: usize = 256 << 10;
/// How long a smaller queue may wait for the writer when nobody needs it written.
const LINGER: Duration = Duration::from_millis(5);
/// Written buffers kept for reuse (page payloads: OOB records and block-table entries are
/// too small to be worth keeping).
const SPARE_BUFFERS: usize = 64;
const SPARE_MIN_BYTES: usize = 4096;

/// One write: `bytes` at file offset `at`.
type Write = (u64, Vec<u8>);

/// What the writer does with the file, in queue order.
enum Item {
    /// A write.
    Write(Write),
    /// Give `len` bytes at `at` back to the file system (they read as zeroes from then on).
    Punch { at: u64, len: u64 },
}

/// The queue and its writer thread (see the module docs).
pub(super) struct WriteBehind {
    shared: Arc<Shared>,
    file: Arc<File>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    state: Mutex<State>,
    /// The writer waits here for work.
    work: Condvar,
    /// The caller waits here for writes to reach the file (or for room in the queue).
    progress: Condvar,
    /// `State::written`, readable without the lock.
    written: AtomicU64,
}

#[derive(Default)]
struct State {
    queue: Vec<Item>,
    queued_bytes: usize,
    /// Number of the last push (pushes are numbered from 1).
    pushed: u64,
    /// Number of the last push whose writes are all in the file (or dropped after a failure).
    written: u64,
    /// The first failed write: nothing after it was written.
    error: Option<(io::ErrorKind, String)>,
    writer_idle: bool,
    /// The file system cannot punch holes: punches are skipped.
    no_punching: bool,
    caller_waiting: bool,
    /// The caller waits for the writer: it must not linger.
    urgent: bool,
    closing: bool,
    spare: Vec<Vec<u8>>,
}

impl State {
    fn check(&self) -> io::Result<()> {
        match &self.error {
            None => Ok(()),
            Some((kind, msg)) => Err(io::Error::new(*kind, format!("an earlier image write failed: {msg}"))),
        }
    }
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl WriteBehind {
    /// Starts the writer thread for `file`.
    pub(super) fn new(file: Arc<File>) -> io::Result<WriteBehind> {
        let shared = Arc::new(Shared {
            state: Mutex::default(),
            work: Condvar::new(),
            progress: Condvar::new(),
            written: AtomicU64::new(0),
        });
        let (s, f) = (shared.clone(), file.clone());
        let thread = std::thread::Builder::new().name("ssdlab-image".into()).spawn(move || writer(&f, &s))?;
        Ok(WriteBehind { shared, file, thread: Some(thread) })
    }

    /// The file, for reads (of pages no longer queued: see [`wait`](Self::wait)).
    pub(super) fn file(&self) -> &File {
        &self.file
    }

    /// An empty buffer with room for `len` bytes, reused from written ones where possible.
    pub(super) fn buffer(&self, len: usize) -> Vec<u8> {
        let mut b = lock(&self.shared.state).spare.pop().unwrap_or_default();
        b.clear();
        b.reserve(len);
        b
    }

    /// Queues `writes` (written in this order, after everything queued before) and returns
    /// their number for [`wait`](Self::wait). Waits while the queue is full.
    pub(super) fn push(&self, writes: impl IntoIterator<Item = Write>) -> io::Result<u64> {
        let mut s = lock(&self.shared.state);
        s.check()?;
        while s.queued_bytes >= QUEUE_BYTES && s.error.is_none() {
            s = self.wait_progress(s);
        }
        s.check()?;
        let was_empty = s.queue.is_empty();
        for w in writes {
            s.queued_bytes += w.1.len();
            s.queue.push(Item::Write(w));
        }
        s.pushed += 1;
        // A writer idle on an empty queue waits without a timeout: the first item wakes it so
        // that it starts lingering (without this, a small queue waited for a sync or a big
        // push that might never come).
        if s.writer_idle && (was_empty || s.queued_bytes >= WAKE_BYTES) {
            s.writer_idle = false;
            self.shared.work.notify_one();
        }
        Ok(s.pushed)
    }

    /// Queues a hole punched over `len` bytes at `at` (after everything queued before), so
    /// that the file stops taking disk space for them; they read as zeroes afterwards. On a
    /// file system that cannot punch holes this does nothing (the space stays allocated).
    pub(super) fn punch(&self, at: u64, len: u64) -> io::Result<u64> {
        let mut s = lock(&self.shared.state);
        s.check()?;
        if s.no_punching {
            // Nothing to queue: a number with no item behind it would never be written.
            return Ok(s.pushed);
        }
        let was_empty = s.queue.is_empty();
        s.queue.push(Item::Punch { at, len });
        s.pushed += 1;
        if s.writer_idle && was_empty {
            s.writer_idle = false;
            self.shared.work.notify_one();
        }
        Ok(s.pushed)
    }

    /// Waits until the writes of push number `n` (and so of every push before it) are in the
    /// file.
    pub(super) fn wait(&self, n: u64) -> io::Result<()> {
        self.wait_under(lock(&self.shared.state), n)
    }

    /// Waits until everything pushed so far is in the file.
    pub(super) fn wait_all(&self) -> io::Result<()> {
        let s = lock(&self.shared.state);
        let n = s.pushed;
        self.wait_under(s, n)
    }

    /// [`wait`](Self::wait) with the state already locked.
    fn wait_under(&self, mut s: MutexGuard<'_, State>, n: u64) -> io::Result<()> {
        while s.written < n {
            s = self.wait_progress(s);
        }
        s.check()
    }

    /// Whether push number `n` is in the file already.
    pub(super) fn is_written(&self, n: u64) -> bool {
        self.shared.written.load(Ordering::Acquire) >= n
    }

    /// Everything pushed so far in the file, then the file's data synced to the disk.
    pub(super) fn sync(&self) -> io::Result<()> {
        self.wait_all()?;
        self.file.sync_data()
    }

    fn wait_progress<'a>(&self, mut s: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        s.caller_waiting = true;
        s.urgent = true;
        if s.writer_idle {
            s.writer_idle = false;
            self.shared.work.notify_one();
        }
        let mut s = self.shared.progress.wait(s).unwrap_or_else(|e| e.into_inner());
        s.caller_waiting = false;
        s
    }
}

impl Drop for WriteBehind {
    /// Writes everything still queued, then stops the writer.
    fn drop(&mut self) {
        lock(&self.shared.state).closing = true;
        self.shared.work.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The writer thread: takes the whole queue at a time and writes it in order. It takes the
/// queue when it holds [`WAKE_BYTES`], when the caller waits, when closing, or once a smaller
/// queue has waited [`LINGER`].
fn writer(file: &File, shared: &Shared) {
    let mut batch: Vec<Item> = Vec::new();
    loop {
        let (upto, failed) = {
            let mut s = lock(&shared.state);
            loop {
                if s.closing || s.urgent || s.queued_bytes >= WAKE_BYTES {
                    if !s.queue.is_empty() {
                        break;
                    }
                    if s.closing {
                        return; // everything is written
                    }
                }
                s.writer_idle = true;
                if s.queue.is_empty() {
                    s = shared.work.wait(s).unwrap_or_else(|e| e.into_inner());
                } else {
                    let (g, waited) = shared.work.wait_timeout(s, LINGER).unwrap_or_else(|e| e.into_inner());
                    s = g;
                    if waited.timed_out() && !s.queue.is_empty() {
                        break;
                    }
                }
            }
            s.writer_idle = false;
            s.urgent = false;
            std::mem::swap(&mut batch, &mut s.queue);
            (s.pushed, s.error.is_some())
        };
        let mut error = None;
        let mut no_punching = false;
        if !failed {
            for item in &batch {
                match item {
                    Item::Write((at, bytes)) => {
                        if let Err(e) = file.write_all_at(bytes, *at) {
                            error = Some((e.kind(), format!("writing {} bytes at {at}: {e}", bytes.len())));
                            break; // nothing after a failed write: the file stays a prefix
                        }
                    }
                    Item::Punch { at, len } if !no_punching => {
                        // Only disk space is at stake: a file system that cannot punch holes
                        // keeps the bytes, which nothing reads again (see `ImageStore::erase`).
                        no_punching = punch_hole(file, *at, *len).is_err();
                    }
                    Item::Punch { .. } => {}
                }
            }
        }
        let mut s = lock(&shared.state);
        for item in batch.drain(..) {
            let Item::Write((_, bytes)) = item else { continue };
            s.queued_bytes -= bytes.len();
            if s.spare.len() < SPARE_BUFFERS && bytes.capacity() >= SPARE_MIN_BYTES {
                s.spare.push(bytes);
            }
        }
        s.no_punching |= no_punching;
        if s.error.is_none() {
            s.error = error;
        }
        s.written = upto;
        shared.written.store(upto, Ordering::Release);
        if s.caller_waiting {
            shared.progress.notify_all();
        }
    }
}

/// Deallocates `len` bytes at `at` of `file` (`fallocate(2)`, `FALLOC_FL_PUNCH_HOLE`), keeping
/// its size.
pub(super) fn punch_hole(file: &File, at: u64, len: u64) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (libc::off_t::try_from(at), libc::off_t::try_from(len)) else {
        return Err(io::ErrorKind::InvalidInput.into());
    };
    // SAFETY: fallocate on a file descriptor we own for the whole call; it touches no memory
    // of ours.
    let r = unsafe {
        libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, offset, len)
    };
    if r == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp() -> (tempfile::TempDir, Arc<File>) {
        let dir = tempfile::tempdir().unwrap();
        let file =
            File::options().read(true).write(true).create(true).truncate(true).open(dir.path().join("f"));
        (dir, Arc::new(file.unwrap()))
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri (minutes: the byte-by-byte check)")]
    fn writes_land_in_push_order_and_wait_sees_them() {
        let (_dir, file) = temp();
        let wb = WriteBehind::new(file.clone()).unwrap();
        // Overlapping writes: the later push wins only if order is kept.
        let mut last = 0;
        for i in 0..200u8 {
            let mut b = wb.buffer(4096);
            b.resize(4096, i);
            last = wb.push([((i as u64 % 7) * 1024, b)]).unwrap();
        }
        wb.wait(last).unwrap();
        assert!(wb.is_written(last));
        let mut got = vec![0u8; 7 * 1024 + 3072];
        file.read_exact_at(&mut got, 0).unwrap();
        // Byte j was last covered by the highest i with (i % 7) * 1024 <= j < (i % 7) * 1024 + 4096.
        for (j, &v) in got.iter().enumerate() {
            let want = (0..200u8).rev().find(|i| {
                let at = (*i as usize % 7) * 1024;
                (at..at + 4096).contains(&j)
            });
            assert_eq!(Some(v), want, "byte {j}");
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri (12 MiB written and checked)")]
    fn a_full_queue_makes_push_wait_and_drop_writes_the_rest() {
        let (_dir, file) = temp();
        let chunk = 256 << 10;
        let n = 3 * QUEUE_BYTES / chunk; // three queues' worth
        {
            let wb = WriteBehind::new(file.clone()).unwrap();
            for i in 0..n {
                wb.push([((i * chunk) as u64, vec![i as u8 + 1; chunk])]).unwrap();
                assert!(lock(&wb.shared.state).queued_bytes <= QUEUE_BYTES + chunk);
            }
        }
        assert_eq!(file.metadata().unwrap().len(), (n * chunk) as u64);
        let mut b = vec![0u8; chunk];
        for i in 0..n {
            file.read_exact_at(&mut b, (i * chunk) as u64).unwrap();
            assert!(b.iter().all(|&x| x == i as u8 + 1), "chunk {i}");
        }
    }

    #[test]
    fn a_small_queue_reaches_the_file_without_anyone_waiting() {
        // Below WAKE_BYTES nobody wakes the writer; it must still write after LINGER.
        let (_dir, file) = temp();
        let wb = WriteBehind::new(file.clone()).unwrap();
        let n = wb.push([(0, b"lingered".to_vec())]).unwrap();
        let start = std::time::Instant::now();
        while !wb.is_written(n) {
            assert!(start.elapsed() < Duration::from_secs(10), "the write never reached the file");
            std::thread::sleep(LINGER);
        }
        let mut got = [0u8; 8];
        file.read_exact_at(&mut got, 0).unwrap();
        assert_eq!(&got, b"lingered");
    }

    #[test]
    fn a_failed_write_stops_every_later_one_and_is_reported() {
        // A read-only file: every write fails.
        let (dir, _) = temp();
        let ro = Arc::new(File::open(dir.path().join("f")).unwrap());
        let wb = WriteBehind::new(ro.clone()).unwrap();
        let first = wb.push([(0, vec![1u8; 10])]).unwrap();
        let err = wb.wait(first).unwrap_err();
        assert!(err.to_string().contains("an earlier image write failed"), "{err}");
        assert!(wb.push([(0, vec![2u8; 10])]).is_err());
        assert!(wb.sync().is_err());
        assert_eq!(ro.metadata().unwrap().len(), 0);
    }
}
