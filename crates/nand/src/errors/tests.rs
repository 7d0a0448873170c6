//! The model's calibration promises, checked against the defaults of every cell type.

use proptest::prelude::*;
use rand::SeedableRng;
use sim::{SimDuration, SimRng};

use super::*;
use crate::{CellType, PageType};

const CELLS: [CellType; 4] = [CellType::Slc, CellType::Mlc, CellType::Tlc, CellType::Qlc];
/// A 512 B codeword, the firmware ECC's default.
const CW: u32 = 512 * 8;
const DAY: u64 = 86_400;

fn age(n: u32, secs: u64, reads: u64) -> PageAge {
    PageAge { pe_cycles: n, retention: SimDuration::from_secs(secs), reads_since_erase: reads }
}

/// Page-average RBER (the mean of the page types of a word line) on the first read.
fn mean_rber(m: &ErrorModel, a: &PageAge) -> f64 {
    let types = m.cell().page_types();
    types.iter().map(|&p| m.rber(p, a, ReadAttempt::First)).sum::<f64>() / types.len() as f64
}

#[test]
fn a_fresh_device_reads_clean() {
    for cell in CELLS {
        let m = ErrorModel::defaults(cell);
        for &page in cell.page_types() {
            let e = expected_errors(m.rber(page, &PageAge::FRESH, ReadAttempt::First), CW);
            assert!(e < 0.01, "{cell} {page}: {e} expected errors per 512 B codeword when fresh");
        }
    }
}

#[test]
fn aged_tlc_corrects_routinely_and_fails_only_after_long_retention() {
    // At the rated 3,000 cycles, just programmed: about one error per 512 B codeword on
    // average, under two on the worst (MSB) page: corrected, and a 12-bit code almost never
    // fails.
    let m = ErrorModel::defaults(CellType::Tlc);
    let rated = age(3_000, 0, 0);
    let avg = expected_errors(mean_rber(&m, &rated), CW);
    assert!((0.5..2.0).contains(&avg), "{avg} errors per codeword at 3,000 cycles");
    let msb = m.rber(PageType::Msb, &rated, ReadAttempt::First);
    assert!((1.0..3.0).contains(&expected_errors(msb, CW)));
    assert!(codeword_failure_probability(msb, CW, 12) < 1e-6);
    // After a year on the shelf: three to eight errors per codeword on average, and the MSB
    // page fails a 12-bit code now and then (about 2.5% of codewords) before retry.
    let year = age(3_000, 365 * DAY, 0);
    let avg = expected_errors(mean_rber(&m, &year), CW);
    assert!((3.0..8.0).contains(&avg), "{avg} errors per codeword after a year");
    let fail = codeword_failure_probability(m.rber(PageType::Msb, &year, ReadAttempt::First), CW, 12);
    assert!((1e-3..0.1).contains(&fail), "{fail}");
    // The first retry step already brings that under 1%.
    let fail = codeword_failure_probability(m.rber(PageType::Msb, &year, ReadAttempt::Retry(0)), CW, 12);
    assert!(fail < 0.01, "{fail}");
}

#[test]
fn retry_steps_lower_the_rber() {
    for cell in CELLS {
        let mut cfg = ErrorModelConfig::default();
        cfg.retry.soft.enabled = true;
        let m = cfg.model(cell).unwrap();
        let a = age(rated_pe(cell), 90 * DAY, 50_000);
        for &page in cell.page_types() {
            let rbers: Vec<f64> = m.retry().attempts().map(|at| m.rber(page, &a, at)).collect();
            assert!(rbers.windows(2).all(|w| w[1] < w[0]), "{cell} {page}: {rbers:?}");
            // A retry cannot undo wear: it never goes below floor + wear.
            let t = m.terms(page, &a);
            let last_retry = rbers[rbers.len() - 2];
            assert!(last_retry >= t.floor + t.wear);
        }
    }
}

#[test]
fn rber_is_capped() {
    let m = ErrorModel::defaults(CellType::Mlc);
    let ancient = age(100_000, 10 * 365 * DAY, 10_000_000);
    assert_eq!(m.rber(PageType::Msb, &ancient, ReadAttempt::First), 0.5);
}

#[test]
fn draws_are_deterministic_for_a_seed() {
    let m = ErrorModel::defaults(CellType::Tlc);
    let a = age(3_000, 200 * DAY, 20_000);
    let run = |seed| {
        let mut rng = SimRng::seed_from_u64(seed);
        (0..500)
            .map(|_| m.draw_errors(&mut rng, PageType::Csb, &a, ReadAttempt::First, CW))
            .collect::<Vec<_>>()
    };
    assert_eq!(run(42), run(42));
    assert_ne!(run(42), run(43));
    assert!(run(42).iter().any(|&e| e > 0));
}

