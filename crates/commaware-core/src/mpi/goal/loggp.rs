//! LogGOPSim's LogGP simulation of a GOAL schedule, event for event (LogGOPSim.cpp at commit
//! 76451de; SEMANTICS.md §2 gives each rule with its source line). Each rank is a host with
//! CPUs and NICs; a send occupies the sender's CPU for o + (s−1)·O and its NIC for g + (s−1)·G;
//! the message reaches the receiver o + L after the send started and occupies the receiver's
//! CPU for o + max((s−1)·O, (s−1)·G) and its NIC for g + (s−1)·G once both are free. A message
//! of more than S bytes (rendezvous) holds the sender until it is matched. A host ends when its
//! CPUs are last busy. Times are integers in the schedule's unit, with LogGOPSim's unsigned
//! 64-bit wrapping (which only a 0-byte message reaches, §2.9).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::sort::std_sort;
use super::{GoalKind, GoalSchedule, ANY};
use crate::mpi::graph::release_successors;
use crate::error::{Error, ErrorKind, Result};
use crate::util::cancel;

/// LogGP's parameters in the schedule's time unit (G and O per byte; S in bytes), as
/// LogGOPSim's `-L -o -g -G -O -S`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoggpParams {
    /// L: latency of a message on the wire.
    pub latency: u64,
    /// o: CPU overhead per message, on each side.
    pub overhead: u64,
    /// g: NIC gap per message, on each side.
    pub gap: u64,
    /// G: NIC gap per byte (and the receiver's CPU, LogGOPSim §2.8).
    pub gap_per_byte: u64,
    /// O: CPU overhead per byte.
    pub overhead_per_byte: u64,
    /// S: a message of more than S bytes uses the rendezvous protocol.
    pub eager_limit: u64,
}

impl Default for LoggpParams {
    /// LogGOPSim's defaults (`loggopsim_cmdline.ggo`).
    fn default() -> Self {
        LoggpParams { latency: 2500, overhead: 1500, gap: 1000, gap_per_byte: 6, overhead_per_byte: 0, eager_limit: 65535 }
    }
}

