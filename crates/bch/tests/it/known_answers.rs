//! Generator polynomials against the published tables, and parameter errors.
//!
//! The generators are those of S. Lin and D. J. Costello, *Error Control Coding*, 2nd ed.,
//! Appendix C ("Generator polynomials of binary primitive BCH codes of length up to 2^10 - 1"),
//! given there in octal, highest degree first: `721` is `111 010 001`, i.e.
//! `x^8 + x^7 + x^6 + x^4 + 1`.

use bch::{Bch, BchError};

/// (m, t, k, generator in octal) for full-length codes, n = 2^m - 1.
const TABLE: [(u32, u32, u32, u64); 12] = [
    (4, 1, 11, 0o23),
    (4, 2, 7, 0o721),
    (4, 3, 5, 0o2467),
    (5, 1, 26, 0o45),
    (5, 2, 21, 0o3551),
    (5, 3, 16, 0o107_657),
    (5, 5, 11, 0o5_423_325),
    (5, 7, 6, 0o313_365_047),
    (6, 1, 57, 0o103),
    (6, 2, 51, 0o12_471),
    (6, 3, 45, 0o1_701_317),
    (8, 2, 239, 0o267_543),
];

#[test]
fn generators_match_lin_costello() {
    for (m, t, k, octal) in TABLE {
        let code = Bch::new(m, t, k).unwrap_or_else(|e| panic!("({m}, {t}, {k}): {e}"));
        let g = code.generator();
        assert!(g[1..].iter().all(|&w| w == 0), "({m}, {t}): degree below 64");
        assert_eq!(g[0], octal, "g(x) of BCH({}, {k}), t = {t}: got {:o}", (1 << m) - 1, g[0]);
        assert_eq!(code.codeword_bits(), (1 << m) - 1, "the code is full length");
    }
}

#[test]
fn brief_examples_in_powers_of_x() {
    // BCH(15, 7): x^8 + x^7 + x^6 + x^4 + 1; BCH(15, 5): x^10 + x^8 + x^5 + x^4 + x^2 + x + 1.
    let g = Bch::new(4, 2, 7).unwrap().generator()[0];
    assert_eq!(g, 1 << 8 | 1 << 7 | 1 << 6 | 1 << 4 | 1);
    let g = Bch::new(4, 3, 5).unwrap().generator()[0];
    assert_eq!(g, 1 << 10 | 1 << 8 | 1 << 5 | 1 << 4 | 1 << 2 | 1 << 1 | 1);
}

#[test]
fn flash_codes_have_m_t_parity_bits() {
    // No coset of alpha^1, alpha^3, ..., alpha^(2t-1) collapses for these: r = m t exactly.
    for (m, t, bytes, parity_bytes) in [(13, 12, 512, 20), (14, 40, 1024, 70), (15, 40, 2048, 75)] {
        let code = Bch::new(m, t, bytes * 8).unwrap();
        assert_eq!(code.parity_bits(), m * t);
        assert_eq!(code.parity_bytes(), parity_bytes);
    }
}

#[test]
fn bad_parameters_are_errors() {
    assert_eq!(Bch::new(2, 1, 1).unwrap_err(), BchError::FieldSize { m: 2 });
    assert_eq!(Bch::new(17, 12, 4096).unwrap_err(), BchError::FieldSize { m: 17 });
    assert_eq!(Bch::new(13, 0, 4096).unwrap_err(), BchError::ZeroT);
    assert_eq!(Bch::new(13, 12, 0).unwrap_err(), BchError::NoData);
    // 512 B does not fit GF(2^12) (4095 bits), and 2 KiB at t = 40 does not fit GF(2^14).
    for (m, t, bits) in [(12, 1, 4096), (14, 40, 16384), (13, 12, 8191 - 155), (16, 40000, 8)] {
        let e = Bch::new(m, t, bits).unwrap_err();
        assert!(matches!(e, BchError::TooLong { .. }), "({m}, {t}, {bits}): {e}");
        assert!(e.to_string().contains("exceed"), "{e}");
    }
    // The largest message that fits: 8191 - 156.
    assert!(Bch::new(13, 12, 8191 - 156).is_ok());
}
