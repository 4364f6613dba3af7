//! A cluster whose jobs share the network: the batch scheduler's jobs ([`super::batch`]) run as
//! MPI programs in one engine ([`crate::mpi::jobs::Fabric`]) on the hosts an allocation policy
//! gives them, so that a job ends when its last rank ends, slowed by whatever its neighbours
//! send over the links it uses, and the scheduler reacts to that end.
//!
//! A job's program: its workload `program` (phases, lowered here to MPI operations, the
//! collectives through the platform's algorithms), else a rank computing for the job's logged
//! runtime (no communication: it runs as long as the log says).

use crate::cosched::batch::{BatchJob, FabricJob, Runner};
use crate::cosched::workload::{Job, Phase, Program};
use crate::error::{Error, ErrorKind, Result};
use crate::engine::link_stats::LinkReport;
use crate::mpi::jobs::{run_jobs, Fabric, Interference};
use crate::mpi::replay::{NoObserver, SimOptions};
use crate::network::platform::Platform;
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
    /// As few switches as possible: descending the platform's switch hierarchy
    /// ([`Hierarchy`]), at each level the group with the fewest free cores that holds the job;
    /// when none holds it, whole groups with the most free cores first, and the rest in the
    /// group with the fewest free cores that holds it.
    Compact,
    /// One core at a time from each group of the spread level in turn (a fat tree's leaves, a
    /// dragonfly's groups, a torus's slices along its last dimension, a star's hosts), the
    /// lowest free host of the group first.
    Spread,
}

impl HostAllocation {
    pub const NAMES: [&'static str; 4] = ["contiguous", "random", "compact", "spread"];

    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "contiguous" => Ok(HostAllocation::Contiguous),
            "random" => Ok(HostAllocation::Random),
            "compact" => Ok(HostAllocation::Compact),
            "spread" => Ok(HostAllocation::Spread),
            _ => Err(Error::new(
                ErrorKind::Options,
                "allocation",
                format!("unknown allocation `{name}` on a platform (known: {})", HostAllocation::NAMES.join(", ")),
            )),
        }
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// The switch hierarchy of a cluster topology as nested groups of consecutive hosts (every
/// cluster kind numbers its hosts so): `span[l]` hosts a group at level l, from 1 (a host) up
/// to every host (the whole platform).
/// - fat tree `levels;down;...`: a leaf switch's hosts (down₁), then a second-level
///   switch's (down₁·down₂), and so on;
/// - dragonfly: a router's hosts, a chassis's, a group's;
/// - torus `d₁,d₂,...`: a line along the first dimension (d₁ hosts), a plane (d₁·d₂), ...;
/// - star (no topology) and flat cluster: the hosts of the one switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hierarchy {
    pub span: Vec<usize>,
    /// The level whose groups [`HostAllocation::Spread`] deals over.
    pub spread_level: usize,
}

impl Hierarchy {
    /// The hierarchy of `platform`; a topology that is not a cluster (a graph, nested zones)
    /// has none, an error naming `allocation` (the policy that needs it).
    pub fn of(platform: &crate::network::platform::Platform, allocation: &str) -> Result<Hierarchy> {
        use crate::network::topology::summary::ShapeKind;
        let n = platform.hosts.len();
        let top = |fanouts: &[u64], spread_level: Option<usize>| {
            let mut span = vec![1usize];
            for &f in fanouts {
                let last = *span.last().expect("starts with 1");
                if f > 1 {
                    span.push(last * f as usize);
                }
            }
            if *span.last().expect("starts with 1") != n {
                span.push(n);
            }
            let spread_level = spread_level.map_or(span.len().saturating_sub(2), |l| l.min(span.len() - 1));
            Hierarchy { span, spread_level }
        };
        let Some(topology) = &platform.topology else {
            return Ok(top(&[], None));
        };
        match topology.shape().map(|s| s.kind) {
            Some(ShapeKind::Flat { .. }) => Ok(top(&[], None)),
            Some(ShapeKind::FatTree { down, .. }) => {
                let leaf = usize::from(down.first().is_some_and(|&d| d > 1));
                Ok(top(&down, Some(leaf)))
            }
            Some(ShapeKind::Dragonfly { chassis, routers, nodes, .. }) => Ok(top(&[nodes, routers.0, chassis.0], None)),
            Some(ShapeKind::Torus { dims }) => Ok(top(&dims, None)),
            None => Err(Error::new(
                ErrorKind::Options,
                "allocation",
                format!(
                    "`{allocation}` needs a switch hierarchy: a cluster (fat tree, dragonfly, torus, flat) or a star, and the platform is a `{}`; use contiguous or random",
                    topology.kind()
                ),
            )),
        }
    }
}

/// `n` as a product of `d` factors as equal as can be, largest first (each prime factor, the
/// largest first, goes to the smallest dimension so far): the grid of a halo.
pub fn balanced_dims(n: usize, d: usize) -> Vec<usize> {
    let mut primes = Vec::new();
    let (mut m, mut f) = (n, 2);
    while f * f <= m {
        while m % f == 0 {
            primes.push(f);
            m /= f;
        }
        f += 1;
    }
    if m > 1 {
        primes.push(m);
    }
    let mut dims = vec![1usize; d];
    for &p in primes.iter().rev() {
        let smallest = (0..d).min_by_key(|&j| (dims[j], j)).expect("d > 0");
        dims[smallest] *= p;
    }
    dims.sort_unstable_by(|a, b| b.cmp(a));
    dims
}

