//! `commaware._core`: thin PyO3 bindings. Converts arguments and results and maps
//! core errors to typed Python exceptions; no modelling happens here. Every entry
//! point runs under `catch_unwind` so a Rust panic never reaches Python as such.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};

use commaware_core::cosched;
use commaware_core::multicast as mc;
use commaware_core::placement::Placement;
use commaware_core::error::{parse_input, Format};
use commaware_core::interference;
use commaware_core::tiling;
use commaware_core::output::JsonStream;
use commaware_core::replay::{Interval, MessageRecord, Observer, Progress, INTERVAL_KINDS};
use commaware_core::trace::OP_NAMES;
use commaware_core::tiling::kernel::{Axis as TilingAxis, TileBlock as TilingBlock};
use commaware_core::{Error, ErrorKind, SimOptions};
use pyo3::exceptions::{PyException, PyMemoryError};
use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

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

fn to_py(e: Error) -> PyErr {
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

/// A Python str from a Rust string; a failed allocation is a MemoryError, not a panic.
fn py_str(py: Python<'_>, s: String) -> PyResult<Bound<'_, PyString>> {
    let len = isize::try_from(s.len()).map_err(|_| PyMemoryError::new_err("string too long"))?;
    // SAFETY: the pointer and length describe valid UTF-8 (a Rust String); the new
    // reference is owned, and a null return is turned into the pending Python error.
    unsafe {
        Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyUnicode_FromStringAndSize(s.as_ptr().cast(), len))
            .map(|b| b.downcast_into_unchecked())
    }
}

/// Write a document to `path` with `write` (buffered); an I/O error is an OutputError naming the file.
fn write_file(path: &str, write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>) -> PyResult<()> {
    let result = File::create(path).and_then(|f| {
        let mut w = BufWriter::with_capacity(1 << 20, f);
        write(&mut w)?;
        w.flush()
    });
    result.map_err(|e| OutputError::new_err(format!("{path}: cannot write: {e}")))
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
    fn to_json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
        py_str(py, serde_json::to_string_pretty(&self.0).unwrap_or_default())
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

/// A replay's outcome, with the messages and intervals it was asked to keep.
#[pyclass(frozen, module = "commaware._core")]
struct SimResult {
    result: commaware_core::SimResult,
    /// `None` when messages were not recorded.
    messages: Option<Vec<MessageRecord>>,
    timeline: Option<Vec<Interval>>,
}

/// Columns as raw native-endian bytes (the Python side views them with numpy).
fn column<'py, const N: usize>(py: Python<'py>, values: impl Iterator<Item = [u8; N]>) -> Bound<'py, PyBytes> {
    let raw: Vec<u8> = values.flatten().collect();
    PyBytes::new(py, &raw)
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
    /// The `--json` document (needs recorded messages).
    fn to_json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
        let m = self.messages.as_deref().ok_or_else(|| not_recorded("messages"))?;
        py_str(py, commaware_core::output::to_json_string(&self.result, m))
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
struct Forward {
    messages: Option<Vec<MessageRecord>>,
    timeline: Option<Vec<Interval>>,
    json: Option<JsonStream<BufWriter<File>>>,
    batch: Option<(Vec<MessageRecord>, PyObject, usize)>,
    progress: Option<(PyObject, f64)>,
    /// What a Python callback raised; re-raised when the replay returns.
    raised: Option<PyErr>,
}

fn aborted() -> Error {
    Error::new(ErrorKind::Aborted, "", "stopped by a callback")
}

impl Forward {
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
            if format == "ti" {
                return commaware_core::ti::trace_from_shared(&text).map_err(|e| e.in_source(source));
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


/// Parse and validate a SimGrid time-independent trace given as one text per rank:
/// `parts` lists (rank, text, file name); an error about one rank names its file.
#[pyfunction]
fn load_trace_ti_ranks(py: Python<'_>, parts: Vec<(usize, String, String)>, source: &str) -> PyResult<Trace> {
    let r = py.allow_threads(|| {
        guarded(|| {
            let texts: Vec<(usize, &str)> = parts.iter().map(|(r, t, _)| (*r, t.as_str())).collect();
            commaware_core::ti::trace_from_ranks(&texts).map_err(|mut e| {
                if let Some((rank, rest)) = commaware_core::ti::split_rank_field(&e.field) {
                    if let Some((_, _, file)) = parts.iter().find(|(r, _, _)| *r == rank) {
                        e.field = if rest.is_empty() { format!("rank {rank}") } else { rest };
                        return e.in_source(file);
                    }
                }
                e.in_source(source)
            })
        })
    });
    r.map(Trace)
}

/// The SimGrid TI text of each rank of `trace` (compute seconds become flops at
/// `flops_per_second`; `header` is written as `#` comment lines first).
#[pyfunction]
fn export_ti(py: Python<'_>, trace: &Trace, flops_per_second: f64, header: &str, source: &str) -> PyResult<Vec<String>> {
    let header = header.to_owned();
    py.allow_threads(|| {
        guarded(|| {
            commaware_core::ti_export::export(&trace.0.spec, flops_per_second, &header).map_err(|e| e.in_source(source))
        })
    })
}

/// What to record and where to stream, shared by `simulate` and `multicast_execute`.
struct Outputs {
    record_messages: bool,
    record_timeline: bool,
    json_path: Option<String>,
    on_messages: Option<PyObject>,
    batch_size: usize,
    on_progress: Option<PyObject>,
    progress_every: f64,
}

/// Run `sim` with a [`Forward`] built from `out`, without the GIL; re-raise what a
/// callback raised.
fn run_forwarded(
    py: Python<'_>,
    out: Outputs,
    sim: impl FnOnce(&mut Forward) -> Result<commaware_core::SimResult, Error> + Send,
    model_and_hosts: impl FnOnce() -> Result<(String, Vec<String>), Error> + Send,
) -> PyResult<SimResult> {
    if out.batch_size == 0 {
        return Err(OptionsError::new_err("batch_size must be > 0"));
    }
    let r = py.allow_threads(|| {
        guarded(|| {
            let json = match &out.json_path {
                None => None,
                Some(path) => {
                    let (model, hosts) = model_and_hosts()?;
                    let file = File::create(path).map_err(|e| {
                        Error { kind: ErrorKind::Output, source: path.clone(), field: String::new(), reason: format!("cannot write: {e}") }
                    })?;
                    Some(JsonStream::new(BufWriter::with_capacity(1 << 20, file), &model, hosts, path)?)
                }
            };
            let mut fw = Forward {
                messages: out.record_messages.then(Vec::new),
                timeline: out.record_timeline.then(Vec::new),
                json,
                batch: out.on_messages.map(|cb| (Vec::with_capacity(out.batch_size.min(1 << 20)), cb, out.batch_size)),
                progress: out.on_progress.map(|cb| (cb, out.progress_every)),
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
        })
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
                    params=Vec::new(), coll=None))]
#[allow(clippy::too_many_arguments)]
fn simulate(
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
) -> PyResult<SimResult> {
    let out = Outputs { record_messages, record_timeline, json_path, on_messages, batch_size, on_progress, progress_every };
    let placement = Placement::from_name(placement).map_err(to_py)?;
    let collectives = coll.as_deref().map(commaware_core::collectives::entries).unwrap_or_default();
    let opts = SimOptions { model: model.clone(), placement, seed, params, collectives };
    let model_name = model.clone().unwrap_or_else(|| platform.0.network.model.clone());
    let hosts: Vec<String> = platform.0.hosts.iter().map(|h| h.name.clone()).collect();
    run_forwarded(
        py,
        out,
        |fw| commaware_core::simulate_observed(&platform.0, &trace.0, &opts, interference::compute_rate(&platform.0), fw),
        move || Ok((model_name, hosts)),
    )
}

/// Paper 000 §2's atomic compute task, run back to back for `seconds` with the GIL released
/// (`commaware measure interference`). Returns (completion time of every task in seconds since
/// the start, as little-endian f64 bytes; the wrapping sum of the task checksums). Signals are
/// checked about every 0.1 s, so Ctrl-C stops it with KeyboardInterrupt.
#[pyfunction]
#[pyo3(signature = (seconds, n=1024, k=1, seed=0))]
fn kernel_run<'py>(py: Python<'py>, seconds: f64, n: usize, k: usize, seed: u64) -> PyResult<(Bound<'py, PyBytes>, i32)> {
    use commaware_core::kernel::DiagonalKernel;
    use std::time::{Duration, Instant};
    if !(seconds > 0.0 && seconds <= 1e6) {
        return Err(to_py(Error::new(ErrorKind::Options, "seconds", format!("must be in (0, 1e6], got {seconds}"))));
    }
    let mut interrupt: Option<PyErr> = None;
    let (times, sum) = py.allow_threads(|| {
        guarded(|| {
            let kern = DiagonalKernel::new(n, k, seed)?;
            let start = Instant::now();
            let mut times: Vec<f64> = Vec::new();
            let mut last_check = Duration::ZERO;
            let (_, sum) = kern.run_while(|_| {
                let t = start.elapsed();
                times.push(t.as_secs_f64());
                if t - last_check >= Duration::from_millis(100) {
                    last_check = t;
                    if let Err(e) = Python::with_gil(|py| py.check_signals()) {
                        interrupt = Some(e);
                        return false;
                    }
                }
                t.as_secs_f64() < seconds
            });
            Ok((times, sum))
        })
    })?;
    if let Some(e) = interrupt {
        return Err(e);
    }
    Ok((column(py, times.iter().map(|t| t.to_le_bytes())), sum))
}

/// The kernel's seeded matrix (row-major little-endian i32 bytes) and the checksum of one
/// task starting at diagonal `first`: for tests against an independent computation.
#[pyfunction]
#[pyo3(signature = (n, k=1, first=0, seed=0))]
fn kernel_task<'py>(py: Python<'py>, n: usize, k: usize, first: usize, seed: u64) -> PyResult<(Bound<'py, PyBytes>, i32)> {
    use commaware_core::kernel::DiagonalKernel;
    let (kern, sum) = py.allow_threads(|| {
        guarded(|| {
            let kern = DiagonalKernel::new(n, k, seed)?;
            let sum = kern.task(first);
            Ok((kern, sum))
        })
    })?;
    Ok((column(py, kern.matrix().iter().map(|v| v.to_le_bytes())), sum))
}

/// A bytes-like argument (bytes, bytearray, memoryview of bytes) as native-endian f32.
fn floats_from_buffer(data: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<f32>> {
    let buf = PyBuffer::<u8>::get(data)
        .map_err(|_| to_py(Error::new(ErrorKind::Options, what, "expected a bytes-like object of float32 (bytes, bytearray)")))?;
    let raw = buf.to_vec(data.py())?;
    if raw.len() % 4 != 0 {
        return Err(to_py(Error::new(ErrorKind::Options, what, format!("{} bytes is not a whole number of float32", raw.len()))));
    }
    Ok(raw.chunks_exact(4).map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect())
}

fn f32_bytes<'py>(py: Python<'py>, v: &[f32]) -> Bound<'py, PyBytes> {
    column(py, v.iter().map(|x| x.to_ne_bytes()))
}

fn tiling_axis(axis: &str) -> PyResult<TilingAxis> {
    match axis {
        "i" => Ok(TilingAxis::I),
        "j" => Ok(TilingAxis::J),
        _ => Err(to_py(Error::new(ErrorKind::Options, "axis", format!("must be \"i\" or \"j\", got {axis:?}")))),
    }
}

/// One rank's block of paper 001's 3-D kernel (§5.3; `commaware_core::tiling::kernel`):
/// x×y×dimz float32 points plus halo planes at index 0. Faces and halos are bytes of
/// native-endian float32 (MPI.FLOAT).
#[pyclass(module = "commaware._core")]
struct TileBlock(TilingBlock);

#[pymethods]
impl TileBlock {
    #[new]
    fn new(x: usize, y: usize, dimz: usize) -> PyResult<Self> {
        guarded(|| TilingBlock::new(x, y, dimz)).map(TileBlock)
    }
    #[getter]
    fn x(&self) -> usize {
        self.0.x()
    }
    #[getter]
    fn y(&self) -> usize {
        self.0.y()
    }
    #[getter]
    fn dimz(&self) -> usize {
        self.0.dimz()
    }
    /// Compute tile `tile` of height `z` (k in [tile·z, (tile+1)·z)), GIL released.
    fn compute_tile(&mut self, py: Python<'_>, tile: usize, z: usize) -> PyResult<()> {
        let block = &mut self.0;
        py.allow_threads(|| guarded(|| block.compute_tile(tile, z)))
    }
    /// Floats in the face of a tile of height `z` in `axis` ("i": y·z, "j": x·z).
    fn face_len(&self, axis: &str, z: usize) -> PyResult<usize> {
        let axis = tiling_axis(axis)?;
        guarded(|| self.0.face_len(axis, z))
    }
    /// The outgoing face of tile `tile` in `axis` as bytes.
    fn face<'py>(&self, py: Python<'py>, axis: &str, tile: usize, z: usize) -> PyResult<Bound<'py, PyBytes>> {
        let axis = tiling_axis(axis)?;
        let mut out = vec![0f32; guarded(|| self.0.face_len(axis, z))?];
        guarded(|| self.0.face_into(axis, tile, z, &mut out))?;
        Ok(f32_bytes(py, &out))
    }
    /// The outgoing face of tile `tile` in `axis` written into `out`, a writable buffer of
    /// exactly 4·face_len bytes (a bytearray: no allocation per tile).
    fn face_into(&self, py: Python<'_>, axis: &str, tile: usize, z: usize, out: &Bound<'_, PyAny>) -> PyResult<()> {
        let axis = tiling_axis(axis)?;
        let mut face = vec![0f32; guarded(|| self.0.face_len(axis, z))?];
        guarded(|| self.0.face_into(axis, tile, z, &mut face))?;
        let buf = PyBuffer::<u8>::get(out)
            .map_err(|_| to_py(Error::new(ErrorKind::Options, "out", "expected a writable bytes-like object (bytearray)")))?;
        if buf.readonly() || buf.item_count() != 4 * face.len() {
            return Err(to_py(Error::new(ErrorKind::Options, "out", format!(
                "must be a writable buffer of {} bytes (4 per float), got {}{} bytes",
                4 * face.len(), if buf.readonly() { "a read-only buffer of " } else { "" }, buf.item_count()))));
        }
        let raw: Vec<u8> = face.iter().flat_map(|v| v.to_ne_bytes()).collect();
        buf.copy_from_slice(py, &raw)
    }
    /// Set the incoming halo of tile `tile` in `axis` from the predecessor's face (bytes).
    fn set_halo(&mut self, axis: &str, tile: usize, z: usize, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let axis = tiling_axis(axis)?;
        let floats = floats_from_buffer(data, "data")?;
        guarded(|| self.0.set_halo(axis, tile, z, &floats))
    }
    /// The interior A(i, j, k), i, j, k from 1, k fastest, as native-endian float32 bytes.
    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        // Written straight into the Python bytes (a failed allocation is a MemoryError).
        PyBytes::new_with(py, 4 * self.0.points(), |buf| {
            for (out, v) in buf.chunks_exact_mut(4).zip(self.0.interior()) {
                out.copy_from_slice(&v.to_ne_bytes());
            }
            Ok(())
        })
    }
    /// (FNV-1a digest of the interior's bit patterns, f64 sum of its values).
    fn checksum(&self) -> (u64, f64) {
        self.0.checksum()
    }
    /// The checksum of the nx×ny×dimz region whose first point is (i0+1, j0+1, 1).
    fn region_checksum(&self, i0: usize, j0: usize, nx: usize, ny: usize) -> PyResult<(u64, f64)> {
        guarded(|| self.0.region_checksum(i0, j0, nx, ny))
    }
}

