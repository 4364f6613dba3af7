//! SimGrid time-independent traces in and out.

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyDict, PyString};

use crate::convert::{column, py_str};

use crate::errors::guarded;
use crate::simulation::Trace;

/// Parse and validate a SimGrid time-independent trace given as one text per rank:
/// `parts` lists (rank, text, file name); an error about one rank names its file. The texts
/// are borrowed from Python's strings, not copied: the trace's text is held once.
/// `derived_datatype_bytes` as for `load_trace`.
#[pyfunction]
#[pyo3(signature = (parts, source, derived_datatype_bytes=None))]
pub(crate) fn load_trace_ti_ranks(py: Python<'_>, parts: Vec<(usize, PyBackedStr, String)>, source: &str, derived_datatype_bytes: Option<f64>) -> PyResult<Trace> {
    let r = py.allow_threads(|| {
        guarded(|| {
            let options = commaware_core::mpi::ti::TiOptions::new(derived_datatype_bytes)?;
            let texts: Vec<(usize, &str)> = parts.iter().map(|(r, t, _)| (*r, &**t)).collect();
            commaware_core::mpi::ti::trace_from_ranks(&texts, options).map_err(|mut e| {
                if let Some((rank, rest)) = commaware_core::mpi::ti::split_rank_field(&e.field) {
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

/// Read the OTF2 archive whose anchor file is `anchor` through the OTF2 library at `library`
/// (compute time as flops at `traced_speed` flops/s, else as seconds; the collectives named
/// in `in_place` read as made with `MPI_IN_PLACE`). Returns the trace and what the reading
/// skipped or inferred: `{"events", "skipped_records", "even_split_collectives",
/// "in_place_collectives", "ambiguous_in_place", "wildcard_mrecv"}`.
#[pyfunction]
#[pyo3(signature = (anchor, library, traced_speed=None, in_place=Vec::new()))]
pub(crate) fn load_trace_otf2(py: Python<'_>, anchor: &str, library: &str, traced_speed: Option<f64>, in_place: Vec<String>) -> PyResult<(Trace, std::collections::HashMap<String, u64>)> {
    let (anchor, library) = (anchor.to_owned(), library.to_owned());
    let (trace, stats) = py.allow_threads(|| {
        guarded(|| {
            use commaware_core::mpi::otf2::{ffi::Lib, read};
            let options = read::Otf2Options::new(traced_speed, &in_place)?;
            let lib = Lib::load(&library).map_err(|e| e.in_source(&anchor))?;
            read::read(&lib, &anchor, options).map_err(|e| e.in_source(&anchor))
        })
    })?;
    let counts = [
        ("events", stats.events),
        ("skipped_records", stats.skipped_records),
        ("even_split_collectives", stats.even_split_collectives),
        ("in_place_collectives", stats.in_place_collectives),
        ("ambiguous_in_place", stats.ambiguous_in_place),
        ("wildcard_mrecv", stats.wildcard_mrecv),
    ];
    Ok((Trace(trace), counts.into_iter().map(|(k, v)| (k.to_string(), v)).collect()))
}

/// Read the DUMPI trace whose `.meta` file is `meta` (compute time as flops at `traced_speed`
/// flops/s, else as seconds). Returns the trace and what the reading counted: `{"calls",
/// "compute_calls", "proc_null_calls", "self_calls", "in_place_collectives"}`.
#[pyfunction]
#[pyo3(signature = (meta, traced_speed=None))]
pub(crate) fn load_trace_dumpi(py: Python<'_>, meta: &str, traced_speed: Option<f64>) -> PyResult<(Trace, std::collections::HashMap<String, u64>)> {
    let meta = meta.to_owned();
    let (trace, stats) = py.allow_threads(|| {
        guarded(|| {
            use commaware_core::mpi::dumpi::read;
            let options = read::DumpiOptions::new(traced_speed)?;
            read::read(std::path::Path::new(&meta), options)
        })
    })?;
    let counts = [
        ("calls", stats.calls),
        ("compute_calls", stats.compute_calls),
        ("proc_null_calls", stats.proc_null_calls),
        ("self_calls", stats.self_calls),
        ("in_place_collectives", stats.in_place_collectives),
    ];
    Ok((Trace(trace), counts.into_iter().map(|(k, v)| (k.to_string(), v)).collect()))
}

/// The collectives whose Score-P byte counts cannot say whether they were in place: the names
/// `load_trace_otf2`'s `in_place` takes.
#[pyfunction]
pub(crate) fn otf2_ambiguous_in_place() -> Vec<&'static str> {
    commaware_core::mpi::otf2::read::AMBIGUOUS_IN_PLACE.to_vec()
}

/// Load the OTF2 library at `library` for the OTF2 timeline writer (`--timeline FILE.otf2`).
#[pyfunction]
pub(crate) fn otf2_use_library(py: Python<'_>, library: &str, source: &str) -> PyResult<()> {
    let (library, source) = (library.to_owned(), source.to_owned());
    py.allow_threads(|| guarded(|| commaware_core::mpi::otf2::ffi::use_library(&library).map_err(|e| e.in_source(&source))))
}

/// Write the recorded run `trace` as an OTF2 archive at `path` (`shown_as` in errors, the name
/// that is renamed to once complete), through the OTF2 library `otf2_use_library` loaded:
/// `times` are the ranks' call-time files (`rank-R.times`), `hosts` the host of each rank.
/// Returns the number of events written; an archive left unfinished is removed.
#[pyfunction]
pub(crate) fn write_recording_otf2(py: Python<'_>, trace: &Trace, times: Vec<String>, hosts: Vec<String>, path: &str, shown_as: &str, source: &str) -> PyResult<u64> {
    let (path, shown_as, source) = (path.to_owned(), shown_as.to_owned(), source.to_owned());
    py.allow_threads(|| {
        guarded(|| {
            let times: Vec<std::path::PathBuf> = times.iter().map(std::path::PathBuf::from).collect();
            commaware_core::mpi::timeline::otf2::write_recording(&trace.0, &times, &hosts, std::path::Path::new(&path), &shown_as)
                .map_err(|e| e.in_source(&source))
        })
    })
}

/// The SimGrid TI text of each rank of `trace` (compute seconds become flops at
/// `flops_per_second`; `header` is written as `#` comment lines first).
#[pyfunction]
pub(crate) fn export_ti(py: Python<'_>, trace: &Trace, flops_per_second: f64, header: &str, source: &str) -> PyResult<Vec<String>> {
    let header = header.to_owned();
    py.allow_threads(|| {
        guarded(|| {
            not_a_graph(&trace.0).map_err(|e| e.in_source(source))?;
            commaware_core::mpi::ti_export::export(&trace.0.spec, flops_per_second, &header).map_err(|e| e.in_source(source))
        })
    })
}

/// A GOAL schedule's ops are a graph: a format of sequences would misstate it.
fn not_a_graph(trace: &commaware_core::Trace) -> Result<(), commaware_core::error::Error> {
    match trace.graph {
        Some(_) => Err(commaware_core::error::Error::trace("", "a GOAL schedule is a graph of operations, not a sequence: export it with --format goal")),
        None => Ok(()),
    }
}

/// Write `trace` to `path` as a commaware JSON trace (streamed; an error names `source` for the
/// trace and `path` for writing).
#[pyfunction]
pub(crate) fn export_json(py: Python<'_>, trace: &Trace, path: &str) -> PyResult<()> {
    py.allow_threads(|| {
        guarded(|| {
            use commaware_core::error::{Error, ErrorKind};
            use std::io::Write;
            not_a_graph(&trace.0)?;
            let failed = |e: std::io::Error| Error::new(ErrorKind::Output, "", format!("cannot write: {e}")).in_source(path);
            let mut w = std::io::BufWriter::new(std::fs::File::create(path).map_err(failed)?);
            trace.0.write_json(&mut w).and_then(|_| w.flush()).map_err(failed)
        })
    })
}

/// The summary of `trace` (`commaware trace show`) as JSON text, and with `matrix` the
/// rank-to-rank point-to-point bytes as sparse byte columns `src` (u4), `dst` (u4) and
/// `bytes` (f8), sorted by sender then receiver (else None).
#[pyfunction]
#[pyo3(signature = (trace, matrix=false))]
pub(crate) fn trace_summary<'py>(py: Python<'py>, trace: &Trace, matrix: bool) -> PyResult<(Bound<'py, PyString>, Option<Bound<'py, PyDict>>)> {
    let (text, pairs) = py.allow_threads(|| {
        guarded(|| {
            let (summary, pairs) = commaware_core::mpi::summary::summarize(&trace.0, matrix);
            Ok((serde_json::to_string(&summary).unwrap_or_default(), pairs))
        })
    })?;
    let summary = py_str(py, text)?;
    let columns = match pairs {
        None => None,
        Some(m) => {
            let d = PyDict::new(py);
            d.set_item("src", column(py, m.iter().map(|x| x.0.to_ne_bytes())))?;
            d.set_item("dst", column(py, m.iter().map(|x| x.1.to_ne_bytes())))?;
            d.set_item("bytes", column(py, m.iter().map(|x| x.2.to_ne_bytes())))?;
            Some(d)
        }
    };
    Ok((summary, columns))
}

/// The JSON Schema of `trace_summary`'s dict (`commaware trace show --json`).
#[pyfunction]
pub(crate) fn trace_summary_schema() -> String {
    commaware_core::mpi::summary::json_schema()
}
