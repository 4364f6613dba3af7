//! A tournament tree over slots holding times: O(1) minimum, O(log n) update, and an
//! O(n) rebuild when many slots changed at once (cheaper than n heap operations).
//! The engine keeps flow completion times here instead of in its event heap, since a
//! re-rate can move thousands of them at a time.

#[derive(Debug, Default)]
pub struct MinTree {
    /// Heap layout over `1..2*size`: leaf of slot s at `size + s`, each internal node
    /// holds its subtree's minimum time and the slot holding it (the lowest on ties).
    time: Vec<f64>,
    best: Vec<u32>,
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
        let mut time = vec![f64::INFINITY; 2 * size];
        if self.size > 0 {
            time[size..size + self.size].copy_from_slice(&self.time[self.size..2 * self.size]);
        }
        let mut best = vec![0u32; 2 * size];
        for (s, b) in best[size..].iter_mut().enumerate() {
            *b = s as u32;
        }
        self.time = time;
        self.best = best;
        self.size = size;
        self.dirty.clear();
        self.rebuild();
    }

    /// Recomputes internal node `i` from its children. The left child's slots are
    /// all lower than the right child's, so a tie goes left (to the lower slot).
    #[inline(always)]
    fn combine(&mut self, i: usize) {
        let l = 2 * i;
        let (ta, tb) = (self.time[l], self.time[l + 1]);
        let (ba, bb) = (self.best[l], self.best[l + 1]);
        let right = tb < ta;
        self.time[i] = if right { tb } else { ta };
        self.best[i] = if right { bb } else { ba };
    }

    fn rebuild(&mut self) {
        for i in (1..self.size).rev() {
            self.combine(i);
        }
    }

    fn propagate(&mut self, slot: usize) {
        let mut i = (slot + self.size) / 2;
        while i >= 1 {
            let old = (self.time[i], self.best[i]);
            self.combine(i);
            // Unchanged here: unchanged above (compare bits, so NaN stops too).
            if old.0.to_bits() == self.time[i].to_bits() && old.1 == self.best[i] {
                break;
            }
            i /= 2;
        }
    }

    /// Set a slot's time; the minimum is valid again after [`MinTree::flush`].
    pub fn set_lazy(&mut self, slot: usize, time: f64) {
        if slot >= self.size {
            self.flush();
            self.resize(slot + 1);
        }
        self.time[self.size + slot] = time;
        self.dirty.push(slot as u32);
    }

    /// Set a slot's time and keep the minimum valid.
    pub fn set(&mut self, slot: usize, time: f64) {
        if slot >= self.size || !self.dirty.is_empty() {
            self.set_lazy(slot, time);
            self.flush();
        } else {
            self.time[self.size + slot] = time;
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
            self.time[self.size + slot]
        } else {
            f64::INFINITY
        }
    }

    /// Lower a slot's time (`time` <= its current time): stops climbing as soon as the
    /// slot does not win a level, so it is often O(1).
    pub fn decrease(&mut self, slot: usize, time: f64) {
        debug_assert!(self.dirty.is_empty() && slot < self.size && time <= self.time[self.size + slot]);
        self.time[self.size + slot] = time;
        let s = slot as u32;
        let mut i = (slot + self.size) / 2;
        while i >= 1 {
            let (b, tb) = (self.best[i], self.time[i]);
            if b != s && !(time < tb || (time == tb && s < b)) {
                break;
            }
            self.best[i] = s;
            self.time[i] = time;
            i /= 2;
        }
    }

    /// The earliest time and its slot (time is infinite when all slots are empty).
    pub fn min(&self) -> (f64, usize) {
        debug_assert!(self.dirty.is_empty());
        (self.time[1], self.best[1] as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_minimum_through_updates_and_growth() {
        let mut t = MinTree::new();
        let mut rng = crate::rng::SplitMix64::new(3);
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
