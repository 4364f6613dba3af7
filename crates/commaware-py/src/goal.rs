//! GOAL schedules (LogGOPSim's format) and the LogGP model: conversions only.

use std::collections::HashMap;
use std::sync::Arc;

use commaware_core::error::{Error, ErrorKind};
use commaware_core::mpi::goal::from_trace::{from_trace, CalcUnits, FromTraceStats};
use commaware_core::mpi::goal::loggp::{simulate, LoggpParams};
use commaware_core::mpi::placement::{Hostfile, Placement};
use commaware_core::mpi::replay::{goal_schedule_on, SimOptions};
use pyo3::prelude::*;

use crate::errors::{interruptible, to_py};
use crate::simulation::{Platform, Trace};

#[pyclass(frozen, module = "commaware._core")]
pub(crate) struct GoalSchedule(pub(crate) Arc<commaware_core::mpi::goal::GoalSchedule>);

#[pymethods]
impl GoalSchedule {
    #[getter]
    fn n_ranks(&self) -> usize {
        self.0.ranks.len()
    }
    #[getter]
    fn n_ops(&self) -> usize {
        self.0.n_ops()
    }
    #[getter]
    fn n_deps(&self) -> usize {
        self.0.n_deps()
    }
}

/// Read the GOAL text file at `path` (errors name `source` and the line).
#[pyfunction]
pub(crate) fn load_goal(py: Python<'_>, path: &str, source: &str) -> PyResult<GoalSchedule> {
    let s = interruptible(py, || commaware_core::mpi::goal::parse::read_path(std::path::Path::new(path)).map_err(|e| e.in_source(source)))?;
    Ok(GoalSchedule(Arc::new(s)))
}

/// `schedule` as a trace the flow-level replay runs as a graph (`calc N` lasting N × `unit` s).
#[pyfunction]
pub(crate) fn goal_trace(py: Python<'_>, schedule: &GoalSchedule, unit: f64, source: &str) -> PyResult<Trace> {
    let s = Arc::clone(&schedule.0);
    let t = interruptible(py, || commaware_core::mpi::goal::into_trace(s, unit).map_err(|e| e.in_source(source)))?;
    Ok(Trace(t))
}

/// `trace` as a GOAL schedule, `unit` seconds per GOAL time unit. With `platform`, as a
/// replay there would run it (placement, host speeds, collectives); else at `speed` flop/s
/// with the `coll` algorithms. Returns the schedule and what did not carry over exactly.
#[pyfunction]
#[pyo3(signature = (trace, unit, platform=None, speed=1e9, placement="explicit", seed=0, coll=None, smpi=None, hostfile=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn goal_from_trace(
    py: Python<'_>,
    trace: &Trace,
    unit: f64,
    platform: Option<&Platform>,
    speed: f64,
    placement: &str,
    seed: u64,
    coll: Option<String>,
    smpi: Option<String>,
    hostfile: Option<(String, String)>,
) -> PyResult<(GoalSchedule, HashMap<&'static str, u64>)> {
    let units = CalcUnits::new(unit).map_err(to_py)?;
    let collectives = coll.as_deref().map(commaware_core::mpi::collectives::entries).unwrap_or_default();
    let placement = Placement::from_name(placement).map_err(to_py)?;
    let hostfile = hostfile.map(|(text, source)| Hostfile::parse(&text, &source)).transpose().map_err(to_py)?;
    let (schedule, stats) = match &trace.0.graph {
        // a GOAL schedule read as a trace: its own graph
        Some(graph) => (Arc::clone(graph), FromTraceStats::default()),
        None => {
            let (schedule, stats) = interruptible(py, || match platform {
                Some(p) => {
                    let opts = SimOptions { placement, seed, collectives, smpi, hostfile, ..SimOptions::default() };
                    goal_schedule_on(&p.0, &trace.0, &opts, units)
                }
                None => {
                    if !(speed.is_finite() && speed > 0.0) {
                        return Err(Error::new(ErrorKind::Options, "speed", format!("must be a finite flop rate > 0, got {speed}")));
                    }
                    let mut c = commaware_core::mpi::collectives::Collectives::default();
                    c.apply(collectives)?;
                    from_trace(&trace.0, &c, &vec![speed; trace.0.n_ranks()], units)
                }
            })?;
            (Arc::new(schedule), stats)
        }
    };
    let stats = HashMap::from([("tests", stats.tests), ("waitany_as_waitall", stats.waitany_as_waitall), ("synchronous_sends", stats.synchronous_sends)]);
    Ok((GoalSchedule(schedule), stats))
}

/// Write `schedule` as GOAL text to `path`.
#[pyfunction]
pub(crate) fn write_goal(py: Python<'_>, schedule: &GoalSchedule, path: &str) -> PyResult<()> {
    interruptible(py, || {
        use std::io::Write;
        let failed = |e: std::io::Error| Error::new(ErrorKind::Output, "", format!("cannot write: {e}")).in_source(path);
        let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path).map_err(failed)?);
        commaware_core::mpi::goal::write::write(&schedule.0, &mut w).and_then(|_| w.flush()).map_err(failed)
    })
}

/// Run `schedule` under LogGOPSim's LogGP model with `params` (name, seconds; S in bytes) over
/// LogGOPSim's defaults, `unit` seconds per time unit. Returns (per-rank end in units, events,
/// unmatched (host, receives, messages), ops that never ran, the parameters in units).
#[pyfunction]
#[allow(clippy::type_complexity)]
pub(crate) fn simulate_loggp(
    py: Python<'_>,
    schedule: &GoalSchedule,
    params: Vec<(String, f64)>,
    unit: f64,
) -> PyResult<(Vec<u64>, u64, Vec<(u32, u32, u32)>, u64, Vec<(&'static str, u64)>)> {
    CalcUnits::new(unit).map_err(to_py)?;
    let p = LoggpParams::from_seconds(&params, unit).map_err(to_py)?;
    let schedule = Arc::clone(&schedule.0);
    let r = interruptible(py, || simulate(&schedule, p))?;
    let in_units = LoggpParams::NAMES.into_iter().zip([p.latency, p.overhead, p.gap, p.gap_per_byte, p.overhead_per_byte, p.eager_limit]).collect();
    Ok((r.ends, r.events, r.unmatched.iter().map(|u| (u.host, u.receives, u.messages)).collect(), r.not_run, in_units))
}
