//! An AdmissionRequest built from an object, its old version, the operation
//! and the user, shaped like the ones kube-apiserver sends.

use serde_json::{json, Map, Value};

/// The fields of the page's "object" form.
#[derive(Debug, Clone, Default)]
pub struct Form {
    pub object: Value,
    pub old_object: Value,
    pub operation: String,
    pub username: String,
    pub groups: Vec<String>,
    pub dry_run: bool,
}

/// Splits a groups field on commas and line breaks.
pub fn split_groups(text: &str) -> Vec<String> {
    text.split([',', '\n'])
        .map(str::trim)
        .filter(|g| !g.is_empty())
        .map(str::to_string)
        .collect()
}

/// The lower-case plural the API server uses as a kind's resource name
/// (`Kustomization` -> `kustomizations`, `GitRepository` -> `gitrepositories`).
pub fn resource_of(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if let Some(stem) = lower.strip_suffix('y') {
        if !stem.ends_with(['a', 'e', 'i', 'o', 'u']) {
            return format!("{stem}ies");
        }
    }
    if lower.ends_with('s')
        || lower.ends_with('x')
        || lower.ends_with("ch")
        || lower.ends_with("sh")
    {
        return format!("{lower}es");
    }
    format!("{lower}s")
}

fn str_at<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// The AdmissionRequest for the form, with a fixed uid.
pub fn admission_request(form: &Form) -> Value {
    let operation = if form.operation.is_empty() {
        "CREATE".to_string()
    } else {
        form.operation.to_ascii_uppercase()
    };
    let delete = operation == "DELETE";
    // A DELETE carries the object being deleted as oldObject and no object.
    let (object, old_object) = if delete {
        let old = if form.old_object.is_null() {
            form.object.clone()
        } else {
            form.old_object.clone()
        };
        (Value::Null, old)
    } else {
        (form.object.clone(), form.old_object.clone())
    };
    let subject = if object.is_null() {
        &old_object
    } else {
        &object
    };
    let api_version = str_at(subject, "/apiVersion");
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    };
    let kind = str_at(subject, "/kind");
    let gvk = json!({"group": group, "version": version, "kind": kind});
    let gvr = json!({"group": group, "version": version, "resource": resource_of(kind)});
    let options_kind = match operation.as_str() {
        "CREATE" => "CreateOptions",
        "UPDATE" => "UpdateOptions",
        "DELETE" => "DeleteOptions",
        _ => "",
    };

    let mut request = Map::new();
    request.insert("uid".into(), json!("705ab4f5-6393-11e8-b7cc-42010a800002"));
    request.insert("kind".into(), gvk.clone());
    request.insert("resource".into(), gvr.clone());
    request.insert("requestKind".into(), gvk);
    request.insert("requestResource".into(), gvr);
    request.insert("name".into(), json!(str_at(subject, "/metadata/name")));
    let namespace = str_at(subject, "/metadata/namespace");
    if !namespace.is_empty() {
        request.insert("namespace".into(), json!(namespace));
    }
    request.insert("operation".into(), json!(operation));
    let mut user = Map::new();
    user.insert("username".into(), json!(form.username));
    if !form.groups.is_empty() {
        user.insert("groups".into(), json!(form.groups));
    }
    request.insert("userInfo".into(), Value::Object(user));
    request.insert("object".into(), object);
    request.insert("oldObject".into(), old_object);
    request.insert("dryRun".into(), json!(form.dry_run));
    if !options_kind.is_empty() {
        let mut options = Map::new();
        options.insert("kind".into(), json!(options_kind));
        options.insert("apiVersion".into(), json!("meta.k8s.io/v1"));
        if form.dry_run {
            options.insert("dryRun".into(), json!(["All"]));
        }
        request.insert("options".into(), Value::Object(options));
    }
    Value::Object(request)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals() {
        assert_eq!(resource_of("Kustomization"), "kustomizations");
        assert_eq!(resource_of("GitRepository"), "gitrepositories");
        assert_eq!(resource_of("ImagePolicy"), "imagepolicies");
        assert_eq!(resource_of("Gateway"), "gateways");
        assert_eq!(resource_of("Ingress"), "ingresses");
        assert_eq!(resource_of("Namespace"), "namespaces");
    }

    #[test]
    fn delete_moves_the_object_to_old_object() {
        let form = Form {
            object: json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}),
            operation: "delete".into(),
            username: "me".into(),
            groups: split_groups("a, b\nc"),
            ..Form::default()
        };
        let r = admission_request(&form);
        assert_eq!(r["operation"], "DELETE");
        assert!(r["object"].is_null());
        assert_eq!(r["oldObject"]["metadata"]["name"], "a");
        assert_eq!(
            r["resource"],
            json!({"group": "", "version": "v1", "resource": "namespaces"})
        );
        assert_eq!(r["userInfo"]["groups"], json!(["a", "b", "c"]));
        assert_eq!(r["options"]["kind"], "DeleteOptions");
    }
}
