//! Tests: the worked example of §6 (Figs. 4 and 5), random instances against
//! the checker, the lower bound and a brute-force reference, and bad input.

use super::*;
use crate::util::rng::SplitMix64;

/// The schedulers on instances the test builds valid.
fn schedule_ok(inst: &Instance, alg: Algorithm, seed: u64) -> Schedule {
    schedule(inst, alg, seed).expect("valid instance")
}

fn schedule_forced_ok(inst: &Instance, alg: Algorithm, receivers: &[usize]) -> Schedule {
    schedule_forced(inst, alg, receivers).expect("valid instance")
}

/// The instance of Figs. 4 and 5, rebuilt from the text of §6. The figure's
/// caption gives P0, P1: send_cost 1, recv_cost 3; P2, P3: send_cost 2,
/// recv_cost 6, and the three multicasts P0 -> {1, 2}, P1 -> {2, 3},
/// P2 -> {0, 1, 3}. The transmission time is not printed; the numbers of the
/// text fix it at 0: ECF's first completion (0, 1, 0) is 4 = S(0) + R(1), and
/// WR's W_{0,1} = S(2) + R(0) = 2 + 3 = 5 has no transmission term. Costs are
/// constant (per-byte parts 0), so the message size is irrelevant (1 byte).
fn fig4() -> Instance {
    let node = |s: f64, r: f64| NodeParams {
        send_const: s,
        send_per_byte: 0.0,
        recv_const: r,
        recv_per_byte: 0.0,
    };
    let mc = |source: usize, destinations: Vec<usize>| Multicast {
        source,
        destinations,
        bytes: 1.0,
    };
    Instance {
        nodes: vec![
            node(1.0, 3.0),
            node(1.0, 3.0),
            node(2.0, 6.0),
            node(2.0, 6.0),
        ],
        transmission: Transmission::Default(0.0),
        multicasts: vec![mc(0, vec![1, 2]), mc(1, vec![2, 3]), mc(2, vec![0, 1, 3])],
    }
}

/// The receiver order the printed RRS and RRSP runs imply (issue notes).
const RRS_ORDER: [usize; 7] = [1, 1, 0, 3, 2, 3, 2];

/// A printed sequence of (sender, receiver, source) triples.
type Printed = [(usize, usize, usize); 7];

fn seq(alg: Algorithm) -> Vec<(usize, usize, usize)> {
    let inst = fig4();
    let s = if matches!(alg, Algorithm::Rrs | Algorithm::Rrsp) {
        schedule_forced_ok(&inst, alg, &RRS_ORDER)
    } else {
        schedule_ok(&inst, alg, 0)
    };
    validate_schedule(&inst, &s).unwrap();
    s.triples()
}

#[test]
fn fig4_non_preemptive_sequences() {
    use Algorithm::*;
    let printed: [(Algorithm, Printed); 6] = [
        (
            Fef,
            [
                (0, 1, 0),
                (2, 0, 2),
                (0, 1, 2),
                (0, 2, 0),
                (1, 2, 1),
                (0, 3, 2),
                (1, 3, 1),
            ],
        ),
        (
            Ecf,
            [
                (0, 1, 0),
                (2, 0, 2),
                (2, 1, 2),
                (0, 2, 0),
                (0, 3, 2),
                (1, 2, 1),
                (1, 3, 1),
            ],
        ),
        (
            Wr,
            [
                (2, 0, 2),
                (2, 1, 2),
                (0, 2, 0),
                (0, 3, 2),
                (0, 1, 0),
                (1, 2, 1),
                (1, 3, 1),
            ],
        ),
        (
            Eaf,
            [
                (2, 0, 2),
                (2, 1, 2),
                (2, 3, 2),
                (0, 2, 0),
                (0, 1, 0),
                (1, 2, 1),
                (1, 3, 1),
            ],
        ),
        (
            Rr,
            [
                (2, 0, 2),
                (2, 1, 2),
                (0, 2, 0),
                (0, 3, 2),
                (0, 1, 0),
                (1, 2, 1),
                (1, 3, 1),
            ],
        ),
        (
            Rrs,
            [
                (0, 1, 0),
                (2, 1, 2),
                (2, 0, 2),
                (2, 3, 2),
                (0, 2, 0),
                (1, 3, 1),
                (1, 2, 1),
            ],
        ),
    ];
    for (alg, want) in printed {
        assert_eq!(seq(alg), want.to_vec(), "{alg}");
    }
}

