//! Per-link statistics (issue 28 item 7, "where is the bottleneck"): bytes carried, busy
//! time, peak utilisation and peak concurrent flows, and utilisation against time in a
//! fixed number of bins per link.
//!
//! The engine keeps them only when asked ([`super::Engine::with_link_stats`]) and updates
//! a link only where it already touches it: when a flow joins or leaves the network and
//! when the sharing model changes a flow's rate. Between two such moments a link's load
//! (the sum of its flows' rates) is constant, so the accumulators integrate it exactly.
//! Memory is proportional to the links: [`BINS`] bins each, whose width doubles (pairs of
//! bins merged) when the simulated time outgrows them.

/// Bins of each link's utilisation-against-time histogram.
pub const BINS: usize = 256;

/// Initial bin width (s): 2^-30, about a nanosecond. Widths are this times a power of two,
/// so links with different widths merge exactly to a common one.
const BASE_WIDTH: f64 = 1.0 / (1u64 << 30) as f64;

#[derive(Debug, Clone)]
struct Acc {
    bandwidth: f64,
    /// Sum of the rates of the flows on the link (B/s) since `last`.
    load: f64,
    flows: u32,
    last: f64,
    bytes: f64,
    busy: f64,
    peak_load: f64,
    peak_flows: u32,
    width: f64,
    /// Bytes carried in each bin (empty until the link first carries something).
    bins: Vec<f64>,
}

impl Acc {
    fn settle(&mut self, now: f64) {
        let dt = now - self.last;
        if dt > 0.0 {
            if self.flows > 0 {
                self.busy += dt;
            }
            if self.load > 0.0 {
                self.bytes += self.load * dt;
                let (a, load) = (self.last, self.load);
                self.spread(a, now, load);
            }
        }
        if now > self.last {
            self.last = now;
        }
    }

    /// Add `load` × the time of [a, b] to the bins it overlaps.
    fn spread(&mut self, a: f64, b: f64, load: f64) {
        if self.bins.is_empty() {
            self.bins = vec![0.0; BINS];
        }
        while b > self.width * BINS as f64 {
            merge_pairs(&mut self.bins);
            self.width *= 2.0;
        }
        let w = self.width;
        let first = ((a / w) as usize).min(BINS - 1);
        let last = ((b / w) as usize).min(BINS - 1);
        for i in first..=last {
            let lo = a.max(i as f64 * w);
            let hi = if i == BINS - 1 { b } else { b.min((i + 1) as f64 * w) };
            if hi > lo {
                self.bins[i] += load * (hi - lo);
            }
        }
    }
}

/// Halve the resolution in place: bin i becomes bins 2i and 2i+1.
fn merge_pairs(bins: &mut [f64]) {
    let n = bins.len();
    for i in 0..n / 2 {
        bins[i] = bins[2 * i] + bins[2 * i + 1];
    }
    bins[n / 2..].iter_mut().for_each(|x| *x = 0.0);
}

/// The accumulators of every link of a run.
#[derive(Debug, Clone)]
pub struct LinkStats {
    acc: Vec<Acc>,
    /// Links whose load rose since the last [`LinkStats::commit`] (peaks are taken then,
    /// on the settled rates, not on a half-updated batch).
    touched: Vec<u32>,
    /// When asked ([`LinkStats::track_changes`]): the links whose load changed since the last
    /// [`LinkStats::drain_changes`], each once (`changed_flag` marks them).
    changed: Vec<u32>,
    changed_flag: Vec<bool>,
}

impl LinkStats {
    pub fn new(bandwidths: &[f64]) -> Self {
        LinkStats {
            acc: bandwidths
                .iter()
                .map(|&bandwidth| Acc {
                    bandwidth,
                    load: 0.0,
                    flows: 0,
                    last: 0.0,
                    bytes: 0.0,
                    busy: 0.0,
                    peak_load: 0.0,
                    peak_flows: 0,
                    width: BASE_WIDTH,
                    bins: Vec::new(),
                })
                .collect(),
            touched: Vec::new(),
            changed: Vec::new(),
            changed_flag: Vec::new(),
        }
    }

    /// Each link's bandwidth (B/s), by link index.
    pub fn bandwidths(&self) -> Vec<f64> {
        self.acc.iter().map(|a| a.bandwidth).collect()
    }

    /// Keep the links whose load changed, for [`LinkStats::drain_changes`] (a timeline that
    /// shows the links' load over time).
    pub fn track_changes(&mut self) {
        self.changed_flag = vec![false; self.acc.len()];
    }

    #[inline]
    fn mark(&mut self, l: u32) {
        if let Some(f) = self.changed_flag.get_mut(l as usize) {
            if !*f {
                *f = true;
                self.changed.push(l);
            }
        }
    }

    /// Each link whose load changed since the last call, with its load now (B/s), in the
    /// order they first changed; then forget them.
    pub fn drain_changes(&mut self, mut f: impl FnMut(u32, f64)) {
        for &l in &self.changed {
            self.changed_flag[l as usize] = false;
            f(l, self.acc[l as usize].load);
        }
        self.changed.clear();
    }

    /// A flow joined (`+1`) or left (`-1`) link `l` at `now`.
    #[inline]
    pub fn count(&mut self, l: u32, now: f64, delta: i32) {
        let a = &mut self.acc[l as usize];
        a.settle(now);
        a.flows = (a.flows as i64 + delta as i64).max(0) as u32;
        a.peak_flows = a.peak_flows.max(a.flows);
        if a.flows == 0 && a.load != 0.0 {
            a.load = 0.0;
            self.mark(l);
        }
    }

