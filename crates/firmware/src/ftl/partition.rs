//! The data cache split between flows (MQSim's `Data_Cache_Sharing_Mode`): shared (one
//! partition of every line, the default), equal shares, or explicit shares per flow.
//!
//! A flow is identified by the submission queue a command comes through. The host says which
//! flow each queue serves ([`Ftl::bind_flows`]) once its queues exist; commands carry their
//! queue (`NvmeCommand::sq`, stamped by the controller like the NVM set), and a unit read or
//! written through queue `q` uses the partition of `q`'s flow. Queues never bound (the admin
//! queue, a queue created after the binding) use the first partition. Each flow needs queues of
//! its own: the host refuses a partitioned cache when two flows would share a queue.
//!
//! In a partitioned cache a flow's lines are evicted, and its dirty lines written back, only to
//! make room in its own partition; a hit on a line another flow cached is still a hit (the data
//! is in DRAM), and the line stays in its owner's partition.
//!
//! The CMT is split the same way (MQSim's `CMT_Sharing_Mode`, `ftl.mapping.partition`; see
//! `map::Cmt`), its partitions in segments; a lookup's flow is the flow tag of its queue
//! ([`Ftl::attribute_flows`]), the tag the FIL counts flash work by ([`Ftl::partition_cmt`]).

use serde::{Deserialize, Serialize};
use sim::ByteSize;

use crate::fil::FlowTag;
use crate::ftl::cache::PartCounts;
use crate::ftl::config::MappingConfig;
use crate::ftl::state::{Ftl, FtlInner};

/// How the data cache (`ftl.cache.partition`) or the CMT (`ftl.mapping.partition`) is split
/// between flows.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Partition {
    /// `"shared"` or `"equal"`.
    Mode(PartitionMode),
    /// A fraction of the lines (segments) per flow, in the order of the flows (the jobs),
    /// summing to 1.
    Shares(Vec<f64>),
}

/// The named partitionings.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PartitionMode {
    /// Every flow's lines in one LRU order (MQSim's SHARED).
    Shared,
    /// Each flow an equal share of the lines (MQSim's EQUAL_PARTITIONING).
    Equal,
}

impl<'de> Deserialize<'de> for Partition {
    /// As serialized (a word or a list), with an error that says what is expected.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Spelled {
            Mode(PartitionMode),
            Shares(Vec<f64>),
        }
        match Spelled::deserialize(d) {
            Ok(Spelled::Mode(m)) => Ok(Partition::Mode(m)),
            Ok(Spelled::Shares(s)) => Ok(Partition::Shares(s)),
            Err(_) => Err(serde::de::Error::custom(
                "a partition is \"shared\", \"equal\" or a share per flow such as [0.25, 0.75]",
            )),
        }
    }
}

impl Default for Partition {
    fn default() -> Self {
        Partition::Mode(PartitionMode::Shared)
    }
}

impl Partition {
    /// Whether every flow shares every line.
    pub fn is_shared(&self) -> bool {
        *self == Partition::Mode(PartitionMode::Shared)
    }

    /// Checks the shares: each a positive fraction, summing to 1.
    pub fn validate(&self) -> Result<(), String> {
        let Partition::Shares(s) = self else { return Ok(()) };
        if s.is_empty() {
            return Err("give one share per flow (or \"shared\" or \"equal\")".into());
        }
        if let Some(x) = s.iter().find(|x| !(x.is_finite() && **x > 0.0)) {
            return Err(format!("every share must be a positive fraction (got {x})"));
        }
        let sum: f64 = s.iter().sum();
        if (sum - 1.0).abs() > 1e-6 {
            return Err(format!("the shares sum to {sum}, not 1"));
        }
        Ok(())
    }

    /// Lines (or segments) per partition for `flows` flows over `total`; each must take at
    /// least `limits.min` (see `Limits`). Shared: one partition. What rounding leaves goes to
    /// the first partitions.
    pub fn capacities(&self, total: u32, flows: u32, limits: &Limits) -> Result<Vec<u32>, String> {
        let shares: Vec<f64> = match self {
            Partition::Mode(PartitionMode::Shared) => return Ok(vec![total]),
            Partition::Mode(PartitionMode::Equal) => vec![1.0 / flows as f64; flows as usize],
            Partition::Shares(s) if s.len() != flows as usize => {
                return Err(format!("{} shares for {flows} flows: give one share per flow", s.len()));
            }
            Partition::Shares(s) => s.clone(),
        };
        if flows > limits.max_flows {
            return Err(format!(
                "{flows} flows: a partitioned {} takes {} at most",
                limits.what, limits.max_flows
            ));
        }
        let mut caps: Vec<u32> = shares.iter().map(|s| (s * total as f64).floor() as u32).collect();
        let left = total.saturating_sub(caps.iter().sum());
        for c in caps.iter_mut().take(left as usize) {
            *c += 1;
        }
        if let Some((f, c)) = caps.iter().enumerate().find(|(_, c)| **c < limits.min) {
            return Err(format!(
                "flow {}'s share is {c} {}, fewer than {}; give it a larger share or {}",
                f + 1,
                limits.unit,
                limits.why,
                limits.more
            ));
        }
        Ok(caps)
    }
}

