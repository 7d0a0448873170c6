//! Unit tests of a polled connection over a real socket pair: the budget, partial sends, large
//! writes and a vanished client.

use super::*;
use crate::proto::{CmdFlags, RequestHeader, SimpleReplyHeader};
use std::os::unix::net::UnixStream;
use std::sync::mpsc;

/// A polled connection over one end of a socket pair, and the client's end.
fn pair(limit: (usize, u64)) -> (Polled, UnixStream, mpsc::Receiver<End>) {
    let (server, client) = UnixStream::pair().unwrap();
    let (done, ended) = mpsc::channel();
    let polled = Polled::new(
        Stream::Unix(server),
        Session::for_tests(64 << 20, 32 << 20),
        Arc::default(),
        limit,
        &[],
        done,
    )
    .unwrap();
    (polled, client, ended)
}

/// The client has closed its side: the connection sees EOF between requests, is finished, and
/// reports a clean end once dropped.
fn ends_cleanly(mut polled: Polled, ended: &mpsc::Receiver<End>) {
    polled.receive(&mut |_, _| panic!("no more requests"));
    assert!(polled.is_finished());
    drop(polled);
    assert!(matches!(ended.recv().unwrap(), End::Clean));
}

fn read_request(cookie: u64, offset: u64, length: u32) -> [u8; REQUEST_HEADER_LEN] {
    RequestHeader { flags: CmdFlags::EMPTY, command: Command::Read, cookie, offset, length }.encode()
}

/// Replies on the client's end: (cookie, error, data length), given each cookie's read length.
fn replies(client: &mut UnixStream, n: usize, len: impl Fn(u64) -> usize) -> Vec<(u64, u32, usize)> {
    (0..n)
        .map(|_| {
            let mut head = [0u8; 16];
            client.read_exact(&mut head).unwrap();
            let h = SimpleReplyHeader::decode(&head).unwrap();
            let mut data = vec![0u8; if h.error == 0 { len(h.cookie) } else { 0 }];
            client.read_exact(&mut data).unwrap();
            (h.cookie, h.error, data.len())
        })
        .collect()
}

#[test]
fn the_budget_stalls_reading_and_buffered_requests_resume_without_new_bytes() {
    let (mut polled, mut client, ended) = pair((2, 1 << 20));
    for cookie in 1..=4 {
        client.write_all(&read_request(cookie, cookie * 4096, 4096)).unwrap();
    }
    let mut got = Vec::new();
    polled.receive(&mut |r, reply| got.push((r, reply)));
    assert_eq!(got.len(), 2, "two fit the budget");
    assert!(!polled.wants_read() && !polled.has_more(), "stalled on the budget");
    for (r, reply) in got.drain(..) {
        reply.data(vec![r.cookie as u8; 4096]);
    }
    polled.send();
    assert_eq!(replies(&mut client, 2, |_| 4096), [(1, 0, 4096), (2, 0, 4096)]);
    // The other two were read off the socket already: nothing new will arrive for them.
    assert!(polled.has_more(), "an event loop must not sleep now");
    polled.receive(&mut |r, reply| got.push((r, reply)));
    assert_eq!(got.iter().map(|(r, _)| r.cookie).collect::<Vec<_>>(), [3, 4]);
    assert!(!polled.has_more());
    drop(got); // dropped repliers answer EIO
    polled.send();
    assert_eq!(replies(&mut client, 2, |_| 4096), [(3, 5, 0), (4, 5, 0)]);
    client.shutdown(std::net::Shutdown::Write).unwrap();
    ends_cleanly(polled, &ended);
}

#[test]
fn a_reply_larger_than_the_socket_takes_goes_out_in_pieces() {
    let (mut polled, mut client, ended) = pair((64, 64 << 20));
    let big = 8 << 20; // far more than a socket buffer holds
    client.write_all(&read_request(1, 0, big)).unwrap();
    client.write_all(&read_request(2, 0, 4096)).unwrap();
    let mut got = Vec::new();
    polled.receive(&mut |r, reply| got.push((r, reply)));
    for (r, reply) in got.drain(..) {
        reply.data(vec![r.cookie as u8; r.length as usize]);
    }
    polled.send();
    assert!(polled.wants_write(), "the socket took only part of it");
    assert!(!polled.is_finished());
    // The client reads while the loop keeps sending what fits.
    let reader = std::thread::spawn(move || {
        let got = replies(&mut client, 2, |cookie| if cookie == 1 { big as usize } else { 4096 });
        (got, client)
    });
    while polled.wants_write() {
        polled.send();
        std::thread::yield_now();
    }
    let (got, client) = reader.join().unwrap();
    assert_eq!(got, [(1, 0, big as usize), (2, 0, 4096)], "whole replies, in completion order");
    drop(client);
    ends_cleanly(polled, &ended);
}

#[test]
fn a_large_write_arrives_whole_and_the_buffer_shrinks_back_afterwards() {
    let (mut polled, mut client, _ended) = pair((64, 64 << 20));
    let big: Vec<u8> = (0..4u32 << 20).map(|i| (i % 251) as u8).collect();
    let head = RequestHeader {
        flags: CmdFlags::EMPTY,
        command: Command::Write,
        cookie: 7,
        offset: 0,
        length: big.len() as u32,
    };
    let writer = {
        let (mut client, big) = (client.try_clone().unwrap(), big.clone());
        std::thread::spawn(move || {
            client.write_all(&head.encode()).unwrap();
            client.write_all(&big).unwrap();
            client.write_all(&read_request(8, 0, 4096)).unwrap();
        })
    };
    let mut got = Vec::new();
    while got.len() < 2 {
        polled.receive(&mut |r, reply| got.push((r, reply)));
        std::thread::yield_now();
    }
    writer.join().unwrap();
    assert_eq!(got[0].0.op, Op::Write(big));
    assert_eq!((got[1].0.cookie, &got[1].0.op), (8, &Op::Read));
    for (_, reply) in got.drain(..) {
        reply.error(Errno::Io);
    }
    polled.send();
    assert_eq!(replies(&mut client, 2, |_| 0), [(7, 5, 0), (8, 5, 0)]);
    client.write_all(&read_request(9, 0, 4096)).unwrap();
    polled.receive(&mut |r, reply| got.push((r, reply)));
    assert_eq!(got.len(), 1);
    // It held the whole 4 MiB write at once; once empty it is back to its usual size.
    assert_eq!(polled.input.len(), READ_CHUNK, "given back once empty");
}

#[test]
fn a_vanished_client_fails_the_writes_and_the_rest_is_drained() {
    let (mut polled, mut client, ended) = pair((64, 64 << 20));
    client.write_all(&read_request(1, 0, 4096)).unwrap();
    client.write_all(&read_request(2, 0, 4096)).unwrap();
    let mut got = Vec::new();
    polled.receive(&mut |r, reply| got.push((r, reply)));
    drop(client);
    let (_, first) = got.remove(0);
    first.data(vec![0; 4096]);
    polled.send();
    assert!(!polled.wants_write() && !polled.wants_read(), "a failed write ends the connection");
    assert!(!polled.is_finished(), "one request is still out");
    drop(got);
    polled.send();
    assert!(polled.is_finished());
    drop(polled);
    assert!(matches!(ended.recv().unwrap(), End::Io));
}
