//! [`SlotSampler`]: draws the slot (block) index of a random I/O from the job's
//! [`Distribution`].

use rand::RngExt;
use rand_distr::Zipf;
use sim::SimRng;

use super::distribution::Distribution;
use super::permute::Permutation;

/// The fixed key that scatters `zipf` and `pareto` ranks over the region. It does not depend on
/// the seed, so every job over the same region shares the same hot blocks.
const SCRAMBLE_KEY: u64 = 0x5eed_1ab5_c0ff_ee00;

/// One zone resolved to slots: `[first, end)`, chosen when the access draw is below `until`.
#[derive(Clone, Debug)]
struct SlotZone {
    until: u32,
    first: u64,
    end: u64,
}

#[derive(Clone, Debug)]
enum Kind {
    Uniform,
    Zipf(Zipf<f64>),
    Pareto { power: f64 },
    Zoned(Vec<SlotZone>),
}

/// Draws slot indices in `[0, n)` following a [`Distribution`].
#[derive(Clone, Debug)]
pub(crate) struct SlotSampler {
    n: u64,
    kind: Kind,
    scramble: Permutation,
}

impl SlotSampler {
    /// A sampler over `n >= 1` slots. The distribution must have been parsed (so its parameters
    /// are in range); a value built by hand out of range falls back to uniform.
    pub fn new(distribution: &Distribution, n: u64) -> Self {
        let kind = match distribution {
            Distribution::Uniform => Kind::Uniform,
            &Distribution::Zipf(theta) => Zipf::new(n as f64, theta).map_or(Kind::Uniform, Kind::Zipf),
            &Distribution::Pareto(h) if h > 0.0 && h < 1.0 => Kind::Pareto { power: h.ln() / (1.0 - h).ln() },
            Distribution::Pareto(_) => Kind::Uniform,
            Distribution::Zoned(_) | Distribution::HotCold { .. } => {
                let zones = Self::zones(distribution, n);
                if zones.is_empty() { Kind::Uniform } else { Kind::Zoned(zones) }
            }
        };
        SlotSampler { n, kind, scramble: Permutation::new(n, SCRAMBLE_KEY) }
    }

    /// Resolves percentage zones to slot ranges. Zone boundaries round down, but a zone that
    /// gets accesses always keeps at least one slot.
    fn zones(distribution: &Distribution, n: u64) -> Vec<SlotZone> {
        let mut zones = Vec::new();
        let (mut access, mut size_pct) = (0u32, 0u32);
        let mut first = 0u64;
        for z in distribution.zones().unwrap_or_default() {
            access += z.access_pct;
            size_pct += z.size_pct;
            let mut end = ((n as u128 * size_pct as u128) / 100) as u64;
            if z.access_pct > 0 {
                first = first.min(n - 1);
                end = end.max(first + 1).min(n);
                zones.push(SlotZone { until: access, first, end });
            }
            first = end.max(first);
        }
        zones
    }

    /// The next slot index, in `[0, n)`.
    pub fn sample(&self, rng: &mut SimRng) -> u64 {
        match &self.kind {
            Kind::Uniform => rng.random_range(0..self.n),
            Kind::Zipf(zipf) => {
                let rank = (rng.sample(zipf) as u64).clamp(1, self.n) - 1;
                self.scramble.apply(rank)
            }
            Kind::Pareto { power } => {
                let u: f64 = rng.random();
                let rank = (((self.n - 1) as f64) * u.powf(*power)) as u64;
                self.scramble.apply(rank.min(self.n - 1))
            }
            Kind::Zoned(zones) => {
                let a = rng.random_range(0..100u32);
                let z = zones.iter().find(|z| a < z.until).unwrap_or(&zones[zones.len() - 1]);
                rng.random_range(z.first..z.end)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn histogram(d: &Distribution, n: u64, draws: usize, seed: u64) -> Vec<u64> {
        let s = SlotSampler::new(d, n);
        let mut rng = SimRng::seed_from_u64(seed);
        let mut h = vec![0u64; n as usize];
        for _ in 0..draws {
            h[s.sample(&mut rng) as usize] += 1;
        }
        h
    }

    #[test]
    fn zones_follow_their_shares() {
        let d: Distribution = "zoned:60/10:30/20:10/70".parse().unwrap();
        let draws = 200_000;
        let h = histogram(&d, 1000, draws, 1);
        let share = |r: std::ops::Range<usize>| h[r].iter().sum::<u64>() as f64 / draws as f64;
        assert!((share(0..100) - 0.6).abs() < 0.01, "{}", share(0..100));
        assert!((share(100..300) - 0.3).abs() < 0.01, "{}", share(100..300));
        assert!((share(300..1000) - 0.1).abs() < 0.01, "{}", share(300..1000));
    }

    #[test]
    fn hotcold_sends_its_share_to_the_hot_set() {
        let d: Distribution = "hotcold:20/80".parse().unwrap();
        let draws = 100_000;
        let h = histogram(&d, 500, draws, 2);
        let hot = h[..100].iter().sum::<u64>() as f64 / draws as f64;
        assert!((hot - 0.8).abs() < 0.01, "{hot}");
        // Within each set, blocks are used evenly: every block is touched.
        assert!(h.iter().all(|&c| c > 0));
    }

    #[test]
    fn tiny_regions_keep_every_accessed_zone() {
        let d: Distribution = "zoned:50/1:50/99".parse().unwrap();
        let h = histogram(&d, 3, 10_000, 3);
        assert!(h[0] > 4000, "{h:?}");
        let one = histogram(&d, 1, 100, 3);
        assert_eq!(one, vec![100]);
    }

    #[test]
    fn pareto_follows_the_80_20_rule_spread_over_the_region() {
        let n = 10_000u64;
        let draws = 200_000;
        let h = histogram(&Distribution::Pareto(0.2), n, draws, 4);
        let mut sorted = h.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let top: u64 = sorted[..(n as usize / 5)].iter().sum();
        let share = top as f64 / draws as f64;
        assert!((share - 0.8).abs() < 0.02, "top 20% got {share}");
        // The hot blocks are not all in the first fifth of the region.
        let first_fifth: u64 = h[..(n as usize / 5)].iter().sum();
        assert!((first_fifth as f64 / draws as f64) < 0.5);
    }

    #[test]
    fn out_of_range_hand_built_distributions_fall_back_to_uniform() {
        for d in [Distribution::Zipf(-1.0), Distribution::Pareto(2.0), Distribution::Zoned(vec![])] {
            let h = histogram(&d, 10, 10_000, 5);
            assert!(h.iter().all(|&c| c > 800), "{d:?}: {h:?}");
        }
    }
}
