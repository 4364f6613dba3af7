//! `commaware._core`: thin PyO3 bindings. Converts arguments and results and maps
//! core errors to typed Python exceptions; no modelling happens here. Every entry
//! point runs under `catch_unwind` so a Rust panic never reaches Python as such.

use std::panic::{catch_unwind, AssertUnwindSafe};

use commaware_core::multicast as mc;
use commaware_core::placement::Placement;
use commaware_core::error::{parse_input, Format};
use commaware_core::{Error, ErrorKind, SimOptions};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyDict;

pyo3::create_exception!(_core, CommawareError, PyException, "Base class of commaware errors.");
pyo3::create_exception!(_core, InputError, CommawareError, "Bad input: names the file, the field and the reason.");
pyo3::create_exception!(_core, PlatformError, InputError, "The platform description is invalid.");
pyo3::create_exception!(_core, TraceError, InputError, "The trace is invalid.");
pyo3::create_exception!(_core, PlacementError, InputError, "Ranks cannot be placed on the hosts.");
pyo3::create_exception!(_core, OptionsError, InputError, "An option is invalid.");
pyo3::create_exception!(_core, DeadlockError, InputError, "The trace deadlocks or leaves messages unmatched.");
pyo3::create_exception!(_core, MulticastError, InputError, "The multicast instance is invalid.");
pyo3::create_exception!(_core, InternalError, CommawareError, "A bug in commaware (a Rust panic was caught).");

fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    let err = match e.kind {
        ErrorKind::Platform => PlatformError::new_err(msg),
        ErrorKind::Trace => TraceError::new_err(msg),
        ErrorKind::Placement => PlacementError::new_err(msg),
        ErrorKind::Options => OptionsError::new_err(msg),
        ErrorKind::Deadlock => DeadlockError::new_err(msg),
        ErrorKind::Multicast => MulticastError::new_err(msg),
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
fn guarded<T>(f: impl FnOnce() -> Result<T, Error>) -> PyResult<T> {
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

#[pyclass(frozen, module = "commaware._core")]
struct Platform(commaware_core::Platform);

#[pymethods]
impl Platform {
    #[getter]
    fn host_names(&self) -> Vec<String> {
        self.0.hosts.iter().map(|h| h.name.clone()).collect()
    }
    #[getter]
    fn model(&self) -> String {
        self.0.network.model.clone()
    }
    fn to_json(&self) -> String {
        serde_json::to_string_pretty(&self.0).unwrap_or_default()
    }
    fn __len__(&self) -> usize {
        self.0.hosts.len()
    }
}

#[pyclass(frozen, module = "commaware._core")]
struct Trace(commaware_core::Trace);

#[pymethods]
impl Trace {
    #[getter]
    fn n_ranks(&self) -> usize {
        self.0.n_ranks()
    }
    #[getter]
    fn n_ops(&self) -> usize {
        self.0.spec.ranks.iter().map(|r| r.len()).sum()
    }
}

#[pyclass(frozen, module = "commaware._core")]
struct SimResult(commaware_core::SimResult);

#[pymethods]
impl SimResult {
    #[getter]
    fn makespan(&self) -> f64 {
        self.0.makespan
    }
    #[getter]
    fn model(&self) -> String {
        self.0.model.clone()
    }
    fn to_json(&self) -> String {
        self.0.to_json()
    }
    /// Messages as columns (a dict of lists), for a DataFrame.
    fn message_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = &self.0.messages;
        let d = PyDict::new(py);
        d.set_item("src_rank", m.iter().map(|x| x.src_rank).collect::<Vec<_>>())?;
        d.set_item("dst_rank", m.iter().map(|x| x.dst_rank).collect::<Vec<_>>())?;
        d.set_item("src_host", m.iter().map(|x| x.src_host.as_str()).collect::<Vec<_>>())?;
        d.set_item("dst_host", m.iter().map(|x| x.dst_host.as_str()).collect::<Vec<_>>())?;
        d.set_item("bytes", m.iter().map(|x| x.bytes).collect::<Vec<_>>())?;
        d.set_item("tag", m.iter().map(|x| x.tag).collect::<Vec<_>>())?;
        d.set_item("op", m.iter().map(|x| x.op).collect::<Vec<_>>())?;
        d.set_item("start", m.iter().map(|x| x.start).collect::<Vec<_>>())?;
        d.set_item("end", m.iter().map(|x| x.end).collect::<Vec<_>>())?;
        Ok(d)
    }
    /// Ranks as columns.
    fn rank_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = &self.0.ranks;
        let d = PyDict::new(py);
        d.set_item("rank", r.iter().map(|x| x.rank).collect::<Vec<_>>())?;
        d.set_item("host", r.iter().map(|x| x.host.as_str()).collect::<Vec<_>>())?;
        d.set_item("end", r.iter().map(|x| x.end).collect::<Vec<_>>())?;
        d.set_item("compute_seconds", r.iter().map(|x| x.compute_seconds).collect::<Vec<_>>())?;
        d.set_item("blocked_seconds", r.iter().map(|x| x.blocked_seconds).collect::<Vec<_>>())?;
        Ok(d)
    }
    /// Per-rank intervals (compute, sleep, overhead, wait, comm) as columns.
    fn timeline_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let t = &self.0.timeline;
        let d = PyDict::new(py);
        d.set_item("rank", t.iter().map(|x| x.rank).collect::<Vec<_>>())?;
        d.set_item("kind", t.iter().map(|x| x.kind).collect::<Vec<_>>())?;
        d.set_item("start", t.iter().map(|x| x.start).collect::<Vec<_>>())?;
        d.set_item("end", t.iter().map(|x| x.end).collect::<Vec<_>>())?;
        Ok(d)
    }
}

