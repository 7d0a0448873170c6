//! Statistics primitives: counters, HDR histograms and time series.

pub mod counter;
pub mod histogram;
pub mod series;

pub use counter::Counter;
pub use histogram::{Histogram, Summary};
pub use series::TimeSeries;
