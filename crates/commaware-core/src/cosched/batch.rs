//! Space-sharing batch scheduling of rigid jobs on a cluster of `processors` processors
//! (paper 002's PBS baseline, and the two classic backfilling variants).
//!
//! - `batch`: FCFS at multiprogramming level 1: queued jobs start in submit order, and
//!   the queue waits while its head does not fit.
//! - `batch-easy`: EASY backfilling (Lifka 1995). Queued jobs start in order while the
//!   head fits. The head that does not fit gets a reservation at the *shadow time*, the
//!   earliest moment enough processors are free if every running job ends at its requested
//!   end; the processors free then beyond the head's need are the *extra* processors. A
//!   later job that fits now is backfilled if it ends (by its requested time) by the
//!   shadow time, or else if it needs no more than the extra processors, which it then
//!   uses up: two backfilled jobs can never jointly delay the head.
//! - `batch-conservative`: conservative backfilling (Mu'alem and Feitelson 2001). Every
//!   queued job holds a reservation in a free-processor profile: the earliest time it fits
//!   for its requested time given the running jobs and the reservations made before it. A
//!   job starts when its reservation is now. At each scheduling instant the profile is
//!   rebuilt, re-placing jobs in the order of their previous reservations (new jobs last,
//!   in queue order): each job's old slot is still free then, so a reservation only ever
//!   moves earlier, and backfilling delays no job beyond the reservation it got on arrival.
//!
//! Event semantics (paper 002 notes): at each instant all job ends are applied, then all
//! arrivals (by submit time, then id), then one scheduling pass. Reservations use the
//! requested times; a job that runs past its requested time is not killed, and while it
//! overruns, it is expected to end at the current instant. Batch allocation is by
//! processor count (as PBS's packing on 1-CPU nodes, and the SWF model: no fragmentation).
//! A job needing more processors than the cluster has is skipped and counted.

use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeSet, BinaryHeap, VecDeque};

use serde::Serialize;

use crate::error::{Error, ErrorKind, Result};

use super::workload::{Job, Skipped, MAX_PROCS};

/// Bounded slowdown threshold τ, s: max(1, response / max(runtime, τ)) (paper 002 issue, §8).
pub const BSLD_TAU_S: f64 = 10.0;

/// The space-sharing policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Fcfs,
    Easy,
    Conservative,
    /// No scheduler: each job starts when and where the workload says (`start_s`, `hosts`),
    /// replaying a schedule a real cluster ran; only on a platform ([`super::fabric`]).
    Explicit,
}

impl Policy {
    pub const NAMES: &'static [&'static str] = &["batch", "batch-easy", "batch-conservative"];
    pub const ALL: [Policy; 3] = [Policy::Fcfs, Policy::Easy, Policy::Conservative];

    pub fn from_name(name: &str) -> Result<Policy> {
        match Self::NAMES.iter().position(|n| *n == name) {
            Some(k) => Ok(Self::ALL[k]),
            None => Err(Error::new(
                ErrorKind::Options,
                "policy",
                format!("unknown policy `{name}` (known: {})", Self::NAMES.join(", ")),
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Policy::Fcfs => "batch",
            Policy::Easy => "batch-easy",
            Policy::Conservative => "batch-conservative",
            Policy::Explicit => "explicit",
        }
    }
}

/// What the batch simulator needs of a job.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchJob {
    pub id: u64,
    pub submit: f64,
    pub procs: u64,
    pub runtime: f64,
    pub requested: f64,
}

impl From<&Job> for BatchJob {
    fn from(j: &Job) -> Self {
        BatchJob { id: j.id, submit: j.submit_s, procs: j.procs, runtime: j.runtime_s, requested: j.requested() }
    }
}

/// One scheduled job.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct JobRecord {
    pub id: u64,
    pub submit_s: f64,
    pub procs: u64,
    pub runtime_s: f64,
    pub requested_s: f64,
    pub start_s: f64,
    pub end_s: f64,
    /// The first reservation the job got (EASY: its shadow time when it first headed the
    /// queue and did not fit; conservative: its reservation on arrival); NaN when none.
    pub reserved_s: f64,
}

impl JobRecord {
    pub fn wait(&self) -> f64 {
        self.start_s - self.submit_s
    }
    pub fn response(&self) -> f64 {
        self.end_s - self.submit_s
    }
    pub fn bounded_slowdown(&self) -> f64 {
        (self.response() / (self.end_s - self.start_s).max(BSLD_TAU_S)).max(1.0)
    }
}

/// Idle power of a node, W (paper 002 §5.4).
pub const IDLE_POWER_W: f64 = 219.10;
/// Extra power of a busy node, W: §5.4 gives 18.839 W in the text and 18.968 W beside the
/// formula; the formula's value is used (the notes' choice).
pub const BUSY_POWER_W: f64 = 18.968;

