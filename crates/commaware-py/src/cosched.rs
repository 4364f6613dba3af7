//! Paper 002: job workloads and the batch and time-sharing schedulers.

use std::collections::HashMap;

use commaware_core::cosched;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::convert::{column, link_columns, py_str};
use crate::errors::OptionsError;
use crate::errors::{guarded, interruptible};

/// A job workload (paper 002): JSON jobs or an SWF log, checked.
#[pyclass(frozen, module = "commaware._core")]
pub(crate) struct Workload(cosched::Workload);

fn skipped_dict<'py>(py: Python<'py>, s: &cosched::Skipped) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("negative_runtime", s.negative_runtime)?;
    d.set_item("no_procs", s.no_procs)?;
    d.set_item("no_submit", s.no_submit)?;
    d.set_item("too_large", s.too_large)?;
    d.set_item("total", s.total())?;
    Ok(d)
}

#[pymethods]
impl Workload {
    fn __len__(&self) -> usize {
        self.0.spec.jobs.len()
    }
    /// Jobs left out on reading (SWF), by reason.
    #[getter]
    fn skipped<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        skipped_dict(py, &self.0.skipped)
    }
    /// The SWF comment lines (empty for a JSON workload).
    #[getter]
    fn header(&self) -> Vec<String> {
        self.0.swf.as_ref().map(|l| l.header.clone()).unwrap_or_default()
    }
    /// Whether it was read from an SWF log.
    #[getter]
    fn is_swf(&self) -> bool {
        self.0.swf.is_some()
    }
    /// The largest process count of any job.
    #[getter]
    fn max_procs(&self) -> u64 {
        self.0.spec.jobs.iter().map(|j| j.procs).max().unwrap_or(0)
    }
    /// The workload as a JSON document (`{"generator": ..., "jobs": [...]}`).
    fn to_json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
        let text = py.allow_threads(|| serde_json::to_string(&self.0.spec).unwrap_or_default());
        py_str(py, text)
    }
    /// The jobs' `trace` paths as the workload writes them, each once, in order of first use.
    fn trace_paths(&self) -> Vec<String> {
        let mut seen = std::collections::HashSet::new();
        self.0.spec.jobs.iter().filter_map(|j| j.trace.clone()).filter(|t| seen.insert(t.clone())).collect()
    }
    /// The same workload with the program of `pattern` (`NAME[:bytes=B,iterations=N,compute=S]`)
    /// as its default program (for every job without a program or a trace).
    fn with_pattern(&self, pattern: &str) -> PyResult<Workload> {
        let program = guarded(|| cosched::Program::from_pattern(pattern))?;
        let mut w = self.0.clone();
        w.spec.default_program = Some(program);
        Ok(Workload(w))
    }
    /// The trace job `index` runs on a platform: its program (or the default program) lowered
    /// to MPI operations, else a compute of its logged runtime (a job with a `trace` file runs
    /// that file: an error here).
    fn job_trace(&self, py: Python<'_>, index: usize) -> PyResult<crate::simulation::Trace> {
        let spec = &self.0.spec;
        let r = py.allow_threads(|| {
            guarded(|| {
                let jobs = spec.jobs_with_default();
                let job = jobs.get(index).ok_or_else(|| {
                    commaware_core::Error::new(commaware_core::ErrorKind::Options, "index", format!("no job {index} (the workload has {})", jobs.len()))
                })?;
                if let Some(path) = &job.trace {
                    return Err(commaware_core::Error::workload(format!("jobs[{index}].trace"), format!("the job replays `{path}`: read that file")));
                }
                cosched::fabric::job_trace(job)
            })
        });
        r.map(crate::simulation::Trace)
    }
    /// The workload as SWF text (an SWF log as read; JSON jobs with -1 for unknown fields).
    fn to_swf<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
        let text = py.allow_threads(|| self.0.to_swf());
        py_str(py, text)
    }
}

/// Read a workload from `text` in `format` (json, dict or swf); `source` names the file in errors.
#[pyfunction]
#[pyo3(signature = (text, source, format="json"))]
pub(crate) fn load_workload(py: Python<'_>, text: &str, source: &str, format: &str) -> PyResult<Workload> {
    let text = text.to_owned();
    let r = py.allow_threads(|| guarded(|| cosched::Workload::from_text(&text, format).map_err(|e| e.in_source(source))));
    r.map(Workload)
}

/// The NAS-like workload generator (paper 002, Tables 1-2); see docs/cosched.md.
#[pyfunction]
#[pyo3(signature = (jobs, interarrival_s, seed, classes, mix="nas"))]
pub(crate) fn nas_workload(py: Python<'_>, jobs: usize, interarrival_s: f64, seed: u64, classes: Vec<String>, mix: &str) -> PyResult<Workload> {
    let mix = mix.to_owned();
    let r = py.allow_threads(|| {
        guarded(|| {
            let params = cosched::nas::NasParams { jobs, interarrival_s, seed, classes, mix: cosched::nas::Mix::from_name(&mix)? };
            cosched::Workload::from_spec(cosched::nas::generate(&params)?)
        })
    });
    r.map(Workload)
}

