//! Routes beyond minimal (issue 44) on small clusters, listed by hand, and the mean path
//! lengths of minimal and Valiant routing against their closed forms.

use super::tests::{h, names, params};
use super::*;
use crate::network::topology::routing::FixedState;

fn by(t: &dyn Topology, routing: Routing, s: u32, d: u32, state: &mut FixedState) -> Vec<String> {
    let mut out = Vec::new();
    t.route_by(routing, h(s), h(d), state, &mut out).unwrap();
    out.iter().map(|&l| t.link_name(l)).collect()
}

/// Links of a route between routers or torus nodes (no host link, no limiter).
fn fabric_hops(t: &dyn Topology, route: &[TopologyLink]) -> usize {
    route.iter().filter(|&&l| !t.link_name(l).starts_with("local_link") && !t.link_name(l).contains("limiter")).count()
}

#[test]
fn dragonfly_valiant_goes_through_the_drawn_router() {
    // 3 groups of 1 chassis of 3 routers, 1 host each: host = 3 × group + blade.
    let t = build_cluster_with(&params(ClusterKind::Dragonfly, "3,1;1,1;3,1;1", 9), DragonflyRouting::Minimal).unwrap();
    // Host 0 (group 0 blade 0) -> host 3 (group 1 blade 0) through group 2 (the only other;
    // draw 0) at blade 1 (draw 1): green 0-2 to group 0's gate to group 2, blue 0-2, arrive at
    // blade 0 of group 2, green 0-1 to the drawn router, which is the gate to group 1: blue
    // 1-2, arrive at blade 2 of group 1, green 0-2 to blade 0.
    let r = by(&*t, Routing::Valiant, 0, 3, &mut FixedState::new(&[0, 1]));
    assert_eq!(
        r,
        [
            "local_link_from_router_0_to_node_0_0_UP",
            "green_link_in_chassis_0_between_routers_0_and_2_10_UP",
            "blue_link_between_group_0_and_2_routers_2_and_6_19_UP",
            "green_link_in_chassis_0_between_routers_0_and_1_15_UP",
            "blue_link_between_group_1_and_2_routers_5_and_7_20_DOWN",
            "green_link_in_chassis_0_between_routers_0_and_2_13_DOWN",
            "local_link_from_router_3_to_node_0_3_DOWN",
        ]
    );
    // Within a group Valiant is minimal, and takes no draw.
    let mut state = FixedState::new(&[7]);
    assert_eq!(by(&*t, Routing::Valiant, 0, 2, &mut state), names(&*t, h(0), h(2)).0);
    assert_eq!(state.next, 0);
}

#[test]
fn ugal_takes_valiant_only_when_the_minimal_route_is_loaded() {
    let t = build_cluster_with(&params(ClusterKind::Dragonfly, "3,1;1,1;3,1;1", 9), DragonflyRouting::Minimal).unwrap();
    let minimal = names(&*t, h(0), h(3)).0;
    let mut route = Vec::new();
    t.route(h(0), h(3), &mut route).unwrap();
    // Minimal 0 -> 3: local, green 0-1 (to the gate to group 1), blue 0-1, local: 4 cables,
    // idle cost 4 × 1/bw; Valiant through group 2 blade 1: 7 cables, cost 7 × 1/bw.
    for routing in [Routing::UgalG, Routing::UgalL] {
        assert_eq!(by(&*t, routing, 0, 3, &mut FixedState::new(&[0, 1])), minimal, "{routing:?} idle");
    }
    // 3 flows on the blue link 0-1 (bandwidth 1e9): minimal costs 4 × 4e-9 > 7 × 1e-9.
    let blue = route[2];
    assert!(t.link_name(blue).starts_with("blue_link_between_group_0_and_1"));
    let mut state = FixedState::new(&[0, 1]);
    state.loads.insert(blue, 3);
    let g = by(&*t, Routing::UgalG, 0, 3, &mut state);
    assert_eq!(g, by(&*t, Routing::Valiant, 0, 3, &mut FixedState::new(&[0, 1])));
    // UGAL-L sees only the source router's link: the green hop to the gate is idle, so minimal.
    let mut state = FixedState::new(&[0, 1]);
    state.loads.insert(blue, 3);
    assert_eq!(by(&*t, Routing::UgalL, 0, 3, &mut state), minimal);
    // Load that green hop (minimal's first router link) instead: UGAL-L turns to Valiant,
    // whose first router link (green 0-2) is idle; with one flow, 4 × 2 > 7 × 1 as well.
    let mut state = FixedState::new(&[0, 1]);
    state.loads.insert(route[1], 1);
    assert_eq!(by(&*t, Routing::UgalL, 0, 3, &mut state), g);
    // One flow on the blue link is enough: 4 × 2 = 8 > 7 × 1.
    let mut state = FixedState::new(&[0, 1]);
    state.loads.insert(blue, 1);
    assert_eq!(by(&*t, Routing::UgalG, 0, 3, &mut state), g);
}

