//! Which gates hold a request: those of the settings' bindings that match
//! it, and the gates an object names itself in its
//! `gating.toolkit.fluxcd.io/gates` annotation.

use guard_core::{AdmissionRequest, Metadata};

use crate::gating::GATES_ANNOTATION;
use crate::settings::limits::MAX_ANNOTATED;
use crate::settings::{parse_ref, Compiled, GateRef, RefError};

/// The gates bound to one object (its metadata as in the request), in order,
/// without repeats, and what was wrong with its gates annotation, if anything.
#[derive(Debug, Default, PartialEq)]
pub struct Bound {
    pub gates: Vec<GateRef>,
    /// The annotation could not be read; only the bindings' gates are listed.
    pub malformed: Option<Box<AnnotationError>>,
}

/// Why an object's gates annotation names no gates. Its words are in `render`.
#[derive(Debug, PartialEq, Eq)]
pub enum AnnotationError {
    /// It names this many gates, more than [`MAX_ANNOTATED`].
    TooMany(usize),
    /// An entry is not a gate name.
    Ref(RefError),
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
fn annotated(value: &str, settings: &Compiled) -> Result<Vec<GateRef>, Box<AnnotationError>> {
    let entries: Vec<&str> = value
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .collect();
    if entries.len() > MAX_ANNOTATED {
        return Err(Box::new(AnnotationError::TooMany(entries.len())));
    }
    entries
        .into_iter()
        .map(|entry| {
            parse_ref(entry, &settings.gates, &settings.gate_namespace)
                .map_err(|e| Box::new(AnnotationError::Ref(e)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let err = bad.malformed.unwrap().to_string();
        assert!(
            err.starts_with(
                "annotation gating.toolkit.fluxcd.io/gates: \"sre approval\" is not a gate name"
            ),
            "{err}"
        );
        let many = vec!["g"; 17].join(",");
        assert_eq!(
            gates_for(c, &req, &meta(&[], Some(&many))).malformed,
            Some(Box::new(AnnotationError::TooMany(17)))
        );
    }
}
