//! Analytic models of cleaning under uniform random writes, for defaults and for comparing
//! measured write amplification with theory.
//!
//! FIFO cleaning (Desnoyers, "Analytic modeling of SSD write performance", SYSTOR 2012; the
//! same equation as Hu et al.'s LRW analysis): a block is cleaned after the device has written
//! its whole physical space again, in which time each of its units was overwritten with
//! probability 1 - e^(-alpha (1 - u)), where alpha is physical over logical capacity and
//! 1 - u the share of writes that are the host's. The victim's valid fraction u therefore
//! solves u = e^(-alpha (1 - u)), whose root below 1 is u = -W0(-alpha e^-alpha) / alpha;
//! write amplification is 1 / (1 - u). Xiang and Kurkoski's expression for greedy cleaning
//! with large blocks ([`greedy_waf`]) is the same closed form: greedy's victims are as empty
//! as FIFO's in that limit and emptier with small blocks.
//!
//! Greedy with b units per block ([`greedy_waf_blocks`]): the mean-field (many blocks) fixed
//! point, derived in that function's doc; it tends to the closed form above as b grows and
//! matches measured greedy within 1% at 128 units per block (docs/gc-theory.md). DFTL's dirty
//! evictions under uniform random writes: [`dftl_dirty_evicted`].
//!
//! Capacity conventions: `op` here is the firmware's `ftl.op`, spare over physical; `rho` is
//! spare over logical (Xiang and Kurkoski's over-provisioning factor: their WA of 2.36 at
//! rho = 0.3 is a test); `alpha` is physical over logical = 1 / (1 - op) = 1 + rho.

/// The principal branch of the Lambert W function on (-1/e, 0] (Halley's iteration).
///
/// # Panics
/// If `x` is outside that domain.
pub fn lambert_w0(x: f64) -> f64 {
    assert!((-1.0 / std::f64::consts::E..=0.0).contains(&x), "W0 domain: {x}");
    let p = (2.0 * (std::f64::consts::E * x + 1.0)).sqrt();
    let mut w = -1.0 + p - p * p / 3.0;
    for _ in 0..50 {
        let e = w.exp();
        let f = w * e - x;
        let step = f / (e * (w + 1.0) - (w + 2.0) * f / (2.0 * w + 2.0));
        w -= step;
        if step.abs() < 1e-14 {
            break;
        }
    }
    w
}

/// The valid fraction of a steady-state victim at physical over logical capacity `alpha`
/// (> 1): -W0(-alpha e^-alpha) / alpha.
fn victim_valid(alpha: f64) -> f64 {
    -lambert_w0(-alpha * (-alpha).exp()) / alpha
}

/// The valid fraction of a FIFO victim in the steady state at over-provisioning `op` (the
/// fraction of raw capacity hidden from the host, in (0, 1)): the root below 1 of
/// u = e^(-alpha (1 - u)), alpha = 1 / (1 - op).
pub fn fifo_victim_valid(op: f64) -> f64 {
    victim_valid(1.0 / (1.0 - op))
}

/// Write amplification of FIFO cleaning at over-provisioning `op`.
pub fn fifo_waf(op: f64) -> f64 {
    1.0 / (1.0 - fifo_victim_valid(op))
}

/// Write amplification of greedy GC under uniform random writes, from L. Xiang and
/// B. M. Kurkoski, "An Improved Analytic Expression for Write Amplification in NAND Flash",
/// ICNC 2012 (arXiv:1110.4245): WA = (1 + rho) / (1 + rho + W0(-(1 + rho) e^-(1 + rho))),
/// where rho = (physical - logical) / logical is the over-provisioning factor.
pub fn greedy_waf(rho: f64) -> f64 {
    1.0 / (1.0 - victim_valid(1.0 + rho))
}

/// Write amplification of LRW (least recently written, i.e. FIFO) cleaning at physical over
/// logical capacity `alpha` (> 1): Desnoyers' closed form, the same as [`fifo_waf`] with
/// op = 1 - 1 / alpha, and Xiang and Kurkoski's large-block greedy expression ([`greedy_waf`])
/// at rho = alpha - 1.
pub fn lrw_waf(alpha: f64) -> f64 {
    1.0 / (1.0 - victim_valid(alpha))
}

/// The mean valid units of a greedy victim, as a fraction of the block's `b` units, under
/// uniform random writes at physical over logical capacity `alpha` (> 1), in the mean-field
/// (many blocks) limit with blocks of `b` units.
///
/// The fluid picture: a block at level j (j valid units) loses one at rate j / U per host
/// write (U logical units, each write kills a uniformly chosen valid unit). Closed blocks
/// enter at level b at rate r per host write; greedy erases the lowest occupied level. In the
/// steady state every level above the victims' carries the same flow r, so it holds r U / j
/// blocks; the victims are a mix of levels k - 1 and k (mean v = k - f, f in [0, 1)), and
/// level k holds r f U / k. The blocks add up to N = r U (H_b - H_k + f / k) (H the harmonic
/// numbers), and each victim frees b - v units for host writes, so r = 1 / (b - v). With
/// alpha = N b / U:
///
/// ```text
///   b (H_b - H_k + f / k) = alpha (b - v),   v = k - f,   WAF = b / (b - v)
/// ```
///
/// As b grows, H_b - H_k tends to ln(b / v) and this becomes u = e^(-alpha (1 - u)) with
/// u = v / b: greedy's victims then are FIFO's (the large-block limit of [`greedy_waf`]). With
/// few units per block greedy's victims are emptier. This is the mean-field approach of
/// Van Houdt ("A mean field model for a class of garbage collection algorithms in flash-based
/// solid state drives", SIGMETRICS 2013), worked out here for greedy; it is exact only as the
/// number of blocks grows, and it ignores the open blocks and the blocks GC keeps free (the
/// caller accounts for them in `alpha`). If alpha >= H_b the victims are empty (0).
pub fn greedy_victim_valid_blocks(alpha: f64, b: u32) -> f64 {
    assert!(alpha > 1.0 && b >= 1, "greedy model: alpha {alpha} must exceed 1, b {b} at least 1");
    let b_f = b as f64;
    // H_b - H_k for k = 0..=b.
    let mut tail = vec![0.0; b as usize + 1];
    for k in (0..b as usize).rev() {
        tail[k] = tail[k + 1] + 1.0 / (k + 1) as f64;
    }
    let g = |v: f64| {
        let k = (v.ceil() as usize).max(1);
        let f = k as f64 - v;
        b_f * (tail[k] + f / k as f64) - alpha * (b_f - v)
    };
    if g(0.0) <= 0.0 {
        return 0.0;
    }
    // g > 0 at 0 and < 0 at b - 1 (and on up to b, where the trivial root is).
    let (mut lo, mut hi) = (0.0, b_f - 1.0);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if g(mid) > 0.0 { lo = mid } else { hi = mid }
    }
    0.5 * (lo + hi) / b_f
}

