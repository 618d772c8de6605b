//! The settings' `bindings`, compiled: which requests each matches and the
//! gates it names ([`GateRef`]).

use guard_core::identity::Identities;
use guard_core::names::{self, NameError};
use guard_core::selector::LabelSelector;
use guard_core::{GroupKind, Operation, StringMap};

use crate::flux_owner::FluxOwnerKind;
use crate::gate::DeclaredGate;
use crate::gating::{GATE_KIND, GATING_GROUP};

use super::{name_error, BindingSettings, KindSettings, OwnerSettings, Rule, SettingsError};

/// The refusal of the entry at `at` by `rule`.
fn broken(at: &str, rule: Rule) -> Box<SettingsError> {
    Box::new(SettingsError::Rule {
        at: at.to_string(),
        rule,
    })
}

/// A gate by reference: one declared in settings, or a Gate object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateRef {
    Declared(usize),
    Object { namespace: String, name: String },
}

/// A reference that names no gate: the text (trimmed), and why its name,
/// or its namespace (`in_namespace`), is not one. Its words are in `render`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefError {
    pub text: String,
    pub in_namespace: bool,
    pub why: NameError,
}

/// `name` refers to a declared gate when one has that name; `[namespace/]name`
/// otherwise refers to a Gate object.
pub fn parse_ref(
    text: &str,
    declared: &[DeclaredGate],
    gate_namespace: &str,
) -> Result<GateRef, RefError> {
    let text = text.trim();
    let (namespace, name) = match text.split_once('/') {
        Some((ns, name)) => (Some(ns), name),
        None => (None, text),
    };
    let bad = |in_namespace, why| RefError {
        text: text.to_string(),
        in_namespace,
        why,
    };
    names::check_dns1123_subdomain(name).map_err(|why| bad(false, why))?;
    match namespace {
        None => Ok(match declared.iter().position(|g| g.name == name) {
            Some(i) => GateRef::Declared(i),
            None => GateRef::Object {
                namespace: gate_namespace.to_string(),
                name: name.to_string(),
            },
        }),
        Some(ns) => {
            names::check_dns1123_label(ns).map_err(|why| bad(true, why))?;
            Ok(GateRef::Object {
                namespace: ns.to_string(),
                name: name.to_string(),
            })
        }
    }
}

/// Flux objects whose applied objects a binding selects; an empty
/// namespace or name stands for any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FluxOwner {
    pub kind: FluxOwnerKind,
    pub namespace: String,
    pub name: String,
}

impl FluxOwner {
    pub fn matches(&self, labels: &StringMap) -> bool {
        self.kind.owner_of(labels).is_some_and(|(ns, name)| {
            (self.namespace.is_empty() || self.namespace == ns)
                && (self.name.is_empty() || self.name == name)
        })
    }
}

/// One entry of the settings' `bindings`, compiled: the requests it
/// matches, and the gates that hold them.
#[derive(Debug)]
pub struct Binding {
    pub gates: Vec<GateRef>,
    /// Empty: every kind.
    pub kinds: Vec<GroupKind>,
    /// Empty: every namespace.
    pub namespaces: Vec<String>,
    pub selector: LabelSelector,
    pub operations: Vec<Operation>,
    /// Empty: anyone.
    pub requested_by: Identities,
    /// Empty: any object, applied by Flux or not.
    pub applied_by: Vec<FluxOwner>,
}