/// The sequential reference run of paper 001's kernel over the whole space, GIL released.
#[pyfunction]
fn tiling_sequential(py: Python<'_>, dimx: usize, dimy: usize, dimz: usize) -> PyResult<TileBlock> {
    py.allow_threads(|| guarded(|| commaware_core::tiling::kernel::sequential(dimx, dimy, dimz))).map(TileBlock)
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

/// Analyse a communication scheme (paper 004) under a sharing model: a dict of columns
/// (`ids`, `src`, `dst`, `bytes`, `delta_out`, `delta_in`, `conflicts` as class-name
/// lists, `penalties`), `model`, `parameters` and, for Myrinet, `components` (each with
/// `comms`, `exact`, `sets`, `sets_exact` as a decimal string or None, `ci95`).
#[pyfunction]
#[pyo3(signature = (text, source, format="json", model="gige", params=Vec::new()))]
fn scheme_penalties<'py>(
    py: Python<'py>,
    text: &str,
    source: &str,
    format: &str,
    model: &str,
    params: Vec<(String, f64)>,
) -> PyResult<Bound<'py, PyDict>> {
    use commaware_core::sharing::penalty::{analyze, class_names, PenaltyModel, Scheme, Side};
    let text = text.to_owned();
    let (scheme, m, a) = py.allow_threads(|| {
        guarded(|| {
            let scheme = Scheme::from_text(&text, Format::from_name(format)?).map_err(|e| e.in_source(source))?;
            if model == "contention_free" {
                return Err(Error::new(ErrorKind::Options, "model", "contention_free gives every communication penalty 1: choose gige, myrinet, infiniband, ib-simgrid or maxmin"));
            }
            commaware_core::sharing::check_model_name(model)?;
            let m = PenaltyModel::from_params(model, &params, "param.")?;
            let a = analyze(&scheme.comms, m.as_ref());
            Ok((scheme, m, a))
        })
    })?;
    let d = PyDict::new(py);
    d.set_item("model", model)?;
    let parameters = PyDict::new(py);
    for (k, v) in m.as_ref().map(|m| m.parameters()).unwrap_or_default() {
        parameters.set_item(k, v)?;
    }
    d.set_item("parameters", parameters)?;
    d.set_item("ids", &scheme.ids)?;
    d.set_item("src", scheme.comms.iter().map(|c| c.0).collect::<Vec<_>>())?;
    d.set_item("dst", scheme.comms.iter().map(|c| c.1).collect::<Vec<_>>())?;
    d.set_item("bytes", &scheme.bytes)?;
    d.set_item("delta_out", &a.delta_out)?;
    d.set_item("delta_in", &a.delta_in)?;
    d.set_item("conflicts", a.conflicts.iter().map(|&b| class_names(b).collect::<Vec<_>>()).collect::<Vec<_>>())?;
    d.set_item("penalties", &a.penalties)?;
    // The §V-A sides, for calibration: (Δ, factor of γ) for emission and reception.
    let side = |f: fn(&(Side, Side)) -> &Side| a.sides.iter().map(|x| (f(x).delta, f(x).gamma_factor())).collect::<Vec<_>>();
    d.set_item("side_out", side(|x| &x.0))?;
    d.set_item("side_in", side(|x| &x.1))?;
    let comps = a
        .components
        .iter()
        .map(|c| {
            let cd = PyDict::new(py);
            cd.set_item("comms", &c.comms)?;
            cd.set_item("exact", c.exact)?;
            cd.set_item("sets", c.sets)?;
            cd.set_item("sets_exact", c.sets_exact.map(|v| v.to_string()))?;
            cd.set_item("ci95", c.ci95)?;
            cd.set_item("log10_sets", c.log10_sets)?;
            cd.set_item("estimator_failed", c.estimator_failed)?;
            cd.set_item("effective_samples", c.effective_samples)?;
            Ok(cd)
        })
        .collect::<PyResult<Vec<_>>>()?;
    d.set_item("components", comps)?;
    Ok(d)
}

