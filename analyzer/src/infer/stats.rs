//! Bounded sample collections and their distribution summaries (n, min, median, p95, max).

use serde::{Deserialize, Serialize};

/// Samples kept exactly; past this, a deterministic reservoir keeps memory bounded.
const MAX_SAMPLES: usize = 65_536;

/// A distribution summary in milliseconds, as the JSON contract reports it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Dist {
    pub n: u64,
    pub min: f64,
    pub median: f64,
    pub p95: f64,
    pub max: f64,
}

/// Count, sum, min and max of a series, without its values: for figures that need no quantile
/// (keeping every value of them was vector growth on the hot path for nothing).
#[derive(Debug, Clone, Copy, Default)]
pub struct Running {
    n: u64,
    sum: f64,
    min: f64,
    max: f64,
    /// Frozen (`freeze`): later values are ignored.
    sealed: bool,
}

impl Running {
    /// Counts a finite value; false (and nothing counted) for any other or once frozen.
    #[inline]
    pub fn push(&mut self, v: f64) -> bool {
        if !v.is_finite() || self.sealed {
            return false;
        }
        // Finite values: plain comparisons (no NaN rules to apply).
        if self.n == 0 || v < self.min {
            self.min = v;
        }
        if self.n == 0 || v > self.max {
            self.max = v;
        }
        self.n += 1;
        self.sum += v;
        true
    }

    pub fn len(&self) -> u64 {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    pub fn min(&self) -> Option<f64> {
        (self.n > 0).then_some(self.min)
    }

    pub fn max(&self) -> Option<f64> {
        (self.n > 0).then_some(self.max)
    }

    /// The sum, in the order the values came.
    pub fn sum(&self) -> f64 {
        self.sum
    }

    /// The mean, summed in the order the values came.
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / self.n as f64)
    }

    /// Ignores later values (the series was summarised).
    pub fn freeze(&mut self) {
        self.sealed = true;
    }
}

/// Bounded sample set: exact count, min and max (`Running`), quantiles from (a reservoir of) the
/// samples.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    /// Summary kept after `freeze` dropped the samples.
    frozen: Option<Dist>,
    /// Count, min and max of every sample; frozen with the samples (later ones are ignored and
    /// `dist` is `frozen`).
    counts: Running,
    kept: Vec<f64>,
    rng: u64,
}

impl Samples {
    #[inline]
    pub fn push(&mut self, v: f64) {
        if !self.counts.push(v) {
            return;
        }
        if self.kept.len() < MAX_SAMPLES {
            self.kept.push(v);
        } else {
            self.replace(v);
        }
    }

    /// Past `MAX_SAMPLES`: reservoir sampling (Vitter's algorithm R) with a fixed-seed xorshift.
    #[cold]
    fn replace(&mut self, v: f64) {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        if self.rng == 0 {
            self.rng = 0x9E37_79B9_7F4A_7C15;
        }
        let j = self.rng % self.counts.n;
        if (j as usize) < MAX_SAMPLES {
            self.kept[j as usize] = v;
        }
    }

