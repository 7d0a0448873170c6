//! Engine-level tests: transactions, namespace operations, fsck, journal replay.

use std::sync::Arc;

use nicfs_layout::{FormatConfig, Ino, ROOT_INO, mode};
use nicfs_pm::{CrashPm, FastPm, MappedFile, Pm, PmAddr, SharedPm};
use nicfs_store::{
    Engine, FsError, LineCache, Space, dir_entries, dir_lookup, fsck, mkfs, read_inode, replay_journal,
};

fn fresh(cfg: &FormatConfig) -> (SharedPm, Engine) {
    let pm: SharedPm = Arc::new(FastPm::new(MappedFile::anonymous(cfg.size_bytes).unwrap()));
    mkfs(pm.as_ref(), cfg, 1).unwrap();
    let space = Space::open(pm.clone()).unwrap();
    let eng = Engine::new(space, Arc::new(LineCache::new(1024))).unwrap();
    (pm, eng)
}

fn create(eng: &mut Engine, parent: Ino, name: &str, dir: bool) -> Ino {
    let ino = eng.alloc_mut().reserve_inode().unwrap();
    let m = if dir { mode::S_IFDIR | 0o755 } else { mode::S_IFREG | 0o644 };
    let mut t = eng.begin();
    t.op_create(parent, ino, m, 0, 0, 0, name.as_bytes(), b"", 1).unwrap();
    t.commit().unwrap();
    ino
}

fn write(eng: &mut Engine, ino: Ino, off: u64, data: &[u8]) {
    let pm = eng.space().pm().clone();
    let mut t = eng.begin();
    let mut inode = t.get_inode(ino).unwrap();
    let mut src = 0usize;
    for c in t.map_write(&mut inode, off, data.len() as u64).unwrap() {
        pm.store(c.dst, &data[src..src + c.len as usize]);
        pm.flush(c.dst, c.len);
        src += c.len as usize;
    }
    inode.size = inode.size.max(off + data.len() as u64);
    t.put_inode(ino, &inode);
    t.commit().unwrap();
}

fn read_all(eng: &Engine, ino: Ino) -> Vec<u8> {
    let space = eng.space();
    let inode = read_inode(space, ino).unwrap();
    let mut out = vec![0u8; inode.size as usize];
    for (fb, chunk) in out.chunks_mut(4096).enumerate() {
        if let Some(b) = nicfs_store::bmap(space, &inode, fb as u64).unwrap() {
            space.pm().read(PmAddr(b.byte_offset()), chunk);
        }
    }
    out
}

#[test]
fn namespace_operations_keep_fsck_clean() {
    let (_pm, mut eng) = fresh(&FormatConfig::small(8 << 20));
    let d = create(&mut eng, ROOT_INO, "dir", true);
    let f = create(&mut eng, d, "file", false);
    let g = create(&mut eng, ROOT_INO, "g", false);
    write(&mut eng, f, 0, &vec![7u8; 50_000]);
    write(&mut eng, g, 4_000_000, b"far");
    assert!(fsck(eng.space()).is_clean(), "{:?}", fsck(eng.space()).problems);
    let mut t = eng.begin();
    t.op_rename(d, b"file", ROOT_INO, b"g", 2).unwrap();
    t.commit().unwrap();
    let root = read_inode(eng.space(), ROOT_INO).unwrap();
    assert_eq!(dir_lookup(eng.space(), &root, b"g").unwrap().unwrap().1.ino, f);
    assert_eq!(read_all(&eng, f), vec![7u8; 50_000]);
    let mut t = eng.begin();
    t.op_truncate(f, 100, 3).unwrap();
    t.commit().unwrap();
    write(&mut eng, f, 200, b"x");
    let data = read_all(&eng, f);
    assert_eq!(data.len(), 201);
    assert!(data[100..200].iter().all(|&b| b == 0));
    let mut t = eng.begin();
    assert!(t.op_remove(ROOT_INO, b"dir", true, 4).is_ok());
    t.commit().unwrap();
    let mut t = eng.begin();
    t.op_remove(ROOT_INO, b"g", false, 5).unwrap();
    t.commit().unwrap();
    let r = fsck(eng.space());
    assert!(r.is_clean(), "{:?}", r.problems);
    assert_eq!(r.inodes, 1);
    assert!(dir_entries(eng.space(), &read_inode(eng.space(), ROOT_INO).unwrap()).unwrap().is_empty());
}

