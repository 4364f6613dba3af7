//! Platforms, traces and the replay (the engine and MPI layers): loading, simulating with
//! streamed outputs, schemas and the names the front-ends list.

use std::fs::File;
use std::io::BufWriter;

use commaware_core::mpi::placement::{Hostfile, Placement};
use commaware_core::error::{parse_input, Format};
use commaware_core::engine::interference;
use commaware_core::mpi::output::JsonStream;
use commaware_core::mpi::jobs::{simulate_jobs as simulate_jobs_core, JobRun};
use commaware_core::mpi::replay::{Interval, MessageRecord, NoObserver, Observer, Progress};
use commaware_core::mpi::timeline::{self, TimelineSink};
use commaware_core::{Error, ErrorKind, SimOptions};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::convert::{column, link_columns, py_str};
use crate::errors::{OptionsError, guarded, interruptible, to_py};

#[pyclass(frozen, module = "commaware._core")]
pub(crate) struct Platform(pub(crate) commaware_core::Platform);

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
    fn to_json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
        py_str(py, serde_json::to_string_pretty(&self.0).unwrap_or_default())
    }
    fn __len__(&self) -> usize {
        self.0.hosts.len()
    }
}

#[pyclass(frozen, module = "commaware._core")]
pub(crate) struct Trace(pub(crate) commaware_core::Trace);

#[pymethods]
impl Trace {
    #[getter]
    fn n_ranks(&self) -> usize {
        self.0.n_ranks()
    }
    #[getter]
    fn n_ops(&self) -> usize {
        self.0.n_ops()
    }
    #[getter]
    fn derived_datatype_ops(&self) -> u64 {
        self.0.derived_datatype_ops
    }
}

/// A replay's outcome, with the messages and intervals it was asked to keep.
#[pyclass(frozen, module = "commaware._core")]
pub(crate) struct SimResult {
    result: commaware_core::SimResult,
    /// `None` when messages were not recorded.
    messages: Option<Vec<MessageRecord>>,
    timeline: Option<Vec<Interval>>,
}

/// Message records as a dict of byte columns (dtypes in the stub's docstring).
fn message_columns<'py>(py: Python<'py>, m: &[MessageRecord]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("src_rank", column(py, m.iter().map(|x| x.src_rank.to_ne_bytes())))?;
    d.set_item("dst_rank", column(py, m.iter().map(|x| x.dst_rank.to_ne_bytes())))?;
    d.set_item("src_host", column(py, m.iter().map(|x| x.src_host.to_ne_bytes())))?;
    d.set_item("dst_host", column(py, m.iter().map(|x| x.dst_host.to_ne_bytes())))?;
    d.set_item("bytes", column(py, m.iter().map(|x| x.bytes.to_ne_bytes())))?;
    d.set_item("tag", column(py, m.iter().map(|x| x.tag.to_ne_bytes())))?;
    d.set_item("op", column(py, m.iter().map(|x| [x.op])))?;
    d.set_item("start", column(py, m.iter().map(|x| x.start.to_ne_bytes())))?;
    d.set_item("end", column(py, m.iter().map(|x| x.end.to_ne_bytes())))?;
    // Paper 004 §VI-A: effective penalty (NaN when none) and conflict-class bits (255: none).
    d.set_item("penalty", column(py, m.iter().map(|x| x.penalty.to_ne_bytes())))?;
    d.set_item("conflicts", column(py, m.iter().map(|x| [x.conflicts.unwrap_or(255)])))?;
    Ok(d)
}

fn not_recorded(what: &str) -> PyErr {
    OptionsError::new_err(format!("{what} were not recorded: simulate with record_{what}=True"))
}

