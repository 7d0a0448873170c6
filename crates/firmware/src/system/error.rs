//! What a [`System`](crate::system::System) answers when it cannot check, place or checkpoint.

use crate::device::DeviceError;
use crate::ftl::Violation;
use crate::hil::Placement;

/// Why a system could not do what was asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SystemError {
    /// An SSD could not be brought to rest or checkpointed.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// An SSD's FTL broke an invariant.
    #[error(transparent)]
    Invariant(#[from] Violation),
    /// One of several drives (behind a bridge) failed.
    #[error("drive {drive}: {source}")]
    Drive {
        /// The drive, in stripe order.
        drive: usize,
        /// What it said.
        source: Box<SystemError>,
    },
    /// The simulation stopped with every task waiting: the system cannot come to rest.
    #[error("the array did not come to rest: {0}")]
    NotAtRest(#[source] sim::Deadlock),
    /// The system keeps no NAND images to checkpoint into.
    #[error("this system cannot checkpoint")]
    CannotCheckpoint,
    /// The system places writes itself.
    #[error("placement {0}: this device places writes itself; only a host-side FTL takes a placement")]
    PlacesItself(Placement),
    /// A placement identifier the device's FDP configuration does not have (or FDP is off).
    #[error("placement {0}: {1}")]
    InvalidPid(Placement, String),
    /// A system built on this crate (a host-side FTL, say) said why, in its own error type.
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

impl SystemError {
    /// `e`, from drive `drive`.
    pub fn of_drive(drive: usize, e: impl Into<SystemError>) -> SystemError {
        SystemError::Drive { drive, source: Box::new(e.into()) }
    }

    /// An error of a system built on this crate.
    pub fn other(e: impl std::error::Error + Send + Sync + 'static) -> SystemError {
        SystemError::Other(Box::new(e))
    }
}
