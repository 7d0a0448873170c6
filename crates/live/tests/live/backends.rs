//! Backends for tests, all storing data in a `MemoryBackend` but completing requests in other
//! ways: on a worker thread (like the simulator's event loop), in reverse order, or only when
//! the test says so.

use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

use live::{Backend, BackendError, ExportInfo, MemoryBackend, Polled, Replier, Request};

type Job = (usize, Request, Replier);

/// Completes every request on one worker thread, never inside `submit`: exercises the path a
/// backend with its own event loop (the simulator) takes.
pub struct Threaded {
    pub mem: Arc<MemoryBackend>,
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
    worker: Mutex<Option<thread::JoinHandle<()>>>,
}

impl Threaded {
    pub fn new(mem: MemoryBackend) -> Threaded {
        let mem = Arc::new(mem);
        let (tx, rx) = mpsc::channel::<Job>();
        let m = mem.clone();
        let worker = thread::spawn(move || {
            for (conn, req, reply) in rx {
                m.submit(&conn, req, reply);
            }
        });
        Threaded { mem, jobs: Mutex::new(Some(tx)), worker: Mutex::new(Some(worker)) }
    }
}

impl Drop for Threaded {
    fn drop(&mut self) {
        self.jobs.lock().unwrap().take();
        if let Some(w) = self.worker.lock().unwrap().take() {
            w.join().unwrap();
        }
    }
}

impl Backend for Threaded {
    type Conn = usize;
    fn export(&self, name: &str) -> Option<ExportInfo> {
        self.mem.export(name)
    }
    fn list(&self) -> Vec<String> {
        self.mem.list()
    }
    fn connect(&self, export: &ExportInfo) -> Result<usize, BackendError> {
        self.mem.connect(export)
    }
    fn submit(&self, conn: &usize, request: Request, reply: Replier) {
        let jobs = self.jobs.lock().unwrap();
        jobs.as_ref().expect("worker running").send((*conn, request, reply)).expect("worker alive");
    }
    fn disconnect(&self, conn: usize) {
        self.mem.disconnect(conn)
    }
}

/// Holds requests until told to complete them; counts disconnects.
pub struct Held {
    pub mem: MemoryBackend,
    held: Mutex<Vec<Job>>,
    changed: Condvar,
    pub disconnects: Mutex<usize>,
}

impl Held {
    pub fn new(mem: MemoryBackend) -> Held {
        Held { mem, held: Mutex::new(Vec::new()), changed: Condvar::new(), disconnects: Mutex::new(0) }
    }

    /// Waits until `n` requests are held (a deterministic sync point for tests).
    pub fn wait_held(&self, n: usize) {
        let mut held = self.held.lock().unwrap();
        while held.len() < n {
            held = self.changed.wait(held).unwrap();
        }
    }

    /// Requests held now.
    pub fn held_now(&self) -> usize {
        self.held.lock().unwrap().len()
    }

    /// Completes every held request, newest first, from the calling thread.
    pub fn release_reversed(&self) -> usize {
        let jobs: Vec<Job> = std::mem::take(&mut *self.held.lock().unwrap());
        let n = jobs.len();
        for (conn, req, reply) in jobs.into_iter().rev() {
            self.mem.submit(&conn, req, reply);
        }
        n
    }
}

impl Backend for Held {
    type Conn = usize;
    fn export(&self, name: &str) -> Option<ExportInfo> {
        self.mem.export(name)
    }
    fn list(&self) -> Vec<String> {
        self.mem.list()
    }
    fn connect(&self, export: &ExportInfo) -> Result<usize, BackendError> {
        self.mem.connect(export)
    }
    fn submit(&self, conn: &usize, request: Request, reply: Replier) {
        self.held.lock().unwrap().push((*conn, request, reply));
        self.changed.notify_all();
    }
    fn disconnect(&self, conn: usize) {
        *self.disconnects.lock().unwrap() += 1;
        self.mem.disconnect(conn)
    }
}

/// Drives every connection's transmission itself, on one event-loop thread
/// ([`Backend::polls`]), and hands each request to `inner` on that thread: the path
/// `ssdlab serve` takes. `Polling<MemoryBackend>` completes inside the loop, `Polling<Held>`
/// from whichever thread releases the requests.
pub struct Polling<B> {
    pub inner: Arc<B>,
    adopted: Mutex<Option<mpsc::Sender<(usize, Polled)>>>,
    worker: Mutex<Option<thread::JoinHandle<()>>>,
}

impl<B: Backend<Conn = usize>> Polling<B> {
    pub fn new(inner: B) -> Polling<B> {
        let inner = Arc::new(inner);
        let (tx, rx) = mpsc::channel::<(usize, Polled)>();
        let backend = inner.clone();
        let worker = thread::spawn(move || {
            let mut conns: Vec<(usize, Polled)> = Vec::new();
            loop {
                if conns.is_empty() {
                    match rx.recv() {
                        Ok(c) => conns.push(c),
                        Err(_) => return, // the backend is gone and every connection finished
                    }
                }
                conns.extend(rx.try_iter());
                for (conn, polled) in &mut conns {
                    polled.receive(&mut |request, reply| backend.submit(conn, request, reply));
                    polled.send();
                }
                conns.retain(|(_, polled)| !polled.is_finished());
                // A real event loop would poll(2) the sockets instead.
                thread::sleep(Duration::from_micros(100));
            }
        });
        Polling { inner, adopted: Mutex::new(Some(tx)), worker: Mutex::new(Some(worker)) }
    }
}

impl<B> Drop for Polling<B> {
    fn drop(&mut self) {
        self.adopted.lock().unwrap().take();
        if let Some(w) = self.worker.lock().unwrap().take() {
            w.join().unwrap();
        }
    }
}

impl<B: Backend<Conn = usize>> Backend for Polling<B> {
    type Conn = usize;
    fn export(&self, name: &str) -> Option<ExportInfo> {
        self.inner.export(name)
    }
    fn list(&self) -> Vec<String> {
        self.inner.list()
    }
    fn connect(&self, export: &ExportInfo) -> Result<usize, BackendError> {
        self.inner.connect(export)
    }
    fn submit(&self, _: &usize, _: Request, _: Replier) {
        unreachable!("a polling backend adopts its connections: the server submits nothing")
    }
    fn disconnect(&self, conn: usize) {
        self.inner.disconnect(conn)
    }
    fn polls(&self) -> bool {
        true
    }
    fn adopt(&self, conn: &usize, polled: Polled) {
        let adopted = self.adopted.lock().unwrap();
        adopted.as_ref().expect("event loop running").send((*conn, polled)).expect("event loop alive");
    }
}

/// A backend with a [`Held`] inside: `Held` itself, or `Polling<Held>`.
pub trait WithHeld: Backend {
    fn held(&self) -> &Held;
}

impl WithHeld for Held {
    fn held(&self) -> &Held {
        self
    }
}

impl WithHeld for Polling<Held> {
    fn held(&self) -> &Held {
        &self.inner
    }
}