#[test]
fn fig4_ecf_completion_times() {
    let s = schedule_ok(&fig4(), Algorithm::Ecf, 0);
    let times: Vec<f64> = s.sequence.iter().map(|x| x.complete).collect();
    assert_eq!(times, vec![4.0, 5.0, 7.0, 12.0, 13.0, 18.0, 19.0]);
    assert_eq!(s.completion_time, 19.0);
}

/// All five printed preemptive sequences come out exactly with the notes'
/// rules (head task, target = later of own receive and last send, condition
/// (10), receiver list updated first). ECFP's third step needs the "lowest
/// receiver first" tie: (2, 1, 2) and (1, 3, 1) both complete at 7, and the
/// issue's "lowest source first" would take (1, 3, 1).
#[test]
fn fig5_preemptive_sequences() {
    use Algorithm::*;
    let printed: [(Algorithm, Printed); 5] = [
        (
            Ecfp,
            [
                (0, 1, 0),
                (2, 0, 2),
                (2, 1, 2),
                (1, 3, 1),
                (0, 2, 0),
                (0, 3, 2),
                (1, 2, 1),
            ],
        ),
        (
            Wrp,
            [
                (2, 0, 2),
                (0, 1, 0),
                (0, 2, 0),
                (1, 3, 1),
                (0, 1, 2),
                (1, 2, 1),
                (0, 3, 2),
            ],
        ),
        (
            Eafp,
            [
                (2, 0, 2),
                (0, 1, 0),
                (1, 3, 1),
                (0, 2, 0),
                (0, 1, 2),
                (0, 3, 2),
                (1, 2, 1),
            ],
        ),
        (
            Rrp,
            [
                (2, 0, 2),
                (0, 1, 0),
                (0, 2, 0),
                (1, 3, 1),
                (0, 1, 2),
                (1, 2, 1),
                (0, 3, 2),
            ],
        ),
        (
            Rrsp,
            [
                (0, 1, 0),
                (2, 1, 2),
                (2, 0, 2),
                (1, 3, 1),
                (0, 2, 0),
                (0, 3, 2),
                (1, 2, 1),
            ],
        ),
    ];
    for (alg, want) in printed {
        assert_eq!(seq(alg), want.to_vec(), "{alg}");
    }
}

/// ECFP's preemption (§6): the send (1, 3, 1) goes into node 1's idle wait
/// before its receive (0, 1, 0): node 1's list is send 3:1 [0, 1], then
/// receive 0:0 ending at 4 (it waited for S(0) only), then receive 2:2.
#[test]
fn fig5_ecfp_task_list_of_node_1() {
    let s = schedule_ok(&fig4(), Algorithm::Ecfp, 0);
    let t = &s.tasks[1];
    assert_eq!(
        (t[0].kind, t[0].peer, t[0].source, t[0].start, t[0].end),
        (TaskKind::Send, 3, 1, 0.0, 1.0)
    );
    assert_eq!(
        (t[1].kind, t[1].peer, t[1].source, t[1].end),
        (TaskKind::Recv, 0, 0, 4.0)
    );
    assert_eq!((t[2].kind, t[2].source, t[2].end), (TaskKind::Recv, 2, 7.0));
}

#[test]
fn fig4_lower_bound() {
    // Node 2 receives from 0 and 1, both released at S = 1: 1 + 6 + 6 = 13.
    assert_eq!(lower_bound(&fig4()), 13.0);
}

