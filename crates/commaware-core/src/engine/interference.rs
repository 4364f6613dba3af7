//! Interference of communication on computation (paper 000).
//!
//! While a host sends or receives, its computation slows down linearly with the transfer
//! rates: its normalised compute rate is `1 − Σ IR_r(i)·TR(i) − Σ IR_s(j)·TR(j)` over the
//! transfers it receives (from peers i) and sends (to peers j), rates in MB/s with
//! MB = 2^20 bytes (§2.3–2.4). While it both sends and receives, an optional planar form
//! `c − a·TR_in − b·TR_out` replaces it (the synergy of §2.5). The engine re-evaluates a
//! host's rate, speed × max(0, normalised rate), whenever its traffic changes.

use crate::engine::{ComputeRate, HostTraffic};
use crate::network::interference_spec::Interference;

/// Bytes per MB: the interference rates are per MB/s (paper 000's unit).
pub const MB: f64 = 1_048_576.0;

// The evaluation of the resolved rates (the data lives with the platform).
impl Interference {
    fn rate_of(peers: &[(u32, f64)], peer: u32, default: f64) -> f64 {
        peers.binary_search_by_key(&peer, |p| p.0).map_or(default, |k| peers[k].1)
    }

    /// The normalised compute rate (not clamped) under `traffic`.
    pub fn normalised_rate(&self, traffic: &HostTraffic) -> f64 {
        let total = |v: &[(u32, f64)]| v.iter().map(|p| p.1).sum::<f64>() / MB;
        if let Some(s) = self.synergy {
            if !traffic.inn.is_empty() && !traffic.out.is_empty() {
                return s.constant - s.recv * total(traffic.inn) - s.send * total(traffic.out);
            }
        }
        let recv: f64 = traffic.inn.iter().map(|&(p, r)| Self::rate_of(&self.recv_from, p, self.recv) * r).sum();
        let send: f64 = traffic.out.iter().map(|&(p, r)| Self::rate_of(&self.send_to, p, self.send) * r).sum();
        1.0 - (recv + send) / MB
    }
}

/// The platform's interference as the engine's compute-rate hook.
pub struct InterferenceRates {
    hosts: Vec<Option<Interference>>,
}

impl InterferenceRates {
    pub fn new(hosts: Vec<Option<Interference>>) -> Self {
        InterferenceRates { hosts }
    }
}

impl ComputeRate for InterferenceRates {
    fn is_identity(&self) -> bool {
        self.hosts.iter().all(Option::is_none)
    }

    fn factor(&self, host: usize, traffic: HostTraffic) -> f64 {
        self.hosts[host].as_ref().map_or(1.0, |i| i.normalised_rate(&traffic).max(0.0))
    }
}

/// The compute-rate hook of `platform`: its hosts' interference (identity without any).
pub fn compute_rate(platform: &crate::network::platform::Platform) -> Box<dyn ComputeRate> {
    Box::new(InterferenceRates::new(platform.hosts.iter().map(|h| h.interference.clone()).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::interference_spec::SynergySpec;

    fn traffic<'a>(inn: &'a [(u32, f64)], out: &'a [(u32, f64)]) -> HostTraffic<'a> {
        HostTraffic { inn, out }
    }

    #[test]
    fn linear_per_peer_and_synergy() {
        let i = Interference {
            recv: 0.05,
            send: 0.03,
            recv_from: vec![(3, 0.07)],
            send_to: vec![],
            synergy: Some(SynergySpec { constant: 0.9542, recv: 0.0427, send: 0.0265 }),
        };
        // §2.3: receiving at 10 MB/s with IR_r 0.052 leaves 48 % (here 0.05: 50 %).
        assert!((i.normalised_rate(&traffic(&[(1, 10.0 * MB)], &[])) - 0.5).abs() < 1e-12);
        // Per peer: from host 3 at 2 MB/s plus host 1 at 1 MB/s.
        let r = i.normalised_rate(&traffic(&[(3, 2.0 * MB), (1, MB)], &[]));
        assert!((r - (1.0 - 0.14 - 0.05)).abs() < 1e-12);
        // Sending alone: linear.
        assert!((i.normalised_rate(&traffic(&[], &[(2, 4.0 * MB)])) - (1.0 - 0.12)).abs() < 1e-12);
        // Both: the planar form of §2.5.
        let r = i.normalised_rate(&traffic(&[(1, 3.0 * MB)], &[(2, 4.0 * MB)]));
        assert!((r - (0.9542 - 0.0427 * 3.0 - 0.0265 * 4.0)).abs() < 1e-12);
    }
}
