//! The model against the upstream lists recorded under
//! `policies/guard-core/upstream/`: a kind, a field manager or an event
//! source that upstream has and the model lacks (or the other way round)
//! fails here, naming it.

use super::clients::CLIENTS;
use super::controllers::FLUX;
use super::kinds::{emitters, Scope, KINDS};

const CRD_KINDS: &str = include_str!("../../upstream/crd-kinds.txt");
const ALERT_KINDS: &str = include_str!("../../upstream/alert-event-source-kinds.txt");
const FIELD_MANAGERS: &str = include_str!("../../upstream/field-managers.txt");

/// The data lines of a list: no comments, no blank lines, no `repository` lines.
fn rows(list: &str) -> impl Iterator<Item = Vec<&str>> {
    list.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty() && !l.starts_with("repository "))
        .map(|l| l.split_whitespace().collect())
}

/// Every list names the repository and full commit it was read at.
#[test]
fn every_list_names_its_repositories_and_commits() {
    for list in [CRD_KINDS, ALERT_KINDS, FIELD_MANAGERS] {
        let repositories: Vec<&str> = list
            .lines()
            .filter_map(|l| l.strip_prefix("repository "))
            .collect();
        assert!(!repositories.is_empty());
        for r in repositories {
            let (repo, commit) = r.split_once(' ').unwrap();
            assert!(repo.contains('/'), "{r}");
            assert!(
                commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit()),
                "{r}"
            );
        }
    }
}

/// Every kind of the CRDs is in the model with its plural, scope and
/// served versions, and the model has no kind they lack.
#[test]
fn the_kinds_are_the_crds() {
    let mut listed = Vec::new();
    for row in rows(CRD_KINDS) {
        let [group, kind, plural, scope, served, storage] = row[..] else {
            panic!("crd-kinds.txt: {row:?} is not six columns");
        };
        let modelled = KINDS
            .iter()
            .find(|k| k.group == group && k.kind == kind)
            .unwrap_or_else(|| panic!("{group} {kind} is served upstream but not in the model"));
        assert_eq!(modelled.plural, plural, "{kind}");
        let want_scope = if scope == "Namespaced" {
            Scope::Namespaced
        } else {
            Scope::Cluster
        };
        assert_eq!(modelled.scope, want_scope, "{kind}");
        let mut versions: Vec<&str> = served.split(',').collect();
        versions.sort_by_key(|v| *v != storage);
        assert_eq!(modelled.versions, versions, "{kind}: storage version first");
        listed.push((group, kind));
    }
    for k in KINDS {
        assert!(
            listed.contains(&(k.group, k.kind)),
            "{} {} is in the model but no CRD serves it",
            k.group,
            k.kind
        );
    }
}

/// The kinds that emit events are the Alert CRD's enum as Flux Operator
/// installs it, in its order.
#[test]
fn the_emitters_are_the_alert_enum_in_its_order() {
    let listed: Vec<&str> = rows(ALERT_KINDS).map(|r| r[0]).collect();
    let modelled: Vec<&str> = emitters().map(|k| k.kind).collect();
    assert_eq!(modelled, listed);
}

/// Every field manager a Flux controller, Flux Operator or one of their
/// clients writes with is in the model, and the model has none they lack.
#[test]
fn the_field_managers_are_upstreams() {
    let mut listed: Vec<(&str, &str)> = Vec::new();
    for row in rows(FIELD_MANAGERS) {
        let [writer, manager, _where] = row[..] else {
            panic!("field-managers.txt: {row:?} is not three columns");
        };
        let manager = if manager == "-" { "" } else { manager };
        let controller = FLUX.iter().find(|c| c.name == writer);
        let known = match controller {
            Some(c) => c.field_manager(manager).is_some(),
            None => CLIENTS
                .iter()
                .any(|c| c.program == writer && c.field_manager.unwrap_or_default() == manager),
        };
        assert!(
            known,
            "{writer} writes with field manager {manager:?} upstream; the model lacks it"
        );
        listed.push((writer, manager));
    }
    for c in FLUX {
        for m in c.field_managers {
            assert!(
                listed.contains(&(c.name, m.name)),
                "the model gives {} field manager {:?}, which upstream does not list",
                c.name,
                m.name
            );
        }
    }
    let programs: Vec<&str> = listed.iter().map(|(w, _)| *w).collect();
    for c in CLIENTS.iter().filter(|c| programs.contains(&c.program)) {
        let manager = c.field_manager.unwrap_or_default();
        assert!(
            listed.contains(&(c.program, manager)),
            "the model gives {} ({}) field manager {manager:?}, which upstream does not list",
            c.name,
            c.program
        );
    }
}

/// Each row of the model names where it was read.
#[test]
fn every_row_cites_its_source() {
    let cited = |text: &str| text.contains('/') && text.contains('`');
    for k in KINDS {
        assert!(cited(k.source.text()), "{}", k.kind);
    }
    for c in FLUX {
        assert!(cited(c.source.text()), "{}", c.name);
        for m in c.field_managers {
            assert!(cited(m.source.text()), "{} {:?}", c.name, m.name);
        }
        for g in c.generates {
            assert!(cited(g.source.text()), "{} {}", c.name, g.kind);
        }
    }
    for c in CLIENTS {
        assert!(cited(c.source.text()), "{}", c.name);
    }
}
