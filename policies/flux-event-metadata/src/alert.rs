//! Reading a notification-controller Alert from JSON, and deciding, as
//! notification-controller does, whether it selects an object's events.
//!
//! Both the Alert under review and the Alerts listed from the cluster are read
//! here, by reference into their JSON, so a long list allocates nothing.

use guard_core::request::json_type;
use guard_core::StringMap;
use serde_json::Value;

/// eventSources beyond this many are not read (the CRD sets no bound).
const MAX_SOURCES: usize = 256;

pub struct Alert<'a> {
    pub name: &'a str,
    pub namespace: &'a str,
    spec: Option<&'a Value>,
}

/// One `.spec.eventSources[]` entry.
pub struct Source<'a> {
    pub kind: &'a str,
    name: &'a str,
    namespace: Option<&'a str>,
    match_labels: Option<&'a serde_json::Map<String, Value>>,
}

/// The object whose events an Alert may select.
pub struct Emitter<'a> {
    pub kind: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
    pub labels: &'a StringMap,
}

fn str_at<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

impl<'a> Alert<'a> {
    /// A whole Alert object, as listed from the cluster.
    pub fn from_object(object: &'a Value) -> Self {
        let meta = object.get("metadata").unwrap_or(&Value::Null);
        Self::new(
            str_at(meta, "name"),
            str_at(meta, "namespace"),
            object.get("spec"),
        )
    }

    pub fn new(name: &'a str, namespace: &'a str, spec: Option<&'a Value>) -> Self {
        Self {
            name,
            namespace,
            spec,
        }
    }

    fn field(&self, key: &str) -> Option<&'a Value> {
        self.spec.and_then(|s| s.get(key)).filter(|v| !v.is_null())
    }

    /// A suspended Alert dispatches nothing, so it conflicts with nothing.
    pub fn suspended(&self) -> bool {
        self.field("suspend").and_then(Value::as_bool) == Some(true)
    }

    pub fn sources(&self) -> impl Iterator<Item = Source<'a>> {
        self.field("eventSources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .take(MAX_SOURCES)
            .map(|s| Source {
                kind: str_at(s, "kind"),
                name: str_at(s, "name"),
                namespace: s
                    .get("namespace")
                    .and_then(Value::as_str)
                    .filter(|n| !n.is_empty()),
                match_labels: s.get("matchLabels").and_then(Value::as_object),
            })
    }

    /// `.spec.summary`; empty counts as unset, as notification-controller treats it.
    pub fn summary(&self) -> Result<Option<&'a str>, String> {
        match self.field("summary") {
            None => Ok(None),
            Some(Value::String(s)) if s.is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(format!(
                "spec.summary must be a string, not {}",
                json_type(other)
            )),
        }
    }

    /// `.spec.eventMetadata`, in key order.
    pub fn event_metadata(&self) -> Result<Vec<(&'a str, &'a str)>, String> {
        let Some(field) = self.field("eventMetadata") else {
            return Ok(Vec::new());
        };
        let Some(map) = field.as_object() else {
            return Err(format!(
                "spec.eventMetadata must be a map of keys to strings, not {}",
                json_type(field)
            ));
        };
        map.iter()
            .map(|(k, v)| match v.as_str() {
                Some(s) => Ok((k.as_str(), s)),
                None => Err(format!(
                    "spec.eventMetadata key {} must map to a string, not {}; quote the value in YAML",
                    guard_core::names::quote(k),
                    json_type(v)
                )),
            })
            .collect()
    }

    /// Does this Alert receive the events of `object`, as notification-controller
    /// decides (fluxcd/notification-controller `internal/server/event_handlers.go`,
    /// `filterAlertsForEvent` and `eventMatchesAlertSource`, commit
    /// 2e46958a67f3af0e3e755a4fcaf7397d5803725e): not suspended; a source of the
    /// object's kind and namespace (the Alert's own when unset); the exact name
    /// or `*`; and, whenever `matchLabels` is set, every entry among the
    /// object's labels, whatever the name. With `--no-cross-namespace-refs`
    /// (`same_namespace_only`), `getNotificationParams` discards events from
    /// other namespaces before metadata is combined.
    pub fn selects(&self, object: &Emitter<'_>, same_namespace_only: bool) -> bool {
        if self.suspended() || (same_namespace_only && self.namespace != object.namespace) {
            return false;
        }
        self.sources().any(|s| s.selects(self.namespace, object))
    }
}

