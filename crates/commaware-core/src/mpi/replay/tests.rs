//! Replay tests with analytical answers.

use super::*;
use crate::engine::FullSpeed;

fn platform(extra: &str) -> Platform {
    // 1 MB/s NICs, no latency unless `extra` gives one.
    let latency = if extra.contains("latency") { "" } else { r#", "latency": 0"# };
    let text = format!(
        r#"{{"cluster": {{"count": 6, "speed": 1e9, "cores": 2}},
            "network": {{"bandwidth": 1e6, "eager_threshold": 65536 {latency} {extra}}}}}"#
    );
    crate::mpi::platform_file::load_json(&text).unwrap()
}

/// A replay's result with every message (ordered by start, then source rank) and interval.
struct Run {
    res: SimResult,
    messages: Vec<MessageRecord>,
    timeline: Vec<Interval>,
}

impl std::ops::Deref for Run {
    type Target = SimResult;
    fn deref(&self) -> &SimResult {
        &self.res
    }
}

fn run_observed(p: &Platform, trace: &Trace, opts: &SimOptions, rate: Box<dyn crate::engine::ComputeRate>) -> Run {
    let mut c = Collect::default();
    let res = simulate_observed(p, trace, opts, rate, &mut c).unwrap();
    c.messages.sort_by(|a, b| a.start.total_cmp(&b.start).then(a.src_rank.cmp(&b.src_rank)));
    Run { res, messages: c.messages, timeline: c.timeline }
}

fn run(p: &Platform, trace: &str) -> Run {
    run_observed(p, &Trace::from_json(trace).unwrap(), &SimOptions::default(), crate::engine::interference::compute_rate(p))
}

