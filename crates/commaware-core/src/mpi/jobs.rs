//! Jobs that share a platform: several traces replayed in one engine, each job's ranks from the
//! job's start time on the hosts it was given, so that their messages share links and NICs as
//! concurrent jobs' do on a real cluster (what SimGrid's `replay_multiple` example runs). Each
//! job keeps its own communicators ([`Trace::append`]): nothing of one job matches another's.
//!
//! [`Fabric`] is the engine a scheduler drives: it starts a job when told, runs until a time
//! or until jobs end, and forgets a job's program once it ended (memory follows the jobs
//! running). [`simulate_jobs`] runs a list of jobs with known starts on it.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::error::{Error, ErrorKind, Result};
use crate::engine::link_stats::LinkReport;
use crate::mpi::placement::Placement;
use crate::mpi::replay::{Observer, Replay, SimOptions};
use crate::mpi::trace::Trace;
use crate::network::platform::{Host, Platform};
use crate::network::sharing::LinkId;

/// One job to run: its trace, when its ranks start (s), and the host of each rank (indices
/// into the platform's hosts).
#[derive(Debug, Clone)]
pub struct JobRun {
    pub trace: Trace,
    pub start: f64,
    pub hosts: Vec<usize>,
}

/// When a job ran: its start, its end (its last rank's) and each rank's end (s), the payload
/// bytes its messages moved and how many messages, and whether it ran as alone
/// ([`Ended::isolated`]).
#[derive(Debug, Clone, PartialEq)]
pub struct JobEnd {
    pub start: f64,
    pub end: f64,
    pub rank_ends: Vec<f64>,
    pub bytes: f64,
    pub messages: u64,
    pub isolated: bool,
}

/// A job the fabric saw end: its number (start order), its start and each rank's end (s),
/// the payload bytes its messages moved and how many messages, and whether it ran as it runs
/// alone (no message of it in flight while another job's was, and no compute-rate hook:
/// its runtime is then its time alone, up to the clock's rounding).
#[derive(Debug, Clone, PartialEq)]
pub struct Ended {
    pub job: u32,
    pub start: f64,
    pub rank_ends: Vec<f64>,
    pub bytes: f64,
    pub messages: u64,
    pub isolated: bool,
}

impl Ended {
    /// Its runtime: from its start to its last rank's end (s).
    pub fn runtime(&self) -> f64 {
        self.rank_ends.iter().copied().fold(self.start, f64::max) - self.start
    }
}

/// Two jobs that ran at the same time and whose messages crossed the same links (issue 41's
/// interference table): jobs `a` (the one that ended first) and `b` (fabric job numbers, or
/// what the caller maps them to), how many links both used, and the payload bytes each job's
/// messages carried over those links in its whole run (a message's bytes count on every link
/// of its route).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Interference {
    #[serde(rename = "job_a")]
    pub a: u64,
    #[serde(rename = "job_b")]
    pub b: u64,
    pub links: u32,
    pub bytes_a: f64,
    pub bytes_b: f64,
}

/// A job that ended while a job that overlapped it still runs: its bytes per link.
struct Retired {
    job: u32,
    end: f64,
    links: HashMap<LinkId, f64>,
}

/// The interference table as jobs end: the pairs found, the ended jobs still needed, and the
/// starts of the jobs running (as bits: positive times order as their bits do), counted.
#[derive(Default)]
struct InterferenceBook {
    pairs: Vec<Interference>,
    retired: Vec<Retired>,
    running: BTreeMap<u64, u32>,
}

impl InterferenceBook {
    fn started(&mut self, at: f64) {
        *self.running.entry(at.to_bits()).or_insert(0) += 1;
    }

