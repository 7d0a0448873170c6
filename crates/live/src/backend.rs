//! The seam between the NBD server and whatever stores the data: the [`Backend`] trait, the
//! [`Request`]s it receives and the [`Replier`] through which it answers each one.

use std::fmt;

use thiserror::Error;

use crate::export::ExportInfo;
use crate::proto::Errno;
use crate::server::Polled;
use crate::transmission::Route;

/// The outcome of one request: data for a successful read, nothing for other successes, or an
/// NBD error value.
pub type ReplyResult = Result<Option<Vec<u8>>, Errno>;

/// What a request asks the backend to do.
#[derive(Clone, PartialEq, Eq)]
pub enum Op {
    /// Read `length` bytes at `offset`; answer with exactly `length` bytes of data.
    Read,
    /// Write the payload (`length` bytes) at `offset`.
    Write(Vec<u8>),
    /// Make every write the backend completed (replied to) before this request was submitted
    /// durable — on every connection if the export advertises `can_multi_conn` — then reply.
    /// `offset` and `length` are 0.
    Flush,
    /// The client no longer needs `length` bytes at `offset`; the backend may discard them
    /// (contents afterwards are unspecified until rewritten).
    Trim,
    /// Make `length` bytes at `offset` read back as zeroes.
    WriteZeroes {
        /// `NBD_CMD_FLAG_NO_HOLE`: the range must stay allocated (no trim / deallocation);
        /// without it the backend may deallocate as long as the range reads back as zeroes.
        no_hole: bool,
        /// `NBD_CMD_FLAG_FAST_ZERO` (only if the export set `can_fast_zero`): if zeroing would not
        /// be faster than writing zeroes, fail at once with [`Errno::NotSup`] and change nothing.
        fast: bool,
    },
}

impl fmt::Debug for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Read => write!(f, "Read"),
            Op::Write(data) => write!(f, "Write({} bytes)", data.len()),
            Op::Flush => write!(f, "Flush"),
            Op::Trim => write!(f, "Trim"),
            Op::WriteZeroes { no_hole, fast } => {
                write!(f, "WriteZeroes {{ no_hole: {no_hole}, fast: {fast} }}")
            }
        }
    }
}

/// One validated request, as the backend receives it.
///
/// The server has already checked it against the export: `offset + length <= size`, both
/// multiples of the minimum block size, `length > 0` (zero-length requests are answered by the
/// server), reads and writes no longer than the advertised maximum, the command and its flags
/// advertised, and no write-type command on a read-only export.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The client's cookie, for tracing only (the [`Replier`] routes the reply).
    pub cookie: u64,
    /// Byte offset into the export.
    pub offset: u64,
    /// Length in bytes.
    pub length: u32,
    /// `NBD_CMD_FLAG_FUA` (only if the export set `can_fua`): reply only once the data written
    /// by this request is durable. May also be set on reads and flushes, where it means nothing.
    pub fua: bool,
    /// The operation.
    pub op: Op,
}

/// A connection could not be attached to an export.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum BackendError {
    /// The export does not exist (any more). Answered with `NBD_REP_ERR_UNKNOWN`.
    #[error("no export named {0:?}")]
    UnknownExport(String),
    /// The export exists but cannot take this connection now (e.g. no free queue pair).
    /// Answered with `NBD_REP_ERR_POLICY` and the message.
    #[error("export unavailable: {0}")]
    Unavailable(String),
}

enum Target {
    Route(Route),
    Callback(Box<dyn FnOnce(ReplyResult) + Send>),
}

/// Completes one request. Pass it to any thread; call exactly one of [`reply`](Self::reply),
/// [`ok`](Self::ok), [`data`](Self::data) or [`error`](Self::error). Dropping it unanswered
/// answers [`Errno::Io`], so a lost request never hangs its connection.
pub struct Replier {
    target: Option<Target>,
}

impl Replier {
    pub(crate) fn to_route(route: Route) -> Replier {
        Replier { target: Some(Target::Route(route)) }
    }

    /// A replier that hands the result to `callback` (for testing backends without a server).
    pub fn callback(callback: impl FnOnce(ReplyResult) + Send + 'static) -> Replier {
        Replier { target: Some(Target::Callback(Box::new(callback))) }
    }

    /// Completes the request. A read must return `Some(data)` with exactly the requested length
    /// (anything else is answered `EIO`); data returned for other commands is ignored.
    pub fn reply(mut self, result: ReplyResult) {
        self.deliver(result, "");
    }

    /// Success without data (write, flush, trim, write-zeroes).
    pub fn ok(self) {
        self.reply(Ok(None));
    }

    /// Success of a read with its data.
    pub fn data(self, data: Vec<u8>) {
        self.reply(Ok(Some(data)));
    }

    /// Failure with an NBD error value.
    pub fn error(self, errno: Errno) {
        self.reply(Err(errno));
    }

    /// Completes with a server-side message for structured error replies.
    pub(crate) fn deliver(&mut self, result: ReplyResult, message: &'static str) {
        match self.target.take() {
            Some(Target::Route(route)) => route.deliver(result, message),
            Some(Target::Callback(f)) => f(result),
            None => {}
        }
    }
}

impl Drop for Replier {
    fn drop(&mut self) {
        self.deliver(Err(Errno::Io), "request dropped by the backend");
    }
}

impl fmt::Debug for Replier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.target {
            Some(Target::Route(_)) => write!(f, "Replier(connection)"),
            Some(Target::Callback(_)) => write!(f, "Replier(callback)"),
            None => write!(f, "Replier(done)"),
        }
    }
}

