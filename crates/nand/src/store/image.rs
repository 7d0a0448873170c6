//! The NAND image file store (format in `image_format.rs`).

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::address::{BlockIdx, PageIdx};
use crate::array::{BlockState, FlashArray};
use crate::geometry::Geometry;
use crate::oob::Oob;
use crate::parity::ParityLayout;
use crate::store::PageStore;
use crate::store::behind::WriteBehind;
use crate::store::image_format::{self as fmt, BlockEntry, Header, Layout, SuperblockError};

/// A NAND image that cannot be created or opened.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// The file could not be read or written.
    #[error("{path}: {error}")]
    Io {
        /// The image file.
        path: PathBuf,
        /// What the OS said. Part of the message, not a `source` as well: a report of the
        /// whole chain (`{:#}`) said it twice.
        error: io::Error,
    },
    /// The file is not a valid ssdlab NAND image.
    #[error("{path}: not a usable ssdlab NAND image: {why}")]
    Invalid {
        /// The image file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The image was made for another geometry.
    #[error(
        "{path}: the image was created for a different geometry ({field}: image has {image}, configuration has {config})"
    )]
    GeometryMismatch {
        /// The image file.
        path: PathBuf,
        /// The first differing field.
        field: String,
        /// The image's value.
        image: String,
        /// The configuration's value.
        config: String,
    },
}

/// A NAND image file.
///
/// Programs, erases and bad-block marks reach the file through a writer thread of its own
/// (write-behind, in order: see `behind.rs`); reads of a page still queued wait for it, and
/// [`sync`](PageStore::sync) waits for everything before it syncs the file.
pub struct ImageStore {
    behind: WriteBehind,
    layout: Layout,
    units: u32,
    pages_per_block: u32,
    blocks: Vec<BlockEntry>,
    /// Programs still queued, oldest first: (push number, page).
    queued: VecDeque<(u64, PageIdx)>,
    /// The code whose parity the image keeps (version 2), if any.
    parity: Option<ParityLayout>,
}

/// What [`ImageStore::open`] found: the block table and the OOB of every programmed page.
pub struct ScannedImage {
    /// The store, ready for use.
    pub store: ImageStore,
    /// Block states as persisted (valid counts are recomputed by [`FlashArray::restore`]).
    pub blocks: Vec<BlockState>,
    /// Every programmed page with its OOB, in flat order.
    pub pages: Vec<(PageIdx, Oob)>,
}

impl ScannedImage {
    /// Builds the flash array from the scan (see [`FlashArray::restore`]).
    pub fn into_array(self, geo: Geometry) -> FlashArray {
        FlashArray::restore(geo, Box::new(self.store), self.blocks, self.pages)
    }
}

impl ImageStore {
    /// Creates (or truncates) an image for `geo` with an auxiliary region of `aux_bytes` for
    /// firmware checkpoints; every block starts erased. The file is sparse: it takes disk space
    /// only for what is written.
    pub fn create(path: &Path, geo: &Geometry, aux_bytes: u64) -> Result<ImageStore, ImageError> {
        ImageStore::create_with_parity(path, geo, aux_bytes, None)
    }

    /// [`create`](Self::create) an image that keeps, with every page, the ECC parity of
    /// `parity` (a version 2 image: see `image_format.rs`); `None` keeps none (version 1).
    pub fn create_with_parity(
        path: &Path,
        geo: &Geometry,
        aux_bytes: u64,
        parity: Option<ParityLayout>,
    ) -> Result<ImageStore, ImageError> {
        let io_err = |error| ImageError::Io { path: path.to_path_buf(), error };
        let header = Header { geometry: geo.clone(), aux_bytes, parity };
        let parity_bytes = header
            .parity_bytes()
            .map_err(|why| ImageError::Invalid { path: path.to_path_buf(), why: format!("parity: {why}") })?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(io_err)?;
        let layout = Layout::new(geo, header.aux_bytes, parity_bytes);
        file.set_len(layout.end).map_err(io_err)?;
        file.write_all_at(&fmt::encode_superblock(&header), 0).map_err(io_err)?;
        Ok(ImageStore {
            behind: WriteBehind::new(Arc::new(file)).map_err(io_err)?,
            layout,
            units: geo.units_per_page(),
            pages_per_block: geo.pages,
            blocks: vec![BlockEntry::default(); geo.total_blocks() as usize],
            queued: VecDeque::new(),
            parity,
        })
    }

