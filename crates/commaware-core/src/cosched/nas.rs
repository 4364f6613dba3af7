//! A seeded NAS-like workload generator calibrated to paper 002 (§5.1 and Tables 1, 2).
//!
//! Where each number comes from (P = paper 002; N = the NAS Parallel Benchmarks 2.3
//! problem definitions; A = our assumption, to be revisited by the time-sharing slice):
//!
//! | benchmark | intensity (P T1) | time alone on 16 procs, s (P T1) | processes (P §5.1) | iterations (N; A for sPPM, BS95) |
//! |-----------|------------------|----------------------------------|--------------------|-------------------------------|
//! | CG  | high     | A 1.3, B 49.2, C 186.0   | 4, 8, 16 | 15, 75, 75 (x25 inner steps) |
//! | IS  | high     | A 1.0, B 2.4, C 10.9     | 4, 8, 16 | 10 |
//! | SP  | medium   | A 34.5, B 152.5, C 607.1 | 4, 9, 16 | 400 |
//! | MG  | medium   | A 2.4, B 61.5, C 191.0   | 4, 8, 16 | 4, 20, 20 |
//! | BT  | low      | A 53.1, B 435.3, C 995.4 | 4, 9, 16 | 200 |
//! | LU  | low      | A 32.2, B 148.7, C 604.9 | 4, 8, 16 | 250 |
//! | EP  | very low | A 7.9, B 31.3, C 126.2   | 4, 8, 16 | 1 |
//! | sPPM | low     | 2,726 (P T1b)            | 4, 8, 16 | 100 (A) |
//! | BlockSolve95 | medium | 941 (P T1b)       | 4, 8, 16 | 100 (A) |
//!
//! FT is left out as in the paper (§5.1). On p < 16 processes the time alone is
//! T16·16/p (the rule). The fraction of the time alone spent communicating is
//! the paper's qualitative intensity turned into a number (A): high 0.40, medium 0.20,
//! low 0.08; "very low" (EP) is only its final reductions. Each iteration's compute is
//! (1 − fraction)·T/iterations, split over the compute phases by their weights; its
//! communication time is fraction·T/iterations: fixed-size phases (scalar reductions, IS's
//! bucket counts) cost what the network gives them, and the rest is shared by the
//! exchange and all-to-all phases by weight, their message sizes chosen so that alone on
//! the paper's network (9.7 µs one-way latency, P §5.1; 250 MB/s, Myrinet-2000's 2 Gb/s
//! link rate, A) they take that time. The phase structure of each benchmark follows N
//! (see [`profile`] and docs/cosched.md).
//!
//! Memory per process (MB = 2^20 bytes): Table 2 gives class C for ten configurations; each
//! benchmark's values fit M(p) = a + b/p (SP: a = 30, b = 1296, within 2 MB of the
//! table; BT: two points; MG, IS: exact with a = 0), and BT on 4 and MG on 4 processes
//! need more than the 900 MB a node leaves to jobs, which is why Table 2 lacks them.
//! Table 2's configurations use its values exactly; the others the fit. CG, LU, EP,
//! sPPM and BlockSolve95 have no Table 2 row: their (a, b) are assumptions (A). Classes
//! A and B scale b by their data size relative to class C (N: grid points for SP, BT,
//! LU, MG; keys for IS; nonzeros for CG), which keeps every class A and B job under
//! 300 MB per process, so three fit in 900 MB (MPL 3 without swapping, as Figs. 3-6 need).
//!
//! Arrivals: the first job at t = 0, then exponential inter-arrival times of the given
//! mean (P §5.1). Each job draws, in this order from one SplitMix64 stream: its
//! inter-arrival time (not for the first job), its benchmark (uniform over the mix), its
//! class (uniform over the classes given; none for sPPM and BlockSolve95) and its process
//! count (uniform over the benchmark's). Requested time = time alone (exact estimates).

use serde_json::json;

use crate::error::{Error, ErrorKind, Result};
use crate::util::rng::SplitMix64;

use super::workload::{Job, Phase, Program, WorkloadSpec};

/// One-way latency measured on the paper's cluster, s (§5.1).
pub const LATENCY_S: f64 = 9.7e-6;
/// Bandwidth assumed for sizing messages, bytes/s (Myrinet-2000's 2 Gb/s link; the paper
/// does not give it).
pub const BANDWIDTH_BYTES_S: f64 = 250e6;

