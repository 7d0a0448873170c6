//! The ECC module, on its own controller core as in SoftSSD: detection is done by hardware on
//! every read and costs nothing; a page whose codewords have bit errors goes to the ECC core,
//! which spends `correct_cycles` per erroneous codeword. Bit errors follow a raw bit error rate
//! that grows with the block's P/E cycles; the default rate is 0, so by default nothing is
//! ever corrected.

use std::cell::RefCell;
use std::rc::Rc;

use rand::RngExt;
use serde::{Deserialize, Serialize};
use sim::config::{ConfigError, ensure};
use sim::sync::{Ring, RingSpec, oneshot};
use sim::{ByteSize, CoreId, Cx, SimRng};

/// ECC configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EccConfig {
    /// Codeword size. Default: 512B.
    #[serde(default = "default_codeword")]
    pub codeword: ByteSize,
    /// Bits corrected per codeword. Default: 12 (SoftSSD's BCH).
    #[serde(default = "default_correctable")]
    pub correctable: u32,
    /// Raw bit error rate of a fresh block. Default: 0.
    #[serde(default)]
    pub rber: f64,
    /// Added to the raw bit error rate per P/E cycle of the block. Default: 0.
    #[serde(default)]
    pub rber_per_pe: f64,
    /// ECC-core cycles to correct one codeword that has errors. Default: 20000.
    #[serde(default = "default_correct_cycles")]
    pub correct_cycles: u64,
}

fn default_codeword() -> ByteSize {
    ByteSize(512)
}
fn default_correctable() -> u32 {
    12
}
fn default_correct_cycles() -> u64 {
    20_000
}

impl Default for EccConfig {
    fn default() -> Self {
        EccConfig {
            codeword: default_codeword(),
            correctable: default_correctable(),
            rber: 0.0,
            rber_per_pe: 0.0,
            correct_cycles: default_correct_cycles(),
        }
    }
}

impl EccConfig {
    /// Checks the fields against the page size.
    pub fn validate(&self, page_bytes: u32) -> Result<(), ConfigError> {
        let cw = self.codeword.bytes();
        ensure(cw >= 64 && (page_bytes as u64).is_multiple_of(cw), "codeword", || {
            format!("must be at least 64B and divide the {page_bytes}-byte page (got {})", self.codeword)
        })?;
        for (name, v) in [("rber", self.rber), ("rber_per_pe", self.rber_per_pe)] {
            ensure(v.is_finite() && (0.0..0.01).contains(&v), name, || {
                format!("must be in [0, 0.01) (got {v})")
            })?;
        }
        Ok(())
    }

    /// Whether bit errors happen at all (the ECC core has work).
    pub fn enabled(&self) -> bool {
        self.rber > 0.0 || self.rber_per_pe > 0.0
    }
}

/// More bit errors than the ECC corrects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Uncorrectable;

struct Job {
    codewords: u32,
    done: oneshot::Sender<()>,
}

/// The ECC module. Cheap to clone.
#[derive(Clone)]
pub struct Ecc {
    cx: Cx,
    cfg: EccConfig,
    codewords: u32,
    ring: Rc<Ring<Job>>,
    rng: Rc<RefCell<SimRng>>,
}

impl Ecc {
    /// Starts the ECC core's service loop, or returns `None` when the error rate is zero (every
    /// read passes detection; nothing to model).
    pub fn start(cx: &Cx, core: CoreId, cfg: &EccConfig, page_bytes: u32) -> Option<Ecc> {
        if !cfg.enabled() {
            return None;
        }
        let ring: Rc<Ring<Job>> = Rc::new(Ring::new(cx, "ecc ring", RingSpec::default()));
        let (r, c, cycles) = (ring.clone(), cx.clone(), cfg.correct_cycles);
        cx.spawn_daemon(core, "ecc", async move {
            while let Some(job) = r.pop().await {
                c.compute(cycles * job.codewords as u64).await;
                job.done.send(());
            }
        });
        Some(Ecc {
            cx: cx.clone(),
            cfg: cfg.clone(),
            codewords: page_bytes / cfg.codeword.bytes() as u32,
            ring,
            rng: Rc::new(RefCell::new(cx.fork_rng())),
        })
    }

    /// Checks one page read from a block with `erase_count` P/E cycles: draws the bit errors of
    /// each codeword and, if any has errors, has the ECC core correct them.
    pub async fn check(&self, erase_count: u32) -> Result<(), Uncorrectable> {
        let rber = self.cfg.rber + self.cfg.rber_per_pe * erase_count as f64;
        let lambda = rber * self.cfg.codeword.bytes() as f64 * 8.0;
        let mut erroneous = 0;
        let mut worst = 0;
        {
            let mut rng = self.rng.borrow_mut();
            for _ in 0..self.codewords {
                let e = poisson(lambda, &mut rng);
                erroneous += (e > 0) as u32;
                worst = worst.max(e);
            }
        }
        if erroneous > 0 {
            let (tx, rx) = oneshot::channel(&self.cx, "ecc correction");
            self.ring.push(Job { codewords: erroneous, done: tx }).await;
            let _ = rx.await;
        }
        if worst > self.cfg.correctable { Err(Uncorrectable) } else { Ok(()) }
    }
}

/// A Poisson-distributed count with mean `lambda` (Knuth's method; fine for small means).
fn poisson(lambda: f64, rng: &mut SimRng) -> u32 {
    if lambda <= 0.0 {
        return 0;
    }
    let limit = (-lambda).exp();
    let mut p = 1.0;
    let mut k = 0;
    loop {
        p *= rng.random::<f64>();
        if p <= limit || k > 10_000 {
            return k;
        }
        k += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn poisson_mean_matches() {
        let mut rng = SimRng::seed_from_u64(3);
        let n = 20_000;
        let mean = (0..n).map(|_| poisson(2.5, &mut rng) as f64).sum::<f64>() / n as f64;
        assert!((mean - 2.5).abs() < 0.05, "{mean}");
        assert_eq!(poisson(0.0, &mut rng), 0);
    }
}
