//! Regular expressions written in settings (`reasonPattern`, `valuePatterns`),
//! compiled so that matching them costs a bounded amount per request.
//!
//! regex-lite never backtracks; a match costs at most about the compiled
//! program's size times the length of the text (regex-lite 0.1.9,
//! `RegexBuilder::size_limit`), counted in characters, not bytes (measured:
//! `(?:.*){0,100}b` takes the same time on 4096 `a`, `é` or `😀`). Settings
//! give the longest text a pattern is matched against, so each pattern's
//! program is capped at its share of one budget for that length, and a
//! pattern too large for it is refused with the settings, naming the trade.
//! Compiling costs time and memory in proportion to the program, on every
//! request, so short texts do not buy a program larger than
//! [`MAX_PROGRAM_BYTES`].

use std::num::NonZeroUsize;

use regex_lite::{Regex, RegexBuilder};

/// Program bytes × characters matched that one request may spend on
/// settings patterns. The cost of a unit depends on the pattern: about
/// 0.15 ns natively for `.*a{0,1000}b` or `(?:a*){0,200}b`, but the
/// alternatives of flux-suspend's worst case (`make worst-cases`), which
/// all match every character, spend the whole budget in about 10 ms in wasm
/// (3 ms natively), twice the time of reading its 2 MiB request. A smaller
/// budget would refuse ordinary patterns: `.{5,200}` alone compiles to
/// 17.5 KB, more than 16 MiB / 1,024 characters (the default
/// `maxReasonLength`) allows.
pub const MATCH_BUDGET: usize = 1 << 24;

/// The largest program any settings pattern compiles to, whatever the text
/// length. A program of the whole budget (16 MiB, reached when values are a
/// single character long) took 24 MiB of linear memory and most of the
/// compile time flux-event-metadata's worst case spends; 1 MiB is still a
/// class repeated about 10,000 times, far beyond what a ticket reference or
/// a label value needs.
pub const MAX_PROGRAM_BYTES: usize = 1 << 20;

/// The largest program (regex-lite's estimate, in bytes) each of `patterns`
/// patterns may compile to when matched against texts of up to
/// `longest_text` characters.
pub fn size_limit(longest_text: usize, patterns: usize) -> usize {
    let at_least_one = |n| NonZeroUsize::new(n).unwrap_or(NonZeroUsize::MIN);
    (MATCH_BUDGET / at_least_one(longest_text) / at_least_one(patterns)).min(MAX_PROGRAM_BYTES)
}

/// Compiles `pattern` with a program of at most `size_limit` bytes. The
/// error is regex-lite's; the caller names the setting and, for a program
/// too large, the settings that set the limit.
pub fn compile(pattern: &str, size_limit: usize) -> Result<Regex, Refused> {
    RegexBuilder::new(pattern)
        .size_limit(size_limit)
        .build()
        .map_err(|e| {
            // regex-lite 0.1.9's only words for it (nfa.rs, `check_size_limit`).
            if e.to_string() == "compiled regex exceeded size limit" {
                Refused::TooLarge { size_limit }
            } else {
                Refused::Syntax(e.to_string())
            }
        })
}

/// Why a pattern was not compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    Syntax(String),
    TooLarge { size_limit: usize },
}

impl Refused {
    /// A program too large for its share of the matching budget, so that
    /// the settings that set the share (text length, pattern count) are
    /// worth naming; false for syntax errors and for [`MAX_PROGRAM_BYTES`].
    pub fn limited_by_text_length(&self) -> bool {
        matches!(self, Refused::TooLarge { size_limit } if *size_limit < MAX_PROGRAM_BYTES)
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Syntax(e) => write!(f, "is not a valid regular expression ({e})"),
            Refused::TooLarge { size_limit } if *size_limit >= MAX_PROGRAM_BYTES => write!(
                f,
                "compiles to more than {MAX_PROGRAM_BYTES} bytes, the most a settings pattern may \
                 compile to (it is compiled for every request); write a simpler pattern (bounded \
                 repetitions such as {{0,10000}} are the usual cause)"
            ),
            Refused::TooLarge { size_limit } => write!(
                f,
                "compiles to more than {size_limit} bytes, this pattern's share of the matching \
                 budget ({MATCH_BUDGET} bytes × characters matched per request); write a simpler \
                 pattern (bounded repetitions such as {{0,1000}} are the usual cause) or lower the \
                 length limit"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_shared_by_length_and_count() {
        assert_eq!(size_limit(1024, 1), 16_384);
        assert_eq!(size_limit(1024, 4), 4_096);
        assert_eq!(size_limit(16, 1), MAX_PROGRAM_BYTES);
        assert_eq!(size_limit(usize::MAX, 1), 0);
    }

    #[test]
    fn short_texts_do_not_buy_programs_past_the_cap() {
        assert_eq!(size_limit(0, 0), MAX_PROGRAM_BYTES);
        assert_eq!(size_limit(1, 1), MAX_PROGRAM_BYTES);
        let limit = size_limit(1, 1);
        let refused = compile("[a-z]{0,200000}", limit).unwrap_err();
        assert_eq!(refused, Refused::TooLarge { size_limit: limit });
        assert!(!refused.limited_by_text_length());
        assert!(refused
            .to_string()
            .starts_with("compiles to more than 1048576 bytes, the most a settings pattern"));
        assert!(compile("[a-z]{0,5000}", limit).is_ok());
        let shared = compile(".*a{0,1000}b", size_limit(1024, 1)).unwrap_err();
        assert!(shared.limited_by_text_length());
    }

    #[test]
    fn realistic_patterns_fit_and_pathological_ones_are_named() {
        let limit = size_limit(1024, 1);
        for ok in [
            "^[A-Z][A-Z0-9]+-[0-9]+",
            "^(?:[0-9a-f]{40})$",
            "^(?:v?[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z.-]+)?)$",
        ] {
            assert!(compile(ok, limit).is_ok(), "{ok}");
        }
        assert_eq!(
            compile(".*a{0,1000}b", limit).unwrap_err(),
            Refused::TooLarge { size_limit: limit }
        );
        assert!(matches!(compile("[0-9", limit), Err(Refused::Syntax(_))));
        assert!(Refused::TooLarge { size_limit: 7 }
            .to_string()
            .starts_with("compiles to more than 7 bytes"));
    }
}
