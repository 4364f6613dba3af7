//! A tournament tree over slots holding times: O(1) minimum, O(log n) update, and an
//! O(n) rebuild when many slots changed at once (cheaper than n heap operations).
//! The engine keeps flow completion times here instead of in its event heap, since a
//! re-rate can move thousands of them at a time.

#[derive(Debug, Default)]
pub struct MinTree {
    /// Leaves at `size..2*size`, internal nodes hold the index of their minimum leaf.
    times: Vec<f64>,
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
        let mut times = vec![f64::INFINITY; size];
        times[..self.size].copy_from_slice(&self.times[..self.size]);
        self.times = times;
        self.size = size;
        self.best = vec![0; size];
        self.dirty.clear();
        self.rebuild();
    }

    fn pick(&self, a: u32, b: u32) -> u32 {
        // Ties go to the lower slot, for determinism.
        let (ta, tb) = (self.times[a as usize], self.times[b as usize]);
        if tb < ta || (tb == ta && b < a) {
            b
        } else {
            a
        }
    }

    fn rebuild(&mut self) {
        let n = self.size;
        for i in (1..n).rev() {
            let (l, r) = (2 * i, 2 * i + 1);
            let a = if l >= n { (l - n) as u32 } else { self.best[l] };
            let b = if r >= n { (r - n) as u32 } else { self.best[r] };
            self.best[i] = self.pick(a, b);
        }
    }

    fn propagate(&mut self, slot: usize) {
        let n = self.size;
        let mut i = (slot + n) / 2;
        while i >= 1 {
            let (l, r) = (2 * i, 2 * i + 1);
            let a = if l >= n { (l - n) as u32 } else { self.best[l] };
            let b = if r >= n { (r - n) as u32 } else { self.best[r] };
            self.best[i] = self.pick(a, b);
            i /= 2;
        }
    }

    /// Set a slot's time; the minimum is valid again after [`MinTree::flush`].
    pub fn set_lazy(&mut self, slot: usize, time: f64) {
        if slot >= self.size {
            self.flush();
            self.resize(slot + 1);
        }
        self.times[slot] = time;
        self.dirty.push(slot as u32);
    }

    /// Set a slot's time and keep the minimum valid.
    pub fn set(&mut self, slot: usize, time: f64) {
        if slot >= self.size || !self.dirty.is_empty() {
            self.set_lazy(slot, time);
            self.flush();
        } else {
            self.times[slot] = time;
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
        self.times.get(slot).copied().unwrap_or(f64::INFINITY)
    }

    /// Lower a slot's time (`time` <= its current time): stops climbing as soon as the
    /// slot does not win a level, so it is often O(1).
    pub fn decrease(&mut self, slot: usize, time: f64) {
        debug_assert!(self.dirty.is_empty() && slot < self.size && time <= self.times[slot]);
        self.times[slot] = time;
        let mut i = (slot + self.size) / 2;
        while i >= 1 {
            let b = self.best[i] as usize;
            if b != slot && self.pick(b as u32, slot as u32) as usize == b {
                break;
            }
            self.best[i] = slot as u32;
            i /= 2;
        }
    }

    /// The earliest time and its slot (time is infinite when all slots are empty).
    pub fn min(&self) -> (f64, usize) {
        debug_assert!(self.dirty.is_empty());
        let s = self.best[1] as usize;
        (self.times[s], s)
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
