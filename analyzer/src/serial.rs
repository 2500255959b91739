//! Serial number arithmetic for 32-bit TSNs and TCP sequence numbers (RFC 1982, RFC 9260 1.6).

/// `a < b` in 32-bit serial arithmetic (RFC 1982 3.2).
#[inline]
pub fn lt(a: u32, b: u32) -> bool {
    a != b && (b.wrapping_sub(a) as i32) > 0
}

/// `a <= b` in 32-bit serial arithmetic.
#[inline]
pub fn le(a: u32, b: u32) -> bool {
    a == b || lt(a, b)
}

/// `a > b` in 32-bit serial arithmetic.
#[inline]
pub fn gt(a: u32, b: u32) -> bool {
    lt(b, a)
}

/// `a >= b` in 32-bit serial arithmetic.
#[inline]
pub fn ge(a: u32, b: u32) -> bool {
    a == b || lt(b, a)
}

/// Signed distance `b - a` (positive when b is after a).
#[inline]
pub fn diff(a: u32, b: u32) -> i64 {
    b.wrapping_sub(a) as i32 as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_around() {
        assert!(lt(0xFFFF_FFFF, 0));
        assert!(lt(1, 2));
        assert!(!lt(2, 2));
        assert!(le(2, 2));
        assert!(gt(5, 0xFFFF_FFF0));
        assert!(ge(0, 0xFFFF_FFFF));
        assert_eq!(diff(0xFFFF_FFFE, 1), 3);
        assert_eq!(diff(10, 4), -6);
    }
}