/// What [`Partition::capacities`] splits, for its checks and its messages.
pub struct Limits {
    /// The least a partition may take.
    pub min: u32,
    /// The most flows it can tell apart.
    pub max_flows: u32,
    /// What is split ("cache", "CMT").
    pub what: &'static str,
    /// What it is counted in ("lines", "segments").
    pub unit: &'static str,
    /// Why `min`: "one write-back takes (16 lines: ...)".
    pub why: String,
    /// How to give it more: "the cache more capacity".
    pub more: &'static str,
}

impl Limits {
    /// The data cache's: a background write-back's `lines` at least, 256 flows at most.
    pub fn cache(lines: u32) -> Limits {
        Limits {
            min: lines,
            max_flows: 256,
            what: "cache",
            unit: "lines",
            why: format!("one write-back takes ({lines} lines: a page on every plane of a die)"),
            more: "the cache more capacity",
        }
    }

    /// The CMT's: a segment (`entries` mapping entries) at least, and as many flows as the
    /// FIL's flow tags tell apart (the CMT knows a lookup's flow by its tag).
    pub fn cmt(entries: u32) -> Limits {
        Limits {
            min: 1,
            max_flows: FlowTag::FLOWS as u32,
            what: "CMT",
            unit: "segments",
            why: format!("one segment ({entries} mapping entries, {} of DRAM)", ByteSize(8 * entries as u64)),
            more: "the CMT more DRAM (ftl.mapping.cmt)",
        }
    }
}

impl Ftl {
    /// Tells the FTL which flow each I/O queue serves (`queue_flows[q - 1]` for queue `q`;
    /// `None`: no flow, the first partition) out of `flows` flows, and splits the data cache
    /// as `ftl.cache.partition` says. Shared (the default) changes nothing. Lines already
    /// cached are dealt out to the partitions (see `DataCache::partition`). Errors name the
    /// problem in one line: shares that do not match the flows, or a share too small.
    pub fn bind_flows(&self, queue_flows: &[Option<u32>], flows: u32) -> Result<(), String> {
        let i = &*self.inner;
        self.attribute_flows(queue_flows, flows);
        if i.cfg.cache.partition.is_shared() {
            return Ok(());
        }
        let caps = self.partition_lines(flows)?;
        i.cache.borrow_mut().partition(&caps);
        let mut table = vec![0u8; queue_flows.len() + 1];
        for (q, f) in queue_flows.iter().enumerate() {
            table[q + 1] = f.map_or(0, |f| f.min(flows.saturating_sub(1)) as u8);
        }
        *i.queue_part.borrow_mut() = table;
        i.maybe_flush(); // a partition dealt more dirty lines than it likes starts writing back
        Ok(())
    }

    /// Tells the FTL which flow each I/O queue serves (as [`bind_flows`](Self::bind_flows)
    /// takes them) so that the FIL counts each transaction for the flow that caused it
    /// (`FilStats::by_flow`); bookkeeping only, nothing is scheduled differently. With one
    /// flow, or more than the tags tell apart (`FlowTag::FLOWS`), nothing is bound: everything
    /// stays in the unattributed bucket.
    pub fn attribute_flows(&self, queue_flows: &[Option<u32>], flows: u32) {
        let mut table = vec![FlowTag::NONE; queue_flows.len() + 1];
        if (2..=FlowTag::FLOWS as u32).contains(&flows) {
            for (q, f) in queue_flows.iter().enumerate() {
                table[q + 1] = f.map_or(FlowTag::NONE, FlowTag::of_flow);
            }
        }
        *self.inner.queue_flow.borrow_mut() = table;
    }

    /// Checks that `flows` flows can split the cache as `ftl.cache.partition` says: one share
    /// per flow, each at least a background write-back's lines.
    pub fn check_partition(&self, flows: u32) -> Result<(), String> {
        self.partition_lines(flows).map(drop)
    }

    /// Checks that `flows` flows can split the CMT as `ftl.mapping.partition` says: one share
    /// per flow, each at least a segment, no more flows than the flow tags tell apart.
    pub fn check_cmt_partition(&self, flows: u32) -> Result<(), String> {
        self.cmt_partition_segments(flows).map(drop)
    }

    /// Splits the CMT between `flows` flows as `ftl.mapping.partition` says (shared, or
    /// without DFTL: nothing changes). The CMT knows a lookup's flow by its flow tag, which
    /// [`attribute_flows`](Self::attribute_flows) binds to the queues (with one flow none is
    /// bound, and its one partition takes every lookup); lookups with no flow (unbound queues,
    /// zoned namespaces) use the first partition. Segments already cached are dealt out to the
    /// partitions (see `Cmt::partition`). Errors as
    /// [`check_cmt_partition`](Self::check_cmt_partition)'s.
    pub fn partition_cmt(&self, flows: u32) -> Result<(), String> {
        if self.inner.cfg.mapping.cmt_shared() {
            return Ok(());
        }
        let caps = self.cmt_partition_segments(flows)?;
        if let Some(dftl) = &self.inner.map.dftl {
            dftl.borrow_mut().cmt.partition(&caps);
        }
        Ok(())
    }

