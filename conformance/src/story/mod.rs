//! Stories: a recorded cluster, then writes by named writers, each turned
//! into the request kube-apiserver sends and judged by the policy; the
//! admitted result becomes the next state, so that a promise is checked over
//! the writes that follow the request it admits (the format:
//! `tests/stories/README.md`).

pub mod cli;
pub mod format;
pub mod managed_fields;
pub mod narrate;
pub mod owner_apply;
pub mod request;
pub mod run;
pub mod state;
pub mod writers;

use std::path::Path;

use guard_core::Entry;

pub use format::{load_stories, parse_story, Story};
pub use run::{run, StoryRun};

/// Runs every story of a folder with the policy's native code. Returns how
/// many ran and one text per failure.
/// A policy without a stories folder has none.
pub fn check_native(entry: &Entry, dir: &Path) -> Result<(usize, Vec<String>), String> {
    if !dir.exists() {
        return Ok((0, Vec::new()));
    }
    let stories = load_stories(dir)?;
    let mut failures = Vec::new();
    for story in &stories {
        let mut evaluate = |case: &crate::Case| crate::evaluate_native(entry, case);
        match run(story, entry, &mut evaluate) {
            Ok(done) => failures.extend(done.failures()),
            Err(e) => failures.push(e),
        }
    }
    Ok((stories.len(), failures))
}
