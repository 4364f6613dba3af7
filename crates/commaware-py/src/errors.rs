//! The one error type across the boundary: core errors become typed Python exceptions
//! (a subclass per kind, with `source`, `field` and `reason`), and a Rust panic becomes
//! `InternalError` instead of crossing into Python.

use std::panic::{catch_unwind, AssertUnwindSafe};

use commaware_core::{Error, ErrorKind};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

pyo3::create_exception!(_core, CommawareError, PyException, "Base class of commaware errors.");
pyo3::create_exception!(_core, InputError, CommawareError, "Bad input: names the file, the field and the reason.");
pyo3::create_exception!(_core, PlatformError, InputError, "The platform description is invalid.");
pyo3::create_exception!(_core, TraceError, InputError, "The trace is invalid.");
pyo3::create_exception!(_core, PlacementError, InputError, "Ranks cannot be placed on the hosts.");
pyo3::create_exception!(_core, OptionsError, InputError, "An option is invalid.");
pyo3::create_exception!(_core, DeadlockError, InputError, "The trace deadlocks or leaves messages unmatched.");
pyo3::create_exception!(_core, MulticastError, InputError, "The multicast instance is invalid.");
pyo3::create_exception!(_core, SchemeError, InputError, "The communication scheme is invalid.");
pyo3::create_exception!(_core, WorkloadError, InputError, "The job workload (JSON or SWF) is invalid.");
pyo3::create_exception!(_core, OutputError, CommawareError, "An output file could not be written.");
pyo3::create_exception!(_core, InternalError, CommawareError, "A bug in commaware (a Rust panic was caught).");

pub(crate) fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    let err = match e.kind {
        ErrorKind::Platform => PlatformError::new_err(msg),
        ErrorKind::Trace => TraceError::new_err(msg),
        ErrorKind::Placement => PlacementError::new_err(msg),
        ErrorKind::Options => OptionsError::new_err(msg),
        ErrorKind::Deadlock => DeadlockError::new_err(msg),
        ErrorKind::Multicast => MulticastError::new_err(msg),
        ErrorKind::Scheme => SchemeError::new_err(msg),
        ErrorKind::Output => OutputError::new_err(msg),
        ErrorKind::Aborted => CommawareError::new_err(msg),
        ErrorKind::Workload => WorkloadError::new_err(msg),
    };
    Python::with_gil(|py| {
        let v = err.value(py);
        let _ = v.setattr("source", e.source.clone());
        let _ = v.setattr("field", e.field.clone());
        let _ = v.setattr("reason", e.reason.clone());
    });
    err
}

/// Run `f`, turning core errors and panics into Python exceptions.
pub(crate) fn guarded<T>(f: impl FnOnce() -> Result<T, Error>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(to_py(e)),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(InternalError::new_err(format!("internal error (please report): {what}")))
        }
    }
}
