//! `devtools stories`: every story (`tests/stories/<policy>/*.yaml`) with
//! each request judged by the compiled module, as policy-server would, and
//! by the native code, which must agree.

use std::path::Path;

use conformance::story::{self, StoryRun};

use crate::host::Limits;
use crate::replay::{self, Modules};

/// One story's name and run, or why it could not run.
pub type Ran = (String, Result<StoryRun, String>);

/// Runs the stories under `path` (a file or a folder).
pub fn run(path: &Path, dist: &Path) -> Result<Vec<Ran>, String> {
    let stories = story::load_stories(path)?;
    let mut modules = Modules::new(dist);
    let limits = Limits::default();
    let mut runs = Vec::new();
    for s in &stories {
        let name = s.id.split('/').next().unwrap_or("");
        let Some(policy) = catalog::entry(name) else {
            let why = format!(
                "{}: no policy named {name:?} in the catalog (policies/catalog/src/lib.rs)",
                s.id
            );
            runs.push((s.id.clone(), Err(why)));
            continue;
        };
        let mut evaluate = |case: &conformance::Case| {
            let response = replay::evaluate(&mut modules, case, 1, &limits, &mut Vec::new())?;
            match replay::native_disagreement(case, &response) {
                Some(problem) => Err(problem),
                None => Ok(response),
            }
        };
        let ran = story::run(s, policy, &mut evaluate).map_err(|e| format!("{}: {e}", s.id));
        runs.push((s.id.clone(), ran));
    }
    Ok(runs)
}
