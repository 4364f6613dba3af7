//! A cluster whose jobs share the network: the batch scheduler's jobs ([`super::batch`]) run as
//! MPI programs in one engine ([`crate::mpi::jobs::Fabric`]) on the hosts an allocation policy
//! gives them, so that a job ends when its last rank ends, slowed by whatever its neighbours
//! send over the links it uses, and the scheduler reacts to that end.
//!
//! A job's program: its workload `program` (phases, lowered here to MPI operations, the
//! collectives through the platform's algorithms), else a rank computing for the job's logged
//! runtime (no communication: it runs as long as the log says).

use crate::cosched::batch::{BatchJob, Runner};
use crate::cosched::workload::{Job, Phase, Program};
use crate::error::{Error, ErrorKind, Result};
use crate::mpi::jobs::Fabric;
use crate::mpi::ops::{OpSpec, Peer, TagSpec};
use crate::mpi::trace::{Trace, TraceSpec};
use crate::util::rng::SplitMix64;

/// How a starting job gets its hosts (one core a rank).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostAllocation {
    /// The free cores first in the platform's host order.
    Contiguous,
    /// Free cores drawn at random (seeded).
    Random,
}

impl HostAllocation {
    pub const NAMES: [&'static str; 2] = ["contiguous", "random"];

    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "contiguous" => Ok(HostAllocation::Contiguous),
            "random" => Ok(HostAllocation::Random),
            _ => Err(Error::new(
                ErrorKind::Options,
                "allocation",
                format!("unknown allocation `{name}` on a platform (known: {})", HostAllocation::NAMES.join(", ")),
            )),
        }
    }
}

/// The ops of each rank of a job of `procs` processes running `program`: its phases in order,
/// `iterations` times. An exchange sends `bytes` to the `neighbors` next processes (r + 1, ...,
/// wrapping) and receives as much from the previous ones, then waits for all; a collective is
/// the MPI collective of that name on the job's processes.
pub fn program_trace(program: &Program, procs: usize) -> Result<Trace> {
    let iteration = |r: usize| -> Vec<OpSpec> {
        let mut ops = Vec::new();
        for phase in &program.phases {
            match *phase {
                Phase::Compute { seconds } => ops.push(OpSpec::Compute { flops: None, seconds: Some(seconds) }),
                Phase::Exchange { bytes, neighbors } => {
                    let k = (neighbors as usize).min(procs.saturating_sub(1));
                    for d in 1..=k {
                        ops.push(OpSpec::Isend { dst: (r + d) % procs, bytes, tag: 0, sync: false, comm: 0 });
                        ops.push(OpSpec::Irecv { src: Peer::Rank((r + procs - d) % procs), tag: TagSpec::Value(0), comm: 0 });
                    }
                    if k > 0 {
                        ops.push(OpSpec::Waitall);
                    }
                }
                Phase::Barrier => ops.push(OpSpec::Barrier { comm: 0 }),
                Phase::Bcast { bytes } => ops.push(OpSpec::Bcast { root: 0, bytes, comm: 0 }),
                Phase::Allreduce { bytes } => ops.push(OpSpec::Allreduce { bytes, comm: 0 }),
                Phase::Alltoall { bytes } => ops.push(OpSpec::Alltoall { bytes, comm: 0 }),
            }
        }
        ops
    };
    let ranks = (0..procs)
        .map(|r| {
            let one = iteration(r);
            let mut ops = Vec::with_capacity(one.len() * program.iterations as usize);
            for _ in 0..program.iterations {
                ops.extend(one.iter().cloned());
            }
            ops
        })
        .collect();
    Trace::from_spec(TraceSpec { ranks, placement: None })
}

/// The trace a workload job runs on a fabric: its program, else a compute of its logged
/// runtime on each of its processes.
pub fn job_trace(job: &Job) -> Result<Trace> {
    let procs = job.procs as usize;
    match &job.program {
        Some(program) => program_trace(program, procs),
        None => {
            let ops = vec![OpSpec::Compute { flops: None, seconds: Some(job.runtime_s) }];
            Trace::from_spec(TraceSpec { ranks: vec![ops; procs], placement: None })
        }
    }
}