#[pymethods]
impl SimResult {
    #[getter]
    fn makespan(&self) -> f64 {
        self.result.makespan
    }
    #[getter]
    fn model(&self) -> String {
        self.result.model.clone()
    }
    #[getter]
    fn host_names(&self) -> Vec<String> {
        self.result.host_names.clone()
    }
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.result.warnings.clone()
    }
    /// Myrinet's component counts (`counts`, `estimated`, `bounded`, `largest_error`; the
    /// last `None` when unbounded); `None` under other models.
    #[getter]
    fn penalty_counts(&self, py: Python<'_>) -> PyResult<Option<Py<PyDict>>> {
        let Some(c) = self.result.penalty_counts else { return Ok(None) };
        let d = PyDict::new(py);
        d.set_item("counts", c.counts)?;
        d.set_item("estimated", c.estimated)?;
        d.set_item("bounded", c.bounded)?;
        d.set_item("largest_error", c.largest_error.is_finite().then_some(c.largest_error))?;
        Ok(Some(d.unbind()))
    }
    #[getter]
    fn derived_datatype_ops(&self) -> u64 {
        self.result.derived_datatype_ops
    }
    #[getter]
    fn actions(&self) -> u64 {
        self.result.actions
    }
    #[getter]
    fn events(&self) -> u64 {
        self.result.events
    }
    #[getter]
    fn replay_seconds(&self) -> f64 {
        self.result.replay_seconds
    }
    /// count, bytes, mean_seconds, max_seconds over all messages.
    fn message_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = &self.result.message_stats;
        let d = PyDict::new(py);
        d.set_item("count", s.count)?;
        d.set_item("bytes", s.bytes)?;
        d.set_item("mean_seconds", s.mean_seconds)?;
        d.set_item("max_seconds", s.max_seconds)?;
        Ok(d)
    }
    /// The `--json` document (needs recorded messages); with `load_seconds` (the trace's
    /// load time), also `"timing"`.
    #[pyo3(signature = (load_seconds=None))]
    fn to_json<'py>(&self, py: Python<'py>, load_seconds: Option<f64>) -> PyResult<Bound<'py, PyString>> {
        let m = self.messages.as_deref().ok_or_else(|| not_recorded("messages"))?;
        py_str(py, commaware_core::mpi::output::to_json_string(&self.result, m, load_seconds))
    }
    /// Messages as byte columns, in the order their last byte arrived.
    fn message_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        message_columns(py, self.messages.as_deref().ok_or_else(|| not_recorded("messages"))?)
    }
    /// Ranks as columns.
    fn rank_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = &self.result.ranks;
        let d = PyDict::new(py);
        d.set_item("rank", r.iter().map(|x| x.rank).collect::<Vec<_>>())?;
        d.set_item("host", r.iter().map(|x| x.host.as_str()).collect::<Vec<_>>())?;
        d.set_item("end", r.iter().map(|x| x.end).collect::<Vec<_>>())?;
        d.set_item("compute_seconds", r.iter().map(|x| x.compute_seconds).collect::<Vec<_>>())?;
        d.set_item("blocked_seconds", r.iter().map(|x| x.blocked_seconds).collect::<Vec<_>>())?;
        d.set_item("mean_penalty", r.iter().map(|x| x.mean_penalty.unwrap_or(f64::NAN)).collect::<Vec<_>>())?;
        Ok(d)
    }
    /// Per-link statistics as columns (name: list of str; bandwidth, bytes, busy_time,
    /// mean_utilisation, peak_utilisation: f64 bytes; peak_flows: u32 bytes; histogram:
    /// f64 bytes, links × bins row-major), with bin_seconds and bins. Needs link_stats=True.
    fn link_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.result.links.as_ref().ok_or_else(|| OptionsError::new_err("link statistics were not kept: simulate with link_stats=True"))?;
        link_columns(py, r)
    }
    /// Per-rank intervals as byte columns: rank (u32), kind (u8, see interval_kinds), start, end (f64).
    fn timeline_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let t = self.timeline.as_deref().ok_or_else(|| not_recorded("timeline"))?;
        let d = PyDict::new(py);
        d.set_item("rank", column(py, t.iter().map(|x| x.rank.to_ne_bytes())))?;
        d.set_item("kind", column(py, t.iter().map(|x| [x.kind])))?;
        d.set_item("start", column(py, t.iter().map(|x| x.start.to_ne_bytes())))?;
        d.set_item("end", column(py, t.iter().map(|x| x.end.to_ne_bytes())))?;
        Ok(d)
    }
}

/// Forwards the replay's reports to what the caller asked for: records kept in memory,
/// the streamed JSON document, batches of message columns and progress calls to Python.
pub(crate) struct Forward {
    messages: Option<Vec<MessageRecord>>,
    timeline: Option<Vec<Interval>>,
    json: Option<JsonStream<BufWriter<File>>>,
    batch: Option<(Vec<MessageRecord>, PyObject, usize)>,
    progress: Option<(PyObject, f64)>,
    /// The `--timeline` writer.
    sink: Option<Box<dyn TimelineSink + Send>>,
    /// What a Python callback raised; re-raised when the replay returns.
    raised: Option<PyErr>,
}

fn aborted() -> Error {
    Error::new(ErrorKind::Aborted, "", "stopped by a callback")
}

