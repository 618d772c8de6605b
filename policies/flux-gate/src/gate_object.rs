//! Gate objects (`gating.toolkit.fluxcd.io/v1alpha1`, kind `Gate`): reading
//! them from the cluster, and validating their CREATE and UPDATE.
//!
//! The RFC's vocabulary: `spec.default` (`opened` or `closed`), `spec.window`
//! and `spec.interval` (Go durations), opened and closed by annotating
//! `open.gate.fluxcd.io/requestedAt` or `close.gate.fluxcd.io/requestedAt`
//! with an RFC 3339 instant.

use guard_core::context::{self, Cluster, ShapeError};
use guard_core::duration::DurationError;
use guard_core::request::{null_default, ReadError};
use guard_core::{duration, ClusterError, Metadata};
use jiff::{SignedDuration, Timestamp};
use serde::Deserialize;
use serde_json::Value;

use crate::gate::ObjectGate;
use crate::gating::{CLOSE_ANNOTATION, GATE_API_VERSION, GATE_KIND, OPEN_ANNOTATION};

/// The parts of a Gate the policy reads; fields stay JSON so that a wrong
/// type is reported with the field's name.
#[derive(Debug, Default, Deserialize)]
pub struct GateView {
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: Metadata,
    #[serde(default)]
    pub spec: Option<Value>,
}

const MAX_WINDOW: SignedDuration = SignedDuration::from_hours(8784);

/// Why a Gate cannot be read, naming the field at fault. Its words are in
/// `render`.
#[derive(Debug, PartialEq)]
pub enum GateError {
    /// The request's object does not read.
    Read(ReadError),
    /// The looked-up object does not read as a Gate.
    Shape(ShapeError),
    /// `spec` is not an object.
    SpecNotAnObject,
    /// There is no `spec`.
    NoSpec,
    /// `spec.<field>` is not a string; what it is.
    NotAString { field: &'static str, found: Value },
    /// `spec.default` is neither `opened` nor `closed`.
    Default(String),
    /// There is no `spec.default`.
    NoDefault,
    /// `spec.window` is not a Go duration.
    Window(DurationError),
    /// `spec.window` is out of range.
    WindowRange(String),
    /// There is no `spec.window`.
    NoWindow,
    /// `spec.interval` is not a Go duration.
    Interval(DurationError),
    /// `spec.interval` is not positive.
    IntervalNotPositive(String),
    /// The value of the request annotation `key` is not an RFC 3339 instant.
    NotAnInstant { key: &'static str, value: String },
}

/// Reads a Gate from its metadata and `spec` (taken, so that a value of
/// the wrong type is kept as it was found); the error names the field at
/// fault.
pub fn read(
    metadata: &Metadata,
    spec: Option<Value>,
    namespace: &str,
) -> Result<ObjectGate, Box<GateError>> {
    let mut spec = match spec {
        Some(Value::Object(spec)) => spec,
        Some(_) => return Err(Box::new(GateError::SpecNotAnObject)),
        None => return Err(Box::new(GateError::NoSpec)),
    };
    let mut text = |field: &'static str| -> Result<Option<String>, Box<GateError>> {
        match spec.get_mut(field).map(Value::take) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(found) => Err(Box::new(GateError::NotAString { field, found })),
        }
    };
    let default_open = match text("default")?.as_deref() {
        Some("opened") => true,
        Some("closed") => false,
        Some(other) => return Err(Box::new(GateError::Default(other.to_string()))),
        None => return Err(Box::new(GateError::NoDefault)),
    };
    let window = match text("window")? {
        Some(w) => {
            let nanos = duration::parse(&w).map_err(|e| Box::new(GateError::Window(e)))?;
            let window = SignedDuration::from_nanos(nanos);
            if window.is_negative() || window > MAX_WINDOW {
                return Err(Box::new(GateError::WindowRange(w)));
            }
            window
        }
        None => return Err(Box::new(GateError::NoWindow)),
    };
    if let Some(i) = text("interval")? {
        let nanos = duration::parse(&i).map_err(|e| Box::new(GateError::Interval(e)))?;
        if nanos <= 0 {
            return Err(Box::new(GateError::IntervalNotPositive(i)));
        }
    }
    let requested = |key: &'static str| -> Result<Option<Timestamp>, Box<GateError>> {
        metadata
            .annotation(key)
            .map(|v| {
                guard_core::rfc3339::parse(v.trim()).map_err(|_| {
                    Box::new(GateError::NotAnInstant {
                        key,
                        value: v.to_string(),
                    })
                })
            })
            .transpose()
    };
    Ok(ObjectGate {
        namespace: namespace.to_string(),
        name: metadata.name.clone(),
        default_open,
        window,
        open_at: requested(OPEN_ANNOTATION)?,
        close_at: requested(CLOSE_ANNOTATION)?,
        skew: SignedDuration::ZERO,
    })
}

