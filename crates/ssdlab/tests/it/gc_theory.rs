//! Issue 27 item 5: steady-state WAF of uniform random 4 KiB writes on a page-mapped device
//! against the analytic models (`ssdlab::gc_theory`, docs/gc-theory.md): greedy against its
//! mean-field model with the simulated block size, FIFO against Desnoyers' closed form, each
//! evaluated at the spare space the firmware really has (free and open blocks accounted for).
//!
//! CI size: one plane of 512 blocks of 128 pages (256 MiB); the full-size sweep is
//! `ssdlab figure gc-theory` (2048 blocks) and the `#[ignore]`d test below.

use firmware::ftl::VictimPolicy;
use ssdlab::gc_theory::{Measured, Setup, measure};

const OPS: [f64; 5] = [0.07, 0.12, 0.20, 0.28, 0.50];

fn point(blocks: u32, op: f64, victim: VictimPolicy) -> Measured {
    let m = measure(&Setup::new(blocks, 128, op, victim, 7)).unwrap_or_else(|e| panic!("{e}"));
    println!(
        "{:<12} op {:.2}: measured {:.3} (windows {:?}), model {:.3} ({:+.1}%), free {:.1}, alpha {:.4} (nominal {:.4}), victims {:.3} valid (greedy model {:.3})",
        m.victim,
        op,
        m.waf,
        m.window_waf.iter().map(|w| (w * 1000.0).round() / 1000.0).collect::<Vec<_>>(),
        m.model(),
        m.deviation() * 100.0,
        m.mean_free_blocks,
        m.alpha,
        m.alpha_nominal,
        m.victim_valid,
        m.greedy_model_valid(),
    );
    m
}

/// Every OP point of `victim`, each checked; returns them in `OPS` order.
fn check(blocks: u32, victim: VictimPolicy) -> Vec<Measured> {
    let mut all = Vec::new();
    for op in OPS {
        let m = point(blocks, op, victim);
        assert!(m.window_spread() < 0.03, "{op}: not in steady state, windows {:?}", m.window_waf);
        assert!(
            m.deviation().abs() < 0.05,
            "{} at op {op}: measured {:.3} vs model {:.3} ({:+.1}%)",
            m.victim,
            m.waf,
            m.model(),
            m.deviation() * 100.0
        );
        all.push(m);
    }
    all
}

#[test]
fn greedy_waf_is_within_5_percent_of_its_model_at_every_op() {
    let points = check(512, VictimPolicy::Greedy);
    // The check can tell the models apart: with 128 units per block greedy's victims at 7%
    // are emptier than the large-block limit (Xiang-Kurkoski, = FIFO's closed form) says.
    let m = &points[0];
    assert!(m.waf < 0.97 * m.lrw_model(), "greedy {:.3} vs large-block model {:.3}", m.waf, m.lrw_model());
}

#[test]
fn fifo_waf_is_within_5_percent_of_desnoyers_model_at_every_op() {
    let _ = check(512, VictimPolicy::Fifo);
}

/// The figure's size (2048 blocks, 1 GiB):
/// `cargo test --release -p ssdlab --test it gc_theory -- --ignored --nocapture`.
#[test]
#[ignore]
fn greedy_and_fifo_full_size() {
    let _ = check(2048, VictimPolicy::Greedy);
    let _ = check(2048, VictimPolicy::Fifo);
}
