//! A reply to a client that has gone must not raise SIGPIPE. Rust programs ignore SIGPIPE from
//! the start, but a program that embeds the server and restores the default disposition (or a
//! host that is not Rust) would be killed, every client with it. This is a test binary of its
//! own because it changes the disposition for the whole process.

use std::io::Write;
use std::sync::Arc;

use live::proto::{CmdFlags, Command};
use live::{ListenAddr, MemoryBackend, Server};

#[allow(dead_code)]
#[path = "live/client.rs"]
mod client;
#[allow(dead_code)]
#[path = "live/support.rs"]
mod support;

use client::RawClient;
use support::{pattern, serve_in, tcp, unix};

const MIB: u64 = 1 << 20;

#[test]
fn replies_to_vanished_clients_raise_no_sigpipe() {
    // SAFETY: setting a signal's disposition to the default touches no memory of ours; this
    // binary's only test runs on its own.
    let old = unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    assert_ne!(old, libc::SIG_ERR);
    let dir = tempfile::tempdir().unwrap();
    let mem = Arc::new(MemoryBackend::new("disk", 64 * MIB));
    let server = serve_in(mem.clone(), dir.path(), |_| {});
    for addr in [tcp(&server), unix(&server)] {
        vanish_before_the_replies(&server, &addr);
    }
    let stats = server.shutdown();
    assert_eq!(stats.active, 0, "{stats:?}");
    assert_eq!(mem.connections(), 0);
}

/// Reads of 32 MiB in flight, then gone: the server's replies meet a closed socket. The
/// process is still here afterwards, and serves a new client.
fn vanish_before_the_replies(server: &Server, addr: &ListenAddr) {
    for round in 0..20 {
        let mut gone = RawClient::open(addr, "disk", false);
        for i in 0..4 {
            gone.send(Command::Read, CmdFlags::EMPTY, i * 8 * MIB, 32 << 20, &[]);
        }
        gone.stream.flush().unwrap();
        drop(gone);
        let mut good = RawClient::open(addr, "disk", false);
        let data = pattern(round, 4096);
        assert_eq!(good.write(round * 4096, &data).error, 0, "{:?}", server.addrs());
        assert_eq!(good.read(round * 4096, 4096).data, data);
        good.disconnect();
    }
}