#[test]
fn bad_configs_are_one_line_errors_naming_the_field() {
    let cases: Vec<(&str, &str)> = vec![
        ("[rber]\ne=1e-7\na=-1\nk=1\nb=0\nm=0\nn=0\nc=0\np=0\nq=0", "rber.a"),
        ("[rber]\ne=1e-7\na=1e-11\nk=nan\nb=0\nm=0\nn=0\nc=0\np=0\nq=0", "rber.k"),
        ("[rber]\ne=1e-7\na=1e-11\nk=1\nb=inf\nm=0\nn=0\nc=0\np=0\nq=0", "rber.b"),
        ("page_factors = [1.0, 1.0]", "page_factors"),
        ("page_factors = [1.0, -1.0, 1.0]", "page_factors"),
        ("max_rber = 0.7", "max_rber"),
        ("max_rber = nan", "max_rber"),
        ("[retry]\nsteps = []", "retry.steps"),
        ("[retry]\nsteps = [0.5, 2.0]", "retry.steps"),
        ("[retry.soft]\nrber_factor = -0.5", "retry.soft.rber_factor"),
        (
            "[wear_out]\nrated_pe=3000\nprogram_fail_at_rated=1e-8\nerase_fail_at_rated=inf\nexponent=3",
            "wear_out.erase_fail_at_rated",
        ),
    ];
    for (text, field) in cases {
        let cfg: ErrorModelConfig = toml::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let err = cfg.model(CellType::Tlc).unwrap_err();
        assert_eq!(err.field, field, "{text}: {err}");
        assert!(!err.to_string().contains('\n'), "{err}");
    }
    assert!(toml::from_str::<ErrorModelConfig>("max_rbr = 0.5").is_err());
    assert!(
        toml::from_str::<ErrorModelConfig>("[rber]\ne=1e-7").is_err(),
        "all nine parameters are required"
    );
    // An empty table is fine when retry is off.
    let off: ErrorModelConfig = toml::from_str("[retry]\nenabled = false\nsteps = []").unwrap();
    off.model(CellType::Tlc).unwrap();
}

#[test]
fn the_example_in_docs_errors_md_is_the_tlc_default() {
    // Kept in step with the TOML block in docs/errors.md.
    let text = r#"
# all optional; cell-dependent values default to the cell type's
max_rber = 0.5
page_factors = [0.43, 0.86, 1.71]        # one per page type, word-line order

[rber]                                    # all nine, or none
e = 5e-7
a = 1.86e-11
k = 2.05
b = 1.01e-5
m = 0.14
n = 0.54
c = 2.0e-13
p = 0.33
q = 1.71

[retry]
enabled = true
steps = [0.7, 0.5, 0.35, 0.25, 0.18, 0.13, 0.1, 0.08]

[retry.soft]
enabled = false
rber_factor = 0.1
extra_reads = 6
decode_cycles = 200000

[wear_out]                                # all four, or none
rated_pe = 3000
program_fail_at_rated = 5.2e-8
erase_fail_at_rated = 1.3e-5
exponent = 3.0"#;
    let cfg: ErrorModelConfig = toml::from_str(text).unwrap();
    let m = cfg.model(CellType::Tlc).unwrap();
    let d = ErrorModel::defaults(CellType::Tlc);
    assert_eq!(m.retry(), d.retry());
    assert_eq!(m.wear_out().rated_pe, 3_000);
    for &page in CellType::Tlc.page_types() {
        let a = age(3_000, 100 * DAY, 1_000);
        let (x, y) = (m.rber(page, &a, ReadAttempt::First), d.rber(page, &a, ReadAttempt::First));
        assert!((x / y - 1.0).abs() < 0.01, "{page}: {x} vs {y}");
    }
}

#[test]
fn the_default_config_round_trips() {
    for cell in CELLS {
        let cfg = ErrorModelConfig::default().resolved(cell);
        let text = toml::to_string(&cfg).unwrap();
        let back: ErrorModelConfig = toml::from_str(&text).unwrap();
        assert_eq!(back, cfg, "{text}");
        assert_eq!(back.model(cell).unwrap(), ErrorModel::defaults(cell));
    }
}

#[test]
#[should_panic(expected = "mlc cells have no CSB pages")]
fn a_page_type_the_cell_lacks_is_a_bug() {
    ErrorModel::defaults(CellType::Mlc).rber(PageType::Csb, &PageAge::FRESH, ReadAttempt::First);
}

proptest! {
    #[test]
    fn rber_never_falls_as_the_page_wears_ages_or_is_read(
        cell in 0usize..4,
        page in 0usize..4,
        n in 0u32..200_000, dn in 0u32..50_000,
        t in 0u64..(5 * 365 * DAY), dt in 0u64..(365 * DAY),
        r in 0u64..5_000_000, dr in 0u64..1_000_000,
    ) {
        let cell = CELLS[cell];
        let page = cell.page_types()[page % cell.bits()];
        let m = ErrorModel::defaults(cell);
        let base = m.rber(page, &age(n, t, r), ReadAttempt::First);
        for older in [age(n + dn, t, r), age(n, t + dt, r), age(n, t, r + dr)] {
            let x = m.rber(page, &older, ReadAttempt::First);
            prop_assert!(x >= base, "{} {}: {:?} gives {} < {}", cell, page, older, x, base);
        }
        prop_assert!((0.0..=0.5).contains(&base));
    }
}
