//! Job workloads for cluster scheduling (paper 002): the JSON job list and its checks.
//!
//! A workload is a list of parallel jobs. Each job has a submit time, a number of
//! processes, the memory of each process, the time it takes alone on a dedicated cluster
//! (`runtime_s`, what a batch scheduler runs it for) and the time its user requested
//! (`requested_s`, what backfilling reserves), and optionally a *program*: the phases one
//! iteration of each process goes through (compute bursts, collectives, point-to-point
//! exchanges with their message sizes), repeated `iterations` times. Batch policies only
//! need the rigid runtime; the time-sharing policies (a later slice) run the program.
//!
//! Units: seconds, bytes, and MB = 2^20 bytes for memory; every field name says which.

use std::collections::HashSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{check_amount, parse_json, Error, ErrorKind, Result};
use crate::network::platform::MAX_EXACT;
/// A host of a job's explicit allocation: its name, or its index in the platform's host order
/// (as a trace's explicit placement gives one).
pub use crate::mpi::trace::HostRef;

/// Most jobs one workload may hold (a Parallel Workloads Archive log has at most a few
/// million; each job costs a few hundred bytes).
pub const MAX_JOBS: usize = 1 << 24;
/// Most processes one job may have (the platform format's core limit, 2^24).
pub const MAX_PROCS: u64 = 1 << 24;
/// Most iterations of a job's program.
pub const MAX_ITERATIONS: u64 = 1 << 32;
/// Most phases in one iteration of a program.
pub const MAX_PHASES: usize = 1 << 16;
/// Largest memory per process, MB (2^30 MB = 1 PiB).
pub const MAX_MEMORY_MB: f64 = 1_073_741_824.0;

/// One phase of a program iteration, as every process of the job runs it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "phase", rename_all = "lowercase", deny_unknown_fields)]
pub enum Phase {
    /// A compute burst of `seconds` at the node's full speed.
    Compute { seconds: f64 },
    /// A compute burst of the job's logged runtime over the program's iterations: the job
    /// computes for its logged runtime in all, and what it communicates comes on top.
    ComputeShare,
    /// Point-to-point exchange: each process sends `bytes` to each of `neighbors` other
    /// processes of the job and receives as much from each.
    Exchange { bytes: f64, neighbors: u32 },
    /// Barrier across the job's processes.
    Barrier,
    /// Broadcast of a `bytes` buffer from process 0.
    Bcast { bytes: f64 },
    /// All-reduce of a `bytes` buffer.
    Allreduce { bytes: f64 },
    /// All-to-all; `bytes` is the block each process sends to each other process.
    Alltoall { bytes: f64 },
    /// Halo exchange on a periodic grid of `dims` (2 or 3) dimensions over the job's
    /// processes (as balanced as the count allows): each process sends `bytes` to its two
    /// neighbours along every dimension longer than 1 and receives as much from them.
    Halo { bytes: f64, dims: u32 },
    /// Random pairs: the processes are paired at random (seeded by the job's id and the
    /// iteration; an odd one out waits), and each pair swaps `bytes` both ways.
    Pairs { bytes: f64 },
}

impl Phase {
    pub fn is_collective(&self) -> bool {
        matches!(self, Phase::Barrier | Phase::Bcast { .. } | Phase::Allreduce { .. } | Phase::Alltoall { .. })
    }
}

/// The program of a job: `phases` (one iteration) repeated `iterations` times.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Program {
    pub iterations: u64,
    pub phases: Vec<Phase>,
}

/// The communication patterns `--pattern` names.
pub const PATTERNS: [&str; 5] = ["halo2d", "halo3d", "alltoall", "allreduce", "pairs"];

