//! A binary BCH codec for ssdlab's ECC model.
//!
//! # Where it sits
//!
//! In the HIL -> FTL -> FIL -> NAND flow, a flash read returns a page whose codewords the
//! controller checks before the FIL hands the data up. As in SoftSSD, detection is hardware:
//! an LFSR divides every codeword by the generator polynomial as it streams in, and a non-zero
//! remainder yields the syndromes. Correction is software on an ECC core: Berlekamp–Massey
//! finds the error-locator polynomial, a Chien search finds its roots, and the located bits
//! are flipped. This crate is that codec, with two faces:
//!
//! * **bytes**: [`Bch::encode`] / [`Bch::decode`] on a data slice and its parity (for page
//!   stores that keep payloads);
//! * **metadata only**: [`Bch::decide`] says what the decoder would do with a codeword that has
//!   a given number of bit errors, and at what cost, without any bytes.
//!
//! Both report a [`DecodeCost`]: the GF(2^m) multiplications, additions and inversions each
//! phase executed. [`CycleModel`] turns the software phases into ECC-core cycles.
//!
//! # The code
//!
//! ```text
//!   GF(2^m), alpha a root of the primitive polynomial p(x) (Lin & Costello, Table 2.7)
//!   g(x) = lcm(m_1(x), m_2(x), ..., m_2t(x))        m_i: minimal polynomial of alpha^i
//!   r = deg g <= m t                                 parity bits
//!   codeword c(x) = x^r d(x) + (x^r d(x) mod g(x))   systematic, n = data_bits + r
//!                   └ data ┘   └──── parity ────┘
//! ```
//!
//! The full code has length `2^m - 1`; it is shortened to `data_bits` of message by taking the
//! leading message bits as zero (they are neither stored nor searched). A 512-byte sector with
//! t = 12 (SoftSSD's default) needs m = 13 and 156 parity bits (20 bytes of OOB); 1 KiB at
//! t = 40 needs m = 14 (560 bits, 70 bytes); 2 KiB at t = 40 needs m = 15 (600 bits, 75
//! bytes).
//!
//! # Example
//!
//! ```
//! use bch::{Bch, DecodeCost, Decoded, CycleModel};
//!
//! let code = Bch::new(13, 12, 4096)?;            // 512 B, t = 12
//! assert_eq!(code.parity_bytes(), 20);
//! let mut data = vec![0x5a; 512];
//! let mut parity = code.encode(&data);
//! data[100] ^= 0x81;                             // two bit errors in the data
//! parity[3] ^= 0x10;                             // and one in the parity
//! let mut cost = DecodeCost::default();
//! assert_eq!(code.decode(&mut data, &mut parity, &mut cost), Ok(Decoded::Corrected { bits: 3 }));
//! assert_eq!(data, vec![0x5a; 512]);
//! // The same verdict and cost without bytes:
//! let outcome = code.decide(3);
//! assert_eq!(outcome.result, Ok(Decoded::Corrected { bits: 3 }));
//! assert_eq!(outcome.cost, cost);
//! let cycles = CycleModel::default().cycles(&cost);
//! assert!(cycles > 0);
//! # Ok::<(), bch::BchError>(())
//! ```
//!
//! # Why not a crate from crates.io
//!
//! Checked before writing this one (docs.rs): `reed-solomon`, `reed-solomon-32` and
//! `reed-solomon-erasure` are Reed–Solomon codes over byte (or 5-bit) symbols, not binary BCH;
//! `labrador-ldpc`, `ldpc` and `ldpc-toolbox` are LDPC codes; `code-rs` has one fixed
//! (63, 16, 23) BCH code; `bchlib` / `bchlib-sys` bind the Linux kernel's C library (GPL-2.0,
//! which this MIT/Apache workspace cannot take, and unmaintained since 2019); `comnum-fec` has a
//! configurable shortened binary BCH, but takes one bit per byte, allocates per call, pulls in
//! a large signal-processing stack and reports no operation counts, which the simulator needs
//! to charge the decoder's work. None offers the metadata-only decision.
//!
//! # Determinism
//!
//! Everything here is a pure function of its inputs: no randomness, no clock, no globals.

mod code;
mod cost;
mod decide;
mod decode;
mod field;
mod generator;
mod lfsr;

pub use code::{Bch, BchError};
pub use cost::{CycleModel, DecodeCost, OpCount};
pub use decide::Outcome;
pub use decode::{Decoded, Uncorrectable};
