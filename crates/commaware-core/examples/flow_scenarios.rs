//! The flow scenarios of `benches/bench_flows.py`, driven straight through the engine
//! (no trace, no replay), for timing and profiling the sharing model:
//!
//! `cargo run --release --example flow_scenarios -- PATTERN-HOSTSxFLOWS [--model M] [--seed S]
//!  [--size BYTES] [--dump FILE] [--compare FILE]`
//!
//! PATTERN is `randsize` (sizes S·10^(2u−1)), `random` (all S) or `shift` (host i sends to
//! i+1..i+FLOWS/HOSTS); the flow list is the SimGrid harness's (`tests/simgrid_peer.py`,
//! `make_flows`). Every flow starts at t = 0 on a star of 1.25e8 B/s links with a route
//! latency of 1e-4 s. `--dump` writes each flow's completion time, one a line;
//! `--compare` reads such a file and prints the largest relative difference.

use commaware_core::engine::{Completion, Engine, FullSpeed};
use commaware_core::rng::SplitMix64;
use commaware_core::sharing::make_model;
use commaware_core::Platform;

fn make_flows(pattern: &str, hosts: usize, flows: usize, size: f64, seed: u64) -> Vec<(usize, usize, f64)> {
    let mut rng = SplitMix64::new(seed);
    let pair = |rng: &mut SplitMix64| {
        let s = rng.below(hosts as u64) as usize;
        let d = rng.below(hosts as u64 - 1) as usize;
        (s, if d >= s { d + 1 } else { d })
    };
    let sz = size.trunc();
    match pattern {
        "random" => (0..flows).map(|_| { let (s, d) = pair(&mut rng); (s, d, sz) }).collect(),
        "randsize" => (0..flows)
            .map(|_| {
                let (s, d) = pair(&mut rng);
                (s, d, (sz * 10f64.powf(2.0 * rng.unit() - 1.0)).trunc())
            })
            .collect(),
        "shift" => {
            let k = (flows / hosts).max(1);
            (0..hosts).flat_map(|i| (1..=k).map(move |j| (i, (i + j) % hosts, sz))).collect()
        }
        _ => panic!("unknown pattern {pattern} (randsize, random, shift)"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let spec = args.first().map_or("randsize-1024x16384", |s| s.as_str());
    let opt = |name: &str| args.iter().position(|a| a == name).map(|k| args[k + 1].clone());
    let model = opt("--model").unwrap_or_else(|| "maxmin".into());
    let seed: u64 = opt("--seed").map_or(1, |s| s.parse().unwrap());
    let size: f64 = opt("--size").map_or(1e6, |s| s.parse().unwrap());
    let (pattern, rest) = spec.split_once('-').expect("PATTERN-HOSTSxFLOWS");
    let (h, f) = rest.split_once('x').expect("PATTERN-HOSTSxFLOWS");
    let (hosts, nflows): (usize, usize) = (h.parse().unwrap(), f.parse().unwrap());
    let flows = make_flows(pattern, hosts, nflows, size, seed);

    let platform = Platform::from_json(&format!(
        r#"{{"cluster": {{"count": {hosts}, "speed": 1e9}}, "network": {{"bandwidth": 1.25e8, "latency": 1e-4}}}}"#
    ))
    .unwrap();
    let t0 = std::time::Instant::now();
    let mut engine = Engine::new(&platform, make_model(&model, &platform, &[]).unwrap(), Box::new(FullSpeed));
    for (k, &(s, d, b)) in flows.iter().enumerate() {
        engine.start_transfer(s, d, b, k as u64);
    }
    let mut finish = vec![f64::NAN; flows.len()];
    let mut out: Vec<Completion> = Vec::new();
    let mut steps = 0usize;
    while let Some(t) = engine.step(&mut out) {
        steps += 1;
        for c in &out {
            finish[c.tag as usize] = t;
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let makespan = finish.iter().cloned().fold(0.0, f64::max);
    println!("{spec} ({model}): {secs:.3} s, {steps} steps, makespan {makespan:.9}");
    if let Some(path) = opt("--dump") {
        let text: String = finish.iter().map(|t| format!("{t:e}\n")).collect();
        std::fs::write(path, text).unwrap();
    }
    if let Some(path) = opt("--compare") {
        let want: Vec<f64> = std::fs::read_to_string(path).unwrap().lines().map(|l| l.parse().unwrap()).collect();
        assert_eq!(want.len(), finish.len(), "flow counts differ");
        let worst = want.iter().zip(&finish).map(|(w, g)| (w - g).abs() / w.abs()).fold(0.0, f64::max);
        println!("largest relative difference against the file: {worst:.3e}");
    }
}
