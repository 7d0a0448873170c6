//! One client connection from greeting to close.
//!
//! ```text
//!   socket --> [connection thread: handshake, then reader] --submit--> Backend
//!      ^             | flushes before each socket read                   |
//!      |             v                                                   | Replier
//!      '-------- Outbox <-------- completions, from any thread ---------'
//!      '-------- [writer thread] (woken only by completions from other threads)
//! ```
//!
//! A backend that [`polls`](crate::Backend::polls) gets the socket after the handshake instead
//! ([`Polled`]); the connection thread then only waits for the end and calls `disconnect`.
//!
//! The reader keeps reading while earlier requests are in flight (up to the in-flight budget);
//! replies go out as they complete. The connection ends on `NBD_CMD_DISC`, on EOF, on malformed
//! traffic or when the socket fails; in every case every outstanding request is answered (or,
//! if the socket is dead, drained) first, then the backend hears `disconnect`.

use std::io::{self, BufReader, Read, Write};
use std::net::Shutdown;
use std::sync::atomic::Ordering;
use std::sync::{Arc, mpsc};
use std::thread;

use super::config::ServerConfig;
use super::handle::Shared;
use super::polled::Polled;
use super::stream::Stream;
use crate::backend::{Backend, Op, Replier};
use crate::negotiate::{HandshakeError, Negotiated, Outcome, negotiate};
use crate::proto::Errno;
use crate::transmission::{Gate, Incoming, Outbox, ReadError, Session, read_request};

/// Read buffer per connection: many small pipelined requests per system call.
const READ_BUFFER: usize = 256 << 10;
/// While requests keep arriving, the reader also flushes queued replies after this many.
const FLUSH_EVERY: u64 = 16;

/// How a connection ended.
#[derive(Debug)]
pub(crate) enum End {
    /// Disconnect, abort or EOF between messages.
    Clean,
    /// The client broke the protocol; the server hung up.
    Protocol,
    /// The socket failed or the client vanished mid-message.
    Io,
}

/// The socket's reading side; once transmission starts, it flushes queued replies before every
/// read from the socket, i.e. before the reader may block.
struct SocketReader {
    stream: Stream,
    outbox: Option<Arc<Outbox>>,
}

impl Read for SocketReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(outbox) = &self.outbox else { return self.stream.read(buf) };
        outbox.idle_begin();
        let read = self.stream.read(buf);
        outbox.idle_end();
        read
    }
}

/// The handshake reads through the connection's buffered reader (so no byte sent early is lost
/// when transmission starts) and writes straight to the socket.
struct Duplex<'a> {
    r: &'a mut BufReader<SocketReader>,
    w: &'a mut Stream,
}

impl Read for Duplex<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.r.read(buf)
    }
}

impl Write for Duplex<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.w.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// Serves one accepted connection to the end.
pub(crate) fn serve<B: Backend>(
    stream: Stream,
    backend: &B,
    cfg: &ServerConfig,
    shared: &Arc<Shared>,
) -> End {
    let Ok(mut write_half) = stream.try_clone() else { return End::Io };
    let mut reader = BufReader::with_capacity(READ_BUFFER, SocketReader { stream, outbox: None });
    let mut duplex = Duplex { r: &mut reader, w: &mut write_half };
    let negotiated = match negotiate(&mut duplex, backend, cfg.max_request_bytes, &shared.shutting_down) {
        Ok(Outcome::Transmission(n)) => n,
        Ok(Outcome::Aborted) => return End::Clean,
        Err(HandshakeError::Io(e)) if e.kind() == io::ErrorKind::UnexpectedEof => return End::Clean,
        Err(HandshakeError::Io(_)) => return End::Io,
        Err(_) => return End::Protocol,
    };
    if backend.polls() {
        return hand_over(&reader, write_half, backend, negotiated, cfg, shared);
    }
    transmit(&mut reader, write_half, backend, negotiated, cfg, shared)
}

