//! The CLI's view of a scheduled instance: the schedule, its lower bound and the
//! scheduler's own wall time (without I/O and without the lower bound).

use std::collections::BTreeMap;
use std::time::Instant;

use serde::Serialize;

use super::{lower_bound, Algorithm, Instance, MulticastError, Schedule, Selection, Task};
use crate::error::{check_memory, parse_input, Error, ErrorKind, Format, Result};

impl From<MulticastError> for Error {
    fn from(e: MulticastError) -> Error {
        Error::new(ErrorKind::Multicast, e.field, e.reason)
    }
}

/// Parse and validate an instance from JSON text.
pub fn instance_from_json(text: &str) -> Result<Instance> {
    instance_from_text(text, Format::Json)
}

/// Parse and validate an instance from JSON or TOML text.
pub fn instance_from_text(text: &str, format: Format) -> Result<Instance> {
    let inst: Instance = parse_input(ErrorKind::Multicast, text, format)?;
    inst.validate()?;
    Ok(inst)
}

/// Bytes the schedulers use, measured at about 210-230 per delivery (task records,
/// selections, waiting lists, the schedule) plus the N x M and N x N tables.
fn schedule_memory(inst: &Instance) -> f64 {
    let n = inst.nodes.len() as f64;
    let m = inst.multicasts.len() as f64;
    let matrix = if matches!(inst.transmission, super::Transmission::Matrix(_)) { 16.0 * n * n } else { 0.0 };
    256.0 * inst.deliveries() as f64 + 64.0 * n * m + matrix + 1048576.0
}

/// Bytes generating an instance takes at its peak: the instance (destination lists, the
/// per-pair matrix when mixed) and three times its JSON text (the text grows by doubling,
/// then is copied once to the caller), measured at about 14 bytes of text per delivery
/// and 22 per matrix entry.
fn generate_memory(p: &super::GenParams) -> f64 {
    let n = p.nodes as f64;
    let deliveries = match &p.pattern {
        super::Pattern::Broadcast { .. } => n - 1.0,
        super::Pattern::AllToAll => n * (n - 1.0),
        super::Pattern::Random { sources, destinations } => *sources as f64 * destinations.map_or(n - 1.0, |d| d as f64),
    };
    let pairs = if p.network == super::Network::Mixed { n * n } else { 0.0 };
    let instance = 8.0 * deliveries + 8.0 * pairs + 128.0 * n;
    let text = 16.0 * deliveries + 24.0 * pairs + 256.0 * n;
    instance + 3.0 * text + 1048576.0
}

pub fn algorithm_from_name(name: &str) -> Result<Algorithm> {
    Algorithm::from_name(name).ok_or_else(|| {
        let known: Vec<&str> = Algorithm::ALL.iter().map(|a| a.name()).collect();
        Error::new(ErrorKind::Options, "algorithm", format!("unknown algorithm `{name}` (known: {})", known.join(", ")))
    })
}

#[derive(Debug, Clone)]
pub struct Report {
    pub algorithm: String,
    pub completion_time: f64,
    pub lower_bound: f64,
    /// Wall time of the scheduler alone (s).
    pub scheduling_seconds: f64,
    /// The selection sequence and each node's task list.
    pub schedule: Schedule,
}

/// The `--summary` document, and the head of the full one.
#[derive(Serialize)]
struct Summary<'a> {
    algorithm: &'a str,
    completion_time: f64,
    lower_bound: f64,
    scheduling_seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    execution: Option<Execution<'a>>,
}

/// The schedule's replay on the engine (`--execute MODEL`).
#[derive(Serialize)]
struct Execution<'a> {
    model: &'a str,
    makespan: f64,
}

/// The `--json` document, borrowing the schedule.
#[derive(Serialize)]
struct Full<'a> {
    #[serde(flatten)]
    head: Summary<'a>,
    sequence: &'a [Selection],
    /// Each node's task list, keyed by node id.
    tasks: BTreeMap<usize, &'a [Task]>,
}

