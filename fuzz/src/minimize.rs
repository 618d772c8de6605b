//! Greedy minimization over a JSON tree: drop object members and array
//! elements (in halves first, then one by one), hoist a child in place of
//! its parent, replace subtrees by `null`, `""`, `0`, `{}` or `[]`, halve
//! strings (then cut quarters, eighths, sixteenths); keep each change after
//! which the failure still reproduces.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::tree::{self, Path, Seg};

/// How much work a minimization may do.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub attempts: usize,
    pub time: Duration,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            attempts: 4000,
            time: Duration::from_secs(60),
        }
    }
}

/// What a minimization did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    pub attempts: usize,
    pub accepted: usize,
    pub exhausted: bool,
}

struct Search<'p> {
    still_fails: &'p mut dyn FnMut(&Value) -> bool,
    budget: Budget,
    start: Instant,
    stats: Stats,
}

impl Search<'_> {
    fn out_of_budget(&mut self) -> bool {
        if self.stats.attempts >= self.budget.attempts || self.start.elapsed() >= self.budget.time {
            self.stats.exhausted = true;
        }
        self.stats.exhausted
    }

    /// Tries `candidate` in place of the node at `path`; keeps it if the
    /// failure reproduces.
    fn attempt(&mut self, doc: &mut Value, path: &[Seg], candidate: Value) -> bool {
        if self.out_of_budget() {
            return false;
        }
        let mut trial = doc.clone();
        match tree::get_mut(&mut trial, path) {
            Some(node) if *node != candidate => *node = candidate,
            _ => return false,
        }
        self.stats.attempts += 1;
        if (self.still_fails)(&trial) {
            *doc = trial;
            self.stats.accepted += 1;
            true
        } else {
            false
        }
    }

    /// One pass over every node; true when something was removed or simplified.
    fn pass(&mut self, doc: &mut Value) -> bool {
        let mut changed = false;
        let mut stack: Vec<Path> = vec![Vec::new()];
        while let Some(path) = stack.pop() {
            if self.out_of_budget() {
                break;
            }
            let Some(node) = tree::get(doc, &path).cloned() else {
                continue;
            };
            changed |= self.simplify(doc, &path, &node);
            // Children, first child on top.
            if let Some(node) = tree::get(doc, &path) {
                let children: Vec<Seg> = match node {
                    Value::Object(m) => m.keys().map(|k| Seg::Key(k.clone())).collect(),
                    Value::Array(a) => (0..a.len()).map(Seg::Index).collect(),
                    _ => Vec::new(),
                };
                for seg in children.into_iter().rev() {
                    let mut child = path.clone();
                    child.push(seg);
                    stack.push(child);
                }
            }
        }
        changed
    }

    fn simplify(&mut self, doc: &mut Value, path: &[Seg], node: &Value) -> bool {
        let mut changed = false;
        // A simpler value altogether.
        let simpler: &[Value] = match node {
            Value::Object(m) if !m.is_empty() => &[Value::Null, Value::Object(Default::default())],
            Value::Array(a) if !a.is_empty() => &[Value::Null, Value::Array(Vec::new())],
            Value::String(s) if !s.is_empty() => &[Value::Null, Value::String(String::new())],
            Value::Number(n) if n.as_f64() != Some(0.0) => &[Value::Null, Value::from(0)],
            Value::Bool(_) => &[Value::Null],
            _ => &[],
        };
        for candidate in simpler {
            if self.attempt(doc, path, candidate.clone()) {
                return true;
            }
        }
        // A child in place of its parent (undoes deep nesting quickly).
        let children: Vec<Value> = match node {
            Value::Object(m) => m
                .values()
                .filter(|v| v.is_object() || v.is_array())
                .cloned()
                .collect(),
            Value::Array(a) => a
                .iter()
                .filter(|v| v.is_object() || v.is_array())
                .take(4)
                .cloned()
                .collect(),
            _ => Vec::new(),
        };
        for child in children.into_iter().take(4) {
            if self.attempt(doc, path, child) {
                return true;
            }
        }
        match node {
            Value::Object(_) => changed |= self.drop_members(doc, path),
            Value::Array(_) => changed |= self.drop_elements(doc, path),
            Value::String(_) => changed |= self.shorten(doc, path),
            _ => {}
        }
        changed
    }

    /// Removes object members: halves, quarters... then one at a time.
    fn drop_members(&mut self, doc: &mut Value, path: &[Seg]) -> bool {
        let mut changed = false;
        let Some(Value::Object(m)) = tree::get(doc, path) else {
            return false;
        };
        let mut chunk = m.len().div_ceil(2).max(1);
        loop {
            let mut start = 0;
            loop {
                let Some(Value::Object(m)) = tree::get(doc, path) else {
                    return changed;
                };
                if start >= m.len() || self.out_of_budget() {
                    break;
                }
                let mut smaller = m.clone();
                let drop: Vec<String> = m.keys().skip(start).take(chunk).cloned().collect();
                for k in &drop {
                    smaller.remove(k);
                }
                if self.attempt(doc, path, Value::Object(smaller)) {
                    changed = true;
                } else {
                    start += chunk;
                }
            }
            if chunk == 1 || self.out_of_budget() {
                return changed;
            }
            chunk = chunk.div_ceil(2);
        }
    }

    fn drop_elements(&mut self, doc: &mut Value, path: &[Seg]) -> bool {
        let mut changed = false;
        let Some(Value::Array(a)) = tree::get(doc, path) else {
            return false;
        };
        let mut chunk = a.len().div_ceil(2).max(1);
        loop {
            let mut start = 0;
            loop {
                let Some(Value::Array(a)) = tree::get(doc, path) else {
                    return changed;
                };
                if start >= a.len() || self.out_of_budget() {
                    break;
                }
                let end = (start + chunk).min(a.len());
                let mut smaller = a.clone();
                smaller.drain(start..end);
                if self.attempt(doc, path, Value::Array(smaller)) {
                    changed = true;
                } else {
                    start += chunk;
                }
            }
            if chunk == 1 || self.out_of_budget() {
                return changed;
            }
            chunk = chunk.div_ceil(2);
        }
    }

    /// Halves a string, keeping its first half, then its last half.
    fn shorten(&mut self, doc: &mut Value, path: &[Seg]) -> bool {
        let mut changed = false;
        // Cut half, then a quarter, an eighth, a sixteenth: a failure that
        // needs a long string (a message over a bound) ends up just long enough.
        let mut divisor = 2;
        while divisor <= 16 {
            let Some(Value::String(s)) = tree::get(doc, path) else {
                return changed;
            };
            let cut = s.len() / divisor;
            if cut == 0 || s.chars().count() <= 1 {
                return changed;
            }
            let mut keep = s.len() - cut;
            while !s.is_char_boundary(keep) {
                keep += 1;
            }
            let mut drop_head = cut;
            while !s.is_char_boundary(drop_head) {
                drop_head += 1;
            }
            let head = s.get(..keep).unwrap_or("").to_string();
            let tail = s.get(drop_head..).unwrap_or("").to_string();
            if self.attempt(doc, path, Value::String(head))
                || self.attempt(doc, path, Value::String(tail))
            {
                changed = true;
            } else {
                divisor *= 2;
            }
        }
        changed
    }
}

