//! The selection rules of the eleven heuristics: FEF (§4.1), ECF (§4.2),
//! the receiver-first WR, EAF, RR, RRS (§4.3-4.4) and their preemptive
//! versions (§5), with the tie rules of the issue notes.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::util::cancel;
use crate::util::mintree::MinTree;
use crate::util::rng::SplitMix64;
use super::keys::Key;
use super::state::State;

/// FEF (§4.1): smallest weight, eq. (7), ties to the lowest receiver, then
/// the lowest sender, then the lowest source. Weights never change, so
/// each (receiver, message) pair keeps its best sender and a heap holds
/// the pairs' bests; a new sender pushes only where it improves.
pub(crate) fn fef(st: &mut State) {
    let nm = st.mcs.len();
    let weight = |st: &State, i: usize, j: usize, m: usize| {
        st.s(i, m) + st.x(i, j) * st.mcs[m].bytes + st.r(j, m)
    };
    let mut best = vec![(f64::INFINITY, u32::MAX); st.cost.n * nm];
    let mut heap = BinaryHeap::new();
    for m in 0..nm {
        let src = st.mcs[m].src;
        for idx in 0..st.waiting[m].len() {
            let j = st.waiting[m][idx] as usize;
            let w = weight(st, src, j, m);
            best[j * nm + m] = (w, src as u32);
            heap.push(Reverse((Key(w), j, src, src, m)));
        }
    }
    while st.remaining > 0 {
        if cancel::check().is_err() {
            return; // the caller's own check returns the error
        }
        let (i, j, m) = if st.naive {
            // Reference: scan every (sender, receiver, source) triple.
            let mut b = (f64::INFINITY, 0, 0, 0, 0);
            for m in 0..nm {
                for &j in &st.waiting[m] {
                    for &(_, i) in &st.senders[m] {
                        let (i, j) = (i as usize, j as usize);
                        let k = (weight(st, i, j, m), j, i, st.mcs[m].src, m);
                        if k.0 < b.0 || (k.0 == b.0 && (k.1, k.2, k.3) < (b.1, b.2, b.3)) {
                            b = k;
                        }
                    }
                }
            }
            (b.2, b.1, b.4)
        } else {
            let Reverse((Key(w), j, i, _, m)) = heap.pop().expect("a waiting pair has a candidate");
            if st.has_received(j, m) || best[j * nm + m] != (w, i as u32) {
                continue; // stale entry
            }
            (i, j, m)
        };
        let c = st.cand(i, j, m, st.ra[j]);
        st.commit(i, j, m, c);
        // j now relays m: it may be a faster sender for m's waiting receivers.
        for idx in 0..st.waiting[m].len() {
            let j2 = st.waiting[m][idx] as usize;
            let w2 = weight(st, j, j2, m);
            let b = &mut best[j2 * nm + m];
            if w2 < b.0 || (w2 == b.0 && (j as u32) < b.1) {
                *b = (w2, j as u32);
                heap.push(Reverse((Key(w2), j2, j, st.mcs[m].src, m)));
            }
        }
    }
}