/// The outcome of a scheduling run (batch or time-sharing).
#[pyclass(frozen, module = "commaware._core")]
pub(crate) struct CoschedResult(cosched::RunResult);

#[pymethods]
impl CoschedResult {
    #[getter]
    fn policy(&self) -> &'static str {
        self.0.policy_name()
    }
    #[getter]
    fn processors(&self) -> u64 {
        self.0.processors()
    }
    /// Scheduling passes (batch) or events (time-sharing) simulated.
    #[getter]
    fn passes(&self) -> u64 {
        self.0.steps()
    }
    fn __len__(&self) -> usize {
        self.0.jobs().len()
    }
    /// Averages: jobs, avg_wait_s, avg_response_s, avg_exec_s, avg_bounded_slowdown, max_wait_s,
    /// total_time_s, utilization, energy_busy_j, energy_idle_j, energy_j.
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.0.summary();
        let d = PyDict::new(py);
        d.set_item("jobs", s.jobs)?;
        d.set_item("avg_wait_s", s.avg_wait_s)?;
        d.set_item("avg_response_s", s.avg_response_s)?;
        d.set_item("avg_exec_s", s.avg_exec_s)?;
        d.set_item("avg_bounded_slowdown", s.avg_bounded_slowdown)?;
        d.set_item("max_wait_s", s.max_wait_s)?;
        d.set_item("total_time_s", s.total_time_s)?;
        d.set_item("utilization", s.utilization)?;
        d.set_item("energy_busy_j", s.energy_busy_j)?;
        d.set_item("energy_idle_j", s.energy_idle_j)?;
        d.set_item("energy_j", s.energy_j)?;
        Ok(d)
    }
    /// Jobs left out: on reading (SWF) and for being larger than the cluster.
    #[getter]
    fn skipped<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        skipped_dict(py, self.0.skipped())
    }
    /// Jobs as byte columns in queue order: id (u64), procs (u64), submit, runtime,
    /// requested, start, end, reserved (f64; NaN when never reserved).
    fn job_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let j = self.0.jobs();
        let d = PyDict::new(py);
        d.set_item("id", column(py, j.iter().map(|x| x.id.to_ne_bytes())))?;
        d.set_item("procs", column(py, j.iter().map(|x| x.procs.to_ne_bytes())))?;
        d.set_item("submit", column(py, j.iter().map(|x| x.submit_s.to_ne_bytes())))?;
        d.set_item("runtime", column(py, j.iter().map(|x| x.runtime_s.to_ne_bytes())))?;
        d.set_item("requested", column(py, j.iter().map(|x| x.requested_s.to_ne_bytes())))?;
        d.set_item("start", column(py, j.iter().map(|x| x.start_s.to_ne_bytes())))?;
        d.set_item("end", column(py, j.iter().map(|x| x.end_s.to_ne_bytes())))?;
        d.set_item("reserved", column(py, j.iter().map(|x| x.reserved_s.to_ne_bytes())))?;
        let f = self.0.fabric();
        if !f.is_empty() {
            d.set_item("alone", column(py, f.iter().map(|x| x.alone_s.to_ne_bytes())))?;
            d.set_item("bytes", column(py, f.iter().map(|x| x.bytes.to_ne_bytes())))?;
        }
        Ok(d)
    }
    /// On a platform with link_stats=True: per-link statistics as columns (as a simulation's).
    fn link_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.0.links().ok_or_else(|| OptionsError::new_err("link statistics were not kept: run on a platform with link_stats=True"))?;
        link_columns(py, r)
    }
    /// On a platform with interference=True: the interference table as columns (job_a,
    /// job_b, links: u64 bytes; bytes_a, bytes_b: f64 bytes).
    fn interference_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let t = self.0.interference().ok_or_else(|| OptionsError::new_err("the interference table was not kept: run on a platform with interference=True"))?;
        let d = PyDict::new(py);
        d.set_item("job_a", column(py, t.iter().map(|x| x.a.to_ne_bytes())))?;
        d.set_item("job_b", column(py, t.iter().map(|x| x.b.to_ne_bytes())))?;
        d.set_item("links", column(py, t.iter().map(|x| u64::from(x.links).to_ne_bytes())))?;
        d.set_item("bytes_a", column(py, t.iter().map(|x| x.bytes_a.to_ne_bytes())))?;
        d.set_item("bytes_b", column(py, t.iter().map(|x| x.bytes_b.to_ne_bytes())))?;
        Ok(d)
    }
    /// The `--json` document: policy, processors, the summary, skipped, and every job.
    fn to_json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
        let text = py.allow_threads(|| self.0.to_json());
        py_str(py, text)
    }
    /// Write the run's timeline to `path` as a Perfetto trace (named `shown_as` in errors): a
    /// track per host (on a platform, named from `host_names`), node (time-sharing) or for the
    /// cluster, lanes under it, a slice per job on each of its lanes.
    fn write_timeline(&self, py: Python<'_>, path: &str, shown_as: &str, host_names: Vec<String>) -> PyResult<()> {
        py.allow_threads(|| guarded(|| self.0.write_timeline(std::path::Path::new(path), shown_as, &host_names)))
    }
    /// Batsim's jobs.csv text, `workload_name` in its column.
    fn jobs_csv<'py>(&self, py: Python<'py>, workload_name: &str) -> PyResult<Bound<'py, PyString>> {
        let name = workload_name.to_owned();
        let text = py.allow_threads(|| self.0.jobs_csv(&name));
        py_str(py, text)
    }
}