fn ends(res: &Run) -> Vec<(u32, u32, f64)> {
    res.messages.iter().map(|m| (m.src_rank, m.dst_rank, m.end)).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn one_sender_k_receivers_each_get_a_kth() {
    for k in 1..=5usize {
        let mut ranks = vec![Vec::new(); k + 1];
        for d in 1..=k {
            ranks[0].push(format!(r#"{{"op": "isend", "dst": {d}, "bytes": 1e6}}"#));
            ranks[d].push(r#"{"op": "recv", "src": 0}"#.to_string());
        }
        ranks[0].push(r#"{"op": "waitall"}"#.into());
        let body: Vec<String> = ranks.iter().map(|ops| format!("[{}]", ops.join(","))).collect();
        let res = run(&platform(""), &format!(r#"{{"ranks": [{}]}}"#, body.join(",")));
        for (_, _, end) in ends(&res) {
            assert!(close(end, k as f64), "k={k}: end {end}");
        }
        assert!(close(res.makespan, k as f64));
    }
}

#[test]
fn k_senders_one_receiver() {
    let res = run(
        &platform(r#", "latency": 0.5"#),
        r#"{"ranks": [[{"op": "irecv", "src": "any"}, {"op": "irecv", "src": "any"}, {"op": "irecv", "src": "any"}, {"op": "waitall"}],
                      [{"op": "send", "dst": 0, "bytes": 1e6}], [{"op": "send", "dst": 0, "bytes": 1e6}],
                      [{"op": "send", "dst": 0, "bytes": 1e6}]]}"#,
    );
    // Latency first, then each gets a third of the receiver's down-link.
    for (_, _, end) in ends(&res) {
        assert!(close(end, 3.5), "{end}");
    }
}

#[test]
fn mixed_sizes_survivor_speeds_up() {
    let res = run(
        &platform(""),
        r#"{"ranks": [[{"op": "isend", "dst": 1, "bytes": 1e6}, {"op": "isend", "dst": 2, "bytes": 3e6}, {"op": "waitall"}],
                      [{"op": "recv", "src": 0}], [{"op": "recv", "src": 0}]]}"#,
    );
    // Both at 0.5 MB/s until the small one ends at 2 s; the big one has 2 MB left at 1 MB/s.
    let e = ends(&res);
    assert!(close(e[0].2, 2.0) && close(e[1].2, 4.0), "{e:?}");
    assert!(close(res.ranks[0].end, 4.0));
}

#[test]
fn chain_through_shared_backbone() {
    // Three disjoint pairs through a 1.5 MB/s backbone: each gets 0.5 MB/s.
    let res = run(
        &platform(r#", "backbone": 1.5e6"#),
        r#"{"ranks": [[{"op": "send", "dst": 1, "bytes": 1e6}], [{"op": "recv", "src": 0}],
                      [{"op": "send", "dst": 3, "bytes": 1e6}], [{"op": "recv", "src": 2}],
                      [{"op": "send", "dst": 5, "bytes": 2e6}], [{"op": "recv", "src": 4}]]}"#,
    );
    let e = ends(&res);
    // Two end at 2 s; then the last has 1 MB left alone on the backbone at 1 MB/s.
    assert!(close(e[0].2, 2.0) && close(e[1].2, 2.0) && close(e[2].2, 3.0), "{e:?}");
}

#[test]
fn eager_send_is_detached_rendezvous_waits() {
    let trace = r#"{"ranks": [[{"op": "send", "dst": 1, "bytes": 1000}],
                              [{"op": "sleep", "seconds": 1}, {"op": "recv", "src": 0}]]}"#;
    let res = run(&platform(""), trace);
    assert_eq!(res.ranks[0].end, 0.0);
    assert!(close(res.messages[0].start, 0.0) && close(res.messages[0].end, 0.001));
    assert!(close(res.ranks[1].end, 1.0));
    // Same size but rendezvous: the transfer waits for the receive at t=1.
    let res = run(&platform(r#", "synchronous_send": true"#), trace);
    assert!(close(res.messages[0].start, 1.0) && close(res.ranks[0].end, 1.001), "{:?}", res.ranks);
}

#[test]
fn overheads_and_intra_node_memory_bandwidth() {
    let p = platform(r#", "send_overhead": 0.25, "recv_overhead": 0.5, "memory_bandwidth": 4e6"#);
    let trace = r#"{"ranks": [[{"op": "send", "dst": 1, "bytes": 1e6}], [{"op": "recv", "src": 0}]],
                    "placement": ["n0", "n0"]}"#;
    let res = run(&p, trace);
    // 0.25 s send overhead, 0.25 s at memory bandwidth, 0.5 s receive overhead.
    assert!(close(res.messages[0].start, 0.25) && close(res.messages[0].end, 0.5));
    assert!(close(res.ranks[1].end, 1.0), "{:?}", res.ranks);
    // The receiver waits for the sender's overhead, sees the data move, then pays its own.
    let spans: Vec<(&str, f64, f64)> = res.timeline.iter().filter(|i| i.rank == 1).map(|i| (i.kind_name(), i.start, i.end)).collect();
    assert_eq!(spans, vec![("wait", 0.0, 0.25), ("comm", 0.25, 0.5), ("overhead", 0.5, 1.0)]);
    let sender: Vec<&str> = res.timeline.iter().filter(|i| i.rank == 0).map(|i| i.kind_name()).collect();
    assert_eq!(sender, vec!["overhead", "comm"]);
}

#[test]
fn compute_seconds_and_flops() {
    let res = run(
        &platform(""),
        r#"{"ranks": [[{"op": "compute", "flops": 2e9}, {"op": "compute", "seconds": 0.5}]]}"#,
    );
    assert!(close(res.makespan, 2.5));
    assert!(close(res.ranks[0].compute_seconds, 2.5));
}

#[test]
fn collectives_complete_with_expected_times() {
    // Binomial bcast of 1 MB from 0 over 4 ranks: 0->2 then 0->1 and 2->3: 2 s.
    let ops = r#"[{"op": "bcast", "root": 0, "bytes": 1e6}, {"op": "barrier"}, {"op": "allreduce", "bytes": 8}, {"op": "alltoall", "bytes": 8}]"#;
    let res = run(&platform(""), &format!(r#"{{"ranks": [{ops},{ops},{ops},{ops}]}}"#));
    let bcast: Vec<_> = res.messages.iter().filter(|m| m.op_name() == "bcast").collect();
    assert_eq!(bcast.len(), 3);
    assert!(close(bcast[2].end, 2.0), "{bcast:?}");
    assert_eq!(res.messages.iter().filter(|m| m.op_name() == "barrier").count(), 8);
    assert_eq!(res.messages.iter().filter(|m| m.op_name() == "allreduce").count(), 8);
    assert_eq!(res.messages.iter().filter(|m| m.op_name() == "alltoall").count(), 12);
    // Five ranks: rank 0 folds into rank 1, four ranks do two rounds, rank 1 sends back.
    // Five ranks: allreduce needs the non-power-of-two fix-up and still completes.
    let res = run(&platform(""), &format!(r#"{{"ranks": [{ops},{ops},{ops},{ops},{ops}]}}"#));
    assert_eq!(res.messages.iter().filter(|m| m.op_name() == "allreduce").count(), 1 + 8 + 1);
}

#[test]
fn deadlock_names_blocked_ranks() {
    let t = Trace::from_json(
        r#"{"ranks": [[{"op": "recv", "src": 1}, {"op": "send", "dst": 1, "bytes": 1}],
                      [{"op": "recv", "src": 0}, {"op": "send", "dst": 0, "bytes": 1}]]}"#,
    )
    .unwrap();
    let e = simulate(&platform(""), &t, &SimOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Deadlock);
    assert!(e.reason.contains("rank 0 blocked in op 0 `recv(src=1, tag=0)`"), "{e}");
    assert!(e.reason.contains("rank 1 blocked"), "{e}");
}

#[test]
fn unmatched_message_is_an_error() {
    let t = Trace::from_json(r#"{"ranks": [[{"op": "send", "dst": 1, "bytes": 8, "tag": 3}], []]}"#).unwrap();
    let e = simulate(&platform(""), &t, &SimOptions::default()).unwrap_err();
    assert!(e.reason.contains("never received"), "{e}");
}

#[test]
fn tags_and_any_source_match_in_posting_order() {
    let res = run(
        &platform(""),
        r#"{"ranks": [[{"op": "isend", "dst": 1, "bytes": 1e6, "tag": 7}, {"op": "isend", "dst": 1, "bytes": 2e6, "tag": 8}, {"op": "waitall"}],
                      [{"op": "recv", "src": 0, "tag": 8}, {"op": "recv", "src": "any", "tag": "any"}]]}"#,
    );
    assert_eq!(res.messages.len(), 2);
    assert!(close(res.ranks[1].end, 3.0));
}

#[test]
fn a_wildcard_receive_takes_an_eager_message_before_an_older_rendezvous_one() {
    // As SMPI: rank 1's rendezvous send is posted at 0, rank 2's eager one at 0.05 (there by
    // 0.1); rank 0's first any-source receive, at 0.2, takes the eager message, so the
    // rendezvous transfer waits for the second receive, at 0.3, and ends at 0.5.
    let ranks = r#"[{"op": "compute", "flops": 2e8}, {"op": "recv", "src": "any", "tag": 6},
                    {"op": "compute", "flops": 1e8}, {"op": "recv", "src": "any", "tag": 6}],
                   [{"op": "send", "dst": 0, "bytes": 2e5, "tag": 6}],
                   [{"op": "compute", "flops": 5e7}, {"op": "send", "dst": 0, "bytes": 5e4, "tag": 6}]"#;
    let res = run(&platform(""), &format!(r#"{{"ranks": [{ranks}]}}"#));
    assert!(close(res.ranks[1].end, 0.5) && close(res.ranks[0].end, 0.5), "{:?}", res.ranks);
    // Receives that name their source take the rendezvous message at 0.2 (it ends at 0.4).
    let named = ranks.replacen(r#""src": "any""#, r#""src": 1"#, 1).replacen(r#""src": "any""#, r#""src": 2"#, 1);
    let res = run(&platform(""), &format!(r#"{{"ranks": [{named}]}}"#));
    assert!(close(res.ranks[1].end, 0.4) && close(res.ranks[0].end, 0.5), "{:?}", res.ranks);
}

#[test]
fn same_input_same_bytes() {
    let p = platform("");
    let t = r#"{"ranks": [[{"op": "alltoall", "bytes": 1e5}],[{"op": "alltoall", "bytes": 1e5}],[{"op": "alltoall", "bytes": 1e5}]]}"#;
    let tr = Trace::from_json(t).unwrap();
    let opts = SimOptions { placement: Placement::Random, seed: 3, ..Default::default() };
    let doc = |r: Run| crate::mpi::output::to_json_string(&r.res, &r.messages, None);
    let a = doc(run_observed(&p, &tr, &opts, Box::new(FullSpeed)));
    let b = doc(run_observed(&p, &tr, &opts, Box::new(FullSpeed)));
    assert_eq!(a, b);
    let parsed: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert_eq!(parsed["messages"].as_array().unwrap().len(), 6);
    assert_eq!(parsed["ranks"].as_array().unwrap().len(), 3);
    assert_eq!(parsed["message_stats"]["count"], 6);
}

#[test]
fn contention_free_pairs_and_per_host_overheads() {
    let p = crate::mpi::platform_file::load_json(
        r#"{"hosts": [{"name": "a", "speed": 1, "send_overhead": 0.5},
                      {"name": "b", "speed": 1, "recv_overhead": 0.25, "recv_overhead_per_byte": 1e-6},
                      {"name": "c", "speed": 1}],
            "overrides": {"c": {"recv_overhead": 2}},
            "network": {"model": "contention_free", "bandwidth": 1e6, "eager_threshold": 1e18,
                        "pair_bandwidth": [[0, 2e6, 4e6], [1, 0, 1], [1, 1, 0]]}}"#,
    )
    .unwrap();
    let res = run(
        &p,
        r#"{"ranks": [[{"op": "isend", "dst": 1, "bytes": 2e6}, {"op": "isend", "dst": 2, "bytes": 2e6}, {"op": "waitall"}],
                      [{"op": "recv", "src": 0}], [{"op": "recv", "src": 0}]]}"#,
    );
    // a -> b: 0.5 s overhead, then 2 MB at 2 MB/s (no sharing with a -> c), then 0.25 + 2 s receive.
    assert!(close(res.messages[0].start, 0.5) && close(res.messages[0].end, 1.5), "{:?}", res.messages);
    assert!(close(res.ranks[1].end, 1.5 + 0.25 + 2.0));
    // a -> c starts after the second send overhead, at 4 MB/s; c's override gives 2 s.
    assert!(close(res.messages[1].start, 1.0) && close(res.messages[1].end, 1.5));
    assert!(close(res.ranks[2].end, 3.5));
    let e = crate::mpi::platform_file::load_json(r#"{"hosts": [{"name": "a", "speed": 1, "sendoverhead": 1}], "network": {"bandwidth": 1}}"#);
    assert!(e.is_err(), "unknown host fields are rejected");
    let e = crate::mpi::platform_file::load_json(
        r#"{"cluster": {"count": 2, "speed": 1}, "network": {"bandwidth": 1, "pair_bandwidth": [[0, 1]]}}"#,
    )
    .unwrap_err();
    assert!(e.reason.contains("rows"), "{e}");
}

/// A compute-rate hook that halves the speed of a host while it sends anything.
struct HalfWhileSending;
impl crate::engine::ComputeRate for HalfWhileSending {
    fn is_identity(&self) -> bool {
        false
    }
    fn factor(&self, _host: usize, traffic: crate::engine::HostTraffic) -> f64 {
        if traffic.out_rate() > 0.0 {
            0.5
        } else {
            1.0
        }
    }
}

#[test]
fn compute_rate_hook_slows_computation_during_transfers() {
    // Rank 0 starts a 2 MB transfer (2 s at 1 MB/s) and computes 3 s of work meanwhile:
    // 2 s at half speed do 1 s of work, the remaining 2 s run at full speed: ends at 4 s.
    let t = Trace::from_json(
        r#"{"ranks": [[{"op": "isend", "dst": 1, "bytes": 2e6}, {"op": "compute", "seconds": 3}, {"op": "waitall"}],
                      [{"op": "recv", "src": 0}]]}"#,
    )
    .unwrap();
    let res = run_observed(&platform(""), &t, &SimOptions::default(), Box::new(HalfWhileSending));
    assert!(close(res.ranks[0].end, 4.0), "{:?}", res.ranks);
    assert!(close(res.ranks[1].end, 2.0));
    let plain = simulate(&platform(""), &t, &SimOptions::default()).unwrap();
    assert!(close(plain.ranks[0].end, 3.0));
}

#[test]
fn explicit_placement_errors_name_the_host() {
    let t = Trace::from_json(r#"{"ranks": [[], []], "placement": ["n0", "zz"]}"#).unwrap();
    let e = simulate(&platform(""), &t, &SimOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Placement);
    assert_eq!(e.field, "placement[1]");
    assert!(e.reason.contains("unknown host `zz`"));
    let t = Trace::from_json(r#"{"ranks": [[], [], []], "placement": [0, 0, 0]}"#).unwrap();
    let e = simulate(&platform(""), &t, &SimOptions::default()).unwrap_err();
    assert!(e.reason.contains("more ranks than its 2 core(s)"), "{e}");
}

/// Paper 000 in the engine: 1 MiB/s NICs, host n0 with the given interference.
fn interference_platform(interference: &str) -> Platform {
    crate::mpi::platform_file::load_json(&format!(
        r#"{{"hosts": [{{"name": "n0", "speed": 1e9, "interference": {interference}}}, {{"name": "n1", "speed": 1e9}},
                      {{"name": "n2", "speed": 1e9}}],
            "network": {{"bandwidth": 1048576, "latency": 0}}}}"#
    ))
    .unwrap()
}

#[test]
fn interference_slows_computation_linearly() {
    // n0 sends 2 MiB to n1 (2 s at 1 MiB/s) while computing 3 s of work. IR_s = 0.25 per
    // MB/s: 2 s at 0.75 do 1.5 s of work, the remaining 1.5 s run at full speed: 3.5 s.
    let p = interference_platform(r#"{"send": 0.25}"#);
    let t = r#"{"ranks": [[{"op": "isend", "dst": 1, "bytes": 2097152}, {"op": "compute", "seconds": 3}, {"op": "waitall"}],
                          [{"op": "recv", "src": 0}], []]}"#;
    let r = run(&p, t);
    assert!((r.ranks[0].end - 3.5).abs() < 1e-9, "{}", r.ranks[0].end);
    // Per peer: IR_s to n1 = 0.5 (the default 0.25 is for others): 2 s at 0.5 do 1 s: 4 s.
    let p = interference_platform(r#"{"send": 0.25, "send_to": {"n1": 0.5}}"#);
    assert!((run(&p, t).ranks[0].end - 4.0).abs() < 1e-9);
    // Interference rates on another host do not slow n0.
    let p = interference_platform(r#"{}"#);
    assert!((run(&p, t).ranks[0].end - 3.0).abs() < 1e-9);
}

#[test]
fn interference_synergy_applies_only_while_sending_and_receiving() {
    // n0 sends 2 MiB to n1 and receives 2 MiB from n2, both at 1 MiB/s for 2 s, while
    // computing 3 s of work. Linear (IR_r 0.3, IR_s 0.2): 2 s at 0.5 do 1 s, end at 4 s.
    // Planar 0.9 − 0.1·1 − 0.2·1 = 0.6 while both run: 2 s do 1.2 s, end at 3.8 s.
    let t = r#"{"ranks": [[{"op": "isend", "dst": 1, "bytes": 2097152}, {"op": "irecv", "src": 2},
                            {"op": "compute", "seconds": 3}, {"op": "waitall"}],
                           [{"op": "recv", "src": 0}], [{"op": "send", "dst": 0, "bytes": 2097152}]]}"#;
    let linear = interference_platform(r#"{"recv": 0.3, "send": 0.2}"#);
    assert!((run(&linear, t).ranks[0].end - 4.0).abs() < 1e-9);
    let planar = interference_platform(r#"{"recv": 0.3, "send": 0.2, "synergy": {"constant": 0.9, "recv": 0.1, "send": 0.2}}"#);
    assert!((run(&planar, t).ranks[0].end - 3.8).abs() < 1e-9);
    // Receiving alone (n0 only receives): the linear IR_r, not the planar form.
    let t = r#"{"ranks": [[{"op": "irecv", "src": 2}, {"op": "compute", "seconds": 3}, {"op": "waitall"}],
                           [], [{"op": "send", "dst": 0, "bytes": 2097152}]]}"#;
    // 2 s at 0.7 do 1.4 s: end at 3.6 s.
    assert!((run(&planar, t).ranks[0].end - 3.6).abs() < 1e-9);
}

