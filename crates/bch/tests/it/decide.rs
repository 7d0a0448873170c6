//! The metadata-only decision against the byte decoder: same verdict and same operation count
//! for up to `t` errors; beyond `t`, the decision says uncorrectable and every "corrected"
//! answer of the byte decoder is a miscorrection that the test sees and counts.

use bch::{Bch, CycleModel, DecodeCost, Decoded, Uncorrectable};

use crate::{Rng, distinct_positions, flip, is_codeword, message};

fn codes() -> Vec<Bch> {
    vec![
        Bch::new(13, 12, 4096).unwrap(),
        Bch::new(8, 4, 223).unwrap(),
        Bch::new(10, 6, 900).unwrap(),
        Bch::new(14, 40, 8192).unwrap(),
    ]
}

/// A seeded message with `errors` random flips: (original data, original parity, received
/// data, received parity).
fn corrupted(code: &Bch, rng: &mut Rng, errors: u32) -> [Vec<u8>; 4] {
    let data = message(rng, code);
    let parity = code.encode(&data);
    let (mut d, mut p) = (data.clone(), parity.clone());
    for pos in distinct_positions(rng, code, errors) {
        flip(code, &mut d, &mut p, pos);
    }
    [data, parity, d, p]
}

#[test]
fn up_to_t_errors_decision_and_cost_match_the_decoder() {
    const SEED: u64 = 0xdec1_de00;
    let mut rng = Rng::new(SEED);
    for code in codes() {
        let t = code.t();
        let samples = if t > 20 { 3 } else { 20 };
        let counts: Vec<u32> = [0, 1, 2, t / 2, t - 1, t].into_iter().filter(|&n| n <= t).collect();
        for n in counts {
            for _ in 0..samples {
                let [data, parity, mut d, mut p] = corrupted(&code, &mut rng, n);
                let mut cost = DecodeCost::default();
                let got = code.decode(&mut d, &mut p, &mut cost);
                let decided = code.decide(n);
                assert_eq!(got, decided.result, "{code:?}, {n} errors, seed {SEED:#x}");
                assert_eq!(cost, decided.cost, "{code:?}, {n} errors, seed {SEED:#x}");
                assert!(d == data && p == parity, "{code:?}, {n} errors, seed {SEED:#x}");
            }
        }
    }
}

#[test]
fn beyond_t_the_decision_is_uncorrectable_and_miscorrections_are_visible() {
    const SEED: u64 = 0xbe40_0d00;
    let mut rng = Rng::new(SEED);
    for code in codes() {
        let t = code.t();
        let samples = if t > 20 { 10 } else { 300 };
        let (mut detected, mut miscorrected, mut same_cost) = (0u32, 0u32, 0u32);
        for n in [t + 1, t + 2, 2 * t, 3 * t] {
            let decided = code.decide(n);
            assert_eq!(decided.result, Err(Uncorrectable));
            assert_eq!(decided.cost.flips, 0);
            for _ in 0..samples {
                let [data, parity, mut d, mut p] = corrupted(&code, &mut rng, n);
                let (rd, rp) = (d.clone(), p.clone());
                let mut cost = DecodeCost::default();
                match code.decode(&mut d, &mut p, &mut cost) {
                    Err(Uncorrectable) => {
                        detected += 1;
                        assert!(d == rd && p == rp, "an uncorrectable word is left as received");
                    }
                    Ok(Decoded::Corrected { bits }) => {
                        // A miscorrection: at most t flips cannot undo more than t errors, so the
                        // result is another codeword, never the original.
                        miscorrected += 1;
                        assert!(bits <= t);
                        assert!(d != data || p != parity, "{code:?}: {n} errors undone by {bits}");
                        assert!(is_codeword(&code, &d, &p), "a miscorrection is a codeword");
                    }
                    // Below the minimum distance (2t + 1) no error pattern is a codeword; at
                    // 3t one could be, with probability about 2^-r: none is, in these samples.
                    Ok(Decoded::Clean) => panic!("{code:?}: {n} errors made a codeword"),
                }
                same_cost += u32::from(cost == decided.cost);
            }
        }
        let total = 4 * samples;
        println!(
            "{code:?}: beyond t, {detected} detected, {miscorrected} miscorrected, \
             {same_cost}/{total} at the decided cost"
        );
        assert_eq!(detected + miscorrected, total);
        // The decided cost is that of the usual failing decode.
        assert!(same_cost * 10 >= total * 8, "{code:?}: {same_cost}/{total}, seed {SEED:#x}");
    }
}

#[test]
fn decode_cost_grows_with_the_error_count() {
    let model = CycleModel::default();
    for code in codes() {
        let mut last = code.decode_cost(0);
        assert_eq!(model.cycles(&last), 0, "a clean word costs the ECC core nothing");
        for n in 1..=code.t() {
            let c = code.decode_cost(n);
            assert!(c.software_ops().total() > last.software_ops().total(), "{code:?}: {n}");
            assert!(c.chien_ops.mul > last.chien_ops.mul, "{code:?}: {n}");
            assert!(model.cycles(&c) > model.cycles(&last), "{code:?}: {n}");
            last = c;
        }
    }
    // And the byte decoder's own counts, on one seeded word per error count.
    let code = Bch::new(13, 12, 4096).unwrap();
    let mut rng = Rng::new(0x0c05_7000);
    let mut last = 0;
    for n in 0..=code.t() {
        let [_, _, mut d, mut p] = corrupted(&code, &mut rng, n);
        let mut cost = DecodeCost::default();
        code.decode(&mut d, &mut p, &mut cost).unwrap();
        let ops = cost.software_ops().total() + cost.flips;
        assert!(n == 0 || ops > last, "{n} errors: {ops} ops after {last}");
        last = ops;
    }
}

#[test]
fn costs_accumulate_over_a_page() {
    // Four 512-byte codewords of a 2 KiB page, with 0, 1, 5 and 12 errors.
    let code = Bch::new(13, 12, 4096).unwrap();
    let mut rng = Rng::new(0x9a9e);
    let mut page = DecodeCost::default();
    let mut expect = DecodeCost::default();
    for n in [0, 1, 5, 12] {
        let [_, _, mut d, mut p] = corrupted(&code, &mut rng, n);
        code.decode(&mut d, &mut p, &mut page).unwrap();
        expect += code.decide(n).cost;
    }
    assert_eq!(page, expect);
    assert_eq!(page.software_runs, 3);
    assert_eq!(page.flips, 18);
}
