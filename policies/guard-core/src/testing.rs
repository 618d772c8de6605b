//! One way for unit tests to build an [`AdmissionRequest`], and the one
//! seeded generator ([`Rng`]) of the tests and the fuzzer.
//!
//! Compiled only for guard-core's own tests and for crates that enable the
//! `testing` feature, which the policies do in `[dev-dependencies]` only and
//! the fuzzer (a host binary) in its own: it is never part of a policy
//! module, and nothing else in guard-core uses it.
//!
//! The builder writes the request as kube-apiserver sends it, JSON with only
//! the fields set, and [`RequestBuilder::build`] reads it the way the policies
//! do, so `object`, `oldObject` and `options` stay raw JSON read on demand.

pub mod rng;

use serde_json::{json, Map, Value};

use crate::AdmissionRequest;

pub use rng::Rng;

/// An admission request under construction: `uid` `"1"` and the operation,
/// then each field a setter names. A field set twice keeps the last value.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct RequestBuilder {
    fields: Map<String, Value>,
}

impl RequestBuilder {
    /// A request with `"uid": "1"` and this operation (`"CREATE"`,
    /// `"UPDATE"`, `"DELETE"` or `"CONNECT"`), nothing else.
    pub fn new(operation: &str) -> Self {
        Self { fields: Map::new() }
            .set("uid", json!("1"))
            .set("operation", json!(operation))
    }

    pub fn uid(self, uid: &str) -> Self {
        self.set("uid", json!(uid))
    }

    /// `kind`, the group, version and kind of the object.
    pub fn kind(self, group: &str, version: &str, kind: &str) -> Self {
        self.set(
            "kind",
            json!({"group": group, "version": version, "kind": kind}),
        )
    }

    /// `resource`, the group, version and resource (plural) written to.
    pub fn resource(self, group: &str, version: &str, resource: &str) -> Self {
        self.set(
            "resource",
            json!({"group": group, "version": version, "resource": resource}),
        )
    }

    pub fn sub_resource(self, sub_resource: &str) -> Self {
        self.set("subResource", json!(sub_resource))
    }

    pub fn name(self, name: &str) -> Self {
        self.set("name", json!(name))
    }

    pub fn namespace(self, namespace: &str) -> Self {
        self.set("namespace", json!(namespace))
    }

    /// `userInfo` with this username and these groups.
    pub fn user(self, username: &str, groups: &[&str]) -> Self {
        self.set("userInfo", json!({"username": username, "groups": groups}))
    }

    /// `userInfo` with this username and no `groups` field at all.
    pub fn username(self, username: &str) -> Self {
        self.set("userInfo", json!({ "username": username }))
    }

    /// `object`, as given: `Value::Null` writes an explicit `null`.
    pub fn object(self, object: Value) -> Self {
        self.set("object", object)
    }

    /// `oldObject`, as given: `Value::Null` writes an explicit `null`.
    pub fn old_object(self, old_object: Value) -> Self {
        self.set("oldObject", old_object)
    }

    /// `options`, the `CreateOptions`, `UpdateOptions` or `DeleteOptions`.
    pub fn options(self, options: Value) -> Self {
        self.set("options", options)
    }

    pub fn dry_run(self, dry_run: bool) -> Self {
        self.set("dryRun", json!(dry_run))
    }

    /// The request as JSON, for tests that edit it further or send it as text.
    pub fn json(self) -> Value {
        Value::Object(self.fields)
    }

    /// The request read from its JSON, as the policies receive it.
    ///
    /// # Panics
    ///
    /// When the JSON is not a request, e.g. an unknown operation.
    #[expect(
        clippy::expect_used,
        reason = "a test helper: a request that cannot be read is a broken test"
    )]
    pub fn build(self) -> AdmissionRequest {
        serde_json::from_value(self.json()).expect("the builder writes a readable request")
    }

    fn set(mut self, field: &str, value: Value) -> Self {
        self.fields.insert(field.to_string(), value);
        self
    }
}

/// `value` as a cluster would answer a lookup with it, for test clusters.
#[expect(
    clippy::expect_used,
    reason = "test support: a Value with string keys always serializes"
)]
pub fn raw(value: &Value) -> crate::ClusterObject {
    serde_json::value::to_raw_value(value).expect("a Value always serializes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Operation, Which};

    #[test]
    fn only_the_fields_set_are_written() {
        assert_eq!(
            RequestBuilder::new("DELETE").json(),
            json!({"uid": "1", "operation": "DELETE"})
        );
        assert_eq!(
            RequestBuilder::new("UPDATE")
                .uid("u")
                .kind("", "v1", "Namespace")
                .resource("", "v1", "namespaces")
                .sub_resource("status")
                .name("shop")
                .namespace("shop")
                .user("alice", &["sre", "system:authenticated"])
                .object(json!({"metadata": {"name": "shop"}}))
                .old_object(Value::Null)
                .options(json!({"fieldManager": "kubectl"}))
                .dry_run(true)
                .json(),
            json!({
                "uid": "u", "operation": "UPDATE",
                "kind": {"group": "", "version": "v1", "kind": "Namespace"},
                "resource": {"group": "", "version": "v1", "resource": "namespaces"},
                "subResource": "status", "name": "shop", "namespace": "shop",
                "userInfo": {"username": "alice", "groups": ["sre", "system:authenticated"]},
                "object": {"metadata": {"name": "shop"}}, "oldObject": null,
                "options": {"fieldManager": "kubectl"}, "dryRun": true
            })
        );
        assert_eq!(
            RequestBuilder::new("CREATE").username("bob").json()["userInfo"],
            json!({"username": "bob"})
        );
    }

    #[test]
    fn the_built_request_reads_its_objects_on_demand() {
        let request = RequestBuilder::new("UPDATE")
            .kind("kustomize.toolkit.fluxcd.io", "v1", "Kustomization")
            .name("apps")
            .user("alice", &["sre"])
            .object(json!({"metadata": {"annotations": {"k": "v"}}}))
            .old_object(Value::Null)
            .options(json!({"fieldManager": "flux"}))
            .build();
        assert_eq!(request.operation, Operation::Update);
        assert_eq!(
            request.group_kind().to_string(),
            "Kustomization.kustomize.toolkit.fluxcd.io"
        );
        assert_eq!(request.user_info.groups, ["sre"]);
        assert_eq!(
            request.raw(Which::Object).map(|raw| raw.get()),
            Some(r#"{"metadata":{"annotations":{"k":"v"}}}"#)
        );
        let meta = request.metadata(Which::Object).unwrap().unwrap();
        assert_eq!(meta.annotation("k"), Some("v"));
        assert!(request.raw(Which::OldObject).is_none());
        assert_eq!(request.field_manager().unwrap(), "flux");
        assert!(!request.dry_run);
    }
}
