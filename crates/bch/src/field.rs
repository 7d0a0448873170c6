//! GF(2^m) arithmetic with log/antilog tables.
//!
//! An element is a `u16` in polynomial basis: bit `i` is the coefficient of `alpha^i`, where
//! `alpha` is a root of the field's primitive polynomial. Multiplication and inversion go through
//! the tables: `a * b = exp[log a + log b]`, with `exp` stored twice over so that the sum of two
//! logs needs no reduction.

/// The primitive polynomial used for GF(2^m), as a bit mask (bit `i` = coefficient of `x^i`).
///
/// Source: the table of primitive polynomials in S. Lin and D. J. Costello, *Error Control
/// Coding*, 2nd ed. (Pearson, 2004), Table 2.7 (the same list as Peterson and Weldon's table of
/// irreducible polynomials, Appendix C): for each degree the one with the fewest terms. The test
/// `every_polynomial_is_primitive` checks each by computing the order of `x` modulo it.
pub(crate) fn primitive_polynomial(m: u32) -> Option<u32> {
    Some(match m {
        3 => 0b1011,            // x^3 + x + 1
        4 => 0b1_0011,          // x^4 + x + 1
        5 => 0b10_0101,         // x^5 + x^2 + 1
        6 => 0b100_0011,        // x^6 + x + 1
        7 => 0b1000_1001,       // x^7 + x^3 + 1
        8 => 0b1_0001_1101,     // x^8 + x^4 + x^3 + x^2 + 1
        9 => 0b10_0001_0001,    // x^9 + x^4 + 1
        10 => 0b100_0000_1001,  // x^10 + x^3 + 1
        11 => 0b1000_0000_0101, // x^11 + x^2 + 1
        12 => 0x1053,           // x^12 + x^6 + x^4 + x + 1
        13 => 0x201B,           // x^13 + x^4 + x^3 + x + 1
        14 => 0x4443,           // x^14 + x^10 + x^6 + x + 1
        15 => 0x8003,           // x^15 + x + 1
        16 => 0x1100B,          // x^16 + x^12 + x^3 + x + 1
        _ => return None,
    })
}

/// GF(2^m) for `3 <= m <= 16`.
#[derive(Clone, Debug)]
pub(crate) struct Field {
    /// The order of the multiplicative group, `2^m - 1`.
    order: u32,
    /// `exp[i] = alpha^i` for `0 <= i < 2 * order`.
    exp: Vec<u16>,
    /// `log[x]` for `1 <= x <= order`; `log[0]` is unused.
    log: Vec<u16>,
}

impl Field {
    /// The field built on the tabled primitive polynomial, or `None` for `m` outside 3..=16.
    pub(crate) fn new(m: u32) -> Option<Field> {
        let poly = primitive_polynomial(m)?;
        let order = (1u32 << m) - 1;
        let mut exp = vec![0u16; 2 * order as usize];
        let mut log = vec![0u16; order as usize + 1];
        let mut x: u32 = 1;
        for i in 0..order {
            exp[i as usize] = x as u16;
            exp[(i + order) as usize] = x as u16;
            log[x as usize] = i as u16;
            x <<= 1;
            if x & (1 << m) != 0 {
                x ^= poly;
            }
        }
        // A broken table entry is a programming error, caught here and by the unit tests.
        assert_eq!(x, 1, "x^(2^{m}-1) must be 1 modulo the primitive polynomial");
        Some(Field { order, exp, log })
    }

    /// `2^m - 1`: the number of non-zero elements, the length of the unshortened code.
    pub(crate) fn order(&self) -> u32 {
        self.order
    }

    /// `alpha^i` for `0 <= i < 2 * order`.
    #[inline]
    pub(crate) fn exp(&self, i: u32) -> u16 {
        self.exp[i as usize]
    }

    /// The discrete log of a non-zero element.
    #[inline]
    pub(crate) fn log(&self, x: u16) -> u32 {
        debug_assert!(x != 0, "log of zero");
        u32::from(self.log[x as usize])
    }

    /// `alpha^i` for any `i`.
    #[cfg(test)]
    pub(crate) fn alpha_pow(&self, i: u64) -> u16 {
        self.exp[(i % u64::from(self.order)) as usize]
    }

    /// `a * b`.
    #[inline]
    pub(crate) fn mul(&self, a: u16, b: u16) -> u16 {
        if a == 0 || b == 0 {
            0
        } else {
            self.exp[self.log[a as usize] as usize + self.log[b as usize] as usize]
        }
    }

    /// `1 / a` for non-zero `a`.
    #[inline]
    pub(crate) fn inv(&self, a: u16) -> u16 {
        debug_assert!(a != 0, "inverse of zero");
        self.exp[(self.order - u32::from(self.log[a as usize])) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The multiplicative order of `x` modulo `poly`, by shift-and-reduce (no tables).
    fn order_of_x(m: u32, poly: u32) -> u32 {
        let mut x: u32 = 1;
        for k in 1..=(1u32 << m) {
            x <<= 1;
            if x & (1 << m) != 0 {
                x ^= poly;
            }
            if x == 1 {
                return k;
            }
        }
        unreachable!("x is invertible modulo an irreducible polynomial")
    }

    #[test]
    fn every_polynomial_is_primitive() {
        for m in 3..=16 {
            let poly = primitive_polynomial(m).unwrap();
            assert_eq!(poly >> m, 1, "degree of the polynomial for m = {m}");
            assert_eq!(order_of_x(m, poly), (1 << m) - 1, "order of alpha for m = {m}");
        }
        assert!(primitive_polynomial(2).is_none());
        assert!(primitive_polynomial(17).is_none());
    }

    #[test]
    fn tables_agree_with_arithmetic() {
        for m in [3, 4, 8, 13] {
            let f = Field::new(m).unwrap();
            let q = f.order();
            // Every non-zero element appears exactly once among alpha^0 .. alpha^(q-1).
            let mut seen = vec![false; q as usize + 1];
            for i in 0..q {
                let x = f.exp(i);
                assert!(x != 0 && !seen[x as usize], "alpha^{i} repeats in GF(2^{m})");
                seen[x as usize] = true;
                assert_eq!(f.log(x), i);
            }
            for a in (1..=q as u16).step_by(7) {
                assert_eq!(f.mul(a, f.inv(a)), 1);
                assert_eq!(f.mul(a, 0), 0);
                assert_eq!(f.mul(a, f.exp(1)), f.mul(a, 2), "alpha is the element x");
                // Distributivity against the bitwise carry-less product.
                let b = (a.wrapping_mul(31) % q as u16).max(1);
                assert_eq!(f.mul(a, b), clmul_mod(a, b, m, primitive_polynomial(m).unwrap()));
            }
        }
    }

    fn clmul_mod(a: u16, b: u16, m: u32, poly: u32) -> u16 {
        let mut acc: u32 = 0;
        for i in 0..m {
            if b >> i & 1 != 0 {
                acc ^= u32::from(a) << i;
            }
        }
        for i in (m..2 * m).rev() {
            if acc >> i & 1 != 0 {
                acc ^= poly << (i - m);
            }
        }
        acc as u16
    }
}
