//! A connection's transmission phase driven by the backend's own event loop: [`Polled`].
//!
//! ```text
//!   connection thread: handshake -> Backend::adopt(conn, Polled) -> waits for the end
//!                                                |
//!   backend's event loop (one thread, any number of connections):
//!        poll(fds, wants_read / wants_write)
//!        receive(submit)  -- non-blocking reads, requests in wire order --> submit(request, replier)
//!        ... completes requests: Replier -> the connection's queue ...
//!        send()           -- non-blocking writes of every queued reply
//!        drop it once is_finished()  -> the connection thread calls Backend::disconnect
//! ```
//!
//! Nothing here blocks or spawns: the thread that owns the simulation reads requests, runs them
//! and writes the replies itself, so a request costs no thread hand-off at all (the threaded
//! path costs a reader and a writer wake-up per batch, which on a small machine preempts the
//! device thread). The rules are the threaded path's: the same validation and error replies,
//! the same in-flight budget, replies whole and in completion order, and a connection ends
//! only after every request it handed out was answered.

use std::collections::VecDeque;
use std::io::{self, IoSlice, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, MutexGuard};

use super::connection::End;
use super::handle::Shared;
use super::stream::Stream;
use crate::backend::{Op, Replier, Request};
use crate::proto::consts::REQUEST_HEADER_LEN;
use crate::proto::{Command, Errno};
use crate::transmission::{
    Completion, Deliver, Header, Rejection, Route, Session, classify, frame, request_of,
};

/// Bytes asked of the socket per read (many pipelined requests per system call).
const READ_CHUNK: usize = 256 << 10;
/// Socket reads per [`Polled::receive`], so that one busy client cannot starve the others.
const READS_PER_RECEIVE: usize = 4;
/// Slices per `writev`.
const SLICES_PER_WRITE: usize = 512;
/// Read payloads up to this size are copied next to their header; larger ones are sent from
/// their own buffer.
const COPY_PAYLOAD: usize = 16 << 10;
/// A written buffer up to this capacity is kept for the next replies.
const SPARE_MAX: usize = 1 << 20;

/// Completions delivered for one polled connection, from any thread.
#[derive(Default)]
struct Replies(Mutex<Vec<Completion>>);

impl Replies {
    fn take(&self) -> Vec<Completion> {
        std::mem::take(&mut *lock(&self.0))
    }
}

