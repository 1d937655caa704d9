//! Division by a number fixed for a whole batch (states per part, counter
//! combinations per placement), by a multiplication.
//!
//! Initialisation and propagation divide batch positions by these numbers
//! several times per state; the hardware division was about 3% of the
//! samples of the KKMvKK and KKMvKM pairs.

/// A divisor `d` with its reciprocal `c = ⌈2^64 / d⌉`: for `n · d < 2^64` the
/// quotient `⌊n / d⌋` is the high word of `n · c` (Lemire, Kaser and Kurz,
/// "Faster remainder by direct computation", 2019: writing `c = (2^64 + e) / d`
/// with `0 ≤ e < d`, `n · c / 2^64 = n / d + n · e / (d · 2^64)`, and the
/// second term is below `1 / d` when `n · e < 2^64`, so it cannot carry the
/// quotient past the next integer). Batch positions times these divisors
/// stay far below 2^64 for every table that fits in memory (a five-piece
/// batch: under 2^28 times under 2^25); larger numerators, which a table of
/// seven or eight kings could bring, take the hardware's division.
#[derive(Copy, Clone, Debug)]
pub(super) struct Divisor {
    d: u64,
    /// `⌈2^64 / d⌉` (0 for `d = 1`, where it would need 65 bits).
    c: u64,
    /// The largest numerator divided by multiplication: `⌊(2^64 - 1) / d⌋`
    /// (0 for `d = 1`: every other numerator takes the hardware's way).
    fast_max: u64,
}

impl Divisor {
    pub(super) fn new(d: u64) -> Divisor {
        assert!(d > 0, "division by zero");
        if d == 1 {
            return Divisor {
                d,
                c: 0,
                fast_max: 0,
            };
        }
        Divisor {
            d,
            c: u64::MAX / d + 1,
            fast_max: u64::MAX / d,
        }
    }

    /// The divisor itself.
    #[cfg(test)]
    pub(super) fn get(self) -> u64 {
        self.d
    }

    /// `⌊n / d⌋`.
    #[inline]
    pub(super) fn div(self, n: u64) -> u64 {
        if n <= self.fast_max {
            ((n as u128 * self.c as u128) >> 64) as u64
        } else {
            n / self.d
        }
    }

    /// `(⌊n / d⌋, n mod d)`.
    #[inline]
    pub(super) fn div_rem(self, n: u64) -> (u64, u64) {
        let q = self.div(n);
        (q, n - q * self.d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Quotient and remainder equal the hardware's for every divisor up to
    /// 4,096 and many larger ones, at the ends of the multiplication's range
    /// (the largest `n` with `n · d < 2^64`) and beyond it, around multiples
    /// of `d`, and at random.
    #[test]
    fn quotients_equal_the_hardware_division() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut random = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut divisors: Vec<u64> = (1..=4096).collect();
        divisors.extend((0..2000).map(|_| random() % (1 << 24) + 1));
        divisors.extend((1..24).flat_map(|k| [(1u64 << k) - 1, 1 << k, (1 << k) + 1]));
        divisors.extend([u32::MAX as u64, 1 << 40, u64::MAX / 3, u64::MAX]);
        let mut checked = 0u64;
        for &d in &divisors {
            let div = Divisor::new(d);
            assert_eq!(div.get(), d);
            let max = u64::MAX / d;
            let mut ns = vec![0, 1, d - 1, d, d.saturating_add(1), max, max - 1, max / 2];
            ns.extend([max.saturating_add(1), u64::MAX, u64::MAX - 1, 1 << 63]);
            ns.extend((0..64).map(|_| random() % (1u64 << 40)));
            ns.extend((0..16).map(|_| random() % max.max(1)));
            ns.extend((0..8).map(|_| random()));
            ns.extend((1..16u64).flat_map(|k| {
                let m = (random() % (1u64 << 30)).wrapping_mul(d);
                [
                    m,
                    m.wrapping_sub(1),
                    m.wrapping_add(1),
                    k.wrapping_mul(d).wrapping_sub(1),
                ]
            }));
            for n in ns {
                assert_eq!(div.div(n), n / d, "{n} / {d}");
                assert_eq!(div.div_rem(n), (n / d, n % d), "{n} / {d}");
                checked += 1;
            }
        }
        assert!(checked > 500_000, "only {checked} checked");
    }
}
