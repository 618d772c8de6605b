//! Builders for the unit tests: ASO objects, requests, recorded Namespaces
//! and objects (for conformance's `RecordedCluster`).

pub use conformance::cluster::Recorded;
pub use conformance::RecordedCluster;
use guard_core::testing::RequestBuilder;
pub use guard_core::NoCluster;
use guard_core::{AdmissionRequest, Cluster, Context, Policy, Timestamp, Verdict};

use serde_json::{json, Value};

use crate::{AsoReconcile, Settings};

pub const ALICE: &str = "alice@example.com";
pub const ASO: &str =
    "system:serviceaccount:azureserviceoperator-system:azureserviceoperator-default";

/// A FlexibleServer `orders-db` in namespace `shop` with these annotations
/// (a JSON object) and finalizers.
pub fn server(annotations: Value, finalizers: &[&str]) -> Value {
    json!({
        "apiVersion": "dbforpostgresql.azure.com/v1api20230601preview",
        "kind": "FlexibleServer",
        "metadata": {
            "name": "orders-db", "namespace": "shop", "labels": {"tier": "data"},
            "annotations": annotations, "finalizers": finalizers
        },
        "spec": {"location": "westeurope", "version": "16"}
    })
}

/// `object` as ASO leaves it once it has taken over: its status written.
pub fn taken_over(mut object: Value) -> Value {
    object["status"] =
        json!({"conditions": [{"type": "Ready", "status": "True", "reason": "Succeeded"}]});
    object
}

/// A request by `user` in namespace `shop`, with the groups every
/// authenticated user has.
fn review(op: &str, user: &str, object: Option<Value>, old: Option<Value>) -> RequestBuilder {
    RequestBuilder::new(op)
        .uid("0b7e5f0c-1d2e-4f3a-9b8c-7d6e5f4a3b2c")
        .namespace("shop")
        .user(user, &["system:authenticated"])
        .object(object.unwrap_or(Value::Null))
        .old_object(old.unwrap_or(Value::Null))
}

pub fn request(
    op: &str,
    user: &str,
    object: Option<Value>,
    old: Option<Value>,
) -> AdmissionRequest {
    review(op, user, object, old)
        .kind(
            "dbforpostgresql.azure.com",
            "v1api20230601preview",
            "FlexibleServer",
        )
        .resource(
            "dbforpostgresql.azure.com",
            "v1api20230601preview",
            "flexibleservers",
        )
        .name("orders-db")
        .build()
}

/// A Namespace object named `name` with an optional reconcile-policy.
pub fn namespace(name: &str, policy: Option<&str>) -> Value {
    let annotations = match policy {
        Some(p) => json!({ crate::values::RECONCILE_POLICY: p }),
        None => json!({}),
    };
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "annotations": annotations}})
}

pub fn namespace_request(op: &str, object: Option<Value>, old: Option<Value>) -> AdmissionRequest {
    review(op, ALICE, object, old)
        .kind("", "v1", "Namespace")
        .resource("", "v1", "namespaces")
        .name("shop")
        .build()
}

/// Namespace `name` with an optional reconcile-policy, recorded.
pub fn with_namespace(name: &str, policy: Option<&str>) -> [Recorded; 1] {
    [Recorded::of(namespace(name, policy))]
}

/// Namespace `name`, every lookup of which fails with `error`.
pub fn failing_namespace(name: &str, error: &str) -> [Recorded; 1] {
    [Recorded::failing("v1", "Namespace", "", name, error)]
}

/// The error the policy reads from a Namespace lookup that [`failing_namespace`] records.
pub fn namespace_lookup_error(name: &str, error: &str) -> guard_core::ClusterError {
    conformance::cluster::callback_failure(
        &conformance::cluster::ApiStatus::of(error, "v1", "Namespace", name)
            .as_policy_server_says(),
    )
}

/// ASO objects (with their `apiVersion`) as the cluster holds them.
pub fn recorded(objects: Vec<Value>) -> Vec<Recorded> {
    objects.into_iter().map(Recorded::of).collect()
}

pub fn eval(request: &AdmissionRequest, settings: Value, cluster: &dyn Cluster) -> Verdict {
    let settings: Settings =
        guard_core::settings::parse(&serde_json::to_vec(&settings).unwrap()).unwrap();
    AsoReconcile::evaluate(
        request,
        &settings,
        &Context::new(Timestamp::UNIX_EPOCH, cluster),
    )
}

pub fn message(v: &Verdict) -> &str {
    assert!(!v.allowed, "expected a refusal, got {v:?}");
    v.message.as_deref().unwrap()
}

/// The one warning containing `needle`.
pub fn warning<'a>(v: &'a Verdict, needle: &str) -> &'a str {
    let found: Vec<&String> = v.warnings.iter().filter(|w| w.contains(needle)).collect();
    assert_eq!(
        found.len(),
        1,
        "one warning with {needle:?} expected in {:?}",
        v.warnings
    );
    found[0]
}

/// The decision on `request`, before render: what flow tests assert.
pub fn decide(
    request: &AdmissionRequest,
    settings: Value,
    cluster: &dyn Cluster,
) -> crate::decision::Decision {
    let settings: Settings =
        guard_core::settings::parse(&serde_json::to_vec(&settings).unwrap()).unwrap();
    crate::decide::decide(
        request,
        &settings,
        &Context::new(Timestamp::UNIX_EPOCH, cluster),
    )
}