impl Forward {
    /// Forwards only progress calls, to `callback` every `every` wall seconds (none without).
    pub(crate) fn progress_only(callback: Option<PyObject>, every: f64) -> Self {
        Forward { messages: None, timeline: None, json: None, batch: None, progress: callback.map(|cb| (cb, every)), sink: None, raised: None }
    }

    /// What a Python callback raised, to re-raise once the replay has returned.
    pub(crate) fn take_raised(&mut self) -> Option<PyErr> {
        self.raised.take()
    }

    /// Call `f` with the GIL; a Python exception stops the replay.
    fn call(&mut self, f: impl FnOnce(Python<'_>) -> PyResult<()>) -> Result<(), Error> {
        Python::with_gil(|py| f(py).and_then(|_| py.check_signals())).map_err(|e| {
            self.raised.get_or_insert(e);
            aborted()
        })
    }

    fn flush_batch(&mut self) -> Result<(), Error> {
        let Some((rows, callback, _)) = self.batch.as_mut() else { return Ok(()) };
        if rows.is_empty() {
            return Ok(());
        }
        let rows = std::mem::take(rows);
        let callback = Python::with_gil(|py| callback.clone_ref(py));
        self.call(|py| callback.call1(py, (message_columns(py, &rows)?,)).map(|_| ()))
    }
}

impl Observer for Forward {
    fn wants_messages(&self) -> bool {
        self.messages.is_some() || self.json.is_some() || self.batch.is_some()
    }
    fn wants_timeline(&self) -> bool {
        self.timeline.is_some()
    }
    fn message(&mut self, m: &MessageRecord) -> Result<(), Error> {
        if let Some(v) = self.messages.as_mut() {
            v.push(*m);
        }
        if let Some(j) = self.json.as_mut() {
            j.message(m)?;
        }
        if let Some((rows, _, size)) = self.batch.as_mut() {
            rows.push(*m);
            if rows.len() >= *size {
                return self.flush_batch();
            }
        }
        Ok(())
    }
    fn interval(&mut self, i: &Interval) -> Result<(), Error> {
        if let Some(v) = self.timeline.as_mut() {
            v.push(*i);
        }
        Ok(())
    }
    fn progress_every(&self) -> Option<f64> {
        self.progress.as_ref().map(|p| p.1)
    }
    fn progress(&mut self, p: &Progress) -> Result<(), Error> {
        let Some((callback, _)) = self.progress.as_ref() else { return Ok(()) };
        let callback = Python::with_gil(|py| callback.clone_ref(py));
        let args = (p.now, p.events, p.messages, p.ranks_done, p.ranks, p.elapsed);
        self.call(|py| callback.call1(py, args).map(|_| ()))
    }
    fn timeline_sink(&mut self) -> Option<&mut dyn TimelineSink> {
        match self.sink.as_mut() {
            Some(s) => Some(s.as_mut()),
            None => None,
        }
    }
}

/// Parse and validate a platform from text in `format` (json, toml, or dict: JSON made
/// from an in-memory value); `source` names the file in errors. `simgrid` is the (text,
/// name) of the SimGrid file that the platform's `simgrid_platform` names.
#[pyfunction]
#[pyo3(signature = (text, source, format="json", simgrid=None))]
pub(crate) fn load_platform(py: Python<'_>, text: &str, source: &str, format: &str, simgrid: Option<(String, String)>) -> PyResult<Platform> {
    let text = text.to_owned();
    let r = py.allow_threads(|| {
        guarded(|| {
            let format = Format::from_name(format)?;
            match &simgrid {
                None => commaware_core::mpi::platform_file::load(&text, format),
                Some((xml_text, xml_file)) => commaware_core::mpi::platform_file::load_over_simgrid(&text, format, xml_text, xml_file),
            }
            .map_err(|e| e.in_source(source))
        })
    });
    r.map(Platform)
}

/// Read a SimGrid platform file (XML, version 4.1) given as `text`; `source` names the file
/// in errors (with the line and column).
#[pyfunction]
pub(crate) fn platform_from_simgrid_xml(py: Python<'_>, text: &str, source: &str) -> PyResult<Platform> {
    let text = text.to_owned();
    let r = py.allow_threads(|| guarded(|| commaware_core::mpi::platform_file::load_simgrid_xml(&text, source)));
    r.map(Platform)
}

/// Parse, validate and lower a trace from text in `format`; `derived_datatype_bytes` is
/// the size per element of a TI trace's derived datatype (id -1; default 0, SimGrid's).
#[pyfunction]
#[pyo3(signature = (text, source, format="json", derived_datatype_bytes=None))]
pub(crate) fn load_trace(py: Python<'_>, text: pyo3::pybacked::PyBackedStr, source: &str, format: &str, derived_datatype_bytes: Option<f64>) -> PyResult<Trace> {
    // Borrowed from Python's string (kept alive by `text`), not copied: the text is held once.
    let r = py.allow_threads(|| {
        guarded(|| {
            // Checked whatever the format, though only TI traces have derived datatypes.
            let options = commaware_core::mpi::ti::TiOptions::new(derived_datatype_bytes)?;
            if format == "ti" {
                return commaware_core::mpi::ti::trace_from_shared(&text, options).map_err(|e| e.in_source(source));
            }
            let trace = match Format::from_name(format)? {
                Format::Json => commaware_core::Trace::from_json(&text),
                other => parse_input(ErrorKind::Trace, &text, other).and_then(commaware_core::Trace::from_spec),
            };
            trace.map_err(|e| e.in_source(source))
        })
    });
    r.map(Trace)
}

/// What to record and where to stream, shared by `simulate` and `multicast_execute`.
pub(crate) struct Outputs {
    pub(crate) record_messages: bool,
    pub(crate) record_timeline: bool,
    pub(crate) json_path: Option<String>,
    pub(crate) on_messages: Option<PyObject>,
    pub(crate) batch_size: usize,
    pub(crate) on_progress: Option<PyObject>,
    pub(crate) progress_every: f64,
    /// Where to write the timeline, and the file name that picks its format and that
    /// errors show (the caller writes a partial file and renames it once complete).
    pub(crate) timeline: Option<(String, String)>,
    /// The trace's load time, when the JSON document is to carry wall-clock timing.
    pub(crate) timing: Option<f64>,
}

/// Run `sim` with a [`Forward`] built from `out`, without the GIL; re-raise what a
/// callback raised.
pub(crate) fn run_forwarded(
    py: Python<'_>,
    out: Outputs,
    sim: impl FnOnce(&mut Forward) -> Result<commaware_core::SimResult, Error> + Send,
    model_and_hosts: impl FnOnce() -> Result<(String, Vec<String>), Error> + Send,
) -> PyResult<SimResult> {
    if out.batch_size == 0 {
        return Err(OptionsError::new_err("batch_size must be > 0"));
    }
    let r = interruptible(py, || {
        {
            let json = match &out.json_path {
                None => None,
                Some(path) => {
                    let (model, hosts) = model_and_hosts()?;
                    let file = File::create(path).map_err(|e| {
                        Error { kind: ErrorKind::Output, source: path.clone(), field: String::new(), reason: format!("cannot write: {e}") }
                    })?;
                    let stream = JsonStream::new(BufWriter::with_capacity(1 << 20, file), &model, hosts, path)?;
                    Some(match out.timing {
                        Some(load_seconds) => stream.with_timing(load_seconds),
                        None => stream,
                    })
                }
            };
            let sink = match &out.timeline {
                None => None,
                Some((path, shown_as)) => Some(timeline::open(std::path::Path::new(path), shown_as)?),
            };
            let mut fw = Forward {
                messages: out.record_messages.then(Vec::new),
                timeline: out.record_timeline.then(Vec::new),
                json,
                batch: out.on_messages.map(|cb| (Vec::with_capacity(out.batch_size.min(1 << 20)), cb, out.batch_size)),
                progress: out.on_progress.map(|cb| (cb, out.progress_every)),
                sink,
                raised: None,
            };
            let res = sim(&mut fw).and_then(|res| {
                fw.flush_batch()?;
                if let Some(j) = fw.json.take() {
                    j.finish(&res)?;
                }
                Ok(res)
            });
            Ok((res, fw))
        }
    });
    let (res, mut fw) = r?;
    if let Some(e) = fw.raised.take() {
        return Err(e);
    }
    let result = res.map_err(to_py)?;
    Ok(SimResult { result, messages: fw.messages.take(), timeline: fw.timeline.take() })
}

/// Replay `trace` on `platform`.
#[pyfunction]
#[pyo3(signature = (platform, trace, model=None, placement="explicit", seed=0, record_messages=true, record_timeline=true,
                    json_path=None, on_messages=None, batch_size=65536, on_progress=None, progress_every=0.25,
                    params=Vec::new(), coll=None, smpi=None, timeline_path=None, timeline_as=None,
                    link_stats=false, hostfile=None, timing=None, routing=None, routing_seed=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn simulate(
    py: Python<'_>,
    platform: &Platform,
    trace: &Trace,
    model: Option<String>,
    placement: &str,
    seed: u64,
    record_messages: bool,
    record_timeline: bool,
    json_path: Option<String>,
    on_messages: Option<PyObject>,
    batch_size: usize,
    on_progress: Option<PyObject>,
    progress_every: f64,
    params: Vec<(String, f64)>,
    coll: Option<String>,
    smpi: Option<String>,
    timeline_path: Option<String>,
    timeline_as: Option<String>,
    link_stats: bool,
    hostfile: Option<(String, String)>,
    timing: Option<f64>,
    routing: Option<String>,
    routing_seed: Option<u64>,
) -> PyResult<SimResult> {
    let timeline = timeline_path.map(|p| {
        let shown = timeline_as.unwrap_or_else(|| p.clone());
        (p, shown)
    });
    let out = Outputs { record_messages, record_timeline, json_path, on_messages, batch_size, on_progress, progress_every, timeline, timing };
    let placement = Placement::from_name(placement).map_err(to_py)?;
    let collectives = coll.as_deref().map(commaware_core::mpi::collectives::entries).unwrap_or_default();
    let hostfile = hostfile.map(|(text, source)| Hostfile::parse(&text, &source)).transpose().map_err(to_py)?;
    let opts = SimOptions { model: model.clone(), placement, seed, params, collectives, smpi, link_stats, hostfile, routing, routing_seed };
    let model_name = model.clone().unwrap_or_else(|| platform.0.network.model.clone());
    let hosts: Vec<String> = platform.0.hosts.iter().map(|h| h.name.clone()).collect();
    run_forwarded(
        py,
        out,
        |fw| commaware_core::simulate_observed(&platform.0, &trace.0, &opts, interference::compute_rate(&platform.0), fw),
        move || Ok((model_name, hosts)),
    )
}

/// Replay several jobs together on `platform`: job j is `traces[j]`, its ranks from `starts[j]`
/// seconds on the hosts `hosts[j]` (platform indices). Returns each job's (start, end, rank
/// ends) and the engine's steps.
#[pyfunction]
#[pyo3(signature = (platform, traces, starts, hosts, model=None, params=Vec::new(), coll=None, smpi=None, routing=None, routing_seed=None))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub(crate) fn simulate_jobs(
    py: Python<'_>,
    platform: &Platform,
    traces: Vec<PyRef<'_, Trace>>,
    starts: Vec<f64>,
    hosts: Vec<Vec<usize>>,
    model: Option<String>,
    params: Vec<(String, f64)>,
    coll: Option<String>,
    smpi: Option<String>,
    routing: Option<String>,
    routing_seed: Option<u64>,
) -> PyResult<(Vec<(f64, f64, Vec<f64>)>, u64)> {
    if starts.len() != traces.len() || hosts.len() != traces.len() {
        return Err(OptionsError::new_err(format!(
            "{} traces, {} starts and {} host lists: one of each per job",
            traces.len(),
            starts.len(),
            hosts.len()
        )));
    }
    let collectives = coll.as_deref().map(commaware_core::mpi::collectives::entries).unwrap_or_default();
    let opts = SimOptions { model, params, collectives, smpi, routing, routing_seed, ..SimOptions::default() };
    let jobs: Vec<JobRun> = traces
        .iter()
        .zip(starts)
        .zip(hosts)
        .map(|((t, start), hosts)| JobRun { trace: t.0.clone(), start, hosts })
        .collect();
    let (ends, events) = interruptible(py, || simulate_jobs_core(&platform.0, jobs, &opts, &mut NoObserver))?;
    Ok((ends.into_iter().map(|e| (e.start, e.end, e.rank_ends)).collect(), events))
}

/// The file extensions `simulate`'s timeline accepts (`.paje`, ...), each picking a writer.
#[pyfunction]
pub(crate) fn timeline_extensions() -> Vec<String> {
    timeline::FORMATS.iter().map(|(ext, _)| format!(".{ext}")).collect()
}

#[pyfunction]
pub(crate) fn platform_schema() -> String {
    commaware_core::mpi::platform_file::json_schema()
}

#[pyfunction]
pub(crate) fn trace_schema() -> String {
    commaware_core::Trace::json_schema()
}

/// The routings of `network.routing` and `--routing` (docs/routing.md).
#[pyfunction]
pub(crate) fn routings() -> Vec<&'static str> {
    commaware_core::network::topology::routing::Routing::NAMES.to_vec()
}

#[pyfunction]
pub(crate) fn placements() -> Vec<&'static str> {
    Placement::NAMES.to_vec()
}
