//! Fast receiver scan for the common case: no preemption and one X for every
//! pair. Then a sender's time v_i(k) = Avail_i + S(i, l_k) (eq. 5) depends on
//! the message only through its size, so, per size class, the nodes holding
//! a message of that class are kept sorted by v, and bitsets say who holds
//! and who waits for which message. A selection changes the available time
//! of two nodes only: O(classes * log N) to update, however many sources
//! those nodes hold. (Per-source heaps would need one update per source.)

use std::collections::BTreeSet;

use super::model::Costs;
use super::keys::{Key, Mc};

pub(crate) struct ByNode {
    words: usize,
    /// Size class of each message, and each class's size in bytes.
    class_of: Vec<usize>,
    class_bytes: Vec<f64>,
    /// Bitsets over messages: per class, and per node the messages it holds.
    mask: Vec<u64>,
    holds: Vec<u64>,
    /// Per class: (v, node) of the nodes holding a message of the class, sorted.
    order: Vec<Order>,
    /// Per class and node: the node's key in `order`, if present.
    key: Vec<Option<f64>>,
    /// Per class and node: the node's index in `order` (valid when `key` is set).
    pos: Vec<u32>,
    n: usize,
    /// Source node of each message.
    src: Vec<usize>,
    // Scratch for `best_for`.
    want: Vec<(usize, u64)>,
    acc: Vec<u64>,
    /// (receiver, class, first node key) of the last `best_for`'s best: the
    /// nodes before it in the class order hold nothing the receiver waits for.
    hint: (usize, usize, (Key, u32)),
}

/// At most this many distinct sizes; beyond, the per-source heaps are used.
pub(crate) const MAX_CLASSES: usize = 8;

impl ByNode {
    /// None when there are more than `MAX_CLASSES` sizes.
    pub fn new(cost: &Costs, mcs: &[Mc]) -> Option<Self> {
        let bytes: Vec<f64> = mcs.iter().map(|mc| mc.bytes).collect();
        let mut sizes = bytes.clone();
        sizes.sort_by(f64::total_cmp);
        sizes.dedup();
        if sizes.len() > MAX_CLASSES {
            return None;
        }
        let (n, nm) = (cost.n, bytes.len());
        let words = nm.div_ceil(64).max(1);
        let mut b = ByNode {
            words,
            class_of: bytes
                .iter()
                .map(|x| sizes.iter().position(|y| y == x).unwrap())
                .collect(),
            mask: vec![0; sizes.len() * words],
            holds: vec![0; n * words],
            order: (0..sizes.len()).map(|_| Order::new(n)).collect(),
            key: vec![None; sizes.len() * n],
            pos: vec![0; sizes.len() * n],
            class_bytes: sizes,
            n,
            src: mcs.iter().map(|mc| mc.src).collect(),
            want: Vec::new(),
            acc: Vec::new(),
            hint: (usize::MAX, 0, (Key(0.0), 0)),
        };
        for (m, mc) in mcs.iter().enumerate() {
            let c = b.class_of[m];
            set(&mut b.mask[c * words..], m);
            b.receive(cost, mc.src, m, 0.0);
        }
        Some(b)
    }

    /// Node i now holds message m (its own at the start, or just received).
    pub fn receive(&mut self, cost: &Costs, i: usize, m: usize, avail: f64) {
        set(&mut self.holds[i * self.words..], m);
        let c = self.class_of[m];
        if self.key[c * self.n + i].is_none() {
            let v = avail + cost.s(i, self.class_bytes[c]);
            let pos = &mut self.pos[c * self.n..(c + 1) * self.n];
            self.order[c].insert((Key(v), i as u32), pos);
            self.key[c * self.n + i] = Some(v);
        }
    }

    /// Node i's available time changed to `avail`: re-sort it in every class.
    pub fn moved(&mut self, cost: &Costs, i: usize, avail: f64) {
        for c in 0..self.class_bytes.len() {
            if let Some(old) = self.key[c * self.n + i] {
                let v = avail + cost.s(i, self.class_bytes[c]);
                let (from, to) = ((Key(old), i as u32), (Key(v), i as u32));
                let pos = &mut self.pos[c * self.n..(c + 1) * self.n];
                self.order[c].moved(from, to, pos);
                self.key[c * self.n + i] = Some(v);
            }
        }
    }

