//! A deliberately misbehaving policy: `settings.behaviour` picks what
//! `validate` does, so the harness can prove how it contains each failure;
//! `wapc_init` traps when the wall clock reads 2000-01-01T00:00:00Z.
//! Test code: panics and unbounded work are the point here.

use kubewarden_policy_sdk::wapc_guest::{self as guest, CallResult};
use serde_json::{json, Value};

#[expect(
    unsafe_code,
    reason = "`no_mangle` is how waPC finds the init function"
)]
#[no_mangle]
pub extern "C" fn wapc_init() {
    // `wapc_init` has no settings to pick a behaviour from; the wall clock is
    // its one input, and the harness pins it: at this instant it traps.
    if init_traps() {
        panic!("the test policy traps in wapc_init on purpose");
    }
    guest::register_function("validate", validate);
    guest::register_function("validate_settings", validate_settings);
    guest::register_function("protocol_version", |_| Ok(br#""v1""#.to_vec()));
}

/// 2000-01-01T00:00:00Z, in seconds since 1970.
const INIT_TRAP_SECONDS: u64 = 946_684_800;

fn init_traps() -> bool {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .is_ok_and(|d| d.as_secs() == INIT_TRAP_SECONDS)
}

fn validate_settings(payload: &[u8]) -> CallResult {
    let settings: Value = serde_json::from_slice(payload)?;
    let reply = match settings.get("behaviour").and_then(Value::as_str) {
        Some("invalid-settings") => {
            json!({"valid": false, "message": "behaviour: invalid-settings is refused"})
        }
        _ => json!({"valid": true, "message": null}),
    };
    Ok(serde_json::to_vec(&reply)?)
}

fn validate(payload: &[u8]) -> CallResult {
    let input: Value = serde_json::from_slice(payload)?;
    let request = &input["request"];
    let reply = match input["settings"]["behaviour"].as_str().unwrap_or("echo") {
        "loop" => loop {
            std::hint::black_box(0u64);
        },
        "alloc" => {
            let mut hoard: Vec<Vec<u8>> = Vec::new();
            loop {
                hoard.push(vec![1u8; 1 << 20]);
                std::hint::black_box(&hoard);
            }
        }
        "panic" => panic!("the test policy panics on purpose"),
        "error" => return Err("the test policy fails on purpose".into()),
        "garbage" => return Ok(b"not json".to_vec()),
        "mutate" => {
            let mut object = request["object"].clone();
            object["metadata"]["labels"]["mutated-by"] = json!("test-policy");
            json!({"accepted": true, "mutated_object": object})
        }
        "deny" => json!({"accepted": false, "message": "denied on purpose", "code": 403,
                          "warnings": ["a warning"], "audit_annotations": {"k": "v"}}),
        "clock" => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            json!({"accepted": true, "message": now.to_string()})
        }
        "host-call" => {
            let call = &input["settings"]["call"];
            let ns = call["namespace"].as_str().unwrap_or("kubernetes");
            let op = call["operation"].as_str().unwrap_or("get_resource");
            let payload = serde_json::to_vec(&call["payload"])?;
            match guest::host_call("kubewarden", ns, op, &payload) {
                Ok(bytes) => json!({"accepted": true, "message": String::from_utf8_lossy(&bytes)}),
                Err(e) => json!({"accepted": false, "message": e.to_string()}),
            }
        }
        "log" => {
            let _ = guest::host_call(
                "kubewarden",
                "tracing",
                "log",
                br#"{"level":"info","msg":"hello"}"#,
            );
            guest::console_log("console hello");
            json!({"accepted": true})
        }
        // Echo: the request exactly as the policy received it.
        _ => json!({"accepted": true, "message": request.to_string()}),
    };
    Ok(serde_json::to_vec(&reply)?)
}
