use commaware_core::multicast::*;
fn main() {
    let n: usize = std::env::args().nth(1).map_or(64, |s| s.parse().unwrap());
    let alg = Algorithm::from_name(&std::env::args().nth(2).unwrap_or("ecf".into())).unwrap();
    let inst = generate(&GenParams { nodes: n, pattern: Pattern::AllToAll, sizes: Sizes::Small, network: Network::Fast }, 1);
    let t = std::time::Instant::now();
    let reps = 200;
    for _ in 0..reps { let _ = schedule(&inst, alg, 1).unwrap(); }
    println!("{} {n}: {:.3} ms", alg.name(), t.elapsed().as_secs_f64() * 1e3 / reps as f64);
}
