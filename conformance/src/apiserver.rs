//! What kube-apiserver does with an admission webhook's warnings before the
//! client sees them.
//!
//! The webhook dispatchers hand each warning to the request's warning
//! recorder (kubernetes/apiserver `pkg/admission/plugin/webhook/validating/
//! dispatcher.go` and `.../mutating/dispatcher.go`, `warning.AddWarning`),
//! which (`pkg/endpoints/filters/warning.go`, `recorder.AddWarning`, at
//! kubernetes/apiserver 24a394e5):
//! - ignores an empty text and a text it has already recorded;
//! - drops a text that `net.NewWarningHeader` refuses: not valid UTF-8, or
//!   holding a control character (k8s.io/apimachinery eed236ce,
//!   `pkg/util/net/http.go`, `NewWarningHeader`, Go's `unicode.IsControl`:
//!   U+0000..U+001F, U+007F..U+009F), a newline included;
//! - once the texts' total passes 4096 runes, cuts every text, earlier ones
//!   included, to its first 256 runes.

/// Each way `warnings` would not reach the user as written; empty when all do.
pub fn warning_problems(warnings: &[String]) -> Vec<String> {
    const TOTAL_RUNES: usize = 4 * 1024;
    const ITEM_RUNES: usize = 256;
    let mut problems = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut total = 0usize;
    let mut kept = Vec::new();
    for w in warnings {
        if w.is_empty() {
            problems.push("an empty warning is ignored by kube-apiserver".to_string());
            continue;
        }
        if !seen.insert(w.as_str()) {
            problems.push(format!(
                "warning {w:?} is a duplicate, which kube-apiserver drops"
            ));
            continue;
        }
        if let Some(c) = w.chars().find(|c| c.is_control()) {
            problems.push(format!(
                "warning {w:?} holds the control character {c:?}, so kube-apiserver drops it"
            ));
            continue;
        }
        total = total.saturating_add(w.chars().count());
        kept.push(w);
    }
    if total > TOTAL_RUNES {
        for w in kept {
            if w.chars().count() > ITEM_RUNES {
                problems.push(format!(
                    "the warnings total {total} runes (over {TOTAL_RUNES}), so kube-apiserver \
                     cuts this one to {ITEM_RUNES}: {w:?}"
                ));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn single_line_warnings_arrive() {
        assert!(warning_problems(&strings(&["one", "two: é ✓"])).is_empty());
    }

    #[test]
    fn control_characters_empty_and_duplicate_texts_are_dropped() {
        let p = warning_problems(&strings(&["a\nb", "tab\there", "", "x", "x", "c1\u{85}"]));
        assert_eq!(p.len(), 5, "{p:?}");
    }

    #[test]
    fn long_texts_are_cut_once_the_total_passes_4096_runes() {
        let long = "é".repeat(300);
        let under: Vec<String> = (0..13).map(|i| format!("{i}{long}")).collect();
        assert!(warning_problems(&under).is_empty(), "13 x 301 runes fit");
        let over: Vec<String> = (0..14).map(|i| format!("{i}{long}")).collect();
        assert_eq!(warning_problems(&over).len(), 14);
        let short: Vec<String> = (0..20).map(|i| format!("{i}{}", "a".repeat(250))).collect();
        assert!(
            warning_problems(&short).is_empty(),
            "cut to 256, texts of 251 or 252 runes stay whole"
        );
    }
}