/// The JSON Schema of communication scheme files.
#[pyfunction]
fn scheme_schema() -> String {
    commaware_core::sharing::penalty::Scheme::json_schema()
}

/// The parameter names a sharing model takes.
#[pyfunction]
fn model_parameters(model: &str) -> Vec<&'static str> {
    commaware_core::sharing::penalty::parameter_names(model).to_vec()
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

/// Replay a schedule on the engine under a sharing model (messages and timeline kept).
#[pyfunction]
#[pyo3(signature = (instance, report, model="contention_free"))]
fn multicast_execute(py: Python<'_>, instance: &MulticastInstance, report: &MulticastReport, model: &str) -> PyResult<SimResult> {
    let out = Outputs {
        record_messages: true,
        record_timeline: true,
        json_path: None,
        on_messages: None,
        batch_size: 1,
        on_progress: None,
        progress_every: 0.0,
    };
    run_forwarded(py, out, |fw| mc::execute_observed(&instance.0, &report.0.schedule, model, fw), || unreachable!("no JSON path"))
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

/// Farm `tasks` independent tasks on a tree (paper 000 §4); the tree comes as columns
/// from `commaware.throughput.load_tree` (parent index, -1 for the root).
#[pyfunction]
#[pyo3(signature = (parent, compute_rate, link_mb_s, ir_r, ir_s, send_limit_mb_s, task_mb, algorithm,
                    tasks=1000, hold=2, cutoff=false, priority_ir_s=None, priority_link_mb_s=None, source=""))]
