//! Bad clients: invalid, oversized and out-of-range requests get NBD error replies and the
//! connection keeps serving; malformed traffic or a vanishing client ends only its own
//! connection.

use std::io::Write;
use std::sync::Arc;

use live::proto::TransmissionFlags;
use live::proto::consts::*;
use live::proto::{CmdFlags, Command, Errno, OptionHeader};
use live::{Backend, BlockSize, MemoryBackend};

use crate::backends::Polling;
use crate::client::{RawClient, closed_by_server, connect};
use crate::support::{pattern, serve, serve_with, tcp};

const MIB: u64 = 1 << 20;

fn aligned_backend(read_only: bool) -> MemoryBackend {
    let mut disk = MemoryBackend::full_featured("disk", MIB);
    disk.block_size = BlockSize::new(512, 4096, u32::MAX).unwrap();
    disk.read_only = read_only;
    MemoryBackend::with_exports(vec![disk])
}

#[test]
fn bad_requests_get_error_replies_and_the_connection_keeps_serving() {
    bad_requests(|| Arc::new(aligned_backend(false)));
    bad_requests(|| Arc::new(Polling::new(aligned_backend(false))));
}

fn bad_requests<B: Backend>(backend: impl Fn() -> Arc<B>) {
    for structured in [false, true] {
        let server = serve_with(backend(), |c| c.max_request_bytes = 1 << 16);
        let mut c = RawClient::open(&tcp(&server), "disk", structured);
        let none = CmdFlags::EMPTY;
        let big = vec![0x77; (1 << 16) + 512];
        let cases: Vec<(&str, Command, CmdFlags, u64, u32, &[u8], Errno)> = vec![
            ("read past the end", Command::Read, none, MIB, 512, &[], Errno::Inval),
            ("read overflowing u64", Command::Read, none, u64::MAX - 511, 1024, &[], Errno::Inval),
            ("write past the end", Command::Write, none, MIB - 512, 1024, &[1; 1024], Errno::NoSpc),
            ("write-zeroes past the end", Command::WriteZeroes, none, MIB, 512, &[], Errno::NoSpc),
            ("trim past the end", Command::Trim, none, MIB, 512, &[], Errno::Inval),
            ("read over the maximum", Command::Read, none, 0, (1 << 16) + 512, &[], Errno::Inval),
            ("write over the maximum", Command::Write, none, 0, big.len() as u32, &big, Errno::Inval),
            ("misaligned read", Command::Read, none, 100, 512, &[], Errno::Inval),
            ("misaligned write", Command::Write, none, 0, 100, &[2; 100], Errno::Inval),
            ("unknown command", Command::Other(42), none, 0, 512, &[], Errno::Inval),
            ("cache (not advertised)", Command::Cache, none, 0, 512, &[], Errno::Inval),
            ("block status (no context)", Command::BlockStatus, none, 0, 512, &[], Errno::Inval),
            ("unknown flag", Command::Read, CmdFlags(0x80), 0, 512, &[], Errno::Inval),
            ("NO_HOLE on a read", Command::Read, CmdFlags::NO_HOLE, 0, 512, &[], Errno::Inval),
            ("flush with a length", Command::Flush, none, 0, 512, &[], Errno::Inval),
        ];
        for (what, cmd, flags, offset, len, payload, errno) in &cases {
            let r = c.call(*cmd, *flags, *offset, *len, payload);
            assert_eq!(r.error, errno.code(), "{what} (structured: {structured})");
            assert!(r.data.is_empty(), "{what}: no data with an error");
            assert_eq!(r.message.is_empty(), !structured, "{what}: messages only in error chunks");
        }
        // DF is valid exactly when structured replies were negotiated.
        let r = c.call(Command::Read, CmdFlags::DF, 0, 512, &[]);
        assert_eq!(r.error, if structured { 0 } else { Errno::Inval.code() });
        // A zero-length read is answered without data.
        assert_eq!(c.read(4096, 0).error, 0);
        // After all that, the same connection still reads and writes.
        let data = pattern(1, 8192);
        assert_eq!(c.write(4096, &data).error, 0);
        let r = c.read(4096, 8192);
        assert_eq!((r.error, r.data == data), (0, true));
        c.disconnect();
        let stats = server.shutdown();
        assert_eq!(stats.rejected, cases.len() as u64 + u64::from(!structured), "{stats:?}");
        // Issue 17, item 4: each error is counted under the error the client got.
        assert_eq!(stats.errors_by_errno.iter().sum::<u64>(), stats.rejected, "{stats:?}");
        let inval = Errno::ALL.iter().position(|&e| e == Errno::Inval).unwrap();
        assert!(stats.errors_by_errno[inval] > 0, "{stats:?}");
        assert_eq!((stats.clean, stats.protocol_errors, stats.io_errors), (1, 0, 0), "{stats:?}");
    }
}