/// Communication intensity (Table 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intensity {
    High,
    Medium,
    Low,
    VeryLow,
}

impl Intensity {
    /// Fraction of the time alone spent communicating (assumed; see the module doc).
    pub fn comm_fraction(self) -> f64 {
        match self {
            Intensity::High => 0.40,
            Intensity::Medium => 0.20,
            Intensity::Low => 0.08,
            Intensity::VeryLow => 0.0,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Intensity::High => "high",
            Intensity::Medium => "medium",
            Intensity::Low => "low",
            Intensity::VeryLow => "very low",
        }
    }
}

/// A benchmark of Table 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Benchmark {
    pub name: &'static str,
    pub intensity: Intensity,
    /// Time alone on 16 processes for classes A, B, C (Table 1a), or the one time (1b).
    pub t16_s: [f64; 3],
    /// Has problem classes (the NAS benchmarks) or one size (sPPM, BlockSolve95).
    pub classed: bool,
    /// Process counts it runs on (§5.1: BT and SP take squares).
    pub procs: [u64; 3],
    /// Iterations of the main loop per class (NPB 2.3; assumed for sPPM and BlockSolve95).
    pub iterations: [u64; 3],
    /// Memory per process M(p) = a + b·scale/p, MB, with the class C (a, b).
    pub mem_a_mb: f64,
    pub mem_b_mb: f64,
    /// Data size of classes A and B relative to C (NPB problem sizes).
    pub class_scale: [f64; 3],
    /// Whether (a, b) come from Table 2 (else assumed).
    pub mem_from_table2: bool,
}

const SQUARES: [u64; 3] = [4, 9, 16];
const POWERS: [u64; 3] = [4, 8, 16];
/// (64/162)^3 and (102/162)^3: grid points of classes A and B over class C (SP, BT, LU).
const GRID_SCALE: [f64; 3] = [0.061_662_6, 0.249_620_4, 1.0];

/// The benchmarks of Table 1 (FT is not used by the paper).
pub const BENCHMARKS: [Benchmark; 9] = [
    Benchmark {
        name: "CG",
        intensity: Intensity::High,
        t16_s: [1.3, 49.2, 186.0],
        classed: true,
        procs: POWERS,
        iterations: [15 * 25, 75 * 25, 75 * 25],
        mem_a_mb: 0.0,
        mem_b_mb: 1200.0,
        // nonzeros ~ na·(nonzer+1)^2: 14000·144, 75000·196, 150000·256
        class_scale: [0.052_5, 0.382_8, 1.0],
        mem_from_table2: false,
    },
    Benchmark {
        name: "IS",
        intensity: Intensity::High,
        t16_s: [1.0, 2.4, 10.9],
        classed: true,
        procs: POWERS,
        iterations: [10, 10, 10],
        mem_a_mb: 0.0,
        mem_b_mb: 1712.0,
        // keys 2^23, 2^25, 2^27
        class_scale: [0.0625, 0.25, 1.0],
        mem_from_table2: true,
    },
    Benchmark {
        name: "SP",
        intensity: Intensity::Medium,
        t16_s: [34.5, 152.5, 607.1],
        classed: true,
        procs: SQUARES,
        iterations: [400, 400, 400],
        mem_a_mb: 30.0,
        mem_b_mb: 1296.0,
        class_scale: GRID_SCALE,
        mem_from_table2: true,
    },
    Benchmark {
        name: "MG",
        intensity: Intensity::Medium,
        t16_s: [2.4, 61.5, 191.0],
        classed: true,
        procs: POWERS,
        iterations: [4, 20, 20],
        mem_a_mb: 0.0,
        mem_b_mb: 3648.0,
        // 256^3, 256^3, 512^3
        class_scale: [0.125, 0.125, 1.0],
        mem_from_table2: true,
    },
    Benchmark {
        name: "BT",
        intensity: Intensity::Low,
        t16_s: [53.1, 435.3, 995.4],
        classed: true,
        procs: SQUARES,
        iterations: [200, 200, 200],
        // through (9, 473) and (16, 272): b = 201 / (1/9 - 1/16), a = 272 - b/16
        mem_a_mb: 272.0 - 201.0 / (1.0 / 9.0 - 1.0 / 16.0) / 16.0,
        mem_b_mb: 201.0 / (1.0 / 9.0 - 1.0 / 16.0),
        class_scale: GRID_SCALE,
        mem_from_table2: true,
    },
    Benchmark {
        name: "LU",
        intensity: Intensity::Low,
        t16_s: [32.2, 148.7, 604.9],
        classed: true,
        procs: POWERS,
        iterations: [250, 250, 250],
        // assumed: SP's (same grid, five unknowns per point)
        mem_a_mb: 30.0,
        mem_b_mb: 1296.0,
        class_scale: GRID_SCALE,
        mem_from_table2: false,
    },
    Benchmark {
        name: "EP",
        intensity: Intensity::VeryLow,
        t16_s: [7.9, 31.3, 126.2],
        classed: true,
        procs: POWERS,
        iterations: [1, 1, 1],
        mem_a_mb: 16.0,
        mem_b_mb: 0.0,
        class_scale: [1.0, 1.0, 1.0],
        mem_from_table2: false,
    },
    Benchmark {
        name: "sPPM",
        intensity: Intensity::Low,
        t16_s: [2726.0; 3],
        classed: false,
        procs: POWERS,
        iterations: [100; 3],
        mem_a_mb: 20.0,
        mem_b_mb: 1000.0,
        class_scale: [1.0; 3],
        mem_from_table2: false,
    },
    Benchmark {
        name: "BlockSolve95",
        intensity: Intensity::Medium,
        t16_s: [941.0; 3],
        classed: false,
        procs: POWERS,
        iterations: [100; 3],
        mem_a_mb: 10.0,
        mem_b_mb: 600.0,
        class_scale: [1.0; 3],
        mem_from_table2: false,
    },
];

