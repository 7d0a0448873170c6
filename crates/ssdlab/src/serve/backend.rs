//! The way into the device thread: the NBD backend that hands it connections, the channel
//! and wake-up socket it listens on, and its wait for sockets.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::Mutex;
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::time::Duration;

use anyhow::{Context, Result};
use live::{Backend, BackendError, ExportInfo, Polled, Replier, Request};

/// A channel to the device thread, with a wake-up socket for when it waits in `poll`.
pub(super) fn to_device() -> Result<(ToDevice, Inbox)> {
    let (inbox, messages) = mpsc::channel::<Msg>();
    let (wake, woken) = UnixStream::pair().context("creating the device thread's wake-up socket")?;
    wake.set_nonblocking(true).and_then(|()| woken.set_nonblocking(true)).context("the wake-up socket")?;
    Ok((ToDevice { inbox, wake }, Inbox { inbox: messages, woken, closed: false }))
}

/// Messages to the device thread.
pub(super) enum Msg {
    Connect(Sender<Result<u16, String>>),
    /// A connection in transmission, on queue pair `qid`: the device thread drives it.
    Adopt(u16, Box<Polled>),
    Disconnect(u16),
    Stop,
}

/// The way to the device thread: a channel, and a socket whose byte wakes it from `poll`.
pub(super) struct ToDevice {
    inbox: Sender<Msg>,
    wake: UnixStream,
}

impl ToDevice {
    pub(super) fn try_clone(&self) -> Result<ToDevice> {
        let wake = self.wake.try_clone().context("the wake-up socket")?;
        Ok(ToDevice { inbox: self.inbox.clone(), wake })
    }

    pub(super) fn send(&self, m: Msg) -> bool {
        let sent = self.inbox.send(m).is_ok();
        // Non-blocking: if the socket is full, a wake-up is pending anyway.
        let _ = (&self.wake).write(&[1]);
        sent
    }
}

/// The device thread's end of [`ToDevice`]. Messages are taken on every turn of its loop;
/// the wake-up bytes only make `poll` return, and are drained after it did.
pub(super) struct Inbox {
    inbox: Receiver<Msg>,
    pub(super) woken: UnixStream,
    /// Every sender is gone.
    pub(super) closed: bool,
}

impl Inbox {
    pub(super) fn next(&mut self) -> Option<Msg> {
        match self.inbox.try_recv() {
            Ok(m) => Some(m),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => {
                self.closed = true;
                None
            }
        }
    }

    pub(super) fn drain_wake_ups(&self) {
        let mut buf = [0u8; 256];
        while matches!((&self.woken).read(&mut buf), Ok(n) if n > 0) {}
    }
}

/// The NBD side of the device: forwards everything to the device thread.
pub(super) struct DeviceBackend {
    info: ExportInfo,
    to_device: Mutex<ToDevice>,
}

impl DeviceBackend {
    pub(super) fn new(info: ExportInfo, to_device: ToDevice) -> DeviceBackend {
        DeviceBackend { info, to_device: Mutex::new(to_device) }
    }

    fn send(&self, m: Msg) -> bool {
        self.to_device.lock().unwrap_or_else(|e| e.into_inner()).send(m)
    }
}

impl Backend for DeviceBackend {
    type Conn = u16;

    fn export(&self, name: &str) -> Option<ExportInfo> {
        (name.is_empty() || name == self.info.name).then(|| self.info.clone())
    }

    fn list(&self) -> Vec<String> {
        vec![self.info.name.clone()]
    }

    fn connect(&self, _: &ExportInfo) -> Result<u16, BackendError> {
        let (tx, rx) = mpsc::channel();
        if !self.send(Msg::Connect(tx)) {
            return Err(BackendError::Unavailable("the device is shutting down".into()));
        }
        match rx.recv() {
            Ok(Ok(qid)) => Ok(qid),
            Ok(Err(why)) => Err(BackendError::Unavailable(why)),
            Err(_) => Err(BackendError::Unavailable("the device is shutting down".into())),
        }
    }

    fn submit(&self, _: &u16, _: Request, reply: Replier) {
        // Not called: this backend polls (`adopt` takes every connection). Answered EIO.
        drop(reply);
    }

    fn disconnect(&self, qid: u16) {
        self.send(Msg::Disconnect(qid));
    }

    fn polls(&self) -> bool {
        true
    }

    fn adopt(&self, qid: &u16, polled: Polled) {
        // If the device thread is gone, the connection comes back inside the error and is
        // dropped, which ends it.
        self.send(Msg::Adopt(*qid, Box::new(polled)));
    }
}

/// Waits up to `timeout` (to the microsecond) until the wake-up socket or a connection's socket
/// is ready for what the connection wants; returns whether the wake-up socket is readable.
pub(super) fn wait_ready(woken: &UnixStream, conns: &[(u16, u32, Polled)], timeout: Duration) -> bool {
    let mut fds = Vec::with_capacity(1 + conns.len());
    fds.push(libc::pollfd { fd: woken.as_raw_fd(), events: libc::POLLIN, revents: 0 });
    for (_, _, conn) in conns {
        let read = if conn.wants_read() { libc::POLLIN } else { 0 };
        let write = if conn.wants_write() { libc::POLLOUT } else { 0 };
        // A socket with nothing wanted is left out: a hung-up one would report POLLHUP at once.
        let fd = if read | write == 0 { -1 } else { conn.as_raw_fd() };
        fds.push(libc::pollfd { fd, events: read | write, revents: 0 });
    }
    let ts = libc::timespec {
        tv_sec: timeout.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: timeout.subsec_nanos().into(),
    };
    // SAFETY: `fds` is a live, exclusively borrowed array of `fds.len()` pollfd structs and
    // `ts` a valid timespec, both outliving the call; a null signal mask leaves it unchanged.
    let ready = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null()) };
    ready > 0 && fds[0].revents != 0
}
