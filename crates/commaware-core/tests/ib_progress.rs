//! `ib-simgrid` keeps the flows' progress in its capped max-min when the engine lets it
//! (full-speed hosts, no link statistics), and rates flows in the net otherwise. Both must
//! give the same completion times: checked here on seeded random transfers that start at
//! staggered times (so caps change while flows are half done and carry their bytes into
//! the private link they come back on), on a star without a backbone and with one that
//! binds, intra-node transfers (memory link) included.

use commaware_core::engine::{ActKind, Engine, FullSpeed};
use commaware_core::mpi::platform_file::load_json;
use commaware_core::network::sharing::make_model;
use commaware_core::util::rng::SplitMix64;

/// Completion time of each transfer: `transfers` (src, dst, bytes, start) on `hosts` hosts,
/// each started by a timer at its start time.
fn run(backbone: Option<f64>, hosts: usize, transfers: &[(usize, usize, f64, f64)], link_stats: bool) -> Vec<f64> {
    let bb = backbone.map_or(String::new(), |b| format!(r#", "backbone": {b}"#));
    let text = format!(
        r#"{{"cluster": {{"count": {hosts}, "speed": 1e9}}, "network": {{"bandwidth": 1.25e8, "latency": 1e-5,
            "memory_bandwidth": 5e8, "memory_latency": 1e-6{bb}}}}}"#
    );
    let p = load_json(&text).unwrap();
    let model = make_model("ib-simgrid", &p, &[]).unwrap();
    let mut e = Engine::with_link_stats(&p, model, Box::new(FullSpeed), link_stats);
    let n = transfers.len() as u64;
    for (k, t) in transfers.iter().enumerate() {
        e.start_timer(t.3, n + k as u64);
    }
    let mut end = vec![f64::NAN; transfers.len()];
    let mut done = Vec::new();
    while let Some(now) = e.step(&mut done) {
        for c in done.clone() {
            match c.kind {
                ActKind::Timer => {
                    let (s, d, bytes, _) = transfers[(c.tag - n) as usize];
                    e.start_transfer(s, d, bytes, c.tag - n).unwrap();
                }
                _ => end[c.tag as usize] = now,
            }
        }
    }
    end
}

fn random_transfers(seed: u64, hosts: usize, count: usize) -> Vec<(usize, usize, f64, f64)> {
    let mut rng = SplitMix64::new(seed);
    (0..count)
        .map(|_| {
            let s = rng.below_usize(hosts);
            // One in eight to itself (the memory link).
            let d = if rng.below(8) == 0 { s } else { (s + 1 + rng.below_usize(hosts - 1)) % hosts };
            (s, d, rng.uniform(1e4, 2e6), rng.uniform(0.0, 0.02))
        })
        .collect()
}

#[test]
fn tracked_progress_gives_the_times_of_rated_flows() {
    // 3 NICs' worth of backbone for up to 12 concurrent senders: it binds. On 4 hosts the
    // same pairs meet often (caps change all the time); on 12 the private links outgrow
    // the first ones while flows are in progress.
    for (hosts, backbone) in [(12, None), (12, Some(3.0 * 1.25e8)), (4, None), (4, Some(1.25e8))] {
        for seed in 1..=6 {
            let transfers = random_transfers(seed, hosts, 150);
            let tracked = run(backbone, hosts, &transfers, false);
            let rated = run(backbone, hosts, &transfers, true);
            for (k, (a, b)) in tracked.iter().zip(&rated).enumerate() {
                assert!(a.is_finite() && (a - b).abs() <= 1e-9 * b, "backbone {backbone:?} seed {seed}: transfer {k} ends at {a}, rated {b}");
            }
        }
    }
}

/// The backbone changes the times (else the test above would not exercise it).
#[test]
fn the_backbone_binds_in_that_test() {
    let transfers = random_transfers(1, 12, 150);
    let without = run(None, 12, &transfers, false);
    let with = run(Some(3.0 * 1.25e8), 12, &transfers, false);
    let last = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max);
    assert!(last(&with) > 1.05 * last(&without), "{} vs {}", last(&with), last(&without));
}

