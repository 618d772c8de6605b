//! The one waPC adapter: registers a [`Policy`] with the guest runtime and
//! supplies what the pure evaluator may not reach itself, the WASI wall clock
//! and Kubewarden's Kubernetes host calls.
//!
//! A policy crate registers itself with `guard_core::kubewarden_policy!(ItsPolicy);`.

use kubewarden_policy_sdk::wapc_guest::{self, CallResult};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::context::{
    is_not_found, list_items, unreadable_reply, Cluster, ClusterError, ClusterObject, Context,
    ObjectRef,
};
use crate::policy::{
    clock_failure, prejudge, validate_prejudged_json, validate_settings_json, Policy, Prejudged,
    ALLOWED_JSON,
};

pub fn register<P: Policy>() {
    wapc_guest::register_function("validate", validate::<P>);
    wapc_guest::register_function("validate_settings", validate_settings::<P>);
    wapc_guest::register_function(
        "protocol_version",
        kubewarden_policy_sdk::protocol_version_guest,
    );
}

fn validate<P: Policy>(payload: &[u8]) -> CallResult {
    // A request that is nothing to the policy is answered before the clock
    // is read.
    let prejudged = prejudge::<P>(payload);
    if matches!(prejudged, Prejudged::Unconcerned) {
        return Ok(ALLOWED_JSON.to_vec());
    }
    Ok(match wall_clock() {
        Ok(now) => {
            validate_prejudged_json::<P>(payload, prejudged, &Context::new(now, &HostCluster))
        }
        Err(cause) => clock_failure::<P>(&cause),
    })
}

#[link(wasm_import_module = "wasi_snapshot_preview1")]
extern "C" {
    /// WASI preview 1: writes the clock's nanoseconds since 1970 to `time`
    /// and returns an errno (0 on success).
    fn clock_time_get(id: u32, precision: u64, time: *mut u64) -> u16;
}

/// The WASI wall clock (policy-server's real clock; the harness pins it),
/// read through the import itself: `SystemTime::now()` panics when the host
/// answers with an errno (wasmtime-wasi 48, `p1.rs` `clock_time_get`, gives
/// `overflow` for a clock past 2554), and a panic is a trap.
fn wall_clock() -> Result<jiff::Timestamp, crate::clock::ClockError> {
    const CLOCKID_REALTIME: u32 = 0;
    let mut nanos: u64 = 0;
    #[expect(
        unsafe_code,
        reason = "a WASI import; it writes one u64 through a pointer to a live local"
    )]
    // SAFETY: `nanos` outlives the call and is the only memory it writes.
    let errno = unsafe { clock_time_get(CLOCKID_REALTIME, 1, &mut nanos) };
    crate::clock::from_wasi(errno, nanos)
}

fn validate_settings<P: Policy>(payload: &[u8]) -> CallResult {
    Ok(validate_settings_json::<P>(payload))
}

/// The cluster as policy-server shows it through `kubernetes/*` host calls.
/// The request shapes are the SDK's (`GetResourceRequest`,
/// `ListAllResourcesRequest`, `ListResourcesByNamespaceRequest`); they are written out here because the SDK only
/// offers them typed over `k8s-openapi`, which would triple the module size.
struct HostCluster;

#[derive(Serialize)]
struct GetResource<'a> {
    api_version: &'a str,
    kind: &'a str,
    name: &'a str,
    namespace: Option<&'a str>,
    disable_cache: bool,
}

/// `ListAllResourcesRequest`, or `ListResourcesByNamespaceRequest` when a
/// namespace is given.
#[derive(Serialize)]
struct List<'a> {
    api_version: &'a str,
    kind: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    namespace: Option<&'a str>,
    label_selector: Option<&'a str>,
    field_selector: Option<&'a str>,
}

/// One Kubernetes host call; the reply's bytes as policy-server sent them.
fn host_call<T: Serialize>(operation: &str, request: &T) -> Result<Vec<u8>, ClusterError> {
    let msg = serde_json::to_vec(request).map_err(|e| ClusterError(e.to_string()))?;
    // wapc-guest prefixes the host's own message with "Host error: "; the
    // message is what policy-server said, so pass it on as it was sent.
    wapc_guest::host_call("kubewarden", "kubernetes", operation, &msg).map_err(|e| {
        let text = e.to_string();
        ClusterError(
            text.strip_prefix("Host error: ")
                .unwrap_or(&text)
                .to_string(),
        )
    })
}

impl Cluster for HostCluster {
    fn get(&self, object: &ObjectRef<'_>) -> Result<Option<ClusterObject>, ClusterError> {
        let request = GetResource {
            api_version: object.api_version,
            kind: object.kind,
            name: object.name,
            namespace: (!object.namespace.is_empty()).then_some(object.namespace),
            disable_cache: false,
        };
        match host_call("get_resource", &request) {
            // Checked as JSON once, here; no tree is built.
            Ok(reply) => String::from_utf8(reply)
                .map_err(unreadable_reply)
                .and_then(|text| RawValue::from_string(text).map_err(unreadable_reply))
                .map(Some),
            Err(e) if is_not_found(&e.0, object, request.namespace) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn list_all(&self, api_version: &str, kind: &str) -> Result<Vec<ClusterObject>, ClusterError> {
        self.list(api_version, kind, None)
    }

    fn list(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<ClusterObject>, ClusterError> {
        // A List reply (`ObjectList` serialized by policy-server): only
        // `items` is read, each item kept as its JSON text.
        list_items(&self.list_text(api_version, kind, namespace)?)
    }

    /// The reply as policy-server sent it.
    fn list_text(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<u8>, ClusterError> {
        let request = List {
            api_version,
            kind,
            namespace,
            label_selector: None,
            field_selector: None,
        };
        let operation = match namespace {
            Some(_) => "list_resources_by_namespace",
            None => "list_resources_all",
        };
        host_call(operation, &request)
    }
}