impl Program {
    /// The program with each `compute_share` a compute of `runtime_s / iterations` seconds.
    pub fn resolved(&self, runtime_s: f64) -> std::borrow::Cow<'_, Program> {
        if !self.phases.contains(&Phase::ComputeShare) {
            return std::borrow::Cow::Borrowed(self);
        }
        let seconds = runtime_s / self.iterations as f64;
        let phases = self.phases.iter().map(|p| if *p == Phase::ComputeShare { Phase::Compute { seconds } } else { p.clone() }).collect();
        std::borrow::Cow::Owned(Program { iterations: self.iterations, phases })
    }

    /// A program from a pattern spec `NAME[:KEY=VALUE,...]` (`--pattern`): NAME one of
    /// [`PATTERNS`]; keys `bytes` (a message, or alltoall's block; default 2^20), `iterations`
    /// (default 10) and `compute` (seconds of compute before each exchange, default 0; `auto`:
    /// each job's logged runtime over the iterations, a `compute_share` phase).
    pub fn from_pattern(spec: &str) -> Result<Program> {
        let field = "pattern";
        let (name, rest) = spec.split_once(':').unwrap_or((spec, ""));
        let name = name.trim();
        if !PATTERNS.contains(&name) {
            return Err(Error::new(ErrorKind::Options, field, format!("unknown pattern `{name}` (known: {})", PATTERNS.join(", "))));
        }
        let (mut bytes, mut iterations, mut compute) = (1_048_576.0, 10u64, Some(0.0));
        for item in rest.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((key, value)) = item.split_once('=') else {
                return Err(Error::new(ErrorKind::Options, field, format!("`{item}` is not KEY=VALUE (keys: bytes, iterations, compute)")));
            };
            if key.trim() == "compute" && value.trim() == "auto" {
                compute = None;
                continue;
            }
            let number: f64 = value.trim().parse().map_err(|_| {
                Error::new(ErrorKind::Options, field, format!("{}: `{}` is not a number", key.trim(), value.trim()))
            })?;
            match key.trim() {
                "bytes" => bytes = number,
                "compute" => compute = Some(number),
                "iterations" if number.fract() == 0.0 && number >= 1.0 && number <= MAX_ITERATIONS as f64 => iterations = number as u64,
                "iterations" => {
                    return Err(Error::new(ErrorKind::Options, field, format!("iterations: must be a whole number in 1..=2^32, got {value}")))
                }
                other => return Err(Error::new(ErrorKind::Options, field, format!("unknown key `{other}` (keys: bytes, iterations, compute)"))),
            }
        }
        let exchange = match name {
            "halo2d" => Phase::Halo { bytes, dims: 2 },
            "halo3d" => Phase::Halo { bytes, dims: 3 },
            "alltoall" => Phase::Alltoall { bytes },
            "allreduce" => Phase::Allreduce { bytes },
            _ => Phase::Pairs { bytes },
        };
        let mut phases = Vec::with_capacity(2);
        match compute {
            None => phases.push(Phase::ComputeShare),
            Some(seconds) if seconds != 0.0 => phases.push(Phase::Compute { seconds }),
            Some(_) => {}
        }
        phases.push(exchange);
        let program = Program { iterations, phases };
        // `pattern.phases[1].bytes: must be >= 0 ...`, an options error.
        check_program(&program, field, None).map_err(|e| Error::new(ErrorKind::Options, e.field, e.reason))?;
        Ok(program)
    }
}

/// One job of a workload.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Job {
    /// Unique within the workload; ties in submit time are broken by id.
    pub id: u64,
    /// Submit (arrival) time, s.
    pub submit_s: f64,
    /// Number of processes (one per processor under batch policies).
    pub procs: u64,
    /// Resident memory of each process, MB (2^20 bytes); 0 when unknown.
    #[serde(default)]
    pub memory_mb: f64,
    /// Time the job takes alone on a dedicated cluster with `procs` processors, s. Batch
    /// policies run it for exactly this long (rigid job).
    pub runtime_s: f64,
    /// The user's requested time (what backfilling reserves), s; the runtime when absent.
    /// A job that runs longer than it requested is not killed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_s: Option<f64>,
    /// What the job is, e.g. `CG` (informative).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub benchmark: Option<String>,
    /// Problem class, e.g. `B` (informative).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// The phases each process runs; time-sharing policies need it, batch ones do not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<Program>,
    /// A trace (any format `simulate` reads, with `procs` ranks; a path relative to the
    /// workload file) the job replays on a platform, in place of a program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// When the job started on the real cluster, s (the `explicit` policy starts it then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_s: Option<f64>,
    /// The host of each process on the real cluster (names or indices; `explicit` policy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<Vec<HostRef>>,
}