/// Table 2: class C maximum memory per process, MB, of the ten configurations it lists.
pub const TABLE2: [(&str, u64, f64); 10] = [
    ("SP", 4, 354.0),
    ("SP", 9, 176.0),
    ("SP", 16, 111.0),
    ("BT", 9, 473.0),
    ("BT", 16, 272.0),
    ("MG", 8, 456.0),
    ("MG", 16, 228.0),
    ("IS", 4, 428.0),
    ("IS", 8, 214.0),
    ("IS", 16, 107.0),
];

pub fn benchmark(name: &str) -> Option<&'static Benchmark> {
    BENCHMARKS.iter().find(|b| b.name == name)
}

/// Which benchmarks a workload draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mix {
    /// The seven NAS benchmarks (Figs. 3, 5).
    Nas,
    /// sPPM, BlockSolve95 and LU (Fig. 4's long-running mix).
    Long,
    /// Table 2's ten class C configurations (Fig. 7's memory experiment).
    Table2,
}

impl Mix {
    pub const NAMES: &'static [&'static str] = &["nas", "long", "table2"];

    pub fn from_name(name: &str) -> Result<Mix> {
        match name {
            "nas" => Ok(Mix::Nas),
            "long" => Ok(Mix::Long),
            "table2" => Ok(Mix::Table2),
            _ => Err(Error::new(ErrorKind::Options, "mix", format!("unknown mix `{name}` (known: {})", Self::NAMES.join(", ")))),
        }
    }

    fn benchmarks(self) -> Vec<&'static Benchmark> {
        let names: &[&str] = match self {
            Mix::Nas => &["CG", "IS", "SP", "MG", "BT", "LU", "EP"],
            Mix::Long => &["sPPM", "BlockSolve95", "LU"],
            Mix::Table2 => &[],
        };
        names.iter().map(|n| benchmark(n).expect("known benchmark")).collect()
    }
}

/// Parameters of [`generate`].
#[derive(Debug, Clone, PartialEq)]
pub struct NasParams {
    pub jobs: usize,
    /// Mean inter-arrival time, s (100 heavy, 250 light, 500 long-running: §5.2).
    pub interarrival_s: f64,
    pub seed: u64,
    /// Problem classes among `A`, `B`, `C` (default A and B).
    pub classes: Vec<String>,
    pub mix: Mix,
}

/// Most jobs one generated workload may have.
pub const MAX_GENERATED_JOBS: usize = 1 << 18;

