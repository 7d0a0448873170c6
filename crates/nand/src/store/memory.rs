//! The in-memory store: full OOB and page payloads in RAM.

use std::io;

use crate::address::{BlockIdx, PageIdx};
use crate::geometry::Geometry;
use crate::oob::Oob;
use crate::store::PageStore;

/// A programmed page: its OOB as written, its payload and its ECC parity, if given.
struct Record {
    oob: Oob,
    payload: Option<Box<[u8]>>,
    parity: Option<Box<[u8]>>,
}

/// Keeps each programmed page's OOB and payload in RAM.
pub struct MemoryStore {
    pages_per_block: usize,
    page_bytes: usize,
    pages: Vec<Option<Box<Record>>>,
    payload_bytes: usize,
}

impl MemoryStore {
    /// A store for `geo`.
    pub fn new(geo: &Geometry) -> Self {
        MemoryStore {
            pages_per_block: geo.pages as usize,
            page_bytes: geo.page_bytes() as usize,
            pages: (0..geo.total_pages()).map(|_| None).collect(),
            payload_bytes: 0,
        }
    }
}

impl PageStore for MemoryStore {
    fn program(
        &mut self,
        page: PageIdx,
        oob: &Oob,
        data: Option<&[u8]>,
        parity: Option<&[u8]>,
    ) -> io::Result<()> {
        let data = data.map(|d| {
            assert_eq!(d.len(), self.page_bytes, "program payload must be one whole page");
            self.payload_bytes += d.len();
            Box::<[u8]>::from(d)
        });
        let parity = parity.map(|p| {
            self.payload_bytes += p.len();
            Box::<[u8]>::from(p)
        });
        self.pages[page.idx()] = Some(Box::new(Record { oob: *oob, payload: data, parity }));
        Ok(())
    }

    fn read(&mut self, page: PageIdx, oob: &mut Oob, data: Option<&mut [u8]>) -> io::Result<()> {
        let Some(rec) = &self.pages[page.idx()] else {
            return Ok(());
        };
        oob.seq = rec.oob.seq;
        oob.set_tags(rec.oob.tags());
        oob.set_borns(rec.oob.borns());
        if let Some(d) = data {
            match &rec.payload {
                Some(p) => d.copy_from_slice(p),
                None => d.fill(0),
            }
        }
        Ok(())
    }

    fn read_payload(&mut self, page: PageIdx, data: &mut [u8]) -> io::Result<()> {
        match self.pages[page.idx()].as_ref().and_then(|rec| rec.payload.as_ref()) {
            Some(p) => data.copy_from_slice(p),
            None => data.fill(0),
        }
        Ok(())
    }

    fn read_parity(&mut self, page: PageIdx, parity: &mut [u8]) -> io::Result<()> {
        match self.pages[page.idx()].as_ref().and_then(|rec| rec.parity.as_ref()) {
            Some(p) => parity.copy_from_slice(p),
            None => parity.fill(0),
        }
        Ok(())
    }

    fn erase(&mut self, block: BlockIdx, _erase_count: u32) -> io::Result<()> {
        let first = block.idx() * self.pages_per_block;
        for p in &mut self.pages[first..first + self.pages_per_block] {
            if let Some(rec) = p.take() {
                let kept =
                    rec.payload.as_ref().map_or(0, |d| d.len()) + rec.parity.as_ref().map_or(0, |d| d.len());
                self.payload_bytes -= kept;
            }
        }
        Ok(())
    }

    fn mark_bad(&mut self, _block: BlockIdx) -> io::Result<()> {
        Ok(())
    }

    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn keeps_payload(&self) -> bool {
        true
    }

    fn resident_bytes(&self) -> usize {
        let recs = self.pages.iter().filter(|p| p.is_some()).count();
        self.pages.capacity() * size_of::<usize>() + recs * size_of::<Record>() + self.payload_bytes
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
