//! The webhook rules reach every ASO group: metadata.yml's first rule lists
//! exactly the groups of the pinned aso-groups.txt (`make aso-groups`).

#[test]
fn the_rules_list_exactly_the_pinned_groups() {
    let read = |file: &str| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        std::fs::read_to_string(path).unwrap()
    };
    let pinned = read("aso-groups.txt");
    let version = pinned
        .lines()
        .find_map(|l| l.strip_prefix("# ASO_VERSION "))
        .expect("aso-groups.txt names its ASO version");
    assert!(version.starts_with("v2."), "{version}");
    let groups: Vec<&str> = pinned
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    assert!(groups.contains(&"communication.azure.com"));
    assert!(
        groups.iter().all(|g| aso_reconcile::is_aso_group(g)),
        "{groups:?}"
    );
    let mut sorted = groups.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(
        groups, sorted,
        "aso-groups.txt is sorted and has no duplicates"
    );

    let metadata: serde_json::Value = serde_norway::from_str(&read("metadata.yml")).unwrap();
    let ruled: Vec<&str> = metadata["rules"][0]["apiGroups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g.as_str().unwrap())
        .collect();
    assert_eq!(ruled, groups, "run `make aso-groups` then `make scaffold`");
    assert_eq!(
        metadata["rules"][0]["operations"],
        serde_json::json!(["CREATE", "UPDATE", "DELETE"])
    );
}
