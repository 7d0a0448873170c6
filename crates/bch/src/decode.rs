//! Syndromes (the hardware engine) and the software decoder: Berlekamp–Massey, then Chien
//! search, then bit flips.

use crate::Bch;
use crate::cost::{DecodeCost, OpCount};

/// A decoded word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decoded {
    /// No error: the division left no remainder.
    Clean,
    /// `bits` errors were found and flipped in data and parity.
    Corrected {
        /// Bits flipped.
        bits: u32,
    },
}

/// The word has more errors than the code corrects, and the decoder noticed: the locator's
/// degree exceeds `t` or does not match the number of its roots among the codeword's
/// positions. Data and parity are left as received.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("uncorrectable codeword: more bit errors than the BCH code corrects")]
pub struct Uncorrectable;

impl Bch {
    /// The syndromes `S_1 .. S_2t` of a received word (index `j - 1` holds `S_j`), or `None`
    /// when the word is a codeword. This is the controller's hardware engine: it divides the
    /// word by `g(x)` and evaluates the remainder, adding the operations to
    /// `cost.syndrome_ops`.
    ///
    /// # Panics
    ///
    /// If `data.len() != data_bytes()` or `parity.len() != parity_bytes()`.
    pub fn syndromes(&self, data: &[u8], parity: &[u8], cost: &mut DecodeCost) -> Option<Vec<u16>> {
        self.check_lengths(data.len(), parity.len());
        let lfsr = &self.lfsr;
        let mut rem = lfsr.remainder(data, self.data_bits);
        for (r, p) in rem.iter_mut().zip(lfsr.read_parity(parity)) {
            *r ^= p;
        }
        if rem.iter().all(|&w| w == 0) {
            return None;
        }
        // Because g(alpha^j) = 0, S_j = r(alpha^j) = R(alpha^j).
        let t = self.t as usize;
        let f = &self.field;
        let q = f.order();
        // S_j = sum_i R_i alpha^(i j): one table look-up (the multiply by the known power)
        // and one masked XOR per remainder bit, independent of one another.
        let mask: Vec<u16> =
            (0..self.parity_bits).map(|i| if lfsr.coeff(&rem, i) { u16::MAX } else { 0 }).collect();
        let mut s = vec![0u16; 2 * t];
        for j in (1..2 * t).step_by(2) {
            let step = (j as u32) % q;
            let (mut e, mut acc) = (0u32, 0u16);
            for &m in &mask {
                acc ^= f.exp(e) & m;
                e += step;
                if e >= q {
                    e -= q;
                }
            }
            s[j - 1] = acc;
        }
        for j in 1..=t {
            s[2 * j - 1] = f.mul(s[j - 1], s[j - 1]);
        }
        cost.syndrome_ops += self.syndrome_cost();
        Some(s)
    }

    /// Decodes a received word in place: corrects up to `t` bit errors in `data` and
    /// `parity`, and adds the operations it performed to `cost`.
    ///
    /// ```text
    ///  received word ──► divide by g(x) ──► remainder R(x) == 0 ? ──► Clean (no cost)
    ///                      (LFSR, hw)            │ no
    ///                                            ▼
    ///              S_j = R(alpha^j), j = 1..2t   (hw: S_2j = S_j^2)
    ///                                            │
    ///              Berlekamp–Massey ──► locator sigma(x) of degree L   (ECC core)
    ///                                            │  L > t ──► Uncorrectable
    ///              Chien: sigma(alpha^-d) for every position d < n     (ECC core)
    ///                                            │  roots != L ──► Uncorrectable
    ///              flip the L located bits ──► Corrected { bits: L }
    /// ```
    ///
    /// Every loop has a fixed trip count (syndromes over all `r` remainder bits, BM over the full
    /// `t + 1` coefficients at every step, Chien over all `L` terms at every position without
    /// stopping at the last root), as a constant-time implementation would: the operation count
    /// is then a function of the code and of `L` alone, which [`Bch::decode_cost`] computes.
    ///
    /// # Errors
    ///
    /// [`Uncorrectable`] when the decoder detects more than `t` errors; the bytes are then
    /// unchanged. A word with more than `t` errors can also fall within `t` of another
    /// codeword and come back `Corrected` to that codeword (a miscorrection): see
    /// [`Bch::miscorrection_probability`].
    ///
    /// # Panics
    ///
    /// If `data.len() != data_bytes()` or `parity.len() != parity_bytes()`.
    pub fn decode(
        &self,
        data: &mut [u8],
        parity: &mut [u8],
        cost: &mut DecodeCost,
    ) -> Result<Decoded, Uncorrectable> {
        let Some(s) = self.syndromes(data, parity, cost) else {
            return Ok(Decoded::Clean);
        };
        cost.software_runs += 1;
        let locator = self.berlekamp_massey(&s, &mut cost.bm_ops)?;
        let roots = self.chien(&locator, &mut cost.chien_ops);
        let degree = locator.len() - 1;
        if degree == 0 || roots.len() != degree {
            return Err(Uncorrectable);
        }
        let n = self.codeword_bits();
        for &d in &roots {
            let pos = n - 1 - d;
            if pos < self.data_bits {
                data[pos as usize / 8] ^= 0x80 >> (pos % 8);
            } else {
                let p = pos - self.data_bits;
                parity[p as usize / 8] ^= 0x80 >> (p % 8);
            }
        }
        cost.flips += roots.len() as u64;
        Ok(Decoded::Corrected { bits: roots.len() as u32 })
    }

