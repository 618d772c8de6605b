//! managedFields as kube-apiserver keeps them for an Update: the writer's
//! entry gains the fields it set, every entry loses the fields it removed
//! (k8s.io/apiserver `pkg/endpoints/handlers/fieldmanager`, the Update
//! manager run before admission, commit 24a394e5). Only the depth the stories
//! and suggested commands need: fields are tracked by member name; list items
//! are taken whole.

use guard_core::Timestamp;
use serde_json::{json, Map, Value};

/// `fieldsV1` of the fields a merge patch sets (nulls remove, not set).
pub fn fields_set(patch: &Value) -> Option<Value> {
    let map = patch.as_object()?;
    let mut fields = Map::new();
    for (k, v) in map {
        match v {
            Value::Null => {}
            Value::Object(_) => {
                if let Some(inner) = fields_set(v) {
                    fields.insert(format!("f:{k}"), inner);
                }
            }
            _ => {
                fields.insert(format!("f:{k}"), json!({}));
            }
        }
    }
    (!fields.is_empty()).then_some(Value::Object(fields))
}

/// Removes from a `fieldsV1` set the fields a merge patch removes.
fn drop_removed(fields: &mut Value, patch: &Value) {
    let (Some(fields), Some(patch)) = (fields.as_object_mut(), patch.as_object()) else {
        return;
    };
    for (k, v) in patch {
        let key = format!("f:{k}");
        match v {
            Value::Null => {
                fields.remove(&key);
            }
            Value::Object(_) => {
                if let Some(inner) = fields.get_mut(&key) {
                    drop_removed(inner, v);
                }
            }
            _ => {}
        }
    }
}

pub fn merge_fields(into: &mut Value, from: &Value) {
    if let (Some(into), Some(from)) = (into.as_object_mut(), from.as_object()) {
        for (k, v) in from {
            match into.get_mut(k) {
                Some(existing) => merge_fields(existing, v),
                None => {
                    into.insert(k.clone(), v.clone());
                }
            }
        }
    }
}

/// managedFields after an Update by `manager`: its entry gains the fields
/// set, every entry loses the fields removed.
pub fn record_manager(object: &mut Value, manager: &str, patch: &Value, now: Timestamp) {
    let api_version = object.get("apiVersion").cloned().unwrap_or(Value::Null);
    let Some(entries) = object
        .pointer_mut("/metadata/managedFields")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for entry in entries.iter_mut() {
        if let Some(fields) = entry.get_mut("fieldsV1") {
            drop_removed(fields, patch);
        }
    }
    let Some(set) = fields_set(patch) else {
        return;
    };
    let time = json!(guard_core::rfc3339::format(now));
    let mine = entries.iter_mut().find(|e| {
        e.get("manager").and_then(Value::as_str) == Some(manager)
            && e.get("operation").and_then(Value::as_str) == Some("Update")
            && e.get("subresource").is_none()
    });
    match mine {
        Some(entry) => {
            if let Some(fields) = entry.get_mut("fieldsV1") {
                merge_fields(fields, &set);
            }
            if let Some(t) = entry.get_mut("time") {
                *t = time;
            }
        }
        None => entries.push(json!({
            "manager": manager, "operation": "Update", "apiVersion": api_version,
            "time": time, "fieldsType": "FieldsV1", "fieldsV1": set,
        })),
    }
}
