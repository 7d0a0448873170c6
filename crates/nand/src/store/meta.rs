//! The metadata-only store: two bytes (a [`DataTag`]) per mapping unit, no payload.

use std::io;

use crate::address::{BlockIdx, PageIdx};
use crate::geometry::Geometry;
use crate::oob::Oob;
use crate::store::PageStore;

/// Keeps one tag per mapping unit and nothing else.
pub struct MetaStore {
    upp: usize,
    tags: Vec<u16>,
}

impl MetaStore {
    /// A store for `geo`.
    pub fn new(geo: &Geometry) -> Self {
        MetaStore { upp: geo.units_per_page() as usize, tags: vec![0; geo.total_units() as usize] }
    }

    /// A store holding `tags` (one per unit, as [`tags`](Self::tags) gave them).
    pub fn from_tags(geo: &Geometry, tags: Vec<u16>) -> Result<Self, String> {
        if tags.len() != geo.total_units() as usize {
            return Err(format!("{} tags for {} units", tags.len(), geo.total_units()));
        }
        Ok(MetaStore { upp: geo.units_per_page() as usize, tags })
    }

    /// Every unit's tag, in flat unit order (stale for free pages).
    pub fn tags(&self) -> &[u16] {
        &self.tags
    }
}

impl PageStore for MetaStore {
    fn program(
        &mut self,
        page: PageIdx,
        oob: &Oob,
        _data: Option<&[u8]>,
        _parity: Option<&[u8]>,
    ) -> io::Result<()> {
        let base = page.idx() * self.upp;
        // A few tags: an element loop, not a call to memcpy.
        for (t, &v) in self.tags[base..base + self.upp].iter_mut().zip(oob.tags()) {
            *t = v;
        }
        Ok(())
    }

    fn read(&mut self, page: PageIdx, oob: &mut Oob, data: Option<&mut [u8]>) -> io::Result<()> {
        let base = page.idx() * self.upp;
        oob.set_tags(&self.tags[base..base + self.upp]);
        if let Some(d) = data {
            d.fill(0);
        }
        Ok(())
    }

    fn read_payload(&mut self, _page: PageIdx, data: &mut [u8]) -> io::Result<()> {
        data.fill(0);
        Ok(())
    }

    fn erase(&mut self, _block: BlockIdx, _erase_count: u32) -> io::Result<()> {
        Ok(())
    }

    fn mark_bad(&mut self, _block: BlockIdx) -> io::Result<()> {
        Ok(())
    }

    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn keeps_payload(&self) -> bool {
        false
    }

    fn resident_bytes(&self) -> usize {
        self.tags.capacity() * 2
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
