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

/// Bounded sample set: exact min/max/count, quantiles from (a reservoir of) the samples.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    /// Summary kept after `freeze` dropped the samples.
    frozen: Option<Dist>,
    kept: Vec<f64>,
    n: u64,
    min: f64,
    max: f64,
    rng: u64,
}

impl Samples {
    pub fn push(&mut self, v: f64) {
        if !v.is_finite() || self.frozen.is_some() {
            return;
        }
        if self.n == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.n += 1;
        if self.kept.len() < MAX_SAMPLES {
            self.kept.push(v);
        } else {
            // Reservoir sampling (Vitter's algorithm R) with a fixed-seed xorshift.
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            if self.rng == 0 {
                self.rng = 0x9E37_79B9_7F4A_7C15;
            }
            let j = self.rng % self.n;
            if (j as usize) < MAX_SAMPLES {
                self.kept[j as usize] = v;
            }
        }
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

    pub fn values(&self) -> &[f64] {
        &self.kept
    }

    /// Keeps only the summary (bounded memory for finished associations).
    pub fn freeze(&mut self) {
        if self.frozen.is_none() {
            self.frozen = self.dist();
            self.kept = Vec::new();
        }
    }

    /// Summary, or None without samples.
    pub fn dist(&self) -> Option<Dist> {
        if let Some(d) = self.frozen {
            return Some(d);
        }
        if self.n == 0 {
            return None;
        }
        let mut v = self.kept.clone();
        Some(Dist {
            n: self.n,
            min: self.min,
            median: quantile_select(&mut v, 0.5),
            p95: quantile_select(&mut v, 0.95),
            max: self.max,
        })
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

/// Quantile by linear interpolation without a full sort (selection, O(n)).
pub fn quantile_select(v: &mut [f64], q: f64) -> f64 {
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
    use super::*;

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
