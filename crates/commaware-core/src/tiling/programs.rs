//! The per-rank programs of paper 001 §5.3 as traces for the engine's replay, and their
//! simulation.
//!
//! Rank r owns the column of tiles along the mapping dimension at its processor
//! coordinates (row-major over the other dimensions). Messages carry a tile's face
//! (eq. 2's row for that dimension, float32) and are tagged with the tile's index k.
//! * Blocking (ProcB, §5.3): per tile, receive from each predecessor, compute, then a
//!   synchronous send (MPI_Ssend) to each successor.
//! * Non-blocking (ProcNB, §5.3 and Fig. 4): a prologue receives the first tile's inputs;
//!   step k posts the sends of tile k−1's results and the receives of tile k+1's inputs,
//!   computes tile k, then waits for all of them (double buffers make this legal); an
//!   epilogue sends the last tile's results.

use serde::Serialize;

use crate::error::{Error, ErrorKind, Result};
use crate::network::platform::Platform;
use crate::mpi::replay::{simulate_observed, NoObserver, Observer, SimOptions};
use crate::mpi::ops::{OpSpec, Peer, TagSpec};
use crate::mpi::trace::{Trace, TraceSpec};

use super::model::{GridTiling, Schedule};

/// Most trace operations a simulated tiling may need (about 40 bytes each).
pub const MAX_PROGRAM_OPS: u64 = 20_000_000;

/// Processor coordinates of rank `r` (1 along the mapping dimension).
fn coords(g: &GridTiling, mut r: u64) -> Vec<u64> {
    let n = g.procs.len();
    let mut c = vec![0; n];
    for d in (0..n).rev() {
        c[d] = r % g.procs[d];
        r /= g.procs[d];
    }
    c
}

fn rank_of(g: &GridTiling, c: &[u64]) -> usize {
    c.iter().zip(&g.procs).fold(0u64, |acc, (&x, &p)| acc * p + x) as usize
}

/// Neighbour of `c` one step back (`-1`) or forward (`+1`) along `d`, if it exists.
fn neighbour(g: &GridTiling, c: &[u64], d: usize, forward: bool) -> Option<usize> {
    let x = c[d];
    let y = if forward { x.checked_add(1).filter(|&y| y < g.procs[d])? } else { x.checked_sub(1)? };
    let mut c2 = c.to_vec();
    c2[d] = y;
    Some(rank_of(g, &c2))
}

/// Operations both programs need: an upper bound, checked before anything is built.
pub fn program_ops(g: &GridTiling) -> u64 {
    let exch = g.exchange_dims().len() as u64;
    // Per tile: ≤ 2 ops per exchanged dimension, a compute and a wait; plus the prologue
    // and epilogue.
    g.n_procs() * (g.column_tiles() * (2 * exch + 2) + 2 * exch + 2)
}

