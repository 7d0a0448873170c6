//! Division by the generator polynomial: the encoder's LFSR, eight bits a step.
//!
//! The register holds an `r`-bit remainder (`r = deg g`) left-aligned in `u64` words: the
//! coefficient of `x^(r-1)` is bit 63 of word 0, that of `x^0` is bit `63 - (r-1) % 64` of the
//! last word, and the bits after it stay zero. Feeding one message bit `b` is the textbook step
//!
//! ```text
//!   feedback = msb(R) xor b;   R = R << 1;   if feedback { R ^= g(x) - x^r }
//! ```
//!
//! and feeding a byte is eight of those folded into one table look-up: by linearity,
//! `R' = (R << 8) xor T[msb8(R) xor byte]`, where `T[v]` is the register after feeding `v` into
//! a zero register. The table needs `r >= 8`; smaller codes go bit by bit.

/// The register and its byte table for one generator polynomial.
#[derive(Clone, Debug)]
pub(crate) struct Lfsr {
    /// `r`, the degree of the generator.
    bits: u32,
    /// Words in the register.
    words: usize,
    /// `g(x) - x^r`, left-aligned like the register.
    feedback: Vec<u64>,
    /// `T[v]` for `v` in 0..256, `words` words each; empty when `r < 8`.
    table: Vec<u64>,
}

impl Lfsr {
    /// The divider for `g` (GF(2) bitset, bit `i` = coefficient of `x^i`) of degree `r >= 1`.
    pub(crate) fn new(g: &[u64], r: u32) -> Lfsr {
        let words = (r as usize).div_ceil(64);
        let mut feedback = vec![0u64; words];
        // Coefficient of x^(r-1-k) goes to register position k.
        for k in 0..r {
            if crate::generator::coeff(g, r - 1 - k) {
                feedback[k as usize / 64] |= 1 << (63 - k % 64);
            }
        }
        let mut lfsr = Lfsr { bits: r, words, feedback, table: Vec::new() };
        if r >= 8 {
            let mut table = vec![0u64; 256 * words];
            for v in 0..256usize {
                let mut reg = vec![0u64; words];
                lfsr.feed_bits(&mut reg, v as u8, 8);
                table[v * words..(v + 1) * words].copy_from_slice(&reg);
            }
            lfsr.table = table;
        }
        lfsr
    }

    /// A zero register.
    pub(crate) fn zero(&self) -> Vec<u64> {
        vec![0u64; self.words]
    }

    /// Feeds the `n` most significant bits of `byte`, most significant first.
    pub(crate) fn feed_bits(&self, reg: &mut [u64], byte: u8, n: u32) {
        for i in 0..n {
            let b = u64::from(byte >> (7 - i) & 1);
            let fb = (reg[0] >> 63) ^ b;
            shift_left(reg, 1);
            if fb != 0 {
                for (w, f) in reg.iter_mut().zip(&self.feedback) {
                    *w ^= f;
                }
            }
        }
    }

    /// Feeds whole bytes, most significant bit of each first.
    pub(crate) fn feed_bytes(&self, reg: &mut [u64], bytes: &[u8]) {
        if self.table.is_empty() {
            for &b in bytes {
                self.feed_bits(reg, b, 8);
            }
            return;
        }
        let w = self.words;
        for &b in bytes {
            let top = ((reg[0] >> 56) as u8 ^ b) as usize;
            shift_left(reg, 8);
            let row = &self.table[top * w..(top + 1) * w];
            for (r, t) in reg.iter_mut().zip(row) {
                *r ^= t;
            }
        }
    }

    /// `x^r * d(x) mod g(x)` for the first `data_bits` bits of `data` (most significant first).
    pub(crate) fn remainder(&self, data: &[u8], data_bits: u32) -> Vec<u64> {
        let mut reg = self.zero();
        let full = data_bits as usize / 8;
        self.feed_bytes(&mut reg, &data[..full]);
        let tail = data_bits % 8;
        if tail != 0 {
            self.feed_bits(&mut reg, data[full], tail);
        }
        reg
    }

    /// Writes the register as `ceil(r / 8)` parity bytes, most significant first; the bits
    /// after the last parity bit are zero.
    pub(crate) fn write_parity(&self, reg: &[u64], out: &mut [u8]) {
        for (j, o) in out.iter_mut().enumerate() {
            *o = (reg[j / 8] >> (56 - 8 * (j % 8))) as u8;
        }
    }

    /// Reads parity bytes into a register, ignoring the bits after the last parity bit.
    pub(crate) fn read_parity(&self, bytes: &[u8]) -> Vec<u64> {
        let mut reg = self.zero();
        for (j, &b) in bytes.iter().enumerate() {
            reg[j / 8] |= u64::from(b) << (56 - 8 * (j % 8));
        }
        let pad = self.words as u32 * 64 - self.bits;
        if pad > 0 {
            let last = self.words - 1;
            reg[last] &= !0u64 << pad;
        }
        reg
    }

    /// The coefficient of `x^i` (`i < r`) in a register.
    #[inline]
    pub(crate) fn coeff(&self, reg: &[u64], i: u32) -> bool {
        let k = self.bits - 1 - i;
        reg[k as usize / 64] >> (63 - k % 64) & 1 != 0
    }
}

/// Shifts a left-aligned multi-word register left by `s < 64` bits.
#[inline]
fn shift_left(reg: &mut [u64], s: u32) {
    let n = reg.len();
    for i in 0..n - 1 {
        reg[i] = reg[i] << s | reg[i + 1] >> (64 - s);
    }
    reg[n - 1] <<= s;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_table_matches_bitwise_division() {
        // A degree-70 generator spans two words; compare table and bit steps on a message.
        let g = vec![0x8000_0000_0000_4C1Fu64 | 1, 1 << 6];
        let lfsr = Lfsr::new(&g, 70);
        let data: Vec<u8> = (0..40u32).map(|i| (i * 37 + 11) as u8).collect();
        let mut by_bytes = lfsr.zero();
        lfsr.feed_bytes(&mut by_bytes, &data);
        let mut by_bits = lfsr.zero();
        for &b in &data {
            lfsr.feed_bits(&mut by_bits, b, 8);
        }
        assert_eq!(by_bytes, by_bits);
        let mut bytes = [0u8; 9];
        lfsr.write_parity(&by_bytes, &mut bytes);
        assert_eq!(lfsr.read_parity(&bytes), by_bytes);
    }
}
