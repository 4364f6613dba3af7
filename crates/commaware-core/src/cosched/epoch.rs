//! The Linux 2.4 epoch ("earnings-based") CPU scheduler of one node (paper 002 §5.2, whose
//! nodes ran Linux 2.4.7; the rules are those of `kernel/sched.c` in 2.4, as Bovet and
//! Cesati [10] describe them):
//!
//! - the timer ticks at `HZ` = 100 (10 ms); at each tick the running process's `counter`
//!   loses one;
//! - a process's weight (`goodness`) is 0 when its counter is 0, else counter + 20 − nice
//!   (nice 0 here); `schedule()` picks the runnable process of highest goodness;
//! - when every runnable process has counter 0 the epoch ends: *every* process of the node,
//!   sleeping ones included, gets counter = counter/2 + NICE_TO_TICKS(0), and
//!   NICE_TO_TICKS(0) = 6 ticks (60 ms) at HZ = 100, the quantum;
//! - a woken process preempts the running one when its goodness is higher.
//!
//! These are pure functions on tick counts; the event-driven node model
//! ([`super::timeshare`]) calls them only at events, never per idle tick.

/// Timer frequency of Linux 2.4 on x86, Hz.
pub const HZ: f64 = 100.0;
/// NICE_TO_TICKS(0) at HZ = 100: the quantum, ticks (60 ms).
pub const QUANTUM_TICKS: i64 = 6;
/// Goodness of a process with counter > 0 is counter + this (20 − nice, nice = 0).
pub const GOODNESS_BASE: i64 = 20;

/// Epoch-scheduler parameters (tick length and quantum), configurable for tests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpochParams {
    /// Tick length, s (1/HZ).
    pub tick_s: f64,
    /// Counter added at each epoch end (NICE_TO_TICKS), ticks.
    pub quantum_ticks: i64,
}

impl Default for EpochParams {
    fn default() -> Self {
        EpochParams { tick_s: 1.0 / HZ, quantum_ticks: QUANTUM_TICKS }
    }
}

impl EpochParams {
    /// Index of the last tick at or before `t` (ticks at k·tick_s). A relative guard of 1e-9
    /// tick makes a time computed as k·tick_s count as tick k despite rounding.
    pub fn tick_of(&self, t: f64) -> i64 {
        (t / self.tick_s + 1e-9).floor() as i64
    }

    /// Ticks in (a, b]: how many times the running process is charged between a and b.
    pub fn ticks_between(&self, a: f64, b: f64) -> i64 {
        (self.tick_of(b) - self.tick_of(a)).max(0)
    }

    /// When a process running from `t` with `counter` ticks left reaches counter 0: the
    /// `counter`-th tick after `t`.
    pub fn expiry(&self, t: f64, counter: i64) -> f64 {
        (self.tick_of(t) + counter.max(1)) as f64 * self.tick_s
    }

    /// The epoch-end recalculation of one counter: counter/2 + quantum.
    pub fn recalc(&self, counter: i64) -> i64 {
        (counter >> 1) + self.quantum_ticks
    }

    /// `epochs` recalculations in a row (they reach a fixed point within a few; stop there).
    pub fn recalc_n(&self, mut counter: i64, epochs: i64) -> i64 {
        for _ in 0..epochs {
            let next = self.recalc(counter);
            if next == counter {
                break;
            }
            counter = next;
        }
        counter
    }

    /// Charge `ticks` ticks to a process with `counter` that ran alone (nothing else
    /// runnable on its node): each time its counter reaches 0 an epoch ends at once and it
    /// goes on with `quantum` ticks. Returns (its counter after, epochs that ended).
    pub fn charge_alone(&self, counter: i64, ticks: i64) -> (i64, i64) {
        if ticks < counter {
            return (counter - ticks, 0);
        }
        // The first epoch ends when the counter reaches 0 (it restarts at 0/2 + q = q),
        // then one every q ticks.
        let q = self.quantum_ticks;
        let rest = ticks - counter;
        (q - rest % q, 1 + rest / q)
    }
}

/// Goodness of a SCHED_OTHER process at nice 0 with `counter` ticks left, plus `bonus`
/// (a coscheduling boost); a process whose counter is spent has goodness 0 whatever its
/// bonus: a boost never lifts a process beyond its remaining epoch counter (§5.2).
pub fn goodness(counter: i64, bonus: i64) -> i64 {
    if counter <= 0 {
        0
    } else {
        counter + GOODNESS_BASE + bonus
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_and_expiry() {
        let p = EpochParams::default();
        // 0.06 / 0.01 is 5.999... in binary: still tick 6.
        assert_eq!(p.tick_of(0.06), 6);
        assert_eq!(p.tick_of(0.0599), 5);
        assert_eq!(p.ticks_between(0.005, 0.06), 6);
        assert_eq!(p.ticks_between(0.06, 0.0650), 0);
        // Dispatched at 5 ms with 6 ticks: charged at 10, 20, ..., 60 ms -> 0 at 60 ms.
        assert!((p.expiry(0.005, 6) - 0.06).abs() < 1e-12);
        // Dispatched exactly on a tick: that tick is not charged to it.
        assert!((p.expiry(0.01, 1) - 0.02).abs() < 1e-12);
    }

    #[test]
    fn epoch_recalculation() {
        let p = EpochParams::default();
        // counter/2 + 6: a spent process gets 6, a sleeper accumulates to 11 or 12.
        assert_eq!(p.recalc(0), 6);
        assert_eq!(p.recalc(6), 9);
        assert_eq!(p.recalc(9), 10);
        assert_eq!(p.recalc(3), 7);
        assert_eq!(p.recalc_n(0, 100), 11); // 6, 9, 10, 11, 11
        assert_eq!(p.recalc_n(12, 3), 12);
        assert_eq!(p.recalc_n(0, 2), 9);
    }

    #[test]
    fn running_alone_through_epochs() {
        let p = EpochParams::default();
        assert_eq!(p.charge_alone(6, 4), (2, 0));
        // Hand trace: counter 6 spent after 6 ticks -> epoch, 6 again; 2 more ticks -> 4.
        assert_eq!(p.charge_alone(6, 8), (4, 1));
        // 6 ticks to 0 (epoch 1), 6 more to 0 (epoch 2) -> restarts at 6.
        assert_eq!(p.charge_alone(6, 12), (6, 2));
        assert_eq!(p.charge_alone(2, 2), (6, 1));
    }

    #[test]
    fn goodness_and_boost_cap() {
        assert_eq!(goodness(6, 0), 26);
        assert_eq!(goodness(1, 1000), 1021);
        // A boosted process with its counter spent cannot run before the epoch ends.
        assert_eq!(goodness(0, 1000), 0);
    }
}