/// Runs a batch schedule's jobs on a [`Fabric`]: hosts from an allocation policy, traces from
/// `traces` (called with the job's index in the workload when it starts, dropped when it ends).
pub struct FabricRunner<'a, 't> {
    fabric: Fabric<'a>,
    traces: &'t mut dyn FnMut(usize) -> Result<Trace>,
    /// Free cores of each host.
    free: Vec<u32>,
    allocation: HostAllocation,
    rng: SplitMix64,
    /// Per fabric job number (start order): the schedule's job and its hosts (one a rank).
    started: Vec<(usize, Vec<usize>)>,
}

impl<'a, 't> FabricRunner<'a, 't> {
    /// `cores[h]` is host h's core count; `seed` drives the random allocation.
    pub fn new(fabric: Fabric<'a>, cores: Vec<u32>, allocation: HostAllocation, seed: u64, traces: &'t mut dyn FnMut(usize) -> Result<Trace>) -> Self {
        FabricRunner { fabric, traces, free: cores, allocation, rng: SplitMix64::new(seed), started: Vec::new() }
    }

    /// Every core of the platform: the scheduler's processors.
    pub fn processors(&self) -> u64 {
        self.free.iter().map(|&c| u64::from(c)).sum()
    }

    /// The engine's steps so far.
    pub fn events(&self) -> u64 {
        self.fabric.events()
    }

    /// `procs` free cores (the scheduler checked that there are), as the hosts of the ranks.
    fn allocate(&mut self, procs: usize) -> Vec<usize> {
        let mut hosts = Vec::with_capacity(procs);
        match self.allocation {
            HostAllocation::Contiguous => {
                for (h, free) in self.free.iter().enumerate() {
                    let take = (*free as usize).min(procs - hosts.len());
                    hosts.extend(std::iter::repeat_n(h, take));
                    if hosts.len() == procs {
                        break;
                    }
                }
            }
            HostAllocation::Random => {
                let mut slots: Vec<usize> = self.free.iter().enumerate().flat_map(|(h, &c)| std::iter::repeat_n(h, c as usize)).collect();
                self.rng.shuffle(&mut slots);
                slots.truncate(procs);
                hosts = slots;
            }
        }
        for &h in &hosts {
            self.free[h] -= 1;
        }
        hosts
    }
}

impl Runner for FabricRunner<'_, '_> {
    fn launch(&mut self, k: usize, index: usize, job: &BatchJob, _now: f64) -> Result<()> {
        let trace = (self.traces)(index)?;
        let procs = job.procs as usize;
        if trace.n_ranks() != procs {
            return Err(Error::workload(format!("jobs[{index}]"), format!("its trace has {} ranks for {procs} processes", trace.n_ranks())));
        }
        let hosts = self.allocate(procs);
        self.fabric.start(trace, &hosts, &format!("jobs[{index}]"))?;
        self.started.push((k, hosts));
        Ok(())
    }

    fn next_ends(&mut self, limit: f64) -> Result<Option<(f64, Vec<usize>)>> {
        let ended = self.fabric.run_until(limit)?;
        if ended.is_empty() {
            return Ok(None);
        }
        let mut ks = Vec::with_capacity(ended.len());
        for (number, _) in ended {
            let (k, hosts) = std::mem::take(&mut self.started[number as usize]);
            for h in hosts {
                self.free[h] += 1;
            }
            ks.push(k);
        }
        Ok(Some((self.fabric.now(), ks)))
    }

