//! One corpus case through the real `kwctl run`: the module as built, the
//! case's request and settings, host calls answered by a kwctl session file
//! (`--replay-host-capabilities-interactions`) that holds what the harness
//! answered, and the wall clock pinned at the case's instant.

use std::path::{Path, PathBuf};
use std::time::Duration;

use conformance::Case;

use super::compare::Answer;
use super::{engine_command, last_lines, pin_clock, write_file};
use host_test::capabilities::{write_session, Exchange};

/// Longer than any policy evaluation; kwctl itself takes about a second.
const DEADLINE: Duration = Duration::from_secs(60);

pub struct Kwctl {
    pub binary: PathBuf,
    pub clock: PathBuf,
}

impl Kwctl {
    /// `kwctl run` as a user runs it on a module file: allowed to mutate,
    /// every host capability, and (with `--allow-context-aware`) the
    /// `contextAwareResources` of the module's metadata.
    pub async fn run(
        &self,
        module: &Path,
        case: &Case,
        session: &[Exchange],
        dir: &Path,
    ) -> Answer {
        match self.try_run(module, case, session, dir).await {
            Ok(answer) => answer,
            Err(detail) => Answer::Refused {
                status: None,
                detail,
            },
        }
    }

    async fn try_run(
        &self,
        module: &Path,
        case: &Case,
        session: &[Exchange],
        dir: &Path,
    ) -> Result<Answer, String> {
        // The AdmissionRequest itself: kwctl reads a review only when it says
        // `kind: AdmissionReview` (3460bb71, `crates/kwctl/src/command/run/evaluator.rs`,
        // `build_validate_request`), and a case may record a bare review body.
        let request = write_file(dir, "request.json", &case.admission_request().to_string())?;
        let settings = write_file(dir, "settings.json", &case.settings.to_string())?;
        let session = write_file(dir, "session.yml", &write_session(session))?;
        let now = dir.join("now");
        pin_clock(&now, case.now)?;
        let mut command = engine_command(&self.binary, &self.clock, &now);
        command
            .arg("run")
            .arg("--request-path")
            .arg(&request)
            .arg("--settings-path")
            .arg(&settings)
            .arg("--allow-context-aware")
            .arg("--replay-host-capabilities-interactions")
            .arg(&session)
            .arg(module)
            .current_dir(dir)
            .env("NO_COLOR", "1");
        let output = tokio::time::timeout(DEADLINE, command.output())
            .await
            .map_err(|_| format!("kwctl gave no answer within {DEADLINE:?}"))?
            .map_err(|e| format!("cannot run {}: {e}", self.binary.display()))?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            return Ok(Answer::Refused {
                status: None,
                detail: format!("kwctl {}: {}", output.status, last_lines(&stderr, 3)),
            });
        }
        serde_json::from_slice(&output.stdout)
            .map(Answer::Response)
            .map_err(|e| {
                format!(
                    "kwctl printed no AdmissionResponse ({e}): {}",
                    String::from_utf8_lossy(&output.stdout)
                )
            })
    }
}
