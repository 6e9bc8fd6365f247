//! The native part of the `elevate` Python package (`elevate._native`): RISE programs,
//! strategies, compiled functions on NumPy arrays, search and the environment for
//! learning agents. The package's Python modules (`python/elevate/`) build the
//! documented API on top of it.

mod compiled;
mod convert;
mod errors;
mod network;
mod network_search;
mod program;
mod search;
mod strategy;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<program::PyProgram>()?;
    m.add_class::<strategy::PyStrategy>()?;
    m.add_class::<compiled::PyCompiled>()?;
    m.add_class::<compiled::PyGpuCompiled>()?;
    m.add_class::<search::PyEnvironment>()?;
    m.add_class::<search::PyCostEvaluator>()?;
    network::register(m)?;
    m.add_function(wrap_pyfunction!(strategy::library, m)?)?;
    m.add_function(wrap_pyfunction!(search::_search, m)?)?;
    m.add_function(wrap_pyfunction!(network_search::_search_network, m)?)?;
    m.add_function(wrap_pyfunction!(search::_serve_worker, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