    fn measures(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cosched::batch::{simulate, simulate_with, Policy};
    use crate::mpi::replay::{NoObserver, SimOptions};

    fn platform(hosts: usize) -> crate::network::platform::Platform {
        crate::mpi::platform_file::load_json(&format!(
            r#"{{"cluster": {{"count": {hosts}, "speed": 1e9}}, "network": {{"bandwidth": 1e8, "latency": 0, "eager_threshold": 0}}}}"#
        ))
        .unwrap()
    }

    fn job(id: u64, submit: f64, procs: u64, runtime: f64) -> Job {
        Job { id, submit_s: submit, procs, memory_mb: 0.0, runtime_s: runtime, requested_s: None, benchmark: None, class: None, program: None }
    }

    #[test]
    fn jobs_without_programs_run_their_logged_runtimes_as_without_a_fabric() {
        let p = platform(4);
        let jobs = vec![job(1, 0.0, 2, 10.0), job(2, 1.0, 4, 5.0), job(3, 2.0, 2, 3.0), job(4, 2.5, 1, 1.0)];
        let batch: Vec<BatchJob> = jobs.iter().map(BatchJob::from).collect();
        for policy in [Policy::Fcfs, Policy::Easy, Policy::Conservative] {
            let logged = simulate(&batch, 4, policy).unwrap();
            let mut observer = NoObserver;
            let fabric = Fabric::new(&p, &SimOptions::default(), &mut observer).unwrap();
            let mut traces = |i: usize| job_trace(&jobs[i]);
            let mut runner = FabricRunner::new(fabric, vec![1; 4], HostAllocation::Contiguous, 0, &mut traces);
            let ran = simulate_with(&batch, runner.processors(), policy, &mut runner).unwrap();
            for (a, b) in logged.jobs.iter().zip(&ran.jobs) {
                assert_eq!((a.id, a.start_s), (b.id, b.start_s), "{policy:?}");
                assert!((a.end_s - b.end_s).abs() < 1e-9, "{policy:?}: {} vs {}", a.end_s, b.end_s);
            }
        }
    }

    #[test]
    fn the_scheduler_starts_a_job_when_the_fabric_ends_the_one_before() {
        // Two hosts of one core; each job's two processes swap 1e8 bytes at 1e8 B/s: 1 s on
        // the fabric, whatever the log says (5 s). FCFS: job 2 waits for job 1's end.
        let p = platform(2);
        let program = Program { iterations: 1, phases: vec![Phase::Exchange { bytes: 1e8, neighbors: 1 }] };
        let mk = |id: u64| Job { program: Some(program.clone()), ..job(id, 0.0, 2, 5.0) };
        let jobs = vec![mk(1), mk(2)];
        let batch: Vec<BatchJob> = jobs.iter().map(BatchJob::from).collect();
        let mut observer = NoObserver;
        let fabric = Fabric::new(&p, &SimOptions::default(), &mut observer).unwrap();
        let mut traces = |i: usize| job_trace(&jobs[i]);
        let mut runner = FabricRunner::new(fabric, vec![1, 1], HostAllocation::Contiguous, 0, &mut traces);
        let ran = simulate_with(&batch, runner.processors(), Policy::Fcfs, &mut runner).unwrap();
        let times: Vec<(f64, f64, f64)> = ran.jobs.iter().map(|j| (j.start_s, j.end_s, j.runtime_s)).collect();
        assert_eq!(times, vec![(0.0, 1.0, 1.0), (1.0, 2.0, 1.0)]);
    }

    #[test]
    fn a_program_lowers_to_its_phases_on_every_rank() {
        let program = Program {
            iterations: 2,
            phases: vec![Phase::Compute { seconds: 1.0 }, Phase::Exchange { bytes: 10.0, neighbors: 2 }, Phase::Allreduce { bytes: 8.0 }],
        };
        let t = program_trace(&program, 3).unwrap();
        assert_eq!(t.n_ranks(), 3);
        // compute, 2 × (isend, irecv), waitall, allreduce: 7 ops, twice.
        assert_eq!(t.spec.ranks[0].len(), 14);
        assert!(matches!(t.spec.ranks[1][1], OpSpec::Isend { dst: 2, .. }));
        assert!(matches!(t.spec.ranks[1][2], OpSpec::Irecv { src: Peer::Rank(0), .. }));
    }
}