    /// Job `job` (started at `start`) ended at `end` having carried `links`: pair it with
    /// every ended job it overlapped in time on the links both used.
    fn ended(&mut self, job: u32, start: f64, end: f64, links: HashMap<LinkId, f64>) {
        if let Some(n) = self.running.get_mut(&start.to_bits()) {
            *n -= 1;
            if *n == 0 {
                self.running.remove(&start.to_bits());
            }
        }
        for r in self.retired.iter().filter(|r| r.end > start) {
            let (small, large) = if r.links.len() <= links.len() { (&r.links, &links) } else { (&links, &r.links) };
            let (mut shared, mut bytes_small, mut bytes_large) = (0u32, 0.0, 0.0);
            for (l, &b) in small {
                if let Some(&other) = large.get(l) {
                    shared += 1;
                    bytes_small += b;
                    bytes_large += other;
                }
            }
            if shared > 0 {
                let (bytes_a, bytes_b) = if std::ptr::eq(small, &r.links) { (bytes_small, bytes_large) } else { (bytes_large, bytes_small) };
                self.pairs.push(Interference { a: r.job.into(), b: job.into(), links: shared, bytes_a, bytes_b });
            }
        }
        self.retired.push(Retired { job, end, links });
        // An ended job matters only to the jobs that started before its end and still run.
        let first = self.running.keys().next().map_or(f64::INFINITY, |&bits| f64::from_bits(bits));
        self.retired.retain(|r| r.end > first);
    }
}

/// What [`Fabric::start`] does with a job that would put more ranks on a host than its cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Oversubscribe {
    /// Refuse it: each rank has a core of its own, as in one trace's replay.
    Refuse,
    /// Start it, every rank at full speed: commaware does not time-share a core (SimGrid
    /// does). For replayed schedules, where a job the network stretched meets the next one.
    Allow,
}

/// The platform's network and hosts as jobs start and end on them: one engine for every job.
pub struct Fabric<'a> {
    replay: Replay<'a, 'a>,
    hosts: &'a [Host],
    /// Each host's ranks of the jobs running now.
    busy: Vec<usize>,
    /// Each job's hosts until it ends (then emptied).
    job_hosts: Vec<Vec<usize>>,
    oversubscribe: Oversubscribe,
    /// Each job's start (s).
    starts: Vec<f64>,
    interference: Option<InterferenceBook>,
}

impl<'a> Fabric<'a> {
    /// An idle fabric of `platform` (with `options.smpi` applied already:
    /// [`crate::mpi::replay::with_platform_options`]) under `options`' model, parameters and
    /// collectives (no placement or hostfile: each job brings its hosts).
    pub fn new(platform: &'a Platform, options: &SimOptions, observer: &'a mut dyn Observer) -> Result<Self> {
        if options.placement != Placement::Explicit || options.hostfile.is_some() {
            return Err(Error::new(ErrorKind::Options, "placement", "each job lists its hosts: no placement or hostfile applies"));
        }
        let replay = Replay::for_jobs(platform, options, observer)?;
        let busy = vec![0; platform.hosts.len()];
        Ok(Fabric {
            replay,
            hosts: &platform.hosts,
            busy,
            job_hosts: Vec::new(),
            oversubscribe: Oversubscribe::Refuse,
            starts: Vec::new(),
            interference: None,
        })
    }

    /// This fabric keeping the interference table ([`Interference`]; each running job's
    /// bytes per link, and the ended jobs that overlapped a running one).
    pub fn track_interference(mut self) -> Self {
        self.replay.track_job_links();
        self.interference = Some(InterferenceBook::default());
        self
    }

    /// Per-link statistics until now, when `options.link_stats` asked for them; taken.
    pub fn take_link_report(&mut self) -> Option<LinkReport> {
        let names: Vec<String> = self.hosts.iter().map(|h| h.name.clone()).collect();
        self.replay.link_report(&names)
    }

    /// The interference table of the jobs ended so far (empty unless
    /// [`Fabric::track_interference`]), in the order the pairs were found; taken.
    pub fn take_interference(&mut self) -> Vec<Interference> {
        self.interference.as_mut().map(|b| std::mem::take(&mut b.pairs)).unwrap_or_default()
    }

    /// This fabric with `rule` for hosts more ranks than cores would run on ([`Oversubscribe`]).
    pub fn oversubscribe(mut self, rule: Oversubscribe) -> Self {
        self.oversubscribe = rule;
        self
    }

