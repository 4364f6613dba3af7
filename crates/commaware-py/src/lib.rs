//! `commaware._core`: thin PyO3 bindings. Converts arguments and results and maps
//! core errors to typed Python exceptions; no modelling happens here. Every entry
//! point runs under `catch_unwind` so a Rust panic never reaches Python as such.
//!
//! One module per domain of the core, each converting only: [`errors`] (the one error
//! type across the boundary), [`convert`] (shared conversions), [`simulation`]
//! (platforms, traces, replay), [`topology`] (a platform's fabric: routes, links), [`traces`] (SimGrid TI in and out), [`sharing`]
//! (paper 004's schemes), [`taskfarm`] (paper 000), [`tiling`] (paper 001), [`cosched`]
//! (paper 002), [`multicast`] (paper 003), [`topology`] (routes of issue 28's topologies). The module function below lists everything
//! Python sees; `python/commaware/_core.pyi` types it (checked by stubtest).

mod convert;
mod cosched;
mod errors;
mod goal;
mod multicast;
mod sharing;
mod simulation;
mod taskfarm;
mod tiling;
mod topology;
mod traces;

use commaware_core::mpi::ops::OP_NAMES;
use commaware_core::mpi::replay::INTERVAL_KINDS;
use pyo3::prelude::*;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("CommawareError", py.get_type::<errors::CommawareError>())?;
    m.add("InputError", py.get_type::<errors::InputError>())?;
    m.add("PlatformError", py.get_type::<errors::PlatformError>())?;
    m.add("TraceError", py.get_type::<errors::TraceError>())?;
    m.add("PlacementError", py.get_type::<errors::PlacementError>())?;
    m.add("OptionsError", py.get_type::<errors::OptionsError>())?;
    m.add("DeadlockError", py.get_type::<errors::DeadlockError>())?;
    m.add("InternalError", py.get_type::<errors::InternalError>())?;
    m.add("OutputError", py.get_type::<errors::OutputError>())?;
    m.add("OP_NAMES", OP_NAMES.to_vec())?;
    m.add_function(wrap_pyfunction!(errors::stop_running_calls, m)?)?;
    m.add_function(wrap_pyfunction!(errors::stop_epoch, m)?)?;
    m.add_function(wrap_pyfunction!(errors::stop_with_calls_since, m)?)?;
    m.add_function(wrap_pyfunction!(errors::cut_long_values, m)?)?;
    m.add("INTERVAL_KINDS", INTERVAL_KINDS.to_vec())?;
    m.add("MulticastError", py.get_type::<errors::MulticastError>())?;
    m.add("SchemeError", py.get_type::<errors::SchemeError>())?;
    m.add_function(wrap_pyfunction!(sharing::scheme_penalties, m)?)?;
    m.add_function(wrap_pyfunction!(sharing::scheme_schema, m)?)?;
    m.add_function(wrap_pyfunction!(sharing::model_parameters, m)?)?;
    m.add_class::<multicast::MulticastInstance>()?;
    m.add_class::<multicast::MulticastReport>()?;
    m.add_function(wrap_pyfunction!(multicast::multicast_load, m)?)?;
    m.add_function(wrap_pyfunction!(multicast::multicast_schedule, m)?)?;
    m.add_function(wrap_pyfunction!(multicast::multicast_check, m)?)?;
    m.add_function(wrap_pyfunction!(multicast::multicast_execute, m)?)?;
    m.add_function(wrap_pyfunction!(multicast::multicast_generate, m)?)?;
    m.add_function(wrap_pyfunction!(multicast::multicast_algorithms, m)?)?;
    m.add_class::<simulation::Platform>()?;
    m.add_class::<simulation::Trace>()?;
    m.add_class::<simulation::SimResult>()?;
    m.add_function(wrap_pyfunction!(simulation::load_platform, m)?)?;
    m.add_function(wrap_pyfunction!(simulation::platform_from_simgrid_xml, m)?)?;
    m.add_function(wrap_pyfunction!(simulation::load_trace, m)?)?;
    m.add_function(wrap_pyfunction!(topology::platform_route, m)?)?;
    m.add_function(wrap_pyfunction!(topology::platform_links, m)?)?;
    m.add_function(wrap_pyfunction!(topology::platform_export, m)?)?;
    m.add_function(wrap_pyfunction!(topology::platform_summary, m)?)?;
    m.add_function(wrap_pyfunction!(traces::load_trace_ti_ranks, m)?)?;
    m.add_function(wrap_pyfunction!(traces::export_ti, m)?)?;
    m.add_function(wrap_pyfunction!(traces::export_json, m)?)?;
    m.add_function(wrap_pyfunction!(traces::load_trace_otf2, m)?)?;
    m.add_function(wrap_pyfunction!(traces::load_trace_dumpi, m)?)?;
    m.add_class::<goal::GoalSchedule>()?;
    m.add_function(wrap_pyfunction!(goal::load_goal, m)?)?;
    m.add_function(wrap_pyfunction!(goal::goal_trace, m)?)?;
    m.add_function(wrap_pyfunction!(goal::goal_from_trace, m)?)?;
    m.add_function(wrap_pyfunction!(goal::write_goal, m)?)?;
    m.add_function(wrap_pyfunction!(goal::simulate_loggp, m)?)?;
    m.add_function(wrap_pyfunction!(traces::otf2_ambiguous_in_place, m)?)?;
    m.add_function(wrap_pyfunction!(traces::write_recording_otf2, m)?)?;
    m.add_function(wrap_pyfunction!(traces::otf2_use_library, m)?)?;
    m.add_function(wrap_pyfunction!(traces::trace_summary, m)?)?;
    m.add_function(wrap_pyfunction!(traces::trace_summary_schema, m)?)?;
    m.add_function(wrap_pyfunction!(simulation::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(simulation::simulate_jobs, m)?)?;
    m.add_function(wrap_pyfunction!(simulation::platform_schema, m)?)?;
    m.add_function(wrap_pyfunction!(simulation::timeline_extensions, m)?)?;
    m.add_function(wrap_pyfunction!(taskfarm::kernel_run, m)?)?;
    m.add_function(wrap_pyfunction!(taskfarm::kernel_task, m)?)?;
    m.add_class::<tiling::TileBlock>()?;
    m.add_function(wrap_pyfunction!(tiling::tiling_sequential, m)?)?;
    m.add_function(wrap_pyfunction!(simulation::trace_schema, m)?)?;
    m.add_function(wrap_pyfunction!(multicast::multicast_schema, m)?)?;
    m.add_function(wrap_pyfunction!(sharing::sharing_models, m)?)?;
    m.add_function(wrap_pyfunction!(simulation::placements, m)?)?;
    m.add_function(wrap_pyfunction!(simulation::routings, m)?)?;
    m.add_function(wrap_pyfunction!(taskfarm::taskfarm, m)?)?;
    m.add("TASKFARM_ALGORITHMS", commaware_core::taskfarm::Algorithm::NAMES.to_vec())?;
    m.add_function(wrap_pyfunction!(tiling::tiling_geometry, m)?)?;
    m.add_function(wrap_pyfunction!(tiling::tiling_formulas, m)?)?;
    m.add_function(wrap_pyfunction!(tiling::tiling_sci_optimum, m)?)?;
    m.add_function(wrap_pyfunction!(tiling::tiling_sweep_heights, m)?)?;
    m.add_function(wrap_pyfunction!(tiling::tiling_time_step, m)?)?;
    m.add_function(wrap_pyfunction!(tiling::tiling_program, m)?)?;
    m.add_function(wrap_pyfunction!(tiling::tiling_simulate, m)?)?;
    m.add("TILING_SCHEDULES", commaware_core::tiling::Schedule::NAMES.to_vec())?;
    m.add("WorkloadError", py.get_type::<errors::WorkloadError>())?;
    m.add_class::<cosched::Workload>()?;
    m.add_class::<cosched::CoschedResult>()?;
    m.add_function(wrap_pyfunction!(cosched::load_workload, m)?)?;
    m.add_function(wrap_pyfunction!(cosched::nas_workload, m)?)?;
    m.add_function(wrap_pyfunction!(cosched::cosched_run, m)?)?;
    m.add_function(wrap_pyfunction!(cosched::cosched_run_fabric, m)?)?;
    m.add_function(wrap_pyfunction!(cosched::workload_schema, m)?)?;
    m.add("COSCHED_POLICIES", commaware_core::cosched::POLICY_NAMES.to_vec())?;
    m.add("COSCHED_ALLOCATIONS", commaware_core::cosched::Allocation::NAMES.to_vec())?;
    m.add("FABRIC_ALLOCATIONS", commaware_core::cosched::fabric::HostAllocation::NAMES.to_vec())?;
    m.add_function(wrap_pyfunction!(cosched::cosched_default_params, m)?)?;
    m.add("NAS_MIXES", commaware_core::cosched::nas::Mix::NAMES.to_vec())?;
    m.add(
        "COLLECTIVE_ALGORITHMS",
        commaware_core::mpi::collectives::ALGORITHMS.iter().map(|(c, a)| (*c, a.iter().map(|x| x.name()).collect::<Vec<_>>())).collect::<Vec<_>>(),
    )?;
    m.add_function(wrap_pyfunction!(convert::json_too_deep, m)?)?;
    m.add_function(wrap_pyfunction!(convert::toml_too_deep, m)?)?;
    m.add("MAX_NESTING", commaware_core::error::MAX_NESTING)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