/// Write amplification of greedy cleaning with blocks of `b` units at physical over logical
/// capacity `alpha`: 1 / (1 - [`greedy_victim_valid_blocks`]).
pub fn greedy_waf_blocks(alpha: f64, b: u32) -> f64 {
    1.0 / (1.0 - greedy_victim_valid_blocks(alpha, b))
}

/// DFTL under uniform random writes with a CMT caching a fraction `coverage` (0..=1) of the
/// map in segments, `siblings` segments to a translation page: the share of evicted segments
/// still dirty when they reach the LRU tail.
///
/// Every miss (1 - coverage of the mapping updates) loads a segment and evicts one; under
/// writes alone every cached segment was dirtied when last touched, and it is cleaned before
/// its eviction only if a sibling on its translation page is evicted dirty meanwhile (which
/// writes the whole page). From its last touch a segment stays for the n = S ln(1 / (1 -
/// coverage)) updates it takes to touch the cache's worth of other segments (S segments in
/// all), during which each sibling is evicted (1 - coverage) n / S times on average, dirty
/// with probability q. Taking those evictions as a Poisson stream, q solves
/// q = exp(-(siblings - 1) q (1 - coverage) ln(1 / (1 - coverage))). Translation-page writes
/// per mapping update from evictions are then (1 - coverage) q. This is an approximation
/// (independent evictions, no GC), derived here; it does not count the pages the mapping
/// flusher rewrites for units GC moved.
pub fn dftl_dirty_evicted(coverage: f64, siblings: u32) -> f64 {
    let c = coverage.clamp(0.0, 1.0);
    if c >= 1.0 {
        return 0.0;
    }
    let a = (siblings.max(1) - 1) as f64 * (1.0 - c) * -(1.0 - c).ln();
    let mut q = 1.0;
    for _ in 0..200 {
        q = 0.5 * q + 0.5 * (-a * q).exp();
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fifo_victim_solves_its_equation_below_one() {
        for op in [0.001, 0.02, 0.07, 0.12, 0.2, 0.28, 0.5, 0.9] {
            let u = fifo_victim_valid(op);
            let alpha = 1.0 / (1.0 - op);
            assert!((0.0..1.0).contains(&u), "op {op}: u = {u}");
            assert!((u - (-alpha * (1.0 - u)).exp()).abs() < 1e-9, "op {op}: u = {u} is not a root");
        }
    }

    #[test]
    fn more_over_provisioning_gives_emptier_victims() {
        let us: Vec<f64> =
            [0.05, 0.07, 0.12, 0.2, 0.28, 0.5].iter().map(|&op| fifo_victim_valid(op)).collect();
        assert!(us.windows(2).all(|w| w[1] < w[0]), "{us:?}");
        let wafs: Vec<f64> = [0.05, 0.07, 0.28].iter().map(|&op| fifo_waf(op)).collect();
        assert!(wafs[0] > 9.0 && (7.0..7.6).contains(&wafs[1]) && (1.9..2.1).contains(&wafs[2]), "{wafs:?}");
    }

    #[test]
    fn greedy_with_large_blocks_tends_to_the_lambert_limit() {
        for alpha in [1.0 / 0.93, 1.0 / 0.8, 2.0] {
            let big = greedy_waf_blocks(alpha, 100_000);
            assert!((big / lrw_waf(alpha) - 1.0).abs() < 1e-3, "alpha {alpha}: {big} vs {}", lrw_waf(alpha));
            let small = greedy_waf_blocks(alpha, 8);
            assert!(
                small < greedy_waf_blocks(alpha, 128) && greedy_waf_blocks(alpha, 128) < big,
                "{small} {big}"
            );
        }
        // Blocks of 8 units at 7% OP (alpha = 1/0.93): greedy's victims are much emptier.
        let w = greedy_waf_blocks(1.0 / 0.93, 8);
        assert!((3.8..4.1).contains(&w), "{w}");
        assert_eq!(greedy_victim_valid_blocks(100.0, 8), 0.0);
    }

    #[test]
    fn dftl_evictions_are_dirty_when_the_cache_is_small() {
        assert!(dftl_dirty_evicted(1.0 / 512.0, 16) > 0.95);
        let half = dftl_dirty_evicted(0.5, 16);
        assert!(half < 0.5 && (half - (-5.2 * half).exp()).abs() < 0.02, "{half}");
        assert_eq!(dftl_dirty_evicted(1.0, 16), 0.0);
        assert!((dftl_dirty_evicted(0.5, 1) - 1.0).abs() < 1e-9);
    }
}
