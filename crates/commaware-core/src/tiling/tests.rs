use super::model::sweep_heights;
use super::*;
use crate::error::ErrorKind;
use crate::network::platform::Platform;
use crate::mpi::replay::SimOptions;

fn platform(n: usize, model: &str, bandwidth: f64, latency: f64) -> Platform {
    crate::mpi::platform_file::load_json(&format!(
        r#"{{"cluster": {{"count": {n}, "speed": 1e9}}, "network": {{"model": "{model}", "bandwidth": {bandwidth}, "latency": {latency}, "eager_threshold": 1e15}}}}"#
    ))
    .unwrap()
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs())
}

#[test]
fn steps_by_hand_2d() {
    // 8 × 12, mapping = dimension 2 (the largest), 2 processors along i, z = 3:
    // tiles 2 × 4, x_i = 1, x_k = 3; P = 1 + 3 + 1 = 5, P' = 2·1 + 3 + 1 = 6.
    let g = GridTiling::new(vec![8, 12], &[2], 3, None).unwrap();
    assert_eq!(g.mapping(), 1);
    assert_eq!(g.tiling.tile_counts().unwrap(), vec![2, 4]);
    assert_eq!(g.steps(Schedule::NonOverlapping), 5);
    assert_eq!(g.steps(Schedule::Overlapping), 6);
    // Tile (1, 2): step 1 + 2 = 3 under Π, 2·1 + 2 = 4 under Π'.
    assert_eq!(Schedule::NonOverlapping.time_step(&[1, 2], 1), 3);
    assert_eq!(Schedule::Overlapping.time_step(&[1, 2], 1), 4);
    assert_eq!(Schedule::Overlapping.vector(2, 1), vec![2, 1]);
}

#[test]
fn steps_by_hand_3d_and_by_enumeration() {
    // 6 × 4 × 10 on 3 × 2 processors, z = 5: tiles 3 × 2 × 2, x = (2, 1, 1);
    // P = 2 + 1 + 1 + 1 = 5, P' = 2(2 + 1) + 1 + 1 = 8.
    let g = GridTiling::new(vec![6, 4, 10], &[3, 2], 5, None).unwrap();
    assert_eq!(g.x(), vec![2, 1, 1]);
    assert_eq!(g.steps(Schedule::NonOverlapping), 5);
    assert_eq!(g.steps(Schedule::Overlapping), 8);
    // The step count is the last tile's step + 1 (eq. 5): check against every tile.
    for s in [Schedule::NonOverlapping, Schedule::Overlapping] {
        let mut last = 0;
        for i in 0..3 {
            for j in 0..2 {
                for k in 0..2 {
                    last = last.max(s.time_step(&[i, j, k], 2));
                }
            }
        }
        assert_eq!(last + 1, g.steps(s));
    }
    // Mapping along the first dimension: Π' = [1 2 2].
    let g = GridTiling::new(vec![12, 4, 6], &[2, 3], 4, Some(0)).unwrap();
    assert_eq!(g.tiling.tile_counts().unwrap(), vec![3, 2, 3]);
    assert_eq!(g.steps(Schedule::Overlapping), 2 + 2 * 1 + 2 * 2 + 1);
}

#[test]
fn paper_step_counts() {
    // §5.4 / §6.2 with the note's x_i = p_i − 1: 16×16×16384 on 4×4 at z = 64 has
    // x = (3, 3, 255): P = 262, P' = 268.
    let g = GridTiling::new(vec![16, 16, 16384], &[4, 4], 64, None).unwrap();
    assert_eq!((g.steps(Schedule::NonOverlapping), g.steps(Schedule::Overlapping)), (262, 268));
    let g = GridTiling::new(vec![12, 12, 1 << 19], &[3, 3], 1024, None).unwrap();
    assert_eq!(g.steps(Schedule::Overlapping), 2 * (2 + 2) + 511 + 1);
}