/// Averages over the scheduled jobs, node utilisation and energy (§5.4: E = (B + X·U)·N·T,
/// idle part B·N·T, busy part X·U·N·T, T from the first arrival to the last completion).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    pub jobs: u64,
    pub avg_wait_s: f64,
    pub avg_response_s: f64,
    pub avg_exec_s: f64,
    pub avg_bounded_slowdown: f64,
    pub max_wait_s: f64,
    /// From the first arrival to the last completion, s.
    pub total_time_s: f64,
    /// Busy processor-seconds over processors × total time (time-sharing: spinning and
    /// switching count as busy).
    pub utilization: f64,
    /// X·U·N·T, J.
    pub energy_busy_j: f64,
    /// B·N·T, J.
    pub energy_idle_j: f64,
    /// Their sum, J.
    pub energy_j: f64,
}

/// The summary of `jobs` on `processors` single-CPU nodes that were busy `busy_s`
/// node-seconds in all.
pub fn summarize(jobs: &[JobRecord], processors: u64, busy_s: f64) -> Summary {
    let n = jobs.len();
    let mut s = Summary {
        jobs: n as u64,
        avg_wait_s: 0.0,
        avg_response_s: 0.0,
        avg_exec_s: 0.0,
        avg_bounded_slowdown: 0.0,
        max_wait_s: 0.0,
        total_time_s: 0.0,
        utilization: 0.0,
        energy_busy_j: 0.0,
        energy_idle_j: 0.0,
        energy_j: 0.0,
    };
    if n == 0 {
        return s;
    }
    let (mut first, mut last) = (f64::INFINITY, f64::NEG_INFINITY);
    for j in jobs {
        s.avg_wait_s += j.wait();
        s.avg_response_s += j.response();
        s.avg_exec_s += j.end_s - j.start_s;
        s.avg_bounded_slowdown += j.bounded_slowdown();
        s.max_wait_s = s.max_wait_s.max(j.wait());
        first = first.min(j.submit_s);
        last = last.max(j.end_s);
    }
    let k = n as f64;
    s.avg_wait_s /= k;
    s.avg_response_s /= k;
    s.avg_exec_s /= k;
    s.avg_bounded_slowdown /= k;
    s.total_time_s = last - first;
    let nodes = processors as f64;
    if s.total_time_s > 0.0 {
        s.utilization = busy_s / (nodes * s.total_time_s);
    }
    s.energy_idle_j = IDLE_POWER_W * nodes * s.total_time_s;
    s.energy_busy_j = BUSY_POWER_W * s.utilization * nodes * s.total_time_s;
    s.energy_j = s.energy_idle_j + s.energy_busy_j;
    s
}

/// What a job did on a platform ([`super::fabric`]), beside its times.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FabricJob {
    /// Payload bytes its messages moved, and how many messages.
    pub bytes: f64,
    pub messages: u64,
    /// Its time alone: the same trace on the same hosts of an otherwise empty platform, s; NaN
    /// when not asked for.
    pub alone_s: f64,
    /// The platform hosts its ranks ran on (indices, each once, ascending).
    pub hosts: Vec<u32>,
}

impl FabricJob {
    /// Runtime over time alone (NaN without `alone_s`; 1 for a job of no time alone).
    pub fn slowdown(&self, runtime_s: f64) -> f64 {
        if self.alone_s > 0.0 {
            runtime_s / self.alone_s
        } else if self.alone_s == 0.0 {
            1.0
        } else {
            f64::NAN
        }
    }
}

/// The outcome of one batch run.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchResult {
    pub policy: Policy,
    pub processors: u64,
    /// Scheduled jobs in queue order (submit time, then id).
    pub jobs: Vec<JobRecord>,
    pub skipped: Skipped,
    /// Scheduling passes made.
    pub passes: u64,
    /// On a platform ([`super::fabric`]), what each job did there, in `jobs` order; empty
    /// otherwise.
    pub fabric: Vec<FabricJob>,
    /// On a platform, when asked for: the pairs of jobs (by id) that overlapped in time on
    /// links both used.
    pub interference: Option<Vec<crate::mpi::jobs::Interference>>,
    /// On a platform, when asked for: each link's statistics.
    pub links: Option<crate::engine::link_stats::LinkReport>,
}

impl BatchResult {
    pub fn summary(&self) -> Summary {
        let area: f64 = self.jobs.iter().map(|j| (j.end_s - j.start_s) * j.procs as f64).sum();
        summarize(&self.jobs, self.processors, area)
    }

    /// The `--json` document: policy, processors, the summary, `skipped` and every job; on a
    /// platform also `avg_slowdown` (runtime over time alone, over the jobs), `bytes` and
    /// `messages` (all jobs'), and per job `alone_s`, `slowdown`, `bytes`, `messages` and
    /// `hosts` (host indices as an interval set, `0-3 7`).
    pub fn to_json(&self) -> String {
        let mut head = serde_json::json!({"policy": self.policy.name(), "allocation": "packing", "mpl": 1});
        if !self.fabric.is_empty() {
            let slowdowns: Vec<f64> = self.jobs.iter().zip(&self.fabric).map(|(j, f)| f.slowdown(j.runtime_s)).collect();
            let avg = slowdowns.iter().sum::<f64>() / slowdowns.len().max(1) as f64;
            head["avg_slowdown"] = if avg.is_finite() { avg.into() } else { serde_json::Value::Null };
            head["bytes"] = self.fabric.iter().map(|f| f.bytes).sum::<f64>().into();
            head["messages"] = self.fabric.iter().map(|f| f.messages).sum::<u64>().into();
        }
        if let Some(pairs) = &self.interference {
            head["interference"] = serde_json::to_value(pairs).unwrap_or_default();
        }
        run_json(head, self.processors, &self.summary(), &self.skipped, &self.jobs, &self.fabric)
    }
}

