//! A tournament tree over slots holding times: O(1) minimum, O(log n) update, and an
//! O(n) rebuild when many slots changed at once (cheaper than n heap operations).
//! The engine keeps flow completion times here instead of in its event heap, since a
//! re-rate can move thousands of them at a time.

#[derive(Clone, Copy, Debug)]
struct Node {
    time: f64,
    best: u32,
}

#[derive(Debug, Default)]
pub struct MinTree {
    /// Heap layout over `1..2*size`: leaf of slot s at `size + s`, each internal node
    /// holds its subtree's minimum time and the slot holding it (the lowest on ties).
    /// A node's time and slot sit together, and so do two siblings.
    node: Vec<Node>,
    size: usize,
    dirty: Vec<u32>,
}

impl MinTree {
    pub fn new() -> Self {
        Self::with_slots(64)
    }

    /// A tree for slots `0..n` (it grows when a larger slot is set).
    pub fn with_slots(n: usize) -> Self {
        let mut t = MinTree::default();
        t.resize(n);
        t
    }

    fn resize(&mut self, want: usize) {
        let size = want.next_power_of_two().max(2);
        let mut node = vec![Node { time: f64::INFINITY, best: 0 }; 2 * size];
        for (s, e) in node[size..].iter_mut().enumerate() {
            e.best = s as u32;
        }
        for s in 0..self.size {
            node[size + s].time = self.node[self.size + s].time;
        }
        self.node = node;
        self.size = size;
        self.dirty.clear();
        self.rebuild();
    }

    /// Internal node `i` recomputed from its children. The left child's slots are
    /// all lower than the right child's, so a tie goes left (to the lower slot).
    #[inline(always)]
    fn combined(&self, i: usize) -> Node {
        let (a, b) = (self.node[2 * i], self.node[2 * i + 1]);
        // Selected without a branch: which child wins is unpredictable.
        let take_b = b.time < a.time;
        Node {
            time: if take_b { b.time } else { a.time },
            best: if take_b { b.best } else { a.best },
        }
    }

    fn rebuild(&mut self) {
        for i in (1..self.size).rev() {
            self.node[i] = self.combined(i);
        }
    }

    #[inline]
    fn propagate(&mut self, slot: usize) {
        let mut i = (slot + self.size) / 2;
        while i >= 1 {
            let old = self.node[i];
            let new = self.combined(i);
            // Unchanged here: unchanged above (compare bits, so NaN stops too).
            if old.time.to_bits() == new.time.to_bits() && old.best == new.best {
                break;
            }
            self.node[i] = new;
            i /= 2;
        }
    }

    /// Set a slot's time; the minimum is valid again after [`MinTree::flush`].
    pub fn set_lazy(&mut self, slot: usize, time: f64) {
        if slot >= self.size {
            self.flush();
            self.resize(slot + 1);
        }
        self.node[self.size + slot].time = time;
        self.dirty.push(slot as u32);
    }

    /// Set a slot's time and keep the minimum valid.
    pub fn set(&mut self, slot: usize, time: f64) {
        if slot >= self.size || !self.dirty.is_empty() {
            self.set_lazy(slot, time);
            self.flush();
        } else {
            self.node[self.size + slot].time = time;
            self.propagate(slot);
        }
    }

    pub fn flush(&mut self) {
        if self.dirty.len() * 8 > self.size {
            self.rebuild();
        } else {
            for k in 0..self.dirty.len() {
                let s = self.dirty[k] as usize;
                self.propagate(s);
            }
        }
        self.dirty.clear();
    }

    /// A slot's time.
    pub fn get(&self, slot: usize) -> f64 {
        if slot < self.size {
            self.node[self.size + slot].time
        } else {
            f64::INFINITY
        }
    }

    /// Lower a slot's time (`time` <= its current time): stops climbing as soon as the
    /// slot does not win a level, so it is often O(1).
    pub fn decrease(&mut self, slot: usize, time: f64) {
        debug_assert!(self.dirty.is_empty() && slot < self.size && time <= self.node[self.size + slot].time);
        self.node[self.size + slot].time = time;
        let s = slot as u32;
        let mut i = (slot + self.size) / 2;
        while i >= 1 {
            let Node { time: tb, best: b } = self.node[i];
            if b != s && !(time < tb || (time == tb && s < b)) {
                break;
            }
            self.node[i] = Node { time, best: s };
            i /= 2;
        }
    }

    /// The earliest time and its slot (time is infinite when all slots are empty).
    pub fn min(&self) -> (f64, usize) {
        debug_assert!(self.dirty.is_empty());
        (self.node[1].time, self.node[1].best as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_minimum_through_updates_and_growth() {
        let mut t = MinTree::new();
        let mut rng = crate::util::rng::SplitMix64::new(3);
        let mut shadow = vec![f64::INFINITY; 300];
        for step in 0..3000 {
            let k = 1 + rng.below(if step % 100 == 0 { 200 } else { 3 }) as usize;
            for _ in 0..k {
                let s = rng.below(300) as usize;
                let v = if rng.below(4) == 0 { f64::INFINITY } else { rng.unit() };
                shadow[s] = v;
                t.set_lazy(s, v);
            }
            t.flush();
            let want = shadow.iter().cloned().fold(f64::INFINITY, f64::min);
            assert_eq!(t.min().0, want);
            // Lowering a slot with `decrease` keeps the minimum and its lowest slot.
            let s = rng.below(300) as usize;
            let v = shadow[s].min(rng.unit());
            shadow[s] = v;
            t.decrease(s, v);
            let want = shadow.iter().cloned().fold(f64::INFINITY, f64::min);
            let first = shadow.iter().position(|&x| x == want).unwrap();
            assert_eq!(t.min(), (want, first));
        }
    }
}