/// The mean router-to-router hops of `routing` over every pair of routers in different
/// groups (one host per router) and, for Valiant, every draw.
fn mean_hops(t: &dyn Topology, routing: Routing, g: u64, per_group: u64) -> f64 {
    let (mut total, mut count) = (0usize, 0usize);
    for s in 0..g * per_group {
        for d in 0..g * per_group {
            if s / per_group == d / per_group {
                continue;
            }
            let draws: Vec<(u64, u64)> = match routing {
                Routing::Minimal => vec![(0, 0)],
                _ => (0..g - 2).flat_map(|a| (0..per_group).map(move |b| (a, b))).collect(),
            };
            for (a, b) in draws {
                let mut out = Vec::new();
                t.route_by(routing, h(s as u32), h(d as u32), &mut FixedState::new(&[a, b]), &mut out).unwrap();
                total += fabric_hops(t, &out);
                count += 1;
            }
        }
    }
    total as f64 / count as f64
}

#[test]
fn dragonfly_mean_hops_match_their_closed_forms() {
    // Between groups, minimal routing crosses one global link, plus a green hop where the
    // blade differs and a black hop where the chassis differs, at each end; with the two
    // routers uniform in their groups each local hop is needed with probability 1 − 1/r
    // (green) and 1 − 1/c (black), independently: E = 1 + 2 (2 − 1/r − 1/c). Valiant is two
    // such routes (the drawn router uniform in its group): E = 2 + 4 (2 − 1/r − 1/c).
    for (topo, g, c, r) in [("4,1;2,1;3,1;1", 4u64, 2u64, 3u64), ("5,1;3,1;2,1;1", 5, 3, 2), ("3,1;1,1;3,1;1", 3, 1, 3)] {
        let t = build_cluster_with(&params(ClusterKind::Dragonfly, topo, g * c * r), DragonflyRouting::Minimal).unwrap();
        let local = 2.0 - 1.0 / r as f64 - 1.0 / c as f64;
        let minimal = mean_hops(&*t, Routing::Minimal, g, c * r);
        assert!((minimal - (1.0 + 2.0 * local)).abs() < 1e-12, "{topo}: minimal {minimal}");
        let valiant = mean_hops(&*t, Routing::Valiant, g, c * r);
        assert!((valiant - (2.0 + 4.0 * local)).abs() < 1e-12, "{topo}: valiant {valiant}");
    }
}