/// The `--json` document of any run: `head` (policy, allocation, mpl, ...), `processors`
/// and `nodes` (1-CPU nodes: the same number), the summary's fields, `skipped`, τ, and
/// per job `id`, `submit_s`, `procs`, `start_s`, `end_s`, `wait_s`, `exec_s`, `response_s`,
/// `bounded_slowdown`, `reserved_s` (null when never reserved). Every name states its unit.
pub fn run_json(
    head: serde_json::Value,
    processors: u64,
    summary: &Summary,
    skipped: &Skipped,
    jobs: &[JobRecord],
    fabric: &[FabricJob],
) -> String {
    #[derive(Serialize)]
    struct JobOut {
        id: u64,
        submit_s: f64,
        procs: u64,
        start_s: f64,
        end_s: f64,
        wait_s: f64,
        exec_s: f64,
        response_s: f64,
        bounded_slowdown: f64,
        reserved_s: Option<f64>,
        #[serde(flatten, skip_serializing_if = "Option::is_none")]
        fabric: Option<OnFabric>,
    }
    #[derive(Serialize)]
    struct OnFabric {
        alone_s: Option<f64>,
        slowdown: Option<f64>,
        bytes: f64,
        messages: u64,
        hosts: String,
    }
    let mut doc = match head {
        serde_json::Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    doc.insert("processors".into(), processors.into());
    doc.insert("nodes".into(), processors.into());
    if let Ok(serde_json::Value::Object(m)) = serde_json::to_value(summary) {
        doc.extend(m);
    }
    doc.insert("skipped".into(), serde_json::to_value(skipped).expect("counts serialise"));
    doc.insert("bounded_slowdown_tau_s".into(), BSLD_TAU_S.into());
    let jobs: Vec<JobOut> = jobs
        .iter()
        .enumerate()
        .map(|(k, j)| JobOut {
            id: j.id,
            submit_s: j.submit_s,
            procs: j.procs,
            start_s: j.start_s,
            end_s: j.end_s,
            wait_s: j.wait(),
            exec_s: j.end_s - j.start_s,
            response_s: j.response(),
            bounded_slowdown: j.bounded_slowdown(),
            reserved_s: (!j.reserved_s.is_nan()).then_some(j.reserved_s),
            fabric: fabric.get(k).map(|f| {
                OnFabric {
                    alone_s: (!f.alone_s.is_nan()).then_some(f.alone_s),
                    slowdown: Some(f.slowdown(j.runtime_s)).filter(|s| s.is_finite()),
                    bytes: f.bytes,
                    messages: f.messages,
                    hosts: super::interval_set(&f.hosts),
                }
            }),
        })
        .collect();
    doc.insert("jobs".into(), serde_json::to_value(jobs).expect("finite numbers serialise"));
    serde_json::to_string(&serde_json::Value::Object(doc)).expect("finite numbers serialise")
}

/// A time with a total order (times are finite: the loaders check).
#[derive(Debug, Clone, Copy, PartialEq)]
struct T(f64);
impl Eq for T {}
impl PartialOrd for T {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for T {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Free processors over time from `now` on: `free[i]` on `[time[i], time[i+1])`, the last
/// step lasting for ever. Sorted breakpoints, no per-time-unit state.
#[derive(Debug, Clone, Default)]
struct Profile {
    time: Vec<f64>,
    free: Vec<i64>,
}

impl Profile {
    /// The profile of `free_now` processors at `now`, each running job `(end, procs)`
    /// (ends ascending, each >= now) releasing its processors at its end.
    fn rebuild(&mut self, now: f64, free_now: u64, releases: impl Iterator<Item = (f64, u64)>) {
        self.time.clear();
        self.free.clear();
        self.time.push(now);
        self.free.push(free_now as i64);
        for (end, procs) in releases {
            let last = self.time.len() - 1;
            if end <= self.time[last] {
                self.free[last] += procs as i64;
            } else {
                let f = self.free[last] + procs as i64;
                self.time.push(end);
                self.free.push(f);
            }
        }
    }

    /// The earliest breakpoint at which `procs` processors are free for `duration`.
    fn earliest(&self, procs: u64, duration: f64) -> f64 {
        let p = procs as i64;
        let n = self.time.len();
        let mut i = 0;
        'outer: while i < n {
            if self.free[i] < p {
                i += 1;
                continue;
            }
            let start = self.time[i];
            let end = start + duration;
            let mut k = i + 1;
            while k < n && self.time[k] < end {
                if self.free[k] < p {
                    i = k + 1;
                    continue 'outer;
                }
                k += 1;
            }
            return start;
        }
        // The last step has every processor free, and jobs never exceed the cluster.
        self.time[n - 1]
    }

    /// Take `procs` processors on `[start, start + duration)`; `start` is a breakpoint.
    fn reserve(&mut self, start: f64, duration: f64, procs: u64) {
        if duration <= 0.0 {
            return;
        }
        let end = start + duration;
        let i = self.time.partition_point(|&t| t < start);
        let j = self.time.partition_point(|&t| t < end);
        if j == self.time.len() || self.time[j] != end {
            let f = self.free[j - 1];
            self.time.insert(j, end);
            self.free.insert(j, f);
        }
        // `end` > `start`, so inserting it did not move `start`'s index.
        debug_assert!(self.time[i] == start);
        for f in &mut self.free[i..j] {
            *f -= procs as i64;
        }
    }
}

/// What runs the jobs a batch scheduler starts, and says when they end.
pub trait Runner {
    /// Job `k` of the schedule (`index` in the caller's list) starts at `now`.
    fn launch(&mut self, k: usize, index: usize, job: &BatchJob, now: f64) -> Result<()>;
    /// The earliest end of running jobs at or before `limit` (s) and the jobs (`k`) that end
    /// then; `None` when none ends by `limit`.
    fn next_ends(&mut self, limit: f64) -> Result<Option<(f64, Vec<usize>)>>;
    /// Whether runtimes come out of the run (then a record's runtime is its end minus its
    /// start) rather than from the jobs' logged runtimes.
    fn measures(&self) -> bool {
        false
    }
}

/// Jobs that run exactly their logged runtime (rigid jobs): a heap of their ends.
#[derive(Default)]
pub struct LoggedRuntimes {
    ends: BinaryHeap<Reverse<(T, usize)>>,
}

impl Runner for LoggedRuntimes {
    fn launch(&mut self, k: usize, _index: usize, job: &BatchJob, now: f64) -> Result<()> {
        self.ends.push(Reverse((T(now + job.runtime), k)));
        Ok(())
    }

    fn next_ends(&mut self, limit: f64) -> Result<Option<(f64, Vec<usize>)>> {
        let Some(&Reverse((t, _))) = self.ends.peek() else { return Ok(None) };
        if t.0 > limit {
            return Ok(None);
        }
        let mut ended = Vec::new();
        while let Some(&Reverse((u, k))) = self.ends.peek() {
            if u.0 > t.0 {
                break;
            }
            self.ends.pop();
            ended.push(k);
        }
        Ok(Some((t.0, ended)))
    }
}

/// Schedule `jobs` on `processors` processors under `policy`.
pub fn simulate(jobs: &[BatchJob], processors: u64, policy: Policy) -> Result<BatchResult> {
    simulate_with(jobs, processors, policy, &mut LoggedRuntimes::default())
}

/// Schedule `jobs` on `processors` processors under `policy`, with `runner` running them.
pub fn simulate_with(jobs: &[BatchJob], processors: u64, policy: Policy, runner: &mut dyn Runner) -> Result<BatchResult> {
    if processors == 0 || processors > MAX_PROCS {
        return Err(Error::new(ErrorKind::Options, "processors", format!("must be in 1..=2^24, got {processors}")));
    }
    if policy == Policy::Explicit {
        return Err(Error::new(ErrorKind::Options, "policy", "explicit schedules nothing: it replays the workload's start_s and hosts on a platform"));
    }
    let mut skipped = Skipped::default();
    let mut order: Vec<usize> = Vec::with_capacity(jobs.len());
    for (i, j) in jobs.iter().enumerate() {
        if j.procs > processors {
            skipped.too_large += 1;
        } else {
            order.push(i);
        }
    }
    order.sort_by(|&a, &b| {
        let (x, y) = (&jobs[a], &jobs[b]);
        x.submit.total_cmp(&y.submit).then(x.id.cmp(&y.id)).then(a.cmp(&b))
    });
    let js: Vec<BatchJob> = order.iter().map(|&i| jobs[i]).collect();
    let mut sim = Sim::new(&js, processors, policy, &order, runner);
    sim.run()?;
    let measured = sim.runner.measures();
    let records = js
        .iter()
        .enumerate()
        .map(|(k, j)| JobRecord {
            id: j.id,
            submit_s: j.submit,
            procs: j.procs,
            runtime_s: if measured { sim.end[k] - sim.start[k] } else { j.runtime },
            requested_s: j.requested,
            start_s: sim.start[k],
            end_s: sim.end[k],
            reserved_s: sim.first_res[k],
        })
        .collect();
    Ok(BatchResult { policy, processors, jobs: records, skipped, passes: sim.passes, fabric: Vec::new(), interference: None, links: None })
}

struct Sim<'a> {
    js: &'a [BatchJob],
    /// Each job's index in the caller's list.
    index: &'a [usize],
    policy: Policy,
    free: u64,
    /// Runs the jobs started and says when they end.
    runner: &'a mut dyn Runner,
    end: Vec<f64>,
    /// Requested ends of running jobs (start + requested), ascending.
    expected: BTreeSet<(T, usize)>,
    queue: VecDeque<usize>,
    start: Vec<f64>,
    first_res: Vec<f64>,
    /// Conservative: each queued job's current reservation (NaN before its first).
    res: Vec<f64>,
    profile: Profile,
    passes: u64,
}

impl<'a> Sim<'a> {
    fn new(js: &'a [BatchJob], processors: u64, policy: Policy, index: &'a [usize], runner: &'a mut dyn Runner) -> Self {
        let n = js.len();
        Sim {
            js,
            index,
            policy,
            free: processors,
            runner,
            end: vec![f64::NAN; n],
            expected: BTreeSet::new(),
            queue: VecDeque::new(),
            start: vec![f64::NAN; n],
            first_res: vec![f64::NAN; n],
            res: if policy == Policy::Conservative { vec![f64::NAN; n] } else { Vec::new() },
            profile: Profile::default(),
            passes: 0,
        }
    }

    /// The scheduling passes, until every job ended; stops when the caller asks (`util::cancel`).
    fn run(&mut self) -> Result<()> {
        let n = self.js.len();
        let mut next = 0;
        loop {
            crate::util::cancel::check()?;
            let t_arr = (next < n).then(|| self.js[next].submit);
            let ends = self.runner.next_ends(t_arr.unwrap_or(f64::INFINITY))?;
            let now = match (&ends, t_arr) {
                (Some((t, _)), _) => *t,
                (None, Some(a)) => a,
                (None, None) => return Ok(()),
            };
            // 1. every job end at this instant
            for &j in ends.iter().flat_map(|(_, ended)| ended) {
                self.end[j] = now;
                self.free += self.js[j].procs;
                self.expected.remove(&(T(self.start[j] + self.js[j].requested), j));
            }
            // 2. every arrival at this instant, in (submit, id) order
            while next < n && self.js[next].submit <= now {
                self.queue.push_back(next);
                next += 1;
            }
            // 3. one scheduling pass
            self.passes += 1;
            match self.policy {
                Policy::Fcfs => self.fcfs(now)?,
                Policy::Easy => self.easy(now)?,
                Policy::Conservative => self.conservative(now)?,
                Policy::Explicit => {} // refused by simulate_with
            }
        }
    }

    fn launch(&mut self, j: usize, now: f64) -> Result<()> {
        let job = &self.js[j];
        debug_assert!(job.procs <= self.free);
        self.free -= job.procs;
        self.start[j] = now;
        self.runner.launch(j, self.index[j], job, now)?;
        self.expected.insert((T(now + job.requested), j));
        Ok(())
    }

    /// Start queued jobs in order while the head fits.
    fn start_heads(&mut self, now: f64) -> Result<()> {
        while let Some(&h) = self.queue.front() {
            if self.js[h].procs > self.free {
                break;
            }
            self.queue.pop_front();
            self.launch(h, now)?;
        }
        Ok(())
    }

    fn fcfs(&mut self, now: f64) -> Result<()> {
        self.start_heads(now)
    }

    fn easy(&mut self, now: f64) -> Result<()> {
        self.start_heads(now)?;
        let Some(&head) = self.queue.front() else { return Ok(()) };
        let need = self.js[head].procs;
        // Shadow time: running jobs release their processors at their requested ends (an
        // overrunning job: now), in order, until the head fits; the jobs ending at that
        // same moment release theirs too.
        let mut avail = self.free;
        let mut shadow = now;
        for &(end, j) in &self.expected {
            let end = end.0.max(now);
            if avail >= need && end > shadow {
                break;
            }
            avail += self.js[j].procs;
            shadow = end;
        }
        debug_assert!(avail >= need);
        let mut extra = avail - need;
        if self.first_res[head].is_nan() {
            self.first_res[head] = shadow;
        }
        if self.free == 0 {
            return Ok(());
        }
        let mut backfilled = false;
        for k in 1..self.queue.len() {
            if self.free == 0 {
                break;
            }
            let j = self.queue[k];
            let job = &self.js[j];
            if job.procs > self.free {
                continue;
            }
            if now + job.requested <= shadow {
                // Ends by the shadow time: the head is not delayed.
            } else if job.procs <= extra {
                // Crosses the shadow time on processors the head will not need.
                extra -= job.procs;
            } else {
                continue;
            }
            self.launch(j, now)?;
            backfilled = true;
        }
        if backfilled {
            let start = &self.start;
            self.queue.retain(|&j| start[j].is_nan());
        }
        Ok(())
    }

    fn conservative(&mut self, now: f64) -> Result<()> {
        if self.queue.is_empty() {
            return Ok(());
        }
        let js = self.js;
        self.profile.rebuild(now, self.free, self.expected.iter().map(|&(end, j)| (end.0.max(now), js[j].procs)));
        // Re-place jobs by their previous reservation (none: last), then queue order.
        let mut order: Vec<usize> = self.queue.iter().copied().collect();
        let res = &self.res;
        order.sort_by(|&a, &b| {
            let (ra, rb) = (res[a], res[b]);
            match (ra.is_nan(), rb.is_nan()) {
                (false, false) => ra.total_cmp(&rb).then(a.cmp(&b)),
                (false, true) => Ordering::Less,
                (true, false) => Ordering::Greater,
                (true, true) => a.cmp(&b),
            }
        });
        let mut started = false;
        for j in order {
            let job = js[j];
            let s = self.profile.earliest(job.procs, job.requested);
            self.profile.reserve(s, job.requested, job.procs);
            self.res[j] = s;
            if self.first_res[j].is_nan() {
                self.first_res[j] = s;
            }
            // Start now if the reservation is now and the processors are really free (an
            // overrunning job may still hold some the profile expected back).
            if s <= now && job.procs <= self.free {
                self.launch(j, now)?;
                started = true;
            }
        }
        if started {
            let start = &self.start;
            self.queue.retain(|&j| start[j].is_nan());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // §5.4: E = (B + X·U)·N·T. One job on 2 processors from 0 to 10 s, busy 10
    // processor-seconds: U = 10 / (2·10) = 0.5; idle 219.10·2·10 = 4,382 J; busy
    // 18.968·0.5·2·10 = 189.68 J.
    #[test]
    fn energy_formula() {
        let rec = JobRecord { id: 1, submit_s: 0.0, procs: 1, runtime_s: 10.0, requested_s: 10.0, start_s: 0.0, end_s: 10.0, reserved_s: f64::NAN };
        let s = summarize(&[rec], 2, 10.0);
        assert!((s.utilization - 0.5).abs() < 1e-12);
        assert!((s.energy_idle_j - 4382.0).abs() < 1e-9);
        assert!((s.energy_busy_j - 189.68).abs() < 1e-9);
        assert!((s.energy_j - 4571.68).abs() < 1e-9);
        // Table 3's HYBRID (packing) row by the same formula: (219.10 + 18.968·0.91)·16·16,083 s
        // = 60.79 MJ against the 61.20 MJ printed (4.82 + 56.38): within 1%.
        let e = (IDLE_POWER_W + BUSY_POWER_W * 0.91) * 16.0 * 16083.0;
        assert!((e / 61.20e6 - 1.0).abs() < 0.01, "{e}");
    }

    fn job(id: u64, submit: f64, procs: u64, runtime: f64, requested: f64) -> BatchJob {
        BatchJob { id, submit, procs, runtime, requested }
    }

    fn starts(r: &BatchResult) -> Vec<(u64, f64)> {
        r.jobs.iter().map(|j| (j.id, j.start_s)).collect()
    }

    /// 10 processors. A (5 procs, 100 s) at 0; H (8 procs, 10 s) at 1 heads the queue and
    /// does not fit (5 free): shadow 100, extra 10 - 8 = 2. B and C (2 procs, 1000 s each)
    /// both arrive at 2, so one pass considers both: B crosses the shadow on the 2 extra
    /// processors (backfilled, extra 0); C fits now (3 free) but would cross the shadow with
    /// no extra processor left: it waits (had it started too, H would find 6 < 8 free at 100).
    /// H starts at 100 (8 free), ends at 110; C starts at 110.
    fn two_crossing() -> Vec<BatchJob> {
        vec![
            job(1, 0.0, 5, 100.0, 100.0),
            job(2, 1.0, 8, 10.0, 10.0),
            job(3, 2.0, 2, 1000.0, 1000.0),
            job(4, 2.0, 2, 1000.0, 1000.0),
        ]
    }

    #[test]
    fn easy_two_backfilled_jobs_cannot_jointly_delay_the_head() {
        let r = simulate(&two_crossing(), 10, Policy::Easy).unwrap();
        assert_eq!(starts(&r), vec![(1, 0.0), (2, 100.0), (3, 2.0), (4, 110.0)]);
        assert_eq!(r.jobs[1].reserved_s, 100.0);
        assert!(r.jobs[0].reserved_s.is_nan());
    }

    #[test]
    fn fcfs_hand_worked() {
        // FCFS: H waits for A (100), B and C wait behind H. At 100 A ends, free 10:
        // H (8) starts, B (2) starts, C (2) does not fit (0 free) -> C at 110.
        let r = simulate(&two_crossing(), 10, Policy::Fcfs).unwrap();
        assert_eq!(starts(&r), vec![(1, 0.0), (2, 100.0), (3, 100.0), (4, 110.0)]);
        let s = r.summary();
        // waits: 0, 99, 98, 108 -> mean 76.25; last end 110 + 1000 = 1110.
        assert_eq!(s.avg_wait_s, 76.25);
        assert_eq!(s.total_time_s, 1110.0);
        // busy area: 5*100 + 8*10 + 2*1000 + 2*1000 = 4580 over 10 * 1110.
        assert!((s.utilization - 4580.0 / 11100.0).abs() < 1e-12);
    }

    #[test]
    fn conservative_hand_worked() {
        // Conservative on the same jobs: A runs [0,100). H reserved at 100 (needs 8, only
        // 5 free before). B (2, 1000 s) on arrival: earliest slot with 2 free for 1000 s:
        // at 2, [2,100) has 5 free, [100,110) has 10-8 = 2 free, after 110: 10 -> fits at 2.
        // C (2, 1000 s), placed after B: [2,100) 3 free, [100,110) 0 free -> no; at 110
        // (free 8) -> reserved 110, starts 110.
        let r = simulate(&two_crossing(), 10, Policy::Conservative).unwrap();
        assert_eq!(starts(&r), vec![(1, 0.0), (2, 100.0), (3, 2.0), (4, 110.0)]);
        assert_eq!(r.jobs[1].reserved_s, 100.0);
        assert_eq!(r.jobs[3].reserved_s, 110.0);
        assert_eq!(r.jobs[2].reserved_s, 2.0);
    }

    /// Where EASY and conservative differ: 4 processors. A (2, 100 s) at 0. H (4, 10 s) at 1:
    /// shadow 100, extra 0. X (1, 50 s) at 2: ends at 52 <= 100 -> backfilled by both.
    /// Y (2, 200 s) at 3 with requested 200: crosses, no extra -> waits in EASY until H ends
    /// (110). Z (1, 30 s) at 4: EASY backfills it (ends 34 <= 100). Conservative: Z too.
    /// The difference: W (1, 300 s) at 5 arrives after Y. EASY: crosses the shadow, extra 0
    /// -> waits; at 110 H ends, Y (2) and W (1) start at 110. Conservative: Y reserved at 110
    /// ([110, 310) on 2 procs), W reserved: at 5, [5,100) has 4-2-1-1 = 0? (A 2, X 1, Z 1)
    /// -> no; at 34 (Z ends) 1 free until 52, then 2 free until 100, 0 at [100,110) -> no;
    /// at 110: 4 - 2 (Y) = 2 free for ever after 310 -> W at 110.
    #[test]
    fn easy_and_conservative_small_queue() {
        let jobs = vec![
            job(1, 0.0, 2, 100.0, 100.0),
            job(2, 1.0, 4, 10.0, 10.0),
            job(3, 2.0, 1, 50.0, 50.0),
            job(4, 3.0, 2, 200.0, 200.0),
            job(5, 4.0, 1, 30.0, 30.0),
            job(6, 5.0, 1, 300.0, 300.0),
        ];
        let easy = simulate(&jobs, 4, Policy::Easy).unwrap();
        assert_eq!(starts(&easy), vec![(1, 0.0), (2, 100.0), (3, 2.0), (4, 110.0), (5, 4.0), (6, 110.0)]);
        let cons = simulate(&jobs, 4, Policy::Conservative).unwrap();
        assert_eq!(starts(&cons), vec![(1, 0.0), (2, 100.0), (3, 2.0), (4, 110.0), (5, 4.0), (6, 110.0)]);
        let fcfs = simulate(&jobs, 4, Policy::Fcfs).unwrap();
        // FCFS: H at 100, X at 110 (after H), Y at 110, Z at 110 (4 procs: X1 Y2 Z1), W at 140 (Z ends).
        assert_eq!(starts(&fcfs), vec![(1, 0.0), (2, 100.0), (3, 110.0), (4, 110.0), (5, 110.0), (6, 140.0)]);
    }

    /// Conservative protects every queued job, EASY only the head: 4 processors.
    /// A (3, 100 s) at 0. H (2, 50 s) at 1: shadow 100, extra 4 - 2 = 2... with A ending at
    /// 100, at 100 4 free, H takes 2, extra 2. Q (4, 10 s) at 2: second in queue.
    /// L (1, 1000 s) at 3: EASY: fits now (1 free), crosses the shadow, 1 <= extra 2 ->
    /// backfilled at 3; Q (needs all 4) then waits until L ends (1003).
    /// Conservative: Q reserved at 150 (after H); L may not delay it: [3, 1003) needs 1
    /// processor over [150,160) where Q takes all 4 -> L reserved at 160.
    #[test]
    fn conservative_protects_the_second_job_easy_does_not() {
        let jobs = vec![
            job(1, 0.0, 3, 100.0, 100.0),
            job(2, 1.0, 2, 50.0, 50.0),
            job(3, 2.0, 4, 10.0, 10.0),
            job(4, 3.0, 1, 1000.0, 1000.0),
        ];
        let easy = simulate(&jobs, 4, Policy::Easy).unwrap();
        assert_eq!(starts(&easy), vec![(1, 0.0), (2, 100.0), (3, 1003.0), (4, 3.0)]);
        let cons = simulate(&jobs, 4, Policy::Conservative).unwrap();
        assert_eq!(starts(&cons), vec![(1, 0.0), (2, 100.0), (3, 150.0), (4, 160.0)]);
        assert_eq!(cons.jobs[2].reserved_s, 150.0);
        assert_eq!(cons.jobs[3].reserved_s, 160.0);
    }

    /// Early ends move reservations earlier (never later); an overrun is not killed.
    #[test]
    fn early_end_and_overrun() {
        // A (4 procs) requests 100 s but runs 40; H (4) reserved at 100 starts at 40.
        let jobs = vec![job(1, 0.0, 4, 40.0, 100.0), job(2, 1.0, 4, 10.0, 10.0)];
        for p in Policy::ALL {
            let r = simulate(&jobs, 4, p).unwrap();
            assert_eq!(starts(&r), vec![(1, 0.0), (2, 40.0)], "{p:?}");
            if p != Policy::Fcfs {
                assert_eq!(r.jobs[1].reserved_s, 100.0, "{p:?}");
            }
        }
        // A requests 10 s but runs 50: not killed; H starts at 50. A 1-proc job B (5 s)
        // arriving at 20 while A overruns: EASY's shadow is "now" (20) with extra 0 (H
        // needs 4 = all): B would end at 25 > 20 -> not backfilled... it does not fit anyway.
        let jobs = vec![job(1, 0.0, 3, 50.0, 10.0), job(2, 1.0, 4, 10.0, 10.0), job(3, 20.0, 1, 5.0, 5.0)];
        for p in Policy::ALL {
            let r = simulate(&jobs, 4, p).unwrap();
            assert_eq!(r.jobs[0].end_s, 50.0, "{p:?}");
            assert_eq!(r.jobs[1].start_s, 50.0, "{p:?}");
            assert_eq!(r.jobs[2].start_s, 60.0, "{p:?}");
        }
    }

    #[test]
    fn same_instant_ends_then_arrivals_then_one_pass() {
        // A ends at 10 exactly when B and C arrive; B (id 2) and C (id 3) arrive at 10 in
        // id order even when listed the other way; both start at 10.
        let jobs = vec![job(1, 0.0, 2, 10.0, 10.0), job(3, 10.0, 1, 5.0, 5.0), job(2, 10.0, 2, 5.0, 5.0)];
        let r = simulate(&jobs, 2, Policy::Fcfs).unwrap();
        assert_eq!(starts(&r), vec![(1, 0.0), (2, 10.0), (3, 15.0)]);
        // Zero-runtime jobs are kept and take no time.
        let jobs = vec![job(1, 0.0, 2, 0.0, 0.0), job(2, 0.0, 2, 0.0, 0.0), job(3, 0.0, 2, 3.0, 3.0)];
        let r = simulate(&jobs, 2, Policy::Easy).unwrap();
        assert_eq!(r.jobs.iter().map(|j| j.end_s).collect::<Vec<_>>(), vec![0.0, 0.0, 3.0]);
    }

    #[test]
    fn too_large_jobs_are_skipped_and_counted() {
        let jobs = vec![job(1, 0.0, 5, 1.0, 1.0), job(2, 0.0, 4, 1.0, 1.0)];
        let r = simulate(&jobs, 4, Policy::Easy).unwrap();
        assert_eq!(r.skipped.too_large, 1);
        assert_eq!(r.jobs.len(), 1);
        assert!(simulate(&jobs, 0, Policy::Easy).is_err());
        let e = Policy::from_name("gang-ish").unwrap_err();
        assert!(e.reason.contains("batch-easy"), "{e}");
    }

    /// Seeded random workloads: capacity never exceeded; EASY's head starts by its first
    /// shadow; conservative jobs start by their arrival reservation (runtimes within their
    /// requests); FCFS starts in queue order.
    #[test]
    fn random_workloads_keep_the_guarantees() {
        let mut rng = crate::util::rng::SplitMix64::new(7);
        for case in 0..300 {
            let p = 1 + rng.below(16);
            let n = 1 + rng.below_usize(40);
            let mut t = 0.0;
            let jobs: Vec<BatchJob> = (0..n)
                .map(|i| {
                    t += rng.below(20) as f64;
                    let run = 1.0 + rng.below(100) as f64;
                    let req = run + rng.below(3) as f64 * rng.below(100) as f64;
                    job(i as u64, t, 1 + rng.below(p), run, req)
                })
                .collect();
            for pol in Policy::ALL {
                let r = simulate(&jobs, p, pol).unwrap();
                // Capacity: at each start, the processors in use are within the cluster.
                for a in &r.jobs {
                    let used: u64 =
                        r.jobs.iter().filter(|b| b.start_s <= a.start_s && a.start_s < b.end_s).map(|b| b.procs).sum();
                    assert!(used <= p, "case {case} {pol:?}: {used} > {p}");
                    assert!(a.start_s >= a.submit_s);
                    if !a.reserved_s.is_nan() {
                        assert!(a.start_s <= a.reserved_s, "case {case} {pol:?}: job {} starts {} after its reservation {}", a.id, a.start_s, a.reserved_s);
                    }
                }
                if pol == Policy::Fcfs {
                    assert!(r.jobs.windows(2).all(|w| w[0].start_s <= w[1].start_s), "case {case}");
                }
            }
        }
    }
}
