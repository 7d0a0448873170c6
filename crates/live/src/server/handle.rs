//! [`Server`]: binds the listeners, accepts connections (one thread per listener, one per
//! connection plus its writer) and shuts down gracefully.

use std::collections::HashMap;
use std::io;
use std::net::Shutdown;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use thiserror::Error;

use super::config::{ConfigError, ServerConfig};
use super::connection::{End, serve};
use super::listener::{ListenAddr, Listener};
use super::stream::Stream;
use crate::backend::Backend;
use crate::proto::Errno;

/// Why the server could not start.
#[derive(Debug, Error)]
pub enum ServerError {
    /// The configuration is invalid.
    #[error("invalid server configuration: {0}")]
    Config(#[from] ConfigError),
    /// A listener could not be bound.
    #[error("cannot listen on {addr}: {error}")]
    Bind {
        /// The address or path.
        addr: String,
        /// The underlying error (in the message, so not a `source` too: a report of the
        /// whole chain would repeat it).
        error: io::Error,
    },
    /// A Unix socket path is served by a running process.
    #[error("unix socket {0} is in use by a running server")]
    SocketInUse(PathBuf),
}

/// Counters since start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerStats {
    /// Connections accepted.
    pub accepted: u64,
    /// Connections open now.
    pub active: u64,
    /// Connections that ended cleanly (disconnect, abort, or EOF between messages).
    pub clean: u64,
    /// Connections closed because the client broke the protocol.
    pub protocol_errors: u64,
    /// Connections that failed or whose client vanished mid-message.
    pub io_errors: u64,
    /// Requests passed to the backend (or answered directly when empty).
    pub requests: u64,
    /// Requests answered with an error before reaching the backend.
    pub rejected: u64,
    /// Every request the server answered with an error itself (the rejected ones, and those
    /// read while shutting down, answered `ESHUTDOWN`), counted by error in [`Errno::ALL`]
    /// order. Errors the backend answers are the backend's to count.
    pub errors_by_errno: [u64; Errno::ALL.len()],
}

#[derive(Default)]
pub(crate) struct Counters {
    accepted: AtomicU64,
    clean: AtomicU64,
    protocol_errors: AtomicU64,
    io_errors: AtomicU64,
    pub(crate) requests: AtomicU64,
    rejected: AtomicU64,
    by_errno: [AtomicU64; Errno::ALL.len()],
}