/// Hands the transmission to the backend's event loop and waits until it is finished.
fn hand_over<B: Backend>(
    reader: &BufReader<SocketReader>,
    stream: Stream,
    backend: &B,
    negotiated: Negotiated<B::Conn>,
    cfg: &ServerConfig,
    shared: &Arc<Shared>,
) -> End {
    let Negotiated { conn, session, .. } = negotiated;
    let (done, ended) = mpsc::channel();
    let limit = (cfg.max_in_flight_requests, cfg.max_in_flight_bytes);
    // Requests the client sent right behind the handshake are in the reader's buffer already.
    let end = match Polled::new(stream, session, shared.clone(), limit, reader.buffer(), done) {
        Ok(polled) => {
            backend.adopt(&conn, polled);
            ended.recv().unwrap_or(End::Io)
        }
        Err(_) => End::Io,
    };
    backend.disconnect(conn);
    end
}

fn transmit<B: Backend>(
    reader: &mut BufReader<SocketReader>,
    writer: Stream,
    backend: &B,
    negotiated: Negotiated<B::Conn>,
    cfg: &ServerConfig,
    shared: &Shared,
) -> End {
    let Negotiated { conn, session, .. } = negotiated;
    let stopper = writer.try_clone().ok();
    let on_error = Box::new(move |_: &io::Error| {
        // Nobody will see further replies: stop the reader too.
        if let Some(s) = &stopper {
            let _ = s.shutdown(Shutdown::Both);
        }
    });
    let gate = Gate::new(cfg.max_in_flight_requests, cfg.max_in_flight_bytes);
    let outbox = Outbox::new(Box::new(writer), on_error, session.structured, gate);
    reader.get_mut().outbox = Some(outbox.clone());
    let end = thread::scope(|scope| {
        let spawned =
            thread::Builder::new().name("nbd-writer".into()).spawn_scoped(scope, || outbox.run_writer());
        let result = if spawned.is_ok() {
            let _reader = outbox.enter_reader();
            reader_loop(reader, &session, backend, &conn, &outbox, shared)
        } else {
            Err(ReadError::Io(io::ErrorKind::Other.into()))
        };
        outbox.reader_done();
        // Leaving the scope joins the writer: it ends once every request has been answered.
        match result {
            Ok(()) | Err(ReadError::Closed) => End::Clean,
            Err(ReadError::Io(_)) => End::Io,
            Err(ReadError::Malformed(_)) => End::Protocol,
        }
    });
    reader.get_mut().outbox = None;
    backend.disconnect(conn);
    end
}

fn reader_loop<B: Backend>(
    r: &mut BufReader<SocketReader>,
    session: &Session,
    backend: &B,
    conn: &B::Conn,
    outbox: &Arc<Outbox>,
    shared: &Shared,
) -> Result<(), ReadError> {
    for handled in 1u64.. {
        if handled % FLUSH_EVERY == 0 {
            outbox.flush();
        }
        let incoming = read_request(r, session, &mut |charge| outbox.admit(charge))?;
        let (request, charge) = match incoming {
            Incoming::Disconnect => return Ok(()),
            Incoming::Reject { cookie, rejection } => {
                shared.counters.answered_error(rejection.errno, true);
                outbox.route(cookie, None, 0).deliver(Err(rejection.errno), rejection.message);
                continue;
            }
            Incoming::Request { request, charge } => (request, charge),
        };
        shared.counters.requests.fetch_add(1, Ordering::Relaxed);
        let read = (request.op == Op::Read).then_some((request.offset, request.length));
        let route = outbox.route(request.cookie, read, charge);
        if shared.shutting_down.load(Ordering::SeqCst) {
            shared.counters.answered_error(Errno::Shutdown, false);
            route.deliver(Err(Errno::Shutdown), "server shutting down");
            return Ok(());
        }
        if request.length == 0 && request.op != Op::Flush {
            route.deliver(Ok(read.map(|_| Vec::new())), "");
        } else {
            backend.submit(conn, request, Replier::to_route(route));
        }
    }
    Ok(())
}
