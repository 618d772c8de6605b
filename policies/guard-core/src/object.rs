//! One way for every policy to name an object in its messages and to write
//! the `kubectl` command that fixes it.
//!
//! Not to be confused with [`crate::context::ObjectRef`], the object a
//! cluster lookup asks for by `apiVersion`.

use std::borrow::Cow;

use crate::names::{quote, shell_word};
use crate::{AdmissionRequest, Metadata};

/// An object as messages name it and `kubectl` takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectName<'a> {
    /// `FlexibleServer`.
    pub kind: &'a str,
    /// The resource fully qualified, as `kubectl` takes it without guessing:
    /// `plural.group`, or `plural` in the core group
    /// (`flexibleservers.dbforpostgresql.azure.com`, `namespaces`).
    pub resource: Cow<'a, str>,
    /// Empty for a cluster-scoped object.
    pub namespace: &'a str,
    pub name: Cow<'a, str>,
}

/// An [`ObjectName`] that owns its text, for a policy's decision, which
/// outlives the request it was read from; [`OwnedObjectName::object`]
/// names it again in messages and commands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnedObjectName {
    pub kind: String,
    pub resource: String,
    pub namespace: String,
    pub name: String,
}

impl OwnedObjectName {
    pub fn of(object: &ObjectName<'_>) -> Self {
        Self {
            kind: object.kind.to_string(),
            resource: object.resource.to_string(),
            namespace: object.namespace.to_string(),
            name: object.name.to_string(),
        }
    }

    pub fn object(&self) -> ObjectName<'_> {
        ObjectName::new(
            &self.kind,
            self.resource.as_str(),
            &self.namespace,
            self.name.as_str(),
        )
    }
}

impl<'a> ObjectName<'a> {
    /// An object that is not the request's: a Namespace, a Gate, an Alert.
    pub fn new(
        kind: &'a str,
        resource: impl Into<Cow<'a, str>>,
        namespace: &'a str,
        name: impl Into<Cow<'a, str>>,
    ) -> Self {
        Self {
            kind,
            resource: resource.into(),
            namespace,
            name: name.into(),
        }
    }

    /// The object a request is about. The resource is the request's (the
    /// lower-cased kind when it has none) in the kind's group; the namespace
    /// the request's, else the object's; the name
    /// [`AdmissionRequest::display_name`] (a CREATE with `generateName` has
    /// none yet).
    pub fn of(request: &'a AdmissionRequest, meta: Option<&'a Metadata>) -> Self {
        let plural: Cow<'a, str> = if request.resource.resource.is_empty() {
            request.kind.kind.to_ascii_lowercase().into()
        } else {
            request.resource.resource.as_str().into()
        };
        let resource = match request.kind.group.as_str() {
            "" => plural,
            group => format!("{plural}.{group}").into(),
        };
        let namespace = match meta {
            // A Namespace is cluster-scoped, but its own requests carry its
            // name as their namespace (k8s.io/apiserver
            // `pkg/endpoints/request/requestinfo.go` `NewRequestInfo` reads
            // it from the `namespaces/{name}` path).
            _ if request.kind.group.is_empty() && request.kind.kind == "Namespace" => "",
            _ if !request.namespace.is_empty() => request.namespace.as_str(),
            Some(m) => m.namespace.as_str(),
            None => "",
        };
        let name: Cow<'a, str> = if request.name.is_empty() {
            request.display_name(meta).into()
        } else {
            request.name.as_str().into()
        };
        Self {
            kind: &request.kind.kind,
            resource,
            namespace,
            name,
        }
    }

    /// `Kustomization flux-system/apps`, or `Namespace shop` when
    /// cluster-scoped. A name or namespace that is not a plain word (it can
    /// be anything on a CREATE before kube-apiserver validates it) is quoted,
    /// bounded and escaped: kube-apiserver drops a warning that contains a
    /// control character.
    pub fn describe(&self) -> String {
        let name = shown(&self.name);
        if self.namespace.is_empty() {
            format!("{} {name}", self.kind)
        } else {
            format!("{} {}/{name}", self.kind, shown(self.namespace))
        }
    }

    /// `kubectl VERB RESOURCE NAME [-n NAMESPACE] ARGS…`, the resource, name
    /// and namespace as shell words. `args` are appended as they are: the
    /// caller quotes what needs it ([`shell_word`]).
    pub fn kubectl(&self, verb: &str, args: &[&str]) -> String {
        let mut command = format!(
            "kubectl {verb} {} {}",
            shell_word(&self.resource),
            shell_word(&self.name)
        );
        if !self.namespace.is_empty() {
            command.push_str(" -n ");
            command.push_str(&shell_word(self.namespace));
        }
        for arg in args {
            command.push(' ');
            command.push_str(arg);
        }
        command
    }
}