impl Counters {
    /// A request answered `errno` by the server itself; `rejected` if it never reached the
    /// backend because it was invalid (rather than because the server is shutting down).
    pub(crate) fn answered_error(&self, errno: Errno, rejected: bool) {
        if rejected {
            self.rejected.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(i) = Errno::ALL.iter().position(|&e| e == errno) {
            self.by_errno[i].fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// State shared by the server handle, acceptors and connections.
#[derive(Default)]
pub(crate) struct Shared {
    pub(crate) shutting_down: AtomicBool,
    /// A handle to every open connection, to shut its reading side down at shutdown.
    conns: Mutex<HashMap<u64, Stream>>,
    idle: Condvar,
    pub(crate) counters: Counters,
}

/// Removes a connection from the registry when its thread ends, however it ends.
struct Registered<'a> {
    shared: &'a Shared,
    id: u64,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        let mut conns = self.shared.conns.lock().unwrap_or_else(|e| e.into_inner());
        conns.remove(&self.id);
        self.shared.idle.notify_all();
    }
}

/// A running NBD server. Dropping it shuts it down like [`shutdown`](Self::shutdown).
pub struct Server {
    shared: Arc<Shared>,
    listeners: Vec<Arc<Listener>>,
    acceptors: Vec<JoinHandle<()>>,
    addrs: Vec<ListenAddr>,
    stopped: bool,
}

impl Server {
    /// Validates `config`, binds every listener and starts accepting connections to `backend`.
    pub fn start<B: Backend>(backend: Arc<B>, config: ServerConfig) -> Result<Server, ServerError> {
        Server::bind(config)?.start(backend)
    }

    /// Validates `config` and binds every listener, without accepting yet: a caller learns
    /// that an address is taken before it does anything costly or hard to undo (such as
    /// creating the file it is going to serve). [`Bound::start`] then serves.
    pub fn bind(config: ServerConfig) -> Result<Bound, ServerError> {
        config.validate()?;
        let mut bound = Bound { listeners: Vec::new(), addrs: Vec::new(), config };
        for addr in &bound.config.tcp {
            bound.listeners.push(Arc::new(Listener::bind_tcp(*addr)?));
        }
        for path in &bound.config.unix {
            bound.listeners.push(Arc::new(Listener::bind_unix(path)?));
        }
        for l in &bound.listeners {
            let addr = l.addr().map_err(|error| ServerError::Bind { addr: format!("{l:?}"), error })?;
            bound.addrs.push(addr);
        }
        Ok(bound)
    }

    /// The addresses listened on, in configuration order (TCP first), with real port numbers.
    pub fn addrs(&self) -> &[ListenAddr] {
        &self.addrs
    }

    /// Counters since start.
    pub fn stats(&self) -> ServerStats {
        let c = &self.shared.counters;
        let active = self.shared.conns.lock().unwrap_or_else(|e| e.into_inner()).len() as u64;
        ServerStats {
            accepted: c.accepted.load(Ordering::SeqCst),
            active,
            clean: c.clean.load(Ordering::SeqCst),
            protocol_errors: c.protocol_errors.load(Ordering::SeqCst),
            io_errors: c.io_errors.load(Ordering::SeqCst),
            requests: c.requests.load(Ordering::SeqCst),
            rejected: c.rejected.load(Ordering::SeqCst),
            errors_by_errno: std::array::from_fn(|i| c.by_errno[i].load(Ordering::SeqCst)),
        }
    }

    /// Graceful shutdown: stop accepting; refuse further options of connections still in the
    /// handshake; stop reading requests (a request read meanwhile gets `ESHUTDOWN`); let every
    /// request already handed to the backend complete and its reply go out; then close all
    /// connections, call `Backend::disconnect` for each, and remove Unix socket files.
    ///
    /// Returns the final counters when every connection has ended, so it waits for the backend
    /// to answer what it was given (and for clients to accept the replies).
    pub fn shutdown(mut self) -> ServerStats {
        self.stop();
        self.stats()
    }

    /// Starts a graceful shutdown without waiting: from now on no connection is accepted, no
    /// option is granted and no further request is read. [`shutdown`](Self::shutdown) (or drop)
    /// then waits for the connections to finish.
    pub fn begin_shutdown(&self) {
        self.shared.shutting_down.store(true, Ordering::SeqCst);
        for listener in &self.listeners {
            let _ = listener.wake();
        }
        // Acceptors register connections under this lock after checking the flag, so every
        // connection is either seen here or never served.
        let conns = self.shared.conns.lock().unwrap_or_else(|e| e.into_inner());
        for stream in conns.values() {
            let _ = stream.shutdown(Shutdown::Read);
        }
    }

    fn stop(&mut self) {
        if std::mem::replace(&mut self.stopped, true) {
            return;
        }
        self.begin_shutdown();
        for (listener, acceptor) in self.listeners.iter().zip(self.acceptors.drain(..)) {
            // The acceptor sees the flag after its next accept returns; make one return.
            while !acceptor.is_finished() && listener.wake().is_err() {
                thread::sleep(Duration::from_millis(10));
            }
            let _ = acceptor.join();
        }
        let mut conns = self.shared.conns.lock().unwrap_or_else(|e| e.into_inner());
        while !conns.is_empty() {
            conns = self.shared.idle.wait(conns).unwrap_or_else(|e| e.into_inner());
        }
        drop(conns);
        for listener in &self.listeners {
            listener.cleanup();
        }
    }
}

/// Listeners bound by [`Server::bind`], not accepting connections yet. Dropped unstarted, it
/// closes them and removes its Unix socket files.
pub struct Bound {
    listeners: Vec<Arc<Listener>>,
    addrs: Vec<ListenAddr>,
    config: ServerConfig,
}

impl Bound {
    /// The addresses bound, in configuration order (TCP first), with real port numbers.
    pub fn addrs(&self) -> &[ListenAddr] {
        &self.addrs
    }

    /// Starts accepting connections to `backend`.
    pub fn start<B: Backend>(mut self, backend: Arc<B>) -> Result<Server, ServerError> {
        let shared = Arc::new(Shared::default());
        let config = Arc::new(self.config.clone());
        let (listeners, addrs) = (std::mem::take(&mut self.listeners), std::mem::take(&mut self.addrs));
        let mut server = Server { shared, listeners, acceptors: Vec::new(), addrs, stopped: false };
        for (i, listener) in server.listeners.iter().enumerate() {
            let (l, s, b, c) = (listener.clone(), server.shared.clone(), backend.clone(), config.clone());
            let spawned = thread::Builder::new()
                .name(format!("nbd-accept-{i}"))
                .spawn(move || accept_loop(&l, s, b, c));
            match spawned {
                Ok(h) => server.acceptors.push(h),
                Err(error) => return Err(ServerError::Bind { addr: server.addrs[i].to_string(), error }),
            }
        }
        Ok(server)
    }
}

impl Drop for Bound {
    fn drop(&mut self) {
        for listener in &self.listeners {
            listener.cleanup();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop<B: Backend>(
    listener: &Listener,
    shared: Arc<Shared>,
    backend: Arc<B>,
    config: Arc<ServerConfig>,
) {
    let mut next_id = 0u64;
    loop {
        let accepted = listener.accept();
        if shared.shutting_down.load(Ordering::SeqCst) {
            return;
        }
        let stream = match accepted {
            Ok(s) => s,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => {
                // E.g. out of file descriptors: back off instead of spinning.
                thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        let Ok(handle) = stream.try_clone() else { continue };
        next_id += 1;
        let id = next_id;
        {
            let mut conns = shared.conns.lock().unwrap_or_else(|e| e.into_inner());
            if shared.shutting_down.load(Ordering::SeqCst) {
                return;
            }
            conns.insert(id, handle);
        }
        shared.counters.accepted.fetch_add(1, Ordering::SeqCst);
        let (s, b, c) = (shared.clone(), backend.clone(), config.clone());
        let spawned = thread::Builder::new().name(format!("nbd-conn-{id}")).spawn(move || {
            let _registered = Registered { shared: &s, id };
            let counter = match serve(stream, &*b, &c, &s) {
                End::Clean => &s.counters.clean,
                End::Protocol => &s.counters.protocol_errors,
                End::Io => &s.counters.io_errors,
            };
            counter.fetch_add(1, Ordering::SeqCst);
        });
        if spawned.is_err() {
            drop(Registered { shared: &shared, id });
        }
    }
}
