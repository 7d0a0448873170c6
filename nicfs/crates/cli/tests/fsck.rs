//! Regression (issue 18): corruption went unnoticed or could not be repaired. A corrupt log
//! header, payload or tail made `nicfs fsck` print the mismatch but exit 0 with "0 problems",
//! and the mount then failed with no way to recover; a corrupt block bitmap was detected but
//! `--repair` did not fix it, and replaying the log then cross-linked files; a corrupt primary
//! superblock fell back to the backup without saying so. Now fsck exits non-zero on every
//! problem (0 clean, 1 repaired, 4 left), says when it uses the backup superblock, and
//! `--repair` repairs what it reports so that the file system mounts again.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use nicfs::crashcheck::{crash_format, populated_image};
use nicfs::model::{Node, Tree, read_tree};
use nicfs::mount::{open_pm, scratch_dir};
use nicfs_backend::{BackendConfig, DirectLink, open};
use nicfs_comm::CommRegion;
use nicfs_frontend::{Client, FrontendConfig, Fs, OpenFlags};
use nicfs_layout::{BLOCK_SIZE, Geometry};
use nicfs_pm::{CrashPm, Pm, PmAddr, SharedPm};
use nicfs_store::{Space, mkfs};

/// An image file that is removed when dropped.
struct Image(PathBuf);

impl Image {
    fn new(name: &str, bytes: &[u8]) -> Image {
        let p = scratch_dir().join(format!("nicfs-fsck-{name}-{}", std::process::id()));
        std::fs::write(&p, bytes).unwrap();
        Image(p)
    }

