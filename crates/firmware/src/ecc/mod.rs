//! The ECC module, on its own controller core as in SoftSSD: detection is done by hardware on
//! every read and costs nothing; a page whose codewords have bit errors goes to the ECC core.
//!
//! Two ways to have bit errors (neither by default, so by default nothing is ever corrected):
//!
//! - **The error model** (`[ecc.errors]`, see `docs/errors.md`): each codeword's errors are
//!   drawn from the NAND raw-bit-error model ([`nand::errors`]) for the page's type, its
//!   block's P/E cycles, the time since the block was first programmed (retention) and the
//!   reads to it since its erase (read disturb), and decoded by a binary BCH code
//!   ([`bch::Bch`], t = `correctable` bits per `codeword`): the ECC core is charged the
//!   cycles of the operations the software decoder performs for that many errors
//!   (Berlekamp–Massey and Chien search, [`bch::CycleModel`]); syndromes are hardware. A
//!   codeword beyond t is uncorrectable (detected: the metadata-only decision, see
//!   `docs/bch.md`), and the FTL retries the read down the model's retry table. In payload
//!   and image modes the same counts are flipped as real bits of the page and its parity in
//!   the buffer read, and the decoder corrects them there (see [`Ecc::check`]).
//! - **The flat rate** (`rber`, `rber_per_pe`): Poisson errors per codeword at a rate that
//!   grows with P/E cycles, `correct_cycles` per erroneous codeword, no retry (the model
//!   before the error model, kept for configurations that use it; like the error model it
//!   now decodes only the codewords of the units a read asks for, not the whole page's).

use std::cell::RefCell;
use std::rc::Rc;

use nand::errors::{ErrorModel, PageAge, ReadAttempt};
use nand::{BlockIdx, CellType};
use rand::RngExt;
use sim::sync::{Ring, RingSpec, oneshot};
use sim::{CoreId, Cx, SimRng, SimTime};

mod config;
mod stats;

pub use config::{EccConfig, OOB_FTL_BYTES_PER_UNIT};
pub use stats::EccStats;

/// More bit errors than the ECC corrects, with the ECC-core cycles spent finding out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Uncorrectable {
    /// Decoder cycles spent on the page (the failed codewords' and the others').
    pub cycles: u64,
}

/// A page read that decoded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Corrected {
    /// Codewords that had errors (0: the page read clean).
    pub codewords: u32,
    /// Bits corrected.
    pub bits: u32,
    /// ECC-core cycles spent.
    pub cycles: u64,
}

/// Where a page read comes from, as the error model needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRead {
    /// The page's block.
    pub block: BlockIdx,
    /// The page's index in its block (its page type follows from it).
    pub offset: u32,
    /// The block's P/E cycles.
    pub erase_count: u32,
    /// Reads to the block since its erase.
    pub reads_since_erase: u32,
    /// Bytes of data read (the mapping units asked for): only their codewords go through the
    /// ECC, as only they cross the channel. 0 or more than the page: the whole page.
    pub data_bytes: u32,
}

/// A page read's bytes, which the ECC corrects in place (payload and image modes, under the
/// error model).
pub struct PageBytes<'a> {
    /// The page as read.
    pub data: &'a mut [u8],
    /// Its ECC parity, codeword after codeword ([`nand::parity`]).
    pub parity: &'a mut [u8],
    /// The mapping units the read asked for (bit i: unit i of the page): only their codewords
    /// are decoded, and only they may be returned.
    pub units: u32,
    /// Bytes per mapping unit.
    pub unit_bytes: u32,
}

struct Job {
    cycles: u64,
    done: oneshot::Sender<()>,
}

/// What the ECC counts of the codewords it checks (see the fields of [`EccStats`]).
#[derive(Default)]
struct Tally {
    codewords: u64,
    bits: u64,
    failed: u64,
    /// Codewords by their errors, 0..=t.
    by_errors: Vec<u64>,
}

impl Tally {
    fn codeword(&mut self, errors: u32) {
        self.codewords += 1;
        match self.by_errors.get_mut(errors as usize) {
            Some(n) => {
                *n += 1;
                self.bits += errors as u64;
            }
            None => self.failed += 1,
        }
    }
}

/// The ECC core's decoding time: every decode started, charged in full when it starts, and
/// when the last one ends (the part after now is not yet spent).
#[derive(Default)]
struct Busy {
    charged_ns: std::cell::Cell<u64>,
    until: std::cell::Cell<SimTime>,
}

