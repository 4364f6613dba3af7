//! The lower bound of §3.2, corrected as in the issue notes.
//!
//! Idealised model: a node receives and sends in parallel, and sends to
//! several nodes at once. Earliest reach L[k, j] of message k at node j is a
//! shortest path from k whose edges cost S(a, l) + X(a, b) l + R(b, l),
//! relaying only through the multicast's own nodes (§3.1). A node's
//! receives cannot overlap, so, with release = L - R(j, l), processing them
//! in release order (optimal for one machine with release dates) gives
//! T = max(T, release) + R. Eq. (4)'s earliest-reach order is not a bound
//! when sizes differ; both orders agree when sizes are equal.

use super::model::{Costs, Instance};

/// Max over destinations of the earliest time they can finish receiving.
/// The instance must be valid.
pub fn lower_bound(inst: &Instance) -> f64 {
    let c = Costs::new(inst);
    let mut releases: Vec<Vec<(f64, f64)>> = vec![Vec::new(); c.n]; // (release, R) per node
    for mc in &inst.multicasts {
        let l = mc.bytes + 0.0;
        let nodes: Vec<usize> = std::iter::once(mc.source)
            .chain(mc.destinations.iter().copied())
            .collect();
        // arrival[a] = earliest time m reaches a's buffer; done[a] = arrival + R.
        let mut arrival: Vec<f64> = nodes
            .iter()
            .map(|&b| c.s(mc.source, l) + c.x(mc.source, b) * l)
            .collect();
        if c.scalar_x.is_none() {
            // Dense Dijkstra over the multicast's nodes; the source (index 0) has it at 0.
            let mut settled = vec![false; nodes.len()];
            settled[0] = true;
            for _ in 1..nodes.len() {
                let (mut a, mut best) = (0, f64::INFINITY);
                for (q, &t) in arrival.iter().enumerate() {
                    if !settled[q] && t < best {
                        (a, best) = (q, t);
                    }
                }
                settled[a] = true;
                let done = best + c.r(nodes[a], l);
                for q in 0..nodes.len() {
                    if !settled[q] {
                        let t = done + c.s(nodes[a], l) + c.x(nodes[a], nodes[q]) * l;
                        arrival[q] = arrival[q].min(t);
                    }
                }
            }
        }
        // With one X for every pair a relay never arrives earlier than the
        // source's direct send: it adds R(a) + S(a) + X l >= 0.
        for (q, &b) in nodes.iter().enumerate().skip(1) {
            releases[b].push((arrival[q], c.r(b, l)));
        }
    }
    let mut bound = 0.0f64;
    for mut rel in releases {
        rel.sort_by(|a, b| a.0.total_cmp(&b.0));
        let t = rel
            .iter()
            .fold(0.0f64, |t, &(release, r)| t.max(release) + r);
        bound = bound.max(t);
    }
    bound
}