/// Parse and validate a platform from text in `format` (json, toml, or dict: JSON made
/// from an in-memory value); `source` names the file in errors.
#[pyfunction]
#[pyo3(signature = (text, source, format="json"))]
fn load_platform(py: Python<'_>, text: &str, source: &str, format: &str) -> PyResult<Platform> {
    let text = text.to_owned();
    let r = py.allow_threads(|| {
        guarded(|| {
            let format = Format::from_name(format)?;
            commaware_core::Platform::from_text(&text, format).map_err(|e| e.in_source(source))
        })
    });
    r.map(Platform)
}

/// Parse, validate and lower a trace from text in `format`.
#[pyfunction]
#[pyo3(signature = (text, source, format="json"))]
fn load_trace(py: Python<'_>, text: &str, source: &str, format: &str) -> PyResult<Trace> {
    let text = text.to_owned();
    let r = py.allow_threads(|| {
        guarded(|| {
            let trace = match Format::from_name(format)? {
                Format::Json => commaware_core::Trace::from_json(&text),
                other => parse_input(ErrorKind::Trace, &text, other).and_then(commaware_core::Trace::from_spec),
            };
            trace.map_err(|e| e.in_source(source))
        })
    });
    r.map(Trace)
}

/// Can the sharing model run on this platform? Raises OptionsError if not.
#[pyfunction]
fn check_model(platform: &Platform, model: &str) -> PyResult<()> {
    guarded(|| platform.0.check_model(model))
}

/// Replay `trace` on `platform`.
#[pyfunction]
#[pyo3(signature = (platform, trace, model=None, placement="explicit", seed=0))]
fn simulate(
    py: Python<'_>,
    platform: &Platform,
    trace: &Trace,
    model: Option<String>,
    placement: &str,
    seed: u64,
) -> PyResult<SimResult> {
    let r = py.allow_threads(|| {
        guarded(|| {
            let placement = Placement::from_name(placement)?;
            if let Some(m) = &model {
                commaware_core::sharing::check_model_name(m)?;
            }
            commaware_core::simulate(&platform.0, &trace.0, &SimOptions { model, placement, seed })
        })
    });
    r.map(SimResult)
}

#[pyfunction]
fn platform_schema() -> String {
    commaware_core::Platform::json_schema()
}

#[pyfunction]
fn trace_schema() -> String {
    commaware_core::Trace::json_schema()
}

#[pyfunction]
fn multicast_schema() -> String {
    mc::Instance::json_schema()
}

#[pyfunction]
fn sharing_models() -> Vec<&'static str> {
    commaware_core::sharing::MODELS.to_vec()
}

#[pyfunction]
fn placements() -> Vec<&'static str> {
    Placement::NAMES.to_vec()
}

#[pyclass(frozen, module = "commaware._core")]
struct MulticastInstance(mc::Instance);

#[pymethods]
impl MulticastInstance {
    #[getter]
    fn n_nodes(&self) -> usize {
        self.0.nodes.len()
    }
    #[getter]
    fn n_multicasts(&self) -> usize {
        self.0.multicasts.len()
    }
    fn to_json(&self) -> String {
        serde_json::to_string_pretty(&self.0).unwrap_or_default()
    }
    /// The corrected lower bound of paper 003 §3.2.
    fn lower_bound(&self) -> f64 {
        mc::lower_bound(&self.0)
    }
}

#[pyclass(frozen, module = "commaware._core")]
struct MulticastReport(mc::Report);

