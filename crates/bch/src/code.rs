//! The code: parameters, construction, and the systematic encoder.

use crate::field::{Field, primitive_polynomial};
use crate::generator::{Gf2Poly, degree, generator};
use crate::lfsr::Lfsr;

/// Parameters that do not make a code.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BchError {
    /// The field GF(2^m) is not supported.
    #[error("m must be in 3..=16 (got {m}); a 512-byte codeword needs m = 13")]
    FieldSize {
        /// The requested m.
        m: u32,
    },
    /// t = 0 corrects nothing.
    #[error("t must be at least 1")]
    ZeroT,
    /// No message.
    #[error("data_bits must be at least 1")]
    NoData,
    /// The message and the parity do not fit in one codeword of GF(2^m).
    #[error(
        "{data_bits} data bits plus the parity of t = {t} ({parity}) exceed the {max} bits of a \
         GF(2^{m}) codeword: use a larger m or a smaller t"
    )]
    TooLong {
        /// m.
        m: u32,
        /// t.
        t: u32,
        /// The requested message length.
        data_bits: u32,
        /// The generator's degree, or `"more than N bits"` when construction stopped early.
        parity: String,
        /// `2^m - 1`.
        max: u32,
    },
}

/// A systematic binary BCH code over GF(2^m) correcting `t` bit errors, shortened to
/// `data_bits` bits of message.
///
/// A codeword is the message followed by `parity_bits()` parity bits. In bytes, the message is
/// `data_bytes()` bytes, most significant bit first, of which the first `data_bits` bits count
/// (the rest of the last byte is ignored); the parity is `parity_bytes()` bytes, most
/// significant bit first, padded with zero bits. As a polynomial, the first message bit is the
/// coefficient of `x^(n-1)` and the last parity bit that of `x^0` (`n = data_bits +
/// parity_bits`).
#[derive(Clone)]
pub struct Bch {
    pub(crate) m: u32,
    pub(crate) t: u32,
    pub(crate) data_bits: u32,
    pub(crate) parity_bits: u32,
    pub(crate) field: Field,
    pub(crate) generator: Gf2Poly,
    pub(crate) lfsr: Lfsr,
}

impl std::fmt::Debug for Bch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The tables are large: show the parameters only.
        f.debug_struct("Bch")
            .field("m", &self.m)
            .field("t", &self.t)
            .field("data_bits", &self.data_bits)
            .field("parity_bits", &self.parity_bits)
            .finish_non_exhaustive()
    }
}

impl Bch {
    /// The code over GF(2^m) (primitive polynomial from Lin & Costello's table) correcting `t`
    /// errors in `data_bits` of message.
    ///
    /// # Errors
    ///
    /// [`BchError`] when `m` is outside 3..=16, `t` or `data_bits` is zero, or the message and
    /// its parity exceed `2^m - 1` bits.
    pub fn new(m: u32, t: u32, data_bits: u32) -> Result<Bch, BchError> {
        if primitive_polynomial(m).is_none() {
            return Err(BchError::FieldSize { m });
        }
        if t == 0 {
            return Err(BchError::ZeroT);
        }
        if data_bits == 0 {
            return Err(BchError::NoData);
        }
        let max = (1u32 << m) - 1;
        let too_long = |parity: String| BchError::TooLong { m, t, data_bits, parity, max };
        if data_bits >= max || u64::from(t) * 2 >= u64::from(max) {
            return Err(too_long("at least 1".into()));
        }
        let field = Field::new(m).expect("m was checked");
        let room = max - data_bits;
        let generator = generator(&field, t, room).ok_or_else(|| too_long(format!("more than {room}")))?;
        let parity_bits = degree(&generator).expect("a product of minimal polynomials");
        let lfsr = Lfsr::new(&generator, parity_bits);
        Ok(Bch { m, t, data_bits, parity_bits, field, generator, lfsr })
    }

    /// The field's extension degree m.
    pub fn m(&self) -> u32 {
        self.m
    }

    /// The number of bit errors the code corrects.
    pub fn t(&self) -> u32 {
        self.t
    }

    /// Message bits per codeword.
    pub fn data_bits(&self) -> u32 {
        self.data_bits
    }

    /// Message bytes per codeword: `ceil(data_bits / 8)`.
    pub fn data_bytes(&self) -> usize {
        (self.data_bits as usize).div_ceil(8)
    }

    /// Parity bits per codeword: the degree of the generator, at most `m * t`.
    pub fn parity_bits(&self) -> u32 {
        self.parity_bits
    }