    /// The least completion of receiver j over its waited-for messages: the
    /// value of [`ByNode::best_for`] without finding the message.
    pub fn best_value(&self, cost: &Costs, j: usize, ra: f64, waits: &[u64]) -> f64 {
        let w = self.words;
        let x = cost.scalar_x.expect("one X for every pair");
        let mut best = f64::INFINITY;
        for c in 0..self.class_bytes.len() {
            let mask = &self.mask[c * w..(c + 1) * w];
            let l = self.class_bytes[c];
            let (xl, r) = (x * l, cost.r(j, l));
            // Nodes in increasing v: the first holder of a waited-for message gives the class's best.
            best = if w == 1 {
                let want = waits[0] & mask[0];
                if want == 0 {
                    continue;
                }
                let hit = |i: usize| self.holds[i] & want != 0;
                match &self.order[c] {
                    Order::Flat(o) => first_holder(o.iter(), xl, ra, r, best, hit),
                    Order::Tree(o) => first_holder(o.iter(), xl, ra, r, best, hit),
                }
            } else {
                if waits.iter().zip(mask).all(|(a, b)| a & b == 0) {
                    continue;
                }
                let hit = |i: usize| {
                    let h = &self.holds[i * w..(i + 1) * w];
                    h.iter().zip(waits).zip(mask).any(|((h, a), b)| h & a & b != 0)
                };
                match &self.order[c] {
                    Order::Flat(o) => first_holder(o.iter(), xl, ra, r, best, hit),
                    Order::Tree(o) => first_holder(o.iter(), xl, ra, r, best, hit),
                }
            };
        }
        best
    }

    /// With one size class: its size, and the least v of any holder plus X l,
    /// a lower bound on every receiver's (v + X l) part of eq. (6).
    pub fn front(&self, cost: &Costs) -> Option<(f64, f64)> {
        if self.class_bytes.len() != 1 {
            return None;
        }
        let l = self.class_bytes[0];
        let (Key(v0), _) = self.order[0].first();
        Some((l, v0 + cost.scalar_x.expect("one X for every pair") * l))
    }

    /// Does another holder of message m leave no later than node i would send m?
    /// Then i, a new holder of m, improves no receiver's completion of m.
    /// Looks at the source and the first few nodes only (false: unknown).
    pub fn dominated(&self, i: usize, m: usize) -> bool {
        let c = self.class_of[m];
        let Some(vi) = self.key[c * self.n + i] else {
            return false;
        };
        let src = self.src[m];
        if src != i && self.key[c * self.n + src].is_some_and(|v| v <= vi) {
            return true;
        }
        let bit = 1u64 << (m % 64);
        for &(Key(v), h) in self.order[c].iter().take(8) {
            if v > vi {
                break;
            }
            if h as usize != i && self.holds[h as usize * self.words + m / 64] & bit != 0 {
                return true;
            }
        }
        false
    }

