//! Cluster job scheduling (paper 002, "Coscheduling in clusters: is it a viable
//! alternative?"): workloads ([`workload`], the NAS-like generator [`nas`], Standard
//! Workload Format logs [`swf`]) and the space-sharing batch policies ([`batch`]).
//!
//! The time-sharing policies of the paper (local scheduling, gang, DCS, SB, PB, CC,
//! HYBRID) run the jobs' programs on a node model ([`epoch`]: the Linux 2.4 scheduler;
//! [`timeshare`]: cluster, allocation, policies).

pub mod batch;
pub mod epoch;
pub mod fabric;
pub mod nas;
pub mod swf;
pub mod timeshare;
pub mod workload;

use crate::error::{Result, ErrorKind, Error};

/// Every policy name `cosched run` takes: the batch ones, then the time-sharing ones.
pub const POLICY_NAMES: [&str; 10] =
    ["batch", "batch-easy", "batch-conservative", "nls", "gang", "dcs", "sb", "pb", "cc", "hybrid"];

/// How to run a workload: the policy and the cluster (`params.nodes` nodes of one CPU; for
/// batch policies, processors).
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    pub policy: String,
    pub params: TsParams,
}

/// The outcome of a run under any policy.
#[derive(Debug, Clone, PartialEq)]
pub enum RunResult {
    Batch(BatchResult),
    Ts(TsResult),
}

impl RunResult {
    /// Write the run's timeline as a Perfetto trace ([`crate::mpi::timeline::perfetto::write_schedule`]):
    /// on a platform a track per host that ran jobs (named from `host_names`), with time-sharing
    /// policies a track per node, else one track for the cluster; under each, as many lanes
    /// (`slot N`) as jobs or processors overlap there, a job taking its processors' lanes on
    /// the cluster's track (batch, no platform: the scheduler counts processors, it does not
    /// name them, so the lanes are assigned lowest first) and one lane on each of its hosts or
    /// nodes.
    pub fn write_timeline(&self, path: &std::path::Path, shown_as: &str, host_names: &[String]) -> Result<()> {
        use crate::mpi::timeline::perfetto::{write_schedule, JobSlice};
        use std::cmp::Reverse;
        use std::collections::{BTreeSet, BinaryHeap};
        let jobs = self.jobs();
        // Each job's places: (group, lanes it takes there).
        let (n_groups, places): (usize, Vec<Vec<(usize, u32)>>) = match self {
            RunResult::Batch(r) if !r.fabric.is_empty() => {
                // Hosts past `host_names` (none given) are named by their index.
                let hosts = r.fabric.iter().flat_map(|f| f.hosts.iter()).map(|&h| h as usize + 1).max().unwrap_or(0);
                (hosts.max(host_names.len()), r.fabric.iter().map(|f| f.hosts.iter().map(|&h| (h as usize, 1)).collect()).collect())
            }
            RunResult::Batch(_) => (1, jobs.iter().map(|j| vec![(0, j.procs as u32)]).collect()),
            RunResult::Ts(r) => {
                let places = r
                    .alloc
                    .iter()
                    .map(|nodes| {
                        let set: BTreeSet<u32> = nodes.iter().copied().collect();
                        set.into_iter().map(|n| (n as usize, 1)).collect()
                    })
                    .collect();
                (r.params.nodes as usize, places)
            }
        };
        // Per group, its jobs by start time, each given the lowest free lanes.
        let mut by_group: Vec<Vec<(f64, usize, u32)>> = vec![Vec::new(); n_groups];
        for (j, job_places) in places.iter().enumerate() {
            if !jobs[j].start_s.is_finite() {
                continue;
            }
            for &(g, count) in job_places {
                if g < n_groups {
                    by_group[g].push((jobs[j].start_s, j, count));
                }
            }
        }
        let mut lanes_of: Vec<u32> = vec![0; n_groups];
        let mut taken: Vec<(usize, usize, u32)> = Vec::new(); // (group, job, lane in group)
        for (g, entries) in by_group.iter_mut().enumerate() {
            entries.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let mut free: BTreeSet<u32> = BTreeSet::new();
            let mut busy: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
            for &(start, j, count) in entries.iter() {
                while let Some(&Reverse((end, lane))) = busy.peek() {
                    if f64::from_bits(end) > start {
                        break;
                    }
                    busy.pop();
                    free.insert(lane);
                }
                for _ in 0..count {
                    let lane = match free.pop_first() {
                        Some(l) => l,
                        None => {
                            lanes_of[g] += 1;
                            lanes_of[g] - 1
                        }
                    };
                    busy.push(Reverse((jobs[j].end_s.max(start).to_bits(), lane)));
                    taken.push((g, j, lane));
                }
            }
        }
        // Groups with lanes, in index order; lanes numbered across them.
        let mut offset = vec![0u32; n_groups];
        let mut groups = Vec::new();
        let mut next = 0u32;
        for g in 0..n_groups {
            if lanes_of[g] > 0 {
                offset[g] = next;
                next += lanes_of[g];
                let name = match self {
                    RunResult::Batch(r) if r.fabric.is_empty() => format!("cluster ({} processors)", r.processors),
                    RunResult::Batch(_) => host_names.get(g).cloned().unwrap_or_else(|| format!("host {g}")),
                    RunResult::Ts(_) => format!("node {g}"),
                };
                groups.push((name, lanes_of[g]));
            }
        }
        let slices: Vec<JobSlice> = taken
            .into_iter()
            .map(|(g, j, lane)| {
                let job = &jobs[j];
                JobSlice { lane: offset[g] + lane, start: job.start_s, end: job.end_s.max(job.start_s), id: job.id, procs: job.procs, submit: job.submit_s }
            })
            .collect();
        write_schedule(path, shown_as, &groups, &slices)
    }

