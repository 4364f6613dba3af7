//! Conversions shared by the domains: strings, byte columns, float buffers, files.

use std::fs::File;
use std::io::{BufWriter, Write};

use commaware_core::{Error, ErrorKind};
use pyo3::exceptions::PyMemoryError;
use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

use crate::errors::{OutputError, to_py};

/// A Python str from a Rust string; a failed allocation is a MemoryError, not a panic.
pub(crate) fn py_str(py: Python<'_>, s: String) -> PyResult<Bound<'_, PyString>> {
    let len = isize::try_from(s.len()).map_err(|_| PyMemoryError::new_err("string too long"))?;
    // SAFETY: the pointer and length describe valid UTF-8 (a Rust String); the new
    // reference is owned, and a null return is turned into the pending Python error.
    unsafe {
        Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyUnicode_FromStringAndSize(s.as_ptr().cast(), len))
            .map(|b| b.downcast_into_unchecked())
    }
}

/// Write a document to `path` with `write` (buffered); an I/O error is an OutputError naming the file.
pub(crate) fn write_file(path: &str, write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>) -> PyResult<()> {
    let result = File::create(path).and_then(|f| {
        let mut w = BufWriter::with_capacity(1 << 20, f);
        write(&mut w)?;
        w.flush()
    });
    result.map_err(|e| OutputError::new_err(format!("{path}: cannot write: {e}")))
}

/// A bytes-like argument (bytes, bytearray, memoryview of bytes) as native-endian f32.
pub(crate) fn floats_from_buffer(data: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<f32>> {
    let buf = PyBuffer::<u8>::get(data)
        .map_err(|_| to_py(Error::new(ErrorKind::Options, what, "expected a bytes-like object of float32 (bytes, bytearray)")))?;
    let raw = buf.to_vec(data.py())?;
    if raw.len() % 4 != 0 {
        return Err(to_py(Error::new(ErrorKind::Options, what, format!("{} bytes is not a whole number of float32", raw.len()))));
    }
    Ok(raw.chunks_exact(4).map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect())
}

pub(crate) fn f32_bytes<'py>(py: Python<'py>, v: &[f32]) -> Bound<'py, PyBytes> {
    column(py, v.iter().map(|x| x.to_ne_bytes()))
}

/// Columns as raw native-endian bytes (the Python side views them with numpy).
pub(crate) fn column<'py, const N: usize>(py: Python<'py>, values: impl Iterator<Item = [u8; N]>) -> Bound<'py, PyBytes> {
    let raw: Vec<u8> = values.flatten().collect();
    PyBytes::new(py, &raw)
}

/// The reason to refuse JSON `text` nested more deeply than the core's readers allow
/// (`MAX_NESTING`), with its line and column, or None: Python's JSON readers check with it
/// first, so their limit and message are the core's.
#[pyfunction]
pub(crate) fn json_too_deep(py: Python<'_>, text: &str) -> Option<String> {
    py.allow_threads(|| commaware_core::error::json_too_deep(text, true))
}

/// The same for TOML `text` (tables and arrays): Python's tomllib recurses, or takes
/// quadratic memory, where the core stops.
#[pyfunction]
pub(crate) fn toml_too_deep(py: Python<'_>, text: &str) -> Option<String> {
    py.allow_threads(|| commaware_core::error::toml_too_deep(text))
}

/// Per-link statistics as columns (name: list of str; bandwidth, bytes, busy_time,
/// mean_utilisation, peak_utilisation: f64 bytes; peak_flows: u32 bytes; histogram: f64
/// bytes, links × bins row-major), with bin_seconds and bins.
pub(crate) fn link_columns<'py>(py: Python<'py>, r: &commaware_core::engine::link_stats::LinkReport) -> PyResult<Bound<'py, PyDict>> {
    let l = &r.links;
    let d = PyDict::new(py);
    d.set_item("name", l.iter().map(|x| x.name.as_str()).collect::<Vec<_>>())?;
    d.set_item("bandwidth", column(py, l.iter().map(|x| x.bandwidth.to_ne_bytes())))?;
    d.set_item("bytes", column(py, l.iter().map(|x| x.bytes.to_ne_bytes())))?;
    d.set_item("busy_time", column(py, l.iter().map(|x| x.busy_time.to_ne_bytes())))?;
    d.set_item("mean_utilisation", column(py, l.iter().map(|x| x.mean_utilisation.to_ne_bytes())))?;
    d.set_item("peak_utilisation", column(py, l.iter().map(|x| x.peak_utilisation.to_ne_bytes())))?;
    d.set_item("peak_flows", column(py, l.iter().map(|x| x.peak_flows.to_ne_bytes())))?;
    let bins = l.first().map_or(0, |x| x.histogram.len());
    d.set_item("histogram", column(py, l.iter().flat_map(|x| x.histogram.iter()).map(|v| v.to_ne_bytes())))?;
    d.set_item("bins", bins)?;
    d.set_item("bin_seconds", r.bin_seconds)?;
    Ok(d)
}