/// ECF / ECFP (§4.2, §5): smallest completion, ties to the lowest receiver,
/// then the lowest source, then sender order. A tournament tree holds, per
/// receiver, a lower bound on its best completion; the top receiver is recomputed
/// and taken only when its exact best equals its key. Completions only
/// grow, except that a new sender can lower them for its message's
/// waiting receivers, whose keys are lowered at once.
pub(crate) fn ecf(st: &mut State) {
    let n = st.cost.n;
    let mut keys = MinTree::with_slots(n);
    for j in (0..n).filter(|&j| st.is_waiting(j)) {
        keys.set(j, 0.0);
    }
    // With one message size (and no preemption, one X), Q + R(j) bounds every
    // receiver's completion from below, Q growing with the earliest sender.
    // Receivers found sender-bound (best = Q + R(j)) move to `front`, sorted
    // by (R(j), j), and out of `keys`: their bound follows Q by itself, where
    // a stored key would go stale at every send of the earliest node.
    let size = st.front().map(|(l, _)| l);
    // Q, valid until the next commit (only a commit moves the earliest sender).
    let mut q_now = st.front().map_or(f64::NEG_INFINITY, |f| f.1);
    let rq: Vec<f64> = match size {
        Some(l) => (0..n).map(|j| st.cost.r(j, l)).collect(),
        None => Vec::new(),
    };
    let mut front: Vec<(f64, u32)> = Vec::new();
    let mut in_front = vec![false; n];
    let leave_front = |front: &mut Vec<(f64, u32)>, in_front: &mut [bool], j: usize| {
        if std::mem::replace(&mut in_front[j], false) {
            front.retain(|&(_, q)| q as usize != j);
        }
    };
    let mut fresh: Option<(usize, Option<usize>)> = None;
    while st.remaining > 0 {
        if cancel::check().is_err() {
            return; // the caller's own check returns the error
        }
        let (c, j, m) = if st.naive {
            let mut b = (f64::INFINITY, 0, 0);
            for j in 0..n {
                if !st.is_waiting(j) {
                    continue;
                }
                let (c, m) = st.best_for(j);
                if c < b.0 {
                    b = (c, j, m);
                }
            }
            b
        } else {
            let (mut k, mut j) = keys.min();
            let mut q = f64::NEG_INFINITY;
            if let Some(&(r0, j0)) = front.first() {
                q = q_now;
                debug_assert_eq!(st.front().map(|f| f.1), Some(q));
                // The least bound in front, ties (equal sums) to the lowest receiver.
                let k0 = q + r0;
                let mut jq = j0;
                for &(r, i) in &front[1..] {
                    if q + r != k0 {
                        break;
                    }
                    jq = jq.min(i);
                }
                if k0 < k || (k0 == k && (jq as usize) < j) {
                    (k, j) = (k0, jq as usize);
                }
            }
            // A receiver re-keyed just before, with nothing changed since, has an exact key.
            let (c, m) = match fresh {
                Some((f, m)) if f == j => (k, m),
                _ => st.best_value(j, k),
            };
            fresh = None;
            debug_assert!(c >= k, "a key must be a lower bound");
            if c > k {
                if size.is_some() {
                    if q == f64::NEG_INFINITY {
                        q = q_now;
                        debug_assert_eq!(st.front().map(|f| f.1), Some(q));
                    }
                    if c <= q + rq[j] {
                        // Sender-bound: follow Q.
                        if !in_front[j] {
                            keys.set(j, f64::INFINITY);
                            let e = (rq[j], j as u32);
                            let at = front.partition_point(|x| x.0 < e.0 || (x.0 == e.0 && x.1 < e.1));
                            front.insert(at, e);
                            in_front[j] = true;
                        }
                        fresh = Some((j, m));
                        continue;
                    }
                    leave_front(&mut front, &mut in_front, j);
                }
                keys.set(j, c);
                fresh = Some((j, m));
                continue;
            }
            let m = m.unwrap_or_else(|| {
                let (c2, m) = st.best_for(j);
                debug_assert!(c2 == c);
                m
            });
            (c, j, m)
        };
        let i = st.sender_for(j, m, c);
        st.commit(i, j, m, c);
        if size.is_some() {
            if let Some((_, q)) = st.front() {
                q_now = q;
            }
            leave_front(&mut front, &mut in_front, j);
        }
        // j's other completions are >= c + R(j, smallest message) (it is
        // receive-available at c) and only grow.
        keys.set(j, if st.is_waiting(j) { c + st.cost.r(j, st.min_bytes) } else { f64::INFINITY });
        // j is a new sender of m: it may lower m's waiting receivers' bests
        // (keys are lower bounds, so not when another holder sends m no later).
        if st.new_sender_dominated(j, m) {
            continue;
        }
        let v = st.v(j, m);
        let l = st.mcs[m].bytes;
        for idx in 0..st.waiting[m].len() {
            let j2 = st.waiting[m][idx] as usize;
            if size.is_some() && in_front[j2] {
                continue; // its bound Q + R(j2) stays below any completion
            }
            let c2 = (v + st.x(j, j2) * l).max(st.ra[j2]) + st.r(j2, m);
            if c2 < keys.get(j2) {
                keys.decrease(j2, c2);
            }
        }
    }
}