#[allow(clippy::too_many_arguments)]
fn taskfarm<'py>(
    py: Python<'py>,
    parent: Vec<i64>,
    compute_rate: Vec<f64>,
    link_mb_s: Vec<f64>,
    ir_r: Vec<f64>,
    ir_s: Vec<f64>,
    send_limit_mb_s: Vec<f64>,
    task_mb: f64,
    algorithm: &str,
    tasks: u64,
    hold: u32,
    cutoff: bool,
    priority_ir_s: Option<Vec<f64>>,
    priority_link_mb_s: Option<Vec<f64>>,
    source: &str,
) -> PyResult<Bound<'py, PyDict>> {
    use commaware_core::taskfarm as tf;
    let algorithm = algorithm.to_owned();
    let r = py.allow_threads(|| {
        guarded(|| {
            let tree = tf::FarmTree {
                parent: parent.iter().map(|&p| usize::try_from(p).ok()).collect(),
                compute_rate,
                link_mb_s,
                ir_r,
                ir_s,
                send_limit_mb_s,
                task_mb,
                priority_ir_s,
                priority_link_mb_s,
            };
            let opts = tf::FarmOptions { algorithm: tf::Algorithm::from_name(&algorithm)?, tasks, hold, cutoff };
            tf::simulate(&tree, &opts).map_err(|e| e.in_source(source))
        })
    })?;
    let d = PyDict::new(py);
    d.set_item("makespan", r.makespan)?;
    d.set_item("throughput", r.throughput)?;
    d.set_item("tasks_per_node", r.tasks_per_node)?;
    d.set_item("transfers", r.transfers)?;
    d.set_item("events", r.events)?;
    Ok(d)
}

