//! Statistics primitives: counters, HDR histograms, compact log-linear histograms and time
//! series.

pub mod counter;
pub mod histogram;
pub mod loghist;
pub mod series;

pub use counter::Counter;
pub use histogram::{Histogram, Summary};
pub use loghist::LogHistogram;
pub use series::TimeSeries;
