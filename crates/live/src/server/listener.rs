//! Listening sockets: TCP (loopback unless allowed otherwise, checked by the configuration) and
//! Unix, with stale-socket replacement and a way to wake a blocked `accept` at shutdown.

use std::fmt;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use super::handle::ServerError;
use super::stream::Stream;

/// An address the server listens on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListenAddr {
    /// A TCP address (with the port actually bound).
    Tcp(SocketAddr),
    /// A Unix socket path.
    Unix(PathBuf),
}

impl ListenAddr {
    /// The NBD URI for the default export, as libnbd tools take it:
    /// `nbd://127.0.0.1:10809` or `nbd+unix:///?socket=/path`.
    pub fn uri(&self) -> String {
        match self {
            ListenAddr::Tcp(a) => format!("nbd://{a}"),
            ListenAddr::Unix(p) => format!("nbd+unix:///?socket={}", p.display()),
        }
    }
}

impl fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.uri())
    }
}

/// A bound listening socket.
#[derive(Debug)]
pub(crate) enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener, PathBuf),
}

impl Listener {
    pub(crate) fn bind_tcp(addr: SocketAddr) -> Result<Listener, ServerError> {
        let l =
            TcpListener::bind(addr).map_err(|error| ServerError::Bind { addr: addr.to_string(), error })?;
        Ok(Listener::Tcp(l))
    }

    /// Binds a Unix socket, replacing a socket file nobody listens on any more.
    pub(crate) fn bind_unix(path: &Path) -> Result<Listener, ServerError> {
        let bind_err = |error| ServerError::Bind { addr: path.display().to_string(), error };
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            if !meta.file_type().is_socket() {
                return Err(bind_err(io::ErrorKind::AlreadyExists.into()));
            }
            match UnixStream::connect(path) {
                Ok(_) => return Err(ServerError::SocketInUse(path.to_path_buf())),
                Err(_) => std::fs::remove_file(path).map_err(bind_err)?,
            }
        }
        let l = UnixListener::bind(path).map_err(bind_err)?;
        Ok(Listener::Unix(l, path.to_path_buf()))
    }

    pub(crate) fn accept(&self) -> io::Result<Stream> {
        match self {
            Listener::Tcp(l) => {
                let (s, _) = l.accept()?;
                s.set_nodelay(true)?;
                Ok(Stream::Tcp(s))
            }
            Listener::Unix(l, _) => Ok(Stream::Unix(l.accept()?.0)),
        }
    }

    pub(crate) fn addr(&self) -> io::Result<ListenAddr> {
        Ok(match self {
            Listener::Tcp(l) => ListenAddr::Tcp(l.local_addr()?),
            Listener::Unix(_, p) => ListenAddr::Unix(p.clone()),
        })
    }

    /// Unblocks a thread waiting in `accept` by connecting to the socket.
    pub(crate) fn wake(&self) -> io::Result<()> {
        match self {
            Listener::Tcp(l) => {
                let mut a = l.local_addr()?;
                if a.ip().is_unspecified() {
                    a.set_ip(if a.is_ipv4() {
                        Ipv4Addr::LOCALHOST.into()
                    } else {
                        Ipv6Addr::LOCALHOST.into()
                    });
                }
                TcpStream::connect(a).map(drop)
            }
            Listener::Unix(_, p) => UnixStream::connect(p).map(drop),
        }
    }

    /// Removes the socket file of a Unix listener.
    pub(crate) fn cleanup(&self) {
        if let Listener::Unix(_, p) = self {
            let _ = std::fs::remove_file(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_name_the_transport() {
        assert_eq!(ListenAddr::Tcp("127.0.0.1:10809".parse().unwrap()).uri(), "nbd://127.0.0.1:10809");
        assert_eq!(ListenAddr::Tcp("[::1]:5".parse().unwrap()).uri(), "nbd://[::1]:5");
        assert_eq!(ListenAddr::Unix("/tmp/s".into()).uri(), "nbd+unix:///?socket=/tmp/s");
    }

    #[test]
    fn stale_unix_sockets_are_replaced_live_ones_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nbd.sock");
        let first = Listener::bind_unix(&path).unwrap();
        assert!(matches!(Listener::bind_unix(&path), Err(ServerError::SocketInUse(_))));
        drop(first); // the file stays behind, as after a crash
        assert!(path.exists());
        let second = Listener::bind_unix(&path).unwrap();
        second.cleanup();
        assert!(!path.exists());
        std::fs::write(&path, b"not a socket").unwrap();
        assert!(matches!(Listener::bind_unix(&path), Err(ServerError::Bind { .. })));
    }
}