/// A block store served over NBD.
///
/// **Who calls what.** Connection threads call [`export`](Self::export) and
/// [`list`](Self::list) during the handshake, [`connect`](Self::connect) once when a client
/// enters transmission, [`submit`](Self::submit) for each request from that connection's reader
/// thread (so requests of one connection arrive in wire order, several connections in parallel),
/// and [`disconnect`](Self::disconnect) once at the end, after every request of the connection
/// has been answered (its repliers consumed or dropped), whether the client left cleanly,
/// vanished or the server shut down.
///
/// **The implementer must** answer every submitted request exactly once through its
/// [`Replier`], from any thread and in any order (replies go out as they complete, matched by
/// cookie); honour the flush and FUA rules documented on [`Op::Flush`] and [`Request::fua`];
/// keep `export` consistent with what `connect` accepts.
///
/// **The implementer must not** block in `submit` for long (it stalls that connection's
/// reading; briefly blocking as back-pressure is fine), call back into the server, or hold a
/// replier forever (the connection then never closes and server shutdown waits for it).
///
/// **Completing from another thread.** `submit` may just hand the request and its replier to
/// an event loop (the simulator's executor) and return; the loop answers whenever the request
/// finishes. Each connection can own its own queue (an NVMe queue pair), chosen in `connect`:
///
/// ```
/// use std::sync::{Arc, Mutex, mpsc};
/// use live::{Backend, BackendError, ExportInfo, MemoryBackend, Op, Replier, Request, Server, ServerConfig};
///
/// /// Runs every request on one "device" thread, per-connection queues tagged by id.
/// struct EventLoop {
///     queue: Mutex<mpsc::Sender<(u32, Request, Replier)>>,
///     next_qid: Mutex<u32>,
/// }
///
/// impl Backend for EventLoop {
///     type Conn = u32; // e.g. the NVMe queue pair id
///     fn export(&self, name: &str) -> Option<ExportInfo> {
///         (name.is_empty() || name == "dev").then(|| MemoryBackend::full_featured("dev", 1 << 20))
///     }
///     fn list(&self) -> Vec<String> {
///         vec!["dev".into()]
///     }
///     fn connect(&self, _: &ExportInfo) -> Result<u32, BackendError> {
///         let mut next = self.next_qid.lock().unwrap();
///         *next += 1;
///         Ok(*next)
///     }
///     fn submit(&self, qid: &u32, request: Request, reply: Replier) {
///         let _ = self.queue.lock().unwrap().send((*qid, request, reply));
///     }
///     fn disconnect(&self, _qid: u32) {}
/// }
///
/// let (tx, rx) = mpsc::channel::<(u32, Request, Replier)>();
/// let device = std::thread::spawn(move || {
///     let store = MemoryBackend::new("dev", 1 << 20);
///     for (_qid, request, reply) in rx {
///         // A real device would complete later and out of order; any thread may reply.
///         match request.op {
///             Op::Read => reply.data(store.read_at("dev", request.offset, request.length as usize).unwrap()),
///             _ => reply.ok(),
///         }
///     }
/// });
/// let backend = Arc::new(EventLoop { queue: Mutex::new(tx), next_qid: Mutex::new(0) });
/// let config = ServerConfig { tcp: vec!["127.0.0.1:0".parse().unwrap()], ..ServerConfig::default() };
/// let server = Server::start(backend, config).unwrap();
/// println!("serving on {}", server.addrs()[0]);
/// let stats = server.shutdown(); // the backend is dropped with the server's threads
/// assert_eq!(stats.active, 0);
/// # drop(device);
/// ```
pub trait Backend: Send + Sync + 'static {
    /// Per-connection state returned by `connect` (e.g. the NVMe queue pair it uses).
    type Conn: Send + 'static;

    /// The export called `name` (the empty name asks for the default export, if any); `None` if
    /// there is no such export.
    fn export(&self, name: &str) -> Option<ExportInfo>;

    /// Export names for `NBD_OPT_LIST`.
    fn list(&self) -> Vec<String>;

    /// Attaches a new connection to `export` (as returned by `export`, canonical name in
    /// `export.name`).
    fn connect(&self, export: &ExportInfo) -> Result<Self::Conn, BackendError>;

    /// Starts one request of `conn`; complete it through `reply`.
    fn submit(&self, conn: &Self::Conn, request: Request, reply: Replier);

    /// The connection is finished; no request of it is outstanding.
    fn disconnect(&self, conn: Self::Conn);

    /// Whether this backend drives the transmission phase of its connections in its own event
    /// loop: then every connection is handed to [`adopt`](Self::adopt) after the handshake, and
    /// [`submit`](Self::submit) is not called. The default, `false`, has the server read each
    /// connection on a thread of its own and pass requests to `submit`.
    fn polls(&self) -> bool {
        false
    }

    /// Takes over one connection's transmission (called only if [`polls`](Self::polls)): drive
    /// it with [`Polled::receive`] and [`Polled::send`] until [`Polled::is_finished`], then drop
    /// it; [`disconnect`](Self::disconnect) follows. Called on the connection's thread; hand the
    /// connection to the event loop and return. The default drops it, which ends the connection.
    fn adopt(&self, conn: &Self::Conn, polled: Polled) {
        let _ = (conn, polled);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn dropping_a_replier_answers_eio_once() {
        let (tx, rx) = mpsc::channel();
        drop(Replier::callback(move |r| tx.send(r).unwrap()));
        assert_eq!(rx.recv().unwrap(), Err(Errno::Io));
        assert!(rx.try_recv().is_err());

        let (tx, rx) = mpsc::channel();
        Replier::callback(move |r| tx.send(r).unwrap()).data(vec![1, 2]);
        assert_eq!(rx.recv().unwrap(), Ok(Some(vec![1, 2])));
        assert!(rx.try_recv().is_err());
    }
}