/// The error model at run time: the NAND model, the code and what decoding costs.
struct Model {
    errors: ErrorModel,
    cell: CellType,
    codeword_bits: u32,
    /// ECC-core cycles to decode a codeword with `n` errors, n = 0..=t (0 for n = 0: the
    /// hardware syndromes pass it), and beyond t (the decoder runs and fails).
    cycles: Vec<u64>,
    fail_cycles: u64,
    /// The code and its cycle model, for decoding real bytes.
    code: bch::Bch,
    cost_model: bch::CycleModel,
    /// When each block was first programmed since its erase (retention counts from there: the
    /// block's oldest page). Blocks programmed before the run count from its start.
    programmed_at: RefCell<Vec<SimTime>>,
}

/// The ECC module. Cheap to clone.
#[derive(Clone)]
pub struct Ecc {
    cx: Cx,
    cfg: EccConfig,
    codewords: u32,
    ring: Rc<Ring<Job>>,
    rng: Rc<RefCell<SimRng>>,
    /// Where in a codeword its errors fall, in payload mode: a stream of its own (the count
    /// stream jumped 2^128 draws ahead), so that the counts drawn, and so every decision,
    /// are the metadata mode's, draw for draw.
    positions: Rc<RefCell<(SimRng, Vec<u32>)>>,
    model: Option<Rc<Model>>,
    /// The read attempts a failing read goes through (see [`attempts`](Self::attempts)).
    attempts: Rc<[ReadAttempt]>,
    /// Draws of program and erase failures: the read stream's generator jumped 2^192 draws
    /// ahead, so that failures neither shift the read errors' draws nor any other component's.
    wear_rng: Rc<RefCell<SimRng>>,
    tally: Rc<RefCell<Tally>>,
    busy: Rc<Busy>,
}

impl Ecc {
    /// Starts the ECC core's service loop, or returns `None` when no bit errors are configured
    /// (every read passes detection; nothing to model). `cell` and `blocks` are the array's.
    ///
    /// # Panics
    /// If `cfg` does not validate.
    pub fn start(
        cx: &Cx,
        core: CoreId,
        cfg: &EccConfig,
        page_bytes: u32,
        cell: CellType,
        blocks: u32,
    ) -> Option<Ecc> {
        if !cfg.enabled() {
            return None;
        }
        let ring: Rc<Ring<Job>> = Rc::new(Ring::new(cx, "ecc ring", RingSpec::default()));
        let (r, c) = (ring.clone(), cx.clone());
        let busy = Rc::new(Busy::default());
        let b = busy.clone();
        cx.spawn_daemon(core, "ecc", async move {
            while let Some(job) = r.pop().await {
                // The daemon holds its core when it runs: the decode starts now.
                let d = c.cycles(core, job.cycles);
                b.charged_ns.set(b.charged_ns.get() + d.as_nanos());
                b.until.set(c.now() + d);
                c.compute(job.cycles).await;
                job.done.send(());
            }
        });
        let model = cfg.error_model().map(|e| {
            let errors = e.model(cell).expect("validated ECC configuration");
            let code = cfg.code().expect("validated ECC configuration");
            let cm = bch::CycleModel::default();
            let cycles =
                (0..=code.t()).map(|n| if n == 0 { 0 } else { cm.cycles(&code.decode_cost(n)) }).collect();
            let fail_cycles = cm.cycles(&code.decide(code.t() + 1).cost);
            Rc::new(Model {
                errors,
                cell,
                codeword_bits: (cfg.codeword.bytes() * 8) as u32,
                cycles,
                fail_cycles,
                code,
                cost_model: cm,
                programmed_at: RefCell::new(vec![SimTime::ZERO; blocks as usize]),
            })
        });
        let attempts = match &model {
            Some(m) => m.errors.retry().attempts().collect(),
            None => Rc::from([ReadAttempt::First]),
        };
        let rng = cx.fork_rng();
        let mut wear_rng = rng.clone();
        wear_rng.long_jump();
        let tally = Tally { by_errors: vec![0; cfg.correctable as usize + 1], ..Tally::default() };
        let mut jumped = rng.clone();
        jumped.jump();
        Some(Ecc {
            attempts,
            tally: Rc::new(RefCell::new(tally)),
            busy,
            cx: cx.clone(),
            cfg: cfg.clone(),
            codewords: page_bytes / cfg.codeword.bytes() as u32,
            ring,
            rng: Rc::new(RefCell::new(rng)),
            positions: Rc::new(RefCell::new((jumped, Vec::new()))),
            model,
            wear_rng: Rc::new(RefCell::new(wear_rng)),
        })
    }

