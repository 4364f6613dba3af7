//! Execution of a multicast schedule on the engine: each node becomes a rank that
//! runs its task list in order (a send is an `isend` after the send overhead S, a
//! receive a blocking `recv` that ends R after the message arrived), on a platform
//! whose per-host overheads are S and R and whose transfers take X(i,j) per byte.
//! With the contention-free model this reproduces the scheduler's times exactly;
//! with a sharing model it shows what contention does to the schedule.

use std::collections::BTreeMap;

use super::{Instance, Schedule, TaskKind};
use crate::error::Result;
use crate::network::platform::{HostSpec, NetworkSpec, OverheadSpec, Platform, PlatformSpec};
use crate::engine::FullSpeed;
use crate::mpi::replay::{simulate_observed, NoObserver, Observer, SimOptions, SimResult};
use crate::mpi::ops::{OpSpec, Peer, TagSpec};
use crate::mpi::trace::{Trace, TraceSpec};

/// Bandwidth standing for a zero transmission time (X = 0).
const INSTANT: f64 = f64::MAX;

fn bandwidth(x: f64) -> f64 {
    // 1/x overflows for x = 0 and for subnormal x: both stand for "instant".
    let b = 1.0 / x;
    if b.is_finite() {
        b
    } else {
        INSTANT
    }
}

/// The platform and trace that run `schedule` of `instance` under sharing `model`.
pub fn to_platform_and_trace(instance: &Instance, schedule: &Schedule, model: &str) -> Result<(Platform, Trace)> {
    let n = instance.nodes.len();
    let pair: Vec<Vec<f64>> = (0..n).map(|i| (0..n).map(|j| if i == j { 0.0 } else { bandwidth(instance.x(i, j)) }).collect()).collect();
    let best = |v: &mut dyn Iterator<Item = f64>| v.fold(f64::MIN_POSITIVE, f64::max);
    let hosts = instance
        .nodes
        .iter()
        .enumerate()
        .map(|(i, p)| HostSpec {
            name: format!("p{i}"),
            speed: 1.0,
            cores: 1,
            memory: 0.0,
            // For a sharing model each NIC runs at its fastest pair's rate.
            bandwidth_up: Some(best(&mut (0..n).filter(|&j| j != i).map(|j| pair[i][j]))),
            bandwidth_down: Some(best(&mut (0..n).filter(|&j| j != i).map(|j| pair[j][i]))),
            overhead: OverheadSpec {
                send_overhead: Some(p.send_const),
                send_overhead_per_byte: Some(p.send_per_byte),
                recv_overhead: Some(p.recv_const),
                recv_overhead_per_byte: Some(p.recv_per_byte),
            },
            interference: None,
        })
        .collect();
    let spec = PlatformSpec {
        simgrid_platform: None,
        cluster: None,
        hosts: Some(hosts),
        overrides: BTreeMap::new(),
        network: NetworkSpec {
            model: model.to_string(),
            parameters: BTreeMap::new(),
            bandwidth: INSTANT,
            latency: 0.0,
            // Sends are non-blocking and buffered in the model of §2: all eager.
            eager_threshold: Some(f64::MAX),
            envelope_bytes: None,
            test_seconds: None,
            reduction_flops_per_byte: 0.0,
            collectives: BTreeMap::new(),
            backbone: None,
            memory_bandwidth: None,
            memory_latency: 0.0,
            send_overhead: 0.0,
            send_overhead_per_byte: 0.0,
            recv_overhead: 0.0,
            recv_overhead_per_byte: 0.0,
            synchronous_send: false,
            pair_bandwidth: Some(pair),
            smpi: None,
            topology: None,
            routing: None,
            routing_seed: 0,
        },
    };
    let platform = crate::mpi::platform_file::from_spec(spec)?;
    let bytes: BTreeMap<usize, f64> = instance.multicasts.iter().map(|m| (m.source, m.bytes)).collect();
    let ranks = schedule
        .tasks
        .iter()
        .map(|tasks| {
            let mut ops: Vec<OpSpec> = tasks
                .iter()
                .map(|t| match t.kind {
                    TaskKind::Send => OpSpec::Isend { dst: t.peer, bytes: bytes[&t.source], tag: t.source as i64, sync: false, comm: 0 },
                    TaskKind::Recv => OpSpec::Recv { src: Peer::Rank(t.peer), tag: TagSpec::Value(t.source as i64), comm: 0 },
                })
                .collect();
            ops.push(OpSpec::Waitall);
            ops
        })
        .collect();
    let trace = Trace::from_spec(TraceSpec { ranks, placement: None })?;
    Ok((platform, trace))
}

/// Replay `schedule` on the engine with sharing `model` (`contention_free`, `maxmin`, ...).
pub fn execute(instance: &Instance, schedule: &Schedule, model: &str) -> Result<SimResult> {
    execute_observed(instance, schedule, model, &mut NoObserver)
}

/// [`execute`], reporting messages and intervals to `observer`.
pub fn execute_observed(instance: &Instance, schedule: &Schedule, model: &str, observer: &mut dyn Observer) -> Result<SimResult> {
    let (platform, trace) = to_platform_and_trace(instance, schedule, model)?;
    let options = SimOptions { model: Some(model.to_string()), ..SimOptions::default() };
    simulate_observed(&platform, &trace, &options, Box::new(FullSpeed), observer)
}
