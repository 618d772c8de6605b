//! The writes that stop change: a `spec` field that, set to `true`, makes a
//! kind's controller stop creating, rolling out or reconciling anything.
//! Incident responders write them to stop a bad change; a freeze lets them
//! through, and holds setting them back (resuming), which starts things
//! again.
//!
//! Writes that roll back are not here: `kubectl rollout undo` replaces a
//! Deployment's pod template (the model's `kubectl rollout undo` client), so
//! the deployment controller rolls out again, a change like any other.

use super::Source;

/// `spec.suspend`: the Flux toolkit kinds ([`super::kinds::Honours::SpecSuspend`]),
/// CronJob and Job.
pub const SUSPEND: &str = "suspend";

/// `spec.paused`: a Deployment's form of suspend.
pub const PAUSED: &str = "paused";

/// The stop fields of every kind not listed in [`STOPS`].
pub const ANY_KIND: &[&str] = &[SUSPEND];

/// The stop fields a kind's controller honours, when it has more than
/// [`ANY_KIND`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stops {
    pub group: &'static str,
    pub kind: &'static str,
    pub fields: &'static [&'static str],
    pub source: Source,
}

const DEPLOYMENT: &str = "kubernetes/kubectl `pkg/polymorphichelpers/objectpauser.go` \
     `defaultObjectPauser` (sets `Spec.Paused = true` on extensions/v1beta1 and apps \
     Deployments), `pkg/cmd/rollout/rollout_pause.go`, commit dee3483a; kubernetes/kubernetes \
     `pkg/controller/deployment/deployment_controller.go` `syncDeployment` (a paused Deployment \
     is only synced: scaled, never rolled out)";

/// Every kind with a stop field beyond `spec.suspend`. `spec.suspend` itself
/// is read on every kind: CronJob (kubernetes/kubernetes
/// `pkg/controller/cronjob/cronjob_controllerv2.go` `syncCronJob`), Job
/// (`pkg/controller/job/job_controller.go`, suspended Jobs run no pods) and
/// the Flux kinds.
pub const STOPS: &[Stops] = &[
    Stops {
        group: "apps",
        kind: "Deployment",
        fields: &[SUSPEND, PAUSED],
        source: Source::new(DEPLOYMENT),
    },
    Stops {
        group: "extensions",
        kind: "Deployment",
        fields: &[SUSPEND, PAUSED],
        source: Source::new(DEPLOYMENT),
    },
];

/// The `spec` fields that stop this kind's controller when `true`.
pub fn stop_fields(group: &str, kind: &str) -> &'static [&'static str] {
    STOPS
        .iter()
        .find(|s| s.group == group && s.kind == kind)
        .map_or(ANY_KIND, |s| s.fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deployment_pauses_everything_else_suspends() {
        assert_eq!(stop_fields("apps", "Deployment"), &[SUSPEND, PAUSED]);
        assert_eq!(stop_fields("batch", "CronJob"), &[SUSPEND]);
        assert_eq!(stop_fields("apps", "StatefulSet"), &[SUSPEND]);
        for s in STOPS {
            assert!(s.fields.contains(&SUSPEND) && !s.source.text().is_empty());
        }
    }
}