fn grid_tiling(space: Vec<u64>, procs: &[u64], tile_height: u64, mapping: Option<usize>) -> Result<tiling::GridTiling, Error> {
    tiling::GridTiling::new(space, procs, tile_height, mapping)
}

/// The geometry of a tiling (paper 001 §2) as JSON: exactly one of `sides` and `h`.
#[pyfunction]
#[pyo3(signature = (space, deps, sides=None, h=None, mapping=None))]
fn tiling_geometry<'py>(
    py: Python<'py>,
    space: Vec<u64>,
    deps: Vec<Vec<i64>>,
    sides: Option<Vec<u64>>,
    h: Option<Vec<Vec<f64>>>,
    mapping: Option<usize>,
) -> PyResult<Bound<'py, PyString>> {
    let shape = match (sides, h) {
        (Some(s), None) => tiling::TileShape::Sides(s),
        (None, Some(h)) => tiling::TileShape::Matrix(h),
        _ => return Err(to_py(Error::new(ErrorKind::Options, "tile", "give exactly one of the tile sides and the matrix H"))),
    };
    let g = guarded(|| tiling::Tiling::new(space, deps, shape, mapping).map(|t| t.geometry()))?;
    py_str(py, serde_json::to_string(&g).unwrap_or_default())
}

/// Eqs. (3), (4) and, with `sci` = (t_start_dma, t_sci_interrupt), (7) at one tile height, as JSON.
#[pyfunction]
#[pyo3(signature = (space, procs, tile_height, t_c, latency, bandwidth, mapping=None, sci=None))]
#[allow(clippy::too_many_arguments)]
fn tiling_formulas<'py>(
    py: Python<'py>,
    space: Vec<u64>,
    procs: Vec<u64>,
    tile_height: u64,
    t_c: f64,
    latency: f64,
    bandwidth: f64,
    mapping: Option<usize>,
    sci: Option<(f64, f64)>,
) -> PyResult<Bound<'py, PyString>> {
    let r = guarded(|| {
        let g = grid_tiling(space, &procs, tile_height, mapping)?;
        let sci = sci.map(|(t_start_dma, t_sci_interrupt)| tiling::SciModel { t_c, t_start_dma, t_sci_interrupt });
        tiling::StepReport::new(&g, &tiling::CostModel { t_c, latency, bandwidth }, sci.as_ref())
    })?;
    py_str(py, serde_json::to_string(&r).unwrap_or_default())
}

