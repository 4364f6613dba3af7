//! Contention-free network: every transfer runs at the bandwidth of its host pair,
//! whatever else is in flight (a fully connected network with a dedicated link per
//! ordered pair, as in the multicast cost model of paper 003 §2).

use super::{FlowId, FlowNet, RemovedFlow, SharingModel};
use crate::network::platform::Platform;

pub struct ContentionFree {
    n: usize,
    /// Bandwidth of each ordered pair, row-major (bytes/s).
    pair: Vec<f64>,
    memory_bandwidth: f64,
}

impl ContentionFree {
    pub fn new(platform: &Platform) -> Self {
        let n = platform.hosts.len();
        let hosts = &platform.hosts;
        let pair = match &platform.network.pair_bandwidth {
            Some(m) => m.iter().flatten().copied().collect(),
            None => (0..n * n).map(|k| hosts[k / n].bandwidth_up.min(hosts[k % n].bandwidth_down)).collect(),
        };
        ContentionFree { n, pair, memory_bandwidth: platform.memory_bandwidth() }
    }
}

impl SharingModel for ContentionFree {
    fn name(&self) -> &'static str {
        "contention_free"
    }

    fn update(&mut self, net: &mut FlowNet, added: &[FlowId], _removed: &[RemovedFlow], changed: &mut Vec<FlowId>) {
        // Links are up(s) = s, down(d) = n + d, memory(h) = 2n + h (see the engine).
        for &f in added {
            let links = net.flow(f).links();
            let (first, last) = (links[0] as usize, links[links.len() - 1] as usize);
            let rate = if first >= 2 * self.n { self.memory_bandwidth } else { self.pair[first * self.n + (last - self.n)] };
            net.set_rate(f, rate);
            changed.push(f);
        }
    }
}