    pub fn policy_name(&self) -> &'static str {
        match self {
            RunResult::Batch(r) => r.policy.name(),
            RunResult::Ts(r) => r.policy.name(),
        }
    }
    pub fn processors(&self) -> u64 {
        match self {
            RunResult::Batch(r) => r.processors,
            RunResult::Ts(r) => r.params.nodes,
        }
    }
    pub fn jobs(&self) -> &[JobRecord] {
        match self {
            RunResult::Batch(r) => &r.jobs,
            RunResult::Ts(r) => &r.jobs,
        }
    }
    /// What each job did on a platform (`jobs` order); empty for a run without one.
    pub fn fabric(&self) -> &[batch::FabricJob] {
        match self {
            RunResult::Batch(r) => &r.fabric,
            RunResult::Ts(_) => &[],
        }
    }
    /// On a platform, when asked for: the interference table (jobs by id).
    pub fn interference(&self) -> Option<&[crate::mpi::jobs::Interference]> {
        match self {
            RunResult::Batch(r) => r.interference.as_deref(),
            RunResult::Ts(_) => None,
        }
    }
    /// On a platform, when asked for: each link's statistics.
    pub fn links(&self) -> Option<&crate::engine::link_stats::LinkReport> {
        match self {
            RunResult::Batch(r) => r.links.as_ref(),
            RunResult::Ts(_) => None,
        }
    }
    pub fn skipped(&self) -> &Skipped {
        match self {
            RunResult::Batch(r) => &r.skipped,
            RunResult::Ts(r) => &r.skipped,
        }
    }
    /// Scheduling passes (batch) or events (time-sharing) simulated.
    pub fn steps(&self) -> u64 {
        match self {
            RunResult::Batch(r) => r.passes,
            RunResult::Ts(r) => r.events,
        }
    }
    pub fn summary(&self) -> Summary {
        match self {
            RunResult::Batch(r) => r.summary(),
            RunResult::Ts(r) => batch::summarize(&r.jobs, r.params.nodes, r.busy_s()),
        }
    }

    /// The `--json` document (see [`batch::run_json`]); time-sharing runs add `mpl`,
    /// `allocation`, `seed`, every parameter (`params`), the busy time by kind, and counts.
    pub fn to_json(&self) -> String {
        match self {
            RunResult::Batch(r) => r.to_json(),
            RunResult::Ts(r) => {
                let head = serde_json::json!({
                    "policy": r.policy.name(),
                    "allocation": r.params.allocation.name(),
                    "mpl": r.params.mpl,
                    "seed": r.params.seed,
                    "params": r.params,
                    "busy_compute_s": r.compute_s,
                    "busy_spin_s": r.spin_s,
                    "busy_switch_s": r.switch_s,
                    "context_switches": r.switches,
                    "messages": r.messages,
                    "events": r.events,
                });
                batch::run_json(head, r.params.nodes, &self.summary(), &r.skipped, &r.jobs, &[])
            }
        }
    }

    /// The processors (node indices) of each job, in job order. Batch runs allocate by count;
    /// processors are numbered here by a sweep in time order, each starting job taking the
    /// lowest free ones (ends before starts at equal times).
    pub fn allocations(&self) -> Vec<Vec<u32>> {
        match self {
            RunResult::Ts(r) => r.alloc.clone(),
            RunResult::Batch(r) => {
                let mut ev: Vec<(f64, u8, usize)> = Vec::with_capacity(2 * r.jobs.len());
                for (k, j) in r.jobs.iter().enumerate() {
                    if j.end_s > j.start_s {
                        ev.push((j.end_s, 0, k));
                    }
                    ev.push((j.start_s, 1, k));
                }
                ev.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
                let mut free: std::collections::BTreeSet<u32> = (0..r.processors.min(u32::MAX as u64) as u32).collect();
                let mut out = vec![Vec::new(); r.jobs.len()];
                for (_, kind, k) in ev {
                    if kind == 0 {
                        free.extend(out[k].iter().copied());
                    } else {
                        let take: Vec<u32> = free.iter().copied().take(r.jobs[k].procs as usize).collect();
                        if r.jobs[k].end_s > r.jobs[k].start_s {
                            for x in &take {
                                free.remove(x);
                            }
                        }
                        out[k] = take;
                    }
                }
                out
            }
        }
    }

    /// Batsim's `jobs.csv` (the columns Batsim writes and evalys reads): times in s,
    /// `allocated_resources` as an interval set (`0-3 7`), `consumed_energy` -1 (not
    /// computed per job), `stretch` = turnaround / execution (`inf` for a zero-length job).
    pub fn jobs_csv(&self, workload_name: &str) -> String {
        use std::fmt::Write;
        let profile = match self {
            RunResult::Batch(_) => "rigid",
            RunResult::Ts(_) => "program",
        };
        let name: String = workload_name.chars().map(|c| if c == ',' || c == '"' || c == '\n' { '_' } else { c }).collect();
        let mut out = String::from(
            "job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success,final_state,\
             starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata\n",
        );
        for (j, alloc) in self.jobs().iter().zip(self.allocations()) {
            let exec = j.end_s - j.start_s;
            let turnaround = j.end_s - j.submit_s;
            let stretch = if exec > 0.0 { format!("{}", turnaround / exec) } else { "inf".into() };
            let _ = writeln!(
                out,
                "{},{name},{profile},{},{},{},1,COMPLETED_SUCCESSFULLY,{},{exec},{},{},{turnaround},{stretch},{},-1,",
                j.id,
                j.submit_s,
                j.procs,
                j.requested_s,
                j.start_s,
                j.end_s,
                j.start_s - j.submit_s,
                interval_set(&alloc)
            );
        }
        out
    }
}

