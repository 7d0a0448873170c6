//! # ssdlab-raw: a raw flash array for FTLs that run on the host
//!
//! ```text
//!   host: HIL (block driver) -> FTL (ssdlab-hostftl) ──raw commands──▶ [ this crate ] -> FIL -> NAND
//! ```
//!
//! The device side of a host-side FTL system: no FTL of its own, a physical-address command
//! interface (open-channel-like) over the firmware's FIL (`firmware::fil`), configured by
//! `firmware::config::ArrayConfig` (the `array` table of `[system] kind = "host-ftl"`): read, program and erase at typed PPAs, with completion, served by
//! flash array controllers, each owning a group of channels and a few command slots; an
//! on-device SRAM pool that aggregates 4 KiB sectors into pages; a DMA engine between the SRAM
//! and the host link.
//!
//! ```text
//!   host FTL ──submit──▶ controller c FIFO ─▶ slot (1 of `slots`) ─▶ PCIe: command (+ data)
//!                                           ─▶ SRAM page buffers ─▶ decode ─▶ FIL ─▶ dies
//!                        ◀── completion ◀── DMA engine ◀── read data ◀──────────────┘
//! ```
//!
//! Command kinds: `Read` (pages, or a part of each), `Program` (whole pages with their data:
//! a super-page write lists one page per channel), `WriteSector` (one mapping unit into the
//! SRAM buffer of a page), `ProgramBuffered` (program a page the sectors filled), `Erase`.
//! A command holds its slot until its flash work is done and its completion is posted, so
//! commands that each carry one page keep fewer dies busy than commands carrying several.

mod array;
mod command;
mod pipe;
mod sram;

pub use array::{RawArray, RawStats};
pub use command::{RawCommand, RawCompletion, RawOp, RawStatus, Sector};
