//! `ssdlab._native`: the Rust side of the `ssdlab` Python package (`python/ssdlab`), built by
//! maturin. The Python modules wrap these functions; they pass requests and results as JSON
//! text so that the Python side owns the API's shape and the Rust side the semantics, shared
//! with the CLI (`ssdlab::setup` for runs, `ssdlab::sweep` for sweeps).
//!
//! Every simulation runs with the GIL released. Errors are [`SsdlabError`] exceptions whose
//! message is the CLI's one-line error.

mod calls;

use pyo3::prelude::*;

pyo3::create_exception!(
    _native,
    SsdlabError,
    pyo3::exceptions::PyException,
    "Bad input or a failed run; the message is the ssdlab command's one-line error."
);

/// The module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SsdlabError", m.py().get_type::<SsdlabError>())?;
    m.add_function(wrap_pyfunction!(calls::version, m)?)?;
    m.add_function(wrap_pyfunction!(calls::presets, m)?)?;
    m.add_function(wrap_pyfunction!(calls::run, m)?)?;
    m.add_function(wrap_pyfunction!(calls::calibrate, m)?)?;
    m.add_function(wrap_pyfunction!(calls::plan, m)?)?;
    m.add_function(wrap_pyfunction!(calls::sweep, m)?)?;
    m.add_function(wrap_pyfunction!(calls::plot, m)?)?;
    m.add_function(wrap_pyfunction!(calls::run_isolated, m)?)?;
    m.add_function(wrap_pyfunction!(calls::worker, m)?)?;
    Ok(())
}