/// Why a Gate being written is refused.
#[derive(Debug, PartialEq)]
pub enum WriteError {
    /// Malformed; the error names the field at fault.
    Invalid(Box<GateError>),
    /// An open or close request further ahead of the policy's clock than
    /// the clock-skew tolerance.
    Ahead {
        key: &'static str,
        at: Timestamp,
        gate: Box<ObjectGate>,
    },
    /// The applier of a Flux object (told by its field manager) writes a
    /// Gate so that it is open at `at`, when the stored Gate would be
    /// closed: a commit would open the gate it is held by.
    OpenedFromGit {
        at: Timestamp,
        manager: String,
        gate: Box<ObjectGate>,
    },
    /// A Gate closed now is deleted: what it holds would pass once the
    /// references to it are dropped, or at once under
    /// `onGateLookupError: allow`.
    ClosedDeleted { gate: Box<ObjectGate> },
}

/// The first instant from `now` at which `new` is open while `old` (the
/// stored Gate; `None` when it could not be read, which holds like a closed
/// gate) is closed. Both are constant between the instants their requests
/// take and lose effect, so those instants and `now` are all to compare.
pub fn opens_at(old: Option<&ObjectGate>, new: &ObjectGate, now: Timestamp) -> Option<Timestamp> {
    let edges = |g: &ObjectGate| {
        [g.open_at, g.close_at]
            .into_iter()
            .flatten()
            .flat_map(|at| [Some(g.takes_effect(at)), at.checked_add(g.window).ok()])
            .flatten()
            .collect::<Vec<_>>()
    };
    let mut instants: Vec<Timestamp> = edges(new);
    instants.extend(old.map(edges).unwrap_or_default());
    instants.retain(|t| *t > now);
    instants.push(now);
    instants.sort();
    instants
        .into_iter()
        .find(|t| new.state_at(*t).open && !old.is_some_and(|o| o.state_at(*t).open))
}

/// Checks a Gate being written: well formed, and no request from the future
/// beyond the clock-skew tolerance (a future instant would silently
/// pre-schedule a state change nobody sees).
pub fn check_write(
    metadata: &Metadata,
    spec: Option<Value>,
    namespace: &str,
    now: Timestamp,
    skew: SignedDuration,
) -> Result<ObjectGate, WriteError> {
    let mut gate = read(metadata, spec, namespace).map_err(WriteError::Invalid)?;
    gate.skew = skew;
    let limit = now.checked_add(skew).unwrap_or(Timestamp::MAX);
    for (key, at) in [
        (OPEN_ANNOTATION, gate.open_at),
        (CLOSE_ANNOTATION, gate.close_at),
    ] {
        if let Some(at) = at.filter(|at| *at > limit) {
            let gate = Box::new(gate);
            return Err(WriteError::Ahead { key, at, gate });
        }
    }
    Ok(gate)
}

/// Why a Gate object could not be used.
#[derive(Debug, PartialEq)]
pub enum LookupError {
    /// The cluster answered that it does not exist.
    NotFound,
    /// A binding names a gate the settings do not declare.
    NotDeclared,
    /// The lookup failed: the cluster's error.
    Unreadable(ClusterError),
    /// The object is malformed: the field at fault.
    Malformed(Box<GateError>),
}