    pub fn len(&self) -> u64 {
        self.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    pub fn min(&self) -> Option<f64> {
        self.counts.min()
    }

    pub fn max(&self) -> Option<f64> {
        self.counts.max()
    }

    /// The sum of every sample, kept or not (`Running::sum`).
    pub fn sum(&self) -> f64 {
        self.counts.sum()
    }

    pub fn values(&self) -> &[f64] {
        &self.kept
    }

    /// Keeps only the summary (bounded memory for finished associations).
    pub fn freeze(&mut self) {
        if !self.counts.sealed {
            self.freeze_with(self.dist());
        }
    }

    /// `freeze` with the summary `d` already computed from these samples (`None`: nobody will
    /// read it), saving a second computation.
    pub fn freeze_with(&mut self, d: Option<Dist>) {
        self.frozen = d;
        self.counts.freeze();
        self.kept = Vec::new();
    }

    /// Summary, or None without samples.
    pub fn dist(&self) -> Option<Dist> {
        if self.counts.sealed {
            return self.frozen;
        }
        if self.counts.n == 0 {
            return None;
        }
        let mut keys: Vec<i64> = self.kept.iter().map(|&x| order_key(x)).collect();
        let (median, p95) = quantiles_select(&mut keys, 0.5, 0.95);
        Some(Dist {
            n: self.counts.n,
            min: self.counts.min,
            median,
            p95,
            max: self.counts.max,
        })
    }
}

/// Throughput over time: adds `bytes` to the bin of the second that `elapsed_ns` falls in; past
/// `max_bins` seconds nothing is kept (bounded memory).
#[inline]
pub fn add_per_second(bins: &mut Vec<u64>, elapsed_ns: i64, bytes: u64, max_bins: usize) {
    let sec = (elapsed_ns.max(0) / 1_000_000_000) as usize;
    if sec < max_bins {
        if bins.len() <= sec {
            bins.resize(sec + 1, 0);
        }
        bins[sec] += bytes;
    }
}

/// One RTT measurement into SRTT / RTTVAR, in ms: RFC 9260 6.3.1 C2/C3 for SCTP and the same rule
/// in RFC 6298 2.2/2.3 for TCP (alpha 1/8, beta 1/4).
pub fn rtt_update(srtt: &mut Option<f64>, rttvar: &mut f64, r_ms: f64) {
    match *srtt {
        None => {
            *srtt = Some(r_ms);
            *rttvar = r_ms / 2.0;
        }
        Some(s) => {
            *rttvar = 0.75 * *rttvar + 0.25 * (s - r_ms).abs();
            *srtt = Some(0.875 * s + 0.125 * r_ms);
        }
    }
}

/// `rtt_update` as a kernel keeping the estimator in 10 ms ticks computes it (Linux
/// `sctp_transport_update_rto` at HZ 100: RTTVAR = RTTVAR - RTTVAR/4 + |SRTT - R|/4, SRTT =
/// SRTT - SRTT/8 + R/8 with integer shifts, RTTVAR at least one tick): (SRTT, RTTVAR) in ticks.
///
/// A kernel measures a round trip as the jiffies it spanned: `r_ms / 10` rounded down or up,
/// depending on where the ticks fell. `up` takes every sample rounded up (the highest estimate
/// the kernel can hold), otherwise down (the lowest).
pub fn rtt_update_ticks(prev: Option<(u32, u32)>, r_ms: f64, up: bool) -> (u32, u32) {
    // Whole ticks; integer rounding keeps libm's ceil off the per-SACK path.
    // At most 2^28 ticks (a month): the sums below cannot overflow (a crafted capture's RTT).
    let t = (r_ms.max(0.0) * 0.1).min(f64::from(1u32 << 28));
    let r = t as u32 + u32::from(up && f64::from(t as u32) < t);
    let (s, v) = match prev {
        None => (r, r / 2),
        Some((s, v)) => (s - (s >> 3) + (r >> 3), v - (v >> 2) + (s.abs_diff(r) >> 2)),
    };
    (s, v.max(1))
}

/// An integer that orders like `f64::total_cmp` (IEEE 754 totalOrder): integer comparisons
/// make a selection several times cheaper. Its own inverse.
#[inline]
fn order_key(x: f64) -> i64 {
    let b = x.to_bits() as i64;
    b ^ (((b >> 63) as u64) >> 1) as i64
}

#[inline]
fn from_order_key(k: i64) -> f64 {
    f64::from_bits((k ^ (((k >> 63) as u64) >> 1) as i64) as u64)
}

/// Two quantiles `q1 <= q2` of values given as `order_key`s, as `quantile_select` gives them;
/// the second is selected within the part above the first (about half the work of two
/// selections).
fn quantiles_select(v: &mut [i64], q1: f64, q2: f64) -> (f64, f64) {
    if v.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let pos = |q: f64| q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let (p1, p2) = (pos(q1), pos(q2.max(q1)));
    let lo1 = p1.floor() as usize;
    let (_, &mut a, upper) = v.select_nth_unstable(lo1);
    // The next order statistic is the smallest of the part above.
    let next = |part: &[i64]| from_order_key(part.iter().copied().min().unwrap_or(i64::MAX));
    let lerp = |a: f64, b: f64, f: f64| a + (b - a) * f;
    let a = from_order_key(a);
    let a1 = if p1 == lo1 as f64 {
        a
    } else {
        lerp(a, next(upper), p1 - lo1 as f64)
    };
    let lo2 = p2.floor() as usize;
    if lo2 == lo1 && p2 == p1 {
        return (a1, a1);
    }
    // Order statistic lo2 (> lo1, or = lo1 with a fraction) is `a` or lives in `upper`.
    let (a2, rest): (f64, &[i64]) = if lo2 == lo1 {
        (a, upper)
    } else {
        let (_, &mut x, rest) = upper.select_nth_unstable(lo2 - lo1 - 1);
        (from_order_key(x), rest)
    };
    let v2 = if p2 == lo2 as f64 {
        a2
    } else {
        lerp(a2, next(rest), p2 - lo2 as f64)
    };
    (a1, v2)
}

/// Quantile of sorted values by linear interpolation.
pub fn quantile_sorted(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// Median of unsorted values.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    Some(quantile_sorted(&v, 0.5))
}

#[cfg(test)]
mod tests {