impl Deliver for Replies {
    fn deliver(&self, c: Completion) {
        lock(&self.0).push(c);
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One connection in transmission, driven by a backend's event loop (see the module docs and
/// [`Backend::adopt`](crate::Backend::adopt)).
///
/// **The event loop must:** call [`receive`](Self::receive) when the socket is readable (or on
/// every turn) and [`send`](Self::send) after completing requests and when the socket is
/// writable; answer every request `receive` hands out through its [`Replier`]; and drop the
/// connection once [`is_finished`](Self::is_finished). Replies completed on another thread go
/// out with the loop's next `send`. Dropping it earlier ends the connection as an I/O failure.
pub struct Polled {
    stream: Stream,
    session: Session,
    shared: Arc<Shared>,
    /// (requests, bytes) the client may have in flight.
    limit: (usize, u64),
    /// Admitted and not yet written back (or dropped after a failed write).
    in_flight: (usize, u64),
    /// Bytes received: `input[start..end]` is not parsed yet; beyond `end` is spare room.
    input: Vec<u8>,
    start: usize,
    end: usize,
    /// Payload bytes of a rejected write still to discard, and the rejection, answered once
    /// they are (as on the threaded path: a client that vanishes mid-payload gets no reply).
    skip: u64,
    rejected: Option<(u64, Rejection)>,
    /// Stopped reading because the next request does not fit the in-flight budget.
    stalled: bool,
    /// The last [`receive`](Self::receive) stopped because the socket had nothing more (so
    /// there is nothing to do until it is readable).
    drained: bool,
    /// The last read returned less than it had room for: the socket is most likely empty.
    short_read: bool,
    replies: Arc<Replies>,
    /// Requests handed out whose completion has not been taken from `replies` yet.
    outstanding: usize,
    /// Framed replies not yet written; `written` bytes of the front one are out already.
    out: VecDeque<Vec<u8>>,
    written: usize,
    /// Further replies may be appended to the last buffer of `out` (it holds no large payload).
    tail_open: bool,
    /// A written buffer kept for the next replies.
    spare: Vec<u8>,
    /// The budget held by the replies in `out`, returned once all of it is written.
    held: (usize, u64),
    /// `Some` once no further request will be read: why the connection ends.
    ended: Option<End>,
    /// A write failed: nothing more is sent; completions are only drained.
    failed: bool,
    done: Option<Sender<End>>,
}

impl Polled {
    /// Takes over `stream` (made non-blocking) with the bytes the handshake read past its end.
    pub(crate) fn new(
        stream: Stream,
        session: Session,
        shared: Arc<Shared>,
        limit: (usize, u64),
        early: &[u8],
        done: Sender<End>,
    ) -> io::Result<Polled> {
        stream.set_nonblocking(true)?;
        let mut input = vec![0; READ_CHUNK.max(early.len())];
        input[..early.len()].copy_from_slice(early);
        Ok(Polled {
            stream,
            session,
            shared,
            limit,
            in_flight: (0, 0),
            input,
            start: 0,
            end: early.len(),
            skip: 0,
            rejected: None,
            stalled: false,
            drained: false,
            short_read: false,
            replies: Arc::default(),
            outstanding: 0,
            out: VecDeque::new(),
            written: 0,
            tail_open: false,
            spare: Vec::new(),
            held: (0, 0),
            ended: None,
            failed: false,
            done: Some(done),
        })
    }

    /// A polled connection over `stream` without a [`Server`](crate::Server) around it, for
    /// driving a socket directly (tests, fuzzing): transmission with `session` as negotiated,
    /// `limit` = (requests, bytes) in flight.
    pub fn standalone(stream: Stream, session: Session, limit: (usize, u64)) -> io::Result<Polled> {
        let (done, _) = std::sync::mpsc::channel();
        Polled::new(stream, session, Arc::default(), limit, &[], done)
    }

    /// Whether the loop should wait for the socket to become readable: requests may follow
    /// and the budget has room for them.
    pub fn wants_read(&self) -> bool {
        self.ended.is_none() && !self.stalled
    }

    /// Whether [`receive`](Self::receive) has more to do right now, without waiting for the
    /// socket: requests may be buffered already (it stopped after a few reads, or the budget
    /// has room again). An event loop must not sleep while this holds.
    pub fn has_more(&self) -> bool {
        self.wants_read() && !self.drained
    }

    /// Whether replies wait for the socket to become writable.
    pub fn wants_write(&self) -> bool {
        !self.out.is_empty() && !self.failed
    }

    /// Every request was answered and every reply written (or the socket failed): drop it.
    pub fn is_finished(&self) -> bool {
        self.ended.is_some() && self.outstanding == 0 && !self.wants_write()
    }

    /// Reads what the socket has without blocking and passes every complete request, in wire
    /// order, to `submit` with the [`Replier`] that answers it, while the in-flight budget has
    /// room. Invalid requests are answered here, as on the threaded path. Call it when the
    /// socket is readable; it returns when the socket has nothing more (or after a few reads).
    pub fn receive(&mut self, submit: &mut dyn FnMut(Request, Replier)) {
        let mut reads = 0;
        while self.ended.is_none() {
            match self.next(submit) {
                Next::Handled => {}
                Next::OverBudget => {
                    self.stalled = true;
                    return;
                }
                Next::Need(n) => {
                    // After a short read the socket is most likely empty: the next read would
                    // only say so (a system call per turn of a busy loop). The connection
                    // still `has_more`, so the loop comes back and reads again before it
                    // sleeps.
                    let likely_empty = reads > 0 && self.short_read;
                    if reads == READS_PER_RECEIVE || likely_empty || !self.fill(n) {
                        return;
                    }
                    reads += 1;
                }
            }
        }
    }

    /// Sends the replies completed so far, as far as the socket takes them without blocking.
    pub fn send(&mut self) {
        let batch = self.replies.take();
        self.outstanding -= batch.len();
        let mut heads = Vec::new();
        for c in batch {
            if self.failed {
                self.release(1, c.charge);
                continue;
            }
            self.held.0 += 1;
            self.held.1 += c.charge;
            let payload = frame(c, self.session.structured, &mut heads);
            self.push_out(&heads, payload);
            heads.clear();
        }
        self.write_out();
    }

    /// Appends one framed reply to `out`: to the open tail buffer, except that a large read
    /// payload is sent from its own buffer instead of being copied.
    fn push_out(&mut self, head: &[u8], payload: Option<Vec<u8>>) {
        if !self.tail_open || self.out.is_empty() {
            let mut tail = std::mem::take(&mut self.spare);
            tail.clear();
            self.out.push_back(tail);
            self.tail_open = true;
        }
        let tail = self.out.back_mut().expect("a tail buffer");
        tail.extend_from_slice(head);
        match payload {
            Some(p) if p.len() > COPY_PAYLOAD => {
                self.out.push_back(p);
                self.tail_open = false;
            }
            Some(p) => tail.extend_from_slice(&p),
            None => {}
        }
    }

    fn write_out(&mut self) {
        while !self.failed && !self.out.is_empty() {
            let slices: Vec<IoSlice<'_>> = self
                .out
                .iter()
                .enumerate()
                .map(|(i, b)| IoSlice::new(if i == 0 { &b[self.written..] } else { b }))
                .filter(|s| !s.is_empty())
                .take(SLICES_PER_WRITE)
                .collect();
            match self.stream.write_vectored(&slices) {
                Ok(0) => self.fail(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.advance(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) => self.fail(e),
            }
        }
        self.out.clear();
        self.written = 0;
        let (requests, bytes) = std::mem::take(&mut self.held);
        self.release(requests, bytes);
    }

    fn advance(&mut self, mut n: usize) {
        while let Some(front) = self.out.front() {
            let left = front.len() - self.written;
            if n < left {
                self.written += n;
                return;
            }
            n -= left;
            if let Some(done) = self.out.pop_front()
                && done.capacity() > self.spare.capacity()
                && done.capacity() <= SPARE_MAX
            {
                self.spare = done; // reused for the next replies
            }
            self.written = 0;
        }
    }

    /// A write failed: nobody will see further replies, so stop reading too.
    fn fail(&mut self, _: io::Error) {
        self.failed = true;
        self.ended.get_or_insert(End::Io);
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }

    fn release(&mut self, requests: usize, bytes: u64) {
        self.in_flight.0 -= requests;
        self.in_flight.1 -= bytes;
        if requests > 0 {
            // Requests stalled on the budget were read already (`drained` is false).
            self.stalled = false;
        }
    }

    fn fits(&self, bytes: u64) -> bool {
        let (r, b) = self.in_flight;
        r == 0 || (r < self.limit.0 && b + bytes <= self.limit.1)
    }

    fn route(&mut self, cookie: u64, read: Option<(u64, u32)>, charge: u64) -> Route {
        self.in_flight.0 += 1;
        self.in_flight.1 += charge;
        self.outstanding += 1;
        Route::new(self.replies.clone(), cookie, read, charge)
    }

    /// Handles the next message in `input`, or says what stops it.
    fn next(&mut self, submit: &mut dyn FnMut(Request, Replier)) -> Next {
        let avail = self.end - self.start;
        if self.skip > 0 {
            let n = (avail as u64).min(self.skip);
            self.start += n as usize;
            self.skip -= n;
            if self.skip > 0 {
                return Next::Need(1);
            }
        }
        if let Some((cookie, rejection)) = self.rejected.take() {
            self.shared.counters.answered_error(rejection.errno, true);
            self.route(cookie, None, 0).deliver(Err(rejection.errno), rejection.message);
            return Next::Handled;
        }
        let avail = self.end - self.start;
        if avail < REQUEST_HEADER_LEN {
            return Next::Need(REQUEST_HEADER_LEN - avail);
        }
        let head: &[u8; REQUEST_HEADER_LEN] =
            self.input[self.start..self.start + REQUEST_HEADER_LEN].try_into().expect("header length");
        let header = match classify(head, &self.session) {
            Ok(h) => h,
            Err(_) => {
                self.ended = Some(End::Protocol);
                return Next::Handled;
            }
        };
        match header {
            Header::Disconnect => {
                self.start += REQUEST_HEADER_LEN;
                self.ended = Some(End::Clean);
            }
            Header::Reject { cookie, rejection, payload } => {
                if !self.fits(0) {
                    return Next::OverBudget;
                }
                self.start += REQUEST_HEADER_LEN;
                self.skip = payload.into();
                self.rejected = Some((cookie, rejection));
            }
            Header::Accept { header, charge, payload } => {
                let whole = REQUEST_HEADER_LEN + payload as usize;
                if avail < whole {
                    return Next::Need(whole - avail);
                }
                if !self.fits(charge) {
                    return Next::OverBudget;
                }
                let body = self.start + REQUEST_HEADER_LEN..self.start + whole;
                let data = (header.command == Command::Write).then(|| self.input[body].to_vec());
                self.start += whole;
                let request = request_of(&header, data);
                self.shared.counters.requests.fetch_add(1, Ordering::Relaxed);
                let read = (request.op == Op::Read).then_some((request.offset, request.length));
                let route = self.route(request.cookie, read, charge);
                if self.shared.shutting_down.load(Ordering::SeqCst) {
                    self.shared.counters.answered_error(Errno::Shutdown, false);
                    route.deliver(Err(Errno::Shutdown), "server shutting down");
                    self.ended = Some(End::Clean);
                } else if request.length == 0 && request.op != Op::Flush {
                    route.deliver(Ok(read.map(|_| Vec::new())), "");
                } else {
                    submit(request, Replier::to_route(route));
                }
            }
        }
        Next::Handled
    }

    /// Reads from the socket into `input`, making room for at least `want` more bytes first.
    /// Returns whether anything arrived.
    fn fill(&mut self, want: usize) -> bool {
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
            if self.input.len() > 4 * READ_CHUNK {
                // Grown for a large write: give the memory back.
                self.input.truncate(READ_CHUNK);
                self.input.shrink_to_fit();
            }
        }
        let room = want.max(READ_CHUNK / 2);
        if self.input.len() - self.end < room && self.start > 0 {
            // Move the unparsed rest (part of one message) to the front.
            self.input.copy_within(self.start..self.end, 0);
            (self.start, self.end) = (0, self.end - self.start);
        }
        if self.input.len() - self.end < want {
            self.input.resize(self.end + want.max(READ_CHUNK), 0);
        }
        loop {
            let space = self.input.len() - self.end;
            match self.stream.read(&mut self.input[self.end..]) {
                Ok(0) => {
                    let between = self.start == self.end && self.skip == 0;
                    self.ended = Some(if between { End::Clean } else { End::Io });
                    return false;
                }
                Ok(n) => {
                    self.end += n;
                    self.drained = false;
                    self.short_read = n < space;
                    return true;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.drained = true;
                    return false;
                }
                Err(_) => {
                    self.ended = Some(End::Io);
                    return false;
                }
            }
        }
    }
}

/// What stopped [`Polled::next`].
enum Next {
    Handled,
    /// At least this many more bytes are needed.
    Need(usize),
    OverBudget,
}

impl AsRawFd for Polled {
    fn as_raw_fd(&self) -> RawFd {
        self.stream.as_raw_fd()
    }
}

impl Drop for Polled {
    fn drop(&mut self) {
        let finished = self.is_finished();
        let end = match self.ended.take() {
            Some(e) if finished => e,
            _ => End::Io,
        };
        if let Some(done) = self.done.take() {
            let _ = done.send(end);
        }
    }
}

#[cfg(test)]
mod tests;