/// `0-3 7 9-10`: Batsim's interval-set text of a set of resource ids.
pub fn interval_set(ids: &[u32]) -> String {
    let mut v = ids.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut k = i;
        while k + 1 < v.len() && v[k + 1] == v[k] + 1 {
            k += 1;
        }
        parts.push(if k == i { v[i].to_string() } else { format!("{}-{}", v[i], v[k]) });
        i = k + 1;
    }
    parts.join(" ")
}

pub use batch::{BatchJob, BatchResult, JobRecord, Policy, Summary};
pub use timeshare::{Allocation, TsParams, TsPolicy, TsResult};
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
        Ok(Workload { spec: WorkloadSpec { generator: None, default_program: None, jobs }, skipped, swf: Some(log) })
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

    /// Run the workload under any policy (see [`POLICY_NAMES`]): batch policies on
    /// `params.nodes` processors at MPL 1 with packing (they reject another MPL or
    /// allocation), time-sharing ones with every parameter of `params`.
    pub fn run(&self, spec: &RunSpec) -> Result<RunResult> {
        let p = &spec.params;
        if let Ok(policy) = Policy::from_name(&spec.policy) {
            if p.mpl != 1 {
                return Err(Error::new(ErrorKind::Options, "mpl", format!("batch policies run at MPL 1 (the paper's PBS), got {}", p.mpl)));
            }
            if p.allocation != Allocation::Packing {
                return Err(Error::new(
                    ErrorKind::Options,
                    "allocation",
                    format!("batch policies allocate with packing only (§5.1), got `{}`", p.allocation.name()),
                ));
            }
            return self.run_batch(policy, p.nodes).map(RunResult::Batch);
        }
        let Some(policy) = TsPolicy::from_name(&spec.policy) else {
            return Err(Error::new(
                ErrorKind::Options,
                "policy",
                format!("unknown policy `{}` (known: {})", spec.policy, POLICY_NAMES.join(", ")),
            ));
        };
        if policy == TsPolicy::Gang && p.allocation == Allocation::Random {
            return Err(Error::new(
                ErrorKind::Options,
                "allocation",
                "gang scheduling allocates with packing only (SCore's allocator, §5.1): use packing or memory-aware".to_string(),
            ));
        }
        if let Some(i) = self.spec.jobs.iter().position(|j| j.trace.is_some()) {
            return Err(Error::workload(
                format!("jobs[{i}].trace"),
                "a trace replays on a platform only (cosched run --platform, batch or explicit policies)",
            ));
        }
        let mut r = timeshare::simulate(&self.spec.jobs_with_default(), policy, p)?;
        let too_large = r.skipped.too_large;
        r.skipped = Skipped { too_large, ..self.skipped };
        Ok(RunResult::Ts(r))
    }

    /// Run the workload under batch `policy` on `platform`'s hosts (one process a core), every
    /// job's program or trace in one engine so that jobs share the network ([`fabric`]);
    /// runtimes come out of the run. `traces` holds the trace of each job `trace` path (as the
    /// workload writes it). `options` gives the sharing model, its parameters, the collectives
    /// and SMPI's timing (and per-link statistics with `link_stats`); `settings` how a job gets
    /// its cores, whether it also runs alone on its hosts (`alone_s`, slowdown) and whether the
    /// interference table is kept. [`Policy::Explicit`] starts each job at its `start_s` on its
    /// `hosts` instead. Also the engine's steps.
    pub fn run_on_fabric(
        &self,
        policy: Policy,
        platform: &crate::network::platform::Platform,
        options: &crate::mpi::replay::SimOptions,
        settings: &fabric::FabricSettings,
        traces: &std::collections::HashMap<String, crate::mpi::trace::Trace>,
    ) -> Result<(BatchResult, u64)> {
        let fabric::FabricSettings { allocation, seed, alone, interference } = *settings;
        let platform = &*crate::mpi::replay::with_platform_options(platform, options)?;
        let jobs = self.spec.jobs_with_default();
        for (i, j) in jobs.iter().enumerate() {
            if let Some(path) = &j.trace {
                if !traces.contains_key(path) {
                    return Err(Error::workload(format!("jobs[{i}].trace"), format!("`{path}` was not read (the caller gives every job's trace)")));
                }
            }
        }
        let mut trace_of = |i: usize| {
            let trace = match &jobs[i].trace {
                Some(path) => traces[path].clone(),
                None => fabric::job_trace(&jobs[i])?,
            };
            if trace.n_ranks() as u64 != jobs[i].procs {
                let what = if jobs[i].trace.is_some() { "trace" } else { "program" };
                return Err(Error::workload(format!("jobs[{i}].{what}"), format!("has {} ranks for the job's {} processes", trace.n_ranks(), jobs[i].procs)));
            }
            Ok(trace)
        };
        let cores: Vec<u32> = platform.hosts.iter().map(|h| h.cores as u32).collect();
        let mut observer = crate::mpi::replay::NoObserver;
        if policy == Policy::Explicit {
            let hosts = fabric::explicit_hosts(&jobs, platform)?;
            let starts: Vec<f64> = jobs.iter().map(|j| j.start_s.expect("explicit_hosts checked it")).collect();
            // A job the network stretched may still hold cores a later job was given.
            let mut engine = crate::mpi::jobs::Fabric::new(platform, options, &mut observer)?
                .oversubscribe(crate::mpi::jobs::Oversubscribe::Allow);
            if interference {
                engine = engine.track_interference();
            }
            let (ends, pairs) = crate::mpi::jobs::run_jobs(&mut engine, &starts, &hosts, &mut trace_of)?;
            let (events, links) = (engine.events(), engine.take_link_report());
            drop(engine);
            let mut rows = Vec::with_capacity(jobs.len());
            let mut alone_times = fabric::AloneTimes::default();
            for (i, (j, e)) in jobs.iter().zip(ends).enumerate() {
                let alone_s = if alone {
                    let isolated = e.isolated.then(|| e.end - e.start);
                    alone_times.get(platform, fabric::job_key(j), &hosts[i], isolated, || {
                        fabric::alone_time(platform, options, trace_of(i)?, &hosts[i])
                    })?
                } else {
                    f64::NAN
                };
                let record = JobRecord {
                    id: j.id,
                    submit_s: j.submit_s,
                    procs: j.procs,
                    runtime_s: e.end - e.start,
                    requested_s: j.requested(),
                    start_s: e.start,
                    end_s: e.end,
                    reserved_s: f64::NAN,
                };
                rows.push((record, batch::FabricJob { bytes: e.bytes, messages: e.messages, alone_s, hosts: fabric::distinct_hosts(&hosts[i]) }));
            }
            rows.sort_by(|(a, _), (b, _)| a.submit_s.total_cmp(&b.submit_s).then(a.id.cmp(&b.id)));
            let (records, on_fabric) = rows.into_iter().unzip();
            let processors = cores.iter().map(|&c| u64::from(c)).sum();
            let interference = interference.then(|| by_ids(pairs, &jobs));
            let r = BatchResult { policy, processors, jobs: records, skipped: self.skipped, passes: 0, fabric: on_fabric, interference, links };
            return Ok((r, events));
        }
        let mut engine = crate::mpi::jobs::Fabric::new(platform, options, &mut observer)?;
        if interference {
            engine = engine.track_interference();
        }
        let hierarchy = fabric::Hierarchy::of(platform, allocation.name())?;
        let free = fabric::FreeCores::new(cores, hierarchy, allocation, seed);
        let key_of = |i: usize| fabric::job_key(&jobs[i]);
        let mut runner = fabric::FabricRunner::new(engine, platform, options, alone, free, &mut trace_of, &key_of);
        let processors = runner.processors();
        let mut r = self.schedule(policy, processors, &mut runner)?;
        let events = runner.events();
        let (done, pairs, links) = runner.into_parts();
        let done: Option<Vec<batch::FabricJob>> = done.into_iter().collect();
        r.fabric = done.filter(|d| d.len() == r.jobs.len()).ok_or_else(|| {
            Error::new(ErrorKind::Deadlock, "jobs", "the schedule ended with jobs the fabric never saw end")
        })?;
        r.interference = interference.then(|| by_ids(pairs, &jobs));
        r.links = links;
        Ok((r, events))
    }

    /// Schedule the jobs on `processors` processors under a batch policy; the result's
    /// `skipped` adds the jobs too large for the cluster to those skipped on reading.
    pub fn run_batch(&self, policy: Policy, processors: u64) -> Result<BatchResult> {
        self.schedule(policy, processors, &mut batch::LoggedRuntimes::default())
    }

    /// The batch schedule with `runner` running the jobs; `skipped` as [`Workload::run_batch`] says.
    fn schedule(&self, policy: Policy, processors: u64, runner: &mut dyn batch::Runner) -> Result<BatchResult> {
        let jobs: Vec<BatchJob> = self.spec.jobs.iter().map(BatchJob::from).collect();
        let mut r = batch::simulate_with(&jobs, processors, policy, runner)?;
        let too_large = r.skipped.too_large;
        r.skipped = Skipped { too_large, ..self.skipped };
        Ok(r)
    }
}

/// The interference table with jobs by their index in `jobs` turned into their ids.
fn by_ids(mut pairs: Vec<crate::mpi::jobs::Interference>, jobs: &[Job]) -> Vec<crate::mpi::jobs::Interference> {
    for pair in &mut pairs {
        (pair.a, pair.b) = (jobs[pair.a as usize].id, jobs[pair.b as usize].id);
    }
    pairs
}