#[test]
fn interference_is_clamped_at_zero_and_composes_with_penalty_models() {
    // IR_r = 2 per MB/s at 1 MiB/s: no computation while the 2 s transfer runs: 5 s.
    let p = interference_platform(r#"{"recv": 2}"#);
    let t = r#"{"ranks": [[{"op": "irecv", "src": 1}, {"op": "compute", "seconds": 3}, {"op": "waitall"}],
                          [{"op": "send", "dst": 0, "bytes": 2097152}], []]}"#;
    assert!((run(&p, t).ranks[0].end - 5.0).abs() < 1e-9);
    // Under gige, n1 sends to n0 and n2 at once: penalty 1.5 each, so 2/3 MiB/s, and the
    // 2 MiB reach n0 in 3 s. With IR_r 0.3, n0 computes at 1 − 0.3·2/3 = 0.8 meanwhile:
    // 2.4 s of work in 3 s, then the remaining 0.6 s at full speed: 3.6 s.
    let p = interference_platform(r#"{"recv": 0.3}"#);
    let t = r#"{"ranks": [[{"op": "irecv", "src": 1}, {"op": "compute", "seconds": 3}, {"op": "waitall"}],
                          [{"op": "isend", "dst": 0, "bytes": 2097152}, {"op": "isend", "dst": 2, "bytes": 2097152}, {"op": "waitall"}],
                          [{"op": "recv", "src": 1}]]}"#;
    let opts = SimOptions { model: Some("gige".into()), ..SimOptions::default() };
    let r = run_observed(&p, &Trace::from_json(t).unwrap(), &opts, crate::engine::interference::compute_rate(&p));
    assert!((r.ranks[0].end - 3.6).abs() < 1e-9, "{}", r.ranks[0].end);
}