/// A name as messages show it: bare when it is a plain word of the
/// characters Kubernetes names use (or a placeholder such as `<unnamed>`),
/// else [`quote`]d.
fn shown(text: &str) -> Cow<'_, str> {
    const MAX: usize = 253;
    let plain =
        |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | ':' | '<' | '>');
    if !text.is_empty() && text.len() <= MAX && text.chars().all(plain) {
        text.into()
    } else {
        quote(text).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::RequestBuilder;
    use serde_json::json;

    #[test]
    fn the_request_names_its_object() {
        let r = RequestBuilder::new("UPDATE")
            .kind("apps", "v1", "Deployment")
            .resource("apps", "v1", "deployments")
            .name("web")
            .namespace("shop")
            .build();
        let o = ObjectName::of(&r, None);
        assert_eq!(
            o,
            ObjectName::new("Deployment", "deployments.apps", "shop", "web")
        );
        assert_eq!(o.describe(), "Deployment shop/web");
        assert_eq!(
            o.kubectl("annotate", &["team=payments", "--overwrite"]),
            "kubectl annotate deployments.apps web -n shop team=payments --overwrite"
        );
    }

    #[test]
    fn a_namespace_request_names_a_cluster_scoped_object() {
        let r = RequestBuilder::new("DELETE")
            .kind("", "v1", "Namespace")
            .resource("", "v1", "namespaces")
            .name("payments")
            .namespace("payments")
            .build();
        assert_eq!(ObjectName::of(&r, None).describe(), "Namespace payments");
    }

    #[test]
    fn core_kinds_cluster_scope_and_missing_parts() {
        let ns = ObjectName::new("Namespace", "namespaces", "", "team-a");
        assert_eq!(ns.describe(), "Namespace team-a");
        assert_eq!(
            ns.kubectl("label", &["team=a"]),
            "kubectl label namespaces team-a team=a"
        );
        // No resource: the lower-cased kind; no namespace or name in the
        // request: the object's.
        let r = RequestBuilder::new("CREATE")
            .kind("", "v1", "ConfigMap")
            .build();
        let meta: Metadata =
            serde_json::from_value(json!({"namespace": "apps", "generateName": "cfg-"})).unwrap();
        let o = ObjectName::of(&r, Some(&meta));
        assert_eq!(
            (o.resource.as_ref(), o.namespace, o.name.as_ref()),
            ("configmap", "apps", "cfg-<generated>")
        );
        assert_eq!(o.describe(), "ConfigMap apps/cfg-<generated>");
        assert_eq!(ObjectName::of(&r, None).name, "<unnamed>");
    }

    #[test]
    fn names_kube_apiserver_has_not_validated_yet() {
        let odd = ObjectName::new("Kustomization", "kustomizations", "flux system", "a\nb");
        assert_eq!(odd.describe(), "Kustomization \"flux system\"/\"a\\nb\"");
        assert_eq!(
            odd.kubectl("annotate", &[]),
            r"kubectl annotate kustomizations $'a\nb' -n 'flux system'"
        );
        let long = "x".repeat(300);
        assert!(ObjectName::new("Namespace", "namespaces", "", &long)
            .describe()
            .ends_with("x…\""));
        assert_eq!(
            ObjectName::new(
                "ClusterRole",
                "clusterroles.rbac.authorization.k8s.io",
                "",
                "system:admin"
            )
            .describe(),
            "ClusterRole system:admin"
        );
        assert_eq!(
            ObjectName::new("Gate", "gates", "ops", "it's").kubectl("get", &["-o", "yaml"]),
            r"kubectl get gates 'it'\''s' -n ops -o yaml"
        );
    }
}
