//! Pipelining, out-of-order completion, many connections at once, and graceful shutdown.

use std::sync::{Arc, mpsc};
use std::thread;

use live::proto::{CmdFlags, Command, Errno};
use live::{Backend, ConfigError, MemoryBackend, Server, ServerConfig, ServerError};

use crate::backends::{Held, Polling, Threaded, WithHeld};
use crate::client::{RawClient, closed_by_server};
use crate::support::{pattern, serve, serve_in, serve_with, tcp, unix};

const MIB: u64 = 1 << 20;

#[test]
fn pipelined_requests_are_answered_out_of_order_matched_by_cookie() {
    out_of_order(|held| held);
    out_of_order(Polling::new);
}

fn out_of_order<B: WithHeld>(wrap: impl Fn(Held) -> B) {
    for structured in [false, true] {
        let mem = MemoryBackend::new("disk", MIB);
        for i in 0..8u64 {
            let data = pattern(i, 4096);
            let req = live::Request {
                cookie: 0,
                offset: i * 4096,
                length: 4096,
                fua: false,
                op: live::Op::Write(data),
            };
            live::Backend::submit(&mem, &0, req, live::Replier::callback(|r| assert_eq!(r, Ok(None))));
        }
        let backend = Arc::new(wrap(Held::new(mem)));
        let server = serve(backend.clone());
        let mut c = RawClient::open(&tcp(&server), "disk", structured);
        // Eight reads sent back to back; the server must take them all before any completes.
        let cookies: Vec<u64> =
            (0..8).map(|i| c.send(Command::Read, CmdFlags::EMPTY, i * 4096, 4096, &[])).collect();
        backend.held().wait_held(8);
        assert_eq!(backend.held().release_reversed(), 8);
        let replies: Vec<_> = (0..8).map(|_| c.recv().unwrap()).collect();
        let order: Vec<u64> = replies.iter().map(|r| r.cookie).collect();
        assert_eq!(order, cookies.iter().rev().copied().collect::<Vec<_>>(), "replies in completion order");
        for r in &replies {
            let i = cookies.iter().position(|&c| c == r.cookie).unwrap() as u64;
            assert_eq!((r.error, r.data == pattern(i, 4096)), (0, true), "cookie {}", r.cookie);
        }
        c.disconnect();
        server.shutdown();
        assert_eq!(*backend.held().disconnects.lock().unwrap(), 1);
    }
}

#[test]
fn many_connections_at_once_over_tcp_and_unix() {
    let threaded = Arc::new(Threaded::new(MemoryBackend::new("disk", 64 * MIB)));
    many_connections(threaded.clone(), &threaded.mem);
    // One event loop drives all eight connections.
    let polling = Arc::new(Polling::new(MemoryBackend::new("disk", 64 * MIB)));
    many_connections(polling.clone(), &polling.inner);
}

fn many_connections<B: Backend>(backend: Arc<B>, mem: &MemoryBackend) {
    let dir = tempfile::tempdir().unwrap();
    let server = serve_in(backend, dir.path(), |_| {});
    let addrs = [tcp(&server), unix(&server)];
    thread::scope(|s| {
        for t in 0..8u64 {
            let addr = addrs[t as usize % 2].clone();
            s.spawn(move || {
                let mut c = RawClient::open(&addr, "", t % 3 == 0);
                let base = t * 8 * MIB;
                // Pipelined writes of distinct blocks, then reads of all of them.
                for round in 0..4u64 {
                    let n = 32;
                    for i in 0..n {
                        let block = round * n + i;
                        c.send(
                            Command::Write,
                            CmdFlags::FUA,
                            base + block * 16384,
                            16384,
                            &pattern(t * 1000 + block, 16384),
                        );
                    }
                    for _ in 0..n {
                        assert_eq!(c.recv().unwrap().error, 0);
                    }
                }
                assert_eq!(c.call(Command::Flush, CmdFlags::EMPTY, 0, 0, &[]).error, 0);
                for block in 0..128u64 {
                    c.send(Command::Read, CmdFlags::EMPTY, base + block * 16384, 16384, &[]);
                }
                let mut seen = 0;
                for _ in 0..128 {
                    let r = c.recv().unwrap();
                    let block = r.cookie - 130; // 128 writes and a flush took cookies 1..=129
                    assert_eq!((r.error, r.data == pattern(t * 1000 + block, 16384)), (0, true));
                    seen += 1;
                }
                assert_eq!(seen, 128);
                c.disconnect();
            });
        }
    });
    let stats = server.shutdown();
    assert_eq!((stats.accepted, stats.clean, stats.requests), (8, 8, 8 * 257), "{stats:?}");
    assert_eq!(mem.connections(), 0);
}

#[test]
fn graceful_shutdown_finishes_requests_in_flight() {
    graceful_shutdown(|held| held);
    graceful_shutdown(Polling::new);
}

