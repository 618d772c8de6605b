//! Kubernetes label selectors (`matchLabels` and `matchExpressions`), as
//! settings write them and as the API server evaluates them.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::request::null_default;
// The operator is defined with the settings errors that name it, so that settings
// does not import this module.
pub use crate::settings::SelectorOperator;
use crate::settings::{Invalid, Why};
use crate::string_map::StringMap;

#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LabelSelector {
    #[serde(default, deserialize_with = "null_default")]
    pub match_labels: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "null_default")]
    pub match_expressions: Vec<Requirement>,
}

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    pub key: String,
    pub operator: SelectorOperator,
    #[serde(default, deserialize_with = "null_default")]
    pub values: Vec<String>,
}

impl LabelSelector {
    /// An empty selector selects everything, as in Kubernetes.
    pub fn matches(&self, labels: &StringMap) -> bool {
        self.match_labels
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v.as_str()))
            && self.match_expressions.iter().all(|r| {
                let value = labels.get(&r.key);
                match r.operator {
                    SelectorOperator::In => value.is_some_and(|v| r.values.iter().any(|x| x == v)),
                    SelectorOperator::NotIn => {
                        value.is_none_or(|v| !r.values.iter().any(|x| x == v))
                    }
                    SelectorOperator::Exists => value.is_some(),
                    SelectorOperator::DoesNotExist => value.is_none(),
                }
            })
    }

    /// The API server's rules: `In`/`NotIn` need values, `Exists`/`DoesNotExist` none.
    pub fn validate(&self, setting: &str) -> Result<(), Invalid> {
        match self
            .match_expressions
            .iter()
            .find(|r| r.operator.takes_values() == r.values.is_empty())
        {
            Some(r) => Err(Invalid {
                setting: format!("{setting}.matchExpressions"),
                why: Why::SelectorValues {
                    key: r.key.clone(),
                    operator: r.operator,
                },
            }),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> StringMap {
        pairs.iter().copied().collect()
    }

    #[test]
    fn matching() {
        let sel: LabelSelector = serde_json::from_str(
            r#"{"matchLabels":{"tier":"db"},"matchExpressions":[
                {"key":"env","operator":"In","values":["prod","staging"]},
                {"key":"legacy","operator":"DoesNotExist"}]}"#,
        )
        .unwrap();
        assert!(sel.matches(&labels(&[("tier", "db"), ("env", "prod")])));
        assert!(!sel.matches(&labels(&[("tier", "db"), ("env", "dev")])));
        assert!(!sel.matches(&labels(&[("tier", "db"), ("env", "prod"), ("legacy", "")])));
        assert!(LabelSelector::default().matches(&labels(&[])));
    }

    #[test]
    fn validation() {
        let sel: LabelSelector =
            serde_json::from_str(r#"{"matchExpressions":[{"key":"a","operator":"In"}]}"#).unwrap();
        assert_eq!(
            sel.validate("protect.labelSelector")
                .unwrap_err()
                .to_string(),
            "protect.labelSelector.matchExpressions: key \"a\" with operator In needs values"
        );
        let sel: LabelSelector = serde_json::from_str(
            r#"{"matchExpressions":[{"key":"a","operator":"Exists","values":["x"]}]}"#,
        )
        .unwrap();
        assert!(sel
            .validate("s")
            .unwrap_err()
            .to_string()
            .ends_with("with operator Exists takes no values"));
        assert!(serde_json::from_str::<LabelSelector>(r#"{"matchLabel":{}}"#).is_err());
    }
}
