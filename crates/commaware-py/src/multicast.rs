//! Paper 003: multiple multicast instances, schedulers and their replay.

use std::io::Write;

use commaware_core::multicast as mc;
use commaware_core::error::{parse_input, Format};
use commaware_core::ErrorKind;
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::convert::{py_str, write_file};
use crate::errors::{guarded, interruptible};
use crate::simulation::{Outputs, SimResult, run_forwarded};

#[pyfunction]
pub(crate) fn multicast_schema() -> String {
    mc::Instance::json_schema()
}

#[pyclass(frozen, module = "commaware._core")]
pub(crate) struct MulticastInstance(mc::Instance);

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
    fn to_json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
        py_str(py, serde_json::to_string_pretty(&self.0).unwrap_or_default())
    }
    /// Write the instance's JSON to `path` (streamed).
    fn write_json(&self, py: Python<'_>, path: &str) -> PyResult<()> {
        py.allow_threads(|| {
            write_file(path, |w| {
                serde_json::to_writer_pretty(&mut *w, &self.0).map_err(std::io::Error::from)?;
                w.write_all(b"\n")
            })
        })
    }
    /// The corrected lower bound of paper 003 §3.2.
    fn lower_bound(&self) -> f64 {
        mc::lower_bound(&self.0)
    }
}

#[pyclass(frozen, module = "commaware._core")]
pub(crate) struct MulticastReport(mc::Report);

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
    fn to_json<'py>(&self, py: Python<'py>, summary: bool) -> PyResult<Bound<'py, PyString>> {
        py_str(py, self.0.to_json(summary))
    }
    /// Write the `--json` document to `path` (streamed), with the engine replay's model and
    /// makespan when given.
    #[pyo3(signature = (path, summary=false, execution=None))]
    fn write_json(&self, py: Python<'_>, path: &str, summary: bool, execution: Option<(String, f64)>) -> PyResult<()> {
        py.allow_threads(|| {
            write_file(path, |w| {
                self.0.write_json(&mut *w, summary, execution.as_ref().map(|(m, t)| (m.as_str(), *t)))?;
                w.write_all(b"\n")
            })
        })
    }
    /// Number of selections in the sequence.
    #[getter]
    fn n_selections(&self) -> usize {
        self.0.schedule.sequence.len()
    }
    /// The first `n` selections as (sender, receiver, source, complete).
    fn head(&self, n: usize) -> Vec<(usize, usize, usize, f64)> {
        self.0.schedule.sequence.iter().take(n).map(|s| (s.sender, s.receiver, s.source, s.complete)).collect()
    }
}

/// Parse and validate a multicast instance from text in `format`.
#[pyfunction]
#[pyo3(signature = (text, source, format="json"))]
pub(crate) fn multicast_load(py: Python<'_>, text: &str, source: &str, format: &str) -> PyResult<MulticastInstance> {
    let text = text.to_owned();
    py.allow_threads(|| {
        guarded(|| mc::instance_from_text(&text, Format::from_name(format)?).map_err(|e| e.in_source(source)))
    })
    .map(MulticastInstance)
}

/// Schedule an instance with one of the eleven algorithms of paper 003.
#[pyfunction]
#[pyo3(signature = (instance, algorithm, seed=0, receivers=None))]
pub(crate) fn multicast_schedule(
    py: Python<'_>,
    instance: &MulticastInstance,
    algorithm: &str,
    seed: u64,
    receivers: Option<Vec<usize>>,
) -> PyResult<MulticastReport> {
    interruptible(py, || mc::Report::run(&instance.0, mc::algorithm_from_name(algorithm)?, seed, receivers.as_deref()))
        .map(MulticastReport)
}

/// Check a schedule against every rule; returns an error message or None.
#[pyfunction]
pub(crate) fn multicast_check(instance: &MulticastInstance, report: &MulticastReport) -> Option<String> {
    mc::validate_schedule(&instance.0, &report.0.schedule).err()
}

/// Replay a schedule on the engine under a sharing model (messages and timeline kept).
#[pyfunction]
#[pyo3(signature = (instance, report, model="contention_free"))]
pub(crate) fn multicast_execute(py: Python<'_>, instance: &MulticastInstance, report: &MulticastReport, model: &str) -> PyResult<SimResult> {
    let out = Outputs {
        record_messages: true,
        record_timeline: true,
        json_path: None,
        on_messages: None,
        batch_size: 1,
        on_progress: None,
        progress_every: 0.0,
        timeline: None,
        timing: None,
    };
    run_forwarded(py, out, |fw| mc::execute_observed(&instance.0, &report.0.schedule, model, fw), || unreachable!("no JSON path"))
}

/// A random instance with the settings of paper 003 §7; `params` is JSON of GenParams.
#[pyfunction]
pub(crate) fn multicast_generate(py: Python<'_>, params: &str, seed: u64) -> PyResult<MulticastInstance> {
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
pub(crate) fn multicast_algorithms() -> Vec<&'static str> {
    mc::Algorithm::ALL.iter().map(|a| a.name()).collect()
}