#[test]
fn errors_follow_posix() {
    let (_pm, mut eng) = fresh(&FormatConfig::small(8 << 20));
    let d = create(&mut eng, ROOT_INO, "d", true);
    create(&mut eng, d, "x", false);
    let mut t = eng.begin();
    assert!(matches!(t.op_remove(ROOT_INO, b"d", true, 1), Err(FsError::NotEmpty)));
    assert!(matches!(t.op_remove(ROOT_INO, b"d", false, 1), Err(FsError::IsDir)));
    assert!(matches!(t.op_remove(ROOT_INO, b"nope", false, 1), Err(FsError::NotFound)));
    assert!(matches!(t.op_rename(ROOT_INO, b"d", d, b"sub", 1), Err(FsError::Invalid(_))));
    t.abort();
    assert!(fsck(eng.space()).is_clean());
}

#[test]
fn journal_replay_is_idempotent_and_torn_commits_are_ignored() {
    let cfg = FormatConfig::small(8 << 20);
    let pm = Arc::new(CrashPm::new(cfg.size_bytes));
    mkfs(pm.as_ref(), &cfg, 1).unwrap();
    let shared: SharedPm = pm.clone();
    let mut eng = Engine::new(Space::open(shared).unwrap(), Arc::new(LineCache::new(0))).unwrap();
    create(&mut eng, ROOT_INO, "a", false);
    let geo = *eng.space().geo_ref();
    let img = pm.live_image();
    let again = CrashPm::from_image(img);
    let s1 = replay_journal(&again, &geo).unwrap();
    assert!(s1.applied);
    let s2 = replay_journal(&again, &geo).unwrap();
    assert_eq!(s1, s2);
    assert_eq!(again.live_image(), pm.live_image());
    // Tear a record: the commit must be ignored.
    let torn = CrashPm::from_image(pm.live_image());
    let rec = PmAddr((geo.journal_start as u64 + 1) * 4096 + 10);
    torn.store(rec, &[0xff]);
    assert!(replay_journal(&torn, &geo).unwrap().torn);
}

#[test]
fn links_symlinks_and_attributes() {
    let (_pm, mut eng) = fresh(&FormatConfig::small(8 << 20));
    let f = create(&mut eng, ROOT_INO, "f", false);
    let l = eng.alloc_mut().reserve_inode().unwrap();
    let mut t = eng.begin();
    t.op_link(ROOT_INO, f, b"g", 2).unwrap();
    t.op_create(ROOT_INO, l, mode::S_IFLNK | 0o777, 0, 0, 0, b"link", b"/some/target", 2).unwrap();
    t.op_setattr(
        f,
        nicfs_layout::SetAttrMask(nicfs_layout::SetAttrMask::MODE | nicfs_layout::SetAttrMask::UID),
        0o600,
        42,
        0,
        0,
        0,
        3,
    )
    .unwrap();
    assert!(matches!(t.op_link(ROOT_INO, ROOT_INO, b"loop", 3), Err(FsError::NotPermitted)));
    t.commit().unwrap();
    let inode = read_inode(eng.space(), f).unwrap();
    assert_eq!((inode.nlink, inode.mode & 0o7777, inode.uid), (2, 0o600, 42));
    assert_eq!(read_all(&eng, l), b"/some/target");
    let mut t = eng.begin();
    t.op_remove(ROOT_INO, b"f", false, 4).unwrap();
    t.commit().unwrap();
    assert_eq!(read_inode(eng.space(), f).unwrap().nlink, 1, "still reachable as g");
    let r = fsck(eng.space());
    assert!(r.is_clean(), "{:?}", r.problems);
}

