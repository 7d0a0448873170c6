//! Integration tests of the host crate.

mod live;
mod phys_bounds;
