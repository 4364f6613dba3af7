//! Jobs that share a platform: several traces replayed in one engine, each job's ranks from the
//! job's start time on the hosts it was given, so that their messages share links and NICs as
//! concurrent jobs' do on a real cluster (what SimGrid's `replay_multiple` example runs). Each
//! job keeps its own communicators ([`Trace::union`]): nothing of one job matches another's.

use crate::error::{Error, ErrorKind, Result};
use crate::mpi::placement::Placement;
use crate::mpi::replay::{simulate_held, Observer, SimOptions, SimResult};
use crate::mpi::trace::Trace;
use crate::network::platform::Platform;

/// One job to run: its trace, when its ranks start (s), and the host of each rank (indices
/// into the platform's hosts).
#[derive(Debug, Clone)]
pub struct JobRun {
    pub trace: Trace,
    pub start: f64,
    pub hosts: Vec<usize>,
}

/// When a job ran: its start, its end (its last rank's) and each rank's end (s).
#[derive(Debug, Clone, PartialEq)]
pub struct JobEnd {
    pub start: f64,
    pub end: f64,
    pub rank_ends: Vec<f64>,
}

/// Replay `jobs` together on `platform` under `options` (model, parameters, collectives,
/// SMPI; the placement is the jobs' hosts, so `options.placement` must stay explicit with no
/// hostfile). Returns each job's times, in the order given, and the whole replay's result
/// (its ranks are the jobs' ranks one job after another).
pub fn simulate_jobs(platform: &Platform, jobs: Vec<JobRun>, options: &SimOptions, observer: &mut dyn Observer) -> Result<(Vec<JobEnd>, SimResult)> {
    if options.placement != Placement::Explicit || options.hostfile.is_some() {
        return Err(Error::new(ErrorKind::Options, "placement", "each job lists its hosts: no placement or hostfile applies"));
    }
    if jobs.is_empty() {
        return Err(Error::new(ErrorKind::Options, "jobs", "no job to run"));
    }
    let mut starts = Vec::new();
    let mut placement = Vec::new();
    let mut sizes = Vec::with_capacity(jobs.len());
    let mut traces = Vec::with_capacity(jobs.len());
    for (j, job) in jobs.into_iter().enumerate() {
        if !(job.start.is_finite() && job.start >= 0.0) {
            return Err(Error::new(ErrorKind::Options, format!("jobs[{j}].start"), format!("must be a time >= 0 s, got {}", job.start)));
        }
        let n = job.trace.n_ranks();
        if job.hosts.len() != n {
            return Err(Error::new(ErrorKind::Options, format!("jobs[{j}].hosts"), format!("lists {} hosts for {n} ranks", job.hosts.len())));
        }
        if let Some(&h) = job.hosts.iter().find(|&&h| h >= platform.hosts.len()) {
            return Err(Error::new(
                ErrorKind::Options,
                format!("jobs[{j}].hosts"),
                format!("host index {h} out of range (the platform has {} hosts)", platform.hosts.len()),
            ));
        }
        starts.extend(std::iter::repeat_n(job.start, n));
        placement.extend(job.hosts);
        sizes.push((job.start, n));
        traces.push(job.trace);
    }
    let union = Trace::union(traces)?;
    let result = simulate_held(platform, &union, options, observer, &starts, placement)?;
    let mut ends = Vec::with_capacity(sizes.len());
    let mut first = 0;
    for (start, n) in sizes {
        let rank_ends: Vec<f64> = result.ranks[first..first + n].iter().map(|r| r.end).collect();
        let end = rank_ends.iter().copied().fold(start, f64::max);
        ends.push(JobEnd { start, end, rank_ends });
        first += n;
    }
    Ok((ends, result))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpi::replay::{simulate, NoObserver};

    fn platform(json: &str) -> Platform {
        crate::mpi::platform_file::load_json(json).unwrap()
    }

    /// Rank 0 sends `bytes` to rank 1.
    fn pair(bytes: f64) -> Trace {
        Trace::from_json(&format!(
            r#"{{"ranks": [[{{"op": "send", "dst": 1, "bytes": {bytes}}}], [{{"op": "recv", "src": 0}}]]}}"#
        ))
        .unwrap()
    }

    const STAR: &str = r#"{"cluster": {"count": 4, "speed": 1e9}, "network": {"bandwidth": 1e8, "latency": 1e-5, "eager_threshold": 0}}"#;

    #[test]
    fn a_job_alone_replays_as_its_trace_does_shifted_by_its_start() {
        let p = platform(STAR);
        let alone = simulate(&p, &pair(1e6), &SimOptions::default()).unwrap();
        let (ends, _) = simulate_jobs(&p, vec![JobRun { trace: pair(1e6), start: 2.5, hosts: vec![0, 1] }], &SimOptions::default(), &mut NoObserver).unwrap();
        assert_eq!(ends[0].start, 2.5);
        assert!((ends[0].end - 2.5 - alone.makespan).abs() < 1e-12, "{} vs {}", ends[0].end, alone.makespan);
    }

    #[test]
    fn two_jobs_into_one_host_share_its_nic_and_disjoint_jobs_do_not() {
        let p = platform(STAR);
        let one = |hosts: [usize; 2], start: f64| JobRun { trace: pair(1e6), start, hosts: hosts.to_vec() };
        // Both send into host 1 at once: its down-link is shared, each gets half.
        let (shared, _) = simulate_jobs(&p, vec![one([0, 1], 0.0), one([2, 1], 0.0)], &SimOptions::default(), &mut NoObserver).unwrap();
        let (apart, _) = simulate_jobs(&p, vec![one([0, 1], 0.0), one([2, 3], 0.0)], &SimOptions::default(), &mut NoObserver).unwrap();
        let alone = 1e-5 + 1e6 / 1e8;
        for e in &apart {
            assert!((e.end - alone).abs() < 1e-12);
        }
        for e in &shared {
            assert!((e.end - (1e-5 + 2e6 / 1e8)).abs() < 1e-12, "{}", e.end);
        }
        // Started apart in time, they do not meet.
        let (later, _) = simulate_jobs(&p, vec![one([0, 1], 0.0), one([2, 1], 1.0)], &SimOptions::default(), &mut NoObserver).unwrap();
        assert!((later[1].end - 1.0 - alone).abs() < 1e-12);
    }

    #[test]
    fn bad_jobs_are_named() {
        let p = platform(STAR);
        let err = |jobs: Vec<JobRun>| simulate_jobs(&p, jobs, &SimOptions::default(), &mut NoObserver).unwrap_err();
        let e = err(vec![JobRun { trace: pair(1.0), start: -1.0, hosts: vec![0, 1] }]);
        assert_eq!(e.field, "jobs[0].start");
        let e = err(vec![JobRun { trace: pair(1.0), start: 0.0, hosts: vec![0, 1] }, JobRun { trace: pair(1.0), start: 0.0, hosts: vec![0] }]);
        assert_eq!(e.field, "jobs[1].hosts");
        let e = err(vec![JobRun { trace: pair(1.0), start: f64::NAN, hosts: vec![0, 9] }]);
        assert_eq!(e.field, "jobs[0].start");
        let e = err(vec![JobRun { trace: pair(1.0), start: 0.0, hosts: vec![0, 9] }]);
        assert!(e.reason.contains("out of range"), "{}", e.reason);
        assert_eq!(err(Vec::new()).field, "jobs");
    }
}