#[pymethods]
impl MulticastReport {
    #[getter]
    fn algorithm(&self) -> String {
        self.0.algorithm.clone()
    }
    #[getter]
    fn completion_time(&self) -> f64 {
        self.0.completion_time
    }
    #[getter]
    fn lower_bound(&self) -> f64 {
        self.0.lower_bound
    }
    #[getter]
    fn scheduling_seconds(&self) -> f64 {
        self.0.scheduling_seconds
    }
    /// The selection sequence as (sender, receiver, source) triples.
    fn triples(&self) -> Vec<(usize, usize, usize)> {
        self.0.schedule.triples()
    }
    #[pyo3(signature = (summary=false))]
    fn to_json(&self, summary: bool) -> String {
        self.0.to_json(summary)
    }
}

/// Parse and validate a multicast instance from text in `format`.
#[pyfunction]
#[pyo3(signature = (text, source, format="json"))]
fn multicast_load(py: Python<'_>, text: &str, source: &str, format: &str) -> PyResult<MulticastInstance> {
    let text = text.to_owned();
    py.allow_threads(|| {
        guarded(|| mc::instance_from_text(&text, Format::from_name(format)?).map_err(|e| e.in_source(source)))
    })
    .map(MulticastInstance)
}

/// Schedule an instance with one of the eleven algorithms of paper 003.
#[pyfunction]
#[pyo3(signature = (instance, algorithm, seed=0, receivers=None))]
fn multicast_schedule(
    py: Python<'_>,
    instance: &MulticastInstance,
    algorithm: &str,
    seed: u64,
    receivers: Option<Vec<usize>>,
) -> PyResult<MulticastReport> {
    py.allow_threads(|| {
        guarded(|| mc::Report::run(&instance.0, mc::algorithm_from_name(algorithm)?, seed, receivers.as_deref()))
    })
    .map(MulticastReport)
}

/// Check a schedule against every rule; returns an error message or None.
#[pyfunction]
fn multicast_check(instance: &MulticastInstance, report: &MulticastReport) -> Option<String> {
    mc::validate_schedule(&instance.0, &report.0.schedule).err()
}

/// Replay a schedule on the engine under a sharing model.
#[pyfunction]
#[pyo3(signature = (instance, report, model="contention_free"))]
fn multicast_execute(py: Python<'_>, instance: &MulticastInstance, report: &MulticastReport, model: &str) -> PyResult<SimResult> {
    py.allow_threads(|| guarded(|| mc::execute(&instance.0, &report.0.schedule, model))).map(SimResult)
}

/// A random instance with the settings of paper 003 §7; `params` is JSON of GenParams.
#[pyfunction]
fn multicast_generate(py: Python<'_>, params: &str, seed: u64) -> PyResult<MulticastInstance> {
    let params = params.to_owned();
    py.allow_threads(|| {
        guarded(|| {
            let p: mc::GenParams = parse_input(ErrorKind::Options, &params, Format::Dict)?;
            mc::generate_checked(&p, seed)
        })
    })
    .map(MulticastInstance)
}

#[pyfunction]
fn multicast_algorithms() -> Vec<&'static str> {
    mc::Algorithm::ALL.iter().map(|a| a.name()).collect()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("CommawareError", py.get_type::<CommawareError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("PlatformError", py.get_type::<PlatformError>())?;
    m.add("TraceError", py.get_type::<TraceError>())?;
    m.add("PlacementError", py.get_type::<PlacementError>())?;
    m.add("OptionsError", py.get_type::<OptionsError>())?;
    m.add("DeadlockError", py.get_type::<DeadlockError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    m.add("MulticastError", py.get_type::<MulticastError>())?;
    m.add_class::<MulticastInstance>()?;
    m.add_class::<MulticastReport>()?;
    m.add_function(wrap_pyfunction!(multicast_load, m)?)?;
    m.add_function(wrap_pyfunction!(multicast_schedule, m)?)?;
    m.add_function(wrap_pyfunction!(multicast_check, m)?)?;
    m.add_function(wrap_pyfunction!(multicast_execute, m)?)?;
    m.add_function(wrap_pyfunction!(multicast_generate, m)?)?;
    m.add_function(wrap_pyfunction!(multicast_algorithms, m)?)?;
    m.add_class::<Platform>()?;
    m.add_class::<Trace>()?;
    m.add_class::<SimResult>()?;
    m.add_function(wrap_pyfunction!(load_platform, m)?)?;
    m.add_function(wrap_pyfunction!(load_trace, m)?)?;
    m.add_function(wrap_pyfunction!(check_model, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(platform_schema, m)?)?;
    m.add_function(wrap_pyfunction!(trace_schema, m)?)?;
    m.add_function(wrap_pyfunction!(multicast_schema, m)?)?;
    m.add_function(wrap_pyfunction!(sharing_models, m)?)?;
    m.add_function(wrap_pyfunction!(placements, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