/// Eq. (4)'s earliest-reach-first order is not a bound when sizes differ:
/// node 2 gets a 10-byte message released at 0 (reach 10) and a 1-byte one
/// released at 5 (reach 6). Reach order gives 6, then 16; release order
/// gives 10, then 11, and a valid schedule does finish at 11.
#[test]
fn lower_bound_uses_release_order() {
    let node = |s: f64, rm: f64| NodeParams {
        send_const: s,
        send_per_byte: 0.0,
        recv_const: 0.0,
        recv_per_byte: rm,
    };
    let inst = Instance {
        nodes: vec![node(0.0, 0.0), node(5.0, 0.0), node(0.0, 1.0)],
        transmission: Transmission::Default(0.0),
        multicasts: vec![
            Multicast {
                source: 0,
                destinations: vec![2],
                bytes: 10.0,
            },
            Multicast {
                source: 1,
                destinations: vec![2],
                bytes: 1.0,
            },
        ],
    };
    assert_eq!(lower_bound(&inst), 11.0);
    let task = |kind, peer, source, start, end| Task {
        kind,
        peer,
        source,
        start,
        end,
    };
    let sel = |sender, source, complete| Selection {
        sender,
        receiver: 2,
        source,
        complete,
    };
    let manual = Schedule {
        algorithm: "manual".into(),
        sequence: vec![sel(0, 0, 10.0), sel(1, 1, 11.0)],
        tasks: vec![
            vec![task(TaskKind::Send, 2, 0, 0.0, 0.0)],
            vec![task(TaskKind::Send, 2, 1, 0.0, 5.0)],
            vec![
                task(TaskKind::Recv, 0, 0, 0.0, 10.0),
                task(TaskKind::Recv, 1, 1, 10.0, 11.0),
            ],
        ],
        completion_time: 11.0,
    };
    validate_schedule(&inst, &manual).unwrap();
}

/// Relays may only be the multicast's own nodes: node 2 is fast but not in
/// multicast 0, so the bound may not route through it.
#[test]
fn lower_bound_relays_only_through_own_nodes() {
    let node = |s: f64| NodeParams {
        send_const: s,
        send_per_byte: 0.0,
        recv_const: 1.0,
        recv_per_byte: 0.0,
    };
    let slow = 100.0;
    let fast = 0.0;
    let inst = Instance {
        nodes: vec![node(0.0), node(0.0), node(0.0)],
        transmission: Transmission::Matrix(vec![
            vec![0.0, slow, fast],
            vec![slow, 0.0, fast],
            vec![fast, fast, 0.0],
        ]),
        multicasts: vec![Multicast {
            source: 0,
            destinations: vec![1],
            bytes: 1.0,
        }],
    };
    assert_eq!(lower_bound(&inst), slow + 1.0);
    // With node 2 as a destination, the relay 0 -> 2 -> 1 counts: 1 + 1 = 2.
    let mut with2 = inst.clone();
    with2.multicasts[0].destinations = vec![1, 2];
    assert_eq!(lower_bound(&with2), 2.0);
}

/// Random instances: scalar networks from `generate`, plus random matrices
/// and some zero costs, on few nodes.
fn random_instances() -> Vec<Instance> {
    let mut out = Vec::new();
    let mut rng = SplitMix64::new(7);
    for seed in 0..60u64 {
        let n = 2 + (seed as usize % 9);
        let pattern = match seed % 4 {
            0 => Pattern::Broadcast { source: None },
            1 => Pattern::AllToAll,
            2 => Pattern::Random {
                sources: 1 + rng.below_usize(n),
                destinations: None,
            },
            _ => Pattern::Random {
                sources: n,
                destinations: Some(1 + rng.below_usize(n - 1)),
            },
        };
        let sizes = [Sizes::Small, Sizes::Large, Sizes::Mixed][seed as usize % 3];
        let network = if seed % 2 == 0 {
            Network::Fast
        } else {
            Network::Slow
        };
        let mut inst = generate(
            &GenParams {
                nodes: n,
                pattern,
                sizes,
                network,
            },
            seed,
        );
        if seed % 5 == 0 {
            let x = network.seconds_per_byte().unwrap();
            inst.transmission = Transmission::Matrix(
                (0..n)
                    .map(|_| (0..n).map(|_| x * rng.uniform(0.2, 3.0)).collect())
                    .collect(),
            );
        }
        if seed % 7 == 0 {
            inst.nodes[0].send_const = 0.0;
            inst.nodes[n - 1].recv_const = 0.0;
        }
        out.push(inst);
    }
    // Integer costs make many exact ties.
    for seed in 0..40u64 {
        let mut r = SplitMix64::new(1000 + seed);
        let n = 3 + r.below_usize(6);
        let nodes = (0..n)
            .map(|_| NodeParams {
                send_const: r.below_usize(4) as f64,
                send_per_byte: 0.0,
                recv_const: r.below_usize(7) as f64,
                recv_per_byte: r.below_usize(2) as f64,
            })
            .collect();
        let mut multicasts = Vec::new();
        for s in 0..n {
            if r.below_usize(3) > 0 {
                let destinations: Vec<usize> = (0..n)
                    .filter(|&d| d != s && r.below_usize(2) == 0)
                    .collect();
                if !destinations.is_empty() {
                    multicasts.push(Multicast {
                        source: s,
                        destinations,
                        bytes: r.below_usize(3) as f64,
                    });
                }
            }
        }
        let transmission = if seed % 2 == 0 {
            Transmission::Default(r.below_usize(3) as f64)
        } else {
            Transmission::Matrix(
                (0..n)
                    .map(|_| (0..n).map(|_| r.below_usize(3) as f64).collect())
                    .collect(),
            )
        };
        out.push(Instance {
            nodes,
            transmission,
            multicasts,
        });
    }
    out
}

