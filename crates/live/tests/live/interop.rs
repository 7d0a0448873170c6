//! Real NBD clients against the server: libnbd's `nbdinfo` and `nbdcopy`, QEMU's `qemu-io`,
//! and fio's nbd engine with verification.

use std::collections::HashMap;
use std::process::Command;
use std::sync::Arc;

use live::{Backend, BlockSize, ExportInfo, MemoryBackend};

use crate::backends::{Polling, Threaded};
use crate::client::fio_verify;
use crate::support::{have, pattern, run, serve, serve_in, tcp, unix};

const MIB: u64 = 1 << 20;

/// `key: value` lines of nbdinfo's text output.
fn nbdinfo_fields(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|l| l.trim().split_once(": "))
        .map(|(k, v)| (k.to_string(), v.split_whitespace().next().unwrap_or("").to_string()))
        .collect()
}

#[test]
fn nbdinfo_shows_the_right_size_and_flags() {
    if !have("nbdinfo") {
        return;
    }
    let mut ro = ExportInfo::new("ro", 8 * MIB);
    ro.read_only = true;
    ro.can_flush = true;
    ro.block_size = BlockSize::new(512, 4096, 1 << 20).unwrap();
    let backend = MemoryBackend::with_exports(vec![MemoryBackend::full_featured("disk", 64 * MIB), ro]);
    let server = serve(Arc::new(backend));
    let uri = tcp(&server).uri();

    let out = run(Command::new("nbdinfo").arg(&uri));
    let f = nbdinfo_fields(&String::from_utf8_lossy(&out.stdout));
    let expect = [
        ("export-size", "67108864"),
        ("is_read_only", "false"),
        ("can_flush", "true"),
        ("can_fua", "true"),
        ("can_trim", "true"),
        ("can_zero", "true"),
        ("can_fast_zero", "true"),
        ("can_multi_conn", "true"),
        ("can_df", "true"),
        ("can_cache", "false"),
        ("block_size_minimum", "1"),
        ("block_size_preferred", "4096"),
        ("block_size_maximum", "33554432"),
    ];
    for (k, v) in expect {
        assert_eq!(f.get(k).map(String::as_str), Some(v), "{k} in {f:?}");
    }

    let out = run(Command::new("nbdinfo").arg(format!("{uri}/ro")));
    let f = nbdinfo_fields(&String::from_utf8_lossy(&out.stdout));
    let expect = [
        ("export-size", "8388608"),
        ("is_read_only", "true"),
        ("can_flush", "true"),
        ("can_trim", "false"),
        ("can_zero", "false"),
        ("can_multi_conn", "false"),
        ("block_size_minimum", "512"),
        ("block_size_maximum", "1048576"),
    ];
    for (k, v) in expect {
        assert_eq!(f.get(k).map(String::as_str), Some(v), "{k} in {f:?}");
    }
    let stats = server.shutdown();
    assert_eq!((stats.protocol_errors, stats.io_errors), (0, 0), "{stats:?}");
}

#[test]
fn nbdinfo_lists_exports_over_a_unix_socket() {
    if !have("nbdinfo") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exports = vec![ExportInfo::new("alpha", MIB), ExportInfo::new("beta", 2 * MIB)];
    let server = serve_in(Arc::new(MemoryBackend::with_exports(exports)), dir.path(), |_| {});
    let out = run(Command::new("nbdinfo").arg("--list").arg(unix(&server).uri()));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("export=\"alpha\"") && text.contains("export=\"beta\""), "{text}");
    let f = nbdinfo_fields(&text);
    assert!(text.contains("export-size: 2097152"), "{f:?}");
}