/// The closed-form minimum of eq. (7) over a real tile height, as JSON.
#[pyfunction]
#[pyo3(signature = (space, procs, t_c, t_start_dma, t_sci_interrupt, mapping=None))]
fn tiling_sci_optimum<'py>(
    py: Python<'py>,
    space: Vec<u64>,
    procs: Vec<u64>,
    t_c: f64,
    t_start_dma: f64,
    t_sci_interrupt: f64,
    mapping: Option<usize>,
) -> PyResult<Bound<'py, PyString>> {
    let r = guarded(|| {
        let sci = tiling::SciModel { t_c, t_start_dma, t_sci_interrupt };
        sci.check()?;
        Ok(sci.optimum(&grid_tiling(space, &procs, 1, mapping)?))
    })?;
    py_str(py, serde_json::to_string(&r).unwrap_or_default())
}

/// Time step of tile `tile` (coordinates from the tile space's origin) under `schedule`
/// (`block`: Π = [1 … 1], `overlap`: Π' with 1 at `mapping`).
#[pyfunction]
fn tiling_time_step(tile: Vec<u64>, schedule: &str, mapping: usize) -> PyResult<u64> {
    guarded(|| {
        if mapping >= tile.len() {
            return Err(Error::new(ErrorKind::Options, "mapping", format!("dimension {} does not exist for a {}-dimensional tile", mapping + 1, tile.len())));
        }
        let s = tiling::Schedule::from_name(schedule)?;
        Ok(s.time_step(&tile, mapping))
    })
}