#[test]
fn random_schedules_are_valid_and_above_the_bound() {
    for (q, inst) in random_instances().iter().enumerate() {
        inst.validate().unwrap();
        let lb = lower_bound(inst);
        for alg in Algorithm::ALL {
            let s = schedule_ok(inst, alg, q as u64);
            if let Err(e) = validate_schedule(inst, &s) {
                panic!("instance {q}, {alg}: {e}");
            }
            assert!(
                s.completion_time >= lb - 1e-9,
                "instance {q}, {alg}: {} < bound {lb}",
                s.completion_time
            );
            assert_eq!(s.sequence.len(), inst.deliveries());
        }
    }
}

/// The heaps and pruning give exactly the selections of a brute-force scan
/// of every (receiver, source, sender) in the paper's order.
#[test]
fn fast_selection_equals_brute_force() {
    for (q, inst) in random_instances().iter().enumerate() {
        for alg in Algorithm::ALL {
            let fast = run(inst, alg, q as u64, None, false);
            let slow = run(inst, alg, q as u64, None, true);
            assert_eq!(fast.sequence, slow.sequence, "instance {q}, {alg}");
        }
    }
}

#[test]
fn same_seed_same_output() {
    let p = GenParams {
        nodes: 12,
        pattern: Pattern::Random {
            sources: 5,
            destinations: None,
        },
        sizes: Sizes::Mixed,
        network: Network::Slow,
    };
    assert_eq!(generate(&p, 3), generate(&p, 3));
    assert_ne!(generate(&p, 3), generate(&p, 4));
    let inst = generate(&p, 3);
    assert_eq!(
        schedule_ok(&inst, Algorithm::Rrs, 9),
        schedule_ok(&inst, Algorithm::Rrs, 9)
    );
    assert_eq!(
        schedule_ok(&inst, Algorithm::Rrsp, 9),
        schedule_ok(&inst, Algorithm::Rrsp, 9)
    );
}

#[test]
fn generate_follows_section_7() {
    let p = GenParams {
        nodes: 30,
        pattern: Pattern::Random {
            sources: 10,
            destinations: Some(5),
        },
        sizes: Sizes::Mixed,
        network: Network::Slow,
    };
    let inst = generate(&p, 11);
    inst.validate().unwrap();
    assert_eq!(inst.multicasts.len(), 10);
    for n in &inst.nodes {
        assert!((80e-6..400e-6).contains(&n.send_const) && (80e-6..400e-6).contains(&n.recv_const));
        assert!(
            (1e-10..1e-8).contains(&n.send_per_byte) && (1e-10..1e-8).contains(&n.recv_per_byte)
        );
    }
    for m in &inst.multicasts {
        assert_eq!(m.destinations.len(), 5);
        assert!([1024.0, 1_048_576.0, 1_572_864.0].contains(&m.bytes));
    }
    assert_eq!(inst.transmission, Transmission::Default(8.0 / 155e6));
    let a2a = generate(
        &GenParams {
            nodes: 6,
            pattern: Pattern::AllToAll,
            sizes: Sizes::Small,
            network: Network::Fast,
        },
        1,
    );
    assert_eq!(a2a.deliveries(), 30);
    assert_eq!(a2a.transmission, Transmission::Default(8e-9));
}

