//! The object a request is about, named for messages and for the `kubectl`
//! commands they suggest.

use guard_core::names::{check_dns1123_subdomain, quote};
use guard_core::{AdmissionRequest, Metadata};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub kind: String,
    pub group: String,
    /// `resource.group`, as kubectl takes it (`flexibleservers.dbforpostgresql.azure.com`).
    pub resource: String,
    pub name: String,
    pub namespace: String,
}

impl Target {
    pub fn of(request: &AdmissionRequest, meta: Option<&Metadata>) -> Self {
        let group = request.kind.group.clone();
        let plural = if request.resource.resource.is_empty() {
            request.kind.kind.to_ascii_lowercase()
        } else {
            request.resource.resource.clone()
        };
        let resource = if group.is_empty() {
            plural
        } else {
            format!("{plural}.{group}")
        };
        let namespace = match meta {
            _ if !request.namespace.is_empty() => request.namespace.clone(),
            Some(m) => m.namespace.clone(),
            None => String::new(),
        };
        Self {
            kind: request.kind.kind.clone(),
            group,
            resource,
            name: request.display_name(meta),
            namespace,
        }
    }

    /// e.g. `FlexibleServer "orders-db" in namespace "shop"`.
    pub fn describe(&self) -> String {
        if self.namespace.is_empty() {
            format!("{} {}", self.kind, quote(&self.name))
        } else {
            format!(
                "{} {} in namespace {}",
                self.kind,
                quote(&self.name),
                quote(&self.namespace)
            )
        }
    }

    /// The command that sets annotation `key` to `value` on this object.
    pub fn annotate(&self, key: &str, value: &str) -> String {
        let ns = if self.namespace.is_empty() {
            String::new()
        } else {
            format!(" -n {}", word(&self.namespace))
        };
        format!(
            "kubectl annotate {} {}{ns} {key}={} --overwrite",
            self.resource,
            word(&self.name),
            word(value)
        )
    }
}

/// A name as a shell word: Kubernetes names need no quoting; anything else
/// (not yet validated by the API server) is shown quoted and bounded.
fn word(text: &str) -> String {
    if check_dns1123_subdomain(text).is_ok() {
        text.to_string()
    } else {
        quote(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(json: &str) -> AdmissionRequest {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn names_and_commands() {
        let r = request(
            r#"{"kind":{"group":"dbforpostgresql.azure.com","version":"v1api20230601preview","kind":"FlexibleServer"},
                "resource":{"group":"dbforpostgresql.azure.com","version":"v1api20230601preview","resource":"flexibleservers"},
                "name":"orders-db","namespace":"shop"}"#,
        );
        let t = Target::of(&r, None);
        assert_eq!(
            t.describe(),
            "FlexibleServer \"orders-db\" in namespace \"shop\""
        );
        assert_eq!(
            t.annotate(
                "serviceoperator.azure.com/reconcile-policy",
                "detach-on-delete"
            ),
            "kubectl annotate flexibleservers.dbforpostgresql.azure.com orders-db -n shop \
             serviceoperator.azure.com/reconcile-policy=detach-on-delete --overwrite"
        );
    }

    #[test]
    fn cluster_scoped_and_odd_names() {
        let r =
            request(r#"{"kind":{"group":"","version":"v1","kind":"Namespace"},"name":"Team A"}"#);
        let t = Target::of(&r, None);
        assert_eq!(t.describe(), "Namespace \"Team A\"");
        assert_eq!(
            t.annotate("k", "v"),
            "kubectl annotate namespace \"Team A\" k=v --overwrite"
        );
    }
}