fn class_index(c: &str) -> Option<usize> {
    ["A", "B", "C"].iter().position(|k| *k == c)
}

/// Memory per process, MB, of `b` in class `class` (0 = A) on `p` processes.
pub fn memory_mb(b: &Benchmark, class: usize, p: u64) -> f64 {
    if class == 2 {
        if let Some(&(_, _, m)) = TABLE2.iter().find(|(n, q, _)| *n == b.name && *q == p) {
            return m;
        }
    }
    b.mem_a_mb + b.mem_b_mb * b.class_scale[class] / p as f64
}

/// Time alone of `b` in class `class` on `p` processes, s: T16·16/p.
pub fn time_alone_s(b: &Benchmark, class: usize, p: u64) -> f64 {
    b.t16_s[class] * 16.0 / p as f64
}

/// Time of one communication phase alone on the network, s, for one process of a
/// `p`-process job: exchange k·(L + bytes/BW); allreduce, bcast and barrier
/// ⌈log2 p⌉ rounds; alltoall p − 1 rounds; a halo of d dimensions as an exchange with
/// min(2d, p − 1) neighbours, random pairs as one with 1.
pub fn phase_comm_s(phase: &Phase, p: u64) -> f64 {
    let msg = |bytes: f64| LATENCY_S + bytes / BANDWIDTH_BYTES_S;
    let rounds = (p.max(1) as f64).log2().ceil();
    match *phase {
        Phase::Compute { .. } | Phase::ComputeShare => 0.0,
        Phase::Exchange { bytes, neighbors } => neighbors as f64 * msg(bytes),
        Phase::Barrier => rounds * msg(0.0),
        Phase::Bcast { bytes } | Phase::Allreduce { bytes } => rounds * msg(bytes),
        Phase::Alltoall { bytes } => (p.saturating_sub(1)) as f64 * msg(bytes),
        Phase::Halo { bytes, dims } => (2 * u64::from(dims)).min(p.saturating_sub(1)) as f64 * msg(bytes),
        Phase::Pairs { bytes } => (p.saturating_sub(1)).min(1) as f64 * msg(bytes),
    }
}

/// A phase of a benchmark's iteration before sizing.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Compute with this share of the iteration's compute time.
    Compute(f64),
    /// Exchange with up to this many neighbours, with this share of the variable
    /// communication time.
    Exchange(u32, f64),
    /// All-to-all with this share of the variable communication time.
    Alltoall(f64),
    /// Allreduce of a fixed size, bytes.
    Allreduce(f64),
}

/// One iteration of each benchmark (NPB 2.3 structure, simplified):
/// - CG: sparse matrix-vector product with an exchange between row/column partners,
///   two dot products (8-byte allreduces) per inner step;
/// - IS: local bucket sort, allreduce of the 2^10 bucket sizes (4 KB), key all-to-all;
/// - SP, BT: ADI: face exchange with the 6 neighbours, then x, y and z line solves each
///   with a pipelined exchange with 2 neighbours;
/// - MG: V-cycle: two smoothing/residual steps each with a 6-neighbour halo exchange,
///   and the norm (allreduce of 16 bytes);
/// - LU: SSOR lower and upper sweeps, each a pipelined exchange with 2 neighbours, and
///   the residual norms (allreduce of 40 bytes);
/// - EP: generate and count, then three allreduces (sums, 8 B each, and the 10 counts);
/// - sPPM: hydrodynamics step, 6-neighbour halo exchange, time step allreduce (A);
/// - BlockSolve95: sparse CG step: exchange with 4 neighbours, two dot products (A).
fn profile(name: &str) -> Vec<Step> {
    use Step::*;
    match name {
        "CG" => vec![Compute(0.5), Exchange(2, 1.0), Compute(0.5), Allreduce(8.0), Allreduce(8.0)],
        "IS" => vec![Compute(1.0), Allreduce(4096.0), Alltoall(1.0)],
        "SP" | "BT" => vec![
            Compute(0.25),
            Exchange(6, 0.4),
            Compute(0.25),
            Exchange(2, 0.2),
            Compute(0.25),
            Exchange(2, 0.2),
            Compute(0.25),
            Exchange(2, 0.2),
        ],
        "MG" => vec![Compute(0.5), Exchange(6, 0.5), Compute(0.5), Exchange(6, 0.5), Allreduce(16.0)],
        "LU" => vec![Compute(0.5), Exchange(2, 0.5), Compute(0.5), Exchange(2, 0.5), Allreduce(40.0)],
        "EP" => vec![Compute(1.0), Allreduce(8.0), Allreduce(8.0), Allreduce(80.0)],
        "sPPM" => vec![Compute(1.0), Exchange(6, 1.0), Allreduce(8.0)],
        "BlockSolve95" => vec![Compute(1.0), Exchange(4, 1.0), Allreduce(8.0), Allreduce(8.0)],
        _ => unreachable!("every benchmark has a profile"),
    }
}