#[test]
fn generate_mixed_network_draws_each_pair() {
    let params = |network| GenParams {
        nodes: 40,
        pattern: Pattern::AllToAll,
        sizes: Sizes::Small,
        network,
    };
    let mixed = generate(&params(Network::Mixed), 5);
    mixed.validate().unwrap();
    let Transmission::Matrix(x) = &mixed.transmission else {
        panic!("a mixed network is a matrix")
    };
    let (mut fast, mut slow) = (0, 0);
    for i in 0..40 {
        assert_eq!(x[i][i], 0.0);
        for j in i + 1..40 {
            assert_eq!(x[i][j], x[j][i], "links are symmetric");
            if x[i][j] == FAST_SECONDS_PER_BYTE {
                fast += 1;
            } else {
                assert_eq!(x[i][j], SLOW_SECONDS_PER_BYTE);
                slow += 1;
            }
        }
    }
    // 780 pairs, each fast with probability 1/2: far from all one kind.
    assert!(fast > 300 && slow > 300, "fast {fast}, slow {slow}");
    // The links are drawn last: same nodes and multicasts as the homogeneous instance.
    let fast_inst = generate(&params(Network::Fast), 5);
    assert_eq!(mixed.nodes, fast_inst.nodes);
    assert_eq!(mixed.multicasts, fast_inst.multicasts);
}

#[test]
fn instance_json_round_trip() {
    let text = r#"{"nodes": [{"send_const": 1, "send_per_byte": 0, "recv_const": 3, "recv_per_byte": 0},
                            {"send_const": 2, "send_per_byte": 0.5, "recv_const": 6, "recv_per_byte": 0}],
                   "transmission": {"matrix": [[0, 1], [1, 0]]},
                   "multicasts": [{"source": 0, "destinations": [1], "bytes": 8}]}"#;
    let inst: Instance = serde_json::from_str(text).unwrap();
    inst.validate().unwrap();
    assert_eq!(inst.x(0, 1), 1.0);
    let back: Instance = serde_json::from_str(&serde_json::to_string(&inst).unwrap()).unwrap();
    assert_eq!(back, inst);
    let d: Transmission = serde_json::from_str(r#"{"default": 0.5}"#).unwrap();
    assert_eq!(d, Transmission::Default(0.5));
    let s = schedule_ok(&inst, Algorithm::Ecf, 0);
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["tasks"][0][0]["kind"], "send");
    assert_eq!(json["sequence"][0]["complete"], 1.0 + 8.0 + 6.0);
}

#[test]
fn shorthands_and_names() {
    let nodes = fig4().nodes;
    let b = Instance::broadcast(nodes.clone(), Transmission::Default(0.0), 2, 1.0);
    assert_eq!(b.multicasts[0].destinations, vec![0, 1, 3]);
    let a = Instance::all_to_all(nodes, Transmission::Default(0.0), 1.0);
    assert_eq!(a.deliveries(), 12);
    for alg in Algorithm::ALL {
        assert_eq!(Algorithm::from_name(alg.name()), Some(alg));
        assert_eq!(Algorithm::from_name(&alg.name().to_uppercase()), Some(alg));
    }
    assert_eq!(Algorithm::from_name("nope"), None);
}

fn expect_err(f: impl FnOnce(&mut Instance), field: &str, reason_has: &str) {
    let mut inst = fig4();
    f(&mut inst);
    let e = inst.validate().expect_err(field);
    assert_eq!(e.field, field, "{e}");
    assert!(e.reason.contains(reason_has), "{e}");
}

