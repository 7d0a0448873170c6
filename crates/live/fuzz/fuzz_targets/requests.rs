//! Fuzzes the transmission-phase request reader and validator: the first bytes choose what was
//! negotiated (export size, capabilities, block sizes, structured replies), the rest is the
//! request stream. Every request that gets through must satisfy the contract the backend is
//! promised, and must then execute on a MemoryBackend without panicking.

#![no_main]

use std::sync::mpsc;

use libfuzzer_sys::fuzz_target;
use live::transmission::{Incoming, Session, read_request};
use live::{Backend, BlockSize, MemoryBackend, Op, Replier};

fuzz_target!(|data: &[u8]| {
    if data.len() < 8 {
        return;
    }
    let (cfg, mut stream) = data.split_at(8);
    let size = u64::from(u32::from_be_bytes([0, cfg[0], cfg[1], cfg[2]])); // up to 16 MiB
    let caps = cfg[3];
    let min = 1u32 << (cfg[4] % 13); // 1 ..= 4096
    let preferred = min.max(512) << (cfg[5] % 4);
    let max_request = 1u32 << (16 + cfg[6] % 5); // 64 KiB ..= 1 MiB
    let Ok(block_size) = BlockSize::new(min, preferred, u32::MAX) else { return };
    let mut export = MemoryBackend::full_featured("disk", size);
    export.read_only = caps & 1 != 0;
    export.can_flush = caps & 2 != 0;
    export.can_fua = caps & 4 != 0;
    export.can_trim = caps & 8 != 0;
    export.can_write_zeroes = caps & 16 != 0;
    export.can_fast_zero = caps & 32 != 0;
    export.block_size = block_size;
    let structured = cfg[7] & 1 != 0;
    let session =
        Session { size, flags: export.flags(structured), block_size: block_size.capped(max_request), structured };
    let backend = MemoryBackend::with_exports(vec![export.clone()]);
    let conn = backend.connect(&export).unwrap();

    let mut admitted = 0u64;
    for _ in 0..10_000 {
        let Ok(incoming) = read_request(&mut stream, &session, &mut |_| admitted += 1) else { break };
        let Incoming::Request { request, charge } = incoming else { continue };
        let end = request.offset.checked_add(u64::from(request.length)).expect("no overflow");
        assert!(end <= size, "in range");
        let m = u64::from(session.block_size.min());
        assert!(request.offset % m == 0 && u64::from(request.length) % m == 0, "aligned");
        match &request.op {
            Op::Read => assert!(request.length <= session.block_size.max() && charge == u64::from(request.length)),
            Op::Write(d) => {
                assert!(!export.read_only && request.length <= session.block_size.max());
                assert_eq!(d.len(), request.length as usize);
            }
            Op::Flush => assert!(export.can_flush && request.offset == 0 && request.length == 0),
            Op::Trim => assert!(!export.read_only && export.can_trim),
            Op::WriteZeroes { fast, .. } => {
                assert!(!export.read_only && export.can_write_zeroes);
                assert!(!fast || export.can_fast_zero);
            }
        }
        assert!(!request.fua || export.can_fua);
        if request.length == 0 || request.length > 1 << 16 {
            continue; // the server answers empty requests itself; keep executions cheap
        }
        let expect = if request.op == Op::Read { Some(request.length as usize) } else { None };
        let (tx, rx) = mpsc::channel();
        backend.submit(&conn, request, Replier::callback(move |r| tx.send(r).unwrap()));
        let reply = rx.recv().unwrap().expect("memory never fails");
        assert_eq!(reply.map(|d| d.len()), expect);
    }
    backend.disconnect(conn);
    let _ = admitted;
});