#[test]
fn a_read_only_export_refuses_writes_with_eperm() {
    let server = serve(Arc::new(aligned_backend(true)));
    let mut c = RawClient::open(&tcp(&server), "disk", true);
    assert_eq!(c.size, MIB);
    assert!(c.flags.contains(TransmissionFlags::READ_ONLY));
    assert!(!c.flags.contains(TransmissionFlags::SEND_TRIM));
    for cmd in [Command::Write, Command::Trim, Command::WriteZeroes] {
        let payload = if cmd == Command::Write { vec![1; 512] } else { vec![] };
        assert_eq!(c.call(cmd, CmdFlags::EMPTY, 0, 512, &payload).error, Errno::Perm.code(), "{cmd:?}");
    }
    assert_eq!(c.read(0, 512).error, 0);
    assert_eq!(c.call(Command::Flush, CmdFlags::EMPTY, 0, 0, &[]).error, 0);
}

#[test]
fn malformed_traffic_closes_only_that_connection() {
    let backend = Arc::new(MemoryBackend::new("disk", 4 * MIB));
    malformed_traffic(backend.clone(), &backend);
    let polling = Arc::new(Polling::new(MemoryBackend::new("disk", 4 * MIB)));
    malformed_traffic(polling.clone(), &polling.inner);
}

fn malformed_traffic<B: Backend>(backend: Arc<B>, mem: &MemoryBackend) {
    let server = serve(backend);
    let addr = tcp(&server);
    let mut good = RawClient::open(&addr, "disk", false);
    assert_eq!(good.write(0, &pattern(2, 4096)).error, 0);

    // A request with a bad magic: the stream cannot be trusted, so that connection closes.
    let mut bad = RawClient::open(&addr, "disk", false);
    bad.stream.write_all(&[0xde; 28]).unwrap();
    assert!(closed_by_server(&mut bad.stream));
    // Garbage instead of client flags, a bad option magic, an absurd option length.
    let mut s = connect(&addr);
    s.write_all(&[0xff; 64]).unwrap();
    assert!(closed_by_server(&mut s));
    let mut s = connect(&addr);
    s.write_all(&FLAG_C_FIXED_NEWSTYLE.to_be_bytes()).unwrap();
    s.write_all(b"IHAVEOPX\0\0\0\x03\0\0\0\0").unwrap();
    assert!(closed_by_server(&mut s));
    let mut s = connect(&addr);
    s.write_all(&FLAG_C_FIXED_NEWSTYLE.to_be_bytes()).unwrap();
    s.write_all(&OptionHeader { option: OPT_GO, length: u32::MAX }.encode()).unwrap();
    assert!(closed_by_server(&mut s));

    // The good connection never noticed.
    let r = good.read(0, 4096);
    assert_eq!((r.error, r.data == pattern(2, 4096)), (0, true));
    good.disconnect();
    let stats = server.shutdown();
    assert_eq!((stats.protocol_errors, stats.clean, stats.active), (4, 1, 0), "{stats:?}");
    assert_eq!(mem.connections(), 0);
}

#[test]
fn a_client_vanishing_mid_request_harms_nobody_else() {
    let backend = Arc::new(MemoryBackend::new("disk", 4 * MIB));
    vanishing_clients(backend.clone(), &backend);
    let polling = Arc::new(Polling::new(MemoryBackend::new("disk", 4 * MIB)));
    vanishing_clients(polling.clone(), &polling.inner);
}

fn vanishing_clients<B: Backend>(backend: Arc<B>, mem: &MemoryBackend) {
    let server = serve(backend);
    let addr = tcp(&server);
    let mut good = RawClient::open(&addr, "disk", true);

    // Half a write payload, then gone: nothing of it may land on the export.
    let mut gone = RawClient::open(&addr, "disk", false);
    let header = live::proto::RequestHeader {
        flags: CmdFlags::EMPTY,
        command: Command::Write,
        cookie: 1,
        offset: MIB,
        length: MIB as u32,
    };
    gone.stream.write_all(&header.encode()).unwrap();
    gone.stream.write_all(&[0xee; 1000]).unwrap();
    drop(gone);
    // Half a request header, then gone.
    let mut gone = RawClient::open(&addr, "disk", false);
    gone.stream.write_all(&header.encode()[..11]).unwrap();
    drop(gone);
    // Many reads in flight, then gone without reading the replies.
    let mut gone = RawClient::open(&addr, "disk", false);
    for i in 0..64 {
        gone.send(Command::Read, CmdFlags::EMPTY, i * 65536, 65536, &[]);
    }
    drop(gone);

    for i in 0..50u64 {
        let data = pattern(i, 4096);
        assert_eq!(good.write(i * 4096, &data).error, 0);
        assert_eq!(good.read(i * 4096, 4096).data, data);
    }
    good.disconnect();
    let stats = server.shutdown();
    assert!(mem.read_at("disk", MIB, MIB as usize).unwrap().iter().all(|&b| b == 0));
    assert_eq!(stats.io_errors + stats.clean, 4, "{stats:?}");
    assert!(stats.io_errors >= 2, "two vanished mid-message: {stats:?}");
    assert_eq!((stats.protocol_errors, stats.active), (0, 0), "{stats:?}");
    assert_eq!(mem.connections(), 0, "every connection was disconnected from the backend");
}
