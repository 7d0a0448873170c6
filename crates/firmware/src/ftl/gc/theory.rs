//! Analytic models of cleaning under uniform random writes, for defaults and for comparing
//! measured write amplification with theory.
//!
//! FIFO cleaning (Desnoyers, "Analytic modeling of SSD write performance", SYSTOR 2012; the
//! same equation as Hu et al.'s LRW analysis): a block is cleaned after the device has written
//! its whole physical space again, in which time each of its units was overwritten with
//! probability 1 - e^(-alpha (1 - u)), where alpha is physical over logical capacity and
//! 1 - u the share of writes that are the host's. The victim's valid fraction u therefore
//! solves u = e^(-alpha (1 - u)); write amplification is 1 / (1 - u). Greedy cleaning's
//! victims are at least as empty.

/// The valid fraction of a FIFO victim in the steady state at over-provisioning `op` (the
/// fraction of raw capacity hidden from the host, in (0, 1)): the root below 1 of
/// u = e^(-alpha (1 - u)), alpha = 1 / (1 - op).
pub fn fifo_victim_valid(op: f64) -> f64 {
    let alpha = 1.0 / (1.0 - op);
    // Newton's method on f(u) = u - e^(-alpha (1 - u)) from 0: f is concave, negative at 0 and
    // rising up to the lower root, so the iterates rise monotonically to it (1 is the other).
    let mut u = 0.0f64;
    for _ in 0..200 {
        let g = (-alpha * (1.0 - u)).exp();
        let next = u - (u - g) / (1.0 - alpha * g);
        if next.is_nan() || next <= u || next >= 1.0 {
            break;
        }
        u = next;
    }
    u
}

/// Write amplification of FIFO cleaning at over-provisioning `op`.
pub fn fifo_waf(op: f64) -> f64 {
    1.0 / (1.0 - fifo_victim_valid(op))
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
