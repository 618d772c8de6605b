//! Which gates hold a request: the settings' bindings (compiled here from
//! their document), and the gates an object names itself in its
//! `gating.toolkit.fluxcd.io/gates` annotation.

use guard_core::flux;
use guard_core::identity::Identities;
use guard_core::names;
use guard_core::object::ObjectName;
use guard_core::selector::LabelSelector;
use guard_core::{AdmissionRequest, GroupKind, Metadata, Operation, StringMap};

use crate::compile::Compiled;
use crate::gate::DeclaredGate;
use crate::settings::limits::MAX_ANNOTATED;
use crate::settings::BindingSettings;
use crate::{GATES_ANNOTATION, GATE_KIND, GATING_GROUP};

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
    let bad = |e: String| {
        format!(
            "{} is not a gate name: {e}; write name or namespace/name",
            names::quote(text)
        )
    };
    names::check_dns1123_subdomain(name).map_err(bad)?;
    match namespace {
        None => Ok(match declared.iter().position(|g| g.name == name) {
            Some(i) => GateRef::Declared(i),
            None => GateRef::Object {
                namespace: gate_namespace.to_string(),
                name: name.to_string(),
            },
        }),
        Some(ns) => {
            names::check_dns1123_label(ns).map_err(|e| bad(format!("namespace {e}")))?;
            Ok(GateRef::Object {
                namespace: ns.to_string(),
                name: name.to_string(),
            })
        }
    }
}

/// The labels Flux's controllers put on every object they apply, naming the
/// Kustomization or HelmRelease it comes from (`<group>/name`,
/// `<group>/namespace`): fluxcd/pkg ssa `ResourceManager.SetOwnerLabels`, as
/// kustomize-controller calls it with its API group, and helm-controller's
/// post-renderer `OriginLabels`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FluxOwnerKind {
    Kustomization,
    HelmRelease,
}

guard_core::one_of!(FluxOwnerKind {
    "Kustomization" => FluxOwnerKind::Kustomization,
    "HelmRelease" => FluxOwnerKind::HelmRelease,
});

impl FluxOwnerKind {
    pub fn parse(kind: &str) -> Option<Self> {
        match kind {
            "Kustomization" => Some(FluxOwnerKind::Kustomization),
            "HelmRelease" => Some(FluxOwnerKind::HelmRelease),
            _ => None,
        }
    }