    /// Parity bytes per codeword (what the page's OOB area must hold): `ceil(parity_bits / 8)`.
    pub fn parity_bytes(&self) -> usize {
        (self.parity_bits as usize).div_ceil(8)
    }

    /// Codeword bits, `n = data_bits + parity_bits`.
    pub fn codeword_bits(&self) -> u32 {
        self.data_bits + self.parity_bits
    }

    /// The field's primitive polynomial (bit `i` = coefficient of `x^i`).
    pub fn primitive_polynomial(&self) -> u32 {
        primitive_polynomial(self.m).expect("m was checked")
    }

    /// The generator polynomial over GF(2): bit `i % 64` of word `i / 64` is the coefficient
    /// of `x^i`.
    pub fn generator(&self) -> &[u64] {
        &self.generator
    }

    /// Writes the parity of `data` into `parity`.
    ///
    /// # Panics
    ///
    /// If `data.len() != data_bytes()` or `parity.len() != parity_bytes()`.
    pub fn encode_into(&self, data: &[u8], parity: &mut [u8]) {
        self.check_lengths(data.len(), parity.len());
        let reg = self.lfsr.remainder(data, self.data_bits);
        self.lfsr.write_parity(&reg, parity);
    }

    /// The parity of `data`, `parity_bytes()` long.
    ///
    /// # Panics
    ///
    /// If `data.len() != data_bytes()`.
    pub fn encode(&self, data: &[u8]) -> Vec<u8> {
        let mut parity = vec![0u8; self.parity_bytes()];
        self.encode_into(data, &mut parity);
        parity
    }

    pub(crate) fn check_lengths(&self, data: usize, parity: usize) {
        assert_eq!(data, self.data_bytes(), "data must be data_bytes() long");
        assert_eq!(parity, self.parity_bytes(), "parity must be parity_bytes() long");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters() {
        let c = Bch::new(13, 12, 4096).unwrap();
        assert_eq!(c.parity_bits(), 156);
        assert_eq!(c.parity_bytes(), 20);
        assert_eq!(c.data_bytes(), 512);
        assert_eq!(c.codeword_bits(), 4252);
    }

    #[test]
    fn bad_parameters() {
        assert_eq!(Bch::new(2, 1, 1).unwrap_err(), BchError::FieldSize { m: 2 });
        assert_eq!(Bch::new(17, 1, 1).unwrap_err(), BchError::FieldSize { m: 17 });
        assert_eq!(Bch::new(13, 0, 4096).unwrap_err(), BchError::ZeroT);
        assert_eq!(Bch::new(13, 1, 0).unwrap_err(), BchError::NoData);
        // 4096 bits need m >= 13.
        let e = Bch::new(12, 1, 4096).unwrap_err();
        assert!(matches!(e, BchError::TooLong { .. }), "{e}");
        // 8192 - 1 - 4096 = 4095 bits of room. Conjugate exponents share minimal
        // polynomials, so t = 316 needs only 3601 bits, not 13 * 316.
        assert_eq!(Bch::new(13, 316, 4096).unwrap().parity_bits(), 3601);
        let e = Bch::new(13, 500, 4096).unwrap_err();
        assert!(e.to_string().contains("use a larger m"), "{e}");
        assert!(matches!(Bch::new(4, 8, 1), Err(BchError::TooLong { .. })));
    }

    #[test]
    #[should_panic(expected = "parity must be parity_bytes() long")]
    fn wrong_parity_length_is_misuse() {
        let c = Bch::new(13, 12, 4096).unwrap();
        c.encode_into(&[0u8; 512], &mut [0u8; 19]);
    }

    #[test]
    fn a_code_can_be_shared_between_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<Bch>();
    }

    #[test]
    fn parity_of_zero_is_zero_and_encoding_is_linear() {
        let c = Bch::new(13, 12, 4096).unwrap();
        let zero = vec![0u8; 512];
        assert!(c.encode(&zero).iter().all(|&b| b == 0));
        let a: Vec<u8> = (0..512u32).map(|i| (i * 7 + 3) as u8).collect();
        let b: Vec<u8> = (0..512u32).map(|i| (i * 13 + 5) as u8).collect();
        let ab: Vec<u8> = a.iter().zip(&b).map(|(x, y)| x ^ y).collect();
        let pa = c.encode(&a);
        let pb = c.encode(&b);
        let pab: Vec<u8> = pa.iter().zip(&pb).map(|(x, y)| x ^ y).collect();
        assert_eq!(c.encode(&ab), pab);
    }
}