#[test]
fn rename_replaces_empty_directories_only() {
    let (_pm, mut eng) = fresh(&FormatConfig::small(8 << 20));
    let a = create(&mut eng, ROOT_INO, "a", true);
    let b = create(&mut eng, ROOT_INO, "b", true);
    create(&mut eng, b, "inner", false);
    let mut t = eng.begin();
    assert!(matches!(t.op_rename(ROOT_INO, b"a", ROOT_INO, b"b", 1), Err(FsError::NotEmpty)));
    t.abort();
    let c = create(&mut eng, ROOT_INO, "c", true);
    let mut t = eng.begin();
    t.op_rename(ROOT_INO, b"a", ROOT_INO, b"c", 2).unwrap();
    t.commit().unwrap();
    let root = read_inode(eng.space(), ROOT_INO).unwrap();
    assert_eq!(dir_lookup(eng.space(), &root, b"c").unwrap().unwrap().1.ino, a);
    assert_eq!(read_inode(eng.space(), c).unwrap().nlink, 0, "the replaced directory is freed");
    assert_eq!(root.nlink, 4, "root: ., .., a (now c), b");
    let r = fsck(eng.space());
    assert!(r.is_clean(), "{:?}", r.problems);
}

/// PM that counts read calls (the back end's reads are DMA transfers).
struct CountingPm {
    inner: FastPm,
    reads: std::sync::atomic::AtomicU64,
}

impl Pm for CountingPm {
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn read(&self, addr: PmAddr, buf: &mut [u8]) {
        self.reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.read(addr, buf)
    }
    fn store(&self, addr: PmAddr, data: &[u8]) {
        self.inner.store(addr, data)
    }
    fn store_nt(&self, addr: PmAddr, data: &[u8]) {
        self.inner.store_nt(addr, data)
    }
    fn flush(&self, addr: PmAddr, len: u64) {
        self.inner.flush(addr, len)
    }
    fn fence(&self) {
        self.inner.fence()
    }
    fn store_u64_atomic(&self, addr: PmAddr, value: u64) {
        self.inner.store_u64_atomic(addr, value)
    }
    fn load_u64_atomic(&self, addr: PmAddr) -> u64 {
        self.inner.load_u64_atomic(addr)
    }
}

/// Found by the virtual-time model (issue 18): a transaction that allocated an index block
/// read it back from PM for every file block it then mapped (fresh blocks bypass the index
/// cache), one DMA round trip per record in the back end's Patch stage. It now reads what it
/// wrote to fresh metadata blocks from memory: mapping 256 blocks behind a new indirect block
/// reads PM a bounded number of times, not once per block, and the file reads back right.
#[test]
fn a_transaction_reads_its_own_fresh_index_blocks_from_memory() {
    let cfg = FormatConfig::small(16 << 20);
    let counting = Arc::new(CountingPm {
        inner: FastPm::new(MappedFile::anonymous(cfg.size_bytes).unwrap()),
        reads: std::sync::atomic::AtomicU64::new(0),
    });
    let pm: SharedPm = counting.clone();
    mkfs(pm.as_ref(), &cfg, 1).unwrap();
    let mut eng = Engine::new(Space::open(pm.clone()).unwrap(), Arc::new(LineCache::new(1024))).unwrap();
    let ino = create(&mut eng, ROOT_INO, "f", false);
    let before = counting.reads.load(std::sync::atomic::Ordering::Relaxed);
    let mut t = eng.begin();
    let mut inode = t.get_inode(ino).unwrap();
    let chunks = t.map_write(&mut inode, 10 * 4096, 256 * 4096).unwrap();
    let reads = counting.reads.load(std::sync::atomic::Ordering::Relaxed) - before;
    assert!(reads < 32, "{reads} PM reads to map 256 blocks behind a fresh indirect block");
    for c in &chunks {
        pm.store(c.dst, &vec![0xab; c.len as usize]);
    }
    inode.size = 266 * 4096;
    t.put_inode(ino, &inode);
    t.commit().unwrap();
    let space = Space::open(pm.clone()).unwrap();
    let inode = read_inode(&space, ino).unwrap();
    for fb in [10u64, 100, 265] {
        let b = nicfs_store::bmap(&space, &inode, fb).unwrap().expect("mapped");
        let mut byte = [0u8];
        pm.read(PmAddr(b.byte_offset()), &mut byte);
        assert_eq!(byte[0], 0xab, "file block {fb}");
    }
    assert!(fsck(&space).is_clean());
}