/// The program of `b` in class `class` on `p` processes (see the module doc).
pub fn program(b: &Benchmark, class: usize, p: u64) -> Program {
    sized_program(&profile(b.name), b.iterations[class], time_alone_s(b, class, p), b.intensity.comm_fraction(), p)
}

/// Iteration length of the default program, s (see [`default_program`]).
pub const DEFAULT_ITERATION_S: f64 = 1.0;
/// Most iterations of the default program.
pub const DEFAULT_MAX_ITERATIONS: u64 = 10_000;

/// The default phase profile of a job that has no program (an SWF job, or a JSON job
/// without `program`) under the time-sharing policies: a medium-intensity (0.20) iterative
/// solver of BlockSolve95's shape (A): per iteration a compute burst, an exchange with 2
/// neighbours, an 8-byte allreduce; one iteration per second of `runtime_s` (at least 1, at
/// most 10,000), sized so that alone it takes `runtime_s`. A 1-process job only computes.
pub fn default_program(runtime_s: f64, procs: u64) -> Program {
    let iterations = ((runtime_s / DEFAULT_ITERATION_S).round() as u64).clamp(1, DEFAULT_MAX_ITERATIONS);
    if procs < 2 {
        return Program { iterations, phases: vec![Phase::Compute { seconds: runtime_s / iterations as f64 }] };
    }
    let steps = [Step::Compute(1.0), Step::Exchange(2, 1.0), Step::Allreduce(8.0)];
    sized_program(&steps, iterations, runtime_s, Intensity::Medium.comm_fraction(), procs)
}

/// `steps` sized to take `t` s alone over `iterations` iterations, a fraction `f` of it
/// communicating, on `p` processes.
fn sized_program(steps: &[Step], iterations: u64, t: f64, f: f64, p: u64) -> Program {
    let compute_per_iter = (1.0 - f) * t / iterations as f64;
    let comm_per_iter = f * t / iterations as f64;
    let neighbors = |k: u32| (k as u64).min(p.saturating_sub(1)).max(1) as u32;
    // Fixed-size phases cost what they cost; the rest of the time is the variable phases'.
    let fixed: f64 = steps
        .iter()
        .map(|s| match *s {
            Step::Allreduce(bytes) => phase_comm_s(&Phase::Allreduce { bytes }, p),
            _ => 0.0,
        })
        .sum();
    let variable = (comm_per_iter - fixed).max(0.0);
    let phases = steps
        .iter()
        .map(|s| match *s {
            Step::Compute(w) => Phase::Compute { seconds: w * compute_per_iter },
            Step::Allreduce(bytes) => Phase::Allreduce { bytes },
            Step::Exchange(k, w) => {
                let k = neighbors(k);
                let per_msg = w * variable / k as f64;
                Phase::Exchange { bytes: ((per_msg - LATENCY_S).max(0.0) * BANDWIDTH_BYTES_S).round(), neighbors: k }
            }
            Step::Alltoall(w) => {
                let per_msg = w * variable / (p - 1) as f64;
                Phase::Alltoall { bytes: ((per_msg - LATENCY_S).max(0.0) * BANDWIDTH_BYTES_S).round() }
            }
        })
        .collect();
    Program { iterations, phases }
}

/// Exponential variate of the given mean (inverse transform of a uniform in [0, 1)).
fn exponential(rng: &mut SplitMix64, mean: f64) -> f64 {
    -mean * (1.0 - rng.unit()).ln()
}

