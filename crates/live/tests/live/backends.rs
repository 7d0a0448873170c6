//! Backends for tests, all storing data in a `MemoryBackend` but completing requests in other
//! ways: on a worker thread (like the simulator's event loop), in reverse order, or only when
//! the test says so.

use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

use live::{Backend, BackendError, ExportInfo, MemoryBackend, Replier, Request};

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