impl Source<'_> {
    /// The namespace whose objects this source names.
    pub fn namespace_or<'b>(&'b self, alert_namespace: &'b str) -> &'b str {
        self.namespace.unwrap_or(alert_namespace)
    }

    fn selects(&self, alert_namespace: &str, object: &Emitter<'_>) -> bool {
        if self.kind != object.kind || self.namespace_or(alert_namespace) != object.namespace {
            return false;
        }
        if self.name != "*" && self.name != object.name {
            return false;
        }
        // A requirement with an invalid key or value fails LabelSelectorAsSelector
        // upstream (no match); valid object labels can never equal it here either.
        self.match_labels.is_none_or(|wanted| {
            wanted
                .iter()
                .all(|(k, v)| v.as_str().is_some_and(|v| object.labels.get(k) == Some(v)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn alert(spec: Value) -> Value {
        json!({"metadata": {"name": "slack", "namespace": "flux-system"}, "spec": spec})
    }

    fn emitter<'a>(labels: &'a StringMap, ns: &'a str, name: &'a str) -> Emitter<'a> {
        Emitter {
            kind: "HelmRelease",
            namespace: ns,
            name,
            labels,
        }
    }

    #[test]
    fn selection_by_name_star_labels_and_namespace() {
        let mut labels = StringMap::new();
        labels.insert("team".to_string(), "payments".to_string());
        let none = StringMap::new();
        let by_name = alert(json!({"eventSources": [{"kind": "HelmRelease", "name": "podinfo"}]}));
        let a = Alert::from_object(&by_name);
        assert!(a.selects(&emitter(&none, "flux-system", "podinfo"), false));
        assert!(!a.selects(&emitter(&none, "apps", "podinfo"), false));
        assert!(!a.selects(&emitter(&none, "flux-system", "other"), false));

        let star = alert(
            json!({"eventSources": [{"kind": "HelmRelease", "name": "*", "namespace": "apps"}]}),
        );
        let a = Alert::from_object(&star);
        assert!(a.selects(&emitter(&none, "apps", "anything"), false));
        assert!(!a.selects(&emitter(&none, "flux-system", "anything"), false));

        let labelled = alert(json!({"eventSources": [
            {"kind": "HelmRelease", "name": "*", "namespace": "apps", "matchLabels": {"team": "payments"}}]}));
        let a = Alert::from_object(&labelled);
        assert!(a.selects(&emitter(&labels, "apps", "x"), false));
        assert!(!a.selects(&emitter(&none, "apps", "x"), false));

        let other_kind = alert(json!({"eventSources": [{"kind": "Kustomization", "name": "*"}]}));
        assert!(
            !Alert::from_object(&other_kind).selects(&emitter(&none, "flux-system", "x"), false)
        );

        // A name and matchLabels: both must hold (the name alone selected it before).
        let named = alert(json!({"eventSources": [
            {"kind": "HelmRelease", "name": "x", "namespace": "apps", "matchLabels": {"team": "payments"}}]}));
        let a = Alert::from_object(&named);
        assert!(a.selects(&emitter(&labels, "apps", "x"), false));
        assert!(!a.selects(&emitter(&none, "apps", "x"), false));
        assert!(!a.selects(&emitter(&labels, "apps", "y"), false));
        let empty = alert(json!({"eventSources": [
            {"kind": "HelmRelease", "name": "*", "namespace": "apps", "matchLabels": {}}]}));
        assert!(Alert::from_object(&empty).selects(&emitter(&none, "apps", "x"), false));

        let suspended =
            alert(json!({"suspend": true, "eventSources": [{"kind": "HelmRelease", "name": "*"}]}));
        assert!(!Alert::from_object(&suspended).selects(&emitter(&none, "flux-system", "x"), false));
    }

    #[test]
    fn no_cross_namespace_refs_keeps_alerts_to_their_namespace() {
        let none = StringMap::new();
        let elsewhere = alert(
            json!({"eventSources": [{"kind": "HelmRelease", "name": "*", "namespace": "apps"}]}),
        );
        let a = Alert::from_object(&elsewhere);
        assert!(a.selects(&emitter(&none, "apps", "x"), false));
        assert!(!a.selects(&emitter(&none, "apps", "x"), true));
        let own = alert(json!({"eventSources": [{"kind": "HelmRelease", "name": "*"}]}));
        assert!(Alert::from_object(&own).selects(&emitter(&none, "flux-system", "x"), true));
    }

    #[test]
    fn metadata_and_summary_are_read_with_clear_errors() {
        let ok =
            alert(json!({"summary": "prod", "eventMetadata": {"env": "prod", "cluster": "eu-1"}}));
        let a = Alert::from_object(&ok);
        assert_eq!(a.summary().unwrap(), Some("prod"));
        assert_eq!(
            a.event_metadata().unwrap(),
            vec![("cluster", "eu-1"), ("env", "prod")]
        );

        let bad = alert(json!({"summary": 5, "eventMetadata": ["env"]}));
        let a = Alert::from_object(&bad);
        assert_eq!(
            a.summary().unwrap_err(),
            "spec.summary must be a string, not a number"
        );
        assert_eq!(
            a.event_metadata().unwrap_err(),
            "spec.eventMetadata must be a map of keys to strings, not a list"
        );
        let bad_value = alert(json!({"eventMetadata": {"replicas": 3}}));
        assert_eq!(
            Alert::from_object(&bad_value).event_metadata().unwrap_err(),
            "spec.eventMetadata key \"replicas\" must map to a string, not a number; quote the value in YAML"
        );
        let empty = alert(json!({"summary": ""}));
        assert_eq!(Alert::from_object(&empty).summary().unwrap(), None);
        assert!(Alert::from_object(&json!(null))
            .event_metadata()
            .unwrap()
            .is_empty());
    }
}
