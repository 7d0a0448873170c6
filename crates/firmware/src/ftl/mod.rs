//! The flash translation layer (FTL): page-level mapping (DFTL or the full map in DRAM), a
//! write-back data cache, allocation over write frontiers, garbage collection and wear
//! levelling — written in the coroutine style: each host operation on a mapping unit is one
//! async function that awaits the cache, the mapping table and the flash.

mod alloc;
mod blocks;
mod cache;
mod check;
pub mod config;
mod data;
pub mod fdp;
mod flash;
mod gc;
mod hooks;
mod io;
mod map;
mod mapping;
mod mount;
mod partition;
pub mod place;
mod policies;
mod precondition;
mod refresh;
mod resume;
mod retire;
mod sets;
mod state;
mod stats;
mod waits;
mod writeback;
pub mod writeback_policy;
pub mod zoned;

pub use alloc::{Allocator, Lane};
pub use blocks::{BlockInfo, BlockManager, BlockUse, PoolState, Stream};
pub use cache::PartCounts;
pub use check::Violation;
pub use config::{
    AllocConfig, CacheConfig, FtlConfig, GcConfig, MappingConfig, RefreshConfig, VictimPolicy, WlConfig,
    WriteBackMode,
};
pub use data::{UnitData, fingerprint};
pub use fdp::{FdpConfig, FdpEvent, FdpStats, HandleStats, Isolation, Placed};
pub use flash::MediaError;
pub use gc::theory;
pub use gc::victim;
pub use io::{UnitResults, UnitWrite};
pub use map::PENDING_ENTRY_BYTES;
pub use mount::{BlockHint, Mount, MountError, MountReport};
pub use partition::{Partition, PartitionMode};
pub use policies::Policies;
pub use precondition::{Precondition, PreconditionError};
pub use resume::DramState;
pub use retire::MediaStats;
pub use sets::MAX_SETS;
pub use state::{Ftl, Setup};
pub use stats::FtlStats;