impl LoggpParams {
    /// The parameter names, as LogGOPSim's flags.
    pub const NAMES: [&'static str; 6] = ["L", "o", "g", "G", "O", "S"];

    /// LogGOPSim's defaults with `values` over them, given in seconds (G and O in seconds per
    /// byte, S in bytes), in whole units of `unit_seconds` (LogGOPSim's times are integers).
    pub fn from_seconds(values: &[(String, f64)], unit_seconds: f64) -> Result<Self> {
        let mut p = LoggpParams::default();
        for (name, v) in values {
            let field = name.clone();
            let slot = match name.as_str() {
                "L" => &mut p.latency,
                "o" => &mut p.overhead,
                "g" => &mut p.gap,
                "G" => &mut p.gap_per_byte,
                "O" => &mut p.overhead_per_byte,
                "S" => &mut p.eager_limit,
                _ => return Err(Error::new(ErrorKind::Options, field, format!("unknown loggp parameter (known: {})", Self::NAMES.join(", ")))),
            };
            let units = if name == "S" { *v } else { v / unit_seconds };
            let whole = units.round();
            if !(v.is_finite() && *v >= 0.0 && whole < 2f64.powi(63)) {
                return Err(Error::new(ErrorKind::Options, field, format!("must be a finite number >= 0, got {v}")));
            }
            if (units - whole).abs() > 1e-6 * whole.max(1.0) {
                let what = if name == "S" { "bytes".to_string() } else { format!("time units of {unit_seconds} s (LogGOPSim's times are integers)") };
                return Err(Error::new(ErrorKind::Options, field, format!("{v} is not a whole number of {what}")));
            }
            *slot = whole as u64;
        }
        Ok(p)
    }

    /// (name, value) in seconds (G and O per byte, S in bytes).
    pub fn to_seconds(&self, unit_seconds: f64) -> [(&'static str, f64); 6] {
        let t = |v: u64| v as f64 * unit_seconds;
        [
            ("L", t(self.latency)),
            ("o", t(self.overhead)),
            ("g", t(self.gap)),
            ("G", t(self.gap_per_byte)),
            ("O", t(self.overhead_per_byte)),
            ("S", self.eager_limit as f64),
        ]
    }
}

/// A host whose match queues were not empty at the end (LogGOPSim then prints no times).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unmatched {
    pub host: u32,
    /// Receives posted and never matched.
    pub receives: u32,
    /// Messages arrived and never received.
    pub messages: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LoggpResult {
    /// Per host: the time its CPUs are last busy (LogGOPSim's `Host i: T`).
    pub ends: Vec<u64>,
    /// LogGOPSim's event counter (insertion stamps handed out).
    pub events: u64,
    /// Hosts with unmatched receives or messages (empty for a run that completed).
    pub unmatched: Vec<Unmatched>,
    /// Operations that never ran (a dependency never completed).
    pub not_run: u64,
}

const SEND: u8 = GoalKind::Send as u8;
const RECV: u8 = GoalKind::Recv as u8;
const CALC: u8 = GoalKind::Calc as u8;
const MSG: u8 = 4;

/// An event: an operation of `host` (or, for a message, its arrival at `host` from `target`).
#[derive(Debug, Clone, Copy)]
struct Ev {
    time: u64,
    ts: u64,
    size: u64,
    host: u32,
    target: u32,
    tag: u32,
    offset: u32,
    kind: u8,
    cpu: u8,
    nic: u8,
}

impl PartialEq for Ev {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.ts) == (other.time, other.ts)
    }
}
impl Eq for Ev {}
impl Ord for Ev {
    /// Reversed: the heap pops the smallest time, then the smallest stamp (`aqcompare_func`).
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.ts).cmp(&(self.time, self.ts))
    }
}
impl PartialOrd for Ev {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// An entry of a receive queue (a posted receive) or unexpected queue (an arrived message).
#[derive(Debug, Clone, Copy)]
struct Entry {
    src: u32,
    tag: u32,
    offset: u32,
}

/// Removes and returns the first entry matching (`src`, `tag`); wildcards count on both sides
/// (`LIST_MATCH`, SEMANTICS.md §2.7).
fn take_match(queue: &mut Vec<Entry>, src: u32, tag: u32) -> Option<Entry> {
    let i = queue.iter().position(|e| (src == ANY || e.src == ANY || e.src == src) && (tag == ANY || e.tag == ANY || e.tag == tag))?;
    Some(queue.remove(i))
}

struct Sim<'a> {
    schedule: &'a GoalSchedule,
    params: LoggpParams,
    ncpu: usize,
    nnic: usize,
    nexto: Vec<u64>,
    nextgs: Vec<u64>,
    nextgr: Vec<u64>,
    deps: Vec<Vec<u32>>,
    executable: Vec<Vec<u32>>,
    rq: Vec<Vec<Entry>>,
    uq: Vec<Vec<Entry>>,
    heap: BinaryHeap<Ev>,
    stamp: u64,
    ran: u64,
    check: Vec<u32>,
    ready: Vec<Ev>,
}

