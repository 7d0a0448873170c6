//! What the ECC counts on page reads, for the report.

use serde::{Deserialize, Serialize};

use super::{Corrected, Ecc};

/// What the ECC counted on page reads: the host's, GC's and translation pages' (error model
/// and flat rate alike; UBER's counts are the host's alone).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EccStats {
    /// Page reads checked (every attempt of a retried read counts).
    pub pages_checked: u64,
    /// Reads (first attempts) that needed no correction.
    pub clean_reads: u64,
    /// Reads that decoded at the first attempt after correcting bits.
    pub corrected_reads: u64,
    /// Reads that decoded after one or more retries.
    pub retried_reads: u64,
    /// Reads that failed every attempt (a host read's is a media error to the host; GC's
    /// leaves its page's units where they are).
    pub uncorrectable_reads: u64,
    /// Codewords corrected.
    pub codewords_corrected: u64,
    /// Bits corrected.
    pub bits_corrected: u64,
    /// Decoder cycles charged to the ECC core.
    pub decode_cycles: u64,
    /// Reads by the attempt that decoded them: `[0]` the first read, `[i]` retry step i, the
    /// last the soft-decision step when enabled (error model only).
    pub by_attempt: Vec<u64>,
    /// Codewords through the ECC, every attempt (clean ones included).
    pub codewords_checked: u64,
    /// Their bits (codewords checked times the codeword's bits).
    pub bits_checked: u64,
    /// Bit errors in the checked codewords with at most t of them (the decoder finds those,
    /// also in an attempt that fails because of another codeword); a codeword beyond t adds
    /// none, as no decoder can count them.
    pub bits_observed: u64,
    /// Checked codewords with more than t bit errors (every attempt).
    pub codewords_failed: u64,
    /// Checked codewords by their bit errors, `[n]` for n = 0..=t (every attempt; those beyond
    /// t are `codewords_failed`).
    pub errors_per_codeword: Vec<u64>,
    /// Bits of data the checked host reads asked for (each read once, whatever its attempts).
    pub data_bits_read: u64,
    /// Mapping units the uncorrectable host reads failed to return (data errors, JESD218).
    pub units_uncorrectable: u64,
    /// Of the reads counted, those by GC and of translation pages (not the host's).
    pub internal_reads: u64,
    /// Time the ECC core spent decoding, ns (up to now, the decode in progress included).
    pub busy_ns: u64,
}

impl EccStats {
    /// Host page reads checked (each once, however many attempts it took).
    pub fn reads(&self) -> u64 {
        self.clean_reads + self.corrected_reads + self.retried_reads + self.uncorrectable_reads
    }

    /// Adds `b`'s counts to these (several FTLs side by side).
    pub fn merge(&mut self, b: &EccStats) {
        self.pages_checked += b.pages_checked;
        self.clean_reads += b.clean_reads;
        self.corrected_reads += b.corrected_reads;
        self.retried_reads += b.retried_reads;
        self.uncorrectable_reads += b.uncorrectable_reads;
        self.codewords_corrected += b.codewords_corrected;
        self.bits_corrected += b.bits_corrected;
        self.decode_cycles += b.decode_cycles;
        add_counts(&mut self.by_attempt, &b.by_attempt);
        self.codewords_checked += b.codewords_checked;
        self.bits_checked += b.bits_checked;
        self.bits_observed += b.bits_observed;
        self.codewords_failed += b.codewords_failed;
        add_counts(&mut self.errors_per_codeword, &b.errors_per_codeword);
        self.data_bits_read += b.data_bits_read;
        self.units_uncorrectable += b.units_uncorrectable;
        self.internal_reads += b.internal_reads;
        self.busy_ns += b.busy_ns;
    }

    /// The observed raw bit-error rate: [`bits_observed`](Self::bits_observed) over
    /// [`bits_checked`](Self::bits_checked) (0 if nothing was checked). It undercounts once
    /// codewords go beyond t (their errors are not counted, their bits are).
    pub fn rber(&self) -> f64 {
        self.bits_observed as f64 / self.bits_checked.max(1) as f64
    }

    /// The uncorrectable bit error rate as JESD218 defines it, data errors over bits read:
    /// [`units_uncorrectable`](Self::units_uncorrectable) over
    /// [`data_bits_read`](Self::data_bits_read) (0 if nothing was read).
    pub fn uber(&self) -> f64 {
        self.units_uncorrectable as f64 / self.data_bits_read.max(1) as f64
    }

    /// The codeword-level counts and busy time the ECC keeps itself, in these stats.
    pub fn with_engine(&mut self, ecc: &Ecc) {
        let t = ecc.tally.borrow();
        self.codewords_checked = t.codewords;
        self.bits_checked = t.codewords * ecc.cfg.codeword.bytes() * 8;
        self.bits_observed = t.bits;
        self.codewords_failed = t.failed;
        self.errors_per_codeword.clone_from(&t.by_errors);
        self.busy_ns = ecc.busy_ns();
    }

    /// Records a read that decoded at attempt `attempt` (0 = the first read): its outcome,
    /// the codewords and bits it corrected and the cycles of that decode.
    pub fn decoded(&mut self, attempt: usize, c: &Corrected) {
        self.codewords_corrected += c.codewords as u64;
        self.bits_corrected += c.bits as u64;
        self.decode_cycles += c.cycles;
        match attempt {
            0 if c.codewords == 0 => self.clean_reads += 1,
            0 => self.corrected_reads += 1,
            _ => self.retried_reads += 1,
        }
        if self.by_attempt.len() <= attempt {
            self.by_attempt.resize(attempt + 1, 0);
        }
        self.by_attempt[attempt] += 1;
    }
}

/// Adds the counts of `b` to those of `a`, index by index, `a` growing to `b`'s length.
fn add_counts(a: &mut Vec<u64>, b: &[u64]) {
    if a.len() < b.len() {
        a.resize(b.len(), 0);
    }
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}
