//! Fuzzes the event-loop request parser ([`live::Polled`]) against the threaded one
//! ([`read_request`]): the same bytes, arriving in pieces whose sizes the input chooses, must
//! give the same replies in the same order (every request the backend gets is answered EIO
//! here, so each reply is a 16-byte simple reply: cookie and error).

#![no_main]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

use libfuzzer_sys::fuzz_target;
use live::proto::{Errno, SimpleReplyHeader};
use live::transmission::{Incoming, Session, read_request};
use live::{BlockSize, MemoryBackend, Op, Polled, Stream};

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let (cfg, wire) = data.split_at(4);
    let wire = &wire[..wire.len().min(48 << 10)]; // well within a socket buffer
    let size = u64::from(u16::from_be_bytes([cfg[0], cfg[1]])) << 9;
    let mut export = MemoryBackend::full_featured("disk", size);
    export.read_only = cfg[2] & 1 != 0;
    export.can_trim = cfg[2] & 2 != 0;
    let Ok(block_size) = BlockSize::new(1 << (cfg[2] >> 4 & 7), 4096, u32::MAX) else { return };
    export.block_size = block_size;
    let session = Session {
        size,
        flags: export.flags(false),
        block_size: block_size.capped(1 << 16),
        structured: false,
    };

    // The threaded reader's view: the replies the server would send, in order.
    let mut expected = Vec::new();
    let mut stream = wire;
    while let Ok(incoming) = read_request(&mut stream, &session, &mut |_| {}) {
        match incoming {
            Incoming::Request { request, .. } if request.length == 0 && request.op != Op::Flush => {
                expected.push((request.cookie, 0))
            }
            Incoming::Request { request, .. } => expected.push((request.cookie, Errno::Io.code())),
            Incoming::Reject { cookie, rejection } => expected.push((cookie, rejection.errno.code())),
            Incoming::Disconnect => break,
        }
    }

    // The event loop's view: the bytes in pieces, receive after each.
    let (server, mut client) = UnixStream::pair().unwrap();
    let mut polled = Polled::standalone(Stream::Unix(server), session, (1 << 20, 1 << 40)).unwrap();
    let mut rest = wire;
    let mut step = usize::from(cfg[3]) + 1;
    while !rest.is_empty() {
        let (piece, tail) = rest.split_at(step.min(rest.len()));
        client.write_all(piece).unwrap();
        rest = tail;
        step = step * 7 % 251 + 1;
        polled.receive(&mut |_, reply| reply.error(Errno::Io));
        polled.send();
    }
    client.shutdown(std::net::Shutdown::Write).unwrap();
    while polled.wants_read() {
        polled.receive(&mut |_, reply| reply.error(Errno::Io));
    }
    polled.send();
    assert!(polled.is_finished(), "every request answered and written");
    // Read the replies while the server end is open: closing it with request bytes unread (after
    // a malformed one) resets the connection.
    client.set_nonblocking(true).unwrap();
    let mut replies = Vec::new();
    let _ = client.read_to_end(&mut replies); // ends with WouldBlock
    drop(polled);
    let got: Vec<(u64, u32)> = replies
        .chunks(16)
        .map(|r| {
            let h = SimpleReplyHeader::decode(r.try_into().expect("whole replies")).unwrap();
            (h.cookie, h.error)
        })
        .collect();
    assert_eq!(got, expected);
});