#[test]
fn nbdcopy_round_trip_is_byte_identical() {
    if !have("nbdcopy") {
        return;
    }
    // Completions on another thread, and connections driven by the backend's event loop;
    // nbdcopy opens several connections.
    let size = 24 * MIB as usize;
    let threaded = Arc::new(Threaded::new(MemoryBackend::new("disk", size as u64)));
    nbdcopy_round_trip(threaded.clone(), &threaded.mem, size);
    let polling = Arc::new(Polling::new(MemoryBackend::new("disk", size as u64)));
    nbdcopy_round_trip(polling.clone(), &polling.inner, size);
}

fn nbdcopy_round_trip<B: Backend>(backend: Arc<B>, mem: &MemoryBackend, size: usize) {
    let server = serve(backend);
    let uri = tcp(&server).uri();
    let dir = tempfile::tempdir().unwrap();
    let (src, dst) = (dir.path().join("in.img"), dir.path().join("out.img"));
    let data = pattern(7, size);
    std::fs::write(&src, &data).unwrap();
    run(Command::new("nbdcopy").arg(&src).arg(&uri));
    assert!(mem.read_at("disk", 0, size).unwrap() == data, "the export holds the file");
    run(Command::new("nbdcopy").arg(&uri).arg(&dst));
    let back = std::fs::read(&dst).unwrap();
    assert_eq!(back.len(), size);
    assert!(back == data, "copied out byte-identical");
    let stats = server.shutdown();
    assert!(stats.accepted >= 2, "{stats:?}");
    assert_eq!((stats.protocol_errors, stats.io_errors, stats.active), (0, 0, 0), "{stats:?}");
    assert_eq!(mem.connections(), 0);
}

#[test]
fn qemu_io_pattern_writes_read_back() {
    if !have("qemu-io") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = serve_in(Arc::new(MemoryBackend::new("disk", 16 * MIB)), dir.path(), |_| {});
    for addr in [tcp(&server), unix(&server)] {
        let uri = addr.uri();
        let qemu_io = |cmds: &[&str]| {
            let mut c = Command::new("qemu-io");
            c.args(["-f", "raw", &uri]);
            for cmd in cmds {
                c.args(["-c", cmd]);
            }
            run(&mut c)
        };
        qemu_io(&[
            "write -P 0xab 0 64k",
            "write -P 0x5a 1m 64k",
            "write -z 128k 64k",
            "discard 256k 64k",
            "flush",
        ]);
        // A second process, a second connection: the data is there.
        let out = qemu_io(&[
            "read -P 0xab 0 64k",
            "read -P 0x5a 1m 64k",
            "read -P 0 128k 64k",
            "read -P 0 256k 64k",
        ]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.contains("Pattern verification failed"), "{text}");
        assert_eq!(text.matches("read 65536/65536 bytes").count(), 4, "{text}");
        // A wrong pattern must fail: the check can fail.
        let mut c = Command::new("qemu-io");
        let out = c.args(["-f", "raw", &uri, "-c", "read -P 0xcd 0 4k"]).output().unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).contains("Pattern verification failed"));
    }
}

#[test]
fn fio_nbd_engine_randrw_with_crc32c_verify_passes() {
    if !have("fio") {
        return;
    }
    // Synchronous completions (MemoryBackend), asynchronous ones (worker thread), and
    // connections driven by the backend's event loop.
    let server = serve(Arc::new(MemoryBackend::new("disk", 64 * MIB)));
    fio_verify(&tcp(&server).uri(), "32m");
    let threaded = serve(Arc::new(Threaded::new(MemoryBackend::new("disk", 64 * MIB))));
    fio_verify(&tcp(&threaded).uri(), "32m");
    let polling = serve(Arc::new(Polling::new(MemoryBackend::new("disk", 64 * MIB))));
    fio_verify(&tcp(&polling).uri(), "32m");
    for stats in [server.shutdown(), threaded.shutdown(), polling.shutdown()] {
        assert!(stats.requests > 8192, "{stats:?}");
        assert_eq!((stats.protocol_errors, stats.io_errors, stats.rejected), (0, 0, 0), "{stats:?}");
    }
}