#[test]
fn envelope_bytes_travel_with_every_message_but_not_into_the_eager_choice() {
    // 1 MB/s, no latency, envelope 16 bytes, eager below 100 bytes.
    let p = crate::mpi::platform_file::load_json(
        r#"{"cluster": {"count": 2, "speed": 1e9}, "network": {"bandwidth": 1e6, "eager_threshold": 100, "envelope_bytes": 16}}"#,
    )
    .unwrap();
    // 90 bytes: eager on its payload (90 < 100) although 106 bytes travel.
    let t = Trace::from_json(r#"{"ranks": [[{"op": "send", "dst": 1, "bytes": 90}, {"op": "barrier"}], [{"op": "sleep", "seconds": 1}, {"op": "recv", "src": 0}, {"op": "barrier"}]]}"#).unwrap();
    let r = simulate(&p, &t, &SimOptions::default()).unwrap();
    // Rank 0's send is detached, so its message lands at 106e-6 s while rank 1 sleeps;
    // then the barrier: one zero-payload message each way carrying 16 bytes (16e-6 s).
    assert!((r.makespan - (1.0 + 16e-6)).abs() < 1e-12, "{}", r.makespan);
    assert!((r.ranks[0].end - (1.0 + 16e-6)).abs() < 1e-12);
    // 100 bytes: rendezvous, so its 116 bytes move once rank 1 receives at t = 1.
    let t = Trace::from_json(r#"{"ranks": [[{"op": "send", "dst": 1, "bytes": 100}, {"op": "barrier"}], [{"op": "sleep", "seconds": 1}, {"op": "recv", "src": 0}, {"op": "barrier"}]]}"#).unwrap();
    let r = simulate(&p, &t, &SimOptions::default()).unwrap();
    assert!((r.makespan - (1.0 + 116e-6 + 16e-6)).abs() < 1e-12, "{}", r.makespan);
}

/// The replay keeps a fan's receives as a sorted list and its requests as a count
/// ([`FanState`]); with each post in its own request slot and pending receive, as it did
/// before, every time must come out the same, bit for bit: messages, intervals, rank ends.
#[test]
fn fans_posted_lazily_give_the_times_of_fans_posted_in_slots() {
    let collectives = [
        ("alltoall", r#""op": "alltoall", "bytes": B"#, "alltoall=basic_linear"),
        ("alltoallv", r#""op": "alltoallv", "bytes": V"#, "alltoallv=basic_linear"),
        ("alltoallv", r#""op": "alltoallv", "bytes": V"#, "alltoallv=bruck"),
        ("barrier", r#""op": "barrier""#, "barrier=basic_linear"),
        ("scan", r#""op": "scan", "bytes": B"#, "scan=linear"),
        ("exscan", r#""op": "exscan", "bytes": B"#, "exscan=linear"),
        ("scatter", r#""op": "scatter", "root": 2, "bytes": B"#, "scatter=ompi_linear_nb"),
        // SMPI's non-blocking defaults: a root's fan, the others' fans of one send or one receive.
        ("gather", r#""op": "gather", "root": 2, "bytes": B"#, "gather=nbc_linear"),
        ("gatherv", r#""op": "gatherv", "root": 2, "bytes": V"#, "gatherv=nbc_linear"),
        ("scatterv", r#""op": "scatterv", "root": 2, "bytes": V"#, "scatterv=nbc_linear"),
        ("allgather", r#""op": "allgather", "bytes": B"#, "allgather=nbc_linear"),
        ("allgatherv", r#""op": "allgatherv", "bytes": W"#, "allgatherv=nbc_linear"),
        ("reduce", r#""op": "reduce", "root": 2, "bytes": B"#, "reduce=nbc_linear"),
        ("allreduce", r#""op": "allreduce", "bytes": B"#, "allreduce=smpi_default"),
    ];
    let platforms = [
        platform(r#", "latency": 1e-5"#),
        platform(r#", "latency": 1e-5, "smpi": "simgrid-3.32", "reduction_flops_per_byte": 0.5"#),
        platform(r#", "latency": 0, "synchronous_send": true"#),
        // Sends with an overhead: SMPI's iallgather posts send, receive per peer (Collectives::interleave_nbc).
        platform(r#", "latency": 1e-5, "smpi": {"preset": "simgrid-3.32", "ois": "0:2e-6:1e-10"}"#),
    ];
    let mut fans = 0;
    for (name, op, coll) in collectives {
        for p in [5usize, 8, 9] {
            for bytes in [1000.0, 200000.0] {
                // Ranks start the collective at different times (messages come before their
                // receives are posted, and after), twice (two tags), with a user message between.
                let ranks: Vec<String> = (0..p)
                    .map(|r| {
                        let v: Vec<String> = (0..p).map(|d| format!("{}", bytes + (100 * r + d) as f64)).collect();
                        // W: one list on every rank (allgatherv's must agree).
                        let w: Vec<String> = (0..p).map(|d| format!("{}", bytes + (300 * d) as f64)).collect();
                        let op = op.replace("B", &format!("{bytes}")).replace("V", &format!("[{}]", v.join(","))).replace("W", &format!("[{}]", w.join(",")));
                        let user = if r == 0 {
                            format!(r#"{{"op": "isend", "dst": {}, "bytes": 5000}}, {{"op": "waitall"}}"#, p - 1)
                        } else if r == p - 1 {
                            r#"{"op": "recv", "src": "any"}"#.to_string()
                        } else {
                            r#"{"op": "sleep", "seconds": 0}"#.to_string()
                        };
                        let flops = (r * 7 % p) as f64 * 1e6;
                        format!(r#"[{{"op": "compute", "flops": {flops}}}, {{{op}}}, {user}, {{"op": "compute", "flops": {}}}, {{{op}}}]"#, 1e6 * (p - r) as f64)
                    })
                    .collect();
                let trace = Trace::from_json(&format!(r#"{{"ranks": [{}]}}"#, ranks.join(","))).unwrap();
                let opts = SimOptions { collectives: vec![(name.into(), coll.split('=').nth(1).unwrap().into())], placement: Placement::Rrn, ..SimOptions::default() };
                for plat in &platforms {
                    let mut lazy = Collect::default();
                    let a = simulate_observed(plat, &trace, &opts, crate::engine::interference::compute_rate(plat), &mut lazy).unwrap();
                    let mut slots = Collect::default();
                    let b = simulate_fans_in_slots(plat, &trace, &opts, &mut slots).unwrap();
                    let what = format!("{coll} on {p} ranks, {bytes} bytes, smpi {}", plat.smpi.is_some());
                    assert_eq!(a.makespan.to_bits(), b.makespan.to_bits(), "{what}");
                    let rank_times = |r: &SimResult| r.ranks.iter().map(|x| (x.end.to_bits(), x.blocked_seconds.to_bits(), x.compute_seconds.to_bits())).collect::<Vec<_>>();
                    assert_eq!(rank_times(&a), rank_times(&b), "{what}");
                    // (penalty is NaN off the penalty models: compare bits)
                    let bits = |c: &Collect| {
                        c.messages.iter().map(|m| (m.src_rank, m.dst_rank, m.bytes.to_bits(), m.op, m.start.to_bits(), m.end.to_bits(), m.penalty.to_bits())).collect::<Vec<_>>()
                    };
                    assert_eq!(bits(&lazy), bits(&slots), "{what}");
                    assert_eq!(lazy.timeline, slots.timeline, "{what}");
                    assert!(lazy.messages.len() >= 2 * (p - 1), "{what}");
                    fans += 1;
                }
            }
        }
    }
    assert_eq!(fans, 14 * 3 * 2 * 4);
}

/// SMPI's `async_small_thresh` (SimGrid's `Request::start`): a detached send at or above it
/// lets its sender go on at once, but its transfer starts when the receive is posted; below
/// it (or without it), when the send is posted.
#[test]
fn a_detached_send_at_or_above_async_small_thresh_waits_for_its_receive() {
    // 10,000 bytes at 1 MB/s (0.01 s); the receiver computes 1 s (1e9 flops) first.
    let trace = r#"{"ranks": [
        [{"op": "send", "dst": 1, "bytes": 10000}, {"op": "compute", "flops": 1e8}],
        [{"op": "compute", "flops": 1e9}, {"op": "recv", "src": 0}]]}"#;
    let smpi = |fields: &str| platform(&format!(r#", "smpi": {{"bw_factor": "0:1", "lat_factor": "0:1" {fields}}}"#));
    for (p, start) in [
        (platform(""), 0.0),
        (smpi(""), 0.0),
        (smpi(r#", "async_small_thresh": 10001"#), 0.0),
        (smpi(r#", "async_small_thresh": 10000"#), 1.0),
        (smpi(r#", "async_small_thresh": 0"#), 1.0),
    ] {
        let res = run(&p, trace);
        let m = &res.messages[0];
        assert!(close(m.start, start) && close(m.end, start + 0.01), "{:?}: {} {}", p.smpi, m.start, m.end);
        assert!(close(res.ranks[0].end, 0.1), "the sender goes on at once: {}", res.ranks[0].end);
        assert!(close(res.makespan, 1.0 + if start > 0.0 { 0.01 } else { 0.0 }), "{}", res.makespan);
    }
    // The preset is smpirun's default configuration: async-small-thresh 0, the 16-byte
    // envelope, send-is-detached-thresh 65,536, smpi/test 1e-4 s growing; the network's own
    // fields override it.
    let protocol = |extra: &str| {
        let p = crate::mpi::platform_file::load_json(&format!(
            r#"{{"cluster": {{"count": 2, "speed": 1e9}}, "network": {{"bandwidth": 1e6, "smpi": "simgrid-3.32" {extra}}}}}"#
        ))
        .unwrap();
        p.protocol()
    };
    let preset = protocol("");
    assert_eq!(
        (preset.async_small_thresh, preset.eager_threshold, preset.envelope_bytes, preset.test_seconds, preset.grow_injected_times),
        (0.0, 65536.0, 16.0, 1e-4, true)
    );
    let own = protocol(r#", "eager_threshold": 1000, "envelope_bytes": 0, "test_seconds": 0.5"#);
    assert_eq!(
        (own.async_small_thresh, own.eager_threshold, own.envelope_bytes, own.test_seconds, own.grow_injected_times),
        (0.0, 1000.0, 0.0, 0.5, false)
    );
    let plain = platform("").protocol();
    assert_eq!(
        (plain.async_small_thresh, plain.eager_threshold, plain.envelope_bytes, plain.test_seconds, plain.grow_injected_times),
        (65536.0, 65536.0, 0.0, 0.0, false)
    );
    // One setting by its two names must agree.
    let twice = crate::mpi::platform_file::load_json(
        r#"{"cluster": {"count": 2, "speed": 1e9}, "network": {"bandwidth": 1e6, "eager_threshold": 100, "smpi": {"send_is_detached_thresh": 200}}}"#,
    )
    .unwrap_err();
    assert_eq!(twice.field, "network.eager_threshold", "{twice}");
    let bad = crate::mpi::platform_file::load_json(
        r#"{"cluster": {"count": 2, "speed": 1e9}, "network": {"bandwidth": 1e6, "smpi": {"async_small_thresh": -1}}}"#,
    )
    .unwrap_err();
    assert_eq!(bad.field, "network.smpi.async_small_thresh", "{bad}");
}

/// SMPI's injected MPI_Test time (`Request::test`): the sleep is `nsleeps` × `smpi/test`,
/// where `nsleeps`, one counter for every rank, grows by one after each failed test under
/// `smpi/grow-injected-times` and is 1 again after a successful one.
#[test]
fn mpi_test_sleeps_grow_after_failed_tests_across_ranks_and_reset_on_success() {
    // Rank 0 tests a receive that comes at 10 s three times, then sends 10,000 bytes (0.01 s)
    // to rank 2, whose end shows when rank 0 sent. In the 5-rank trace, rank 3 tests a request
    // already complete (a success, which resets the counter) from 0.35 s, and rank 0 tests a
    // 4th time after a sleep.
    let trace = r#"{"ranks": [
        [{"op": "irecv", "src": 1}, {"op": "test", "req": 0}, {"op": "test", "req": 0}, {"op": "test", "req": 0},
         {"op": "sleep", "seconds": 0.1}, {"op": "test", "req": 0}, {"op": "send", "dst": 2, "bytes": 10000}, {"op": "wait", "req": 0}],
        [{"op": "compute", "seconds": 10}, {"op": "send", "dst": 0, "bytes": 1}],
        [{"op": "recv", "src": 0}],
        [{"op": "irecv", "src": 4}, {"op": "sleep", "seconds": 0.35}, {"op": "test", "req": 0}, {"op": "wait", "req": 0}],
        [{"op": "send", "dst": 3, "bytes": 1}]]}"#;
    let two_ranks = r#"{"ranks": [
        [{"op": "irecv", "src": 1}, {"op": "test", "req": 0}, {"op": "test", "req": 0}, {"op": "test", "req": 0},
         {"op": "send", "dst": 2, "bytes": 10000}, {"op": "wait", "req": 0}],
        [{"op": "compute", "seconds": 10}, {"op": "send", "dst": 0, "bytes": 1}],
        [{"op": "recv", "src": 0}]]}"#;
    let smpi = |grow: bool| platform(&format!(r#", "smpi": {{"bw_factor": "0:1", "lat_factor": "0:1", "test": 0.1, "grow_injected_times": {grow}}}"#));
    let sent_at = |p: &Platform, t: &str| run(p, t).res.ranks[2].end - 0.01;
    // Growing: 0.1, 0.2, 0.3 s; flat: 0.1 s each.
    assert!(close(sent_at(&smpi(true), two_ranks), 0.6), "{}", sent_at(&smpi(true), two_ranks));
    assert!(close(sent_at(&smpi(false), two_ranks), 0.3), "{}", sent_at(&smpi(false), two_ranks));
    // Rank 0's tests start at 0, 0.1, 0.3 s (counter 1, 2, 3) and fail at 0.1, 0.3, 0.6 s.
    // Rank 3's starts at 0.35 s with the counter at 3: 0.3 s, a success at 0.65 s that resets
    // it, so rank 0's 4th test, from 0.7 s, sleeps 0.1 s (0.4 s without the reset).
    let five = run(&smpi(true), trace);
    let ends: Vec<f64> = five.res.ranks.iter().map(|r| r.end).collect();
    assert!(close(ends[2] - 0.01, 0.8) && close(ends[3], 0.65), "{ends:?}");
}
