//! Starting servers, checking for client tools, running them, and test data.

use std::process::{Command, Output};
use std::sync::Arc;

use live::{Backend, ListenAddr, Server, ServerConfig};

/// A server for `backend` on 127.0.0.1 (free port) and a Unix socket in `dir`.
pub fn serve_in<B: Backend>(
    backend: Arc<B>,
    dir: &std::path::Path,
    tweak: impl FnOnce(&mut ServerConfig),
) -> Server {
    let mut config = ServerConfig {
        tcp: vec!["127.0.0.1:0".parse().unwrap()],
        unix: vec![dir.join("nbd.sock")],
        ..ServerConfig::default()
    };
    tweak(&mut config);
    Server::start(backend, config).expect("server starts")
}

/// A server for `backend` on 127.0.0.1 with a free port, TCP only.
pub fn serve<B: Backend>(backend: Arc<B>) -> Server {
    serve_with(backend, |_| {})
}

/// Like [`serve`], with the configuration adjusted first.
pub fn serve_with<B: Backend>(backend: Arc<B>, tweak: impl FnOnce(&mut ServerConfig)) -> Server {
    let mut config = ServerConfig { tcp: vec!["127.0.0.1:0".parse().unwrap()], ..ServerConfig::default() };
    tweak(&mut config);
    Server::start(backend, config).expect("server starts")
}

/// The server's TCP address.
pub fn tcp(server: &Server) -> ListenAddr {
    server.addrs().iter().find(|a| matches!(a, ListenAddr::Tcp(_))).expect("a TCP listener").clone()
}

/// The server's Unix socket address.
pub fn unix(server: &Server) -> ListenAddr {
    server.addrs().iter().find(|a| matches!(a, ListenAddr::Unix(_))).expect("a Unix listener").clone()
}

/// Whether `tool` can be run; prints the skip notice when it cannot.
pub fn have(tool: &str) -> bool {
    let found = Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        println!("{tool} not installed; skipping");
    }
    found
}

/// Runs a command and returns its output; panics with its stdout and stderr if it fails.
pub fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Deterministic pseudo-random bytes (xorshift64*), different for each seed.
pub fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        out.extend_from_slice(&x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
    }
    out.truncate(len);
    out
}