    /// Runs `nicfs fsck` (with `--repair` if asked): exit status and standard output.
    fn fsck(&self, repair: bool) -> (i32, String) {
        let mut c = Command::new(env!("CARGO_BIN_EXE_nicfs"));
        c.args(["fsck", "--pm", self.0.to_str().unwrap()]);
        if repair {
            c.arg("--repair");
        }
        let out = c.output().unwrap();
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Mounts the image as the back end would: recovery must report no error, and the tree
    /// is read back.
    fn mount(&self) -> Tree {
        let pm = open_pm(&self.0, None).unwrap();
        let (_, rep) =
            open(pm.clone(), Arc::new(CommRegion::anonymous().unwrap()), BackendConfig::free()).unwrap();
        assert!(rep.errors.is_empty(), "recovery: {:?}", rep.errors);
        assert_eq!(rep.rejected, 0);
        read_tree(&Space::open(pm).unwrap()).unwrap()
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn file(t: &Tree, p: &str) -> Vec<u8> {
    match t.get(p) {
        Some(Node::File(d)) => d.clone(),
        other => panic!("{p}: {other:?}"),
    }
}

/// The tree of [`populated_image`] with its pending records applied (`with_pending`) or not.
fn expected(with_pending: bool) -> Tree {
    let mut t = Tree::new();
    t.insert("/d".into(), Node::Dir);
    for i in 0..6usize {
        t.insert(format!("/d/f{i}"), Node::File(vec![i as u8 + 1; 5000 + i * 3000]));
    }
    if with_pending {
        let f1 = t.remove("/d/f1").unwrap();
        t.insert("/g".into(), f1);
        t.insert("/d/f2".into(), Node::File(vec![3; 10]));
        let Some(Node::File(f3)) = t.get_mut("/d/f3") else { unreachable!() };
        f3[100..107].copy_from_slice(b"pending");
    }
    t
}

fn head_header_addr(img: &[u8], geo: &Geometry) -> (usize, nicfs_layout::LogHeader) {
    let ls = geo.log_space(0);
    let pm = CrashPm::from_image(img.to_vec());
    let head = nicfs_store::LogSpace { index: 0, geo: ls }.head(&pm);
    let at = ls.headers_start.byte_offset() + (head % ls.headers as u64) * 64;
    let mut h = [0u8; 64];
    pm.read(PmAddr(at), &mut h);
    (at as usize, nicfs_layout::LogHeader::decode(&h).unwrap())
}

#[test]
fn a_clean_image_exits_0() {
    let (img, _) = populated_image();
    let im = Image::new("clean", &img);
    let (code, out) = im.fsck(false);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("valid records not yet applied"), "{out}");
    assert_eq!(im.mount(), expected(true));
}

#[test]
fn regression_issue_18_a_corrupt_log_header_is_a_problem_and_repair_cuts_the_log() {
    let (mut img, geo) = populated_image();
    let (at, _) = head_header_addr(&img, &geo);
    img[at + 30] ^= 0x40;
    let im = Image::new("loghdr", &img);
    let (code, out) = im.fsck(false);
    assert_eq!(code, 4, "a corrupt log must fail the check:\n{out}");
    assert!(out.contains("checksum"), "{out}");
    let (code, out) = im.fsck(true);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("cut at record"), "{out}");
    assert_eq!(im.fsck(false).0, 0);
    // The records from the corrupt one on are gone; everything applied before is there.
    assert_eq!(im.mount(), expected(false));
}

#[test]
fn regression_issue_18_a_corrupt_log_payload_is_a_problem_and_repair_cuts_the_log() {
    let (mut img, geo) = populated_image();
    let (_, hdr) = head_header_addr(&img, &geo);
    let ls = geo.log_space(0);
    img[(ls.data_start.byte_offset() + hdr.data_pos % ls.data_bytes) as usize] ^= 1;
    let im = Image::new("payload", &img);
    let (code, out) = im.fsck(false);
    assert_eq!(code, 4, "{out}");
    assert!(out.contains("payload checksum"), "{out}");
    assert_eq!(im.fsck(true).0, 1);
    assert_eq!(im.mount(), expected(false));
}

#[test]
fn regression_issue_18_a_corrupt_log_tail_is_a_problem_and_repair_cuts_the_log() {
    let (mut img, geo) = populated_image();
    // A tail word that checks out but points past the records.
    let at = (geo.log_space(0).super_block.byte_offset() + 128) as usize;
    let tail = nicfs_layout::LogWord::Tail.decode(0, u64::from_le_bytes(img[at..at + 8].try_into().unwrap()));
    img[at..at + 8].copy_from_slice(&nicfs_layout::LogWord::Tail.encode(0, tail.unwrap() + 5).to_le_bytes());
    let im = Image::new("tail", &img);
    let (code, out) = im.fsck(false);
    assert_eq!(code, 4, "{out}");
    assert_eq!(im.fsck(true).0, 1);
    // The valid records before the bogus tail survive.
    assert_eq!(im.mount(), expected(true));
}

/// Regression (issue 28): a log's head and tail words carried no checksum. A one-byte change to
/// either went unnoticed (`fsck` exited 0) and the records between the old and the new value
/// were lost at the next mount ("rejected update of inode 7"). Now each word carries a check,
/// the head is kept twice (both written in its journaled line), and `--repair` restores them,
/// the head from its good copy and the tail from the log's checksummed records, losing none.
#[test]
fn regression_issue_28_a_one_byte_change_to_a_log_head_or_tail_word_is_found_and_repaired() {
    let (img, geo) = populated_image();
    // Settle the journal: its last transaction advanced the head, and replaying it would heal
    // a corrupt head before anyone looked.
    let settled = CrashPm::from_image(img);
    nicfs_store::replay_journal(&settled, &geo).unwrap();
    nicfs_store::reset_journal(&settled, &geo);
    let img = settled.live_image();
    let sb = geo.log_space(0).super_block.byte_offset() as usize;
    for (word, at) in [("head", sb + 64), ("head copy", sb + 72), ("tail", sb + 128)] {
        for byte in 0..8 {
            for flip in [0x01u8, 0x80] {
                let case = format!("{word} byte {byte} ^ {flip:#04x}");
                let mut bad = img.clone();
                bad[at + byte] ^= flip;
                // A back end does not follow the log: it quarantines it and says so.
                let (_, rep) = open(
                    Arc::new(CrashPm::from_image(bad.clone())),
                    Arc::new(CommRegion::anonymous().unwrap()),
                    BackendConfig::free(),
                )
                .unwrap();
                assert!(rep.errors.iter().any(|e| e.contains("log 0")), "{case}: recovery: {:?}", rep.errors);
                let im = Image::new(&format!("word{}-{byte}-{flip}", at - sb), &bad);
                let (code, out) = im.fsck(false);
                assert_eq!(code, 4, "{case}: not found:\n{out}");
                let (code, out) = im.fsck(true);
                assert_eq!(code, 1, "{case}: not repaired:\n{out}");
                let (code, out) = im.fsck(false);
                assert_eq!(code, 0, "{case}: a problem left after the repair:\n{out}");
                assert_eq!(im.mount(), expected(true), "{case}: records lost");
            }
        }
    }
}

#[test]
fn regression_issue_18_fsck_says_when_it_uses_the_backup_superblock() {
    let (mut img, _) = populated_image();
    img[20] ^= 0xff;
    let im = Image::new("sb", &img);
    let (code, out) = im.fsck(false);
    assert_eq!(code, 4, "{out}");
    assert!(out.contains("using the backup"), "{out}");
    let (code, out) = im.fsck(true);
    assert_eq!(code, 1, "{out}");
    let (code, out) = im.fsck(false);
    assert_eq!(code, 0, "the primary was rewritten:\n{out}");
    assert_eq!(im.mount(), expected(true));
}

#[test]
fn a_corrupt_directory_entry_is_dropped_by_repair() {
    let (mut img, _) = populated_image();
    let pm: SharedPm = Arc::new(CrashPm::from_image(img.clone()));
    let space = Space::open(pm).unwrap();
    let root = nicfs_store::read_inode(&space, nicfs_layout::ROOT_INO).unwrap();
    let d =
        nicfs_store::read_inode(&space, nicfs_store::dir_lookup(&space, &root, b"d").unwrap().unwrap().1.ino)
            .unwrap();
    let (slot, _) = nicfs_store::dir_lookup(&space, &d, b"f5").unwrap().unwrap();
    img[slot.get() as usize + 13] ^= 0x10;
    let im = Image::new("dirent", &img);
    assert_eq!(im.fsck(false).0, 4);
    let (code, out) = im.fsck(true);
    assert_eq!(code, 1, "{out}");
    let mut want = expected(true);
    want.remove("/d/f5");
    assert_eq!(im.mount(), want);
}

/// The bitmap case needs pending records that allocate: a new file logged, not yet applied.
#[test]
fn regression_issue_18_repair_rebuilds_a_corrupt_block_bitmap_before_replaying_the_log() {
    let fmt = crash_format();
    let pm = Arc::new(CrashPm::new(fmt.size_bytes));
    let geo = mkfs(pm.as_ref(), &fmt, 5).unwrap();
    let shared: SharedPm = pm.clone();
    let comm = Arc::new(CommRegion::anonymous().unwrap());
    let (sh, _) = open(shared.clone(), comm.clone(), BackendConfig::free()).unwrap();
    let fs = Fs::new(
        Client::attach_with(shared, comm, 0, Box::new(DirectLink::new(sh, 0)), FrontendConfig::default())
            .unwrap(),
    );
    let old: Vec<u8> = (0..40_000u32).map(|i| (i % 241) as u8).collect();
    let new: Vec<u8> = (0..20_000u32).map(|i| (i % 239) as u8 ^ 0x5a).collect();
    let fd = fs.open("/old", OpenFlags::CREATE, 0o644).unwrap();
    fs.pwrite(fd, &old, 0).unwrap();
    fs.client().sync_all().unwrap();
    let fd = fs.open("/new", OpenFlags::CREATE, 0o644).unwrap();
    fs.pwrite(fd, &new, 0).unwrap();
    std::mem::forget(fs);
    // Settle the journal (its last transaction rewrote the bitmap: replaying it would heal the
    // corruption below before anyone looked).
    let settled = CrashPm::from_image(pm.live_image());
    nicfs_store::replay_journal(&settled, &geo).unwrap();
    nicfs_store::reset_journal(&settled, &geo);
    let mut img = settled.live_image();
    // Every block of /old now looks free: replay would hand them to /new.
    let bb = geo.bbitmap_start as usize * BLOCK_SIZE as usize;
    img[bb..bb + 64].fill(0);
    let im = Image::new("bitmap", &img);
    let (code, out) = im.fsck(false);
    assert_eq!(code, 4, "{out}");
    assert!(out.contains("bitmap says free"), "{out}");
    let (code, out) = im.fsck(true);
    assert_eq!(code, 1, "{out}");
    let (code, out) = im.fsck(false);
    assert_eq!(code, 0, "{out}");
    let t = im.mount();
    assert_eq!(file(&t, "/old"), old, "cross-linked by the replay");
    assert_eq!(file(&t, "/new"), new);
}

#[test]
fn an_image_that_cannot_be_opened_exits_8() {
    let im = Image::new("garbage", &vec![0x5a; 1 << 20]);
    assert_eq!(im.fsck(false).0, 8);
    let missing = Path::new("/nonexistent/nicfs-image");
    let out = Command::new(env!("CARGO_BIN_EXE_nicfs")).args(["fsck", "--pm"]).arg(missing).output().unwrap();
    assert_eq!(out.status.code(), Some(8));
}