impl Job {
    /// The requested time, or the runtime when none was given.
    pub fn requested(&self) -> f64 {
        self.requested_s.unwrap_or(self.runtime_s)
    }
}

/// A workload file: the jobs, and optionally how they were made.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// The generator and its parameters, or anything else about the workload's origin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<serde_json::Value>,
    /// The program of every job that has neither a program nor a trace (an SWF log's jobs),
    /// sized by each job's processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_program: Option<Program>,
    pub jobs: Vec<Job>,
}

fn check_time(field: &str, v: f64) -> Result<()> {
    check_amount(ErrorKind::Workload, field, v, false)?;
    if v > MAX_EXACT {
        return Err(Error::workload(field, format!("must be at most 2^53, got {}", crate::error::fmt_num(v))));
    }
    Ok(())
}

/// A program's iterations and phases within bounds; `procs` (when the program is one job's)
/// bounds an exchange's neighbours. Errors name the field under `field`.
fn check_program(p: &Program, field: &str, procs: Option<u64>) -> Result<()> {
    if p.iterations == 0 || p.iterations > MAX_ITERATIONS {
        return Err(Error::workload(format!("{field}.iterations"), format!("must be in 1..=2^32, got {}", p.iterations)));
    }
    if p.phases.is_empty() || p.phases.len() > MAX_PHASES {
        return Err(Error::workload(format!("{field}.phases"), format!("must list 1 to {MAX_PHASES} phases, got {}", p.phases.len())));
    }
    for (k, ph) in p.phases.iter().enumerate() {
        let g = |name: &str| format!("{field}.phases[{k}].{name}");
        match ph {
            Phase::Compute { seconds } => check_time(&g("seconds"), *seconds)?,
            Phase::Exchange { bytes, neighbors } => {
                check_time(&g("bytes"), *bytes)?;
                let most = procs.map_or(u64::from(u32::MAX), |n| n.saturating_sub(1));
                if *neighbors == 0 || u64::from(*neighbors) > most {
                    return Err(Error::workload(
                        g("neighbors"),
                        format!("must be in 1..={most} (the job's other processes), got {neighbors}"),
                    ));
                }
            }
            Phase::Halo { bytes, dims } => {
                check_time(&g("bytes"), *bytes)?;
                if !(2..=3).contains(dims) {
                    return Err(Error::workload(g("dims"), format!("a halo is on a grid of 2 or 3 dimensions, got {dims}")));
                }
            }
            Phase::Bcast { bytes } | Phase::Allreduce { bytes } | Phase::Alltoall { bytes } | Phase::Pairs { bytes } => {
                check_time(&g("bytes"), *bytes)?
            }
            Phase::Barrier | Phase::ComputeShare => {}
        }
    }
    Ok(())
}

