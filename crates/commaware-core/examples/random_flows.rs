//! Replay random flows on a star (the benchmark scenario) from Rust, for profiling:
//! `cargo run --release --example random_flows -- HOSTS FLOWS [SEED]`.

use commaware_core::rng::SplitMix64;
use commaware_core::trace::{OpSpec, Peer, TagSpec, TraceSpec};
use commaware_core::{simulate, Platform, SimOptions, Trace};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map_or(1024, |s| s.parse().unwrap());
    let m: usize = args.get(2).map_or(16384, |s| s.parse().unwrap());
    let seed: u64 = args.get(3).map_or(1, |s| s.parse().unwrap());
    let mut rng = SplitMix64::new(seed);
    let mut sends = vec![Vec::new(); n];
    let mut recvs = vec![Vec::new(); n];
    for i in 0..m {
        let s = rng.below(n as u64) as usize;
        let mut d = rng.below(n as u64 - 1) as usize;
        if d >= s {
            d += 1;
        }
        let bytes = (1e6 * 10f64.powf(2.0 * rng.unit() - 1.0)).floor();
        sends[s].push(OpSpec::Isend { dst: d, bytes, tag: i as i64, sync: false, comm: 0 });
        recvs[d].push(OpSpec::Irecv { src: Peer::Rank(s), tag: TagSpec::Value(i as i64), comm: 0 });
    }
    let ranks = sends.into_iter().zip(recvs).map(|(mut a, b)| {
        a.extend(b);
        a.push(OpSpec::Waitall);
        a
    });
    let trace = Trace::from_spec(TraceSpec { ranks: ranks.collect(), placement: None }).unwrap();
    let platform = Platform::from_json(&format!(
        r#"{{"cluster": {{"count": {n}, "speed": 1e9}}, "network": {{"bandwidth": 1.25e8, "latency": 1e-4}}}}"#
    ))
    .unwrap();
    let t0 = std::time::Instant::now();
    let res = simulate(&platform, &trace, &SimOptions::default()).unwrap();
    println!("{n} hosts, {m} flows: simulate {:.3} s, makespan {:.6}", t0.elapsed().as_secs_f64(), res.makespan);
}