    /// Simulated time (s).
    pub fn now(&self) -> f64 {
        self.replay.now()
    }

    /// Start `trace` now, rank i on host `hosts[i]`; the job's number (0, 1, ... in start
    /// order). `field` names the job in errors. Unless [`Fabric::oversubscribe`] allows it, a
    /// host whose cores the jobs running there fill takes no more ranks.
    pub fn start(&mut self, trace: Trace, hosts: &[usize], field: &str) -> Result<u32> {
        let n = trace.n_ranks();
        let bad = |reason: String| Error::new(ErrorKind::Options, format!("{field}.hosts"), reason);
        if hosts.len() != n {
            return Err(bad(format!("lists {} hosts for {n} ranks", hosts.len())));
        }
        if let Some(&h) = hosts.iter().find(|&&h| h >= self.hosts.len()) {
            return Err(bad(format!("host index {h} out of range (the platform has {} hosts)", self.hosts.len())));
        }
        for &h in hosts {
            self.busy[h] += 1;
        }
        let over = hosts.iter().find(|&&h| self.busy[h] > self.hosts[h].cores);
        if let (Some(&h), Oversubscribe::Refuse) = (over, self.oversubscribe) {
            let wanted = self.busy[h];
            for &h in hosts {
                self.busy[h] -= 1;
            }
            return Err(bad(format!(
                "host `{}` would run {wanted} ranks at {} s but has {} cores (each rank has a core of its own; \
                 SimGrid would time-share them, which commaware does not model)",
                self.hosts[h].name,
                self.now(),
                self.hosts[h].cores
            )));
        }
        let job = self.replay.add_job(trace, hosts)?;
        self.job_hosts.push(hosts.to_vec());
        let now = self.now();
        self.starts.push(now);
        if let Some(book) = &mut self.interference {
            book.started(now);
        }
        Ok(job)
    }

    /// Engine steps so far.
    pub fn events(&self) -> u64 {
        self.replay.events()
    }

    /// Run until simulated time `limit` (s; infinity for no limit) or until jobs end; the jobs
    /// that ended at [`Fabric::now`] with each rank's end, in job order; none when the limit
    /// came first or nothing runs. An ended job's program is forgotten. Without a limit, jobs
    /// still running that no end reaches are a deadlock: the error names their blocked ranks.
    pub fn run_until(&mut self, limit: f64) -> Result<Vec<Ended>> {
        let mut ended = self.replay.run_until(limit)?;
        if ended.is_empty() && limit == f64::INFINITY {
            self.replay.check_finished()?;
        }
        ended.sort_unstable();
        Ok(ended
            .into_iter()
            .map(|job| {
                for h in std::mem::take(&mut self.job_hosts[job as usize]) {
                    self.busy[h] -= 1;
                }
                if let Some(book) = &mut self.interference {
                    let links = self.replay.job_link_bytes(job);
                    book.ended(job, self.starts[job as usize], self.replay.now(), links);
                }
                let isolated = self.replay.job_isolated(job);
                let (rank_ends, bytes, messages) = self.replay.finish_job(job);
                Ended { job, start: self.starts[job as usize], rank_ends, bytes, messages, isolated }
            })
            .collect())
    }
}

/// Replay `jobs` together on `platform` under `options` (model, parameters, collectives,
/// SMPI; the placement is the jobs' hosts, so `options.placement` must stay explicit with no
/// hostfile), each from its start; a job that would put more ranks on a host than its cores
/// is an error. Returns each job's times, in the order given, and the engine's steps.
pub fn simulate_jobs(platform: &Platform, jobs: Vec<JobRun>, options: &SimOptions, observer: &mut dyn Observer) -> Result<(Vec<JobEnd>, u64)> {
    let (starts, hosts): (Vec<f64>, Vec<Vec<usize>>) = jobs.iter().map(|j| (j.start, j.hosts.clone())).unzip();
    let mut traces: Vec<Option<Trace>> = jobs.into_iter().map(|j| Some(j.trace)).collect();
    let mut trace_of = |j: usize| Ok(traces[j].take().expect("each job starts once"));
    let platform = &*crate::mpi::replay::with_platform_options(platform, options)?;
    let mut fabric = Fabric::new(platform, options, observer)?;
    let (ends, _) = run_jobs(&mut fabric, &starts, &hosts, &mut trace_of)?;
    Ok((ends, fabric.events()))
}

