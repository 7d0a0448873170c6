//! [`MemoryBackend`]: exports held in memory, completing every request synchronously inside
//! `submit`. The reference backend for tests, interop runs and benchmarks.
//!
//! Each export is a sparse array of 64 KiB chunks, each behind its own mutex: unwritten chunks
//! read as zeroes and cost no memory, trims and hole-punching write-zeroes free whole chunks
//! (and zero partial ones), and connections touching different chunks never contend. Memory is
//! not volatile cache: a completed write is visible to every connection at once, so flush has
//! nothing to do and `can_multi_conn` holds.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::backend::{Backend, BackendError, Op, Replier, Request};
use crate::export::ExportInfo;

/// Bytes per chunk (the unit of allocation, locking and hole punching).
pub const CHUNK_SIZE: usize = 64 * 1024;

struct Disk {
    info: ExportInfo,
    chunks: Vec<Mutex<Option<Box<[u8]>>>>,
}

/// One piece of a byte range that falls inside one chunk.
struct Span {
    chunk: usize,
    start: usize,
    len: usize,
    /// Position of the piece within the request.
    pos: usize,
}

impl Disk {
    fn new(info: ExportInfo) -> Disk {
        let count = info.size.div_ceil(CHUNK_SIZE as u64) as usize;
        Disk { chunks: (0..count).map(|_| Mutex::new(None)).collect(), info }
    }

    fn chunk_len(&self, chunk: usize) -> usize {
        (self.info.size - (chunk * CHUNK_SIZE) as u64).min(CHUNK_SIZE as u64) as usize
    }

    /// The chunk pieces of `len` bytes at `offset` (which the caller has checked are in range).
    fn spans(&self, offset: u64, len: usize) -> impl Iterator<Item = Span> {
        let mut pos = 0;
        std::iter::from_fn(move || {
            if pos >= len {
                return None;
            }
            let at = offset + pos as u64;
            let chunk = (at / CHUNK_SIZE as u64) as usize;
            let start = (at % CHUNK_SIZE as u64) as usize;
            let piece = (CHUNK_SIZE - start).min(len - pos);
            let span = Span { chunk, start, len: piece, pos };
            pos += piece;
            Some(span)
        })
    }

    fn lock(&self, chunk: usize) -> std::sync::MutexGuard<'_, Option<Box<[u8]>>> {
        // A panic while holding a chunk lock cannot leave the bytes inconsistent in a way that
        // matters more than the panic itself; keep serving.
        self.chunks[chunk].lock().unwrap_or_else(|e| e.into_inner())
    }

    fn read(&self, offset: u64, len: usize) -> Vec<u8> {
        let mut out = vec![0u8; len];
        for s in self.spans(offset, len) {
            if let Some(data) = self.lock(s.chunk).as_deref() {
                out[s.pos..s.pos + s.len].copy_from_slice(&data[s.start..s.start + s.len]);
            }
        }
        out
    }

    /// Writes `data`, or zeroes when `data` is `None`, allocating every chunk touched.
    fn write(&self, offset: u64, len: usize, data: Option<&[u8]>) {
        for s in self.spans(offset, len) {
            let mut slot = self.lock(s.chunk);
            let chunk = slot.get_or_insert_with(|| vec![0u8; self.chunk_len(s.chunk)].into_boxed_slice());
            let dst = &mut chunk[s.start..s.start + s.len];
            match data {
                Some(src) => dst.copy_from_slice(&src[s.pos..s.pos + s.len]),
                None => dst.fill(0),
            }
        }
    }

    /// Frees whole chunks and zeroes partial ones, so the range reads back as zeroes.
    fn punch(&self, offset: u64, len: usize) {
        for s in self.spans(offset, len) {
            let mut slot = self.lock(s.chunk);
            if s.start == 0 && s.len == self.chunk_len(s.chunk) {
                *slot = None;
            } else if let Some(chunk) = slot.as_deref_mut() {
                chunk[s.start..s.start + s.len].fill(0);
            }
        }
    }

    fn allocated_bytes(&self) -> u64 {
        (0..self.chunks.len()).filter(|&c| self.lock(c).is_some()).map(|c| self.chunk_len(c) as u64).sum()
    }
}

/// In-memory exports; the first one is also the default export (empty name).
pub struct MemoryBackend {
    disks: Vec<Disk>,
    connections: AtomicUsize,
}

