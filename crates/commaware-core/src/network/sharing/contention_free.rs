//! Contention-free network: every transfer runs at the bandwidth of its host pair,
//! whatever else is in flight (a fully connected network with a dedicated link per
//! ordered pair, as in the multicast cost model of paper 003 §2).

use super::{FlowId, FlowNet, RemovedFlow, SharingModel};
use crate::network::platform::Platform;

pub struct ContentionFree {
    n: usize,
    /// Bandwidth of each ordered pair, row-major (bytes/s), when the platform gives them
    /// (`network.pair_bandwidth`); otherwise a pair's is the smaller of the sender's up and
    /// the receiver's down bandwidth, looked up per transfer (memory linear in the hosts).
    pair: Option<Vec<f64>>,
    up: Vec<f64>,
    down: Vec<f64>,
    memory_bandwidth: f64,
}

impl ContentionFree {
    pub fn new(platform: &Platform) -> Self {
        let hosts = &platform.hosts;
        ContentionFree {
            n: hosts.len(),
            pair: platform.network.pair_bandwidth.as_ref().map(|m| m.iter().flatten().copied().collect()),
            up: hosts.iter().map(|h| h.bandwidth_up).collect(),
            down: hosts.iter().map(|h| h.bandwidth_down).collect(),
            memory_bandwidth: platform.memory_bandwidth(),
        }
    }

    fn pair_bandwidth(&self, src: usize, dst: usize) -> f64 {
        match &self.pair {
            Some(pair) => pair[src * self.n + dst],
            None => self.up[src].min(self.down[dst]),
        }
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
            let rate = if first >= 2 * self.n { self.memory_bandwidth } else { self.pair_bandwidth(first, last - self.n) };
            net.set_rate(f, rate);
            changed.push(f);
        }
    }
}