/// Generate a workload (see the module doc for every number's source).
pub fn generate(params: &NasParams) -> Result<WorkloadSpec> {
    let opt = |field: &str, reason: String| Error::new(ErrorKind::Options, field, reason);
    if params.jobs == 0 || params.jobs > MAX_GENERATED_JOBS {
        return Err(opt("jobs", format!("must be in 1..={MAX_GENERATED_JOBS}, got {}", params.jobs)));
    }
    let ia = params.interarrival_s;
    if !(ia.is_finite() && ia > 0.0 && ia <= 1e9) {
        return Err(opt("interarrival", format!("must be > 0 s and at most 1e9 s, got {}", crate::error::fmt_num(ia))));
    }
    let mut classes = Vec::new();
    for c in &params.classes {
        let k = class_index(c).ok_or_else(|| opt("classes", format!("unknown class `{c}` (known: A, B, C)")))?;
        if !classes.contains(&k) {
            classes.push(k);
        }
    }
    if classes.is_empty() && params.mix != Mix::Table2 {
        return Err(opt("classes", "give at least one class (A, B, C)".into()));
    }
    let mut rng = SplitMix64::new(params.seed);
    let pool = params.mix.benchmarks();
    let mut jobs = Vec::with_capacity(params.jobs);
    let mut t = 0.0;
    for i in 0..params.jobs {
        if i > 0 {
            t += exponential(&mut rng, ia);
        }
        let (b, class, p) = if params.mix == Mix::Table2 {
            let (name, p, _) = TABLE2[rng.below_usize(TABLE2.len())];
            (benchmark(name).expect("Table 2 names a benchmark"), 2, p)
        } else {
            let b = pool[rng.below_usize(pool.len())];
            let class = if b.classed { classes[rng.below_usize(classes.len())] } else { 0 };
            let p = b.procs[rng.below_usize(b.procs.len())];
            (b, class, p)
        };
        let runtime = time_alone_s(b, class, p);
        jobs.push(Job {
            id: i as u64 + 1,
            submit_s: t,
            procs: p,
            memory_mb: memory_mb(b, class, p),
            runtime_s: runtime,
            requested_s: Some(runtime),
            benchmark: Some(b.name.to_string()),
            class: b.classed.then(|| ["A", "B", "C"][class].to_string()),
            program: Some(program(b, class, p)),
            trace: None,
            start_s: None,
            hosts: None,
        });
    }
    let class_names: Vec<&str> = classes.iter().map(|&k| ["A", "B", "C"][k]).collect();
    let generator = json!({
        "name": "nas",
        "mix": Mix::NAMES[[Mix::Nas, Mix::Long, Mix::Table2].iter().position(|m| *m == params.mix).unwrap_or(0)],
        "jobs": params.jobs,
        "interarrival_s": ia,
        "seed": params.seed,
        "classes": if params.mix == Mix::Table2 { vec!["C"] } else { class_names },
        "latency_s": LATENCY_S,
        "bandwidth_bytes_s": BANDWIDTH_BYTES_S,
        "comm_fraction": {"high": 0.40, "medium": 0.20, "low": 0.08, "very low": 0.0},
    });
    let spec = WorkloadSpec { generator: Some(generator), default_program: None, jobs };
    spec.validate()?;
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(jobs: usize, mix: Mix, classes: &[&str]) -> NasParams {
        NasParams { jobs, interarrival_s: 100.0, seed: 1, classes: classes.iter().map(|s| s.to_string()).collect(), mix }
    }

    #[test]
    fn table1_times_and_the_16_over_p_rule() {
        let bt = benchmark("BT").unwrap();
        assert_eq!(time_alone_s(bt, 1, 16), 435.3);
        assert!((time_alone_s(bt, 1, 9) - 435.3 * 16.0 / 9.0).abs() < 1e-9);
        assert_eq!(time_alone_s(benchmark("sPPM").unwrap(), 0, 16), 2726.0);
        assert_eq!(time_alone_s(benchmark("BlockSolve95").unwrap(), 0, 4), 941.0 * 4.0);
    }

    #[test]
    fn table2_memory_and_fits() {
        for (name, p, m) in TABLE2 {
            let b = benchmark(name).unwrap();
            assert_eq!(memory_mb(b, 2, p), m);
            // The fit is within 2.5 MB of every Table 2 value.
            let fit = b.mem_a_mb + b.mem_b_mb / p as f64;
            assert!((fit - m).abs() < 2.5, "{name} {p}: fit {fit} vs {m}");
        }
        // BT on 4 and MG on 4 processes do not fit in 900 MB: not in Table 2.
        assert!(memory_mb(benchmark("BT").unwrap(), 2, 4) > 900.0);
        assert!(memory_mb(benchmark("MG").unwrap(), 2, 4) > 900.0);
        // Every class A and B configuration fits three times in 900 MB (MPL 3).
        for b in &BENCHMARKS {
            for class in [0, 1] {
                for p in b.procs {
                    assert!(3.0 * memory_mb(b, class, p) <= 900.0, "{} {class} {p}", b.name);
                }
            }
        }
    }

    #[test]
    fn programs_take_the_time_alone() {
        for b in &BENCHMARKS {
            for class in 0..3 {
                for p in b.procs {
                    let prog = program(b, class, p);
                    let per_iter: f64 = prog
                        .phases
                        .iter()
                        .map(|ph| match ph {
                            Phase::Compute { seconds } => *seconds,
                            other => phase_comm_s(other, p),
                        })
                        .sum();
                    let total = per_iter * prog.iterations as f64;
                    let t = time_alone_s(b, class, p);
                    // Equal (message sizes are whole bytes: within 0.5 B per message) unless the
                    // fixed-size phases alone exceed the budget (a few µs).
                    let fixed_excess = prog.iterations as f64 * 2e-4;
                    assert!(total >= t - prog.iterations as f64 * 1e-7 && total <= t + fixed_excess, "{} {class} {p}: {total} vs {t}", b.name);
                }
            }
        }
        // BT and SP take squares, the others powers of two.
        assert_eq!(benchmark("SP").unwrap().procs, [4, 9, 16]);
        assert_eq!(benchmark("CG").unwrap().procs, [4, 8, 16]);
    }

    #[test]
    fn seeded_and_deterministic() {
        let a = generate(&params(100, Mix::Nas, &["A", "B"])).unwrap();
        let b = generate(&params(100, Mix::Nas, &["A", "B"])).unwrap();
        assert_eq!(a, b);
        let c = generate(&NasParams { seed: 2, ..params(100, Mix::Nas, &["A", "B"]) }).unwrap();
        assert_ne!(a, c);
        assert_eq!(a.jobs[0].submit_s, 0.0);
        assert!(a.jobs.iter().all(|j| matches!(j.class.as_deref(), Some("A" | "B"))));
        assert!(a.jobs.iter().all(|j| j.benchmark.as_deref() != Some("sPPM")));
        let mean = a.jobs.last().unwrap().submit_s / 99.0;
        assert!((50.0..200.0).contains(&mean), "{mean}");
        // Square benchmarks get squares.
        for j in &a.jobs {
            let sq = matches!(j.benchmark.as_deref(), Some("BT" | "SP"));
            assert!(if sq { [4, 9, 16].contains(&j.procs) } else { [4, 8, 16].contains(&j.procs) }, "{j:?}");
        }
        let long = generate(&params(50, Mix::Long, &["B", "C"])).unwrap();
        assert!(long.jobs.iter().all(|j| matches!(j.benchmark.as_deref(), Some("sPPM" | "BlockSolve95" | "LU"))));
        let t2 = generate(&params(20, Mix::Table2, &[])).unwrap();
        assert!(t2.jobs.iter().all(|j| TABLE2.iter().any(|(n, p, m)| Some(*n) == j.benchmark.as_deref() && *p == j.procs && *m == j.memory_mb)));
    }

    #[test]
    fn bad_parameters() {
        let e = generate(&params(0, Mix::Nas, &["A"])).unwrap_err();
        assert_eq!(e.field, "jobs");
        let e = generate(&params(5, Mix::Nas, &["D"])).unwrap_err();
        assert_eq!(e.field, "classes");
        assert!(e.reason.contains("`D`"), "{e}");
        let e = generate(&NasParams { interarrival_s: -1.0, ..params(5, Mix::Nas, &["A"]) }).unwrap_err();
        assert_eq!(e.field, "interarrival");
        assert!(Mix::from_name("short").is_err());
    }
}