    #[test]
    fn tick_estimator_keeps_rttvar_at_whole_ticks() {
        // A steady 40 ms RTT in 10 ms ticks: SRTT 4, RTTVAR 2 (integer shifts stop its decay),
        // so SRTT + 4 RTTVAR = 12 ticks = 120 ms (the Linux kernel's RTO in lab run lk_pf0),
        // where the exact estimate falls to 40 ms.
        let mut e = None;
        for _ in 0..50 {
            e = Some(rtt_update_ticks(e, 40.0, true));
        }
        assert_eq!(e, Some((4, 2)));
        // RTTVAR never reads below one tick.
        assert_eq!(rtt_update_ticks(None, 1.0, true), (1, 1));
        // Absurd RTTs (crafted captures) neither overflow nor panic.
        let big = rtt_update_ticks(Some((u32::MAX >> 4, 1)), f64::MAX, true);
        assert!(rtt_update_ticks(Some(big), 1e300, true).0 > 0);
        assert!(rtt_update_ticks(Some(big), 1e300, false).0 > 0);
    }

    #[test]
    fn tick_estimator_bounds_the_kernels_from_both_sides() {
        // A steady 20.1 ms RTT spans 2 jiffies nearly every time (3 when a tick falls just
        // after the send): SRTT 2 and RTTVAR 1 give the 60 ms RTO the kernel held in a lab run
        // (ho_pf0_sack0_rtomin50_pmr1); every sample rounded up gives 70 ms.
        let (mut lo, mut hi) = (None, None);
        for _ in 0..50 {
            lo = Some(rtt_update_ticks(lo, 20.1, false));
            hi = Some(rtt_update_ticks(hi, 20.1, true));
        }
        assert_eq!(lo, Some((2, 1)));
        assert_eq!(hi, Some((3, 1)));
        // A whole number of ticks rounds the same both ways.
        assert_eq!(
            rtt_update_ticks(None, 40.0, false),
            rtt_update_ticks(None, 40.0, true)
        );
    }

    use super::*;

    #[test]
    fn per_second_bins_grow_to_the_second_and_stop_at_the_bound() {
        let mut bins = Vec::new();
        add_per_second(&mut bins, 1_500_000_000, 10, 4);
        add_per_second(&mut bins, -5, 3, 4); // before the start: the first second
        add_per_second(&mut bins, 999_999_999, 2, 4);
        add_per_second(&mut bins, 4_000_000_000, 7, 4); // past 4 bins: not kept
        assert_eq!(bins, vec![5, 10]);
    }