    /// Opens an existing image made for `geo` and scans its block table and OOB records.
    pub fn open(path: &Path, geo: &Geometry) -> Result<ScannedImage, ImageError> {
        let io_err = |error| ImageError::Io { path: path.to_path_buf(), error };
        let invalid = |why: String| ImageError::Invalid { path: path.to_path_buf(), why };
        let file = OpenOptions::new().read(true).write(true).open(path).map_err(io_err)?;
        let mut sb = vec![0u8; fmt::SUPERBLOCK_BYTES as usize];
        file.read_exact_at(&mut sb, 0).map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof => invalid("shorter than a superblock".into()),
            _ => io_err(e),
        })?;
        let header = fmt::decode_superblock(&sb).map_err(|e| {
            invalid(match e {
                SuperblockError::Magic => "bad magic number".into(),
                SuperblockError::Version(v) => {
                    format!(
                        "format version {v}, this build reads {} to {}",
                        fmt::VERSION_NO_PARITY,
                        fmt::VERSION
                    )
                }
                SuperblockError::Checksum => "superblock checksum mismatch".into(),
                SuperblockError::Header(h) => format!("bad header: {h}"),
            })
        })?;
        if let Some((field, image, config)) = first_difference(&header.geometry, geo) {
            return Err(ImageError::GeometryMismatch { path: path.to_path_buf(), field, image, config });
        }
        let layout = Layout::new(geo, header.aux_bytes, header.parity_bytes().map_err(&invalid)?);
        let len = file.metadata().map_err(io_err)?.len();
        if len < layout.end {
            return Err(invalid(format!("truncated: {len} bytes, expected {}", layout.end)));
        }
        let mut table = vec![0u8; (geo.total_blocks() as u64 * fmt::BLOCK_ENTRY_BYTES) as usize];
        file.read_exact_at(&mut table, layout.blocks).map_err(io_err)?;
        let mut blocks = Vec::with_capacity(geo.total_blocks() as usize);
        for (i, chunk) in table.chunks_exact(fmt::BLOCK_ENTRY_BYTES as usize).enumerate() {
            blocks.push(
                fmt::decode_block(chunk)
                    .ok_or_else(|| invalid(format!("block table entry {i} is corrupt")))?,
            );
        }
        let mut store = ImageStore {
            behind: WriteBehind::new(Arc::new(file)).map_err(io_err)?,
            layout,
            units: geo.units_per_page(),
            pages_per_block: geo.pages,
            blocks,
            queued: VecDeque::new(),
            parity: header.parity,
        };
        let (states, pages) = store.scan(geo).map_err(io_err)?;
        Ok(ScannedImage { store, blocks: states, pages })
    }

    /// Reads every OOB record: the block states and the programmed pages.
    fn scan(&mut self, geo: &Geometry) -> io::Result<(Vec<BlockState>, Vec<(PageIdx, Oob)>)> {
        let ppb = geo.pages as usize;
        let mut buf = vec![0u8; ppb * fmt::OOB_RECORD_BYTES as usize];
        let mut states = Vec::with_capacity(self.blocks.len());
        let mut pages = Vec::new();
        for (b, entry) in self.blocks.iter().enumerate() {
            let first = PageIdx((b * ppb) as u32);
            // Pages are programmed in order: if page 0 holds no record of the block's current
            // generation, the block is empty and the rest need not be read.
            let rec0 = &mut buf[..fmt::OOB_RECORD_BYTES as usize];
            self.file().read_exact_at(rec0, self.oob_offset(first))?;
            if fmt::decode_oob(rec0, entry.generation, self.units).is_none() {
                states.push(BlockState {
                    write_ptr: 0,
                    valid_units: 0,
                    erase_count: entry.erase_count,
                    bad: entry.bad,
                });
                continue;
            }
            self.file().read_exact_at(&mut buf, self.oob_offset(first))?;
            let mut write_ptr = 0;
            for (i, rec) in buf.chunks_exact(fmt::OOB_RECORD_BYTES as usize).enumerate() {
                if let Some(oob) = fmt::decode_oob(rec, entry.generation, self.units) {
                    pages.push((PageIdx(first.0 + i as u32), oob));
                    write_ptr = i as u32 + 1;
                }
            }
            states.push(BlockState {
                write_ptr,
                valid_units: 0,
                erase_count: entry.erase_count,
                bad: entry.bad,
            });
        }
        Ok((states, pages))
    }

    /// Size of the auxiliary region.
    pub fn aux_len(&self) -> u64 {
        self.layout.oob - self.layout.aux
    }

    /// Reads `buf.len()` bytes of the auxiliary region from `offset`.
    pub fn read_aux(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.check_aux(offset, buf.len())?;
        self.behind.wait_all()?;
        self.file().read_exact_at(buf, self.layout.aux + offset)
    }

    /// Writes `buf` into the auxiliary region at `offset`, after every program, erase and
    /// mark made before it.
    pub fn write_aux(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.check_aux(offset, buf.len())?;
        self.behind.wait_all()?;
        self.file().write_all_at(buf, self.layout.aux + offset)
    }

    fn file(&self) -> &File {
        self.behind.file()
    }

    /// Waits until `page`'s program, if still queued, is in the file.
    fn settle(&mut self, page: PageIdx) -> io::Result<()> {
        self.forget_written();
        match self.queued.iter().rev().find(|(_, p)| *p == page) {
            Some(&(n, _)) => self.behind.wait(n),
            None => Ok(()),
        }
    }

    /// Drops the queued programs that are in the file by now.
    fn forget_written(&mut self) {
        while self.queued.front().is_some_and(|&(n, _)| self.behind.is_written(n)) {
            self.queued.pop_front();
        }
    }

    fn check_aux(&self, offset: u64, len: usize) -> io::Result<()> {
        if offset.checked_add(len as u64).is_none_or(|end| end > self.aux_len()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("aux access {offset}+{len} beyond the {}-byte aux region", self.aux_len()),
            ));
        }
        Ok(())
    }

    fn oob_offset(&self, page: PageIdx) -> u64 {
        self.layout.oob + page.0 as u64 * fmt::OOB_RECORD_BYTES
    }

    fn data_offset(&self, page: PageIdx) -> u64 {
        self.layout.data + page.0 as u64 * self.layout.page_bytes
    }

    fn parity_offset(&self, page: PageIdx) -> u64 {
        self.layout.parity + page.0 as u64 * self.layout.parity_bytes
    }

    fn write_block_entry(&self, block: BlockIdx) -> io::Result<()> {
        let at = self.layout.blocks + block.0 as u64 * fmt::BLOCK_ENTRY_BYTES;
        self.behind.push([(at, fmt::encode_block(&self.blocks[block.idx()]).to_vec())]).map(drop)
    }
}

