//! One byte stream type for both transports, so everything above works on TCP and Unix
//! sockets alike.

use std::io::{self, IoSlice, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;

/// A connected client socket.
#[derive(Debug)]
pub enum Stream {
    /// A TCP connection (with `TCP_NODELAY` set).
    Tcp(TcpStream),
    /// A Unix-domain stream connection.
    Unix(UnixStream),
}

impl Stream {
    /// Another handle to the same socket.
    pub fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
        })
    }

    /// Moves the socket into or out of non-blocking mode (for every handle).
    pub fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_nonblocking(on),
            Stream::Unix(s) => s.set_nonblocking(on),
        }
    }

    /// Shuts down one or both directions of the socket (for every handle).
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.shutdown(how),
            Stream::Unix(s) => s.shutdown(how),
        }
    }
}

impl AsRawFd for Stream {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

/// The most slices one `sendmsg` takes (`IOV_MAX` on Linux).
const IOV_MAX: usize = 1024;

/// Writes go through `sendmsg` with `MSG_NOSIGNAL`: a client that has gone makes the write
/// fail with `EPIPE`, and never raises SIGPIPE. Rust programs ignore SIGPIPE from the start, but
/// a host that restores the default would otherwise be killed, every other client with it.
/// (The standard streams' plain writes already pass the flag; their vectored writes go through
/// `writev`, which cannot take it, and the replies are written vectored.)
impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_vectored(&[IoSlice::new(buf)])
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        // A short count is a short write, which every caller handles.
        let bufs = &bufs[..bufs.len().min(IOV_MAX)];
        // SAFETY: an all-zero msghdr is valid (no address, no control data, no flags).
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        // IoSlice is ABI-compatible with iovec on Unix (its documented guarantee), and
        // `sendmsg` only reads through msg_iov.
        msg.msg_iov = bufs.as_ptr() as *mut libc::iovec;
        msg.msg_iovlen = bufs.len() as _;
        // SAFETY: the fd is this stream's open socket; `msg` points at `bufs.len()` live iovecs
        // borrowed for the duration of the call, and at nothing else.
        let n = unsafe { libc::sendmsg(self.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) };
        if n < 0 { Err(io::Error::last_os_error()) } else { Ok(n as usize) }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vectored_write_sends_the_slices_in_order_up_to_iov_max() {
        let (a, b) = UnixStream::pair().unwrap();
        let mut a = Stream::Unix(a);
        let bytes: Vec<u8> = (0..2000u32).map(|i| i as u8).collect();
        let slices: Vec<IoSlice<'_>> = bytes.chunks(1).map(IoSlice::new).collect();
        assert_eq!(a.write_vectored(&slices).unwrap(), IOV_MAX);
        a.write_all(b"end").unwrap();
        drop(a);
        let mut got = Vec::new();
        Stream::Unix(b).read_to_end(&mut got).unwrap();
        assert_eq!(&got[..IOV_MAX], &bytes[..IOV_MAX]);
        assert_eq!(&got[IOV_MAX..], b"end");
    }

    #[test]
    fn a_write_to_a_closed_peer_fails_with_broken_pipe() {
        let (a, b) = UnixStream::pair().unwrap();
        drop(b);
        let err = Stream::Unix(a).write(b"x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
    }
}