    /// The read attempts a failing read goes through: the first read, then the error model's
    /// retry steps (none under the flat rate).
    pub fn attempts(&self) -> &[ReadAttempt] {
        &self.attempts
    }

    /// Time the ECC core has spent decoding so far, ns.
    pub fn busy_ns(&self) -> u64 {
        let ahead = self.busy.until.get().saturating_since(self.cx.now()).as_nanos();
        self.busy.charged_ns.get() - ahead
    }

    /// Full array reads that `attempt` costs (1 except for a soft-decision step).
    pub fn array_reads(&self, attempt: ReadAttempt) -> u32 {
        self.model.as_ref().map_or(1, |m| m.errors.retry().cost(attempt).array_reads)
    }

    /// Whether a page program on a block with `erase_count` P/E cycles failed (the error
    /// model's wear-out probabilities; never under the flat rate).
    pub fn program_fails(&self, erase_count: u32) -> bool {
        self.model.as_ref().is_some_and(|m| self.wear_draw(m.errors.program_failure(erase_count)))
    }

    /// Whether an erase of a block that had `erase_count` P/E cycles failed (see
    /// [`program_fails`](Self::program_fails)).
    pub fn erase_fails(&self, erase_count: u32) -> bool {
        self.model.as_ref().is_some_and(|m| self.wear_draw(m.errors.erase_failure(erase_count)))
    }

    /// Draws an event of probability `p` (no draw when `p` is 0, so a fresh device's failures
    /// cost nothing).
    fn wear_draw(&self, p: f64) -> bool {
        p > 0.0 && self.wear_rng.borrow_mut().random::<f64>() < p
    }

    /// Bit errors expected per codeword, at the first read attempt, on the worst page type of
    /// `block` (`erase_count` P/E cycles, `reads_since_erase` reads) were it read now; `None`
    /// without the error model. What data refresh compares with the code's strength.
    pub fn expected_worst(&self, block: BlockIdx, erase_count: u32, reads_since_erase: u32) -> Option<f64> {
        let m = self.model.as_ref()?;
        let age = self.age(m, block, erase_count, reads_since_erase);
        let worst = m
            .cell
            .page_types()
            .iter()
            .map(|&p| m.errors.rber(p, &age, ReadAttempt::First))
            .fold(0.0, f64::max);
        Some(nand::errors::expected_errors(worst, m.codeword_bits))
    }

    /// A block's age now, as the error model takes it.
    fn age(&self, m: &Model, block: BlockIdx, erase_count: u32, reads_since_erase: u32) -> PageAge {
        PageAge {
            pe_cycles: erase_count,
            retention: self.cx.now().since(m.programmed_at.borrow()[block.idx()]),
            reads_since_erase: reads_since_erase as u64,
        }
    }

    /// The raw bit-error rate of `page` read now at `attempt`.
    fn rber_of(&self, m: &Model, page: &PageRead, attempt: ReadAttempt) -> f64 {
        let age = self.age(m, page.block, page.erase_count, page.reads_since_erase);
        m.errors.rber(m.cell.page_type(page.offset), &age, attempt)
    }

    /// Whether the error model is on (bit errors from it, programs and erases that can fail),
    /// rather than the flat rate.
    pub fn models_errors(&self) -> bool {
        self.model.is_some()
    }

    /// Bits the code corrects per codeword (t).
    pub fn correctable(&self) -> u32 {
        self.cfg.correctable
    }

    /// The rated P/E cycles of the error model's wear-out curve (`None` under the flat rate).
    pub fn rated_pe(&self) -> Option<u32> {
        self.model.as_ref().map(|m| m.errors.wear_out().rated_pe)
    }

    /// A page at `offset` of `block` was programmed: the block's retention clock starts at its
    /// first page.
    pub fn programmed(&self, block: BlockIdx, offset: u32) {
        if let Some(m) = &self.model
            && offset == 0
        {
            m.programmed_at.borrow_mut()[block.idx()] = self.cx.now();
        }
    }