/// The first geometry field that differs, with both values.
fn first_difference(image: &Geometry, config: &Geometry) -> Option<(String, String, String)> {
    let a = serde_json::to_value(image).ok()?;
    let b = serde_json::to_value(config).ok()?;
    let (a, b) = (a.as_object()?, b.as_object()?);
    a.iter().find_map(|(k, v)| {
        (b.get(k) != Some(v))
            .then(|| (k.clone(), v.to_string(), b.get(k).map_or("nothing".into(), |x| x.to_string())))
    })
}

impl PageStore for ImageStore {
    fn program(
        &mut self,
        page: PageIdx,
        oob: &Oob,
        data: Option<&[u8]>,
        parity: Option<&[u8]>,
    ) -> io::Result<()> {
        // The data and parity before the OOB record: a torn program leaves the page
        // unprogrammed.
        let data = data.map(|d| {
            assert_eq!(d.len() as u64, self.layout.page_bytes, "program payload must be one whole page");
            let mut b = self.behind.buffer(d.len());
            b.extend_from_slice(d);
            (self.data_offset(page), b)
        });
        let parity = match (parity, self.layout.parity_bytes) {
            (None, _) => None,
            (Some(p), n) if p.len() as u64 == n => Some((self.parity_offset(page), p.to_vec())),
            (Some(p), n) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{} bytes of parity for page {}; the image keeps {n} a page", p.len(), page.0),
                ));
            }
        };
        let generation = self.blocks[(page.0 / self.pages_per_block) as usize].generation;
        let record = (self.oob_offset(page), fmt::encode_oob(oob, generation).to_vec());
        let n = self.behind.push(data.into_iter().chain(parity).chain([record]))?;
        self.forget_written();
        self.queued.push_back((n, page));
        Ok(())
    }

    fn read(&mut self, page: PageIdx, oob: &mut Oob, data: Option<&mut [u8]>) -> io::Result<()> {
        self.settle(page)?;
        let mut rec = [0u8; fmt::OOB_RECORD_BYTES as usize];
        self.file().read_exact_at(&mut rec, self.oob_offset(page))?;
        let generation = self.blocks[(page.0 / self.pages_per_block) as usize].generation;
        let stored = fmt::decode_oob(&rec, generation, self.units).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, format!("OOB record of page {} is corrupt", page.0))
        })?;
        oob.seq = stored.seq;
        oob.set_tags(stored.tags());
        oob.set_borns(stored.borns());
        if let Some(d) = data {
            self.file().read_exact_at(d, self.data_offset(page))?;
        }
        Ok(())
    }

    fn read_payload(&mut self, page: PageIdx, data: &mut [u8]) -> io::Result<()> {
        self.settle(page)?;
        self.file().read_exact_at(data, self.data_offset(page))
    }

    fn read_parity(&mut self, page: PageIdx, parity: &mut [u8]) -> io::Result<()> {
        if self.layout.parity_bytes == 0 {
            parity.fill(0);
            return Ok(());
        }
        if parity.len() as u64 != self.layout.parity_bytes {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} bytes of parity asked of page {}; the image keeps {}",
                    parity.len(),
                    page.0,
                    self.layout.parity_bytes
                ),
            ));
        }
        self.settle(page)?;
        self.file().read_exact_at(parity, self.parity_offset(page))
    }

    fn parity_layout(&self) -> Option<ParityLayout> {
        self.parity
    }

    /// The block's new generation makes its old OOB records stale; then its page data is
    /// punched out of the file, so that the image takes disk space only for blocks holding
    /// data (valid, or invalid and not yet reclaimed by GC). The punch follows the block-table
    /// write in the write-behind queue, so a file cut short by a kill never has the hole
    /// without the new generation, and nothing reads an erased page's data before it is
    /// programmed again.
    fn erase(&mut self, block: BlockIdx, erase_count: u32) -> io::Result<()> {
        let e = &mut self.blocks[block.idx()];
        e.generation = e.generation.wrapping_add(1);
        e.erase_count = erase_count;
        self.write_block_entry(block)?;
        let first = PageIdx(block.0 * self.pages_per_block);
        let len = u64::from(self.pages_per_block) * self.layout.page_bytes;
        self.behind.punch(self.data_offset(first), len).map(drop)
    }

    fn mark_bad(&mut self, block: BlockIdx) -> io::Result<()> {
        self.blocks[block.idx()].bad = true;
        self.write_block_entry(block)
    }

    fn sync(&mut self) -> io::Result<()> {
        self.behind.sync()
    }

    fn keeps_payload(&self) -> bool {
        true
    }

    fn resident_bytes(&self) -> usize {
        self.blocks.capacity() * size_of::<BlockEntry>()
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::Lpn;
    use crate::oob::{DataTag, OobSlot};

    /// A new image over the tiny geometry, in a directory of its own.
    fn new_image() -> (tempfile::TempDir, PathBuf, Geometry, ImageStore) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev.ssdimg");
        let g = crate::geometry::tiny();
        let store = ImageStore::create(&path, &g, 0).unwrap();
        (dir, path, g, store)
    }

    #[test]
    fn a_torn_program_leaves_the_page_unprogrammed() {
        // The data of page 1 reached the file but its OOB record did not (a crash between the
        // two writes): on reopen page 1 is free and the write pointer stops before it.
        let (_dir, path, g, mut store) = new_image();
        let slot = OobSlot { lpn: Some(Lpn(1)), tag: DataTag(1) };
        let mut oob = Oob::new(&[slot; 4]);
        oob.seq = 1;
        let data = vec![0xabu8; g.page_bytes() as usize];
        store.program(PageIdx(0), &oob, Some(&data), None).unwrap();
        store.sync().unwrap();
        store.file().write_all_at(&data, store.data_offset(PageIdx(1))).unwrap();
        drop(store);
        let scanned = ImageStore::open(&path, &g).unwrap();
        assert_eq!(scanned.blocks[0].write_ptr, 1);
        assert_eq!(scanned.pages.len(), 1);
        assert_eq!(scanned.pages[0], (PageIdx(0), oob));
    }

    #[test]
    fn a_page_read_right_after_its_program_has_its_data() {
        // Programs go to the file behind the caller's back; a read must still see them, and a
        // reopened image must hold them after a sync.
        let (_dir, path, g, mut store) = new_image();
        let pages = g.pages.min(8);
        for p in 0..pages {
            let mut oob = Oob::new(&[OobSlot { lpn: Some(Lpn(p)), tag: DataTag(p as u16) }; 4]);
            oob.seq = u64::from(p) + 1;
            let data = vec![p as u8 + 1; g.page_bytes() as usize];
            store.program(PageIdx(p), &oob, Some(&data), None).unwrap();
            let mut back = vec![0u8; data.len()];
            store.read_payload(PageIdx(p), &mut back).unwrap();
            assert_eq!(back, data, "page {p}");
            let mut read = Oob::new(&[OobSlot { lpn: Some(Lpn(p)), tag: DataTag(0) }; 4]);
            store.read(PageIdx(p), &mut read, None).unwrap();
            assert_eq!(read, oob, "page {p}");
        }
        store.sync().unwrap();
        drop(store);
        let scanned = ImageStore::open(&path, &g).unwrap();
        assert_eq!(scanned.pages.len(), pages as usize);
    }

    /// Bytes of disk the file takes.
    fn allocated(path: &Path) -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).unwrap().blocks() * 512
    }

    /// Issue 17, item 6: the image kept every page ever programmed on disk (13 GB after
    /// filling an 8 GiB export). An erased block's data is punched out of the file; the
    /// block is programmed and read again as if nothing happened, and other blocks keep
    /// their data.
    #[test]
    #[cfg_attr(miri, ignore = "Miri does not support fallocate with FALLOC_FL_PUNCH_HOLE")]
    fn an_erased_block_gives_its_disk_space_back() {
        let (_dir, path, g, mut store) = new_image();
        let page_bytes = g.page_bytes() as usize;
        let pages = g.pages;
        let program = |store: &mut ImageStore, p: u32, fill: u8| {
            let mut oob = Oob::new(&[OobSlot { lpn: Some(Lpn(p)), tag: DataTag(1) }; 4]);
            oob.seq = u64::from(p) + 1;
            store.program(PageIdx(p), &oob, Some(&vec![fill; page_bytes]), None).unwrap();
        };
        for p in 0..2 * pages {
            program(&mut store, p, 0xa5);
        }
        store.sync().unwrap();
        let full = allocated(&path);
        let block_bytes = u64::from(pages) * page_bytes as u64;
        assert!(full >= 2 * block_bytes, "{full} bytes allocated for two blocks of {block_bytes}");
        store.erase(BlockIdx(0), 1).unwrap();
        store.sync().unwrap();
        let after = allocated(&path);
        // (The file system may keep a block or two of its own, e.g. for its extent tree.)
        if full - after.min(full) < block_bytes * 3 / 4 {
            // Only where the file system cannot punch holes (e.g. some network file systems).
            let probe = File::create(path.with_extension("probe")).unwrap();
            probe.set_len(1 << 20).unwrap();
            probe.write_all_at(&[1; 4096], 0).unwrap();
            assert!(
                super::super::behind::punch_hole(&probe, 0, 4096).is_err(),
                "the erased block still takes disk space: {full} bytes before, {after} after"
            );
            eprintln!("this file system cannot punch holes; the image keeps erased blocks' space");
            return;
        }
        let mut back = vec![0u8; page_bytes];
        store.read_payload(PageIdx(pages), &mut back).unwrap();
        assert!(back.iter().all(|&b| b == 0xa5), "the next block keeps its data");
        program(&mut store, 0, 0x5a);
        store.read_payload(PageIdx(0), &mut back).unwrap();
        assert!(back.iter().all(|&b| b == 0x5a), "the erased block is programmed again");
        store.sync().unwrap();
        drop(store);
        let scanned = ImageStore::open(&path, &g).unwrap();
        assert_eq!(scanned.blocks[0].write_ptr, 1, "one page of the erased block programmed since");
    }

    /// An image made with a code keeps each page's parity after its data, across a reopen, and
    /// its array encodes with that code only.
    #[test]
    fn an_image_with_parity_keeps_each_page_s_parity() {
        use crate::parity::{PageParity, ParityLayout};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev.ssdimg");
        let g = crate::geometry::tiny();
        let layout = ParityLayout { m: 13, t: 12, codeword_bytes: 512 };
        let store = ImageStore::create_with_parity(&path, &g, 0, Some(layout)).unwrap();
        let mut a = FlashArray::new(g.clone(), Box::new(store));
        let other = ParityLayout { t: 8, ..layout };
        assert!(a.set_parity(Some(other)).is_err(), "the image's code only");
        a.set_parity(Some(layout)).unwrap();
        let data: Vec<u8> = (0..g.page_bytes()).map(|i| (i * 13 % 251) as u8).collect();
        let oob = Oob::new(&[OobSlot { lpn: Some(Lpn(3)), tag: DataTag(1) }; 4]);
        a.program(PageIdx(0), &oob, Some(&data)).unwrap();
        let code = PageParity::new(layout, g.page_bytes()).unwrap();
        let mut want = vec![0u8; code.page_parity_bytes()];
        code.encode_page(&data, &mut want);
        let mut got = vec![0u8; want.len()];
        a.read_parity(PageIdx(0), &mut got).unwrap();
        assert_eq!(got, want);
        let mut a = ImageStore::open(&path, &g).unwrap().into_array(g.clone());
        assert_eq!(a.store().parity_layout(), Some(layout));
        got.fill(0);
        a.read_parity(PageIdx(0), &mut got).unwrap();
        assert_eq!(got, want, "after a reopen");
        // An image without parity is still a version 1 image, and keeps none.
        let plain = dir.path().join("plain.ssdimg");
        drop(ImageStore::create(&plain, &g, 0).unwrap());
        let mut sb = [0u8; 12];
        File::open(&plain).unwrap().read_exact_at(&mut sb, 0).unwrap();
        assert_eq!(u32::from_le_bytes(sb[8..12].try_into().unwrap()), 1);
        assert_eq!(ImageStore::open(&plain, &g).unwrap().store.parity_layout(), None);
    }

    #[test]
    fn aux_access_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let store = ImageStore::create(&dir.path().join("i"), &crate::geometry::tiny(), 100).unwrap();
        assert_eq!(store.aux_len(), 4096);
        assert!(store.write_aux(4090, b"0123456789").is_err());
        assert!(store.write_aux(u64::MAX, b"x").is_err());
        store.write_aux(4086, b"0123456789").unwrap();
    }
}