#[test]
fn torus_valiant_through_a_node_and_its_mean_length() {
    let t = build_cluster(&params(ClusterKind::Torus, "4", 4)).unwrap();
    // 0 -> 1 through node 2 (draw 2): up 0 -> 1 -> 2 (the tie goes up), then down 2 -> 1.
    assert_eq!(
        by(&*t, Routing::Valiant, 0, 1, &mut FixedState::new(&[2])),
        ["c_link_from_0_to_1_UP", "c_link_from_1_to_2_UP", "c_link_from_1_to_2_DOWN"]
    );
    // Through the source or the destination itself: the minimal route.
    for mid in [0, 1] {
        assert_eq!(by(&*t, Routing::Valiant, 0, 1, &mut FixedState::new(&[mid])), names(&*t, h(0), h(1)).0);
    }
    // The mean over the drawn node of Valiant's length, for every pair, is twice the mean
    // distance from a node to a uniform node: Σ_j ⌊k_j² / 4⌋ / k_j per phase.
    for (topo, dims) in [("4", vec![4u64]), ("3,4", vec![3, 4]), ("5,2,3", vec![5, 2, 3])] {
        let n: u64 = dims.iter().product();
        let t = build_cluster(&params(ClusterKind::Torus, topo, n)).unwrap();
        let phase: f64 = dims.iter().map(|&k| (k * k / 4) as f64 / k as f64).sum();
        for s in 0..n as u32 {
            for d in (0..n as u32).filter(|&d| d != s) {
                let total: usize = (0..n)
                    .map(|mid| {
                        let mut out = Vec::new();
                        t.route_by(Routing::Valiant, h(s), h(d), &mut FixedState::new(&[mid]), &mut out).unwrap();
                        fabric_hops(&*t, &out)
                    })
                    .sum();
                assert!((total as f64 / n as f64 - 2.0 * phase).abs() < 1e-12, "{topo}: {s} -> {d}");
            }
        }
    }
}

#[test]
fn fat_tree_ecmp_and_adaptive_pick_the_up_link() {
    // 4 hosts, 2 leaves (ids 7, 6) with 2 parents each, 2 top switches (ids 5, 4).
    let t = build_cluster(&params(ClusterKind::FatTree, "2;2,2;1,2;1,1", 4)).unwrap();
    let simgrid = names(&*t, h(0), h(3)).0; // d-mod-k: top switch 1 (id 4)
    let mut state = FixedState::new(&[0]);
    // The hash picks option (hash + level) % 2 at level 1: hash 1 gives top switch 0 (id 5).
    state.hash = 1;
    let ecmp = by(&*t, Routing::Ecmp, 0, 3, &mut state);
    assert_eq!(ecmp, ["link_from_0_7_0_UP", "link_from_7_5_4_UP", "link_from_6_5_6_DOWN", "link_from_3_6_3_DOWN"]);
    state.hash = 0;
    assert_eq!(by(&*t, Routing::Ecmp, 0, 3, &mut state), simgrid);
    // Adaptive: idle, SimGrid's choice; one flow on its up-link, the other top switch.
    let mut idle = FixedState::new(&[0]);
    assert_eq!(by(&*t, Routing::Adaptive, 0, 3, &mut idle), simgrid);
    let mut route = Vec::new();
    t.route(h(0), h(3), &mut route).unwrap();
    idle.loads.insert(route[1], 1);
    assert_eq!(by(&*t, Routing::Adaptive, 0, 3, &mut idle), ecmp);
    // Hosts under one leaf never go up: every routing gives SimGrid's route.
    for routing in [Routing::Ecmp, Routing::Adaptive] {
        assert_eq!(by(&*t, routing, 1, 0, &mut FixedState::new(&[0])), names(&*t, h(1), h(0)).0);
    }
}

#[test]
fn a_routing_of_another_topology_is_refused() {
    let t = build_cluster(&params(ClusterKind::FatTree, "2;2,2;1,2;1,1", 4)).unwrap();
    let e = t.route_by(Routing::Valiant, h(0), h(3), &mut FixedState::new(&[0]), &mut Vec::new()).unwrap_err();
    assert!(e.to_string().contains("routing `valiant` does not apply to a `fat_tree` topology"), "{e}");
    let t = build_cluster(&params(ClusterKind::Flat, "", 4)).unwrap();
    assert!(t.route_by(Routing::Ecmp, h(0), h(3), &mut FixedState::new(&[0]), &mut Vec::new()).is_err());
}