#[test]
fn geometry_rectangular_and_skewed() {
    let t = Tiling::new(vec![4, 6], vec![vec![1, 0], vec![0, 1]], TileShape::Sides(vec![2, 3]), None).unwrap();
    let g = t.geometry();
    assert_eq!(g.tiles, vec![2, 2]);
    assert!(close(g.tile_volume, 6.0, 1e-12));
    // Eq. (1): g·(1/2 + 1/3) = 5 points; eq. (2) without the mapping row (dimension 2): 3.
    assert!(close(g.v_comm_eq1, 5.0, 1e-12));
    assert!(close(g.v_comm_eq2, 3.0, 1e-12));
    // A skewed tiling: H = [[1/4, 0], [-1/8, 1/4]] with D = {(1,0),(1,1)}:
    // HD = [[1/4, 1/4], [-1/8, 1/8]] has a negative entry: illegal.
    let h = vec![vec![0.25, 0.0], vec![-0.125, 0.25]];
    let e = Tiling::new(vec![8, 8], vec![vec![1, 0], vec![1, 1]], TileShape::Matrix(h), None).unwrap_err();
    assert!(e.reason.contains("illegal tiling"), "{e}");
    // H = [[1/4, 0], [-1/8, 1/4]] with D = {(0,1),(1,1)}: HD = [[0, 1/4], [1/4, 1/8]] legal;
    // det H = 1/16, so 16 points a tile; eq. (1) = 16·(1/4 + 1/4 + 1/8) = 10.
    let h = vec![vec![0.25, 0.0], vec![-0.125, 0.25]];
    let t = Tiling::new(vec![8, 8], vec![vec![0, 1], vec![1, 1]], TileShape::Matrix(h), Some(1)).unwrap();
    let g = t.geometry();
    assert!(close(g.tile_volume, 16.0, 1e-12));
    assert!(close(g.v_comm_eq1, 10.0, 1e-12));
    assert!(close(g.v_comm_eq2, 4.0, 1e-12));
    // Corners (0,0), (7,0), (0,7), (7,7): row 2 gives 0, -0.875, 1.75, 0.875 → tiles -1..1.
    assert_eq!(g.tile_lower, vec![0, -1]);
    assert_eq!(g.tile_upper, vec![1, 1]);
}

#[test]
fn bad_tilings_are_rejected_with_the_field() {
    let unit = || vec![vec![1, 0, 0], vec![0, 1, 0], vec![0, 0, 1]];
    let long = Tiling::new(vec![8, 8, 8], vec![vec![3, 0, 0]], TileShape::Sides(vec![2, 4, 4]), None).unwrap_err();
    assert_eq!(long.field, "deps");
    let e = Tiling::new(vec![8, 8, 8], unit(), TileShape::Sides(vec![3, 4, 4]), None).unwrap_err();
    assert_eq!(e.field, "tile");
    let e = Tiling::new(vec![8, 8, 8], unit(), TileShape::Matrix(vec![vec![1.0, 1.0, 0.0], vec![1.0, 1.0, 0.0], vec![0.0, 0.0, 1.0]]), None)
        .unwrap_err();
    assert!(e.reason.contains("singular"));
    let e = GridTiling::new(vec![16, 16, 1024], &[3, 4], 64, None).unwrap_err();
    assert_eq!((e.field.as_str(), e.kind), ("procs", ErrorKind::Options));
    let e = GridTiling::new(vec![16, 16, 1024], &[4, 4], 100, None).unwrap_err();
    assert_eq!(e.field, "tile_height");
    let e = GridTiling::new(vec![16, 16, 1024], &[4, 4], 64, Some(3)).unwrap_err();
    assert_eq!(e.field, "mapping");
    let e = GridTiling::new(vec![16, 0, 1024], &[4, 4], 64, None).unwrap_err();
    assert_eq!(e.field, "space");
    let e = GridTiling::new(vec![16, 16, 1024], &[4], 64, None).unwrap_err();
    assert_eq!(e.field, "procs");
    assert!(CostModel { t_c: -1.0, latency: 0.0, bandwidth: 1.0 }.check().is_err());
    assert!(SciModel { t_c: 1e-7, t_start_dma: f64::NAN, t_sci_interrupt: 0.0 }.check().is_err());
}

#[test]
fn sci_closed_forms_match_brute_force() {
    let sci = SciModel { t_c: 2e-7, t_start_dma: 49.2e-6, t_sci_interrupt: 18.8e-6 };
    assert!(close(sci.a(), 124.4e-6, 1e-12));
    for (space, p) in [(vec![12u64, 12, 1 << 19], 3u64), (vec![24, 24, 1 << 18], 3), (vec![24, 24, 1 << 21], 3)] {
        let g = GridTiling::new(space.clone(), &[p, p], 1, None).unwrap();
        let opt = sci.optimum(&g);
        // Eq. (7) as a function of a real z, minimised by a fine geometric scan.
        let (c, xy, dimz) = (opt.C, (space[0] / p * space[1] / p) as f64, space[2] as f64);
        let t = |z: f64| (c + dimz / z) * (z * xy * sci.t_c + sci.a());
        let (mut best_z, mut best_t) = (1.0, t(1.0));
        let mut z = 1.0;
        while z < dimz {
            if t(z) < best_t {
                best_t = t(z);
                best_z = z;
            }
            z *= 1.0 + 1e-5;
        }
        assert!(close(opt.z_opt, best_z, 1e-4), "z_opt {} vs {best_z}", opt.z_opt);
        assert!(close(opt.T_min, best_t, 1e-9) && opt.T_min <= best_t * (1.0 + 1e-12));
        // And eq. (7) at a whole z through the grid tiling agrees with the closure.
        let g = GridTiling::new(space.clone(), &[p, p], 256, None).unwrap();
        assert!(close(sci.time(&g), t(256.0), 1e-12));
    }
}

