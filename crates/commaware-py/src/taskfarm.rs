//! Paper 000: the measurement kernel and task farming on a tree.

use commaware_core::{Error, ErrorKind};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::convert::column;
use crate::errors::{guarded, to_py};

/// Paper 000 §2's atomic compute task, run back to back for `seconds` with the GIL released
/// (`commaware measure interference`). Returns (completion time of every task in seconds since
/// the start, as little-endian f64 bytes; the wrapping sum of the task checksums). Signals are
/// checked about every 0.1 s, so Ctrl-C stops it with KeyboardInterrupt.
#[pyfunction]
#[pyo3(signature = (seconds, n=1024, k=1, seed=0))]
pub(crate) fn kernel_run<'py>(py: Python<'py>, seconds: f64, n: usize, k: usize, seed: u64) -> PyResult<(Bound<'py, PyBytes>, i32)> {
    use commaware_core::taskfarm::kernel::DiagonalKernel;
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
pub(crate) fn kernel_task<'py>(py: Python<'py>, n: usize, k: usize, first: usize, seed: u64) -> PyResult<(Bound<'py, PyBytes>, i32)> {
    use commaware_core::taskfarm::kernel::DiagonalKernel;
    let (kern, sum) = py.allow_threads(|| {
        guarded(|| {
            let kern = DiagonalKernel::new(n, k, seed)?;
            let sum = kern.task(first);
            Ok((kern, sum))
        })
    })?;
    Ok((column(py, kern.matrix().iter().map(|v| v.to_le_bytes())), sum))
}

/// Farm `tasks` independent tasks on a tree (paper 000 §4); the tree comes as columns
/// from `commaware.throughput.load_tree` (parent index, -1 for the root).
#[pyfunction]
#[pyo3(signature = (parent, compute_rate, link_mb_s, ir_r, ir_s, send_limit_mb_s, task_mb, algorithm,
                    tasks=1000, hold=2, cutoff=false, priority_ir_s=None, priority_link_mb_s=None, source=""))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn taskfarm<'py>(
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