/// The tile heights a sweep visits: divisors of the mapping dimension up to DIMZ / max p.
#[pyfunction]
#[pyo3(signature = (space, procs, mapping=None))]
fn tiling_sweep_heights(space: Vec<u64>, procs: Vec<u64>, mapping: Option<usize>) -> PyResult<Vec<u64>> {
    guarded(|| {
        let g = grid_tiling(space.clone(), &procs, 1, mapping)?;
        Ok(tiling::sweep_heights(&space, &procs, g.mapping()))
    })
}

/// The trace of one schedule's program (`block` or `overlap`), t_c seconds per point.
#[pyfunction]
#[pyo3(signature = (space, procs, tile_height, t_c, schedule, mapping=None))]
fn tiling_program(
    py: Python<'_>,
    space: Vec<u64>,
    procs: Vec<u64>,
    tile_height: u64,
    t_c: f64,
    schedule: &str,
    mapping: Option<usize>,
) -> PyResult<Trace> {
    let schedule = schedule.to_owned();
    py.allow_threads(|| {
        guarded(|| {
            let g = grid_tiling(space, &procs, tile_height, mapping)?;
            let cost = tiling::CostModel { t_c, latency: 0.0, bandwidth: 1.0 };
            cost.check()?;
            let spec = tiling::program(&g, tiling::Schedule::from_name(&schedule)?, g.tiling.tile_volume() * t_c)?;
            commaware_core::Trace::from_spec(spec)
        })
    })
    .map(Trace)
}

/// Simulate one schedule's program on `platform` (rank i on host i); returns
/// {makespan, messages, max_compute_seconds, model}.
#[pyfunction]
#[pyo3(signature = (platform, space, procs, tile_height, t_c, schedule, mapping=None, model=None, params=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn tiling_simulate<'py>(
    py: Python<'py>,
    platform: &Platform,
    space: Vec<u64>,
    procs: Vec<u64>,
    tile_height: u64,
    t_c: f64,
    schedule: &str,
    mapping: Option<usize>,
    model: Option<String>,
    params: Vec<(String, f64)>,
) -> PyResult<Bound<'py, PyDict>> {
    let schedule = schedule.to_owned();
    let r = py.allow_threads(|| {
        guarded(|| {
            let g = grid_tiling(space, &procs, tile_height, mapping)?;
            tiling::CostModel { t_c, latency: 0.0, bandwidth: 1.0 }.check()?;
            let opts = SimOptions { model, params, ..SimOptions::default() };
            tiling::simulate_program(&platform.0, &g, tiling::Schedule::from_name(&schedule)?, g.tiling.tile_volume() * t_c, &opts)
        })
    })?;
    let d = PyDict::new(py);
    d.set_item("makespan", r.makespan)?;
    d.set_item("messages", r.messages)?;
    d.set_item("max_compute_seconds", r.max_compute_seconds)?;
    d.set_item("model", r.model)?;
    Ok(d)
}

/// A job workload (paper 002): JSON jobs or an SWF log, checked.
#[pyclass(frozen, module = "commaware._core")]
struct Workload(cosched::Workload);

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
    /// The workload as SWF text (an SWF log as read; JSON jobs with -1 for unknown fields).
    fn to_swf<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
        let text = py.allow_threads(|| self.0.to_swf());
        py_str(py, text)
    }
}

/// Read a workload from `text` in `format` (json, dict or swf); `source` names the file in errors.
#[pyfunction]
#[pyo3(signature = (text, source, format="json"))]
fn load_workload(py: Python<'_>, text: &str, source: &str, format: &str) -> PyResult<Workload> {
    let text = text.to_owned();
    let r = py.allow_threads(|| guarded(|| cosched::Workload::from_text(&text, format).map_err(|e| e.in_source(source))));
    r.map(Workload)
}

