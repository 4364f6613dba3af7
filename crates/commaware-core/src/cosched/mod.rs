//! Cluster job scheduling (paper 002, "Coscheduling in clusters: is it a viable
//! alternative?"): workloads ([`workload`], the NAS-like generator [`nas`], Standard
//! Workload Format logs [`swf`]) and the space-sharing batch policies ([`batch`]).
//!
//! The time-sharing policies of the paper (local scheduling, gang, DCS, SB, PB, CC,
//! HYBRID) will run the jobs' programs on a node model; the workload already carries
//! each job's program of phases for them.

pub mod batch;
pub mod epoch;
pub mod nas;
pub mod swf;
pub mod timeshare;
pub mod workload;

use crate::error::{Result, ErrorKind, Error};

pub use batch::{BatchJob, BatchResult, JobRecord, Policy, Summary};
pub use workload::{Job, Phase, Program, Skipped, WorkloadSpec};

/// A workload ready to run: its jobs, what was skipped on reading, and for an SWF log the
/// log itself (so that it can be written back as read).
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    pub spec: WorkloadSpec,
    pub skipped: Skipped,
    pub swf: Option<swf::SwfLog>,
}

impl Workload {
    /// A JSON workload (`"jobs": [...]`).
    pub fn from_json(text: &str) -> Result<Workload> {
        Ok(Workload { spec: WorkloadSpec::from_json(text)?, skipped: Skipped::default(), swf: None })
    }

    /// An already parsed workload document.
    pub fn from_spec(spec: WorkloadSpec) -> Result<Workload> {
        spec.validate()?;
        Ok(Workload { spec, skipped: Skipped::default(), swf: None })
    }

    /// A Standard Workload Format log.
    pub fn from_swf(text: &str) -> Result<Workload> {
        let log = swf::SwfLog::parse(text)?;
        let (jobs, skipped) = log.jobs()?;
        Ok(Workload { spec: WorkloadSpec { generator: None, jobs }, skipped, swf: Some(log) })
    }

    /// Read `text` as `format`: `json`, `dict` (JSON made from an in-memory value) or `swf`.
    pub fn from_text(text: &str, format: &str) -> Result<Workload> {
        match format {
            "json" => Workload::from_json(text),
            "dict" => {
                let spec = crate::error::parse_input(ErrorKind::Workload, text, crate::error::Format::Dict)?;
                Workload::from_spec(spec)
            }
            "swf" => Workload::from_swf(text),
            _ => Err(Error::new(ErrorKind::Options, "format", format!("unknown workload format `{format}` (known: json, dict, swf)"))),
        }
    }

    /// The workload as SWF text: an SWF log as it was read; a JSON workload with the fields
    /// it has (the rest -1).
    pub fn to_swf(&self) -> String {
        match &self.swf {
            Some(log) => log.to_text(),
            None => swf::SwfLog::from_jobs(&self.spec.jobs, "written by commaware from a JSON workload").to_text(),
        }
    }

    /// Schedule the jobs on `processors` processors under a batch policy; the result's
    /// `skipped` adds the jobs too large for the cluster to those skipped on reading.
    pub fn run_batch(&self, policy: Policy, processors: u64) -> Result<BatchResult> {
        let jobs: Vec<BatchJob> = self.spec.jobs.iter().map(BatchJob::from).collect();
        let mut r = batch::simulate(&jobs, processors, policy)?;
        let too_large = r.skipped.too_large;
        r.skipped = Skipped { too_large, ..self.skipped };
        Ok(r)
    }
}