    /// Checks one read of a page (attempt `attempt` of [`attempts`](Self::attempts)): draws
    /// the bit errors of each codeword and, if any has errors, has the ECC core decode them.
    ///
    /// With `bytes` (a payload store's page and parity) and the error model, the errors are
    /// real: each codeword's count is drawn as without bytes, then as many distinct bits of
    /// its data and parity are flipped in the buffer and the BCH decoder corrects them there,
    /// charging the cycles of the operations it performed. A codeword it cannot decode fails
    /// the read (its bytes are left as received; the caller must not return them). Without
    /// bytes the same decision and cost come from the count ([`bch::Bch::decide`]).
    pub async fn check(
        &self,
        page: PageRead,
        attempt: ReadAttempt,
        bytes: Option<PageBytes<'_>>,
    ) -> Result<Corrected, Uncorrectable> {
        let (mut erroneous, mut bits, mut worst, mut cycles) = (0u32, 0u32, 0u32, 0u64);
        let cw = self.cfg.codeword.bytes() as u32;
        let codewords = match page.data_bytes {
            0 => self.codewords,
            b => b.div_ceil(cw).clamp(1, self.codewords),
        };
        let mut decoded = None;
        match (&self.model, bytes) {
            (Some(m), Some(b)) => {
                decoded = Some(false);
                let rber = self.rber_of(m, &page, attempt);
                let (cwb, pb) = (cw as usize, m.code.parity_bytes());
                let n = m.code.codeword_bits();
                let mut rng = self.rng.borrow_mut();
                let mut pos = self.positions.borrow_mut();
                let (pos_rng, positions) = &mut *pos;
                let mut tally = self.tally.borrow_mut();
                for c in 0..self.codewords as usize {
                    // The codeword's units: is any of them asked for?
                    let (first, last) =
                        (c * cwb / b.unit_bytes as usize, ((c + 1) * cwb - 1) / b.unit_bytes as usize);
                    if (first..=last).all(|u| b.units & (1 << u) == 0) {
                        continue;
                    }
                    let e = nand::errors::draw_bit_errors(&mut *rng, rber, m.codeword_bits);
                    tally.codeword(e);
                    if e == 0 {
                        continue; // as programmed: the hardware syndromes pass it
                    }
                    erroneous += 1;
                    worst = worst.max(e);
                    let (data, parity) =
                        (&mut b.data[c * cwb..(c + 1) * cwb], &mut b.parity[c * pb..(c + 1) * pb]);
                    nand::errors::draw_error_positions(pos_rng, e, n, positions);
                    for &p in positions.iter() {
                        let (buf, at) = if p < m.code.data_bits() {
                            (&mut *data, p)
                        } else {
                            (&mut *parity, p - m.code.data_bits())
                        };
                        buf[at as usize / 8] ^= 0x80 >> (at % 8);
                    }
                    let mut cost = bch::DecodeCost::default();
                    match m.code.decode(data, parity, &mut cost) {
                        Ok(bch::Decoded::Corrected { bits: fixed }) => bits += fixed,
                        // Errors that make another codeword: undetectable (at least 2t + 1 of them).
                        Ok(bch::Decoded::Clean) => {}
                        Err(bch::Uncorrectable) => decoded = Some(true),
                    }
                    cycles += m.cost_model.cycles(&cost);
                }
                if erroneous > 0 {
                    cycles += m.errors.retry().cost(attempt).extra_decode_cycles;
                }
            }
            (Some(m), None) => {
                let rber = self.rber_of(m, &page, attempt);
                let mut rng = self.rng.borrow_mut();
                let mut tally = self.tally.borrow_mut();
                for _ in 0..codewords {
                    let e = nand::errors::draw_bit_errors(&mut *rng, rber, m.codeword_bits);
                    tally.codeword(e);
                    if e > 0 {
                        erroneous += 1;
                        bits += e;
                        worst = worst.max(e);
                        cycles += m.cycles.get(e as usize).copied().unwrap_or(m.fail_cycles);
                    }
                }
                if erroneous > 0 {
                    cycles += m.errors.retry().cost(attempt).extra_decode_cycles;
                }
            }
            (None, _) => {
                let rber = self.cfg.rber + self.cfg.rber_per_pe * page.erase_count as f64;
                let lambda = rber * self.cfg.codeword.bytes() as f64 * 8.0;
                let mut rng = self.rng.borrow_mut();
                let mut tally = self.tally.borrow_mut();
                for _ in 0..codewords {
                    let e = poisson(lambda, &mut rng);
                    tally.codeword(e);
                    erroneous += (e > 0) as u32;
                    bits += e;
                    worst = worst.max(e);
                }
                cycles = self.cfg.correct_cycles * erroneous as u64;
            }
        }
        // The decoder decided on the bytes; without them (or under the flat rate) the count does.
        let failed = decoded.unwrap_or(worst > self.cfg.correctable);
        if erroneous > 0 {
            let (tx, rx) = oneshot::channel(&self.cx, "ecc correction");
            self.ring.push(Job { cycles, done: tx }).await;
            let _ = rx.await;
        }
        if failed {
            Err(Uncorrectable { cycles })
        } else {
            Ok(Corrected { codewords: erroneous, bits, cycles })
        }
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