    /// Receiver j, available at `ra`: the least completion over its waited-for
    /// messages and their holders, ties to the lowest message (= lowest source).
    pub fn best_for(&mut self, cost: &Costs, j: usize, ra: f64, waits: &[u64]) -> (f64, usize) {
        let w = self.words;
        let x = cost.scalar_x.expect("one X for every pair");
        let mut best = (f64::INFINITY, usize::MAX);
        for c in 0..self.class_bytes.len() {
            if w == 1 {
                // One word of messages: the same steps as below, without the word lists.
                let want = waits[0] & self.mask[c];
                if want == 0 {
                    continue;
                }
                let low = want & want.wrapping_neg();
                let low_m = want.trailing_zeros() as usize;
                let l = self.class_bytes[c];
                let (xl, r) = (x * l, cost.r(j, l));
                let (Key(v0), i0) = self.order[c].first();
                let c0 = (v0 + xl).max(ra) + r;
                let vs = self.key[c * self.n + self.src[low_m]].unwrap();
                if (vs + xl).max(ra) + r == c0 {
                    if c0 < best.0 || (c0 == best.0 && low_m < best.1) {
                        best = (c0, low_m);
                        self.hint = (j, c, (Key(v0), i0));
                    }
                    continue;
                }
                let holds = &self.holds;
                let found = match &self.order[c] {
                    Order::Flat(o) => scan_one(o.iter(), xl, ra, r, best.0, holds, want, low),
                    Order::Tree(o) => scan_one(o.iter(), xl, ra, r, best.0, holds, want, low),
                };
                if let Some((f, first, acc)) = found {
                    let k = acc.trailing_zeros() as usize;
                    if f < best.0 || (f == best.0 && k < best.1) {
                        best = (f, k);
                        self.hint = (j, c, first);
                    }
                }
                continue;
            }
            // The nonzero words of "j waits for it and it is in class c".
            let (want, acc) = (&mut self.want, &mut self.acc);
            want.clear();
            for (q, &wq) in waits.iter().enumerate() {
                let b = wq & self.mask[c * w + q];
                if b != 0 {
                    want.push((q, b));
                }
            }
            if want.is_empty() {
                continue;
            }
            acc.clear();
            acc.resize(want.len(), 0);
            let low = 1u64 << want[0].1.trailing_zeros();
            let l = self.class_bytes[c];
            let (xl, r) = (x * l, cost.r(j, l));
            // Receiver-bound shortcut: when the source of the lowest waited-for
            // message already gives the least completion of any node in the
            // class, nothing beats (that completion, that message).
            let low_m = want[0].0 * 64 + want[0].1.trailing_zeros() as usize;
            let (Key(v0), i0) = self.order[c].first();
            let c0 = (v0 + xl).max(ra) + r;
            let vs = self.key[c * self.n + self.src[low_m]].unwrap();
            if (vs + xl).max(ra) + r == c0 {
                if c0 < best.0 || (c0 == best.0 && low_m < best.1) {
                    best = (c0, low_m);
                    self.hint = (j, c, (Key(v0), i0));
                }
                continue;
            }
            // Nodes in increasing v give non-decreasing completions (eq. 6):
            // the first holder of a waited-for message gives the class's best;
            // later nodes with the same completion can only lower the message.
            let mut found: Option<f64> = None;
            let mut first = (Key(0.0), 0);
            for &(Key(v), i) in self.order[c].iter() {
                let ci = (v + xl).max(ra) + r;
                match found {
                    Some(f) if ci != f => break,
                    None if ci > best.0 => break, // cannot beat another class
                    _ => {}
                }
                let h = &self.holds[i as usize * w..(i as usize + 1) * w];
                if found.is_none() {
                    if want.iter().all(|&(q, b)| h[q] & b == 0) {
                        continue; // holds nothing j waits for
                    }
                    found = Some(ci);
                    first = (Key(v), i);
                }
                for (a, &(q, b)) in acc.iter_mut().zip(want.iter()) {
                    *a |= h[q] & b;
                }
                if acc[0] & low != 0 {
                    break; // the lowest waited-for message of the class: cannot go lower
                }
            }
            if let Some(f) = found {
                let (idx, a) = acc.iter().enumerate().find(|(_, a)| **a != 0).unwrap();
                let k = want[idx].0 * 64 + a.trailing_zeros() as usize;
                if f < best.0 || (f == best.0 && k < best.1) {
                    best = (f, k);
                    self.hint = (j, c, first);
                }
            }
        }
        best
    }
}

/// The completion from the first node in `order` that `hit` accepts, if below
/// `best` (else `best`): later nodes give no less (eq. 6).
#[inline(always)]
fn first_holder<'a>(
    order: impl Iterator<Item = &'a (Key, u32)>,
    xl: f64,
    ra: f64,
    r: f64,
    best: f64,
    hit: impl Fn(usize) -> bool,
) -> f64 {
    for &(Key(v), i) in order {
        let ci = (v + xl).max(ra) + r;
        if ci >= best {
            break;
        }
        if hit(i as usize) {
            return ci;
        }
    }
    best
}

/// `best_for`'s walk of a class order with one word of messages: the first
/// node holding a message of `want` (none past `bound`), its completion, and
/// the messages of `want` held by the nodes reaching that same completion
/// (stopping once the lowest, `low`, is among them).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn scan_one<'a>(
    order: impl Iterator<Item = &'a (Key, u32)>,
    xl: f64,
    ra: f64,
    r: f64,
    bound: f64,
    holds: &[u64],
    want: u64,
    low: u64,
) -> Option<(f64, (Key, u32), u64)> {
    let mut found: Option<(f64, (Key, u32))> = None;
    let mut acc = 0u64;
    for &(Key(v), i) in order {
        let ci = (v + xl).max(ra) + r;
        match found {
            Some((f, _)) if ci != f => break,
            None if ci > bound => break, // cannot beat another class
            _ => {}
        }
        let h = holds[i as usize] & want;
        if found.is_none() {
            if h == 0 {
                continue; // holds nothing j waits for
            }
            found = Some((ci, (Key(v), i)));
        }
        acc |= h;
        if acc & low != 0 {
            break; // the lowest waited-for message of the class: cannot go lower
        }
    }
    found.map(|(f, first)| (f, first, acc))
}

fn set(bits: &mut [u64], m: usize) {
    bits[m / 64] |= 1u64 << (m % 64);
}

