//! Random instances with the settings of §7 and the issue notes:
//! S_c, R_c uniform in 80-400 us; S_m, R_m uniform in 0.0001-0.01 us/byte;
//! one homogeneous network per instance, 1 Gbps (fast) or 155 Mbps (slow),
//! or each pair's link drawn from the two (mixed: §7's "randomly chosen");
//! small messages of 1 KB = 1,024 bytes, large ones drawn from {1, 1.5} MB
//! (MB = 1,048,576 bytes), or a mix (each message small or large with
//! probability 1/2).

use serde::{Deserialize, Serialize};

use super::model::{Instance, Multicast, NodeParams, Transmission};
use crate::util::rng::SplitMix64;

pub const KB: f64 = 1024.0;
pub const MB: f64 = 1_048_576.0;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// One source (random when `None`) to every other node.
    Broadcast { source: Option<usize> },
    /// Every node to every other node.
    AllToAll,
    /// `sources` distinct random sources, each with `destinations` distinct
    /// random destinations (a random count in 1..N-1 per source when `None`).
    Random {
        sources: usize,
        destinations: Option<usize>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sizes {
    Small,
    Large,
    Mixed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Network {
    /// 1 Gbps on every link.
    Fast,
    /// 155 Mbps on every link.
    Slow,
    /// Each pair of nodes linked at 1 Gbps or 155 Mbps with probability 1/2,
    /// the same both ways (§7: "The network bandwidth between a pair of
    /// processors is randomly chosen as either 155Mbps or 1Gbps").
    Mixed,
}

/// Transmission time per byte of a 1 Gbps and of a 155 Mbps link, seconds.
pub const FAST_SECONDS_PER_BYTE: f64 = 8.0 / 1e9;
pub const SLOW_SECONDS_PER_BYTE: f64 = 8.0 / 155e6;

impl Network {
    /// Transmission time per byte of a homogeneous network (None for `Mixed`).
    pub fn seconds_per_byte(self) -> Option<f64> {
        match self {
            Network::Fast => Some(FAST_SECONDS_PER_BYTE),
            Network::Slow => Some(SLOW_SECONDS_PER_BYTE),
            Network::Mixed => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenParams {
    pub nodes: usize,
    pub pattern: Pattern,
    pub sizes: Sizes,
    pub network: Network,
}

/// `k` distinct values of `pool`, in random order (partial Fisher-Yates).
fn pick(rng: &mut SplitMix64, mut pool: Vec<usize>, k: usize) -> Vec<usize> {
    for a in 0..k {
        let b = a + rng.below_usize(pool.len() - a);
        pool.swap(a, b);
    }
    pool.truncate(k);
    pool
}

/// A random instance; same parameters and seed, same instance.
/// Panics on impossible parameters (fewer than 2 nodes, too many sources
/// or destinations, a broadcast source out of range).
pub fn generate(p: &GenParams, seed: u64) -> Instance {
    let n = p.nodes;
    assert!(n >= 2, "need at least 2 nodes");
    let mut rng = SplitMix64::new(seed);
    let us = 1e-6;
    let nodes = (0..n)
        .map(|_| NodeParams {
            send_const: rng.uniform(80.0 * us, 400.0 * us),
            send_per_byte: rng.uniform(0.0001 * us, 0.01 * us),
            recv_const: rng.uniform(80.0 * us, 400.0 * us),
            recv_per_byte: rng.uniform(0.0001 * us, 0.01 * us),
        })
        .collect();
    let sources: Vec<usize> = match &p.pattern {
        Pattern::Broadcast { source: Some(s) } => {
            assert!(*s < n, "broadcast source out of range");
            vec![*s]
        }
        Pattern::Broadcast { source: None } => vec![rng.below_usize(n)],
        Pattern::AllToAll => (0..n).collect(),
        Pattern::Random { sources, .. } => {
            assert!(*sources <= n, "more sources than nodes");
            let mut s = pick(&mut rng, (0..n).collect(), *sources);
            s.sort_unstable();
            s
        }
    };
    let mut multicasts = Vec::with_capacity(sources.len());
    for &s in &sources {
        let others: Vec<usize> = (0..n).filter(|&d| d != s).collect();
        let destinations = match &p.pattern {
            Pattern::Random { destinations, .. } => {
                let k = destinations.unwrap_or_else(|| 1 + rng.below_usize(n - 1));
                assert!(
                    (1..n).contains(&k),
                    "destinations per source must be in 1..{}",
                    n - 1
                );
                let mut d = pick(&mut rng, others, k);
                d.sort_unstable();
                d
            }
            _ => others,
        };
        let large = |rng: &mut SplitMix64| {
            if rng.below_usize(2) == 0 {
                MB
            } else {
                1.5 * MB
            }
        };
        let bytes = match p.sizes {
            Sizes::Small => KB,
            Sizes::Large => large(&mut rng),
            Sizes::Mixed => {
                if rng.below_usize(2) == 0 {
                    KB
                } else {
                    large(&mut rng)
                }
            }
        };
        multicasts.push(Multicast {
            source: s,
            destinations,
            bytes,
        });
    }
    // Drawn last: a mixed instance has the nodes and multicasts of the
    // homogeneous ones with the same seed.
    let transmission = match p.network.seconds_per_byte() {
        Some(x) => Transmission::Default(x),
        None => {
            let mut x = vec![vec![0.0; n]; n];
            for i in 0..n {
                for j in i + 1..n {
                    let v = if rng.below_usize(2) == 0 {
                        FAST_SECONDS_PER_BYTE
                    } else {
                        SLOW_SECONDS_PER_BYTE
                    };
                    x[i][j] = v;
                    x[j][i] = v;
                }
            }
            Transmission::Matrix(x)
        }
    };
    Instance {
        nodes,
        transmission,
        multicasts,
    }
}