    /// The error locator `sigma(x) = prod (1 + X_l x)` (lowest degree first, trimmed to its
    /// length `L`) from the syndromes, by the Berlekamp–Massey algorithm with the binary
    /// simplification: the discrepancy at every even step is zero, so only the `t` odd steps
    /// run (Lin & Costello, section 6.4).
    fn berlekamp_massey(&self, s: &[u16], ops: &mut OpCount) -> Result<Vec<u16>, Uncorrectable> {
        let f = &self.field;
        let t = self.t as usize;
        let mut c = vec![0u16; t + 1]; // current connection polynomial
        let mut b = vec![0u16; t + 1]; // the one before the last length change
        c[0] = 1;
        b[0] = 1;
        let mut len = 0usize; // L
        let mut shift = 1usize; // steps since the last length change
        let mut last = 1u16; // the discrepancy at the last length change
        for k in 0..t {
            let r = 2 * k; // 0-based step: syndrome S_(r+1)
            let terms = r.min(t);
            let mut d = s[r];
            for i in 1..=terms {
                d ^= f.mul(c[i], s[r - i]);
            }
            let factor = f.mul(d, f.inv(last));
            let grow = d != 0 && 2 * len <= r;
            let before = if grow { Some(c.clone()) } else { None };
            for i in 0..=t {
                let p = f.mul(factor, b[i]);
                if i + shift <= t {
                    c[i + shift] ^= p;
                }
            }
            *ops += OpCount {
                mul: terms as u64 + 1 + (t as u64 + 1),
                add: terms as u64 + (t as u64 + 1),
                inv: 1,
            };
            if let Some(before) = before {
                len = r + 1 - len;
                b = before;
                last = d;
                shift = 1;
            } else {
                shift += 1;
            }
            shift += 1; // the skipped even step
            if len > t {
                // deg sigma <= L, and L never decreases: more than t errors.
                return Err(Uncorrectable);
            }
        }
        c.truncate(len + 1);
        Ok(c)
    }

    /// The positions `d` (degree in the codeword polynomial, `0 <= d < n`) where
    /// `sigma(alpha^-d) = 0`. Positions beyond the shortened length are not searched: a root
    /// there means the word is uncorrectable, and shows as a missing root.
    fn chien(&self, sigma: &[u16], ops: &mut OpCount) -> Vec<u32> {
        let f = &self.field;
        let q = f.order();
        let degree = sigma.len() - 1;
        // term_i = sigma_i * alpha^(-d*i), kept by its log; u32::MAX marks a zero coefficient.
        let mut logs: Vec<u32> =
            sigma[1..].iter().map(|&c| if c == 0 { u32::MAX } else { f.log(c) }).collect();
        let steps: Vec<u32> = (1..=degree as u32).map(|i| (q - i % q) % q).collect();
        let mut roots = Vec::with_capacity(degree);
        let n = self.codeword_bits();
        for d in 0..n {
            let mut v = sigma[0];
            for (lg, &step) in logs.iter_mut().zip(&steps) {
                if *lg != u32::MAX {
                    v ^= f.exp(*lg);
                    *lg += step;
                    if *lg >= q {
                        *lg -= q;
                    }
                }
            }
            if v == 0 {
                roots.push(d);
            }
        }
        let per = u64::from(n) * degree as u64;
        *ops += OpCount { mul: per, add: per, inv: 0 };
        roots
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flip(code: &Bch, data: &mut [u8], parity: &mut [u8], pos: u32) {
        if pos < code.data_bits() {
            data[pos as usize / 8] ^= 0x80 >> (pos % 8);
        } else {
            let p = pos - code.data_bits();
            parity[p as usize / 8] ^= 0x80 >> (p % 8);
        }
    }

    /// BCH(15, 7), t = 2: every message, every pattern of one and two errors.
    #[test]
    fn exhaustive_15_7() {
        let code = Bch::new(4, 2, 7).unwrap();
        assert_eq!(code.parity_bits(), 8);
        for msg in 0..128u8 {
            let data = [msg << 1];
            let parity = code.encode(&data);
            for a in 0..15 {
                for b in a..15 {
                    let (mut d, mut p) = (data, parity.clone());
                    flip(&code, &mut d, &mut p, a);
                    let expect = if a == b { 1 } else { 2 };
                    if a != b {
                        flip(&code, &mut d, &mut p, b);
                    }
                    let mut cost = DecodeCost::default();
                    let r = code.decode(&mut d, &mut p, &mut cost);
                    assert_eq!(r, Ok(Decoded::Corrected { bits: expect }), "msg {msg} errors {a} {b}");
                    assert_eq!((d[0] >> 1, &p), (msg, &parity));
                    assert_eq!(cost, code.decode_cost(expect));
                }
            }
        }
    }

    #[test]
    fn clean_word_costs_nothing() {
        let code = Bch::new(13, 12, 4096).unwrap();
        let mut data = vec![0xa7u8; 512];
        let mut parity = code.encode(&data);
        let mut cost = DecodeCost::default();
        assert_eq!(code.decode(&mut data, &mut parity, &mut cost), Ok(Decoded::Clean));
        assert_eq!(cost, DecodeCost::default());
        // Padding bits after the last parity bit are not part of the codeword.
        let last = parity.len() - 1;
        parity[last] ^= 0x0f;
        assert_eq!(code.decode(&mut data, &mut parity, &mut cost), Ok(Decoded::Clean));
    }
}