impl WorkloadSpec {
    /// The jobs, each without a program or a trace given the default program (when the
    /// workload has one).
    pub fn jobs_with_default(&self) -> std::borrow::Cow<'_, [Job]> {
        match &self.default_program {
            None => std::borrow::Cow::Borrowed(&self.jobs),
            Some(p) => std::borrow::Cow::Owned(
                self.jobs
                    .iter()
                    .map(|j| match (&j.program, &j.trace) {
                        (None, None) => Job { program: Some(p.clone()), ..j.clone() },
                        _ => j.clone(),
                    })
                    .collect(),
            ),
        }
    }

    /// Parse and check a JSON workload.
    pub fn from_json(text: &str) -> Result<WorkloadSpec> {
        let spec: WorkloadSpec = parse_json(ErrorKind::Workload, text)?;
        spec.validate()?;
        Ok(spec)
    }

    /// Every field within its bounds, ids unique, exchanges with fewer neighbours than
    /// the job has processes. Errors name the field (`jobs[3].procs`) and the reason.
    pub fn validate(&self) -> Result<()> {
        if self.jobs.len() > MAX_JOBS {
            return Err(Error::workload("jobs", format!("{} jobs, at most {MAX_JOBS} (2^24) are allowed", self.jobs.len())));
        }
        let mut ids = HashSet::with_capacity(self.jobs.len());
        for (i, j) in self.jobs.iter().enumerate() {
            let f = |name: &str| format!("jobs[{i}].{name}");
            if j.id as f64 > MAX_EXACT {
                return Err(Error::workload(f("id"), format!("must be at most 2^53, got {}", j.id)));
            }
            if !ids.insert(j.id) {
                return Err(Error::workload(f("id"), format!("job id {} is used twice", j.id)));
            }
            check_time(&f("submit_s"), j.submit_s)?;
            if j.procs == 0 || j.procs > MAX_PROCS {
                return Err(Error::workload(f("procs"), format!("must be in 1..=2^24, got {}", j.procs)));
            }
            check_amount(ErrorKind::Workload, &f("memory_mb"), j.memory_mb, false)?;
            if j.memory_mb > MAX_MEMORY_MB {
                return Err(Error::workload(f("memory_mb"), format!("must be at most 2^30 MB, got {}", j.memory_mb)));
            }
            check_time(&f("runtime_s"), j.runtime_s)?;
            if let Some(r) = j.requested_s {
                check_time(&f("requested_s"), r)?;
            }
            for (name, text) in [("benchmark", &j.benchmark), ("class", &j.class)] {
                if text.as_ref().is_some_and(|s| s.len() > 64) {
                    return Err(Error::workload(f(name), "is longer than 64 bytes"));
                }
            }
            if let Some(p) = &j.program {
                check_program(p, &format!("jobs[{i}].program"), Some(j.procs))?;
            }
            if j.program.is_some() && j.trace.is_some() {
                return Err(Error::workload(f("trace"), "a job runs a program or a trace, not both"));
            }
            if j.trace.as_ref().is_some_and(|t| t.is_empty() || t.len() > 4096) {
                return Err(Error::workload(f("trace"), "must be a path of 1 to 4096 bytes"));
            }
            if let Some(s) = j.start_s {
                check_time(&f("start_s"), s)?;
                if s < j.submit_s {
                    return Err(Error::workload(f("start_s"), format!("{s} s is before the job's submit time ({} s)", j.submit_s)));
                }
            }
            if let Some(h) = &j.hosts {
                if h.len() as u64 != j.procs {
                    return Err(Error::workload(f("hosts"), format!("lists {} hosts for {} processes", h.len(), j.procs)));
                }
            }
        }
        if let Some(p) = &self.default_program {
            check_program(p, "default_program", None)?;
        }
        Ok(())
    }

    /// The JSON Schema of workload files, with the loader's bounds.
    pub fn json_schema() -> String {
        let mut schema = serde_json::to_value(schemars::schema_for!(WorkloadSpec)).expect("schema serialises");
        if let Some(jobs) = schema.pointer_mut("/properties/jobs") {
            jobs["maxItems"] = MAX_JOBS.into();
        }
        let bound = |prop: &mut serde_json::Value, min: u64, max: serde_json::Value| {
            prop["minimum"] = min.into();
            prop["maximum"] = max;
        };
        if let Some(props) = schema.pointer_mut("/definitions/Job/properties").and_then(|p| p.as_object_mut()) {
            for (name, prop) in props.iter_mut() {
                match name.as_str() {
                    "submit_s" | "runtime_s" | "requested_s" | "start_s" => bound(prop, 0, MAX_EXACT.into()),
                    "id" => bound(prop, 0, (MAX_EXACT as u64).into()),
                    "procs" => bound(prop, 1, MAX_PROCS.into()),
                    "memory_mb" => bound(prop, 0, MAX_MEMORY_MB.into()),
                    "benchmark" | "class" => prop["maxLength"] = 64.into(),
                    _ => {}
                }
                if name == "requested_s" || name == "start_s" {
                    // Given as a number; `null` is no better than leaving it out.
                    prop["type"] = "number".into();
                }
            }
        }
        if let Some(props) = schema.pointer_mut("/definitions/Program/properties") {
            bound(&mut props["iterations"], 1, MAX_ITERATIONS.into());
            props["phases"]["minItems"] = 1.into();
            props["phases"]["maxItems"] = MAX_PHASES.into();
        }
        if let Some(variants) = schema.pointer_mut("/definitions/Phase/oneOf").and_then(|v| v.as_array_mut()) {
            for variant in variants {
                let Some(props) = variant.get_mut("properties").and_then(|p| p.as_object_mut()) else { continue };
                for (name, prop) in props.iter_mut() {
                    match name.as_str() {
                        "seconds" | "bytes" => bound(prop, 0, MAX_EXACT.into()),
                        "neighbors" => prop["minimum"] = 1.into(),
                        "dims" => bound(prop, 2, 3.into()),
                        _ => {}
                    }
                }
            }
        }
        serde_json::to_string_pretty(&schema).expect("schema serialises")
    }
}

