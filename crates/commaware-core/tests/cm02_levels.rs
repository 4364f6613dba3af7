//! CM02's solver (`network::sharing::cm02`) picks each round's saturated links by a scan of
//! the light links or, when many are light, from a heap of link levels, and keeps its
//! per-link state from one update to the next. Checked here, both ways (the scan, and the
//! heap forced by a scan limit of 0),
//! against a straightforward transcription of SimGrid's `MaxMin::maxmin_solve` (scan every
//! unsaturated link each round, fresh state every solve) on seeded random arrivals and
//! departures over links of a few bandwidths (so that levels tie exactly), SHARED and
//! FATPIPE links, routes of unequal latency (weighted shares), TCP-gamma bounds that bind,
//! and crosstraffic: every rate within 1e-10 relative after every update, including the
//! updates with departures only, which the solver answers by refilling from the first
//! round the departed flows took part in rather than from scratch.

use commaware_core::network::sharing::{Cm02, Cm02Params, FlowAttrs, FlowId, FlowNet, SharingModel};
use commaware_core::util::rng::SplitMix64;

const PRECISION: f64 = 1e-5;
const CROSS: f64 = 0.05;

/// One live flow as SimGrid's solver sees it.
struct RefFlow {
    id: FlowId,
    /// (link, weight)
    links: Vec<(usize, f64)>,
    penalty: f64,
    bound: f64,
}

/// SimGrid's progressive filling, written plainly: every round scans all light links.
fn reference(caps: &[f64], fatpipe: &[bool], flows: &[RefFlow]) -> Vec<f64> {
    let n = caps.len();
    let mut remaining = caps.to_vec();
    let mut usage = vec![0.0; n];
    let mut on_link: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, f) in flows.iter().enumerate() {
        for &(l, w) in &f.links {
            if fatpipe[l] {
                usage[l] = f64::max(usage[l], w / f.penalty);
            } else {
                usage[l] += w / f.penalty;
            }
            on_link[l].push(i);
        }
    }
    let mut value = vec![0.0; flows.len()];
    let mut fixed = vec![false; flows.len()];
    let mut light: Vec<usize> = (0..n).filter(|&l| remaining[l] > caps[l] * PRECISION && usage[l] > 0.0).collect();
    while !light.is_empty() {
        let min_usage = light.iter().map(|&l| remaining[l] / usage[l]).fold(f64::INFINITY, f64::min);
        let saturated: Vec<usize> = light.iter().copied().filter(|&l| remaining[l] / usage[l] == min_usage).collect();
        let mut vars: Vec<usize> = Vec::new();
        for &l in &saturated {
            for &i in &on_link[l] {
                if !fixed[i] && !vars.contains(&i) {
                    vars.push(i);
                }
            }
        }
        let bounded: Vec<f64> = vars
            .iter()
            .map(|&i| &flows[i])
            .filter(|f| f.bound > 0.0 && f.bound * f.penalty < min_usage)
            .map(|f| f.bound * f.penalty)
            .collect();
        let min_bound = bounded.iter().copied().fold(f64::INFINITY, f64::min);
        for &i in &vars {
            let f = &flows[i];
            if bounded.is_empty() {
                value[i] = min_usage / f.penalty;
            } else if (min_bound - f.bound * f.penalty).abs() < PRECISION {
                value[i] = f.bound;
            } else {
                continue;
            }
            fixed[i] = true;
            for &(l, w) in &f.links {
                if fatpipe[l] {
                    usage[l] = on_link[l]
                        .iter()
                        .filter(|&&g| value[g] <= 0.0)
                        .map(|&g| flows[g].links.iter().find(|&&(k, _)| k == l).map_or(0.0, |&(_, w)| w) / flows[g].penalty)
                        .fold(0.0, f64::max);
                } else {
                    remaining[l] -= w * value[i];
                    if remaining[l] < caps[l] * PRECISION {
                        remaining[l] = 0.0;
                    }
                    usage[l] -= w / f.penalty;
                    if usage[l] < PRECISION {
                        usage[l] = 0.0;
                    }
                }
                if !(usage[l] > PRECISION) || !(remaining[l] > caps[l] * PRECISION) {
                    light.retain(|&k| k != l);
                }
            }
        }
    }
    value
}

/// Both ways of finding a round's lowest level: the heap (scan limit 0) and the scan.
const SCAN_LIMITS: [usize; 2] = [0, usize::MAX];

fn check(seed: u64, params: Cm02Params) {
    for limit in SCAN_LIMITS {
        check_with(seed, params, limit);
    }
}

