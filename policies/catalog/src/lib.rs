//! Every policy of the project, in the order users meet them: the one list.
//! The harness, the fuzzer, the playground and the generated manifests read
//! it, each policy's facts carried by its [`Entry`]; the Makefile and the
//! playground's build script find the same policies as the folders under
//! `policies/` with a `metadata.yml`, which the test below holds equal to
//! this list. Adding a policy is adding its crate and its line here
//! (CONTRIBUTING.md).

pub use guard_core::Entry;

pub const POLICIES: &[Entry] = &[
    flux_suspend::ENTRY,
    flux_gate::ENTRY,
    aso_reconcile::ENTRY,
    flux_event_metadata::ENTRY,
];

/// The policy named `name` (its folder and crate name, e.g. `flux-suspend`).
pub fn entry(name: &str) -> Option<&'static Entry> {
    POLICIES.iter().find(|e| e.name == name)
}

/// The policies' names, in catalogue order.
pub fn names() -> impl Iterator<Item = &'static str> {
    POLICIES.iter().map(|e| e.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_policy_folder_is_in_the_catalogue_and_nothing_else() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut folders: Vec<String> = std::fs::read_dir(&root)
            .unwrap()
            .filter_map(|e| {
                let path = e.ok()?.path();
                path.join("metadata.yml")
                    .is_file()
                    .then(|| path.file_name()?.to_str().map(str::to_string))?
            })
            .collect();
        folders.sort();
        let mut listed: Vec<String> = names().map(str::to_string).collect();
        listed.sort();
        assert_eq!(folders, listed);
        assert!(entry("flux-gate").is_some());
        assert!(entry("flux_gate").is_none());
    }
}