/// Shrinks `doc` while `still_fails` holds (it must hold for `doc` itself).
pub fn minimize(
    doc: &Value,
    budget: Budget,
    still_fails: &mut dyn FnMut(&Value) -> bool,
) -> (Value, Stats) {
    let mut search = Search {
        still_fails,
        budget,
        start: Instant::now(),
        stats: Stats::default(),
    };
    let mut doc = doc.clone();
    while search.pass(&mut doc) {
        if search.out_of_budget() {
            break;
        }
    }
    (doc, search.stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn contains_key(v: &Value, key: &str) -> bool {
        match v {
            Value::Object(m) => m.contains_key(key) || m.values().any(|x| contains_key(x, key)),
            Value::Array(a) => a.iter().any(|x| contains_key(x, key)),
            _ => false,
        }
    }

    fn longest_x_run(v: &Value) -> usize {
        match v {
            Value::String(s) => s.split(|c| c != 'x').map(str::len).max().unwrap_or(0),
            Value::Object(m) => m.values().map(longest_x_run).max().unwrap_or(0),
            Value::Array(a) => a.iter().map(longest_x_run).max().unwrap_or(0),
            _ => 0,
        }
    }

    #[test]
    fn shrinks_to_the_one_member_that_matters() {
        let many: serde_json::Map<String, Value> =
            (0..300).map(|i| (format!("k{i}"), json!(i))).collect();
        let doc = json!({
            "request": {"object": {"metadata": {"annotations": many, "name": "x"}, "spec": [1, 2, 3]},
                        "uid": "123"},
            "settings": {"a": [1, {"b": {"needle": "hay stack with a long text"}}]}
        });
        let mut calls = 0;
        let (min, stats) = minimize(&doc, Budget::default(), &mut |v| {
            calls += 1;
            contains_key(v, "needle")
        });
        assert_eq!(min, json!({"needle": null}));
        assert_eq!(stats.attempts, calls);
        assert!(!stats.exhausted);
    }

    #[test]
    fn keeps_what_the_failure_needs_and_halves_strings() {
        // Fails while some string holds 100 or more x in a row and the
        // document is an object with a `uid`.
        let doc = json!({
            "uid": "u",
            "object": {"deep": [[[[[{"reason": format!("pre{}post", "x".repeat(5000))}]]]]]},
            "other": "y".repeat(1000)
        });
        let fails = |v: &Value| v.get("uid").is_some() && longest_x_run(v) >= 100;
        let (min, _) = minimize(&doc, Budget::default(), &mut |v| fails(v));
        assert!(fails(&min));
        assert!(min.get("other").is_none());
        let run = longest_x_run(&min);
        assert!(
            (100..=125).contains(&run),
            "a string of {run} x is not minimal"
        );
        assert!(tree::size(&min) < 300, "{min}");
    }

    #[test]
    fn respects_the_attempt_budget() {
        let doc = json!((0..1000).map(|i| json!({"i": i})).collect::<Vec<_>>());
        let budget = Budget {
            attempts: 10,
            time: Duration::from_secs(60),
        };
        let (_, stats) = minimize(&doc, budget, &mut |_| false);
        assert_eq!(stats.attempts, 10);
        assert!(stats.exhausted);
    }
}