/// The NAS-like workload generator (paper 002, Tables 1-2); see docs/cosched.md.
#[pyfunction]
#[pyo3(signature = (jobs, interarrival_s, seed, classes, mix="nas"))]
fn nas_workload(py: Python<'_>, jobs: usize, interarrival_s: f64, seed: u64, classes: Vec<String>, mix: &str) -> PyResult<Workload> {
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
struct CoschedResult(cosched::RunResult);

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
        Ok(d)
    }
    /// The `--json` document: policy, processors, the summary, skipped, and every job.
    fn to_json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
        let text = py.allow_threads(|| self.0.to_json());
        py_str(py, text)
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
fn cosched_run(
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
    let r = py.allow_threads(|| {
        guarded(|| {
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
        })
    });
    r.map(CoschedResult)
}

/// Defaults of every time-sharing parameter, as JSON.
#[pyfunction]
fn cosched_default_params() -> String {
    serde_json::to_string(&cosched::TsParams::default()).unwrap_or_default()
}

#[pyfunction]
fn workload_schema() -> String {
    cosched::WorkloadSpec::json_schema()
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
    m.add("OutputError", py.get_type::<OutputError>())?;
    m.add("OP_NAMES", OP_NAMES.to_vec())?;
    m.add("INTERVAL_KINDS", INTERVAL_KINDS.to_vec())?;
    m.add("MulticastError", py.get_type::<MulticastError>())?;
    m.add("SchemeError", py.get_type::<SchemeError>())?;
    m.add_function(wrap_pyfunction!(scheme_penalties, m)?)?;
    m.add_function(wrap_pyfunction!(scheme_schema, m)?)?;
    m.add_function(wrap_pyfunction!(model_parameters, m)?)?;
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
    m.add_function(wrap_pyfunction!(load_trace_ti_ranks, m)?)?;
    m.add_function(wrap_pyfunction!(export_ti, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(platform_schema, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_run, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_task, m)?)?;
    m.add_class::<TileBlock>()?;
    m.add_function(wrap_pyfunction!(tiling_sequential, m)?)?;
    m.add_function(wrap_pyfunction!(trace_schema, m)?)?;
    m.add_function(wrap_pyfunction!(multicast_schema, m)?)?;
    m.add_function(wrap_pyfunction!(sharing_models, m)?)?;
    m.add_function(wrap_pyfunction!(placements, m)?)?;
    m.add_function(wrap_pyfunction!(taskfarm, m)?)?;
    m.add("TASKFARM_ALGORITHMS", commaware_core::taskfarm::Algorithm::NAMES.to_vec())?;
    m.add_function(wrap_pyfunction!(tiling_geometry, m)?)?;
    m.add_function(wrap_pyfunction!(tiling_formulas, m)?)?;
    m.add_function(wrap_pyfunction!(tiling_sci_optimum, m)?)?;
    m.add_function(wrap_pyfunction!(tiling_sweep_heights, m)?)?;
    m.add_function(wrap_pyfunction!(tiling_time_step, m)?)?;
    m.add_function(wrap_pyfunction!(tiling_program, m)?)?;
    m.add_function(wrap_pyfunction!(tiling_simulate, m)?)?;
    m.add("TILING_SCHEDULES", commaware_core::tiling::Schedule::NAMES.to_vec())?;
    m.add("WorkloadError", py.get_type::<WorkloadError>())?;
    m.add_class::<Workload>()?;
    m.add_class::<CoschedResult>()?;
    m.add_function(wrap_pyfunction!(load_workload, m)?)?;
    m.add_function(wrap_pyfunction!(nas_workload, m)?)?;
    m.add_function(wrap_pyfunction!(cosched_run, m)?)?;
    m.add_function(wrap_pyfunction!(workload_schema, m)?)?;
    m.add("COSCHED_POLICIES", cosched::POLICY_NAMES.to_vec())?;
    m.add("COSCHED_ALLOCATIONS", cosched::Allocation::NAMES.to_vec())?;
    m.add_function(wrap_pyfunction!(cosched_default_params, m)?)?;
    m.add("NAS_MIXES", cosched::nas::Mix::NAMES.to_vec())?;
    m.add(
        "COLLECTIVE_ALGORITHMS",
        commaware_core::collectives::ALGORITHMS.iter().map(|(c, a)| (*c, a.iter().map(|x| x.name()).collect::<Vec<_>>())).collect::<Vec<_>>(),
    )?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
