//! Flux's `postBuild` variable substitution, as kustomize-controller runs it
//! on every built object (fluxcd/pkg e2cfd1a2, `kustomize/kustomize_varsub.go`,
//! `SubstituteVariables`, `LoadVariables`, `varSubstitution`; the expansion is
//! `envsubst/template.go`, `Execute` and `lookupFunc`, and
//! `envsubst/parse/scan.go`).
//!
//! What is reproduced: `${VAR}`, the default forms `${VAR:=x}`, `${VAR:-x}`,
//! `${VAR=x}`, `${VAR-x}` (kustomize-controller's non-strict mapper answers an
//! unset variable as empty, and every default operator is `toDefault`: the
//! default when the value is empty), `$${` as a literal `${`, `$VAR`
//! without braces left alone (the scanner only opens at `${`), the length
//! `${#VAR}`, and any other operator on an empty value (each of those
//! functions gives the empty string for it). Any other operator on a value
//! is refused by name rather than guessed.

use anyhow::{bail, Context as _, Result};
use serde_json::Value;
use std::collections::BTreeMap;

/// kustomize-controller skips an object labelled or annotated with this
/// key set to `disabled`.
const DISABLE_KEY: &str = guard_core::model::keys::SUBSTITUTE;

/// Substitutes `vars` in `object`, as kustomize-controller does: on the
/// object's YAML, which is then read back (a substituted `true` becomes a
/// boolean, as in Flux). `always` is `postBuild.substituteStrategy: Always`
/// (without it and without variables nothing is substituted).
pub fn substitute(object: &Value, vars: &BTreeMap<String, String>, always: bool) -> Result<Value> {
    let disabled = |field: &str| {
        object
            .pointer(&format!("/metadata/{field}"))
            .and_then(|m| m.get(DISABLE_KEY))
            .and_then(Value::as_str)
            == Some("disabled")
    };
    if disabled("labels") || disabled("annotations") || (vars.is_empty() && !always) {
        return Ok(object.clone());
    }
    for name in vars.keys() {
        let mut chars = name.chars();
        let valid = chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
            && chars.all(|c| c == '_' || c.is_alphanumeric());
        if !valid {
            bail!(
                "'{name}' var name is invalid, must match '^[_[:alpha:]][_[:alpha:][:digit:]]*$'"
            );
        }
    }
    let text = serde_norway::to_string(object).context("cannot write the object as YAML")?;
    let text = expand(&text, vars)?;
    let value: serde_norway::Value =
        serde_norway::from_str(&text).context("the substituted object is not valid YAML")?;
    serde_json::to_value(value).context("the substituted object is not valid JSON")
}

/// Expands `${…}` in `text`.
pub fn expand(text: &str, vars: &BTreeMap<String, String>) -> Result<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(rest.get(..at).unwrap_or_default());
        let after = rest.get(at..).unwrap_or_default();
        if let Some(tail) = after.strip_prefix("$${") {
            // `$$` escapes the dollar.
            out.push_str("${");
            rest = tail;
        } else if let Some(tail) = after.strip_prefix("${") {
            let end = closing(tail).with_context(|| {
                format!(
                    "missing closing brace in '${{{}'",
                    tail.lines().next().unwrap_or("")
                )
            })?;
            let body = tail.get(..end).unwrap_or_default();
            out.push_str(&evaluate(body, vars)?);
            rest = tail.get(end + 1..).unwrap_or_default();
        } else {
            out.push('$');
            rest = after.get(1..).unwrap_or_default();
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// Where the `}` that closes a `${` is, nested `${…}` included.
fn closing(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                depth += 1;
                i += 1;
            }
            b'}' if depth == 0 => return Some(i),
            b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

fn evaluate(body: &str, vars: &BTreeMap<String, String>) -> Result<String> {
    // `${#VAR}`: the length (`toLen`).
    if let Some(name) = body.strip_prefix('#') {
        if name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return Ok(vars.get(name).map_or(0, String::len).to_string());
        }
    }
    let name_end = body
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(body.len());
    let (name, op) = body.split_at(name_end);
    let value = vars.get(name).cloned().unwrap_or_default();
    if op.is_empty() {
        return Ok(value);
    }
    for operator in [":=", ":-", "=", "-"] {
        if let Some(default) = op.strip_prefix(operator) {
            return Ok(if value.is_empty() {
                expand(default, vars)?
            } else {
                value
            });
        }
    }
    // Every other operator (`toSubstr`, the case, trim and replace
    // functions) makes nothing of an empty value: such text in a manifest,
    // like the `${var:position}` of Flux's own CRD descriptions, expands to
    // nothing, as kustomize-controller expands it.
    if value.is_empty() {
        return Ok(String::new());
    }
    bail!("variable substitution '${{{body}}}': this form of Flux's envsubst is not reproduced by check (only ${{VAR}} and the defaults :=, :-, =, -)")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_apply_to_unset_and_empty_variables() {
        let v = vars(&[("CLUSTER", "prod"), ("EMPTY", "")]);
        assert_eq!(
            expand(
                "a ${CLUSTER} ${MISSING:=x} ${EMPTY:-y} ${UNSET} $HOME $${KEEP}",
                &v
            )
            .unwrap(),
            "a prod x y  $HOME ${KEEP}"
        );
        assert_eq!(expand("${A:=${CLUSTER}-1}", &v).unwrap(), "prod-1");
        assert!(expand("${CLUSTER^^}", &v).is_err());
        assert_eq!(expand("${var:position} ${#CLUSTER}", &v).unwrap(), " 4");
        assert!(expand("${CLUSTER", &v).is_err());
    }

    #[test]
    fn objects_are_substituted_as_yaml_unless_disabled() {
        let object = serde_json::json!({"metadata": {"name": "${N:=a}"}, "spec": {"on": "${ON}"}});
        let out = substitute(&object, &vars(&[("ON", "true")]), false).unwrap();
        assert_eq!(
            out,
            serde_json::json!({"metadata": {"name": "a"}, "spec": {"on": true}})
        );
        // Without variables and without `Always`, nothing is substituted.
        assert_eq!(substitute(&object, &vars(&[]), false).unwrap(), object);
        let disabled = serde_json::json!({"metadata": {"name": "${N}",
            "labels": {"kustomize.toolkit.fluxcd.io/substitute": "disabled"}}});
        assert_eq!(
            substitute(&disabled, &vars(&[("N", "x")]), false).unwrap(),
            disabled
        );
    }
}
