//! The HelmChart template of a HelmRelease, judged when the HelmRelease is
//! written. helm-controller copies `spec.chart.metadata.annotations` (and
//! labels) onto the HelmChart it generates and applies it as itself
//! (helm-controller 0f61a86, `internal/reconcile/helmchart_template.go`,
//! `buildHelmChartFromTemplate` and `Reconcile`), so the HelmRelease's author
//! is the author of those annotations: the template is checked here, with the
//! author's identity, by the rules the HelmChart would meet, and the
//! generated HelmChart is never refused ([`crate::generated`]).

use guard_core::model::kinds::SOURCE;
use guard_core::object::ObjectName;
use guard_core::request::ReadError;
use guard_core::{AdmissionRequest, Cluster, Metadata, Operation, UserInfo, Which};
use serde::Deserialize;

use crate::annotations::{malformed_metadata, Malformed};
use crate::conflicts;
use crate::findings::Findings;
use crate::generated::{HELM_OWNER_NAME, HELM_OWNER_NAMESPACE};
use crate::object_rules;
use crate::settings::Settings;
use crate::subject::{On, Subject};

#[derive(Deserialize)]
struct ReleaseHead {
    #[serde(default)]
    spec: Option<ReleaseSpec>,
}

#[derive(Deserialize)]
struct ReleaseSpec {
    #[serde(default)]
    chart: Option<ChartHead>,
}

