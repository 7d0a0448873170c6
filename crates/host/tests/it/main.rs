//! Integration tests of the host crate.

mod phys_bounds;