fn check_with(seed: u64, params: Cm02Params, scan_limit: usize) {
    let mut rng = SplitMix64::new(seed);
    let n_links = 24;
    let bandwidths = [1e8, 1.25e8, 2.5e8];
    let caps: Vec<f64> = (0..n_links).map(|_| bandwidths[rng.below_usize(3)]).collect();
    let fatpipe: Vec<bool> = (0..n_links).map(|l| l % 7 == 3).collect();
    let latencies = [1e-4, 2e-4, 5e-3, 0.0];
    let mut net = FlowNet::new(caps.iter().copied());
    let mut model = Cm02::with_fatpipes(fatpipe.clone(), params).with_scan_limit(scan_limit);
    let mut live: Vec<FlowId> = Vec::new();
    let mut changed = Vec::new();
    let mut checked = 0;
    for step in 0..300 {
        let mut added = Vec::new();
        let mut removed = Vec::new();
        // Every third update has departures only (the solver then refills from the round
        // where the departed flows first took part, keeping the rates fixed before it).
        let departures_only = step % 3 == 2 && live.len() > 3;
        if departures_only {
            for _ in 0..1 + rng.below_usize(2) {
                let f = live.swap_remove(rng.below_usize(live.len()));
                removed.push(net.remove_flow(f));
            }
        } else {
            for _ in 0..rng.below_usize(4) {
                if live.len() > 3 && rng.unit() < 0.5 {
                    let f = live.swap_remove(rng.below_usize(live.len()));
                    removed.push(net.remove_flow(f));
                }
            }
        }
        for _ in 0..if departures_only { 0 } else { 1 + rng.below_usize(3) } {
            let hops = 1 + rng.below_usize(4);
            let mut route: Vec<u32> = Vec::new();
            while route.len() < hops {
                let l = rng.below(n_links as u64) as u32;
                if !route.contains(&l) {
                    route.push(l);
                }
            }
            let forward = route.len() as u32;
            if params.crosstraffic {
                let back: Vec<u32> = (0..n_links as u32).filter(|l| !route.contains(l)).take(2).collect();
                route.extend(back);
            }
            let f = net.add_flow(&route);
            net.set_attrs(f, FlowAttrs { latency: latencies[rng.below_usize(latencies.len())], forward });
            added.push(f);
            live.push(f);
        }
        changed.clear();
        model.update(&mut net, &added, &removed, &mut changed);
        // The same flows as SimGrid's communicate sets them up.
        let flows: Vec<RefFlow> = live
            .iter()
            .map(|&f| {
                let a = net.attrs(f);
                let links = net.flow(f).links();
                let mut penalty = 1.0;
                if params.weighting && a.latency > 0.0 {
                    penalty = a.latency;
                }
                let mut bound = 0.0;
                if params.tcp_gamma > 0.0 && a.latency > 0.0 {
                    let min_bw = links[..a.forward as usize].iter().map(|&l| caps[l as usize]).fold(f64::INFINITY, f64::min);
                    bound = min_bw.min(params.tcp_gamma / (2.0 * a.latency));
                }
                let links = links
                    .iter()
                    .enumerate()
                    .map(|(k, &l)| (l as usize, if (k as u32) < a.forward { 1.0 } else { CROSS }))
                    .collect();
                RefFlow { id: f, links, penalty, bound }
            })
            .collect();
        let want = reference(&caps, &fatpipe, &flows);
        for (f, w) in flows.iter().zip(&want) {
            let got = net.flow(f.id).rate;
            assert!(*w > 0.0, "seed {seed} step {step}: flow {} has no rate in the reference", f.id);
            // The solver and the reference subtract the same rates from a link's capacity
            // in different orders (the refill sums the kept rates afresh), so a remaining
            // capacity near the precision threshold (1e-5 of the capacity) carries an
            // error of a few ulps of the capacity, about 1e-11 of itself: hence 1e-10.
            assert!(
                (got - w).abs() <= 1e-10 * w,
                "seed {seed} scan limit {scan_limit} step {step} flow {}: {got} vs reference {w}",
                f.id
            );
            checked += 1;
        }
    }
    assert!(checked > 1000, "only {checked} rates checked");
}

#[test]
fn solver_equals_simgrids_scan_on_random_arrivals_and_departures() {
    for seed in 1..=6 {
        check(seed, Cm02Params::default());
    }
}

#[test]
fn with_binding_tcp_gamma_bounds() {
    // gamma / (2 × 100 µs) = 1e8 B/s for a 20 kB window: bounds bind on the fast links.
    for seed in 11..=14 {
        check(seed, Cm02Params { tcp_gamma: 2e4, ..Cm02Params::default() });
    }
}

#[test]
fn with_crosstraffic_and_equal_shares() {
    for seed in 21..=24 {
        check(seed, Cm02Params { crosstraffic: true, ..Cm02Params::default() });
        check(seed, Cm02Params { weighting: false, ..Cm02Params::default() });
    }
}
