//! A tiny deterministic generator for the property tests (no dependency,
//! same sequence on every run).

use jiff::Timestamp;

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A value in `lo..=hi`.
    pub fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + self.below(u64::from(hi - lo) + 1) as u32
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// One of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// An instant between the starts of two years (UTC), to the second.
    pub fn timestamp(&mut self, from_year: i16, to_year: i16) -> Timestamp {
        let lo = Timestamp::from_second(year_start(from_year)).unwrap();
        let hi = Timestamp::from_second(year_start(to_year)).unwrap();
        let span = (hi.as_second() - lo.as_second()) as u64;
        Timestamp::from_second(lo.as_second() + self.below(span) as i64).unwrap()
    }
}

fn year_start(year: i16) -> i64 {
    jiff::civil::date(year, 1, 1)
        .to_zoned(jiff::tz::TimeZone::UTC)
        .unwrap()
        .timestamp()
        .as_second()
}