impl MemoryBackend {
    /// One export of `size` bytes supporting flush, FUA, trim, write-zeroes, fast zero and
    /// multiple connections, with a 4 KiB preferred block size.
    pub fn new(name: impl Into<String>, size: u64) -> MemoryBackend {
        MemoryBackend::with_exports(vec![MemoryBackend::full_featured(name, size)])
    }

    /// The description [`new`](Self::new) uses, to adjust before [`with_exports`](Self::with_exports).
    pub fn full_featured(name: impl Into<String>, size: u64) -> ExportInfo {
        ExportInfo {
            description: Some("ssdlab in-memory export".into()),
            can_flush: true,
            can_fua: true,
            can_trim: true,
            can_write_zeroes: true,
            can_fast_zero: true,
            can_multi_conn: true,
            ..ExportInfo::new(name, size)
        }
    }

    /// Exports as described (zero-filled); the capabilities and block sizes are advertised as
    /// given, and the server enforces them before requests reach the backend.
    pub fn with_exports(exports: Vec<ExportInfo>) -> MemoryBackend {
        MemoryBackend {
            disks: exports.into_iter().map(Disk::new).collect(),
            connections: AtomicUsize::new(0),
        }
    }

    fn disk(&self, name: &str) -> Option<(usize, &Disk)> {
        let found = self.disks.iter().enumerate().find(|(_, d)| d.info.name == name);
        found.or_else(|| if name.is_empty() { self.disks.first().map(|d| (0, d)) } else { None })
    }

    /// Reads bytes directly (for tests); `None` for an unknown export or an out-of-range request.
    pub fn read_at(&self, export: &str, offset: u64, len: usize) -> Option<Vec<u8>> {
        let (_, disk) = self.disk(export)?;
        let end = offset.checked_add(len as u64)?;
        (end <= disk.info.size).then(|| disk.read(offset, len))
    }

    /// Bytes of allocated (non-hole) chunks of an export.
    pub fn allocated_bytes(&self, export: &str) -> Option<u64> {
        self.disk(export).map(|(_, d)| d.allocated_bytes())
    }

    /// Connections attached right now.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    fn execute(&self, disk: &Disk, req: Request) -> crate::backend::ReplyResult {
        let len = req.length as usize;
        match req.op {
            Op::Read => return Ok(Some(disk.read(req.offset, len))),
            Op::Write(data) => disk.write(req.offset, len, Some(&data)),
            Op::Flush => {}
            Op::Trim => disk.punch(req.offset, len),
            // Zeroing memory is always faster than receiving zeroes, so fast zero never fails.
            Op::WriteZeroes { no_hole: true, .. } => disk.write(req.offset, len, None),
            Op::WriteZeroes { no_hole: false, .. } => disk.punch(req.offset, len),
        }
        Ok(None)
    }
}

impl Backend for MemoryBackend {
    type Conn = usize;

    fn export(&self, name: &str) -> Option<ExportInfo> {
        self.disk(name).map(|(_, d)| d.info.clone())
    }

    fn list(&self) -> Vec<String> {
        self.disks.iter().map(|d| d.info.name.clone()).collect()
    }

    fn connect(&self, export: &ExportInfo) -> Result<usize, BackendError> {
        let (index, _) =
            self.disk(&export.name).ok_or_else(|| BackendError::UnknownExport(export.name.clone()))?;
        self.connections.fetch_add(1, Ordering::SeqCst);
        Ok(index)
    }

    fn submit(&self, conn: &usize, request: Request, reply: Replier) {
        let disk = &self.disks[*conn];
        reply.reply(self.execute(disk, request));
    }

