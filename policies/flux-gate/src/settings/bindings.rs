//! The settings' `bindings`, compiled: which requests each matches and the
//! gates it names ([`GateRef`]).

use guard_core::identity::Identities;
use guard_core::names;
use guard_core::selector::LabelSelector;
use guard_core::{GroupKind, Operation, StringMap};

use crate::flux_owner::FluxOwnerKind;
use crate::gate::DeclaredGate;
use crate::gating::{GATE_KIND, GATING_GROUP};

use super::{BindingSettings, KindSettings, OwnerSettings};

/// A gate by reference: one declared in settings, or a Gate object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateRef {
    Declared(usize),
    Object { namespace: String, name: String },
}

/// `name` refers to a declared gate when one has that name; `[namespace/]name`
/// otherwise refers to a Gate object.
pub fn parse_ref(
    text: &str,
    declared: &[DeclaredGate],
    gate_namespace: &str,
) -> Result<GateRef, String> {
    let text = text.trim();
    let (namespace, name) = match text.split_once('/') {
        Some((ns, name)) => (Some(ns), name),
        None => (None, text),
    };
    let bad = |e: &dyn std::fmt::Display| {
        format!(
            "{} is not a gate name: {e}; write name or namespace/name",
            names::quote(text)
        )
    };
    names::check_dns1123_subdomain(name).map_err(|e| bad(&e))?;
    match namespace {
        None => Ok(match declared.iter().position(|g| g.name == name) {
            Some(i) => GateRef::Declared(i),
            None => GateRef::Object {
                namespace: gate_namespace.to_string(),
                name: name.to_string(),
            },
        }),
        Some(ns) => {
            names::check_dns1123_label(ns).map_err(|e| bad(&format_args!("namespace {e}")))?;
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
) -> Result<Binding, String> {
    if b.gates.is_empty() {
        return Err(format!("{path}.gates: name at least one gate"));
    }
    let refs = b
        .gates
        .iter()
        .enumerate()
        .map(|(i, g)| {
            parse_ref(g, gates, gate_namespace).map_err(|e| format!("{path}.gates[{i}]: {e}"))
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
            .map_err(|e| format!("{path}.match.namespaces[{i}]: {} {e}", names::quote(ns)))?;
    }
    m.label_selector
        .validate(&format!("{path}.match.labelSelector"))
        .map_err(|e| e.to_string())?;
    let operations = compile_operations(path, &m.operations)?;
    m.requested_by
        .validate(&format!("{path}.match.requestedBy"))
        .map_err(|e| e.to_string())?;
    let applied_by = m
        .applied_by
        .iter()
        .enumerate()
        .map(|(i, o)| compile_owner(&format!("{path}.match.appliedBy[{i}]"), o))
        .collect::<Result<Vec<_>, String>>()?;
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

fn compile_kind(at: &str, k: &KindSettings) -> Result<GroupKind, String> {
    if k.kind.is_empty() {
        return Err(format!(
            "{at}.kind: required, e.g. {{group: {}, kind: Kustomization}}",
            guard_core::model::kinds::KUSTOMIZE
        ));
    }
    if k.group == GATING_GROUP && k.kind == GATE_KIND {
        return Err(format!(
            "{at}: Gate objects are never held, so that a closed gate can always be opened"
        ));
    }
    Ok(GroupKind::new(&k.group, &k.kind))
}

/// The operations a binding matches; none listed: every write.
fn compile_operations(path: &str, operations: &[Operation]) -> Result<Vec<Operation>, String> {
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
            Operation::Connect => Err(format!(
                "{path}.match.operations[{i}]: CONNECT never writes an object; use CREATE, \
                 UPDATE or DELETE"
            )),
        })
        .collect()
}

fn compile_owner(at: &str, o: &OwnerSettings) -> Result<FluxOwner, String> {
    let kind = o
        .kind
        .ok_or_else(|| format!("{at}.kind: required: Kustomization or HelmRelease"))?;
    if !o.namespace.is_empty() {
        names::check_dns1123_label(&o.namespace)
            .map_err(|e| format!("{at}.namespace: {} {e}", names::quote(&o.namespace)))?;
    }
    if !o.name.is_empty() {
        names::check_dns1123_subdomain(&o.name)
            .map_err(|e| format!("{at}.name: {} {e}", names::quote(&o.name)))?;
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
            .contains("\"a/b/c\" is not a gate name"));
        assert!(parse_ref("Qa/x", &declared, "x")
            .unwrap_err()
            .contains("namespace must begin"));
        assert!(parse_ref("", &declared, "x")
            .unwrap_err()
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