/// How a receiver-first algorithm picks its next receiver.
pub(crate) enum Picker {
    /// WR: smallest virtual time, ties to the smaller R_c, then the lower index.
    Wr,
    /// EAF: smallest (receive-)available time, ties to the lower index.
    Eaf,
    /// RR: cyclically in index order over nodes still waiting.
    Rr,
    /// RRS: uniformly at random among nodes still waiting.
    Rrs(SplitMix64),
    /// A given receiver order (to reproduce a printed RRS run).
    Forced(Vec<usize>),
}

/// WR, EAF, RR, RRS and their preemptive versions (§4.3, §5): pick the
/// receiver, then its best (source, sender) by `State::best_for`.
pub(crate) fn receiver_first(st: &mut State, mut picker: Picker) {
    let n = st.cost.n;
    // WR's virtual time W_j (eq. 8) and W at each receive, for eq. (9).
    let mut w = vec![0.0f64; n];
    let wr = matches!(picker, Picker::Wr);
    let mut w_at = vec![0.0f64; if wr { n * st.mcs.len() } else { 0 }];
    let mut heap: BinaryHeap<Reverse<(Key, Key, usize)>> = BinaryHeap::new();
    for j in (0..n).filter(|&j| st.is_waiting(j)) {
        match picker {
            Picker::Wr => heap.push(Reverse((Key(0.0), Key(st.cost.recv_const(j)), j))),
            Picker::Eaf => heap.push(Reverse((Key(0.0), Key(0.0), j))),
            _ => {}
        }
    }
    let mut active: Vec<usize> = (0..n).filter(|&j| st.is_waiting(j)).collect();
    let (mut cursor, mut forced_at) = (0, 0);
    while st.remaining > 0 {
        if cancel::check().is_err() {
            return; // the caller's own check returns the error
        }
        let j = match &mut picker {
            Picker::Wr => heap.pop().unwrap().0 .2,
            Picker::Eaf => loop {
                let Reverse((Key(k), _, j)) = heap.pop().unwrap();
                let ra = st.ra[j];
                if !st.is_waiting(j) {
                    continue;
                }
                if ra != k {
                    heap.push(Reverse((Key(ra), Key(0.0), j))); // stale: it only grew
                    continue;
                }
                break j;
            },
            Picker::Rr => {
                let mut j = cursor % n;
                while !st.is_waiting(j) {
                    j = (j + 1) % n;
                }
                cursor = j + 1;
                j
            }
            Picker::Rrs(rng) => active[rng.below_usize(active.len())],
            Picker::Forced(order) => {
                let j = *order
                    .get(forced_at)
                    .expect("forced receiver order is too short");
                assert!(
                    j < n && st.is_waiting(j),
                    "forced receiver {j} waits for no message"
                );
                forced_at += 1;
                j
            }
        };
        let (c, m) = st.best_for(j);
        let i = st.sender_for(j, m, c);
        if wr {
            // Eq. (9): arrival in virtual time; a relay adds its own W at its receive.
            let l = st.mcs[m].bytes;
            let base = if i == st.mcs[m].src {
                0.0
            } else {
                w_at[st.slot(i, m)]
            };
            let arrival = base + st.s(i, m) + st.x(i, j) * l;
            // Eq. (8): W_{j,k} = max(W_{j,k-1}, A_r) + R(j, l).
            w[j] = w[j].max(arrival) + st.r(j, m);
            w_at[st.slot(j, m)] = w[j];
        }
        st.commit(i, j, m, c);
        if st.is_waiting(j) {
            match picker {
                Picker::Wr => heap.push(Reverse((Key(w[j]), Key(st.cost.recv_const(j)), j))),
                Picker::Eaf => heap.push(Reverse((Key(st.ra[j]), Key(0.0), j))),
                _ => {}
            }
        } else {
            active.retain(|&a| a != j);
        }
    }
}