    fn disconnect(&self, _conn: usize) {
        self.connections.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::Errno;
    use std::sync::mpsc;

    fn run(b: &MemoryBackend, offset: u64, length: u32, op: Op) -> Result<Option<Vec<u8>>, Errno> {
        let conn = b.connect(&b.export("").unwrap()).unwrap();
        let (tx, rx) = mpsc::channel();
        b.submit(
            &conn,
            Request { cookie: 1, offset, length, fua: false, op },
            Replier::callback(move |r| tx.send(r).unwrap()),
        );
        b.disconnect(conn);
        rx.recv().unwrap()
    }

    #[test]
    fn writes_read_back_across_chunk_boundaries() {
        let size = 3 * CHUNK_SIZE as u64 + 2500; // the last chunk is partial
        let b = MemoryBackend::new("m", size);
        let data: Vec<u8> = (0..CHUNK_SIZE + 3000).map(|i| (i * 7 % 251) as u8).collect();
        let at = CHUNK_SIZE as u64 * 2 - 1000; // ends 2000 bytes into the last chunk
        run(&b, at, data.len() as u32, Op::Write(data.clone())).unwrap();
        assert_eq!(run(&b, at, data.len() as u32, Op::Read).unwrap().unwrap(), data);
        assert_eq!(b.read_at("m", at - 1, 1).unwrap(), [0]);
        assert_eq!(b.read_at("m", at + data.len() as u64 - 1, 2).unwrap(), [data[data.len() - 1], 0]);
        assert_eq!(b.read_at("m", size - 1, 1).unwrap(), [0]);
        assert_eq!(b.read_at("m", size, 1), None);
        // Chunks 1 and 2 whole, chunk 3 as long as the export allows.
        assert_eq!(b.allocated_bytes("m"), Some(2 * CHUNK_SIZE as u64 + 2500));
        assert_eq!(b.connections(), 0);
    }

    #[test]
    fn trim_and_write_zeroes_punch_holes_unless_no_hole() {
        let b = MemoryBackend::new("m", 4 * CHUNK_SIZE as u64);
        let ones = vec![1u8; 4 * CHUNK_SIZE];
        run(&b, 0, ones.len() as u32, Op::Write(ones)).unwrap();
        assert_eq!(b.allocated_bytes(""), Some(4 * CHUNK_SIZE as u64));

        // Trim chunk 0 entirely and half of chunk 1: one chunk freed, the half zeroed.
        run(&b, 0, (CHUNK_SIZE + CHUNK_SIZE / 2) as u32, Op::Trim).unwrap();
        assert_eq!(b.allocated_bytes(""), Some(3 * CHUNK_SIZE as u64));
        assert!(b.read_at("", 0, CHUNK_SIZE + CHUNK_SIZE / 2).unwrap().iter().all(|&x| x == 0));
        assert_eq!(b.read_at("", (CHUNK_SIZE + CHUNK_SIZE / 2) as u64, 1).unwrap(), [1]);

        // Write zeroes may punch chunk 2 ...
        let wz = |no_hole| Op::WriteZeroes { no_hole, fast: false };
        run(&b, 2 * CHUNK_SIZE as u64, CHUNK_SIZE as u32, wz(false)).unwrap();
        assert_eq!(b.allocated_bytes(""), Some(2 * CHUNK_SIZE as u64));
        // ... but with NO_HOLE it must provision: chunk 0 comes back allocated, all zeroes.
        run(&b, 0, CHUNK_SIZE as u32, wz(true)).unwrap();
        assert_eq!(b.allocated_bytes(""), Some(3 * CHUNK_SIZE as u64));
        let all = b.read_at("", 0, 4 * CHUNK_SIZE).unwrap();
        let ones = |r: std::ops::Range<usize>| all[r].iter().filter(|&&x| x == 1).count();
        assert_eq!(ones(0..CHUNK_SIZE + CHUNK_SIZE / 2), 0);
        assert_eq!(ones(CHUNK_SIZE + CHUNK_SIZE / 2..2 * CHUNK_SIZE), CHUNK_SIZE / 2);
        assert_eq!(ones(2 * CHUNK_SIZE..3 * CHUNK_SIZE), 0);
        assert_eq!(ones(3 * CHUNK_SIZE..4 * CHUNK_SIZE), CHUNK_SIZE);
    }

    #[test]
    fn exports_resolve_by_name_and_default() {
        let b = MemoryBackend::with_exports(vec![ExportInfo::new("a", 512), ExportInfo::new("b", 1024)]);
        assert_eq!(b.list(), ["a", "b"]);
        assert_eq!(b.export("").unwrap().name, "a");
        assert_eq!(b.export("b").unwrap().size, 1024);
        assert!(b.export("c").is_none());
        assert_eq!(b.connect(&ExportInfo::new("c", 1)), Err(BackendError::UnknownExport("c".into())));
    }
}
