//! The generator polynomial: the least common multiple of the minimal polynomials of
//! `alpha^1 .. alpha^(2t)`.
//!
//! Conjugates `alpha^i, alpha^(2i), alpha^(4i), ...` share a minimal polynomial, so the LCM is
//! the product of the minimal polynomials of the distinct cyclotomic cosets that contain an odd
//! exponent below `2t` (every even exponent `2i <= 2t` lies in the coset of `i`). A minimal
//! polynomial is computed as `prod (x + alpha^j)` over its coset in GF(2^m); its coefficients
//! come out in GF(2).

use crate::field::Field;

/// A polynomial over GF(2): bit `i` of word `i / 64` is the coefficient of `x^i`.
pub(crate) type Gf2Poly = Vec<u64>;

/// The degree of a non-zero GF(2) polynomial.
pub(crate) fn degree(p: &[u64]) -> Option<u32> {
    let w = p.iter().rposition(|&w| w != 0)?;
    Some(w as u32 * 64 + 63 - p[w].leading_zeros())
}

/// The coefficient of `x^i`.
pub(crate) fn coeff(p: &[u64], i: u32) -> bool {
    p.get(i as usize / 64).is_some_and(|w| w >> (i % 64) & 1 != 0)
}

/// `a * b` over GF(2).
fn mul_gf2(a: &[u64], b: &[u64]) -> Gf2Poly {
    let (Some(da), Some(db)) = (degree(a), degree(b)) else { return vec![0] };
    let mut out = vec![0u64; (da + db) as usize / 64 + 1];
    for i in 0..=db {
        if !coeff(b, i) {
            continue;
        }
        let (words, bits) = (i as usize / 64, i % 64);
        for (k, &w) in a.iter().enumerate().take(da as usize / 64 + 1) {
            if w == 0 {
                continue;
            }
            out[k + words] ^= w << bits;
            if bits != 0 && k + words + 1 < out.len() {
                out[k + words + 1] ^= w >> (64 - bits);
            }
        }
    }
    out
}

/// The minimal polynomial of `alpha^i` and the members of its cyclotomic coset.
fn minimal_polynomial(field: &Field, i: u32) -> (Gf2Poly, Vec<u32>) {
    let q = field.order();
    let mut coset = vec![i];
    let mut j = (2 * u64::from(i) % u64::from(q)) as u32;
    while j != i {
        coset.push(j);
        j = (2 * u64::from(j) % u64::from(q)) as u32;
    }
    // prod (x + alpha^j), coefficients in GF(2^m), lowest degree first.
    let mut p: Vec<u16> = vec![1];
    for &j in &coset {
        let root = field.exp(j);
        let mut next = vec![0u16; p.len() + 1];
        for (k, &c) in p.iter().enumerate() {
            next[k + 1] ^= c;
            next[k] ^= field.mul(c, root);
        }
        p = next;
    }
    let mut bits = vec![0u64; p.len() / 64 + 1];
    for (k, &c) in p.iter().enumerate() {
        assert!(c <= 1, "minimal polynomial of alpha^{i} has a coefficient outside GF(2)");
        bits[k / 64] |= u64::from(c) << (k % 64);
    }
    (bits, coset)
}

/// The generator of the narrow-sense binary BCH code of designed distance `2t + 1`, or `None`
/// as soon as its degree would exceed `max_degree`.
pub(crate) fn generator(field: &Field, t: u32, max_degree: u32) -> Option<Gf2Poly> {
    let q = field.order();
    let mut covered = vec![false; q as usize];
    let mut g: Gf2Poly = vec![1];
    for i in (1..2 * t).step_by(2) {
        let i = i % q;
        if covered[i as usize] {
            continue;
        }
        let (mp, coset) = minimal_polynomial(field, i);
        for j in coset {
            covered[j as usize] = true;
        }
        g = mul_gf2(&g, &mp);
        if degree(&g)? > max_degree {
            return None;
        }
    }
    Some(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn as_u64(p: &[u64]) -> u64 {
        assert!(p[1..].iter().all(|&w| w == 0));
        p[0]
    }

    #[test]
    fn minimal_polynomial_of_alpha_is_the_field_polynomial() {
        for m in 3..=16 {
            let f = Field::new(m).unwrap();
            let (mp, coset) = minimal_polynomial(&f, 1);
            assert_eq!(coset.len(), m as usize);
            let poly = u64::from(crate::field::primitive_polynomial(m).unwrap());
            assert_eq!(as_u64(&mp), poly, "m = {m}");
        }
    }

    #[test]
    fn generator_has_the_designed_roots() {
        // g(alpha^j) = 0 for j = 1 ..= 2t, evaluated with the tables.
        for (m, t) in [(4, 2), (5, 3), (8, 4), (13, 12)] {
            let f = Field::new(m).unwrap();
            let g = generator(&f, t, f.order() - 1).unwrap();
            let d = degree(&g).unwrap();
            assert!(d <= m * t);
            for j in 1..=2 * t {
                let mut acc = 0u16;
                for i in 0..=d {
                    if coeff(&g, i) {
                        acc ^= f.alpha_pow(u64::from(i) * u64::from(j));
                    }
                }
                assert_eq!(acc, 0, "g(alpha^{j}) for m = {m}, t = {t}");
            }
        }
    }

    #[test]
    fn gf2_product() {
        // (x + 1)^2 = x^2 + 1; (x^63 + 1)(x + 1) crosses a word boundary.
        assert_eq!(as_u64(&mul_gf2(&[0b11], &[0b11])), 0b101);
        let p = mul_gf2(&[1 | 1 << 63], &[0b11]);
        assert_eq!(p, vec![0b11 | 1 << 63, 1]);
    }
}