#[test]
fn sweep_heights_are_divisors_up_to_the_limit() {
    assert_eq!(sweep_heights(&[16, 16, 64], &[4, 4], 2), vec![1, 2, 4, 8, 16]);
    assert_eq!(sweep_heights(&[6, 6, 36], &[3, 2], 2), vec![1, 2, 3, 4, 6, 9, 12]);
}

/// t_c that makes t_comp equal eq. (4)'s t_comm.
fn balanced(g: &GridTiling, latency: f64, bandwidth: f64) -> CostModel {
    let probe = CostModel { t_c: 1.0, latency, bandwidth }.formulas(g);
    CostModel { t_c: probe.t_comm / g.tiling.tile_volume(), latency, bandwidth }
}

#[test]
fn overlap_simulation_equals_eq4_at_balance_without_contention() {
    for (space, procs, z) in [(vec![16u64, 16, 1024], vec![4u64, 4], 64u64), (vec![12, 8, 300], vec![3, 2], 25), (vec![8, 96], vec![4], 8)] {
        for latency in [0.0, 1e-4] {
            let g = GridTiling::new(space.clone(), &procs, z, None).unwrap();
            let cm = balanced(&g, latency, 12.5e6);
            let f = cm.formulas(&g);
            assert!(close(f.t_comp, f.t_comm, 1e-12));
            let p = platform(g.n_procs() as usize, "contention_free", 12.5e6, latency);
            let run = simulate_program(&p, &g, Schedule::Overlapping, f.t_comp, &SimOptions::default()).unwrap();
            assert!(close(run.makespan, f.T_overlap, 1e-9), "{space:?}: sim {} vs eq. 4 {}", run.makespan, f.T_overlap);
            // Away from the balance, eq. (4) charges two whole steps per pipeline hop and
            // overestimates.
            let slow = CostModel { t_c: cm.t_c * 3.0, ..cm }.formulas(&g);
            let run = simulate_program(&p, &g, Schedule::Overlapping, slow.t_comp, &SimOptions::default()).unwrap();
            assert!(run.makespan < slow.T_overlap * (1.0 - 1e-6));
        }
    }
}

#[test]
fn blocking_step_costs_tcomp_plus_all_messages() {
    // The steady state of the blocking program: each added tile per processor costs
    // t_comp + t_comm_block (eq. 3's step), exactly, with or without shared NICs.
    for model in ["contention_free", "maxmin"] {
        let cm = CostModel { t_c: 1e-6, latency: 5e-5, bandwidth: 12.5e6 };
        let run = |dimz: u64| {
            let g = GridTiling::new(vec![12, 12, dimz], &[3, 3], 16, None).unwrap();
            let f = cm.formulas(&g);
            let p = platform(9, model, cm.bandwidth, cm.latency);
            (simulate_program(&p, &g, Schedule::NonOverlapping, f.t_comp, &SimOptions::default()).unwrap().makespan, f)
        };
        let (m1, f1) = run(16 * 40);
        let (m2, _) = run(16 * 80);
        assert!(close((m2 - m1) / 40.0, f1.t_comp + f1.t_comm_block, 1e-9), "{model}: {} vs {}", (m2 - m1) / 40.0, f1.t_comp + f1.t_comm_block);
        // The pipeline fill costs less than eq. (3)'s whole steps: the formula is an upper bound.
        assert!(m1 < f1.T_block);
    }
}

#[test]
fn programs_are_refused_beyond_the_op_budget() {
    let g = GridTiling::new(vec![64, 64, 1 << 24], &[8, 8], 1, None).unwrap();
    let e = program(&g, Schedule::Overlapping, 1e-6).unwrap_err();
    assert_eq!(e.field, "tile_height");
    let p = platform(4, "maxmin", 1e8, 0.0);
    let g = GridTiling::new(vec![16, 16, 64], &[4, 4], 4, None).unwrap();
    assert_eq!(simulate_program(&p, &g, Schedule::Overlapping, 1e-3, &SimOptions::default()).unwrap_err().field, "procs");
}

#[test]
fn interference_slows_the_overlapped_compute() {
    let p = crate::mpi::platform_file::load_json(
        r#"{"cluster": {"count": 16, "speed": 1e9, "interference": {"recv": 0.052, "send": 0.034}},
            "network": {"model": "maxmin", "bandwidth": 12500000.0, "latency": 0.0001}}"#,
    )
    .unwrap();
    let g = GridTiling::new(vec![16, 16, 4096], &[4, 4], 256, None).unwrap();
    let t_comp = g.tiling.tile_volume() * 3e-7;
    let run = simulate_program(&p, &g, Schedule::Overlapping, t_comp, &SimOptions::default()).unwrap();
    assert!(run.max_compute_seconds > 16.0 * t_comp * (1.0 + 1e-6));
}
