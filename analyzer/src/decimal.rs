//! Number text for reports without the formatting machinery: the fixed-point text of a float
//! (`Fixed`, byte for byte what `format!("{:.N}", x)` writes, by integer arithmetic in the common
//! case instead of the exact float-to-decimal algorithm, which took a tenth of the time spent
//! summarising an association), a tag's eight hex digits (`Hex8`, as `{:08x}`) and a count with
//! its noun (`plural`).

use std::fmt;

/// `x` with `decimals` digits after the point, as `{:.decimals}` writes it.
#[derive(Debug, Clone, Copy)]
pub struct Fixed(pub f64, pub u8);

impl fmt::Display for Fixed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Fixed(x, n) = *self;
        let Some(r) = rounded(x, n) else {
            return write!(f, "{:.*}", usize::from(n), x);
        };
        let p = 10u64.pow(u32::from(n));
        let mut buf = itoa::Buffer::new();
        f.write_str(buf.format(r / p))?;
        if n > 0 {
            f.write_str(".")?;
            let frac = buf.format(r % p);
            for _ in frac.len()..usize::from(n) {
                f.write_str("0")?;
            }
            f.write_str(frac)?;
        }
        Ok(())
    }
}

/// A 32-bit value as eight lower-case hex digits (`format!("{v:08x}")`), e.g. a verification tag
/// in a display filter.
#[derive(Debug, Clone, Copy)]
pub struct Hex8([u8; 8]);

impl Hex8 {
    pub fn new(v: u32) -> Self {
        let mut d = [0u8; 8];
        for (i, h) in d.iter_mut().enumerate() {
            *h = b"0123456789abcdef"[(v >> (28 - 4 * i) & 0xf) as usize];
        }
        Hex8(d)
    }

    pub fn as_str(&self) -> &str {
        // Hex digits only: ASCII.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl fmt::Display for Hex8 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `x` x 10^n rounded to an integer when that is certainly what the exact decimal expansion
/// rounds to; None (the exact path decides) for negative, non-finite and large values and near a
/// tie (round-half-to-even of the exact binary value, which the product cannot tell).
fn rounded(x: f64, n: u8) -> Option<u64> {
    if n > 6 || !x.is_finite() || x.is_sign_negative() {
        return None;
    }
    let s = x * 10f64.powi(i32::from(n));
    // Below 1e9 the product's rounding error (half an ulp, at most 6e-8) is far inside the
    // margin kept around a tie.
    if s >= 1e9 {
        return None;
    }
    let whole = s.floor();
    let frac = s - whole;
    if (frac - 0.5).abs() < 1e-6 {
        return None;
    }
    Some(whole as u64 + u64::from(frac > 0.5))
}

/// A count with its noun: "1 message", "3 messages".
pub fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// A duration in words: "3.0 s", "200 ms", "1.5 ms", "80 µs" (written where it is used, no
/// string of its own); a negative one reads as 0.
pub fn fmt_dur(ns: i64) -> Dur {
    Dur(ns)
}

/// `fmt_dur`'s text.
#[derive(Debug, Clone, Copy)]
pub struct Dur(i64);

impl std::fmt::Display for Dur {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ns = self.0.max(0) as f64;
        let (value, unit) = if ns >= 1e9 {
            (Fixed(ns / 1e9, 1), " s")
        } else if ns >= 1e7 {
            (Fixed(ns / 1e6, 0), " ms")
        } else if ns >= 1e6 {
            (Fixed(ns / 1e6, 1), " ms")
        } else {
            (Fixed(ns / 1e3, 0), " µs")
        };
        std::fmt::Display::fmt(&value, f)?;
        f.write_str(unit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex8_is_the_standard_eight_digit_hex() {
        for v in [0, 7, 0x9a6e_8fa6, 0x0a0a_0a0a, u32::MAX, 0x8000_0000] {
            assert_eq!(Hex8::new(v).as_str(), format!("{v:08x}"));
            assert_eq!(Hex8::new(v).to_string(), format!("{v:08x}"));
        }
    }

    #[test]
    fn same_text_as_the_standard_formatting() {
        let mut seed = 0x5eed_u64;
        let mut values = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.05,
            0.15,
            0.25,
            0.35,
            1.005,
            9.95,
            9.9999999,
            99.95,
            40.587,
            1e-9,
            123456.789,
            999_999_999.4,
            1e12,
            -3.2,
            f64::NAN,
            f64::INFINITY,
        ];
        for _ in 0..20_000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let scale = 10f64.powi((seed >> 60) as i32 - 4);
            values.push((seed >> 11) as f64 / (1u64 << 53) as f64 * scale);
            // Values an integer count of ns or µs produces (ties among them).
            values.push(((seed >> 20) % 10_000_000) as f64 / 1e3);
        }
        for x in values {
            for n in 0..=4u8 {
                assert_eq!(
                    Fixed(x, n).to_string(),
                    format!("{:.*}", usize::from(n), x),
                    "{x} with {n} decimals"
                );
            }
        }
    }
}