#[test]
fn bad_input() {
    expect_err(
        |i| i.multicasts[1].destinations.push(1),
        "multicasts[1].destinations[2]",
        "source of this multicast",
    );
    expect_err(
        |i| i.multicasts[2].destinations.clear(),
        "multicasts[2].destinations",
        "empty",
    );
    expect_err(
        |i| i.multicasts[2].destinations[0] = 4,
        "multicasts[2].destinations[0]",
        "out of range",
    );
    expect_err(
        |i| i.multicasts[0].source = 9,
        "multicasts[0].source",
        "out of range",
    );
    expect_err(
        |i| i.nodes[3].recv_per_byte = -1.0,
        "nodes[3].recv_per_byte",
        "negative",
    );
    expect_err(
        |i| i.nodes[0].send_const = f64::NAN,
        "nodes[0].send_const",
        "finite",
    );
    expect_err(
        |i| i.nodes[1].send_per_byte = f64::INFINITY,
        "nodes[1].send_per_byte",
        "finite",
    );
    expect_err(
        |i| i.multicasts[0].bytes = -8.0,
        "multicasts[0].bytes",
        "negative",
    );
    expect_err(
        |i| i.transmission = Transmission::Default(-1.0),
        "transmission.default",
        "negative",
    );
    expect_err(
        |i| i.transmission = Transmission::Matrix(vec![vec![0.0; 4]; 3]),
        "transmission.matrix",
        "rows",
    );
    expect_err(
        |i| i.transmission = Transmission::Matrix(vec![vec![0.0; 3]; 4]),
        "transmission.matrix[0]",
        "square",
    );
    expect_err(
        |i| i.transmission = Transmission::Matrix(vec![vec![0.0, 0.0, -1.0, 0.0]; 4]),
        "transmission.matrix[0][2]",
        "negative",
    );
    expect_err(
        |i| i.multicasts[2].destinations[1] = 0,
        "multicasts[2].destinations[1]",
        "duplicate",
    );
    expect_err(
        |i| i.multicasts[1].source = 0,
        "multicasts[1].source",
        "also the source of multicasts[0]",
    );
    expect_err(|i| i.nodes.clear(), "nodes", "no nodes");
    // Bad JSON (a negative node id) fails to parse.
    assert!(serde_json::from_str::<Multicast>(
        r#"{"source": -1, "destinations": [1], "bytes": 1}"#
    )
    .is_err());
}

#[test]
fn checker_rejects_broken_schedules() {
    let inst = fig4();
    let good = schedule_ok(&inst, Algorithm::Ecfp, 0);
    validate_schedule(&inst, &good).unwrap();
    let mut late = good.clone();
    late.completion_time += 1.0;
    assert!(validate_schedule(&inst, &late).is_err());
    let mut shifted = good.clone();
    shifted.tasks[3][0].end += 0.5;
    assert!(validate_schedule(&inst, &shifted).is_err());
    // Node 0 relays source 2's message before receiving it.
    let mut early = schedule_ok(&inst, Algorithm::Fef, 0);
    let l = &mut early.tasks[0];
    let r = l
        .iter()
        .position(|t| t.kind == TaskKind::Recv && t.source == 2)
        .unwrap();
    let s = l
        .iter()
        .position(|t| t.kind == TaskKind::Send && t.source == 2)
        .unwrap();
    l.swap(r, s);
    assert!(validate_schedule(&inst, &early)
        .unwrap_err()
        .contains("before receiving"));
    // A destination dropped.
    let mut missing = good.clone();
    missing.tasks[3].retain(|t| t.source != 1);
    assert!(validate_schedule(&inst, &missing).is_err());
}

/// More than 64 messages, so the bitsets span several words.
#[test]
fn fast_selection_equals_brute_force_many_messages() {
    let sparse = GenParams {
        nodes: 70,
        pattern: Pattern::Random {
            sources: 70,
            destinations: Some(4),
        },
        sizes: Sizes::Mixed,
        network: Network::Slow,
    };
    let inst = generate(&sparse, 5);
    for alg in Algorithm::ALL {
        let fast = run(&inst, alg, 3, None, false);
        assert_eq!(
            fast.sequence,
            run(&inst, alg, 3, None, true).sequence,
            "{alg}"
        );
        validate_schedule(&inst, &fast).unwrap();
    }
    let dense = GenParams {
        nodes: 66,
        pattern: Pattern::AllToAll,
        sizes: Sizes::Small,
        network: Network::Fast,
    };
    let inst = generate(&dense, 6);
    for alg in [Algorithm::Wr, Algorithm::Eaf, Algorithm::Rr, Algorithm::Rrs] {
        let fast = run(&inst, alg, 3, None, false);
        assert_eq!(
            fast.sequence,
            run(&inst, alg, 3, None, true).sequence,
            "{alg}"
        );
        validate_schedule(&inst, &fast).unwrap();
        assert!(fast.completion_time >= lower_bound(&inst));
    }
}