#[derive(Deserialize)]
struct ChartHead {
    #[serde(default)]
    metadata: Option<Metadata>,
    #[serde(default)]
    spec: Option<ChartSpec>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ChartSpec {
    #[serde(default)]
    source_ref: Option<SourceRef>,
}

#[derive(Deserialize)]
struct SourceRef {
    #[serde(default)]
    namespace: Option<String>,
}

/// A HelmRelease's chart template: the metadata helm-controller copies and
/// the namespace the HelmChart lands in.
struct ChartTemplate {
    meta: Metadata,
    namespace: Option<String>,
}

/// The HelmChart helm-controller generates for a HelmRelease.
#[derive(Debug, PartialEq)]
pub(crate) struct Chart {
    pub(crate) namespace: String,
    pub(crate) name: String,
}

/// The template's metadata (`spec.chart.metadata`) in `object` or
/// `oldObject` cannot be read.
#[derive(Debug, PartialEq)]
pub(crate) struct Unreadable {
    pub(crate) which: Which,
    pub(crate) malformed: Malformed,
}

/// The template in `object` or `oldObject`; `None` when the HelmRelease has
/// no `spec.chart` (it uses `spec.chartRef`, and no HelmChart is generated).
fn read(request: &AdmissionRequest, which: Which) -> Result<Option<ChartTemplate>, Unreadable> {
    let head = match request.object_as::<ReleaseHead>(which) {
        Ok(head) => head,
        Err(e) => {
            return Err(Unreadable {
                which,
                malformed: explain(request, which, e),
            })
        }
    };
    let Some(chart) = head.and_then(|h| h.spec).and_then(|s| s.chart) else {
        return Ok(None);
    };
    let meta = chart.metadata.unwrap_or_default();
    let namespace = chart
        .spec
        .and_then(|s| s.source_ref)
        .and_then(|r| r.namespace)
        .filter(|n| !n.is_empty());
    Ok(Some(ChartTemplate { meta, namespace }))
}

/// Names the field of the template that could not be read: the common case
/// is an unquoted YAML value among its annotations. Read a second time, as a
/// value, only on this path.
fn explain(request: &AdmissionRequest, which: Which, error: ReadError) -> Malformed {
    let object = request.object_value(which).ok().flatten();
    let meta = object
        .as_ref()
        .and_then(|o| o.pointer("/spec/chart/metadata"));
    malformed_metadata(meta, error)
}

/// Checks the annotations of the HelmRelease's chart template as those of
/// the HelmChart helm-controller will generate from it; returns that
/// HelmChart, `None` when the release generates none.
pub(crate) fn check<F: From<object_rules::Finding> + From<conflicts::Finding>>(
    request: &AdmissionRequest,
    release: &ObjectName<'_>,
    settings: &Settings,
    user: &UserInfo,
    cluster: &dyn Cluster,
    findings: &mut Findings<F>,
) -> Result<Option<Chart>, Unreadable> {
    let Some(new) = read(request, Which::Object)? else {
        return Ok(None);
    };
    let old = if request.operation == Operation::Update {
        read(request, Which::OldObject)?
    } else {
        None
    };
    let mut meta = new.meta;
    // helm-controller labels the chart with its owner (fluxcd/pkg `ssa`
    // `SetOwnerLabels`); an Alert's matchLabels sees them.
    meta.labels
        .insert(HELM_OWNER_NAME.to_string(), release.name.to_string());
    meta.labels.insert(
        HELM_OWNER_NAMESPACE.to_string(),
        release.namespace.to_string(),
    );
    // `GetHelmChartName` and `HelmChartTemplate.GetNamespace` (api/v2).
    let chart = Chart {
        namespace: new
            .namespace
            .unwrap_or_else(|| release.namespace.to_string()),
        name: format!("{}-{}", release.namespace, release.name),
    };
    let subject = Subject {
        group: SOURCE,
        target: chart.name(),
        meta: &meta,
        old: old.as_ref().map(|o| &o.meta),
        generated: false,
        source_kind: None,
        on: On::Template,
    };
    let entries = object_rules::check(&subject, settings, user, findings);
    conflicts::check(&subject, &entries, settings, cluster, findings);
    Ok(Some(chart))
}

impl Chart {
    /// The HelmChart as messages name it and `kubectl` takes it.
    pub(crate) fn name(&self) -> ObjectName<'_> {
        ObjectName::new(
            "HelmChart",
            format!("helmcharts.{SOURCE}"),
            &self.namespace,
            self.name.as_str(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use guard_core::model::kinds::HELM;
    use guard_core::settings::parse;
    use guard_core::testing::RequestBuilder;
    use guard_core::{NoCluster, Verdict};
    use serde_json::{json, Value};

    fn release(chart: Value, old_chart: Option<Value>, user: &str) -> AdmissionRequest {
        let object = |chart: &Value| {
            json!({"metadata": {"name": "podinfo", "namespace": "apps"},
                   "spec": {"interval": "10m", "chart": chart}})
        };
        let mut b = RequestBuilder::new(if old_chart.is_some() {
            "UPDATE"
        } else {
            "CREATE"
        })
        .name("podinfo")
        .namespace("apps")
        .kind(HELM, "v2", "HelmRelease")
        .resource(HELM, "v2", "helmreleases")
        .username(user)
        .object(object(&chart));
        if let Some(old) = &old_chart {
            b = b.old_object(object(old));
        }
        b.build()
    }

    fn run(settings: &str, request: &AdmissionRequest) -> Verdict {
        let settings = parse::<Settings>(settings.as_bytes()).unwrap();
        let target = ObjectName::of(request, None);
        let mut findings = Findings::new(false);
        let user = &request.user_info;
        match check(request, &target, &settings, user, &NoCluster, &mut findings) {
            Ok(chart) => crate::test_support::verdict(findings, chart, request, &settings),
            Err(e) => {
                let decision = crate::decision::Decision::UnreadableTemplate {
                    release: crate::decision::Target {
                        namespace: target.namespace.to_string(),
                        name: target.name.to_string(),
                    },
                    which: e.which,
                    malformed: e.malformed,
                };
                crate::render::verdict(&decision, request, &settings)
            }
        }
    }

    fn chart(annotations: Value) -> Value {
        json!({"metadata": {"annotations": annotations},
               "spec": {"chart": "podinfo", "sourceRef": {"kind": "HelmRepository", "name": "podinfo", "namespace": "flux-system"}}})
    }

    #[test]
    fn the_template_meets_the_helm_chart_rules() {
        let v = run(
            "{}",
            &release(
                chart(json!({"event.toolkit.fluxcd.io/revision": "x"})),
                None,
                "alice",
            ),
        );
        assert_eq!(
            v.message.as_deref(),
            Some(
                "2 problems with the event metadata of HelmRelease apps/podinfo: (1) \
                 spec.chart.metadata.annotations[event.toolkit.fluxcd.io/revision] competes with \
                 source-controller, which sends its own `revision` with some HelmChart events: \
                 there controller metadata takes precedence over annotations (RFC-0008), so \
                 \"x\" is dropped and notification-controller records a MetadataAppendFailed \
                 Warning event on every Alert that selects this object, while the other events \
                 carry \"x\" instead. Choose another key, or remove \
                 `event.toolkit.fluxcd.io/revision` from spec.chart.metadata.annotations in the \
                 manifest. (2) spec.chart.metadata.annotations[event.toolkit.fluxcd.io/revision]=\"x\" \
                 is not a full Git SHA-1 commit in lower-case hex (40 characters), bare or as a \
                 Flux revision (`main@sha1:<sha>`, `sha1:<sha>`, `main/<sha>`); \
                 notification-controller uses `revision` to choose which Git commit receives the \
                 commit status of every event that carries no `commit` or `originRevision` \
                 (failure events included: no controller sends `revision` with every event)."
            )
        );
    }

    #[test]
    fn required_keys_name_the_generated_chart() {
        let s = r#"{"requiredKeys":{"HelmChart":["team"]}}"#;
        let v = run(s, &release(chart(json!({})), None, "alice"));
        assert_eq!(
            v.message.as_deref(),
            Some(
                "every HelmChart must carry the annotation event.toolkit.fluxcd.io/team \
                 (requiredKeys), with a value; helm-controller generates HelmChart \
                 flux-system/apps-podinfo from HelmRelease apps/podinfo and copies only \
                 spec.chart.metadata.annotations onto it, so add the key there."
            )
        );
        // Missing before: an edit of the release is not blocked.
        let v = run(
            s,
            &release(chart(json!({})), Some(chart(json!({}))), "alice"),
        );
        assert!(v.allowed && v.warnings[0].contains("already so"), "{v:?}");
        // A chartRef release generates no HelmChart.
        let r = RequestBuilder::new("CREATE")
            .name("podinfo")
            .namespace("apps")
            .kind(HELM, "v2", "HelmRelease")
            .object(json!({"metadata": {"name": "podinfo"}, "spec": {"chartRef": {"kind": "OCIRepository", "name": "podinfo"}}}))
            .build();
        assert_eq!(run(s, &r), Verdict::allow());
    }

    #[test]
    fn routing_keys_in_the_template_need_a_setter() {
        let s = r#"{"routingKeySetters":{"serviceAccounts":["ci:release-bot"]}}"#;
        let sha = "4f2a6c1d9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a49";
        let r = release(
            chart(json!({"event.toolkit.fluxcd.io/commit": sha})),
            None,
            "bob",
        );
        assert!(run(s, &r).message.unwrap().starts_with(
            "spec.chart.metadata.annotations[event.toolkit.fluxcd.io/commit] chooses which Git \
             commit receives the commit status, so only the identities"
        ));
        let bot = "system:serviceaccount:ci:release-bot";
        let r = release(
            chart(json!({"event.toolkit.fluxcd.io/commit": sha})),
            None,
            bot,
        );
        assert_eq!(run(s, &r), Verdict::allow());
    }

    #[test]
    fn a_malformed_template_is_refused_by_field() {
        let r = release(
            chart(json!({"event.toolkit.fluxcd.io/replicas": 3})),
            None,
            "alice",
        );
        assert_eq!(
            run("{}", &r).message.as_deref(),
            Some(
                "cannot read the HelmRelease apps/podinfo: \
                 spec.chart.metadata.annotations[\"event.toolkit.fluxcd.io/replicas\"] must be a \
                 string, not a number; quote the value in YAML (e.g. \"true\", \"42\")"
            )
        );
    }
}