/// What was left out of a workload, and why.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// SWF jobs with a negative (unknown) run time.
    pub negative_runtime: u64,
    /// SWF jobs with no processor count (fields 5 and 8 both non-positive).
    pub no_procs: u64,
    /// SWF jobs with no submit time (field 2 negative).
    pub no_submit: u64,
    /// Jobs needing more processors than the cluster has.
    pub too_large: u64,
}

impl Skipped {
    pub fn total(&self) -> u64 {
        self.negative_runtime + self.no_procs + self.no_submit + self.too_large
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> Error {
        WorkloadSpec::from_json(text).unwrap_err()
    }

    #[test]
    fn parses_a_job_with_a_program() {
        let w = WorkloadSpec::from_json(
            r#"{"jobs": [{"id": 1, "submit_s": 0, "procs": 4, "memory_mb": 100, "runtime_s": 10,
                "program": {"iterations": 5, "phases": [{"phase": "compute", "seconds": 1.5},
                {"phase": "exchange", "bytes": 1024, "neighbors": 2}, {"phase": "allreduce", "bytes": 8}, {"phase": "barrier"}]}}]}"#,
        )
        .unwrap();
        let j = &w.jobs[0];
        assert_eq!(j.requested(), 10.0);
        let p = j.program.as_ref().unwrap();
        assert_eq!(p.iterations, 5);
        assert_eq!(p.phases[1], Phase::Exchange { bytes: 1024.0, neighbors: 2 });
        assert!(p.phases[2].is_collective() && !p.phases[1].is_collective());
        // Round trip through JSON.
        let again = WorkloadSpec::from_json(&serde_json::to_string(&w).unwrap()).unwrap();
        assert_eq!(again, w);
    }

    #[test]
    fn errors_name_the_field_and_reason() {
        let e = err(r#"{"jobs": [{"id": 1, "submit_s": -1, "procs": 4, "runtime_s": 1}]}"#);
        assert_eq!((e.kind, e.field.as_str()), (ErrorKind::Workload, "jobs[0].submit_s"), "{e}");
        assert!(e.reason.contains(">= 0"), "{e}");
        let e = err(r#"{"jobs": [{"id": 1, "submit_s": 0, "procs": 0, "runtime_s": 1}]}"#);
        assert_eq!(e.field, "jobs[0].procs", "{e}");
        let e = err(r#"{"jobs": [{"id": 1, "submit_s": 0, "procs": 1, "runtime_s": 1}, {"id": 1, "submit_s": 0, "procs": 1, "runtime_s": 1}]}"#);
        assert_eq!(e.field, "jobs[1].id", "{e}");
        assert!(e.reason.contains("twice"), "{e}");
        let e = err(r#"{"jobs": [{"id": 1, "submit_s": 0, "procs": 1, "runtime_s": 1e300}]}"#);
        assert_eq!(e.field, "jobs[0].runtime_s", "{e}");
        let e = err(r#"{"jobs": [{"id": 1, "submit_s": 0, "procs": 4, "runtime_s": 1, "program": {"iterations": 1,
            "phases": [{"phase": "exchange", "bytes": 1, "neighbors": 4}]}}]}"#);
        assert_eq!(e.field, "jobs[0].program.phases[0].neighbors", "{e}");
        let e = err(r#"{"jobs": [{"id": 1, "submit_s": 0, "procs": 4, "runtime_s": 1, "program": {"iterations": 0, "phases": [{"phase": "barrier"}]}}]}"#);
        assert_eq!(e.field, "jobs[0].program.iterations", "{e}");
        let e = err(r#"{"jobs": [{"id": 1, "submit_s": 0, "procs": 4, "runtime_s": 1, "walltime": 3}]}"#);
        assert!(e.reason.contains("unknown field `walltime`"), "{e}");
        let e = err(r#"{"jobs": [{"id": 1, "submit_s": 0, "procs": 4, "runtime_s": 1, "program": {"iterations": 1, "phases": [{"phase": "gather"}]}}]}"#);
        assert!(e.reason.contains("unknown variant `gather`"), "{e}");
    }

    #[test]
    fn a_pattern_spec_makes_a_program_and_bad_ones_name_the_key() {
        let p = Program::from_pattern("halo2d:bytes=4096,iterations=5,compute=0.01").unwrap();
        assert_eq!(p, Program { iterations: 5, phases: vec![Phase::Compute { seconds: 0.01 }, Phase::Halo { bytes: 4096.0, dims: 2 }] });
        assert_eq!(Program::from_pattern("pairs").unwrap(), Program { iterations: 10, phases: vec![Phase::Pairs { bytes: 1_048_576.0 }] });
        let auto = Program::from_pattern("alltoall:compute=auto,iterations=4").unwrap();
        assert_eq!(auto.phases[0], Phase::ComputeShare);
        assert_eq!(auto.resolved(10.0).phases[0], Phase::Compute { seconds: 2.5 });
        for (spec, says) in [
            ("ring", "unknown pattern `ring`"),
            ("alltoall:size=3", "unknown key `size`"),
            ("alltoall:bytes", "not KEY=VALUE"),
            ("alltoall:bytes=x", "`x` is not a number"),
            ("alltoall:iterations=2.5", "whole number"),
            ("alltoall:iterations=0", "whole number"),
        ] {
            let e = Program::from_pattern(spec).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Options);
            assert!(e.reason.contains(says), "{spec}: {e}");
        }
        let e = Program::from_pattern("allreduce:bytes=-1").unwrap_err();
        assert_eq!(e.field, "pattern.phases[0].bytes", "{e}");
    }

    #[test]
    fn trace_start_and_hosts_fields_are_checked() {
        let base = r#""id": 1, "submit_s": 5, "procs": 2, "runtime_s": 1"#;
        let e = err(&format!(r#"{{"jobs": [{{{base}, "trace": "a.txt", "program": {{"iterations": 1, "phases": [{{"phase": "barrier"}}]}}}}]}}"#));
        assert_eq!(e.field, "jobs[0].trace", "{e}");
        let e = err(&format!(r#"{{"jobs": [{{{base}, "start_s": 4}}]}}"#));
        assert!(e.field == "jobs[0].start_s" && e.reason.contains("before"), "{e}");
        let e = err(&format!(r#"{{"jobs": [{{{base}, "hosts": ["a"]}}]}}"#));
        assert!(e.field == "jobs[0].hosts" && e.reason.contains("1 hosts for 2"), "{e}");
        let w = WorkloadSpec::from_json(&format!(r#"{{"jobs": [{{{base}, "start_s": 6, "hosts": ["a", 3]}}]}}"#)).unwrap();
        assert_eq!(w.jobs[0].hosts, Some(vec![HostRef::Name("a".into()), HostRef::Index(3)]));
        let e = err(r#"{"default_program": {"iterations": 1, "phases": [{"phase": "halo", "bytes": 1, "dims": 4}]}, "jobs": []}"#);
        assert_eq!(e.field, "default_program.phases[0].dims", "{e}");
    }

    #[test]
    fn schema_has_the_bounds() {
        let s: serde_json::Value = serde_json::from_str(&WorkloadSpec::json_schema()).unwrap();
        assert_eq!(s.pointer("/definitions/Job/properties/procs/minimum").unwrap(), 1);
        assert_eq!(s.pointer("/definitions/Job/properties/submit_s/minimum").unwrap(), 0);
    }
}