/// Looks a Gate object up; the error says why it could not be used.
pub fn lookup(
    cluster: &dyn Cluster,
    namespace: &str,
    name: &str,
) -> Result<ObjectGate, LookupError> {
    let object = context::ObjectRef {
        api_version: GATE_API_VERSION,
        kind: GATE_KIND,
        namespace,
        name,
    };
    match cluster.get(&object) {
        Ok(Some(raw)) => {
            let view: GateView = context::read(&raw)
                .map_err(|e| LookupError::Malformed(Box::new(GateError::Shape(e))))?;
            let mut gate =
                read(&view.metadata, view.spec, namespace).map_err(LookupError::Malformed)?;
            name.clone_into(&mut gate.name);
            Ok(gate)
        }
        Ok(None) => Err(LookupError::NotFound),
        Err(e) => Err(LookupError::Unreadable(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::tests::ts;
    use crate::gate::{self, Gate};
    use crate::gating::GATING_GROUP;
    use crate::test_support::{eval, freeze};
    use conformance::cluster::Recorded;
    use conformance::RecordedCluster;
    use guard_core::AdmissionRequest;
    use guard_core::NoCluster;
    use serde_json::json;

    fn view(v: Value) -> GateView {
        serde_json::from_value(v).unwrap()
    }

    fn gate(spec: Value, annotations: Value) -> GateView {
        view(
            json!({"metadata": {"name": "sre-approval", "namespace": "flux-system", "annotations": annotations}, "spec": spec}),
        )
    }

    fn read_view(v: GateView, namespace: &str) -> Result<ObjectGate, Box<GateError>> {
        read(&v.metadata, v.spec, namespace)
    }

    fn write(
        v: GateView,
        namespace: &str,
        now: Timestamp,
        skew: SignedDuration,
    ) -> Result<ObjectGate, WriteError> {
        check_write(&v.metadata, v.spec, namespace, now, skew)
    }

    #[test]
    fn reads_the_rfc_fields() {
        let g = read_view(
            gate(
                json!({"interval": "30s", "default": "closed", "window": "1h"}),
                json!({"open.gate.fluxcd.io/requestedAt": "2026-03-26T10:00:00Z"}),
            ),
            "flux-system",
        )
        .unwrap();
        assert!(!g.default_open);
        assert_eq!(g.window, SignedDuration::from_hours(1));
        assert_eq!(g.open_at, Some(ts("2026-03-26T10:00:00Z")));
        assert_eq!(g.close_at, None);
        assert_eq!(g.label(), "flux-system/sre-approval");
    }

    #[test]
    fn refusals_name_the_field() {
        let ok_spec = json!({"default": "opened", "window": "24h"});
        let cases = [
            (json!(null), json!({}), "spec: required"),
            (json!("x"), json!({}), "spec: must be an object"),
            (json!({"window": "1h"}), json!({}), "spec.default: required: opened or closed"),
            (json!({"default": "open", "window": "1h"}), json!({}), "spec.default: \"open\" is not accepted; use opened or closed"),
            (json!({"default": true, "window": "1h"}), json!({}), "spec.default: must be a string (found true)"),
            (json!({"default": "closed"}), json!({}), "spec.window: required"),
            (json!({"default": "closed", "window": "1d"}), json!({}), "spec.window: invalid duration \"1d\""),
            (json!({"default": "closed", "window": "-1h"}), json!({}), "spec.window: \"-1h\" must be from 0s to 8784h"),
            (json!({"default": "closed", "window": "1h", "interval": "0s"}), json!({}), "spec.interval: \"0s\" must be more than 0s"),
            (json!({"default": "closed", "window": "1h", "interval": "30"}), json!({}), "spec.interval: invalid duration \"30\": missing unit"),
            (ok_spec.clone(), json!({"open.gate.fluxcd.io/requestedAt": "yesterday"}), "annotation open.gate.fluxcd.io/requestedAt: \"yesterday\" is not an RFC 3339 instant"),
            (ok_spec, json!({"close.gate.fluxcd.io/requestedAt": "2026-03-26 10:00"}), "annotation close.gate.fluxcd.io/requestedAt: \"2026-03-26 10:00\""),
        ];
        for (spec, annotations, want) in cases {
            let err = read_view(gate(spec.clone(), annotations), "flux-system")
                .unwrap_err()
                .to_string();
            assert!(err.starts_with(want), "{spec}: {err}");
        }
    }

    #[test]
    fn future_requests_beyond_the_tolerance_are_refused() {
        let now = ts("2026-11-20T10:00:00Z");
        let skew = SignedDuration::from_mins(5);
        let at = |t: &str| {
            gate(
                json!({"default": "closed", "window": "1h"}),
                json!({"open.gate.fluxcd.io/requestedAt": t}),
            )
        };
        let ahead = write(at("2026-11-20T10:05:00Z"), "flux-system", now, skew).unwrap();
        // Made already: open now, for its window from its own instant.
        let ahead = Gate::Object(ahead);
        let state = ahead.state_at(now);
        assert!(state.open);
        assert_eq!(
            state.why,
            gate::Why::Request {
                action: gate::Action::Open,
                at: ts("2026-11-20T10:05:00Z"),
                until: ts("2026-11-20T11:05:00Z")
            }
        );
        // Offsets and fractions name the same instants: 10:04:59.5Z is
        // within the tolerance, 11:00:00.000000001Z (as +01:00) beyond it,
        // and a far-future instant is refused rather than overflowing.
        let offset = write(at("2026-11-20T11:04:59.5+01:00"), "flux-system", now, skew);
        assert_eq!(
            offset.map(|g| g.open_at),
            Ok(Some(ts("2026-11-20T10:04:59.5Z")))
        );
        for beyond in [
            "2026-11-20T11:05:00.000000001+01:00",
            "9999-12-31T23:59:59Z",
        ] {
            assert!(
                write(at(beyond), "flux-system", now, skew).is_err(),
                "{beyond}"
            );
        }
        let err = write(at("2026-11-20T12:00:00Z"), "flux-system", now, skew).unwrap_err();
        assert!(
            matches!(err, WriteError::Ahead { key: OPEN_ANNOTATION, at, .. } if at == ts("2026-11-20T12:00:00Z")),
            "{err:?}"
        );
    }

    #[test]
    fn lookups() {
        // Gate `a/g` holding `object`.
        let stored = |object: Value| {
            let mut object = object;
            object["apiVersion"] = json!(GATE_API_VERSION);
            object["kind"] = json!(GATE_KIND);
            object["metadata"]["namespace"] = json!("a");
            object["metadata"]["name"] = json!("g");
            [Recorded::of(object)]
        };
        let found = stored(json!({"spec": {"default": "opened", "window": "1h"}}));
        let found = RecordedCluster::new(&found);
        assert!(lookup(&found, "a", "g").unwrap().default_open);
        assert_eq!(
            lookup(&RecordedCluster::new(&[]), "a", "g").unwrap_err(),
            LookupError::NotFound
        );
        let down = [Recorded::failing(
            GATE_API_VERSION,
            GATE_KIND,
            "a",
            "g",
            "connection refused",
        )];
        let Err(LookupError::Unreadable(e)) = lookup(&RecordedCluster::new(&down), "a", "g") else {
            panic!("not unreadable")
        };
        assert_eq!(e.to_string(), "connection refused");
        let bad = stored(json!({"spec": {"default": "maybe", "window": "1h"}}));
        assert!(matches!(lookup(&RecordedCluster::new(&bad), "a", "g"),
            Err(LookupError::Malformed(e)) if *e == GateError::Default("maybe".into())));
        let worse = [Recorded {
            object: Some(json!({"metadata": 5})),
            error: None,
            ..down[0].clone()
        }];
        assert!(matches!(
            lookup(&RecordedCluster::new(&worse), "a", "g"),
            Err(LookupError::Malformed(e)) if matches!(*e, GateError::Shape(_))
        ));
    }

    #[test]
    fn gate_objects_are_validated_not_held() {
        let req: AdmissionRequest = serde_json::from_value(json!({
            "operation": "CREATE", "name": "g", "namespace": "flux-system",
            "kind": {"group": GATING_GROUP, "version": "v1alpha1", "kind": GATE_KIND},
            "object": {"metadata": {"name": "g", "namespace": "flux-system"}, "spec": {"default": "shut", "window": "1h"}}
        }))
        .unwrap();
        let v = eval(&req, &freeze(), &NoCluster);
        assert_eq!(
            v.message.unwrap(),
            "Gate flux-system/g: spec.default: \"shut\" is not accepted; use opened or closed"
        );
    }

    #[test]
    fn a_write_opens_a_gate_where_the_stored_one_is_closed() {
        let now = ts("2026-11-20T10:30:00Z");
        let stored = ObjectGate {
            namespace: "flux-system".into(),
            name: "sre-approval".into(),
            default_open: false,
            window: SignedDuration::from_hours(1),
            open_at: Some(ts("2026-11-20T10:00:00Z")),
            close_at: None,
            skew: SignedDuration::ZERO,
        };
        // The same Gate, and closing it, open nothing.
        assert_eq!(opens_at(Some(&stored), &stored, now), None);
        let closed = ObjectGate {
            close_at: Some(ts("2026-11-20T10:30:00Z")),
            ..stored.clone()
        };
        assert_eq!(opens_at(Some(&stored), &closed, now), None);
        // A longer window keeps the request open past its end.
        let longer = ObjectGate {
            window: SignedDuration::from_hours(2),
            ..stored.clone()
        };
        assert_eq!(
            opens_at(Some(&stored), &longer, now),
            Some(ts("2026-11-20T11:00:00Z"))
        );
        // Open by default: open from its request's end on.
        let opened = ObjectGate {
            default_open: true,
            ..stored.clone()
        };
        assert_eq!(
            opens_at(Some(&stored), &opened, now),
            Some(ts("2026-11-20T11:00:00Z"))
        );
        // Dropping a close request in effect opens it at once.
        assert_eq!(opens_at(Some(&closed), &stored, now), Some(now));
        // An unreadable stored Gate holds like a closed one.
        assert_eq!(opens_at(None, &stored, now), Some(now));
    }
}
