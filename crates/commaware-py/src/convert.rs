//! Conversions shared by the domains: strings, byte columns, float buffers, files.

use std::fs::File;
use std::io::{BufWriter, Write};

use commaware_core::{Error, ErrorKind};
use pyo3::exceptions::PyMemoryError;
use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

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

/// A JSON value as Python objects (dict, list, str, int, float, bool, None).
pub(crate) fn json_to_py<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use pyo3::types::{PyDict, PyList};
    use serde_json::Value;
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.into_pyobject(py)?.into_any(),
            (None, Some(i)) => i.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => py_str(py, s.clone())?.into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let d = PyDict::new(py);
            for (k, item) in map {
                d.set_item(k, json_to_py(py, item)?)?;
            }
            d.into_any()
        }
    })
}