impl ByNode {
    /// Among the holders of message m whose completion to j is exactly `c`,
    /// the one that `rank` ranks lowest. Walks the class order only up to
    /// completion `c`: the nodes before hold nothing j waits for in the class.
    pub fn sender_reaching<K: PartialOrd>(
        &self,
        cost: &Costs,
        j: usize,
        m: usize,
        ra: f64,
        c: f64,
        rank: impl Fn(usize) -> K,
    ) -> Option<usize> {
        let cls = self.class_of[m];
        let l = self.class_bytes[cls];
        let (xl, r) = (cost.scalar_x.unwrap() * l, cost.r(j, l));
        let mut best: Option<(K, usize)> = None;
        let start = match self.hint {
            (hj, hc, from) if hj == j && hc == cls => from,
            _ => (Key(f64::NEG_INFINITY), 0),
        };
        for &(Key(v), i) in self.order[cls].iter_from(start) {
            let ci = (v + xl).max(ra) + r;
            if ci < c {
                continue;
            }
            if ci > c {
                break;
            }
            let i = i as usize;
            if self.holds[i * self.words + m / 64] & (1u64 << (m % 64)) != 0 {
                let k = rank(i);
                if best.as_ref().is_none_or(|b| k < b.0) {
                    best = Some((k, i));
                }
            }
        }
        best.map(|b| b.1)
    }
}

/// Nodes sorted by (v, node): a flat array for up to `FLAT_MAX` nodes (a move
/// shifts the nodes passed over, cheap and cache-friendly when few), else a
/// B-tree (a move is O(log N) however far it goes).
enum Order {
    Flat(Vec<(Key, u32)>),
    Tree(BTreeSet<(Key, u32)>),
}

const FLAT_MAX: usize = 256;

enum OrderIter<'a> {
    Flat(std::slice::Iter<'a, (Key, u32)>),
    Tree(std::collections::btree_set::Range<'a, (Key, u32)>),
}

impl<'a> Iterator for OrderIter<'a> {
    type Item = &'a (Key, u32);
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            OrderIter::Flat(it) => it.next(),
            OrderIter::Tree(it) => it.next(),
        }
    }
}

impl Order {
    fn new(n: usize) -> Self {
        match n <= FLAT_MAX {
            true => Order::Flat(Vec::new()),
            false => Order::Tree(BTreeSet::new()),
        }
    }

    /// The least entry (the order is never empty when asked).
    #[inline]
    fn first(&self) -> (Key, u32) {
        match self {
            Order::Flat(o) => o[0],
            Order::Tree(o) => *o.first().unwrap(),
        }
    }

    #[inline]
    fn iter(&self) -> OrderIter<'_> {
        match self {
            Order::Flat(o) => OrderIter::Flat(o.iter()),
            Order::Tree(o) => OrderIter::Tree(o.range(..)),
        }
    }

    /// The entries from `start` on.
    fn iter_from(&self, start: (Key, u32)) -> OrderIter<'_> {
        match self {
            Order::Flat(o) => OrderIter::Flat(o[o.partition_point(|x| *x < start)..].iter()),
            Order::Tree(o) => OrderIter::Tree(o.range(start..)),
        }
    }

    /// Adds an entry; `pos[node]` is kept as the node's index in a flat order.
    fn insert(&mut self, e: (Key, u32), pos: &mut [u32]) {
        match self {
            Order::Flat(o) => {
                let p = o.partition_point(|x| *x < e);
                o.insert(p, e);
                for (q, &(_, k)) in o.iter().enumerate().skip(p) {
                    pos[k as usize] = q as u32;
                }
            }
            Order::Tree(o) => {
                o.insert(e);
            }
        }
    }

    /// Replaces entry `from` by `to` (the same node).
    fn moved(&mut self, from: (Key, u32), to: (Key, u32), pos: &mut [u32]) {
        match self {
            Order::Flat(o) => {
                let i = to.1 as usize;
                let mut p = pos[i] as usize;
                debug_assert!(o[p] == from);
                // One insertion-sort step: shift the nodes passed over by one.
                if to > from {
                    while p + 1 < o.len() && o[p + 1] < to {
                        o[p] = o[p + 1];
                        pos[o[p].1 as usize] = p as u32;
                        p += 1;
                    }
                } else {
                    while p > 0 && o[p - 1] > to {
                        o[p] = o[p - 1];
                        pos[o[p].1 as usize] = p as u32;
                        p -= 1;
                    }
                }
                o[p] = to;
                pos[i] = p as u32;
            }
            Order::Tree(o) => {
                o.remove(&from);
                o.insert(to);
            }
        }
    }
}