    pub fn kind(self) -> &'static str {
        match self {
            FluxOwnerKind::Kustomization => "Kustomization",
            FluxOwnerKind::HelmRelease => "HelmRelease",
        }
    }

    /// The version context-aware lookups read it in.
    pub fn api_version(self) -> &'static str {
        match self {
            FluxOwnerKind::Kustomization => "kustomize.toolkit.fluxcd.io/v1",
            FluxOwnerKind::HelmRelease => "helm.toolkit.fluxcd.io/v2",
        }
    }

    /// The object of this kind `namespace/name`, as messages name it.
    /// The plurals are written here rather than looked up in guard-core's
    /// table of Flux kinds, which would link the whole table into the module
    /// (1.7 KB) for two names; a test checks that both agree with it.
    pub fn object<'a>(self, namespace: &'a str, name: &'a str) -> ObjectName<'a> {
        let plural = match self {
            FluxOwnerKind::Kustomization => "kustomizations",
            FluxOwnerKind::HelmRelease => "helmreleases",
        };
        let resource = format!("{plural}.{}", self.group());
        ObjectName::new(self.kind(), resource, namespace, name)
    }

    fn group(self) -> &'static str {
        match self {
            FluxOwnerKind::Kustomization => flux::KUSTOMIZE,
            FluxOwnerKind::HelmRelease => flux::HELM,
        }
    }

    /// The `(namespace, name)` of the object of this kind that applied an
    /// object with these labels.
    pub fn owner_of(self, labels: &StringMap) -> Option<(&str, &str)> {
        let group = self.group();
        let get = |key: &str| labels.get(&format!("{group}/{key}"));
        Some((get("namespace")?, get("name")?))
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
    fn matches(&self, labels: &StringMap) -> bool {
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

pub(crate) fn compile_binding(
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
    let mut kinds = Vec::with_capacity(m.kinds.len());
    for (i, k) in m.kinds.iter().enumerate() {
        if k.kind.is_empty() {
            return Err(format!(
                "{path}.match.kinds[{i}].kind: required, e.g. {{group: kustomize.toolkit.fluxcd.io, kind: Kustomization}}"
            ));
        }
        if k.group == GATING_GROUP && k.kind == GATE_KIND {
            return Err(format!(
                "{path}.match.kinds[{i}]: Gate objects are never held, so that a closed gate can always be opened"
            ));
        }
        kinds.push(GroupKind::new(&k.group, &k.kind));
    }
    for (i, ns) in m.namespaces.iter().enumerate() {
        names::check_dns1123_label(ns)
            .map_err(|e| format!("{path}.match.namespaces[{i}]: {} {e}", names::quote(ns)))?;
    }
    m.label_selector
        .validate(&format!("{path}.match.labelSelector"))?;
    let operations = if m.operations.is_empty() {
        vec![Operation::Create, Operation::Update, Operation::Delete]
    } else {
        m.operations
            .iter()
            .enumerate()
            .map(|(i, op)| match op {
                Operation::Create | Operation::Update | Operation::Delete => Ok(*op),
                Operation::Connect => Err(format!(
                    "{path}.match.operations[{i}]: CONNECT never writes an object; use CREATE, \
                     UPDATE or DELETE"
                )),
            })
            .collect::<Result<Vec<_>, _>>()?
    };
    m.requested_by
        .validate(&format!("{path}.match.requestedBy"))?;
    let applied_by = m
        .applied_by
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let at = format!("{path}.match.appliedBy[{i}]");
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
        })
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

/// The gates bound to one object (its metadata as in the request), in order,
/// without repeats, and what was wrong with its gates annotation, if anything.
#[derive(Debug, Default, PartialEq)]
pub struct Bound {
    pub gates: Vec<GateRef>,
    /// The annotation could not be read; only the bindings' gates are listed.
    pub malformed: Option<String>,
}

pub fn gates_for(settings: &Compiled, request: &AdmissionRequest, meta: &Metadata) -> Bound {
    let mut bound = Bound::default();
    let add = |gates: &mut Vec<GateRef>, r: &GateRef| {
        if !gates.contains(r) {
            gates.push(r.clone());
        }
    };
    for b in &settings.bindings {
        let matches = b.operations.contains(&request.operation)
            && (b.kinds.is_empty()
                || b.kinds
                    .iter()
                    .any(|k| k.is(&request.kind.group, &request.kind.kind)))
            && (b.namespaces.is_empty() || b.namespaces.contains(&request.namespace))
            && b.selector.matches(&meta.labels)
            && (b.requested_by.is_empty() || b.requested_by.matches(&request.user_info))
            && (b.applied_by.is_empty() || b.applied_by.iter().any(|o| o.matches(&meta.labels)));
        if matches {
            for r in &b.gates {
                add(&mut bound.gates, r);
            }
        }
    }
    if let Some(value) = meta.annotation(GATES_ANNOTATION) {
        match annotated(value, settings) {
            Ok(refs) => refs.iter().for_each(|r| add(&mut bound.gates, r)),
            Err(e) => bound.malformed = Some(e),
        }
    }
    bound
}

/// The gates an annotation value names.
fn annotated(value: &str, settings: &Compiled) -> Result<Vec<GateRef>, String> {
    let entries: Vec<&str> = value
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .collect();
    if entries.len() > MAX_ANNOTATED {
        return Err(format!(
            "annotation {GATES_ANNOTATION} names {} gates; at most {MAX_ANNOTATED} are allowed",
            entries.len()
        ));
    }
    entries
        .into_iter()
        .map(|entry| {
            parse_ref(entry, &settings.gates, &settings.gate_namespace)
                .map_err(|e| format!("annotation {GATES_ANNOTATION}: {e}, separated by commas"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::tests::no_deploy_friday;
    use crate::test_support::{assert_errors, binding_doc};

    fn compiled(json: &str) -> &'static Compiled {
        Box::leak(Box::new(
            guard_core::settings::parse(json.as_bytes()).unwrap(),
        ))
    }

    fn request(op: &str, group: &str, kind: &str, ns: &str) -> AdmissionRequest {
        serde_json::from_value(serde_json::json!({
            "operation": op, "namespace": ns,
            "kind": {"group": group, "version": "v1", "kind": kind},
        }))
        .unwrap()
    }

    fn meta(labels: &[(&str, &str)], gates: Option<&str>) -> Metadata {
        let mut m = Metadata {
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Default::default()
        };
        if let Some(g) = gates {
            m.annotations.insert(GATES_ANNOTATION.into(), g.into());
        }
        m
    }

    #[test]
    fn owner_kinds_agree_with_the_flux_kinds_table() {
        for (kind, resource) in [
            (
                FluxOwnerKind::Kustomization,
                "kustomizations.kustomize.toolkit.fluxcd.io",
            ),
            (
                FluxOwnerKind::HelmRelease,
                "helmreleases.helm.toolkit.fluxcd.io",
            ),
        ] {
            let listed = flux::find(kind.group(), kind.kind()).unwrap();
            assert_eq!(listed.resource(), resource);
            assert_eq!(kind.object("apps", "web").resource, resource);
        }
    }

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
    fn bindings_match_operation_kind_namespace_and_labels() {
        let c = compiled(
            r#"{"gates":[{"name":"freeze","default":"closed"}],
                "bindings":[{"gates":["freeze"],"match":{
                  "kinds":[{"group":"kustomize.toolkit.fluxcd.io","kind":"Kustomization"}],
                  "namespaces":["flux-system"],"labelSelector":{"matchLabels":{"tier":"prod"}},
                  "operations":["UPDATE"]}}]}"#,
        );
        let prod = meta(&[("tier", "prod")], None);
        let k = "kustomize.toolkit.fluxcd.io";
        let hit = request("UPDATE", k, "Kustomization", "flux-system");
        assert_eq!(gates_for(c, &hit, &prod).gates, vec![GateRef::Declared(0)]);
        for miss in [
            request("CREATE", k, "Kustomization", "flux-system"),
            request(
                "UPDATE",
                "helm.toolkit.fluxcd.io",
                "HelmRelease",
                "flux-system",
            ),
            request("UPDATE", k, "Kustomization", "apps"),
        ] {
            assert!(gates_for(c, &miss, &prod).gates.is_empty());
        }
        assert!(gates_for(c, &hit, &meta(&[("tier", "dev")], None))
            .gates
            .is_empty());
    }

    #[test]
    fn annotation_names_gates_without_repeats() {
        let c = compiled(r#"{"gates":[{"name":"freeze"}],"bindings":[{"gates":["freeze"]}]}"#);
        let req = request(
            "UPDATE",
            "kustomize.toolkit.fluxcd.io",
            "Kustomization",
            "apps",
        );
        let got = gates_for(
            c,
            &req,
            &meta(&[], Some("sre-approval, qa/qa-approval,freeze,")),
        );
        assert_eq!(
            got.gates,
            vec![
                GateRef::Declared(0),
                GateRef::Object {
                    namespace: "flux-system".into(),
                    name: "sre-approval".into()
                },
                GateRef::Object {
                    namespace: "qa".into(),
                    name: "qa-approval".into()
                },
            ]
        );
        let bad = gates_for(c, &req, &meta(&[], Some("sre approval")));
        assert_eq!(bad.gates, vec![GateRef::Declared(0)]);
        let err = bad.malformed.unwrap();
        assert!(
            err.starts_with(
                "annotation gating.toolkit.fluxcd.io/gates: \"sre approval\" is not a gate name"
            ),
            "{err}"
        );
        let many = vec!["g"; 17].join(",");
        assert!(gates_for(c, &req, &meta(&[], Some(&many)))
            .malformed
            .unwrap()
            .contains("names 17 gates"));
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