/// Runs `schedule` under LogGP with `params`.
pub fn simulate(schedule: &GoalSchedule, params: LoggpParams) -> Result<LoggpResult> {
    let p = schedule.ranks.len();
    if p > u32::MAX as usize {
        return Err(Error::new(ErrorKind::Trace, "num_ranks", "too many ranks"));
    }
    let (ncpu, nnic) = schedule.n_cpus_nics();
    let mut sim = Sim {
        schedule,
        params,
        ncpu,
        nnic,
        nexto: vec![0; p * ncpu],
        nextgs: vec![0; p * nnic],
        nextgr: vec![0; p * nnic],
        deps: schedule.ranks.iter().map(|r| r.n_deps.clone()).collect(),
        executable: schedule.ranks.iter().map(|r| (0..r.ops.len() as u32).filter(|&i| r.n_deps[i as usize] == 0).collect()).collect(),
        rq: vec![Vec::new(); p],
        uq: vec![Vec::new(); p],
        heap: BinaryHeap::new(),
        stamp: 0,
        ran: 0,
        check: Vec::new(),
        ready: Vec::new(),
    };
    for h in 0..p as u32 {
        sim.queue_ready(h, true);
    }
    let mut handled = 0u64;
    while let Some(ev) = sim.heap.pop() {
        sim.handle(ev);
        let mut check = std::mem::take(&mut sim.check);
        check.sort_unstable();
        check.dedup();
        for &h in &check {
            sim.queue_ready(h, false);
        }
        check.clear();
        sim.check = check;
        handled += 1;
        if handled % (1 << 16) == 0 {
            cancel::check()?;
        }
    }
    let ends = (0..p).map(|h| sim.nexto[h * ncpu..(h + 1) * ncpu].iter().copied().max().unwrap_or(0)).collect();
    let unmatched = (0..p)
        .filter(|&h| !sim.rq[h].is_empty() || !sim.uq[h].is_empty())
        .map(|h| Unmatched { host: h as u32, receives: sim.rq[h].len() as u32, messages: sim.uq[h].len() as u32 })
        .collect();
    Ok(LoggpResult { ends, events: sim.stamp, unmatched, not_run: schedule.n_ops() as u64 - sim.ran })
}