    fn cmt_partition_segments(&self, flows: u32) -> Result<Vec<u32>, String> {
        let i = &*self.inner;
        let (MappingConfig::Dftl { partition, .. }, Some(dftl)) = (&i.cfg.mapping, &i.map.dftl) else {
            return Ok(Vec::new());
        };
        let d = dftl.borrow();
        partition.capacities(d.cmt.capacity(), flows.max(1), &Limits::cmt(d.segment_entries))
    }

    /// Each flow's CMT lookups, (hits, misses), in the order of the flows (flow `f` counted by
    /// its flow tag: bound with more than one flow, see
    /// [`attribute_flows`](Self::attribute_flows)); `None` without DFTL.
    pub fn cmt_flows(&self, flows: u32) -> Option<Vec<(u64, u64)>> {
        let dftl = self.inner.map.dftl.as_ref()?;
        let d = dftl.borrow();
        Some((0..flows).map(|f| d.cmt.flow_counts(FlowTag::of_flow(f))).collect())
    }

    /// Segments each CMT partition holds at most, in the order of the flows (empty when the
    /// CMT is shared or there is none).
    pub fn cmt_partitions(&self) -> Vec<u32> {
        let Some(dftl) = self.inner.map.dftl.as_ref() else { return Vec::new() };
        let d = dftl.borrow();
        match d.cmt.parts() {
            1 => Vec::new(),
            n => (0..n).map(|p| d.cmt.part_capacity(p)).collect(),
        }
    }

    fn partition_lines(&self, flows: u32) -> Result<Vec<u32>, String> {
        let i = &*self.inner;
        let min = i.job_units() as u32;
        i.cfg.cache.partition.capacities(i.cache.borrow().capacity(), flows.max(1), &Limits::cache(min))
    }

    /// Each cache partition's lines and reads, in the order of the flows (empty when the cache
    /// is shared).
    pub fn cache_partitions(&self) -> Vec<PartCounts> {
        let c = self.inner.cache.borrow();
        match c.parts() {
            1 => Vec::new(),
            n => (0..n).map(|p| c.part_counts(p)).collect(),
        }
    }
}

impl FtlInner {
    /// The flow submission queue `sq` serves ([`FlowTag::NONE`] if unbound).
    pub(crate) fn queue_flow(&self, sq: u16) -> FlowTag {
        self.queue_flow.borrow().get(sq as usize).copied().unwrap_or(FlowTag::NONE)
    }

    /// The cache partition of submission queue `sq`'s flow.
    pub(crate) fn cache_part(&self, sq: u16) -> usize {
        self.queue_part.borrow().get(sq as usize).copied().unwrap_or(0) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_become_lines_and_bad_shares_are_refused() {
        let shared = Partition::default();
        let l8 = Limits::cache(8);
        assert_eq!(shared.capacities(100, 3, &l8), Ok(vec![100]));
        let equal = Partition::Mode(PartitionMode::Equal);
        assert_eq!(equal.capacities(100, 3, &l8), Ok(vec![34, 33, 33]));
        let s = Partition::Shares(vec![0.25, 0.75]);
        assert_eq!(s.validate(), Ok(()));
        assert_eq!(s.capacities(100, 2, &l8), Ok(vec![25, 75]));
        assert_eq!(s.capacities(100, 3, &l8).unwrap_err(), "2 shares for 3 flows: give one share per flow");
        assert!(
            s.capacities(100, 2, &Limits::cache(30)).unwrap_err().starts_with("flow 1's share is 25 lines")
        );
        assert_eq!(
            equal.capacities(3, 4, &Limits::cmt(64)).unwrap_err(),
            "flow 4's share is 0 segments, fewer than one segment (64 mapping entries, 512B of DRAM); give it a larger share or the CMT more DRAM (ftl.mapping.cmt)"
        );
        assert_eq!(
            equal.capacities(1000, 300, &Limits::cmt(64)).unwrap_err(),
            "300 flows: a partitioned CMT takes 255 at most"
        );
        assert_eq!(Partition::Shares(vec![0.5, 0.4]).validate().unwrap_err(), "the shares sum to 0.9, not 1");
        assert!(Partition::Shares(vec![1.5, -0.5]).validate().is_err());
        assert!(Partition::Shares(vec![]).validate().is_err());
    }

    #[test]
    fn the_config_spells_it_as_a_word_or_a_list() {
        #[derive(Deserialize)]
        struct T {
            p: Partition,
        }
        let t = |s: &str| toml::from_str::<T>(s).map(|t| t.p);
        assert_eq!(t("p = \"equal\"").unwrap(), Partition::Mode(PartitionMode::Equal));
        assert_eq!(t("p = \"shared\"").unwrap(), Partition::default());
        assert_eq!(t("p = [0.5, 0.5]").unwrap(), Partition::Shares(vec![0.5, 0.5]));
        let e = t("p = \"halves\"").unwrap_err().to_string();
        assert!(e.contains("a partition is \"shared\", \"equal\" or a share per flow"), "{e}");
    }
}