    /// The load of link `l` changed by `delta` B/s at `now`.
    #[inline]
    pub fn rate(&mut self, l: u32, now: f64, delta: f64) {
        let a = &mut self.acc[l as usize];
        a.settle(now);
        a.load = (a.load + delta).max(0.0);
        if delta > 0.0 {
            self.touched.push(l);
        }
        self.mark(l);
    }

    /// Take the peaks of the links whose load rose, once a batch of rate changes is done.
    pub fn commit(&mut self) {
        for &l in &self.touched {
            let a = &mut self.acc[l as usize];
            a.peak_load = a.peak_load.max(a.load);
        }
        self.touched.clear();
    }

    /// The statistics at the end of a run of length `makespan` (s).
    pub fn report(mut self, makespan: f64) -> LinkReport {
        self.commit();
        let end = self.acc.iter().map(|a| a.last).fold(makespan, f64::max);
        for a in &mut self.acc {
            a.settle(end);
        }
        let width = self.acc.iter().filter(|a| !a.bins.is_empty()).map(|a| a.width).fold(BASE_WIDTH, f64::max);
        // Bins the run covers at the common width.
        let used = if end > 0.0 { ((end / width).ceil() as usize).clamp(1, BINS) } else { 1 };
        let links = self
            .acc
            .into_iter()
            .map(|mut a| {
                let mut histogram = vec![0.0; used];
                if !a.bins.is_empty() {
                    while a.width < width {
                        merge_pairs(&mut a.bins);
                        a.width *= 2.0;
                    }
                    for (h, b) in histogram.iter_mut().zip(&a.bins) {
                        *h = b / (width * a.bandwidth);
                    }
                }
                LinkRecord {
                    name: String::new(),
                    bandwidth: a.bandwidth,
                    bytes: a.bytes,
                    busy_time: a.busy,
                    mean_utilisation: if makespan > 0.0 { a.bytes / (a.bandwidth * makespan) } else { 0.0 },
                    peak_utilisation: a.peak_load / a.bandwidth,
                    peak_flows: a.peak_flows,
                    histogram,
                }
            })
            .collect();
        LinkReport { bin_seconds: width, links }
    }
}

/// One link's statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkRecord {
    pub name: String,
    /// B/s.
    pub bandwidth: f64,
    /// Bytes carried.
    pub bytes: f64,
    /// Time with at least one flow on the link (s).
    pub busy_time: f64,
    /// bytes / (bandwidth × makespan).
    pub mean_utilisation: f64,
    /// Largest sum of the flows' rates over the bandwidth.
    pub peak_utilisation: f64,
    /// Most flows on the link at once.
    pub peak_flows: u32,
    /// Mean utilisation in each bin of `LinkReport::bin_seconds`, from time 0.
    pub histogram: Vec<f64>,
}

/// Every link's statistics, in the engine's link order.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkReport {
    /// Width of each histogram bin (s).
    pub bin_seconds: f64,
    pub links: Vec<LinkRecord>,
}

impl LinkReport {
    /// The `n` most utilised links that carried anything: highest mean utilisation first,
    /// then highest peak utilisation, then link order.
    pub fn most_utilised(&self, n: usize) -> Vec<&LinkRecord> {
        let mut v: Vec<&LinkRecord> = self.links.iter().filter(|l| l.bytes > 0.0).collect();
        v.sort_by(|a, b| {
            b.mean_utilisation.total_cmp(&a.mean_utilisation).then(b.peak_utilisation.total_cmp(&a.peak_utilisation))
        });
        v.truncate(n);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_flows_then_one() {
        // Link of 100 B/s: two flows at 50 B/s each over [0, 1], then one at 100 B/s over [1, 1.5].
        let mut s = LinkStats::new(&[100.0]);
        s.count(0, 0.0, 1);
        s.count(0, 0.0, 1);
        s.rate(0, 0.0, 50.0);
        s.rate(0, 0.0, 50.0);
        s.commit();
        s.rate(0, 1.0, -50.0);
        s.count(0, 1.0, -1);
        s.rate(0, 1.0, 50.0);
        s.commit();
        s.rate(0, 1.5, -100.0);
        s.count(0, 1.5, -1);
        let r = s.report(2.0);
        let l = &r.links[0];
        assert_eq!(l.bytes, 150.0);
        assert_eq!(l.busy_time, 1.5);
        assert_eq!(l.peak_flows, 2);
        assert_eq!(l.peak_utilisation, 1.0);
        assert_eq!(l.mean_utilisation, 0.75);
        // The histogram holds the same bytes.
        let total: f64 = l.histogram.iter().sum::<f64>() * r.bin_seconds * 100.0;
        assert!((total - 150.0).abs() < 1e-9, "{total}");
        assert!(l.histogram.len() <= BINS);
        assert!(r.bin_seconds * l.histogram.len() as f64 >= 2.0);
    }

    #[test]
    fn histogram_merges_keep_bytes() {
        let mut s = LinkStats::new(&[10.0]);
        for k in 0..1000 {
            let t = k as f64 * 0.37;
            s.count(0, t, 1);
            s.rate(0, t, 10.0);
            s.commit();
            s.rate(0, t + 0.2, -10.0);
            s.count(0, t + 0.2, -1);
        }
        let r = s.report(370.0);
        let l = &r.links[0];
        assert!((l.bytes - 2000.0).abs() < 1e-6);
        let total: f64 = l.histogram.iter().sum::<f64>() * r.bin_seconds * 10.0;
        assert!((total - 2000.0).abs() < 1e-6, "{total}");
        assert!(l.histogram.iter().all(|&u| u <= 1.0 + 1e-12));
    }
}