/// The ops of each rank of a job of `procs` processes running `program`: its phases in order,
/// `iterations` times. An exchange sends `bytes` to the `neighbors` next processes (r + 1, ...,
/// wrapping) and receives as much from the previous ones, then waits for all; a halo does so
/// with the two neighbours along each dimension (longer than 1) of a periodic grid
/// ([`balanced_dims`], the last dimension varying fastest as in MPI_Cart_create); random
/// pairs swap with a partner drawn for the iteration (seeded by `seed`, the job's id); a
/// collective is the MPI collective of that name on the job's processes.
pub fn program_trace(program: &Program, procs: usize, seed: u64) -> Result<Trace> {
    let swap = |ops: &mut Vec<OpSpec>, pairs: &mut dyn Iterator<Item = (usize, usize)>, bytes: f64| {
        let mut any = false;
        for (to, from) in pairs {
            ops.push(OpSpec::Isend { dst: to, bytes, tag: 0, sync: false, comm: 0 });
            ops.push(OpSpec::Irecv { src: Peer::Rank(from), tag: TagSpec::Value(0), comm: 0 });
            any = true;
        }
        if any {
            ops.push(OpSpec::Waitall);
        }
    };
    let grids: Vec<Vec<usize>> = (0..=3).map(|d| if d >= 2 { balanced_dims(procs, d) } else { Vec::new() }).collect();
    let has_pairs = program.phases.iter().any(|p| matches!(p, Phase::Pairs { .. }));
    // The partner of each rank in each iteration's random pairing (none for an odd one out).
    let partners = |iteration: u64| -> Vec<Option<usize>> {
        let mut rng = SplitMix64::new(seed ^ iteration.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut order: Vec<usize> = (0..procs).collect();
        rng.shuffle(&mut order);
        let mut partner = vec![None; procs];
        for pair in order.chunks_exact(2) {
            partner[pair[0]] = Some(pair[1]);
            partner[pair[1]] = Some(pair[0]);
        }
        partner
    };
    let iteration = |r: usize, partner: &[Option<usize>]| -> Vec<OpSpec> {
        let mut ops = Vec::new();
        for phase in &program.phases {
            match *phase {
                Phase::Compute { seconds } => ops.push(OpSpec::Compute { flops: None, seconds: Some(seconds) }),
                // `job_trace` resolved it; a program without a job computes nothing for it.
                Phase::ComputeShare => {}
                Phase::Exchange { bytes, neighbors } => {
                    let k = (neighbors as usize).min(procs.saturating_sub(1));
                    swap(&mut ops, &mut (1..=k).map(|d| ((r + d) % procs, (r + procs - d) % procs)), bytes);
                }
                Phase::Halo { bytes, dims } => {
                    let grid = &grids[dims as usize];
                    let mut pairs = Vec::new();
                    let mut stride = 1;
                    for &len in grid.iter().rev() {
                        let c = (r / stride) % len;
                        let at = |c2: usize| r - c * stride + c2 * stride;
                        if len > 1 {
                            pairs.push((at((c + 1) % len), at((c + len - 1) % len)));
                            pairs.push((at((c + len - 1) % len), at((c + 1) % len)));
                        }
                        stride *= len;
                    }
                    swap(&mut ops, &mut pairs.into_iter(), bytes);
                }
                Phase::Pairs { bytes } => swap(&mut ops, &mut partner[r].map(|q| (q, q)).into_iter(), bytes),
                Phase::Barrier => ops.push(OpSpec::Barrier { comm: 0 }),
                Phase::Bcast { bytes } => ops.push(OpSpec::Bcast { root: 0, bytes, comm: 0 }),
                Phase::Allreduce { bytes } => ops.push(OpSpec::Allreduce { bytes, comm: 0 }),
                Phase::Alltoall { bytes } => ops.push(OpSpec::Alltoall { bytes, comm: 0 }),
            }
        }
        ops
    };
    let mut ranks: Vec<Vec<OpSpec>> = vec![Vec::new(); procs];
    if has_pairs {
        for i in 0..program.iterations {
            let partner = partners(i);
            for (r, ops) in ranks.iter_mut().enumerate() {
                ops.extend(iteration(r, &partner));
            }
        }
    } else {
        for (r, ops) in ranks.iter_mut().enumerate() {
            let one = iteration(r, &[]);
            ops.reserve(one.len() * program.iterations as usize);
            for _ in 0..program.iterations {
                ops.extend(one.iter().cloned());
            }
        }
    }
    Trace::from_spec(TraceSpec { ranks, placement: None })
}

/// The trace a workload job runs on a fabric: its program, else a compute of its logged
/// runtime on each of its processes. (A job's `trace` file is read by the caller.)
pub fn job_trace(job: &Job) -> Result<Trace> {
    let procs = job.procs as usize;
    match &job.program {
        Some(program) => program_trace(&program.resolved(job.runtime_s), procs, job.id),
        None => {
            let ops = vec![OpSpec::Compute { flops: None, seconds: Some(job.runtime_s) }];
            Trace::from_spec(TraceSpec { ranks: vec![ops; procs], placement: None })
        }
    }
}

/// The hosts of every job of an explicit schedule, as platform indices: each job's `start_s`
/// and `hosts` given, every host known, and no host running more processes than it has cores
/// at any time of the schedule as given (each job from `start_s` for its logged `runtime_s`).
/// Errors name the job's field (`jobs[3].hosts[1]`) and the reason.
pub fn explicit_hosts(jobs: &[Job], platform: &crate::network::platform::Platform) -> Result<Vec<Vec<usize>>> {
    use crate::cosched::workload::HostRef;
    let n = platform.hosts.len();
    let index: std::collections::HashMap<&str, usize> = platform.hosts.iter().enumerate().map(|(i, h)| (h.name.as_str(), i)).collect();
    let mut all = Vec::with_capacity(jobs.len());
    for (i, j) in jobs.iter().enumerate() {
        let (Some(_), Some(hosts)) = (j.start_s, &j.hosts) else {
            let missing = if j.start_s.is_none() { "start_s" } else { "hosts" };
            return Err(Error::workload(format!("jobs[{i}].{missing}"), "the explicit policy starts each job when and where the workload says: give start_s and hosts"));
        };
        let mut row = Vec::with_capacity(hosts.len());
        for (k, h) in hosts.iter().enumerate() {
            let field = format!("jobs[{i}].hosts[{k}]");
            row.push(match h {
                HostRef::Index(x) if *x < n => *x,
                HostRef::Index(x) => return Err(Error::workload(field, format!("host index {x} out of range (the platform has {n} hosts)"))),
                HostRef::Name(name) => *index
                    .get(name.as_str())
                    .ok_or_else(|| Error::workload(field, format!("unknown host `{name}` (the platform has {n} hosts)")))?,
            });
        }
        all.push(row);
    }
    // Sweep the schedule as given: ends before starts at equal times.
    let mut events: Vec<(f64, bool, usize)> = Vec::with_capacity(2 * jobs.len());
    for (i, j) in jobs.iter().enumerate() {
        let start = j.start_s.expect("checked above");
        events.push((start + j.runtime_s, false, i));
        events.push((start, true, i));
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    // The job of each process running on each host.
    let mut on: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (t, starts, i) in events {
        for &h in &all[i] {
            if starts {
                on[h].push(i);
                if on[h].len() > platform.hosts[h].cores {
                    let others: Vec<String> = on[h].iter().filter(|&&o| o != i).map(|o| format!("jobs[{o}]")).collect();
                    return Err(Error::workload(
                        format!("jobs[{i}].hosts"),
                        format!(
                            "host `{}` has {} core(s) and at {t} s would run {} processes (with {}): the schedule overlaps",
                            platform.hosts[h].name,
                            platform.hosts[h].cores,
                            on[h].len(),
                            if others.is_empty() { "this job's own".to_string() } else { others.join(", ") }
                        ),
                    ));
                }
            } else if let Some(p) = on[h].iter().position(|&o| o == i) {
                on[h].swap_remove(p);
            }
        }
    }
    Ok(all)
}

/// Free cores of each host and of each group of a [`Hierarchy`], and the allocation
/// policies that pick from them.
#[derive(Debug, Clone)]
pub struct FreeCores {
    hierarchy: Hierarchy,
    /// `free[l][g]`: free cores of group g at level l (level 0: the hosts).
    free: Vec<Vec<u32>>,
    allocation: HostAllocation,
    rng: SplitMix64,
}

impl FreeCores {
    /// `cores[h]` is host h's core count; `seed` drives the random allocation.
    pub fn new(cores: Vec<u32>, hierarchy: Hierarchy, allocation: HostAllocation, seed: u64) -> Self {
        let mut free = vec![cores];
        for l in 1..hierarchy.span.len() {
            let ratio = hierarchy.span[l] / hierarchy.span[l - 1];
            let groups: Vec<u32> = free[l - 1].chunks(ratio).map(|c| c.iter().sum()).collect();
            free.push(groups);
        }
        FreeCores { hierarchy, free, allocation, rng: SplitMix64::new(seed) }
    }

    /// Every core of the platform.
    pub fn total(&self) -> u64 {
        self.free[0].iter().map(|&c| u64::from(c)).sum()
    }

    fn change(&mut self, host: usize, take: bool) {
        for (l, level) in self.free.iter_mut().enumerate() {
            let g = &mut level[host / self.hierarchy.span[l]];
            if take {
                *g -= 1;
            } else {
                *g += 1;
            }
        }
    }

    /// Give the cores of `hosts` (one a rank) back.
    pub fn release(&mut self, hosts: &[usize]) {
        for &h in hosts {
            self.change(h, false);
        }
    }

    /// `procs` free cores (the caller checked that there are), as the hosts of the ranks in
    /// rank order: in host order for contiguous and compact, in the order drawn for random,
    /// dealt over the groups for spread (consecutive ranks in different groups).
    pub fn allocate(&mut self, procs: usize) -> Vec<usize> {
        debug_assert!(procs as u64 <= self.free.last().map_or(0, |t| t.iter().map(|&c| u64::from(c)).sum()));
        let mut hosts = Vec::with_capacity(procs);
        match self.allocation {
            HostAllocation::Contiguous => {
                for (h, &free) in self.free[0].iter().enumerate() {
                    let take = (free as usize).min(procs - hosts.len());
                    hosts.extend(std::iter::repeat_n(h, take));
                    if hosts.len() == procs {
                        break;
                    }
                }
            }
            HostAllocation::Random => {
                let mut slots: Vec<usize> =
                    self.free[0].iter().enumerate().flat_map(|(h, &c)| std::iter::repeat_n(h, c as usize)).collect();
                self.rng.shuffle(&mut slots);
                slots.truncate(procs);
                hosts = slots;
            }
            HostAllocation::Compact => {
                self.compact(self.free.len() - 1, 0, procs, &mut hosts);
                hosts.sort_unstable();
            }
            HostAllocation::Spread => self.spread(procs, &mut hosts),
        }
        for &h in &hosts {
            self.change(h, true);
        }
        hosts
    }

    /// `need` cores of group `g` at level `l` (it has them), fewest subgroups first.
    fn compact(&self, l: usize, g: usize, need: usize, out: &mut Vec<usize>) {
        if l == 0 {
            out.extend(std::iter::repeat_n(g, need));
            return;
        }
        let ratio = self.hierarchy.span[l] / self.hierarchy.span[l - 1];
        let below = &self.free[l - 1];
        let children = g * ratio..(g + 1) * ratio;
        // The child with the fewest free cores that holds `need`, lowest first among equals.
        let best_fit = |need: usize, skip: &[usize]| {
            children
                .clone()
                .filter(|c| below[*c] as usize >= need && !skip.contains(c))
                .min_by_key(|&c| (below[c], c))
        };
        if let Some(c) = best_fit(need, &[]) {
            return self.compact(l - 1, c, need, out);
        }
        let mut by_free: Vec<usize> = children.clone().filter(|&c| below[c] > 0).collect();
        by_free.sort_by_key(|&c| (std::cmp::Reverse(below[c]), c));
        let mut left = need;
        let mut whole = Vec::new();
        for c in by_free {
            if below[c] as usize >= left {
                break;
            }
            left -= below[c] as usize;
            whole.push(c);
            self.compact(l - 1, c, below[c] as usize, out);
        }
        let c = best_fit(left, &whole).expect("the group holds the job");
        self.compact(l - 1, c, left, out);
    }

    /// One core at a time from each group of the spread level in turn, the lowest free host
    /// of the group first.
    fn spread(&self, procs: usize, out: &mut Vec<usize>) {
        let level = self.hierarchy.spread_level;
        let span = self.hierarchy.span[level];
        let mut group_free = self.free[level].clone();
        let mut host_free = self.free[0].clone();
        // The next host to look at in each group.
        let mut cursor: Vec<usize> = (0..group_free.len()).map(|g| g * span).collect();
        while out.len() < procs {
            for g in 0..group_free.len() {
                if out.len() == procs {
                    break;
                }
                if group_free[g] == 0 {
                    continue;
                }
                while host_free[cursor[g]] == 0 {
                    cursor[g] += 1;
                }
                let h = cursor[g];
                host_free[h] -= 1;
                group_free[g] -= 1;
                out.push(h);
            }
        }
    }
}

/// How a workload runs on a platform, beside its policy and the simulation options (which
/// ask for per-link statistics with `link_stats`).
#[derive(Debug, Clone, Copy)]
pub struct FabricSettings {
    /// How a job gets its cores, and the seed of `random`.
    pub allocation: HostAllocation,
    pub seed: u64,
    /// Also run each job alone on its hosts (`alone_s`, slowdown).
    pub alone: bool,
    /// Keep the interference table ([`Interference`]).
    pub interference: bool,
}

/// What a job runs, as a key of [`AloneTimes`]: its trace file, else its program as it runs
/// (a `compute_share` resolved; the seed, its id, where a `pairs` phase draws partners) and its
/// processes, else its logged runtime and processes.
pub fn job_key(job: &Job) -> String {
    match (&job.trace, &job.program) {
        (Some(path), _) => format!("trace {path}"),
        (None, Some(program)) => {
            let resolved = program.resolved(job.runtime_s);
            let seeded = resolved.phases.iter().any(|p| matches!(p, Phase::Pairs { .. }));
            let program = serde_json::to_string(&*resolved).unwrap_or_default();
            format!("program {program} procs {} seed {}", job.procs, if seeded { job.id } else { 0 })
        }
        (None, None) => format!("compute {:?} procs {}", job.runtime_s, job.procs),
    }
}

/// The platform as the ranks on `hosts` see it, as a 128-bit digest: the hosts relabelled in
/// increasing index order (each rank's label, and each host's speed, cores, NIC, overheads and
/// interference), and for every ordered pair of the hosts (a host with itself included) the
/// route's links relabelled in increasing index order, with each link's bandwidth, latency and
/// sharing. Two host lists of
/// one platform with the same digest see isomorphic networks whose links and hosts are also
/// in the same order, so a job runs on them alike, event for event (up to a collision of the
/// digest, about 2^-128).
pub fn shape_digest(platform: &Platform, hosts: &[usize]) -> Result<(u64, u64)> {
    use std::hash::{Hash, Hasher};
    let mut distinct: Vec<usize> = hosts.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let mut words: Vec<u64> = Vec::with_capacity(hosts.len() * 2 + distinct.len() * distinct.len() * 4);
    for &h in hosts {
        words.push(distinct.binary_search(&h).expect("listed") as u64);
    }
    for &h in &distinct {
        let host = &platform.hosts[h];
        let o = &host.overhead;
        words.extend([host.speed.to_bits(), host.cores as u64, host.bandwidth_up.to_bits(), host.bandwidth_down.to_bits()]);
        words.extend([o.send, o.send_per_byte, o.recv, o.recv_per_byte].map(f64::to_bits));
        let mut h = std::collections::hash_map::DefaultHasher::new();
        format!("{:?}", host.interference).hash(&mut h);
        words.push(h.finish());
    }
    if let Some(topo) = &platform.topology {
        use crate::network::topology::Endpoint;
        let mut routes: Vec<Vec<u32>> = Vec::with_capacity(distinct.len() * distinct.len());
        let mut route = Vec::new();
        for &a in &distinct {
            for &b in &distinct {
                route.clear();
                topo.route(Endpoint::Host(a as u32), Endpoint::Host(b as u32), &mut route)?;
                routes.push(route.clone());
            }
        }
        let mut links: Vec<u32> = routes.iter().flatten().copied().collect();
        links.sort_unstable();
        links.dedup();
        for route in &routes {
            words.push(u64::MAX); // a route's end
            words.extend(route.iter().map(|l| links.binary_search(l).expect("listed") as u64));
        }
        for &l in &links {
            let info = topo.link(l);
            words.extend([info.bandwidth.to_bits(), info.latency.to_bits(), info.sharing as u64]);
        }
    }
    let digest = |salt: u64| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        salt.hash(&mut h);
        words.hash(&mut h);
        h.finish()
    };
    Ok((digest(0), digest(1)))
}

/// Each job's time alone, run once per job key and platform shape where the result cannot
/// differ (issue 41, item 4): a job of a key seen once keeps its hosts; a second job of that
/// key digests both host lists ([`shape_digest`]), and a job whose key and digest match an
/// earlier one's takes its time without a run. A job that ran isolated in the cluster
/// ([`crate::mpi::jobs::Ended::isolated`]) needs no run either: its runtime is its time
/// alone (and goes in the cache). Under a routing other than `minimal` every job runs alone.
#[derive(Default)]
pub struct AloneTimes {
    /// Per key: the first job's hosts and time (until a second job of the key comes), and
    /// the times by digest.
    seen: std::collections::HashMap<String, (Option<(Vec<usize>, f64)>, Vec<((u64, u64), f64)>)>,
    /// Runs saved by the cache.
    pub hits: u64,
    /// Runs saved because the job ran isolated.
    pub isolated: u64,
    /// Runs made.
    pub runs: u64,
}

impl AloneTimes {
    /// The time alone of a job of `key` on `hosts`: `isolated_runtime` when the job ran
    /// isolated, else from the cache or from `run()`.
    pub fn get(
        &mut self,
        platform: &Platform,
        key: String,
        hosts: &[usize],
        isolated_runtime: Option<f64>,
        run: impl FnOnce() -> Result<f64>,
    ) -> Result<f64> {
        if platform.routing != crate::network::topology::routing::Routing::Minimal {
            // Routes beyond minimal leave the job's hosts and follow draws and loads: neither
            // another shape's time nor the job's time among others is its time alone.
            self.runs += 1;
            return run();
        }
        let (runs, isolated) = (&mut self.runs, &mut self.isolated);
        let time = move || match isolated_runtime {
            Some(t) => {
                *isolated += 1;
                Ok(t)
            }
            None => {
                *runs += 1;
                run()
            }
        };
        let entry = self.seen.entry(key).or_default();
        if entry.0.is_none() && entry.1.is_empty() {
            let t = time()?;
            entry.0 = Some((hosts.to_vec(), t));
            return Ok(t);
        }
        if let Some((first, t)) = entry.0.take() {
            entry.1.push((shape_digest(platform, &first)?, t));
        }
        let digest = shape_digest(platform, hosts)?;
        let cached = entry.1.iter().find(|(d, _)| *d == digest).map(|&(_, t)| t);
        match (cached, isolated_runtime) {
            (Some(t), None) => {
                self.hits += 1;
                Ok(t)
            }
            (Some(_), Some(_)) => time(),
            (None, _) => {
                let t = time()?;
                entry.1.push((digest, t));
                Ok(t)
            }
        }
    }
}

/// The end (s) of `trace` started at 0 on `hosts` of `platform` (with `options.smpi` applied
/// already) and nothing else: a job's time alone.
pub fn alone_time(platform: &Platform, options: &SimOptions, trace: Trace, hosts: &[usize]) -> Result<f64> {
    let mut trace = Some(trace);
    let mut trace_of = |_: usize| Ok(trace.take().expect("one job"));
    let options = SimOptions { link_stats: false, ..options.clone() };
    let mut observer = NoObserver;
    let mut fabric = Fabric::new(platform, &options, &mut observer)?;
    let (ends, _) = run_jobs(&mut fabric, &[0.0], &[hosts.to_vec()], &mut trace_of)?;
    Ok(ends[0].end)
}

/// The hosts of a job's ranks, each once, ascending.
pub fn distinct_hosts(hosts: &[usize]) -> Vec<u32> {
    let mut v: Vec<u32> = hosts.iter().map(|&h| h as u32).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Runs a batch schedule's jobs on a [`Fabric`]: hosts from an allocation policy, traces from
/// `traces` (called with the job's index in the workload when it starts, dropped when it ends;
/// it gives one rank a process of the job). With `alone`, each job that ends runs again alone
/// on its hosts ([`alone_time`]).
pub struct FabricRunner<'a, 't> {
    fabric: Fabric<'a>,
    platform: &'a Platform,
    options: &'a SimOptions,
    alone: bool,
    traces: &'t mut dyn FnMut(usize) -> Result<Trace>,
    /// Each job's key ([`job_key`]), by its index in the workload.
    keys: &'t dyn Fn(usize) -> String,
    alone_times: AloneTimes,
    cores: FreeCores,
    /// Per fabric job number (start order): the schedule's job, its index in the workload and
    /// its hosts (one a rank; emptied when it ends).
    started: Vec<(usize, usize, Vec<usize>)>,
    /// Per schedule job (`k`): what it did, once it ended.
    done: Vec<Option<FabricJob>>,
}

impl<'a, 't> FabricRunner<'a, 't> {
    pub fn new(
        fabric: Fabric<'a>,
        platform: &'a Platform,
        options: &'a SimOptions,
        alone: bool,
        cores: FreeCores,
        traces: &'t mut dyn FnMut(usize) -> Result<Trace>,
        keys: &'t dyn Fn(usize) -> String,
    ) -> Self {
        let alone_times = AloneTimes::default();
        FabricRunner { fabric, platform, options, alone, traces, keys, alone_times, cores, started: Vec::new(), done: Vec::new() }
    }

    /// Runs alone saved by the cache, saved because the job ran isolated, and made
    /// ([`AloneTimes`]).
    pub fn alone_counts(&self) -> (u64, u64, u64) {
        (self.alone_times.hits, self.alone_times.isolated, self.alone_times.runs)
    }

    /// Every core of the platform: the scheduler's processors.
    pub fn processors(&self) -> u64 {
        self.cores.total()
    }

    /// The engine's steps so far.
    pub fn events(&self) -> u64 {
        self.fabric.events()
    }

    /// What each job of the schedule (`k` order) did (`None` for one that never ended), the
    /// interference table with jobs by their index in the workload (empty unless the fabric
    /// kept it) and the per-link statistics (when kept).
    pub fn into_parts(mut self) -> (Vec<Option<FabricJob>>, Vec<Interference>, Option<LinkReport>) {
        let mut table = self.fabric.take_interference();
        for pair in &mut table {
            (pair.a, pair.b) = (self.started[pair.a as usize].1 as u64, self.started[pair.b as usize].1 as u64);
        }
        let links = self.fabric.take_link_report();
        (self.done, table, links)
    }
}

impl Runner for FabricRunner<'_, '_> {
    fn launch(&mut self, k: usize, index: usize, job: &BatchJob, _now: f64) -> Result<()> {
        let trace = (self.traces)(index)?;
        let hosts = self.cores.allocate(job.procs as usize);
        self.fabric.start(trace, &hosts, &format!("jobs[{index}]"))?;
        self.started.push((k, index, hosts));
        Ok(())
    }

    fn next_ends(&mut self, limit: f64) -> Result<Option<(f64, Vec<usize>)>> {
        let ended = self.fabric.run_until(limit)?;
        if ended.is_empty() {
            return Ok(None);
        }
        let mut ks = Vec::with_capacity(ended.len());
        for e in ended {
            let (k, index, ref mut held) = self.started[e.job as usize];
            let hosts = std::mem::take(held);
            self.cores.release(&hosts);
            let alone_s = if self.alone {
                let (platform, options, traces) = (self.platform, self.options, &mut self.traces);
                let isolated = e.isolated.then(|| e.runtime());
                self.alone_times.get(platform, (self.keys)(index), &hosts, isolated, || alone_time(platform, options, traces(index)?, &hosts))?
            } else {
                f64::NAN
            };
            if self.done.len() <= k {
                self.done.resize(k + 1, None);
            }
            self.done[k] = Some(FabricJob { bytes: e.bytes, messages: e.messages, alone_s, hosts: distinct_hosts(&hosts) });
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
    use crate::cosched::workload::HostRef;
    use crate::mpi::replay::{NoObserver, SimOptions};

    fn platform(hosts: usize) -> crate::network::platform::Platform {
        crate::mpi::platform_file::load_json(&format!(
            r#"{{"cluster": {{"count": {hosts}, "speed": 1e9}}, "network": {{"bandwidth": 1e8, "latency": 0, "eager_threshold": 0}}}}"#
        ))
        .unwrap()
    }

    /// `hosts` hosts of 1e9 B/s NICs on a SHARED 1e8 B/s backbone, no latency, every message
    /// rendezvous.
    fn backbone(hosts: usize) -> crate::network::platform::Platform {
        crate::mpi::platform_file::load_json(&format!(
            r#"{{"cluster": {{"count": {hosts}, "speed": 1e9}}, "network": {{"bandwidth": 1e9, "latency": 0, "eager_threshold": 0,
                "topology": {{"kind": "flat", "backbone": {{"bandwidth": 1e8, "latency": 0, "sharing": "SHARED"}}}}}}}}"#
        ))
        .unwrap()
    }

    fn free_cores(p: &crate::network::platform::Platform, allocation: HostAllocation) -> FreeCores {
        let cores = p.hosts.iter().map(|h| h.cores as u32).collect();
        FreeCores::new(cores, Hierarchy::of(p, allocation.name()).unwrap(), allocation, 7)
    }

    fn topology(topology: &str) -> crate::network::platform::Platform {
        crate::mpi::platform_file::load_json(&format!(
            r#"{{"cluster": {{"count": {}, "speed": 1e9, "cores": 2}}, "network": {{"bandwidth": 1e8, "latency": 0, "topology": {topology}}}}}"#,
            match topology {
                t if t.contains("fat_tree") => 16,
                t if t.contains("dragonfly") => 24,
                _ => 8,
            }
        ))
        .unwrap()
    }

    #[test]
    fn hierarchies_follow_the_switches_of_each_cluster_kind() {
        let ft = topology(r#"{"kind": "fat_tree", "down": [4, 4], "up": [1, 2], "parallel": [1, 1]}"#);
        assert_eq!(Hierarchy::of(&ft, "compact").unwrap(), Hierarchy { span: vec![1, 4, 16], spread_level: 1 });
        // 3 groups of 2 chassis of 2 routers of 2 hosts.
        let df = topology(r#"{"kind": "dragonfly", "groups": [3, 1], "chassis": [2, 1], "routers": [2, 1], "nodes": 2, "routing": "minimal"}"#);
        assert_eq!(Hierarchy::of(&df, "compact").unwrap(), Hierarchy { span: vec![1, 2, 4, 8, 24], spread_level: 3 });
        let torus = topology(r#"{"kind": "torus", "dims": [2, 4]}"#);
        assert_eq!(Hierarchy::of(&torus, "compact").unwrap(), Hierarchy { span: vec![1, 2, 8], spread_level: 1 });
        assert_eq!(Hierarchy::of(&platform(4), "spread").unwrap(), Hierarchy { span: vec![1, 4], spread_level: 0 });
    }

    #[test]
    fn compact_fills_a_leaf_then_a_pod_and_spread_deals_over_leaves() {
        // 16 hosts of 2 cores under 4 leaves of 4 hosts (8 cores a leaf).
        let ft = topology(r#"{"kind": "fat_tree", "down": [4, 4], "up": [1, 2], "parallel": [1, 1]}"#);
        let mut compact = free_cores(&ft, HostAllocation::Compact);
        let a = compact.allocate(3);
        assert_eq!(a, vec![0, 0, 1], "the first leaf, a host's two cores first");
        // 6 cores: leaf 0 has 5 left, so a fresh leaf (the fewest free that holds 6: leaf 1).
        let b = compact.allocate(6);
        assert_eq!(b, vec![4, 4, 5, 5, 6, 6]);
        // 5 cores: leaf 0 has exactly 5 (the best fit), before leaf 1's 2 and the empty leaves.
        let c = compact.allocate(5);
        assert_eq!(c, vec![1, 2, 2, 3, 3]);
        // 12 cores: no leaf holds them: whole leaf 2 (8, the most free, lowest first), then 4
        // in the leaf with the fewest free that holds 4 (leaf 3, 8 free; leaf 1 has 2).
        let d = compact.allocate(12);
        assert_eq!(d, vec![8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]);
        assert_eq!(compact.allocate(2), vec![7, 7], "leaf 1's last host (2 free) is the best fit, before leaf 3's 4");
        compact.release(&b);
        // Leaf 1 has 6 free, leaf 3 has 4: no leaf holds 8, so leaf 1 whole, then 2 in leaf 3.
        assert_eq!(compact.allocate(8), vec![4, 4, 5, 5, 6, 6, 14, 14]);

        let mut spread = free_cores(&ft, HostAllocation::Spread);
        assert_eq!(spread.allocate(6), vec![0, 4, 8, 12, 0, 4]);
        assert_eq!(spread.allocate(3), vec![1, 5, 8]);
    }

    #[test]
    fn compact_and_spread_on_a_dragonfly_and_a_torus() {
        // 3 groups × 2 chassis × 2 routers × 2 hosts × 2 cores: a router holds 4 cores, a
        // chassis 8, a group 16.
        let df = topology(r#"{"kind": "dragonfly", "groups": [3, 1], "chassis": [2, 1], "routers": [2, 1], "nodes": 2, "routing": "minimal"}"#);
        let mut compact = free_cores(&df, HostAllocation::Compact);
        assert_eq!(compact.allocate(10), vec![0, 0, 1, 1, 2, 2, 3, 3, 4, 4], "a chassis, then the next router");
        let mut spread = free_cores(&df, HostAllocation::Spread);
        assert_eq!(spread.allocate(4), vec![0, 8, 16, 0]);
        // Torus 2×4: lines of 2 hosts (4 cores); spread over... a 2-D torus's slices along its
        // last dimension are those lines.
        let torus = topology(r#"{"kind": "torus", "dims": [2, 4]}"#);
        let mut spread = free_cores(&torus, HostAllocation::Spread);
        assert_eq!(spread.allocate(5), vec![0, 2, 4, 6, 0]);
    }

    #[test]
    fn a_graph_platform_has_no_hierarchy_for_compact() {
        let p = crate::mpi::platform_file::load_simgrid_xml(
            r#"<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="a" speed="1Gf"/>
    <host id="b" speed="1Gf"/>
    <link id="l" bandwidth="125MBps" latency="50us"/>
    <route src="a" dst="b"><link_ctn id="l"/></route>
  </zone>
</platform>"#,
            "g.xml",
        )
        .unwrap();
        let e = Hierarchy::of(&p, "compact").unwrap_err();
        assert!(e.reason.contains("needs a switch hierarchy"), "{e}");
    }

    fn job(id: u64, submit: f64, procs: u64, runtime: f64) -> Job {
        Job { id, submit_s: submit, procs, memory_mb: 0.0, runtime_s: runtime, program: None, ..Job::default() }
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
            let options = SimOptions::default();
            let keys = |i: usize| job_key(&jobs[i]);
            let mut runner = FabricRunner::new(fabric, &p, &options, false, free_cores(&p, HostAllocation::Contiguous), &mut traces, &keys);
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
        let options = SimOptions::default();
        let keys = |i: usize| job_key(&jobs[i]);
        let mut runner = FabricRunner::new(fabric, &p, &options, true, free_cores(&p, HostAllocation::Contiguous), &mut traces, &keys);
        let ran = simulate_with(&batch, runner.processors(), Policy::Fcfs, &mut runner).unwrap();
        let times: Vec<(f64, f64, f64)> = ran.jobs.iter().map(|j| (j.start_s, j.end_s, j.runtime_s)).collect();
        assert_eq!(times, vec![(0.0, 1.0, 1.0), (1.0, 2.0, 1.0)]);
        // Each had the network to itself: its runtime is its time alone, with no run.
        assert_eq!(runner.alone_counts(), (0, 2, 0));
    }

    #[test]
    fn a_job_that_ran_isolated_took_the_time_it_takes_alone() {
        // A dragonfly of 24 hosts (2 cores each); 4-process jobs, each three times computing
        // 0.5 s, a 2-D halo and an allreduce, replayed where and when the schedule says. Jobs
        // 0 and 1 share hosts and start together: they slow each other. The others start
        // apart on their own hosts; some exchange while another job does (coupled), the
        // rest alone (isolated: no run alone). Every job's time alone is its run alone.
        let p = crate::mpi::platform_file::load_json(
            r#"{"cluster": {"count": 24, "speed": 1e9, "cores": 2}, "network": {"bandwidth": 1e8, "latency": 1e-6,
                "topology": {"kind": "dragonfly", "groups": [2, 1], "chassis": [2, 1], "routers": [3, 1], "nodes": 2}}}"#,
        )
        .unwrap();
        let program = Program {
            iterations: 3,
            phases: vec![Phase::Compute { seconds: 0.5 }, Phase::Halo { bytes: 1e6, dims: 2 }, Phase::Allreduce { bytes: 1e5 }],
        };
        let starts = [0.0, 0.0, 0.25, 10.0, 10.1, 20.0, 30.0, 30.0];
        let hosts: [[usize; 4]; 8] =
            [[0, 5, 10, 15], [0, 5, 10, 15], [1, 6, 11, 16], [2, 7, 12, 17], [3, 8, 13, 18], [0, 1, 2, 3], [4, 9, 14, 19], [20, 21, 22, 23]];
        let jobs: Vec<Job> = (0..8)
            .map(|i| Job {
                program: Some(program.clone()),
                start_s: Some(starts[i]),
                hosts: Some(hosts[i].iter().map(|&h| HostRef::Index(h)).collect()),
                ..job(i as u64 + 1, starts[i], 4, 2.0)
            })
            .collect();
        let w = crate::cosched::Workload::from_spec(crate::cosched::WorkloadSpec { generator: None, default_program: None, jobs: jobs.clone() })
            .unwrap();
        let settings = FabricSettings { allocation: HostAllocation::Contiguous, seed: 0, alone: true, interference: false };
        let options = SimOptions::default();
        let (r, _) = w.run_on_fabric(Policy::Explicit, &p, &options, &settings, &std::collections::HashMap::new()).unwrap();
        let mut isolated = 0;
        for (j, f) in r.jobs.iter().zip(&r.fabric) {
            let i = (j.id - 1) as usize;
            let alone = alone_time(&p, &options, job_trace(&jobs[i]).unwrap(), &hosts[i]).unwrap();
            assert!((f.alone_s - alone).abs() <= 1e-9 * alone, "job {}: {} vs {alone} alone", j.id, f.alone_s);
            isolated += usize::from(f.alone_s == j.runtime_s);
        }
        assert!(r.jobs[0].runtime_s > 1.01 * r.fabric[0].alone_s, "jobs 1 and 2 share their hosts' links");
        assert!(isolated >= 3, "{isolated} jobs ran isolated");
    }

    /// Four 2-process jobs, each swapping 1e8 bytes, submitted at 0, 0, 0 and `last_submit`,
    /// run under FCFS on `p` with times alone: the cache's (hits, isolated, runs) and each
    /// job's (runtime, alone) seconds.
    fn four_exchanges(p: &Platform, last_submit: f64) -> ((u64, u64, u64), Vec<(f64, f64)>) {
        let program = Program { iterations: 1, phases: vec![Phase::Exchange { bytes: 1e8, neighbors: 1 }] };
        let mk = |id: u64, submit: f64| Job { program: Some(program.clone()), ..job(id, submit, 2, 9.0) };
        let jobs = vec![mk(1, 0.0), mk(2, 0.0), mk(3, 0.0), mk(4, last_submit)];
        let batch: Vec<BatchJob> = jobs.iter().map(BatchJob::from).collect();
        let mut observer = NoObserver;
        let fabric = Fabric::new(p, &SimOptions::default(), &mut observer).unwrap();
        let mut traces = |i: usize| job_trace(&jobs[i]);
        let options = SimOptions::default();
        let keys = |i: usize| job_key(&jobs[i]);
        let mut runner = FabricRunner::new(fabric, p, &options, true, free_cores(p, HostAllocation::Contiguous), &mut traces, &keys);
        let ran = simulate_with(&batch, runner.processors(), Policy::Fcfs, &mut runner).unwrap();
        let counts = runner.alone_counts();
        let (done, _, _) = runner.into_parts();
        (counts, ran.jobs.iter().zip(&done).map(|(j, d)| (j.runtime_s, d.as_ref().unwrap().alone_s)).collect())
    }

    #[test]
    fn under_a_routing_beyond_minimal_every_time_alone_is_run() {
        // The four jobs on a fat tree routed adaptively: neither the cache nor a job that ran
        // isolated gives a time alone (the routes leave the job's hosts and follow loads).
        let p = crate::mpi::platform_file::load_json(
            r#"{"cluster": {"count": 8, "speed": 1e9}, "network": {"bandwidth": 1e8, "routing": "adaptive",
                "topology": {"kind": "fat_tree", "down": [4, 2], "up": [1, 2]}}}"#,
        )
        .unwrap();
        assert_eq!(four_exchanges(&p, 100.0).0, (0, 0, 4));
    }

    #[test]
    fn a_time_alone_is_run_once_a_shape_and_not_for_a_job_that_ran_isolated() {
        // Six hosts on a SHARED 1e8 B/s backbone; each 2-process job swaps 1e8 bytes (2e8 over
        // the backbone): 2 s alone. Jobs 1-3 start together and share it (6 s); job 4 comes
        // at 1 s, starts when they end and runs alone.
        let (counts, times) = four_exchanges(&backbone(6), 1.0);
        // Jobs 2 and 3 take job 1's time alone from the cache (the same shape on a flat
        // network); job 4 ran isolated.
        assert_eq!(counts, (2, 1, 1));
        for &(runtime, alone) in &times[..3] {
            assert!((runtime - 6.0).abs() < 1e-9 && (alone - 2.0).abs() < 1e-9, "{times:?}");
        }
        assert_eq!(times[3], (2.0, 2.0));
    }

    #[test]
    fn shapes_that_see_the_same_network_share_a_digest() {
        // A fat tree of 4 leaves of 4 hosts: two hosts under one leaf look the same under
        // any leaf; two under different leaves do not look like two under one; the ranks'
        // order counts.
        let p = topology(r#"{"kind": "fat_tree", "down": [4, 4], "up": [1, 1], "parallel": [1, 1]}"#);
        let d = |hosts: &[usize]| shape_digest(&p, hosts).unwrap();
        assert_eq!(d(&[0, 1]), d(&[4, 5]));
        assert_eq!(d(&[0, 1, 1]), d(&[12, 13, 13]));
        assert_ne!(d(&[0, 1]), d(&[0, 4]));
        assert_ne!(d(&[0, 1, 1]), d(&[0, 0, 1]));
        assert_ne!(d(&[0, 1]), d(&[0, 1, 2]));
        // A star: any two distinct hosts alike, one host twice not.
        let star = platform(4);
        let s = |hosts: &[usize]| shape_digest(&star, hosts).unwrap();
        assert_eq!(s(&[0, 1]), s(&[2, 3]));
        assert_ne!(s(&[0, 1]), s(&[0, 0]));
    }

    #[test]
    fn a_job_key_names_what_it_runs() {
        let program = Program { iterations: 2, phases: vec![Phase::ComputeShare, Phase::Pairs { bytes: 1.0 }] };
        let a = Job { program: Some(program.clone()), ..job(1, 0.0, 2, 10.0) };
        // compute_share resolves with the runtime; pairs draw partners by the job's id.
        assert_ne!(job_key(&a), job_key(&Job { runtime_s: 20.0, ..a.clone() }));
        assert_ne!(job_key(&a), job_key(&Job { id: 2, ..a.clone() }));
        let halo = Program { iterations: 2, phases: vec![Phase::Halo { bytes: 1.0, dims: 2 }] };
        let h = Job { program: Some(halo), ..job(1, 0.0, 4, 10.0) };
        assert_eq!(job_key(&h), job_key(&Job { id: 7, submit_s: 5.0, ..h.clone() }));
        assert_ne!(job_key(&h), job_key(&Job { procs: 8, ..h.clone() }));
    }

    #[test]
    fn each_job_reports_its_bytes_its_time_alone_and_its_slowdown() {
        // Four hosts on a SHARED 1e8 B/s backbone: two 2-process jobs each swap 1e8 bytes (2e8
        // over the backbone). Together they share it: 4e8 bytes at 1e8 B/s, 4 s; alone, 2 s.
        let p = backbone(4);
        let program = Program { iterations: 1, phases: vec![Phase::Exchange { bytes: 1e8, neighbors: 1 }] };
        let jobs: Vec<Job> = (1..=2).map(|id| Job { program: Some(program.clone()), ..job(id, 0.0, 2, 9.0) }).collect();
        let w = crate::cosched::Workload::from_spec(crate::cosched::WorkloadSpec { generator: None, default_program: None, jobs }).unwrap();
        let none = std::collections::HashMap::new();
        for policy in [Policy::Easy, Policy::Explicit] {
            let w = if policy == Policy::Explicit {
                let mut w = w.clone();
                for (i, j) in w.spec.jobs.iter_mut().enumerate() {
                    j.start_s = Some(0.0);
                    j.runtime_s = 4.0;
                    j.hosts = Some(vec![HostRef::Index(2 * i), HostRef::Index(2 * i + 1)]);
                }
                w
            } else {
                w.clone()
            };
            let settings = FabricSettings { allocation: HostAllocation::Contiguous, seed: 0, alone: true, interference: false };
            let (r, _) = w.run_on_fabric(policy, &p, &SimOptions::default(), &settings, &none).unwrap();
            for (j, f) in r.jobs.iter().zip(&r.fabric) {
                assert!((j.runtime_s - 4.0).abs() < 1e-9, "{policy:?}: {}", j.runtime_s);
                assert!((f.alone_s - 2.0).abs() < 1e-9, "{policy:?}: {}", f.alone_s);
                assert!((f.slowdown(j.runtime_s) - 2.0).abs() < 1e-9);
                assert_eq!((f.bytes, f.messages), (2e8, 2));
            }
            assert_eq!(r.fabric[1].hosts, vec![2, 3]);
            let doc: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
            assert_eq!(doc["jobs"][1]["hosts"], "2-3");
            assert_eq!(doc["bytes"], 4e8);
            assert!((doc["avg_slowdown"].as_f64().unwrap() - 2.0).abs() < 1e-9);
        }
    }

    #[test]
    fn balanced_grids_as_mpi_dims_create_would_shape_them() {
        assert_eq!(balanced_dims(12, 2), vec![4, 3]);
        assert_eq!(balanced_dims(16, 2), vec![4, 4]);
        assert_eq!(balanced_dims(24, 3), vec![4, 3, 2]);
        assert_eq!(balanced_dims(7, 3), vec![7, 1, 1]);
        assert_eq!(balanced_dims(1, 2), vec![1, 1]);
    }

    fn peers(t: &Trace, r: usize) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let ops = &t.spec.ranks[r];
        for w in ops.windows(2) {
            if let (OpSpec::Isend { dst, .. }, OpSpec::Irecv { src: Peer::Rank(src), .. }) = (&w[0], &w[1]) {
                out.push((*dst, *src));
            }
        }
        out
    }

    #[test]
    fn a_halo_swaps_with_both_neighbours_along_each_dimension_of_its_grid() {
        // 12 processes on a 4 × 3 grid, the last dimension fastest: rank 4 is (1, 1).
        let program = Program { iterations: 1, phases: vec![Phase::Halo { bytes: 8.0, dims: 2 }] };
        let t = program_trace(&program, 12, 0).unwrap();
        // Along the fast dimension (3): (1, 2) = 5 and (1, 0) = 3; along the slow one (4):
        // (2, 1) = 7 and (0, 1) = 1.
        assert_eq!(peers(&t, 4), vec![(5, 3), (3, 5), (7, 1), (1, 7)]);
        // Rank 0 wraps: (0, 1) = 1, (0, 2) = 2; (1, 0) = 3, (3, 0) = 9.
        assert_eq!(peers(&t, 0), vec![(1, 2), (2, 1), (3, 9), (9, 3)]);
        assert!(matches!(t.spec.ranks[0].last(), Some(OpSpec::Waitall)));
        // A 3-D halo of 7 processes: one dimension longer than 1.
        let program = Program { iterations: 1, phases: vec![Phase::Halo { bytes: 8.0, dims: 3 }] };
        assert_eq!(peers(&program_trace(&program, 7, 0).unwrap(), 0), vec![(1, 6), (6, 1)]);
    }

    #[test]
    fn random_pairs_are_a_seeded_matching_drawn_anew_each_iteration() {
        let program = Program { iterations: 3, phases: vec![Phase::Pairs { bytes: 8.0 }] };
        let t = program_trace(&program, 5, 42).unwrap();
        // Every rank: the partners of its swaps, in iteration order; 4 of 5 ranks swap each time.
        let swaps: Vec<Vec<(usize, usize)>> = (0..5).map(|r| peers(&t, r)).collect();
        let total: usize = swaps.iter().map(Vec::len).sum();
        assert_eq!(total, 3 * 4);
        for (r, s) in swaps.iter().enumerate() {
            for &(to, from) in s {
                assert_eq!(to, from);
                assert_ne!(to, r);
                assert!(swaps[to].contains(&(r, r)), "a pairing is mutual");
            }
        }
        assert_eq!(program_trace(&program, 5, 42).unwrap().spec.ranks, t.spec.ranks, "same seed, same pairs");
        assert_ne!(program_trace(&program, 5, 43).unwrap().spec.ranks, t.spec.ranks, "another job, other pairs");
    }

    #[test]
    fn a_program_lowers_to_its_phases_on_every_rank() {
        let program = Program {
            iterations: 2,
            phases: vec![Phase::Compute { seconds: 1.0 }, Phase::Exchange { bytes: 10.0, neighbors: 2 }, Phase::Allreduce { bytes: 8.0 }],
        };
        let t = program_trace(&program, 3, 0).unwrap();
        assert_eq!(t.n_ranks(), 3);
        // compute, 2 × (isend, irecv), waitall, allreduce: 7 ops, twice.
        assert_eq!(t.spec.ranks[0].len(), 14);
        assert!(matches!(t.spec.ranks[1][1], OpSpec::Isend { dst: 2, .. }));
        assert!(matches!(t.spec.ranks[1][2], OpSpec::Irecv { src: Peer::Rank(0), .. }));
    }
}
