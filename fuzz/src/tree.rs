//! Paths into a JSON tree, and the few edits the mutator and the minimizer make.

use serde_json::Value;

use guard_core::testing::Rng;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

pub type Path = Vec<Seg>;

pub fn get<'a>(mut v: &'a Value, path: &[Seg]) -> Option<&'a Value> {
    for seg in path {
        v = match (seg, v) {
            (Seg::Key(k), Value::Object(m)) => m.get(k)?,
            (Seg::Index(i), Value::Array(a)) => a.get(*i)?,
            _ => return None,
        };
    }
    Some(v)
}

pub fn get_mut<'a>(mut v: &'a mut Value, path: &[Seg]) -> Option<&'a mut Value> {
    for seg in path {
        v = match (seg, v) {
            (Seg::Key(k), Value::Object(m)) => m.get_mut(k)?,
            (Seg::Index(i), Value::Array(a)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(v)
}

/// Removes the member or element at `path`; false when there is none (or
/// `path` is the root).
pub fn remove(v: &mut Value, path: &[Seg]) -> bool {
    let Some((last, parent)) = path.split_last() else {
        return false;
    };
    match (last, get_mut(v, parent)) {
        (Seg::Key(k), Some(Value::Object(m))) => m.remove(k).is_some(),
        (Seg::Index(i), Some(Value::Array(a))) if *i < a.len() => {
            a.remove(*i);
            true
        }
        _ => false,
    }
}

/// Number of nodes, the root included.
pub fn count(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(count).sum::<usize>(),
        Value::Object(m) => 1 + m.values().map(count).sum::<usize>(),
        _ => 1,
    }
}

/// The path of the `n`th node in pre-order (0 is the root).
pub fn nth_path(v: &Value, n: usize) -> Option<Path> {
    fn go(v: &Value, n: &mut usize, path: &mut Path) -> bool {
        if *n == 0 {
            return true;
        }
        *n -= 1;
        match v {
            Value::Array(a) => {
                for (i, item) in a.iter().enumerate() {
                    path.push(Seg::Index(i));
                    if go(item, n, path) {
                        return true;
                    }
                    path.pop();
                }
                false
            }
            Value::Object(m) => {
                for (k, item) in m {
                    path.push(Seg::Key(k.clone()));
                    if go(item, n, path) {
                        return true;
                    }
                    path.pop();
                }
                false
            }
            _ => false,
        }
    }
    let mut n = n;
    let mut path = Vec::new();
    go(v, &mut n, &mut path).then_some(path)
}

/// A node chosen uniformly among all nodes of `v`.
pub fn random_path(v: &Value, rng: &mut Rng) -> Path {
    nth_path(v, rng.below(count(v))).unwrap_or_default()
}

/// Paths of every node, pre-order, up to `limit` of them.
pub fn paths(v: &Value, limit: usize) -> Vec<Path> {
    fn go(v: &Value, path: &mut Path, out: &mut Vec<Path>, limit: usize) {
        if out.len() >= limit {
            return;
        }
        out.push(path.clone());
        match v {
            Value::Array(a) => {
                for (i, item) in a.iter().enumerate() {
                    path.push(Seg::Index(i));
                    go(item, path, out, limit);
                    path.pop();
                }
            }
            Value::Object(m) => {
                for (k, item) in m {
                    path.push(Seg::Key(k.clone()));
                    go(item, path, out, limit);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    go(v, &mut Vec::new(), &mut out, limit);
    out
}

/// The last member name on a path, if the node is an object member.
pub fn last_key(path: &[Seg]) -> Option<&str> {
    match path.last() {
        Some(Seg::Key(k)) => Some(k),
        _ => None,
    }
}

/// `/a/b/[]` form, for messages.
pub fn display(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        s.push('/');
        match seg {
            Seg::Key(k) => s.push_str(&k.replace('~', "~0").replace('/', "~1")),
            Seg::Index(i) => s.push_str(&i.to_string()),
        }
    }
    if s.is_empty() {
        s.push('/');
    }
    s
}

/// How deep serde_json's parser (policy-server's, the policies') reads:
/// a document with more nested arrays and objects fails to parse.
pub const PARSER_DEPTH_LIMIT: usize = 127;

/// Nesting depth: 0 for a scalar, 1 for a flat array or object.
pub fn depth(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(m) => 1 + m.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Serialized size of a value (an estimate good enough to compare subtrees).
pub fn size(v: &Value) -> usize {
    match v {
        Value::Null => 4,
        Value::Bool(_) => 5,
        Value::Number(n) => n.to_string().len(),
        Value::String(s) => s.len() + 2,
        Value::Array(a) => 2 + a.iter().map(|x| size(x) + 1).sum::<usize>(),
        Value::Object(m) => 2 + m.iter().map(|(k, x)| k.len() + 4 + size(x)).sum::<usize>(),
    }
}

/// Where most of a value's bytes are: descend while one child holds more
/// than half of its parent. Object member names that look generated (long,
/// or not plain identifier characters) and array indices are written `*`, so
/// that the same bug found through different inputs gets the same name;
/// sizes are left out for the same reason.
pub fn dominant_path(v: &Value) -> String {
    let mut out = String::new();
    let mut node = v;
    let mut depth = 0;
    loop {
        let total = size(node);
        let next = match node {
            Value::Object(m) => m
                .iter()
                .max_by_key(|(_, x)| size(x))
                .filter(|(_, x)| size(x) * 2 > total)
                .map(|(k, x)| (plain_key(k), x)),
            Value::Array(a) => a
                .iter()
                .max_by_key(|x| size(x))
                .filter(|x| size(x) * 2 > total)
                .map(|x| ("*".to_string(), x)),
            _ => None,
        };
        match next {
            Some((name, child)) if depth < 12 => {
                out.push('/');
                out.push_str(&name);
                node = child;
                depth += 1;
            }
            _ => break,
        }
    }
    let what = match node {
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::String(_) => "string",
        _ => "scalar",
    };
    if out.is_empty() {
        out.push('/');
    }
    format!("{out} ({what})")
}

fn plain_key(k: &str) -> String {
    let plain = k.len() <= 63
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./".contains(&b))
        && !k.bytes().any(|b| b.is_ascii_digit());
    if plain {
        k.to_string()
    } else {
        "*".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_get_and_remove() {
        let mut v = json!({"a": [1, {"b": 2}], "c": 3});
        assert_eq!(count(&v), 6);
        let all = paths(&v, 100);
        assert_eq!(all.len(), 6);
        let p = vec![Seg::Key("a".into()), Seg::Index(1), Seg::Key("b".into())];
        assert_eq!(get(&v, &p), Some(&json!(2)));
        assert_eq!(display(&p), "/a/1/b");
        assert!(remove(&mut v, &p));
        assert_eq!(v, json!({"a": [1, {}], "c": 3}));
        assert!(!remove(&mut v, &[]));
        assert_eq!(nth_path(&v, 0), Some(vec![]));
        assert_eq!(nth_path(&v, 99), None);
    }

    #[test]
    fn the_depth_limit_is_serde_jsons() {
        for n in 120..140 {
            for leaf in [json!(1), json!([]), json!({})] {
                let mut v = leaf.clone();
                for i in 0..n {
                    v = if i % 2 == 0 {
                        json!([v])
                    } else {
                        json!({ "a": v })
                    };
                }
                let text = serde_json::to_string(&v).unwrap();
                let parses = serde_json::from_str::<Value>(&text).is_ok();
                assert_eq!(
                    depth(&v) <= PARSER_DEPTH_LIMIT,
                    parses,
                    "{n} levels over {leaf}"
                );
            }
        }
    }

    #[test]
    fn dominant_path_names_the_big_part() {
        let many: serde_json::Map<String, Value> =
            (0..500).map(|i| (format!("k{i}"), json!("v"))).collect();
        let v = json!({"request": {"object": {"metadata": {"annotations": many}}, "uid": "x"}});
        assert_eq!(
            dominant_path(&v),
            "/request/object/metadata/annotations (object)"
        );
        let v = json!({"a": "x".repeat(5000), "b": 1});
        assert_eq!(dominant_path(&v), "/a (string)");
        assert_eq!(dominant_path(&json!({"a": 1, "b": 2})), "/ (object)");
    }
}