/// Run a workload under `policy` (batch, batch-easy, batch-conservative, nls, gang, dcs, sb,
/// pb, cc, hybrid) on `processors` 1-CPU nodes; `params_json` overrides time-sharing
/// parameters (a JSON object of TsParams fields).
#[pyfunction]
#[pyo3(signature = (workload, policy, processors, allocation="packing", mpl=None, seed=0, params_json=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn cosched_run(
    py: Python<'_>,
    workload: &Workload,
    policy: &str,
    processors: u64,
    allocation: &str,
    mpl: Option<u64>,
    seed: u64,
    params_json: Option<&str>,
) -> PyResult<CoschedResult> {
    let policy = policy.to_owned();
    let allocation = allocation.to_owned();
    let params_json = params_json.map(str::to_owned);
    let r = interruptible(py, || {
        {
            let mut params: cosched::TsParams = match &params_json {
                Some(text) => commaware_core::error::parse_json(commaware_core::error::ErrorKind::Options, text)?,
                None => cosched::TsParams::default(),
            };
            params.nodes = processors;
            params.allocation = cosched::Allocation::from_name(&allocation)?;
            params.seed = seed;
            let batch = cosched::Policy::from_name(&policy).is_ok();
            params.mpl = mpl.unwrap_or(if batch { 1 } else { params.mpl });
            workload.0.run(&cosched::RunSpec { policy, params })
        }
    });
    r.map(CoschedResult)
}

/// Run a workload under batch `policy` on `platform` (one process a core), every job's
/// program in one engine so that jobs share the network; `allocation` (contiguous, random)
/// and `seed` give each job its cores; `model`, `params`, `coll` and `smpi` are `simulate`'s;
/// `link_stats` keeps per-link statistics and `interference` the interference table. Also the
/// engine's steps.
#[pyfunction]
#[pyo3(signature = (workload, policy, platform, allocation="contiguous", seed=0, model=None, params=Vec::new(), coll=None, smpi=None, traces=HashMap::new(), alone=true, link_stats=false, interference=false, routing=None, routing_seed=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn cosched_run_fabric(
    py: Python<'_>,
    workload: &Workload,
    policy: &str,
    platform: &crate::simulation::Platform,
    allocation: &str,
    seed: u64,
    model: Option<String>,
    params: Vec<(String, f64)>,
    coll: Option<String>,
    smpi: Option<String>,
    traces: HashMap<String, PyRef<'_, crate::simulation::Trace>>,
    alone: bool,
    link_stats: bool,
    interference: bool,
    routing: Option<String>,
    routing_seed: Option<u64>,
) -> PyResult<(CoschedResult, u64)> {
    let collectives = coll.as_deref().map(commaware_core::mpi::collectives::entries).unwrap_or_default();
    let options =
        commaware_core::SimOptions { model, params, collectives, smpi, link_stats, routing, routing_seed, ..commaware_core::SimOptions::default() };
    let (policy, allocation) = (policy.to_owned(), allocation.to_owned());
    let traces: HashMap<String, commaware_core::mpi::trace::Trace> = traces.into_iter().map(|(k, t)| (k, t.0.clone())).collect();
    let (r, events) = interruptible(py, || {
        let policy = match policy.as_str() {
            "explicit" => cosched::Policy::Explicit,
            name => cosched::Policy::from_name(name).map_err(|_| {
                commaware_core::Error::new(
                    commaware_core::ErrorKind::Options,
                    "policy",
                    format!("`{name}` does not run on a platform: give a batch policy (batch, batch-easy, batch-conservative) or explicit"),
                )
            })?,
        };
        let allocation = cosched::fabric::HostAllocation::from_name(&allocation)?;
        let settings = cosched::fabric::FabricSettings { allocation, seed, alone, interference };
        workload.0.run_on_fabric(policy, &platform.0, &options, &settings, &traces)
    })?;
    Ok((CoschedResult(cosched::RunResult::Batch(r)), events))
}

/// Defaults of every time-sharing parameter, as JSON.
#[pyfunction]
pub(crate) fn cosched_default_params() -> String {
    serde_json::to_string(&cosched::TsParams::default()).unwrap_or_default()
}

#[pyfunction]
pub(crate) fn workload_schema() -> String {
    cosched::WorkloadSpec::json_schema()
}
