//! Errors as Python exceptions: the same located messages as the command line, with
//! the file, line and column as attributes where the error has a location.

use elevate_rise::{Error, ErrorKind, Program};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    elevate,
    ElevateError,
    PyException,
    "Any error of elevate: `.file`, `.line` and `.column` (from 1) where it has a location."
);
create_exception!(
    elevate,
    ParseError,
    ElevateError,
    "Text that is not RISE, or not strategy or space text."
);
create_exception!(
    elevate,
    UnknownNameError,
    ElevateError,
    "A name that is not defined."
);
create_exception!(
    elevate,
    TypeCheckError,
    ElevateError,
    "A program that is not well typed, or a nat constraint that fails."
);
create_exception!(
    elevate,
    InputError,
    ElevateError,
    "Inputs that do not fit the program."
);
create_exception!(
    elevate,
    EvalError,
    ElevateError,
    "Evaluation failed (the interpreter, or a compiled program that trapped)."
);
create_exception!(
    elevate,
    CompileError,
    ElevateError,
    "The MLIR bridge could not compile the program."
);
create_exception!(
    elevate,
    StrategyError,
    ElevateError,
    "A strategy failed, or ran out of its budget."
);
create_exception!(
    elevate,
    SearchError,
    ElevateError,
    "A search could not start (a bad driver, cost or budget)."
);
create_exception!(
    elevate,
    GpuError,
    ElevateError,
    "No GPU to run on, or the CUDA driver refused."
);

/// A Python exception of `kind` with `message`, located at `(line, column)` of `file`.
pub fn located<E: pyo3::PyTypeInfo>(
    message: String,
    file: Option<&str>,
    at: Option<(usize, usize)>,
) -> PyErr {
    Python::attach(|py| {
        let err = PyErr::new::<E, _>(message.clone());
        let value = err.value(py);
        let _ = value.setattr("message", message);
        let _ = value.setattr("file", file);
        let _ = value.setattr("line", at.map(|a| a.0));
        let _ = value.setattr("column", at.map(|a| a.1));
        err
    })
}

/// A RISE error in `source` (read from `file`), rendered as the command line does.
pub fn rise_error(e: &Error, file: &str, source: &str) -> PyErr {
    let message = e.render(file, source);
    let at = e.line_col(source);
    let file = Some(file);
    match e.kind {
        ErrorKind::Parse => located::<ParseError>(message, file, at),
        ErrorKind::UnknownName => located::<UnknownNameError>(message, file, at),
        ErrorKind::Type | ErrorKind::Nat => located::<TypeCheckError>(message, file, at),
        ErrorKind::Input => located::<InputError>(message, file, at),
        ErrorKind::Eval => located::<EvalError>(message, file, at),
        ErrorKind::Compile => located::<CompileError>(message, file, at),
        ErrorKind::Strategy => located::<StrategyError>(message, file, at),
    }
}

/// Strategy (or space) text that does not parse: a [`ParseError`] at its position.
pub fn text_error(e: &elevate_strategies::text::TextError, file: &str, text: &str) -> PyErr {
    located::<ParseError>(e.render(file, text), Some(file), Some(e.line_col(text)))
}

/// A bridge error of `program` (from `file`): located at its construct, or at the
/// entry point where it has none; a missing GPU is a [`GpuError`].
pub fn bridge_error(
    e: elevate_bridge::Error,
    program: &Program,
    file: &str,
    source: &str,
) -> PyErr {
    match e.diagnostic(program.entry().term.span()) {
        Ok(error) => rise_error(&error, file, source),
        Err(message) => located::<GpuError>(format!("{file}: {message}"), Some(file), None),
    }
}

/// Registers the exceptions in the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ElevateError", py.get_type::<ElevateError>())?;
    m.add("ParseError", py.get_type::<ParseError>())?;
    m.add("UnknownNameError", py.get_type::<UnknownNameError>())?;
    m.add("TypeCheckError", py.get_type::<TypeCheckError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("EvalError", py.get_type::<EvalError>())?;
    m.add("CompileError", py.get_type::<CompileError>())?;
    m.add("StrategyError", py.get_type::<StrategyError>())?;
    m.add("SearchError", py.get_type::<SearchError>())?;
    m.add("GpuError", py.get_type::<GpuError>())?;
    Ok(())
}
