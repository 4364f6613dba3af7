//! Scheduling times (release build):
//!
//!   cargo run --release --example timing            # the targets
//!   cargo run --release --example timing -- table   # beside the paper's Table 1
//!
//! Targets (issue 4): all-to-all broadcast on 1,024 nodes under 5 s for WR,
//! EAF and RR; ECF on 256 nodes under 10 s. Times cover `schedule_ok()` only
//! (validation, scheduling, building the `Schedule`), not instance generation.

use std::time::Instant;

use commaware_core::multicast::*;

/// The schedulers on instances the test builds valid.
fn schedule_ok(inst: &Instance, alg: Algorithm, seed: u64) -> Schedule {
    schedule(inst, alg, seed).expect("valid instance")
}


fn a2a(nodes: usize, sizes: Sizes, network: Network, seed: u64) -> Instance {
    generate(
        &GenParams {
            nodes,
            pattern: Pattern::AllToAll,
            sizes,
            network,
        },
        seed,
    )
}

fn seconds(inst: &Instance, alg: Algorithm) -> (f64, f64) {
    let t = Instant::now();
    let s = schedule_ok(inst, alg, 1);
    (t.elapsed().as_secs_f64(), s.completion_time)
}

fn targets() {
    let cases = [
        (Sizes::Small, Network::Fast, "1 KB, 1 Gbps"),
        (Sizes::Large, Network::Slow, "1-1.5 MB, 155 Mbps"),
    ];
    println!("all-to-all broadcast, scheduling time");
    for (sizes, network, label) in cases {
        let big = a2a(1024, sizes, network, 1);
        for alg in [Algorithm::Wr, Algorithm::Eaf, Algorithm::Rr, Algorithm::Rrs] {
            let (t, c) = seconds(&big, alg);
            let target = if alg == Algorithm::Rrs {
                "no target"
            } else {
                "target < 5 s"
            };
            println!(
                "  N=1024 {label:18} {:4} {t:7.3} s  ({target:12})  completion {c:.4} s",
                alg.name()
            );
        }
        let mid = a2a(256, sizes, network, 1);
        for alg in [Algorithm::Ecf, Algorithm::Ecfp] {
            let (t, c) = seconds(&mid, alg);
            let target = if alg == Algorithm::Ecf {
                "target < 10 s"
            } else {
                "no target"
            };
            println!(
                "  N=256  {label:18} {:4} {t:7.3} s  ({target:12})  completion {c:.4} s",
                alg.name()
            );
        }
    }
}

fn table() {
    // Table 1 of the paper: all-to-all broadcast, microseconds.
    let paper: [(usize, [f64; 11]); 5] = [
        (
            8,
            [0.4, 0.6, 0.2, 0.2, 0.15, 0.22, 2.0, 0.3, 0.28, 0.26, 0.29],
        ),
        (
            16,
            [5.0, 17.0, 1.0, 1.0, 1.0, 1.0, 47.0, 2.0, 2.0, 2.0, 3.0],
        ),
        (
            32,
            [
                127.0, 504.0, 17.0, 9.0, 9.0, 15.0, 2072.0, 44.0, 29.0, 28.0, 42.0,
            ],
        ),
        (
            64,
            [
                1033.0, 15871.0, 136.0, 97.0, 104.0, 150.0, 88053.0, 633.0, 426.0, 451.0, 716.0,
            ],
        ),
        (
            80,
            [
                2568.0, 45597.0, 296.0, 210.0, 243.0, 364.0, 232947.0, 1345.0, 1043.0, 1031.0,
                1575.0,
            ],
        ),
    ];
    let reps = 21;
    println!("all-to-all broadcast, 1 KB, 1 Gbps: median scheduling time over {reps} instances, microseconds");
    println!(
        "(the median, not the mean: on a shared machine a few runs lose the CPU for milliseconds)"
    );
    println!(
        "{:>5} {:>6} {:>10} {:>10} {:>8}",
        "N", "alg", "ours", "paper", "paper/ours"
    );
    for (n, row) in paper {
        let insts: Vec<Instance> = (0..reps)
            .map(|s| a2a(n, Sizes::Small, Network::Fast, s))
            .collect();
        for (a, alg) in Algorithm::ALL.into_iter().enumerate() {
            let mut ts: Vec<f64> = insts.iter().map(|i| seconds(i, alg).0 * 1e6).collect();
            ts.sort_by(f64::total_cmp);
            let t = ts[ts.len() / 2];
            println!(
                "{n:>5} {:>6} {t:>10.1} {:>10} {:>8.1}",
                alg.name(),
                row[a],
                row[a] / t
            );
        }
    }
}

fn main() {
    if std::env::args().any(|a| a == "table") {
        table();
    } else {
        targets();
    }
}