#[test]
fn schedule_rejects_bad_input() {
    let mut inst = fig4();
    inst.multicasts[0].destinations.push(0);
    let e = schedule(&inst, Algorithm::Wr, 0).unwrap_err();
    assert!(e.field.starts_with("multicasts[0].destinations"), "{e}");
    assert!(schedule_forced(&fig4(), Algorithm::Ecf, &[1]).is_err());
}

/// Longer randomised check of the fast selection against brute force and of
/// the checker: `MC_STRESS=5000 cargo test --release -- --ignored stress`.
#[test]
#[ignore]
fn stress_fast_equals_brute_force() {
    let count: u64 = std::env::var("MC_STRESS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    for seed in 0..count {
        let mut r = SplitMix64::new(seed ^ 0xABCD);
        let n = 2 + r.below_usize(14);
        let pattern = match r.below_usize(3) {
            0 => Pattern::AllToAll,
            1 => Pattern::Broadcast { source: None },
            _ => Pattern::Random {
                sources: 1 + r.below_usize(n),
                destinations: None,
            },
        };
        let sizes = [Sizes::Small, Sizes::Large, Sizes::Mixed][r.below_usize(3)];
        let network = if r.below_usize(2) == 0 {
            Network::Fast
        } else {
            Network::Slow
        };
        let mut inst = generate(
            &GenParams {
                nodes: n,
                pattern,
                sizes,
                network,
            },
            seed,
        );
        match r.below_usize(4) {
            0 => {
                // Integer costs: many exact ties.
                for p in &mut inst.nodes {
                    p.send_const = r.below_usize(3) as f64;
                    p.recv_const = r.below_usize(3) as f64;
                    p.send_per_byte = 0.0;
                    p.recv_per_byte = 0.0;
                }
                inst.transmission = Transmission::Default(r.below_usize(2) as f64 * 1e-6);
            }
            1 => {
                let x = network.seconds_per_byte().unwrap();
                inst.transmission = Transmission::Matrix(
                    (0..n)
                        .map(|_| (0..n).map(|_| x * r.uniform(0.1, 4.0)).collect())
                        .collect(),
                );
            }
            _ => {}
        }
        let lb = lower_bound(&inst);
        for alg in Algorithm::ALL {
            let fast = run(&inst, alg, seed, None, false);
            assert_eq!(
                fast.sequence,
                run(&inst, alg, seed, None, true).sequence,
                "seed {seed} {alg}"
            );
            validate_schedule(&inst, &fast).unwrap_or_else(|e| panic!("seed {seed} {alg}: {e}"));
            assert!(fast.completion_time >= lb - 1e-9, "seed {seed} {alg}");
        }
    }
}

#[test]
fn execution_on_the_engine_matches_the_scheduler_without_contention() {
    let mut insts = vec![fig4()];
    for seed in 0..6u64 {
        let pattern = if seed % 2 == 0 {
            Pattern::AllToAll
        } else {
            Pattern::Random {
                sources: 3,
                destinations: Some(4),
            }
        };
        let sizes = if seed % 3 == 0 {
            Sizes::Small
        } else {
            Sizes::Large
        };
        insts.push(generate(
            &GenParams {
                nodes: 9,
                pattern,
                sizes,
                network: Network::Slow,
            },
            seed,
        ));
    }
    for inst in &insts {
        for alg in Algorithm::ALL {
            let s = schedule_ok(inst, alg, 3);
            let run = execute(inst, &s, "contention_free").unwrap();
            let tol = 1e-9 * s.completion_time.max(1e-9);
            assert!(
                (run.makespan - s.completion_time).abs() <= tol,
                "{alg}: engine {} vs scheduler {}",
                run.makespan,
                s.completion_time
            );
            // Contention can only slow a schedule down.
            let shared = execute(inst, &s, "maxmin").unwrap();
            assert!(
                shared.makespan >= s.completion_time - tol,
                "{alg}: maxmin {} < {}",
                shared.makespan,
                s.completion_time
            );
        }
    }
}

