//! The one seeded generator of the tests and the fuzzer: xoshiro256**,
//! seeded through splitmix64, so that what a seed generates is the same on
//! every run and every machine, and a failure reproduces from its seed.
//! No dependency: the policies' tests, conformance and the fuzzer reach it
//! through the `testing` feature without a crate of their own.

/// One step of splitmix64; also the mixer that derives per-input seeds.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A stable 64-bit hash of a name (FNV-1a), to mix a name into a seed.
pub fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xCBF2_9CE4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

/// xoshiro256**.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Self { s }
    }

    /// The generator of input `index` of a run of `name`: independent of
    /// how many workers there are and of which one takes the input.
    pub fn for_input(seed: u64, name: &str, index: u64) -> Self {
        let mut sm = seed ^ name_hash(name).rotate_left(17);
        let base = splitmix64(&mut sm);
        let mut sm = base ^ index.wrapping_mul(0xD605_BBB5_8C8A_BE33);
        Self::new(splitmix64(&mut sm))
    }

    pub fn next_u64(&mut self) -> u64 {
        let [s0, s1, s2, s3] = &mut self.s;
        let result = s1.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = *s1 << 17;
        *s2 ^= *s0;
        *s3 ^= *s1;
        *s1 ^= *s2;
        *s0 ^= *s3;
        *s2 ^= t;
        *s3 = s3.rotate_left(45);
        result
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        let n = n as u64;
        // Lemire's multiply-shift (two u64 never overflow a u128, and the
        // result is below `n`); the tiny bias is irrelevant here.
        let scaled = u128::from(self.next_u64()).wrapping_mul(u128::from(n)) >> 64;
        usize::try_from(scaled).unwrap_or(0)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        if hi <= lo {
            return lo;
        }
        lo.saturating_add(self.below(hi.abs_diff(lo).saturating_add(1)))
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// One of `items` (`None` when there are none).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        items.get(self.below(items.len()))
    }

    /// A size spread log-uniformly over `lo..=hi`: small sizes are common,
    /// the largest ones occasional.
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "the float is positive, and the cast saturates before the clamp"
    )]
    pub fn log_size(&mut self, lo: usize, hi: usize) -> usize {
        let (lo_f, hi_f) = ((lo.max(1) as f64).ln(), (hi.max(1) as f64).ln());
        let x = (lo_f + self.unit() * (hi_f - lo_f)).exp();
        (x as usize).clamp(lo, hi)
    }

    /// The index chosen by weight.
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|w| u64::from(*w)).sum();
        if total == 0 {
            return 0;
        }
        let mut x = self.next_u64().checked_rem(total).unwrap_or(0);
        for (i, w) in weights.iter().enumerate() {
            let w = u64::from(*w);
            if x < w {
                return i;
            }
            x = x.wrapping_sub(w);
        }
        weights.len().saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_different_index_different_stream() {
        let stream = |seed, name, index| -> Vec<u64> {
            let mut r = Rng::for_input(seed, name, index);
            (0..8).map(|_| r.next_u64()).collect()
        };
        let a = stream(1, "flux-gate", 7);
        assert_eq!(a, stream(1, "flux-gate", 7));
        assert_ne!(a, stream(1, "flux-gate", 8));
        assert_ne!(a, stream(1, "flux-suspend", 7));
    }

    /// The fuzzer's `--seed` reproduces a run: the stream of a seed is fixed.
    #[test]
    fn the_stream_of_a_seed_does_not_change() {
        let mut r = Rng::new(1);
        let first: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        assert_eq!(
            first,
            [
                0xB3F2_AF6D_0FC7_10C5,
                0x853B_5596_4736_4CEA,
                0x92F8_9756_082A_4514
            ]
        );
        assert_eq!(name_hash(""), 0xCBF2_9CE4_8422_2325);
    }

    #[test]
    fn below_and_range_stay_in_bounds() {
        let mut r = Rng::new(3);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let x = r.below(5);
            assert!(x < 5);
            seen[x] = true;
            let y = r.range(10, 12);
            assert!((10..=12).contains(&y));
            let z = r.log_size(4, 1 << 20);
            assert!((4..=1 << 20).contains(&z));
        }
        assert!(seen.iter().all(|s| *s));
        assert_eq!(r.below(0), 0);
        assert_eq!(r.pick::<u8>(&[]), None);
    }
}
