//! Integration tests of the host crate.

mod interface;
mod live;
mod phys_bounds;