impl Sim<'_> {
    fn cpu(&self, h: u32, c: u8) -> usize {
        h as usize * self.ncpu + c as usize
    }
    fn nic(&self, h: u32, n: u8) -> usize {
        h as usize * self.nnic + n as usize
    }

    fn push(&mut self, ev: Ev) {
        self.heap.push(ev);
    }

    fn stamp(&mut self) -> u64 {
        self.stamp += 1;
        self.stamp - 1
    }

    /// `started(h, op)`: its `irequires` successors lose a dependency (`Parser.hpp`).
    fn started(&mut self, h: u32, op: u32) {
        let (h, ready) = (h as usize, &mut self.executable[h as usize]);
        release_successors(&mut self.deps[h], self.schedule.ranks[h].irequires_me(op as usize), |s| ready.push(s));
    }

    /// `done(h, op)`: its `requires` successors lose a dependency.
    fn done(&mut self, h: u32, op: u32) {
        let (h, ready) = (h as usize, &mut self.executable[h as usize]);
        release_successors(&mut self.deps[h], self.schedule.ranks[h].requires_me(op as usize), |s| ready.push(s));
    }

    /// Queues host `h`'s ready operations, sorted by type as `std::sort` orders them (§2.3,
    /// §2.5): at time 0 at the start, else when their CPU (and a send's NIC) is next free.
    fn queue_ready(&mut self, h: u32, at_zero: bool) {
        let mut ready = std::mem::take(&mut self.ready);
        ready.clear();
        let rank = &self.schedule.ranks[h as usize];
        ready.extend(self.executable[h as usize].drain(..).map(|i| {
            let op = rank.ops[i as usize];
            Ev { time: 0, ts: 0, size: op.size, host: h, target: op.peer, tag: op.tag, offset: i, kind: op.kind as u8, cpu: op.cpu, nic: op.nic }
        }));
        std_sort(&mut ready, |e| e.kind);
        for mut ev in ready.drain(..) {
            ev.time = if at_zero {
                0
            } else if ev.kind == SEND {
                self.nexto[self.cpu(h, ev.cpu)].max(self.nextgs[self.nic(h, ev.nic)])
            } else {
                self.nexto[self.cpu(h, ev.cpu)]
            };
            ev.ts = self.stamp();
            self.push(ev);
        }
        self.ready = ready;
    }

    fn handle(&mut self, mut ev: Ev) {
        let t = ev.time;
        let h = ev.host;
        let LoggpParams { latency: l, overhead: o, gap: g, gap_per_byte: big_g, overhead_per_byte: big_o, eager_limit: s_limit } = self.params;
        let s1 = ev.size.wrapping_sub(1);
        let (c, n) = (self.cpu(h, ev.cpu), self.nic(h, ev.nic));
        match ev.kind {
            CALC => {
                if self.nexto[c] <= t {
                    self.nexto[c] = t.wrapping_add(ev.size);
                    self.ran += 1;
                    self.started(h, ev.offset);
                    self.done(h, ev.offset); // a calc is done at its start (§2.4)
                    self.check.push(h);
                } else {
                    ev.time = self.nexto[c];
                    self.push(ev);
                }
            }
            SEND => {
                let ready = self.nexto[c].max(self.nextgs[n]);
                if ready <= t {
                    self.ran += 1;
                    self.started(h, ev.offset);
                    self.check.push(h);
                    self.nexto[c] = t.wrapping_add(o).wrapping_add(s1.wrapping_mul(big_o));
                    self.nextgs[n] = t.wrapping_add(g).wrapping_add(s1.wrapping_mul(big_g));
                    let ts = self.stamp();
                    self.push(Ev { kind: MSG, host: ev.target, target: h, time: t.wrapping_add(o).wrapping_add(l), ts, ..ev });
                    if ev.size <= s_limit {
                        self.done(h, ev.offset); // eager: done at its start
                    }
                } else {
                    ev.time = ready;
                    self.push(ev);
                }
            }
            RECV => {
                // Posting costs nothing and waits for nothing (§2.4).
                self.ran += 1;
                self.started(h, ev.offset);
                self.check.push(h);
                if let Some(m) = take_match(&mut self.uq[h as usize], ev.target, ev.tag) {
                    if ev.size > s_limit {
                        // the receive's size decides on this path; the sender's resources are
                        // indexed by the receive's cpu and nic (LogGOPSim.cpp:370-386)
                        self.release_sender(m.src, m.offset, ev.cpu, ev.nic, t);
                    }
                    self.done(h, ev.offset);
                } else {
                    self.rq[h as usize].push(Entry { src: ev.target, tag: ev.tag, offset: ev.offset });
                }
            }
            _ => {
                // MSG at its receiver h, from ev.target; cpu and nic are the send's.
                let ready = self.nexto[c].max(self.nextgr[n]);
                if ready <= t {
                    self.nexto[c] = t.wrapping_add(o).wrapping_add(s1.wrapping_mul(big_o).max(s1.wrapping_mul(big_g)));
                    self.nextgr[n] = t.wrapping_add(g).wrapping_add(s1.wrapping_mul(big_g));
                    if let Some(r) = take_match(&mut self.rq[h as usize], ev.target, ev.tag) {
                        if ev.size > s_limit {
                            self.release_sender(ev.target, ev.offset, ev.cpu, ev.nic, t);
                        }
                        self.done(h, r.offset);
                        self.check.push(h);
                    } else {
                        self.uq[h as usize].push(Entry { src: ev.target, tag: ev.tag, offset: ev.offset });
                    }
                } else {
                    ev.time = ready.max(t);
                    self.push(ev);
                }
            }
        }
    }

    /// A rendezvous send of `src` is matched at `t`: it is done, and its CPU and NIC are held
    /// until then.
    fn release_sender(&mut self, src: u32, offset: u32, cpu: u8, nic: u8, t: u64) {
        self.done(src, offset);
        self.check.push(src);
        let (c, n) = (self.cpu(src, cpu), self.nic(src, nic));
        self.nexto[c] = self.nexto[c].max(t);
        self.nextgs[n] = self.nextgs[n].max(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpi::goal::parse::parse_text;

    fn run(text: &str, p: LoggpParams) -> LoggpResult {
        simulate(&parse_text(text).unwrap(), p).unwrap()
    }
    const NOTE: LoggpParams = LoggpParams { latency: 1000, overhead: 0, gap: 0, gap_per_byte: 10, overhead_per_byte: 0, eager_limit: 65535 };

    /// ISSUE-NOTES' worked examples, as LogGOPSim prints them (SEMANTICS.md §3).
    #[test]
    fn worked_examples_of_the_notes() {
        let bcast = run(include_str!("../../../../../tests/data/goal/hand/note_bcast8.goal"), NOTE);
        assert_eq!(bcast.ends, vec![20460, 21460, 21460, 22460, 31690, 32690, 32690, 33690]);
        assert_eq!(bcast.events, 21);
        let incast = run(include_str!("../../../../../tests/data/goal/hand/note_incast3.goal"), NOTE);
        assert_eq!(incast.ends, vec![31690, 0, 0, 0]);
        assert_eq!(incast.events, 9);
        let default = run(include_str!("../../../../../tests/data/goal/hand/note_incast3.goal"), LoggpParams::default());
        assert_eq!(default.ends, vec![26914, 1500, 1500, 1500]);
    }

    #[test]
    fn rendezvous_with_a_late_receiver() {
        let p = LoggpParams { latency: 3000, overhead: 200, gap: 500, gap_per_byte: 2, overhead_per_byte: 1, eager_limit: 512 };
        let r = run(include_str!("../../../../../tests/data/goal/hand/rendezvous.goal"), p);
        assert_eq!(r.ends, vec![60299, 70198, 73498]);
        // the `note` set: all eager; the second send waits for the NIC
        let eager = run(include_str!("../../../../../tests/data/goal/hand/rendezvous.goal"), NOTE);
        assert_eq!(eager.ends, vec![99990, 149990, 200980]);
    }

    #[test]
    fn zero_byte_messages_wrap_like_loggopsim() {
        // SEMANTICS.md §2.9, checked with LogGOPSim: sender 97, receiver 1,197.
        let p = LoggpParams { latency: 1000, overhead: 100, gap: 0, gap_per_byte: 10, overhead_per_byte: 3, eager_limit: 65535 };
        let r = run("num_ranks 2\nrank 0 {\nsend 0b to 1\n}\nrank 1 {\nrecv 0b from 0\n}\n", p);
        assert_eq!(r.ends, vec![97, 1197]);
    }

    #[test]
    fn unmatched_receives_are_reported() {
        let r = run("num_ranks 2\nrank 0 {\ncalc 5\n}\nrank 1 {\nrecv 8b from 0\n}\n", NOTE);
        assert_eq!(r.unmatched, vec![Unmatched { host: 1, receives: 1, messages: 0 }]);
    }

    #[test]
    fn parameters_in_seconds_become_whole_units() {
        let p = LoggpParams::from_seconds(&[("L".into(), 1e-6), ("G".into(), 1e-8), ("S".into(), 512.0)], 1e-9).unwrap();
        assert_eq!(p, LoggpParams { latency: 1000, gap_per_byte: 10, eager_limit: 512, ..LoggpParams::default() });
        let e = LoggpParams::from_seconds(&[("L".into(), 1.5e-9)], 1e-9).unwrap_err();
        assert!(e.to_string().contains("not a whole number of time units"), "{e}");
        assert!(LoggpParams::from_seconds(&[("x".into(), 1.0)], 1e-9).unwrap_err().to_string().contains("unknown loggp parameter"));
        assert!(LoggpParams::from_seconds(&[("o".into(), -1.0)], 1e-9).is_err());
    }

    #[test]
    fn a_calc_on_another_cpu_does_not_wait() {
        // SEMANTICS.md §2.10, checked with LogGOPSim: 7,000, not 12,000.
        let r = run("num_ranks 1\nrank 0 {\na: calc 5000 cpu 0\nb: calc 7000 cpu 1\nb requires a\n}\n", NOTE);
        assert_eq!(r.ends, vec![7000]);
    }
}