    #[test]
    fn running_keeps_count_sum_min_max_and_stops_when_frozen() {
        let mut r = Running::default();
        assert_eq!((r.len(), r.min(), r.max(), r.mean()), (0, None, None, None));
        for v in [3.0, f64::NAN, -1.5, 10.0, f64::INFINITY, 0.5] {
            r.push(v);
        }
        assert_eq!((r.len(), r.min(), r.max()), (4, Some(-1.5), Some(10.0)));
        // The same sum, in the same order, as the values summed from a kept list.
        let kept = [3.0, -1.5, 10.0, 0.5];
        assert_eq!(r.mean(), Some(kept.iter().sum::<f64>() / 4.0));
        r.freeze();
        r.push(100.0);
        assert_eq!((r.len(), r.max()), (4, Some(10.0)));
    }

    /// Quantile by linear interpolation, one selection each: the reference `quantiles_select`
    /// must agree with.
    fn quantile_select(v: &mut [f64], q: f64) -> f64 {
        if v.is_empty() {
            return f64::NAN;
        }
        let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
        let lo = pos.floor() as usize;
        let (_, &mut a, rest) = v.select_nth_unstable_by(lo, f64::total_cmp);
        if pos == lo as f64 {
            return a;
        }
        // The next order statistic is the smallest of the upper part.
        let b = rest.iter().copied().fold(f64::INFINITY, f64::min);
        a + (b - a) * (pos - lo as f64)
    }

    #[test]
    fn summary_of_known_values() {
        let mut s = Samples::default();
        for v in [5.0, 1.0, 3.0, 2.0, 4.0] {
            s.push(v);
        }
        let d = s.dist().unwrap();
        assert_eq!((d.n, d.min, d.median, d.max), (5, 1.0, 3.0, 5.0));
        assert!((d.p95 - 4.8).abs() < 1e-9);
        assert!(Samples::default().dist().is_none());
    }

    #[test]
    fn two_quantiles_equal_two_selections() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for n in [1usize, 2, 3, 4, 5, 19, 20, 21, 100, 501] {
            let v: Vec<f64> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // Repeated and negative values too.
                    (x % 50) as f64 / 3.0 - 4.0
                })
                .collect();
            for (q1, q2) in [
                (0.5, 0.95),
                (0.5, 0.5),
                (0.0, 1.0),
                (0.25, 0.26),
                (0.9, 0.95),
            ] {
                let one = quantile_select(&mut v.clone(), q1);
                let two = quantile_select(&mut v.clone(), q2);
                let mut keys: Vec<i64> = v.iter().map(|&x| order_key(x)).collect();
                assert_eq!(
                    quantiles_select(&mut keys, q1, q2),
                    (one, two),
                    "{n} {q1} {q2}"
                );
            }
        }
    }

    #[test]
    fn frozen_keeps_the_summary_only() {
        let mut s = Samples::default();
        for v in [1.0, 2.0, 3.0] {
            s.push(v);
        }
        s.freeze();
        s.push(100.0);
        assert!(s.values().is_empty());
        assert_eq!(s.dist().unwrap().median, 2.0);
        assert_eq!(s.dist().unwrap().max, 3.0);
    }

    #[test]
    fn reservoir_stays_bounded() {
        let mut s = Samples::default();
        for i in 0..(MAX_SAMPLES as u64 * 3) {
            s.push(i as f64);
        }
        assert_eq!(s.values().len(), MAX_SAMPLES);
        let d = s.dist().unwrap();
        assert_eq!(d.min, 0.0);
        assert_eq!(d.max, (MAX_SAMPLES * 3 - 1) as f64);
        assert!((d.median / (MAX_SAMPLES as f64 * 1.5) - 1.0).abs() < 0.05);
    }
}