pub(super) fn compile_binding(
    path: &str,
    b: &BindingSettings,
    gates: &[DeclaredGate],
    gate_namespace: &str,
) -> Result<Binding, Box<SettingsError>> {
    if b.gates.is_empty() {
        return Err(broken(path, Rule::NoGates));
    }
    let refs = b
        .gates
        .iter()
        .enumerate()
        .map(|(i, g)| {
            parse_ref(g, gates, gate_namespace).map_err(|error| {
                Box::new(SettingsError::GateRef {
                    setting: format!("{path}.gates[{i}]"),
                    error,
                })
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let m = &b.matches;
    let kinds = m
        .kinds
        .iter()
        .enumerate()
        .map(|(i, k)| compile_kind(&format!("{path}.match.kinds[{i}]"), k))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, ns) in m.namespaces.iter().enumerate() {
        names::check_dns1123_label(ns)
            .map_err(|why| name_error(format!("{path}.match.namespaces[{i}]"), ns, why))?;
    }
    m.label_selector
        .validate(&format!("{path}.match.labelSelector"))?;
    let operations = compile_operations(path, &m.operations)?;
    m.requested_by
        .validate(&format!("{path}.match.requestedBy"))?;
    let applied_by = m
        .applied_by
        .iter()
        .enumerate()
        .map(|(i, o)| compile_owner(&format!("{path}.match.appliedBy[{i}]"), o))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Binding {
        gates: refs,
        kinds,
        namespaces: m.namespaces.clone(),
        selector: m.label_selector.clone(),
        operations,
        requested_by: m.requested_by.clone(),
        applied_by,
    })
}

fn compile_kind(at: &str, k: &KindSettings) -> Result<GroupKind, Box<SettingsError>> {
    if k.kind.is_empty() {
        return Err(broken(at, Rule::KindRequired));
    }
    if k.group == GATING_GROUP && k.kind == GATE_KIND {
        return Err(broken(at, Rule::GateKind));
    }
    Ok(GroupKind::new(&k.group, &k.kind))
}

/// The operations a binding matches; none listed: every write.
fn compile_operations(
    path: &str,
    operations: &[Operation],
) -> Result<Vec<Operation>, Box<SettingsError>> {
    if operations.is_empty() {
        return Ok(vec![
            Operation::Create,
            Operation::Update,
            Operation::Delete,
        ]);
    }
    operations
        .iter()
        .enumerate()
        .map(|(i, op)| match op {
            Operation::Create | Operation::Update | Operation::Delete => Ok(*op),
            Operation::Connect => Err(broken(
                &format!("{path}.match.operations[{i}]"),
                Rule::Connect,
            )),
        })
        .collect()
}

fn compile_owner(at: &str, o: &OwnerSettings) -> Result<FluxOwner, Box<SettingsError>> {
    let kind = o.kind.ok_or_else(|| broken(at, Rule::OwnerKindRequired))?;
    if !o.namespace.is_empty() {
        names::check_dns1123_label(&o.namespace)
            .map_err(|why| name_error(format!("{at}.namespace"), &o.namespace, why))?;
    }
    if !o.name.is_empty() {
        names::check_dns1123_subdomain(&o.name)
            .map_err(|why| name_error(format!("{at}.name"), &o.name, why))?;
    }
    Ok(FluxOwner {
        kind,
        namespace: o.namespace.clone(),
        name: o.name.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::tests::no_deploy_friday;
    use crate::test_support::{assert_errors, binding_doc};

    #[test]
    fn refs() {
        let declared = [no_deploy_friday("UTC")];
        assert_eq!(
            parse_ref("no-deploy-friday", &declared, "flux-system"),
            Ok(GateRef::Declared(0))
        );
        assert_eq!(
            parse_ref(" sre-approval ", &declared, "flux-system"),
            Ok(GateRef::Object {
                namespace: "flux-system".into(),
                name: "sre-approval".into()
            })
        );
        assert_eq!(
            parse_ref("qa/no-deploy-friday", &declared, "flux-system"),
            Ok(GateRef::Object {
                namespace: "qa".into(),
                name: "no-deploy-friday".into()
            })
        );
        assert!(parse_ref("a/b/c", &declared, "x")
            .unwrap_err()
            .to_string()
            .starts_with("\"a/b/c\" is not a gate name: "));
        assert_eq!(
            parse_ref("Qa/x", &declared, "x").unwrap_err(),
            RefError {
                text: "Qa/x".into(),
                in_namespace: true,
                why: names::NameError::Ends { lower: true }
            }
        );
        assert_eq!(
            parse_ref("Qa/x", &declared, "x").unwrap_err().to_string(),
            "\"Qa/x\" is not a gate name: namespace must begin and end with a lower-case \
             letter or digit; write name or namespace/name"
        );
        assert!(parse_ref("", &declared, "x")
            .unwrap_err()
            .to_string()
            .contains("must not be empty"));
    }

    #[test]
    fn every_binding_error_names_the_setting_and_the_accepted_values() {
        #[rustfmt::skip]
        let cases: Vec<(String, &str)> = vec![
            (r#"{"bindings":[{"gates":[]}]}"#.into(), "bindings[0].gates: name at least one gate"),
            (r#"{"bindings":[{"gates":["a/b/c"]}]}"#.into(), "bindings[0].gates[0]: \"a/b/c\""),
            (r#"{"bindings":[{"gates":["Bad_Name"]}]}"#.into(), "bindings[0].gates[0]: \"Bad_Name\""),
            (binding_doc(r#""match":{"kinds":[{"group":"x"}]}"#), "bindings[0].match.kinds[0].kind: required"),
            (binding_doc(r#""match":{"kinds":[{"group":"gating.toolkit.fluxcd.io","kind":"Gate"}]}"#), "bindings[0].match.kinds[0]: Gate objects are never held"),
            (binding_doc(r#""match":{"namespaces":["Flux"]}"#), "bindings[0].match.namespaces[0]: \"Flux\""),
            (binding_doc(r#""match":{"operations":["PATCH"]}"#), "bindings[0].match.operations[0]: unknown variant `PATCH`, expected one of `CREATE`, `UPDATE`, `DELETE`"),
            (binding_doc(r#""match":{"operations":["CONNECT"]}"#), "bindings[0].match.operations[0]: CONNECT never writes an object; use CREATE, UPDATE or DELETE"),
            (binding_doc(r#""match":{"labelSelector":{"matchExpressions":[{"key":"a","operator":"In"}]}}"#), "bindings[0].match.labelSelector.matchExpressions: key \"a\""),
        ];
        assert_errors(cases);
    }
}
