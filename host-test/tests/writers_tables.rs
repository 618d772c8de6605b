//! The writers tables of the policies' READMEs against guard-core's model:
//! every identity and field manager a table names is one the model knows,
//! and every controller the model says writes what a policy judges has a
//! row. A writer the text names and the code does not know, or the other
//! way round, fails here.
//!
//! A writers table is a Markdown table whose first header cell starts with
//! "writer". The cells read are those whose header says "writer",
//! "identity" or "field manager"; in them every backticked name is checked.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap or index is a failed test"
)]

use std::collections::BTreeSet;
use std::path::Path;

use guard_core::model::clients::CLIENTS;
use guard_core::model::controllers::{self, Controller, ASO, FLUX, KUBE_CONTROLLERS, KUBE_SYSTEM};
use guard_core::model::kinds::{self, KINDS};

fn readme(policy: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../policies")
        .join(policy)
        .join("README.md");
    std::fs::read_to_string(path).unwrap()
}

/// The cells of a table row, trimmed.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    inner.split('|').map(|c| c.trim().to_string()).collect()
}

/// Each writers table's rows, as (header, cells) pairs.
fn writers_tables(text: &str) -> Vec<(Vec<String>, Vec<Vec<String>>)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut tables = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if line.starts_with('|') && i + 1 < lines.len() && lines[i + 1].trim().starts_with("|-")
            || line.starts_with('|')
                && i + 1 < lines.len()
                && lines[i + 1].trim().starts_with("| -")
        {
            let header = cells(line);
            let mut rows = Vec::new();
            let mut j = i + 2;
            while j < lines.len() && lines[j].trim().starts_with('|') {
                rows.push(cells(lines[j]));
                j += 1;
            }
            if header[0].to_ascii_lowercase().starts_with("writer") {
                tables.push((header, rows));
            }
            i = j;
        } else {
            i += 1;
        }
    }
    tables
}

/// The backticked names in a cell.
fn backticked(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// Every identity the model knows, as kube-apiserver names it.
fn identities() -> BTreeSet<String> {
    let mut out: BTreeSet<String> = FLUX.iter().map(|c| c.service_account.username()).collect();
    out.extend(
        KUBE_CONTROLLERS
            .iter()
            .map(|c| format!("system:serviceaccount:{KUBE_SYSTEM}:{c}")),
    );
    out.insert(controllers::KUBE_CONTROLLER_MANAGER.to_string());
    out.insert(ASO.username());
    out
}

/// Every field manager and controller name the model knows, and the
/// policies' own (the field manager of the commands they suggest).
fn names() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for c in FLUX {
        out.insert(c.name.to_string());
        out.extend(c.field_managers.iter().map(|m| m.name.to_string()));
    }
    out.extend(KUBE_CONTROLLERS.iter().map(|c| c.to_string()));
    out.extend(
        CLIENTS
            .iter()
            .filter_map(|c| c.field_manager)
            .map(str::to_string),
    );
    out.extend(catalog::POLICIES.iter().map(|p| p.name.to_string()));
    // The namespaces the identities live in.
    out.extend([controllers::FLUX_NAMESPACE, KUBE_SYSTEM, ASO.namespace].map(str::to_string));
    out.remove("");
    out
}

/// The words of the commands the model's clients are (`annotate` of
/// `kubectl annotate`), which the writer column names.
fn commands() -> BTreeSet<&'static str> {
    CLIENTS
        .iter()
        .flat_map(|c| c.name.split_whitespace().skip(1))
        .collect()
}

/// What a writers table names that the model does not know.
fn unknown(policy: &str) -> Vec<String> {
    let (identities, names, commands) = (identities(), names(), commands());
    let mut found = Vec::new();
    let tables = writers_tables(&readme(policy));
    assert!(!tables.is_empty(), "{policy}: README has no writers table");
    for (header, rows) in tables {
        let read: Vec<usize> = header
            .iter()
            .enumerate()
            .filter(|(_, h)| {
                let h = h.to_ascii_lowercase();
                h.starts_with("writer") || h.contains("identity") || h.contains("field manager")
            })
            .map(|(i, _)| i)
            .collect();
        for row in rows {
            for &i in &read {
                let Some(cell) = row.get(i) else { continue };
                let writer_column = header[i].to_ascii_lowercase().starts_with("writer");
                for token in backticked(cell) {
                    let known = if token.contains('<') || token.starts_with("--") {
                        // A pattern (`…:<controller>`) said in words beside
                        // it, or a controller's flag.
                        true
                    } else if writer_column && commands.contains(token) {
                        true
                    } else if token.starts_with("system:") {
                        identities.contains(token)
                    } else if let Some(name) = token.strip_prefix("…:") {
                        names.contains(name)
                    } else if token
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                    {
                        names.contains(token)
                    } else {
                        // A field or a value (`spec.serviceAccountName`), not a name.
                        true
                    };
                    if !known {
                        found.push(format!("{policy}: `{token}` ({})", row[0]));
                    }
                }
            }
        }
    }
    found
}

/// The controllers whose names the writers table must show: the
/// controllers of the kinds the policy judges.
fn missing(policy: &str, controllers: &[&Controller]) -> Vec<String> {
    let text: String = writers_tables(&readme(policy))
        .into_iter()
        .flat_map(|(_, rows)| rows)
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    controllers
        .iter()
        .filter(|c| !text.contains(c.name))
        .map(|c| format!("{policy}: no row for {}", c.name))
        .collect()
}

fn distinct(controllers: impl Iterator<Item = &'static Controller>) -> Vec<&'static Controller> {
    let mut out: Vec<&Controller> = Vec::new();
    for c in controllers {
        if !out.iter().any(|o| o.name == c.name) {
            out.push(c);
        }
    }
    out
}

#[test]
fn writers_tables_name_only_what_the_model_knows() {
    let mut found = Vec::new();
    for policy in [
        "flux-suspend",
        "flux-gate",
        "flux-event-metadata",
        "aso-reconcile",
    ] {
        found.extend(unknown(policy));
    }
    assert!(
        found.is_empty(),
        "writers the README tables name and guard-core's model does not know \
         (policies/guard-core/src/model):\n{}",
        found.join("\n")
    );
}

#[test]
fn writers_tables_show_every_controller_of_the_judged_kinds() {
    let mut found = Vec::new();
    // flux-suspend judges every kind that can be suspended.
    let suspendable = distinct(
        KINDS
            .iter()
            .filter(|k| k.honours.is_some())
            .map(|k| k.controller),
    );
    found.extend(missing("flux-suspend", &suspendable));
    // flux-event-metadata judges the kinds that emit events, and what is
    // generated from them.
    let emitting = distinct(
        kinds::emitters()
            .map(|k| k.controller)
            .chain(FLUX.iter().copied().filter(|c| !c.generates.is_empty())),
    );
    found.extend(missing("flux-event-metadata", &emitting));
    // flux-gate holds what Flux's appliers apply.
    let appliers = distinct(FLUX.iter().copied().filter(|c| c.apply_manager().is_some()));
    found.extend(missing("flux-gate", &appliers));
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_table_reader_sees_rows_and_names() {
    let text = "| writer | identity | field manager | source |\n|---|---|---|---|\n\
                | x | `system:serviceaccount:flux-system:kustomize-controller` | `nobody-knows` | `a/b` |\n";
    let tables = writers_tables(text);
    assert_eq!(tables.len(), 1);
    assert_eq!(tables[0].1[0][2], "`nobody-knows`");
    assert_eq!(
        backticked(&tables[0].1[0][1]),
        ["system:serviceaccount:flux-system:kustomize-controller"]
    );
}