impl Report {
    /// Schedule `inst`; `receivers` forces the receiver order of a receiver-first
    /// algorithm (the paper's printed RRS runs need 1, 1, 0, 3, 2, 3, 2).
    pub fn run(inst: &Instance, alg: Algorithm, seed: u64, receivers: Option<&[usize]>) -> Result<Report> {
        inst.validate()?;
        check_memory(ErrorKind::Multicast, "", schedule_memory(inst))?;
        if let Some(order) = receivers {
            check_forced_order(inst, alg, order)?;
        }
        // Validated above: time the scheduler alone.
        let t0 = Instant::now();
        let sched = super::run(inst, alg, seed, receivers.map(|r| r.to_vec()), false);
        let scheduling_seconds = t0.elapsed().as_secs_f64();
        // A scheduler the caller stopped (`util::cancel`) left its schedule unfinished.
        crate::util::cancel::check()?;
        Ok(Report {
            algorithm: alg.name().to_string(),
            completion_time: sched.completion_time,
            lower_bound: lower_bound(inst),
            scheduling_seconds,
            schedule: sched,
        })
    }

    /// The `--json` document; `summary` keeps only algorithm, times and bound.
    pub fn to_json(&self, summary: bool) -> String {
        let mut out = Vec::new();
        self.write_json(&mut out, summary, None).expect("memory writes");
        String::from_utf8(out).expect("JSON is UTF-8")
    }

    /// Write the `--json` document to `out` as it is serialised (no copy of it in memory);
    /// `execution` adds the engine replay's model and makespan.
    pub fn write_json<W: std::io::Write>(&self, out: W, summary: bool, execution: Option<(&str, f64)>) -> std::io::Result<()> {
        let head = Summary {
            algorithm: &self.algorithm,
            completion_time: self.completion_time,
            lower_bound: self.lower_bound,
            scheduling_seconds: self.scheduling_seconds,
            execution: execution.map(|(model, makespan)| Execution { model, makespan }),
        };
        if summary {
            serde_json::to_writer_pretty(out, &head)
        } else {
            let tasks = self.schedule.tasks.iter().map(Vec::as_slice).enumerate().collect();
            serde_json::to_writer_pretty(out, &Full { head, sequence: &self.schedule.sequence, tasks })
        }
        .map_err(std::io::Error::from)
    }
}

/// [`super::generate`] after checking the parameters (a clear error instead of a panic).
pub fn generate_checked(p: &super::GenParams, seed: u64) -> Result<Instance> {
    let bad = |field: &str, reason: String| Err(Error::new(ErrorKind::Options, field, reason));
    if p.nodes < 2 {
        return bad("nodes", format!("need at least 2 nodes, got {}", p.nodes));
    }
    if p.nodes > super::MAX_NODES {
        return bad("nodes", format!("{} nodes, at most {} (2^12) are allowed", p.nodes, super::MAX_NODES));
    }
    match &p.pattern {
        super::Pattern::Broadcast { source: Some(s) } if *s >= p.nodes => {
            return bad("source", format!("node {s} out of range (0..{})", p.nodes))
        }
        super::Pattern::Random { sources, destinations } => {
            if *sources == 0 || *sources > p.nodes {
                return bad("sources", format!("must be in 1..={}, got {sources}", p.nodes));
            }
            if let Some(d) = destinations {
                if *d == 0 || *d >= p.nodes {
                    return bad("destinations", format!("must be in 1..={}, got {d}", p.nodes - 1));
                }
            }
        }
        _ => {}
    }
    check_memory(ErrorKind::Options, "nodes", generate_memory(p))?;
    let inst = super::generate(p, seed);
    inst.validate()?;
    Ok(inst)
}

/// A forced receiver order must name, at each step, a node still waiting for a message.
fn check_forced_order(inst: &Instance, alg: Algorithm, order: &[usize]) -> Result<()> {
    let bad = |reason: String| Err(Error::new(ErrorKind::Options, "receivers", reason));
    if !alg.is_receiver_first() {
        return bad(format!("{alg} does not pick receivers first"));
    }
    let mut waiting = vec![0usize; inst.nodes.len()];
    for m in &inst.multicasts {
        for &d in &m.destinations {
            waiting[d] += 1;
        }
    }
    let total: usize = waiting.iter().sum();
    if order.len() != total {
        return bad(format!("gives {} receivers for {total} deliveries", order.len()));
    }
    for (k, &j) in order.iter().enumerate() {
        if j >= waiting.len() || waiting[j] == 0 {
            return bad(format!("step {k}: node {j} waits for no message"));
        }
        waiting[j] -= 1;
    }
    Ok(())
}
