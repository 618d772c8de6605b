//! Reading a notification-controller Alert from JSON, and deciding, as
//! notification-controller does, whether it selects an object's events.
//!
//! The Alert under review is read from its parsed `spec`; the Alerts listed
//! from the cluster are read in place from their JSON text (`in_place`), so
//! that a long list costs little more than reading its bytes: parsing each
//! into a `serde_json::Value` (a string and a map node per key) was most of
//! the policy's time on a cluster of thousands of Alerts.

mod in_place;
#[cfg(test)]
mod serde_view;

use crate::key_index::same;
use guard_core::request::json_type;
use guard_core::StringMap;
use serde_json::Value;

/// What the rules read of an Alert, taken out of its JSON once.
#[cfg_attr(test, derive(Debug, PartialEq))]
pub struct Alert<'a> {
    pub name: &'a str,
    pub namespace: &'a str,
    suspended: bool,
    summary: Result<Option<&'a str>, FieldError>,
    event_metadata: Result<Vec<(&'a str, &'a str)>, FieldError>,
    sources: Vec<Source<'a>>,
}

/// A field of the Alert under review that is not of the type its CRD gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FieldError {
    /// `.spec.summary` is not a string; `found` is the JSON type.
    SummaryNotString { found: &'static str },
    /// `.spec.eventMetadata` is not a map.
    MetadataNotMap { found: &'static str },
    /// A `.spec.eventMetadata` value is not a string.
    MetadataValueNotString { key: String, found: &'static str },
}

/// One `.spec.eventSources[]` entry.
#[cfg_attr(test, derive(Debug, PartialEq))]
pub struct Source<'a> {
    pub kind: &'a str,
    name: &'a str,
    namespace: Option<&'a str>,
    /// Each entry's value, `None` when it is not a string (it then matches
    /// no object).
    match_labels: Option<Vec<(&'a str, Option<&'a str>)>>,
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
        let field = |key: &str| spec.and_then(|s| s.get(key)).filter(|v| !v.is_null());
        Self {
            name,
            namespace,
            suspended: field("suspend").and_then(Value::as_bool) == Some(true),
            summary: summary(field("summary")),
            event_metadata: event_metadata(field("eventMetadata")),
            sources: field("eventSources")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|s| Source {
                    kind: str_at(s, "kind"),
                    name: str_at(s, "name"),
                    namespace: s
                        .get("namespace")
                        .and_then(Value::as_str)
                        .filter(|n| !n.is_empty()),
                    match_labels: s
                        .get("matchLabels")
                        .and_then(Value::as_object)
                        .map(|m| m.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()),
                })
                .collect(),
        }
    }

    /// A suspended Alert dispatches nothing, so it conflicts with nothing.
    pub fn suspended(&self) -> bool {
        self.suspended
    }

    pub fn sources(&self) -> impl Iterator<Item = &Source<'a>> {
        self.sources.iter()
    }

    /// `.spec.summary`; empty counts as unset, as notification-controller treats it.
    pub(crate) fn summary(&self) -> Result<Option<&'a str>, FieldError> {
        self.summary.clone()
    }

    /// `.spec.eventMetadata`, in key order.
    pub(crate) fn event_metadata(&self) -> Result<Vec<(&'a str, &'a str)>, FieldError> {
        self.event_metadata.clone()
    }

    /// `.spec.eventMetadata` in key order, borrowed (none when it is not a
    /// map of strings): what a listed Alert sets, without a copy per Alert.
    pub(crate) fn event_metadata_pairs(&self) -> &[(&'a str, &'a str)] {
        self.event_metadata.as_deref().unwrap_or_default()
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

fn summary(field: Option<&Value>) -> Result<Option<&str>, FieldError> {
    match field {
        None => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(FieldError::SummaryNotString {
            found: json_type(other),
        }),
    }
}

fn event_metadata(field: Option<&Value>) -> Result<Vec<(&str, &str)>, FieldError> {
    let Some(field) = field else {
        return Ok(Vec::new());
    };
    let Some(map) = field.as_object() else {
        return Err(FieldError::MetadataNotMap {
            found: json_type(field),
        });
    };
    map.iter()
        .map(|(k, v)| match v.as_str() {
            Some(s) => Ok((k.as_str(), s)),
            None => Err(FieldError::MetadataValueNotString {
                key: k.clone(),
                found: json_type(v),
            }),
        })
        .collect()
}

impl Source<'_> {
    /// The namespace whose objects this source names.
    pub fn namespace_or<'b>(&'b self, alert_namespace: &'b str) -> &'b str {
        self.namespace.unwrap_or(alert_namespace)
    }

    fn selects(&self, alert_namespace: &str, object: &Emitter<'_>) -> bool {
        if !same(self.kind, object.kind)
            || !same(self.namespace_or(alert_namespace), object.namespace)
        {
            return false;
        }
        if self.name != "*" && !same(self.name, object.name) {
            return false;
        }
        // A requirement with an invalid key or value fails LabelSelectorAsSelector
        // upstream (no match); valid object labels can never equal it here either.
        // The keys come in key order (both readings sort them), so each lookup
        // starts where the last ended.
        self.match_labels.as_ref().is_none_or(|wanted| {
            let mut labels = object.labels.ascending();
            wanted
                .iter()
                .all(|&(k, v)| v.is_some_and(|v| labels.get(k).is_some_and(|l| same(l, v))))
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

    /// A listed Alert read in place reads as the same Alert parsed whole,
    /// and one it cannot read in place is left to the whole parse.
    #[test]
    fn listed_alerts_read_in_place_as_parsed_whole() {
        use super::serde_view::ListedAlert;
        let read_in_place = [
            alert(json!({"summary": "prod", "suspend": false,
                "eventMetadata": {"cluster": "eu-1", "env": "prod"},
                "eventSources": [{"kind": "HelmRelease", "name": "*", "namespace": "",
                                  "matchLabels": {"a": "1", "b": "2"}},
                                 {"kind": "Kustomization", "name": "x", "namespace": "apps",
                                  "matchLabels": {}},
                                 {"kind": "GitRepository"}]})),
            alert(json!({"summary": "", "suspend": true})),
            json!({"metadata": {"labels": {"a": "b"}}, "spec": {"providerRef": {"name": "x"}}}),
            json!({}),
            json!({"apiVersion": "v1", "status": {"conditions": [1, "x"]}}),
        ];
        for object in &read_in_place {
            let text = object.to_string();
            let listed: ListedAlert<'_> = serde_json::from_str(&text).unwrap();
            assert_eq!(
                Alert::from_listed(&listed),
                Alert::from_object(object),
                "{text}"
            );
        }
        for other in [
            r#"{"metadata": {"name": "a\"b"}}"#,
            r#"{"metadata": {"name": null}}"#,
            r#"{"metadata": 5}"#,
            r#"{"spec": null}"#,
            r#"{"spec": {"summary": 5}}"#,
            r#"{"spec": {"suspend": "true"}}"#,
            r#"{"spec": {"eventMetadata": {"replicas": 3}}}"#,
            r#"{"spec": {"eventMetadata": {"b": "1", "a": "2"}}}"#,
            r#"{"spec": {"eventMetadata": {"env": "x", "env": "y"}}}"#,
            r#"{"spec": {"eventSources": [null]}}"#,
            r#"{"spec": {"eventSources": [{"kind": "HelmRelease", "matchLabels": {"t": 1}}]}}"#,
        ] {
            assert!(
                serde_json::from_str::<ListedAlert<'_>>(other).is_err(),
                "{other}"
            );
        }
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
            FieldError::SummaryNotString { found: "a number" }
        );
        assert_eq!(
            a.event_metadata().unwrap_err(),
            FieldError::MetadataNotMap { found: "a list" }
        );
        let bad_value = alert(json!({"eventMetadata": {"replicas": 3}}));
        assert_eq!(
            Alert::from_object(&bad_value).event_metadata().unwrap_err(),
            FieldError::MetadataValueNotString {
                key: "replicas".into(),
                found: "a number"
            }
        );
        let empty = alert(json!({"summary": ""}));
        assert_eq!(Alert::from_object(&empty).summary().unwrap(), None);
        assert!(Alert::from_object(&json!(null))
            .event_metadata()
            .unwrap()
            .is_empty());
    }
}