fn gen_params(nodes: usize, pattern: Pattern, network: Network) -> GenParams {
    GenParams { nodes, pattern, sizes: Sizes::Small, network }
}

#[test]
fn generate_refuses_too_many_nodes_before_allocating() {
    // --nodes 100000 used to grow to 24 GB; now it is an Options error at once.
    for nodes in [MAX_NODES + 1, 100_000, usize::MAX] {
        let e = generate_checked(&gen_params(nodes, Pattern::AllToAll, Network::Mixed), 0).unwrap_err();
        assert_eq!((e.kind, e.field.as_str()), (crate::ErrorKind::Options, "nodes"), "{e}");
        assert!(e.reason.contains("at most 4096"), "{e}");
    }
    let e = generate_checked(&gen_params(8, Pattern::Random { sources: usize::MAX, destinations: None }, Network::Fast), 0)
        .unwrap_err();
    assert_eq!(e.field, "sources", "{e}");
    assert!(generate_checked(&gen_params(8, Pattern::AllToAll, Network::Mixed), 0).is_ok());
}

#[test]
fn instances_are_bounded() {
    let node = NodeParams { send_const: 1e-4, send_per_byte: 1e-9, recv_const: 1e-4, recv_per_byte: 1e-9 };
    let big = Instance::broadcast(vec![node.clone(); MAX_NODES + 1], Transmission::Default(1e-8), 0, 1.0);
    let e = big.validate().unwrap_err();
    assert_eq!(e.field, "nodes", "{e}");
    let mut inst = Instance::broadcast(vec![node.clone(); 4], Transmission::Default(1e-8), 0, 1.0);
    inst.multicasts[0].bytes = 1e300;
    let e = inst.validate().unwrap_err();
    assert_eq!(e.field, "multicasts[0].bytes");
    assert!(e.reason.contains("1e300") && e.reason.contains("2^53"), "{e}");
    // Finite values whose product with the largest message is infinite.
    inst.multicasts[0].bytes = 1e15;
    inst.nodes[2].recv_per_byte = 1e300;
    let e = inst.validate().unwrap_err();
    assert_eq!(e.field, "nodes[2].recv_per_byte", "{e}");
    assert!(e.reason.contains("infinite time"), "{e}");
    inst.nodes[2].recv_per_byte = 1e-9;
    inst.transmission = Transmission::Default(1e300);
    assert_eq!(inst.validate().unwrap_err().field, "transmission.default");
    inst.transmission = Transmission::Default(f64::NAN);
    let e = inst.validate().unwrap_err();
    assert!(e.reason.contains(crate::error::NON_FINITE), "{e}");
    // More multicasts than nodes cannot have a source each.
    let mut inst = Instance::all_to_all(vec![node; 3], Transmission::Default(1e-8), 1.0);
    inst.multicasts.push(inst.multicasts[0].clone());
    assert_eq!(inst.validate().unwrap_err().field, "multicasts");
}

#[test]
fn instance_errors_name_the_field_and_show_huge_values_briefly() {
    let e = instance_from_json(r#"{"nodes": [], "transmission": {"default": 1}, "multicasts": [], "zz": 1}"#).unwrap_err();
    assert!(e.reason.contains("unknown field `zz`"), "{e}");
    let e = instance_from_json(
        r#"{"nodes": [{"send_const": 1, "send_per_byte": 0, "recv_const": 1, "recv_per_byte": 0},
                      {"send_const": 1, "send_per_byte": 0, "recv_const": 1, "recv_per_byte": 0}],
            "transmission": {"default": 0}, "multicasts": [{"source": 0, "destinations": [1e300], "bytes": 1}]}"#,
    )
    .unwrap_err();
    assert_eq!(e.field, "multicasts[0].destinations[0]", "{e}");
    assert!(e.reason.contains("1e300") && e.reason.len() < 100, "{e}");
    let e = instance_from_text("nodes = []\ntransmission = { default = 1 }\nmulticasts = \"x\"\n", crate::error::Format::Toml)
        .unwrap_err();
    assert_eq!(e.field, "multicasts", "{e}");
    assert!(e.reason.contains("line 3"), "{e}");
}