fn graceful_shutdown<B: WithHeld>(wrap: impl Fn(Held) -> B) {
    let backend = Arc::new(wrap(Held::new(MemoryBackend::new("disk", MIB))));
    let server = serve(backend.clone());
    let mut c = RawClient::open(&tcp(&server), "disk", false);
    for i in 0..3u64 {
        c.send(Command::Write, CmdFlags::EMPTY, i * 4096, 4096, &pattern(i, 4096));
    }
    backend.held().wait_held(3);
    server.begin_shutdown();
    let (done_tx, done_rx) = mpsc::channel();
    let stopper = thread::spawn(move || done_tx.send(server.shutdown()).unwrap());
    // A shutdown that did not wait would likely be done by now (no timing is asserted: a
    // correct server passes whatever the interleaving).
    thread::sleep(std::time::Duration::from_millis(50));
    assert!(done_rx.try_recv().is_err(), "shutdown must wait for the three held writes");
    backend.held().release_reversed();
    for _ in 0..3 {
        assert_eq!(c.recv().unwrap().error, 0, "every request in flight is answered");
    }
    assert!(closed_by_server(&mut c.stream), "then the connection is closed");
    let stats = done_rx.recv().unwrap();
    stopper.join().unwrap();
    assert_eq!((stats.requests, stats.active), (3, 0), "{stats:?}");
    assert_eq!(*backend.held().disconnects.lock().unwrap(), 1);
    for i in 0..3u64 {
        assert_eq!(backend.held().mem.read_at("disk", i * 4096, 4096).unwrap(), pattern(i, 4096));
    }
}

#[test]
fn shutdown_refuses_new_options_and_requests() {
    shutdown_refuses(|held| held);
    shutdown_refuses(Polling::new);
}

/// Requests that reach the server after shutdown began get ESHUTDOWN (or the connection is
/// already closed); they never reach the backend.
fn shutdown_refuses<B: WithHeld>(wrap: impl Fn(Held) -> B) {
    let backend = Arc::new(wrap(Held::new(MemoryBackend::new("disk", MIB))));
    let server = serve(backend.clone());
    let mut c = RawClient::open(&tcp(&server), "disk", false);
    c.send(Command::Write, CmdFlags::EMPTY, 0, 512, &[1; 512]);
    backend.held().wait_held(1);
    server.begin_shutdown();
    let stopper = thread::spawn(move || server.shutdown());
    let late = c.send(Command::Write, CmdFlags::EMPTY, 512, 512, &[2; 512]);
    backend.held().release_reversed();
    let mut answered = Vec::new();
    while let Ok(r) = c.recv() {
        answered.push((r.cookie, r.error));
    }
    assert!(answered.contains(&(1, 0)), "{answered:?}");
    assert!(
        answered.iter().all(|&(cookie, e)| cookie != late || e == Errno::Shutdown.code()),
        "{answered:?}"
    );
    stopper.join().unwrap();
    assert_eq!(backend.held().mem.read_at("disk", 512, 512).unwrap(), [0; 512], "the late write never ran");
}

#[test]
fn the_in_flight_budget_bounds_what_reaches_the_backend() {
    in_flight_budget(|held| held);
    in_flight_budget(Polling::new);
}

fn in_flight_budget<B: WithHeld>(wrap: impl Fn(Held) -> B) {
    let backend = Arc::new(wrap(Held::new(MemoryBackend::new("disk", MIB))));
    let server = serve_with(backend.clone(), |c| c.max_in_flight_requests = 4);
    let mut c = RawClient::open(&tcp(&server), "disk", false);
    for i in 0..16u64 {
        c.send(Command::Read, CmdFlags::EMPTY, i * 4096, 4096, &[]);
    }
    let mut answered = 0;
    while answered < 16 {
        backend.held().wait_held(4);
        // No timing is asserted: a server that ignored the budget would likely have handed
        // out more by now, and a correct one passes whatever the interleaving.
        thread::sleep(std::time::Duration::from_millis(10));
        let n = backend.held().release_reversed();
        assert_eq!(n, 4, "requests at the backend at once, with a budget of 4");
        for _ in 0..n {
            assert_eq!(c.recv().unwrap().error, 0);
        }
        answered += n;
    }
    assert_eq!(backend.held().held_now(), 0);
    c.disconnect();
    let stats = server.shutdown();
    assert_eq!((stats.requests, stats.clean), (16, 1), "{stats:?}");
}

#[test]
fn non_loopback_addresses_are_refused_unless_allowed() {
    let config = ServerConfig { tcp: vec!["0.0.0.0:0".parse().unwrap()], ..ServerConfig::default() };
    let refused = Server::start(Arc::new(MemoryBackend::new("disk", MIB)), config.clone());
    assert!(matches!(refused, Err(ServerError::Config(ConfigError::NonLoopback(_)))));
    let allowed = ServerConfig { allow_non_loopback: true, ..config };
    let server = Server::start(Arc::new(MemoryBackend::new("disk", MIB)), allowed).unwrap();
    let port = match &server.addrs()[0] {
        live::ListenAddr::Tcp(a) => a.port(),
        other => panic!("{other:?}"),
    };
    let mut c = RawClient::open(&live::ListenAddr::Tcp(([127, 0, 0, 1], port).into()), "", false);
    assert_eq!(c.read(0, 512).error, 0);
}
