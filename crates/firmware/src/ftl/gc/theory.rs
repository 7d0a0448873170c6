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
}
