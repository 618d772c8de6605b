//! Prints, as one JSON object, every story's native run (`<policy>/<story>`
//! -> `conformance::story::narrate::to_json`): the playground's parity test
//! requires the page to give exactly the same.
//!
//!     cargo run --example story_dump -p playground [tests/stories]

use serde_json::{Map, Value};

fn main() -> std::process::ExitCode {
    let root = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "tests/stories".into());
    let stories = match conformance::story::load_stories(std::path::Path::new(&root)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let mut out = Map::new();
    for story in &stories {
        let policy = story.id.split('/').next().unwrap_or("");
        let Some(entry) = playground::engine::entry(policy) else {
            continue;
        };
        let mut evaluate = |case: &conformance::Case| conformance::evaluate_native(entry, case);
        let run = match conformance::story::run(story, entry, &mut evaluate) {
            Ok(run) => conformance::story::narrate::to_json(&run),
            Err(e) => Value::String(e),
        };
        out.insert(story.id.clone(), run);
    }
    println!("{}", Value::Object(out));
    std::process::ExitCode::SUCCESS
}