/// `FlexibleServer shop/orders-db`, as decisions name it.
pub fn orders_db() -> crate::decision::Subject {
    crate::decision::Subject {
        kind: "FlexibleServer".into(),
        resource: "flexibleservers.dbforpostgresql.azure.com".into(),
        namespace: "shop".into(),
        name: "orders-db".into(),
    }
}

/// Random object texts for the one-pass readers' agreement tests: members
/// the readers read, repeated, null, of the wrong type, escaped, nested to
/// either side of the depth a `Value` allows, numbers it cannot hold.
pub struct RandomObjects(guard_core::testing::Rng);

impl RandomObjects {
    pub fn new(seed: u64) -> Self {
        Self(guard_core::testing::Rng::new(seed))
    }

    fn below(&mut self, n: usize) -> usize {
        self.0.below(n)
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        self.0.pick(from).copied().unwrap()
    }

    fn string(&mut self) -> &'static str {
        self.pick(&[
            r#""a""#,
            r#""""#,
            r#""\u0061b""#,
            r#""\ud83d\ude00""#,
            r#""\ud800""#,
            r#""uid-1""#,
            r#""2026-11-20T10:00:00Z""#,
        ])
    }

    /// Containers nested `depth` deep around a number.
    fn deep(depth: usize) -> String {
        format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
    }

    fn scalar(&mut self) -> String {
        match self.below(6) {
            0 => self.string().to_string(),
            1 => self
                .pick(&["1", "-0.0", "1e400", "12345678901234567890123", "true"])
                .to_string(),
            2 => "null".to_string(),
            3 => Self::deep(124 + self.below(4)),
            4 => "{}".to_string(),
            _ => format!("[{}]", self.string()),
        }
    }

    /// Two times in `n`, `null` or another value where a map belongs.
    fn odd(&mut self, n: usize) -> Option<String> {
        match self.below(n) {
            0 => Some("null".to_string()),
            1 => Some(self.scalar()),
            _ => None,
        }
    }

    /// A map of strings as labels or annotations carry it, or not quite.
    fn string_map(&mut self, keys: &[&str]) -> String {
        if let Some(odd) = self.odd(12) {
            return odd;
        }
        let entries: Vec<String> = (0..self.below(5))
            .map(|_| {
                let key = self.pick(keys);
                let value = if self.below(8) == 0 {
                    self.scalar()
                } else {
                    self.string().to_string()
                };
                format!(r#""{key}":{value}"#)
            })
            .collect();
        format!("{{{}}}", entries.join(","))
    }

    fn managed_fields(&mut self, annotation: &str) -> String {
        if self.below(6) == 0 {
            return self.scalar();
        }
        let entries: Vec<String> = (0..self.below(3))
            .map(|_| {
                let manager = self.pick(&[r#""kustomize-controller""#, "1", r#""kubectl""#]);
                let operation = self.pick(&[r#""Apply""#, r#""Update""#, "null"]);
                let sub = self.pick(&[r#""""#, r#""status""#, "null"]);
                let fields = match self.below(3) {
                    0 => format!(r#"{{"f:metadata":{{"f:annotations":{{"f:{annotation}":{{}}}}}}}}"#),
                    1 => r#"{"f:spec":{}}"#.to_string(),
                    _ => self.scalar(),
                };
                format!(
                    r#"{{"manager":{manager},"operation":{operation},"subresource":{sub},"fieldsV1":{fields}}}"#
                )
            })
            .collect();
        format!("[{}]", entries.join(","))
    }

    fn metadata(&mut self, labels: &[&str], annotations: &[&str]) -> String {
        if let Some(odd) = self.odd(16) {
            return odd;
        }
        let members: Vec<String> = (0..self.below(9))
            .map(|_| {
                let name = self.pick(&[
                    "name",
                    "generateName",
                    "namespace",
                    "uid",
                    "labels",
                    "annotations",
                    "finalizers",
                    "deletionTimestamp",
                    "managedFields",
                    "resourceVersion",
                    "metadata",
                ]);
                let value = match name {
                    "labels" => self.string_map(labels),
                    "annotations" => self.string_map(annotations),
                    "managedFields" => {
                        let annotation = self.pick(annotations).to_string();
                        self.managed_fields(&annotation)
                    }
                    "finalizers" if self.below(2) == 0 => {
                        format!("[{},{}]", self.string(), self.string())
                    }
                    _ if self.below(3) > 0 => self.string().to_string(),
                    _ => self.scalar(),
                };
                format!("{name:?}:{value}")
            })
            .collect();
        format!("{{{}}}", members.join(","))
    }

    /// An object, its metadata's labels and annotations drawn from these keys.
    pub fn object(&mut self, labels: &[&str], annotations: &[&str]) -> String {
        let members: Vec<String> = (0..self.below(4))
            .map(|_| match self.below(4) {
                0 | 1 => format!(r#""metadata":{}"#, self.metadata(labels, annotations)),
                2 => format!(r#""spec":{}"#, self.scalar()),
                _ => format!(r#""kind":{}"#, self.string()),
            })
            .collect();
        format!("{{{}}}", members.join(","))
    }
}
