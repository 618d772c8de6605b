//! Kubernetes label selectors (`matchLabels` and `matchExpressions`), as a
//! webhook's `objectSelector` and `namespaceSelector` apply them
//! (k8s.io/apimachinery `pkg/apis/meta/v1/helpers.go`,
//! `LabelSelectorAsSelector`; `pkg/labels/selector.go`, `Requirement.Matches`:
//! `NotIn` and `DoesNotExist` match an absent key).

use std::collections::BTreeMap;

use anyhow::{bail, Result};
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    #[serde(default)]
    pub match_labels: BTreeMap<String, String>,
    #[serde(default)]
    pub match_expressions: Vec<Requirement>,
}

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Requirement {
    pub key: String,
    pub operator: String,
    #[serde(default)]
    pub values: Vec<String>,
}

pub type Labels = BTreeMap<String, String>;

impl LabelSelector {
    pub fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.match_expressions.is_empty()
    }

    /// The keys the selector reads.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.match_labels
            .keys()
            .map(String::as_str)
            .chain(self.match_expressions.iter().map(|r| r.key.as_str()))
    }

    /// Refuses operators and value counts kube-apiserver would refuse.
    pub fn check(&self) -> Result<()> {
        for r in &self.match_expressions {
            match (r.operator.as_str(), r.values.is_empty()) {
                ("In" | "NotIn", false) | ("Exists" | "DoesNotExist", true) => {}
                ("In" | "NotIn", true) => {
                    bail!("operator {} on {} needs values", r.operator, r.key)
                }
                ("Exists" | "DoesNotExist", false) => {
                    bail!("operator {} on {} takes no values", r.operator, r.key)
                }
                (other, _) => bail!("{other:?} is not a label selector operator"),
            }
        }
        Ok(())
    }

    pub fn matches(&self, labels: &Labels) -> bool {
        self.match_labels
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|r| {
                let value = labels.get(&r.key);
                match r.operator.as_str() {
                    "In" => value.is_some_and(|v| r.values.contains(v)),
                    "NotIn" => value.is_none_or(|v| !r.values.contains(v)),
                    "Exists" => value.is_some(),
                    "DoesNotExist" => value.is_none(),
                    _ => false,
                }
            })
    }
}

/// An object's `metadata.labels` (string values only, as the API server stores them).
pub fn labels_of(object: &Value) -> Labels {
    object
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operators_match_as_kubernetes_does() {
        let selector: LabelSelector = serde_json::from_value(serde_json::json!({
            "matchLabels": {"team": "a"},
            "matchExpressions": [
                {"key": "env", "operator": "NotIn", "values": ["prod"]},
                {"key": "skip", "operator": "DoesNotExist"}
            ]
        }))
        .unwrap();
        selector.check().unwrap();
        let labels = |pairs: &[(&str, &str)]| -> Labels {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert!(selector.matches(&labels(&[("team", "a")])));
        assert!(selector.matches(&labels(&[("team", "a"), ("env", "dev")])));
        assert!(!selector.matches(&labels(&[("team", "a"), ("env", "prod")])));
        assert!(!selector.matches(&labels(&[("team", "a"), ("skip", "")])));
        assert!(!selector.matches(&labels(&[("team", "b")])));
    }
}