/// [`simulate_jobs`] on `fabric` (a new one, with the settings the caller wants), with job
/// j's trace made by `trace_of(j)` when the job starts (and dropped when it ends: memory
/// follows the jobs running), `starts[j]` and `hosts[j]` given. Each job's times, in the
/// order given, and the interference table with jobs by that order (empty unless the fabric
/// keeps it).
pub fn run_jobs(
    fabric: &mut Fabric<'_>,
    starts: &[f64],
    hosts: &[Vec<usize>],
    trace_of: &mut dyn FnMut(usize) -> Result<Trace>,
) -> Result<(Vec<JobEnd>, Vec<Interference>)> {
    if starts.is_empty() {
        return Err(Error::new(ErrorKind::Options, "jobs", "no job to run"));
    }
    for (j, &start) in starts.iter().enumerate() {
        if !(start.is_finite() && start >= 0.0) {
            return Err(Error::new(ErrorKind::Options, format!("jobs[{j}].start"), format!("must be a time >= 0 s, got {start}")));
        }
    }
    // In start order (ties: as given); the fabric numbers jobs in that order.
    let mut order: Vec<usize> = (0..starts.len()).collect();
    order.sort_by(|&a, &b| starts[a].total_cmp(&starts[b]).then(a.cmp(&b)));
    let mut ends: Vec<Option<JobEnd>> = vec![None; starts.len()];
    let mut next = 0;
    let mut running = 0;
    while next < order.len() || running > 0 {
        let limit = order.get(next).map_or(f64::INFINITY, |&j| starts[j]);
        for Ended { job, rank_ends, bytes, messages, isolated, .. } in fabric.run_until(limit)? {
            let j = order[job as usize];
            let end = rank_ends.iter().copied().fold(starts[j], f64::max);
            ends[j] = Some(JobEnd { start: starts[j], end, rank_ends, bytes, messages, isolated });
            running -= 1;
        }
        while next < order.len() && starts[order[next]] <= fabric.now() {
            let j = order[next];
            fabric.start(trace_of(j)?, &hosts[j], &format!("jobs[{j}]"))?;
            next += 1;
            running += 1;
        }
    }
    let mut table = fabric.take_interference();
    for pair in &mut table {
        (pair.a, pair.b) = (order[pair.a as usize] as u64, order[pair.b as usize] as u64);
    }
    Ok((ends.into_iter().map(|e| e.expect("every job ended")).collect(), table))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpi::replay::{simulate, NoObserver};
    use crate::error::ErrorKind;

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

    const STAR: &str = r#"{"cluster": {"count": 4, "speed": 1e9, "cores": 2}, "network": {"bandwidth": 1e8, "latency": 1e-5, "eager_threshold": 0}}"#;

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
    fn the_interference_table_pairs_jobs_that_overlapped_on_links_both_used() {
        let p = platform(STAR);
        let mut observer = NoObserver;
        let mut fabric = Fabric::new(&p, &SimOptions::default(), &mut observer).unwrap().track_interference();
        // a: 0 -> 1 (1 MB), b: 2 -> 1 (3 MB) at once: both cross host 1's down-link only.
        fabric.start(pair(1e6), &[0, 1], "a").unwrap();
        fabric.start(pair(3e6), &[2, 1], "b").unwrap();
        // c: 2 -> 3 from when a ends: it overlaps b on host 2's up-link; d: 0 -> 1 once all
        // ended, alone.
        let ended = fabric.run_until(f64::INFINITY).unwrap();
        assert_eq!(ended[0].job, 0);
        fabric.start(pair(2e6), &[2, 3], "c").unwrap();
        while !fabric.run_until(f64::INFINITY).unwrap().is_empty() {}
        fabric.start(pair(1e6), &[0, 1], "d").unwrap();
        while !fabric.run_until(f64::INFINITY).unwrap().is_empty() {}
        let table = fabric.take_interference();
        assert_eq!(table, vec![
            Interference { a: 0, b: 1, links: 1, bytes_a: 1e6, bytes_b: 3e6 },
            Interference { a: 1, b: 2, links: 1, bytes_a: 3e6, bytes_b: 2e6 },
        ]);
        // Retired jobs go once no running job overlaps them.
        assert!(fabric.interference.as_ref().unwrap().retired.is_empty());
    }

    #[test]
    fn a_job_that_deadlocks_is_an_error_naming_its_blocked_rank() {
        let p = platform(STAR);
        let stuck = Trace::from_json(r#"{"ranks": [[{"op": "recv", "src": 1}], [{"op": "recv", "src": 0}]]}"#).unwrap();
        let e = simulate_jobs(&p, vec![JobRun { trace: pair(1e6), start: 0.0, hosts: vec![0, 1] }, JobRun { trace: stuck, start: 1.0, hosts: vec![2, 3] }], &SimOptions::default(), &mut NoObserver)
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Deadlock);
        assert!(e.reason.contains("rank 2 blocked"), "{}", e.reason);
    }

    #[test]
    fn a_fabric_reports_each_end_when_it_happens_and_idles_until_a_limit() {
        let p = platform(STAR);
        let mut observer = NoObserver;
        let mut fabric = Fabric::new(&p, &SimOptions::default(), &mut observer).unwrap();
        fabric.start(pair(1e6), &[0, 1], "a").unwrap();
        fabric.start(pair(3e6), &[2, 3], "b").unwrap();
        // Nothing ends by 0.005 s: the clock stops there.
        assert!(fabric.run_until(0.005).unwrap().is_empty());
        assert_eq!(fabric.now(), 0.005);
        let first = fabric.run_until(f64::INFINITY).unwrap();
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].job, 0);
        assert_eq!(first[0].bytes, 1e6);
        assert!((fabric.now() - (1e-5 + 1e6 / 1e8)).abs() < 1e-12);
        // A job started now, on the hosts job a left.
        fabric.start(pair(1e6), &[0, 1], "c").unwrap();
        let second = fabric.run_until(f64::INFINITY).unwrap();
        assert_eq!(second.iter().map(|e| e.job).collect::<Vec<_>>(), vec![2]);
        assert!((fabric.now() - 2.0 * (1e-5 + 1e6 / 1e8)).abs() < 1e-12);
        let third = fabric.run_until(f64::INFINITY).unwrap();
        assert_eq!((third[0].job, third[0].bytes), (1, 3e6));
        assert!((fabric.now() - (1e-5 + 3e6 / 1e8)).abs() < 1e-12);
        assert!(fabric.run_until(f64::INFINITY).unwrap().is_empty());
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
        // Two cores a host: a third rank on host 1 while two run there is refused; after they
        // ended it is not.
        let e = err(vec![
            JobRun { trace: pair(1.0), start: 0.0, hosts: vec![1, 1] },
            JobRun { trace: pair(1.0), start: 0.0, hosts: vec![0, 1] },
        ]);
        assert_eq!(e.field, "jobs[1].hosts");
        assert!(e.reason.contains("host `n1` would run 3 ranks") && e.reason.contains("has 2 cores"), "{}", e.reason);
        let (ends, _) = simulate_jobs(&p, vec![
            JobRun { trace: pair(1.0), start: 0.0, hosts: vec![1, 1] },
            JobRun { trace: pair(1.0), start: 1.0, hosts: vec![0, 1] },
        ], &SimOptions::default(), &mut NoObserver).unwrap();
        assert_eq!(ends.len(), 2);
        assert_eq!(err(Vec::new()).field, "jobs");
    }
}
