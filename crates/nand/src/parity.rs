//! ECC parity kept with a page's data: which BCH code, and where each codeword's parity goes.
//!
//! A payload store that keeps parity (the image store when created with a code, the memory
//! store when its array has one) gets, with each programmed page, the parity of every
//! `codeword_bytes` of the page's data, codeword after codeword, each `parity_bytes` long (the
//! code's parity bits, zero-padded to whole bytes: 20 bytes for 512 B at t = 12). This is the
//! part of the page's OOB area that follows the FTL's per-unit records; the store keeps it
//! apart from the record it scans at start-up ([`crate::Oob`]).
//!
//! The encoder stands for the controller's hardware encoder on the write path: it costs no
//! simulated time ([`crate::FlashArray::program`] runs it).

use serde::{Deserialize, Serialize};

/// Which code protects a page's data: a binary BCH code over GF(2^`m`) correcting `t` bits per
/// `codeword_bytes` of data.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParityLayout {
    /// The field's degree.
    pub m: u32,
    /// Bits corrected per codeword.
    pub t: u32,
    /// Data bytes per codeword.
    pub codeword_bytes: u32,
}

impl std::fmt::Display for ParityLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BCH t = {} over {} B codewords (GF(2^{}))", self.t, self.codeword_bytes, self.m)
    }
}

impl ParityLayout {
    /// The code.
    pub fn code(&self) -> Result<bch::Bch, bch::BchError> {
        bch::Bch::new(self.m, self.t, self.codeword_bytes.saturating_mul(8))
    }
}

/// A page's parity encoder: the code and the page's codeword layout.
#[derive(Clone)]
pub struct PageParity {
    layout: ParityLayout,
    code: bch::Bch,
    codewords: usize,
}

impl std::fmt::Debug for PageParity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageParity")
            .field("layout", &self.layout)
            .field("codewords", &self.codewords)
            .finish()
    }
}

impl PageParity {
    /// The encoder for pages of `page_bytes` under `layout`; an error (one line) if the code
    /// cannot be built or its codeword does not divide the page.
    pub fn new(layout: ParityLayout, page_bytes: u32) -> Result<PageParity, String> {
        let code = layout.code().map_err(|e| format!("{layout}: {e}"))?;
        let cw = layout.codeword_bytes;
        if cw == 0 || !page_bytes.is_multiple_of(cw) {
            return Err(format!("{layout}: the codeword does not divide the {page_bytes}-byte page"));
        }
        Ok(PageParity { layout, code, codewords: (page_bytes / cw) as usize })
    }

    /// The layout.
    pub fn layout(&self) -> ParityLayout {
        self.layout
    }

    /// The code.
    pub fn code(&self) -> &bch::Bch {
        &self.code
    }

    /// Codewords per page.
    pub fn codewords(&self) -> usize {
        self.codewords
    }

    /// Parity bytes per codeword.
    pub fn codeword_parity_bytes(&self) -> usize {
        self.code.parity_bytes()
    }

    /// Parity bytes per page.
    pub fn page_parity_bytes(&self) -> usize {
        self.codewords * self.code.parity_bytes()
    }

    /// Writes the parity of every codeword of `data` (one whole page) into `parity`
    /// ([`page_parity_bytes`](Self::page_parity_bytes) long).
    ///
    /// # Panics
    /// If the lengths are not a page's.
    pub fn encode_page(&self, data: &[u8], parity: &mut [u8]) {
        let (cw, pb) = (self.layout.codeword_bytes as usize, self.code.parity_bytes());
        assert_eq!(data.len(), cw * self.codewords, "one whole page of data");
        assert_eq!(parity.len(), pb * self.codewords, "one page's parity");
        for (d, p) in data.chunks_exact(cw).zip(parity.chunks_exact_mut(pb)) {
            self.code.encode_into(d, p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_encoded_codeword_by_codeword() {
        let layout = ParityLayout { m: 13, t: 12, codeword_bytes: 512 };
        let p = PageParity::new(layout, 4096).unwrap();
        assert_eq!((p.codewords(), p.codeword_parity_bytes(), p.page_parity_bytes()), (8, 20, 160));
        let data: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut parity = vec![0u8; 160];
        p.encode_page(&data, &mut parity);
        assert_eq!(&parity[20..40], &p.code().encode(&data[512..1024])[..]);
        assert!(PageParity::new(layout, 4000).is_err());
    }
}
