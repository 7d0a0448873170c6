//! One module per figure: `build` takes the data out of the report (or says why there is
//! none), `draw` lays it out in the area below the title.

pub(crate) mod cdf;
pub(crate) mod ecc;
pub(crate) mod fdp;
pub(crate) mod gc;
pub(crate) mod power;
pub(crate) mod timeline;
pub(crate) mod utilisation;
pub(crate) mod wear;
pub(crate) mod zones;