/// The trace of one schedule's program, for `t_comp` seconds of computation per tile.
pub fn program(g: &GridTiling, schedule: Schedule, t_comp: f64) -> Result<TraceSpec> {
    let ops = program_ops(g);
    if ops > MAX_PROGRAM_OPS {
        return Err(Error::new(
            ErrorKind::Options,
            "tile_height",
            format!(
                "simulating {} tiles per processor on {} processors needs about {ops} trace operations, more than the limit of {MAX_PROGRAM_OPS}; use a larger tile height or the formulas alone",
                g.column_tiles(),
                g.n_procs()
            ),
        ));
    }
    let exch = g.exchange_dims();
    let tiles = g.column_tiles() as i64;
    let compute = OpSpec::Compute { flops: None, seconds: Some(t_comp) };
    let mut ranks = Vec::with_capacity(g.n_procs() as usize);
    for r in 0..g.n_procs() {
        let c = coords(g, r);
        let preds: Vec<usize> = exch.iter().filter_map(|&d| neighbour(g, &c, d, false)).collect();
        let succs: Vec<(usize, f64)> =
            exch.iter().filter_map(|&d| neighbour(g, &c, d, true).map(|s| (s, g.face_bytes(d)))).collect();
        let recv = |k: i64, blocking: bool| -> Vec<OpSpec> {
            preds
                .iter()
                .map(|&s| {
                    let (src, tag) = (Peer::Rank(s), TagSpec::Value(k));
                    if blocking {
                        OpSpec::Recv { src, tag, comm: 0 }
                    } else {
                        OpSpec::Irecv { src, tag, comm: 0 }
                    }
                })
                .collect()
        };
        let send = |k: i64, blocking: bool| -> Vec<OpSpec> {
            succs
                .iter()
                .map(|&(dst, bytes)| {
                    if blocking {
                        OpSpec::Send { dst, bytes, tag: k, sync: true, comm: 0 }
                    } else {
                        OpSpec::Isend { dst, bytes, tag: k, sync: false, comm: 0 }
                    }
                })
                .collect()
        };
        let per_tile = 2 * exch.len() + 2;
        let mut prog = Vec::with_capacity(tiles as usize * per_tile + per_tile);
        match schedule {
            Schedule::NonOverlapping => {
                for k in 0..tiles {
                    prog.extend(recv(k, true));
                    prog.push(compute.clone());
                    prog.extend(send(k, true));
                }
            }
            Schedule::Overlapping => {
                if !preds.is_empty() {
                    prog.extend(recv(0, false));
                    prog.push(OpSpec::Waitall);
                }
                for k in 0..tiles {
                    let before = prog.len();
                    if k >= 1 {
                        prog.extend(send(k - 1, false));
                    }
                    if k + 1 < tiles {
                        prog.extend(recv(k + 1, false));
                    }
                    let posted = prog.len() > before;
                    prog.push(compute.clone());
                    if posted {
                        prog.push(OpSpec::Waitall);
                    }
                }
                if !succs.is_empty() {
                    prog.extend(send(tiles - 1, false));
                    prog.push(OpSpec::Waitall);
                }
            }
        }
        ranks.push(prog);
    }
    Ok(TraceSpec { ranks, placement: None })
}

/// The simulated run of one program.
#[derive(Debug, Clone, Serialize)]
pub struct TilingRun {
    /// Completion time of the last rank (s).
    pub makespan: f64,
    pub messages: u64,
    /// Largest compute time of a rank (s): above tiles·t_comp when interference slowed it.
    pub max_compute_seconds: f64,
    pub model: String,
}

/// Simulate `schedule`'s program on `platform` (rank i on host i).
pub fn simulate_program(platform: &Platform, g: &GridTiling, schedule: Schedule, t_comp: f64, options: &SimOptions) -> Result<TilingRun> {
    simulate_program_observed(platform, g, schedule, t_comp, options, &mut NoObserver)
}

/// [`simulate_program`], reporting to `observer` (its progress calls, for a long height).
pub fn simulate_program_observed(
    platform: &Platform,
    g: &GridTiling,
    schedule: Schedule,
    t_comp: f64,
    options: &SimOptions,
    observer: &mut dyn Observer,
) -> Result<TilingRun> {
    let hosts = platform.hosts.len() as u64;
    if hosts < g.n_procs() {
        return Err(Error::new(
            ErrorKind::Options,
            "procs",
            format!("{} processors need as many hosts, the platform has {hosts}", g.n_procs()),
        ));
    }
    let trace = Trace::from_spec(program(g, schedule, t_comp)?)?;
    let r = simulate_observed(platform, &trace, options, crate::engine::interference::compute_rate(platform), observer)?;
    Ok(TilingRun {
        makespan: r.makespan,
        messages: r.message_stats.count,
        max_compute_seconds: r.ranks.iter().map(|x| x.compute_seconds).fold(0.0, f64::max),
        model: r.model,
    })
}
