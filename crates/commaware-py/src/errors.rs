//! The one error type across the boundary: core errors become typed Python exceptions
//! (a subclass per kind, with `source`, `field` and `reason`), and a Rust panic becomes
//! `InternalError` instead of crossing into Python; [`interruptible`] lets Ctrl-C stop a long
//! core call.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

/// `text` with each value longer than about 100 characters cut, with its length: what the
/// core does to its own messages, for the messages made in Python.
#[pyfunction]
pub(crate) fn cut_long_values(text: &str) -> String {
    commaware_core::error::cut_long_values(text).into_owned()
}

/// How often a long core call run by [`interruptible`] asks Python for pending signals.
const SIGNAL_CHECK_EVERY: Duration = Duration::from_millis(50);

/// Bumped by [`stop_running_calls`]: the interruptible calls started before stop.
static STOP_EPOCH: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Set by [`stop_with_calls_since`] in a pool's worker thread: its calls stop on any stop
    /// made since this epoch, also those started after the stop.
    static STOPPED_SINCE: Cell<Option<u64>> = const { Cell::new(None) };
}

/// The number of stops so far: a pool passes it to [`stop_with_calls_since`] in its threads.
#[pyfunction]
pub(crate) fn stop_epoch() -> u64 {
    STOP_EPOCH.load(Ordering::SeqCst)
}

/// In the calling thread (a pool's worker), every interruptible call stops at once if
/// [`stop_running_calls`] was called since `epoch`: a worker between two calls at the stop
/// does not run its next call to the end.
#[pyfunction]
pub(crate) fn stop_with_calls_since(epoch: u64) {
    STOPPED_SINCE.with(|since| since.set(Some(epoch)));
}

/// Stop every interruptible core call running now, in any thread (each raises CommawareError
/// "stopped by the caller"); calls started afterwards run as usual, except in a thread that
/// follows the stops since an epoch ([`stop_with_calls_since`]). Python delivers Ctrl-C to
/// the main thread only: a thread pool calls this so that its workers stop too.
#[pyfunction]
pub(crate) fn stop_running_calls() {
    STOP_EPOCH.fetch_add(1, Ordering::SeqCst);
}

/// [`guarded`] `f` without the GIL, stoppable by Ctrl-C: the core's long loops ask
/// `util::cancel::check`, and the answer here is Python's signal check (at most every 50 ms;
/// it does something on the main thread only), or [`stop_running_calls`] from any thread (in a
/// pool's worker, also one made before the call began: [`stop_with_calls_since`]). What a
/// signal handler raised (KeyboardInterrupt) is returned instead of the core's "stopped" error.
pub(crate) fn interruptible<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, Error> + Send) -> PyResult<T> {
    let raised: Arc<Mutex<Option<PyErr>>> = Arc::new(Mutex::new(None));
    let slot = Arc::clone(&raised);
    let mut last = Instant::now();
    let epoch = STOPPED_SINCE.with(Cell::get).unwrap_or_else(stop_epoch);
    let poll = move || {
        if STOP_EPOCH.load(Ordering::SeqCst) != epoch {
            return true;
        }
        if last.elapsed() < SIGNAL_CHECK_EVERY {
            return false;
        }
        last = Instant::now();
        match Python::with_gil(|py| py.check_signals()) {
            Ok(()) => false,
            Err(e) => {
                *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                true
            }
        }
    };
    let r = py.allow_threads(|| guarded(|| commaware_core::util::cancel::watching(poll, f)));
    let interrupt = raised.lock().unwrap_or_else(|p| p.into_inner()).take();
    match interrupt {
        Some(e) => Err(e),
        None => r,
    }
}
