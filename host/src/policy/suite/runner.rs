//! Loading suite files and running their cases.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use regex::Regex;
use serde::Serialize;
use serde_json::Value;

use super::budget::{Budget, Budgets};
use super::format::{Expectation, SuiteFile, merge};
use crate::policy::loader::{Policy, PolicyRef};
use crate::policy::model::{Decision, DecisionError, DecisionInput};
use crate::policy::oci::auth::command_line_config;
use crate::policy::oci::tools::{self, ImagePolicyError};
use crate::policy::sandbox::CallCost;
use crate::policy::yaml::{self, YamlError};
use crate::policy::{EvalError, Limits, LoadError, PolicyEngine};

/// A suite that cannot run at all (exit code 2 territory).
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// A suite file or directory is missing or cannot be read.
    #[error("{}: {error}", path.display())]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// What reading it failed with.
        #[source]
        error: std::io::Error,
    },
    /// A suite file is not valid YAML or does not fit the format.
    #[error("{}: {source}", path.display())]
    Parse {
        /// The suite file.
        path: PathBuf,
        /// What is wrong, and where.
        #[source]
        source: YamlError,
    },
    /// The suite's `limits` are out of range.
    #[error("{}: {message}", path.display())]
    Limits {
        /// The suite file.
        path: PathBuf,
        /// Which limit, its value and the range allowed.
        message: String,
    },
    /// A case's input, merged with the suite's defaults, is not a valid decision input.
    #[error("{}: case {case:?}: input: {source}", path.display())]
    CaseInput {
        /// The suite file.
        path: PathBuf,
        /// The case's name.
        case: String,
        /// What is wrong, and where.
        #[source]
        source: YamlError,
    },
    /// The suite's policy cannot be loaded.
    #[error("{}: {error}", path.display())]
    Policy {
        /// The suite file.
        path: PathBuf,
        /// Why loading failed.
        error: LoadError,
    },
    /// The suite's `oci://` policy cannot be pulled or loaded.
    #[error("{}: policy: {error}", path.display())]
    Image {
        /// The suite file.
        path: PathBuf,
        /// Why pulling or loading failed.
        #[source]
        error: Box<ImagePolicyError>,
    },
}

/// Whether a case passed.
pub enum Outcome {
    /// `decide` produced what the case expects.
    Passed,
    /// What differs, as a readable diff or explanation.
    Failed(String),
}

/// One case's result.
pub struct CaseResult {
    /// The suite file the case is in.
    pub suite: PathBuf,
    /// The case's name.
    pub name: String,
    /// Whether it passed, and if not, how it differed.
    pub outcome: Outcome,
    /// What the `decide` call cost.
    pub cost: CallCost,
    /// The budgets it ran under, which the CCM enforces too.
    pub budgets: Budgets,
    /// The budget the call went over, which fails the case.
    pub over_budget: Option<Budget>,
}

/// Runs suites, compiling each distinct (policy, config, limits) once.
pub struct SuiteRunner {
    engine: Arc<PolicyEngine>,
    policies: HashMap<(PathBuf, String, Limits), Arc<Policy>>,
    /// `--registry-auth`, read when a suite first names an image.
    registry_auth: Option<PathBuf>,
}

/// Suite files named by `paths`: files as given, directories searched
/// recursively for `*.yaml` / `*.yml`, in name order.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, SuiteError> {
    let mut found = Vec::new();
    for path in paths {
        if path.is_dir() {
            collect(path, &mut found)?;
        } else if path.exists() {
            found.push(path.clone());
        } else {
            let error =
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or directory");
            return Err(SuiteError::Read {
                path: path.clone(),
                error,
            });
        }
    }
    Ok(found)
}

fn collect(dir: &Path, found: &mut Vec<PathBuf>) -> Result<(), SuiteError> {
    let read_error = |error| SuiteError::Read {
        path: dir.to_path_buf(),
        error,
    };
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(read_error)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(read_error)?;
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, found)?;
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml")
        ) {
            found.push(path);
        }
    }
    Ok(())
}

impl SuiteRunner {
    /// A runner whose policies are loaded into `engine`.
    pub fn new(engine: Arc<PolicyEngine>) -> SuiteRunner {
        SuiteRunner {
            engine,
            policies: HashMap::new(),
            registry_auth: None,
        }
    }

    /// Runs one suite file's cases whose name matches `filter`.
    pub fn run_file(
        &mut self,
        path: &Path,
        filter: Option<&Regex>,
    ) -> Result<Vec<CaseResult>, SuiteError> {
        let text = std::fs::read_to_string(path).map_err(|error| SuiteError::Read {
            path: path.into(),
            error,
        })?;
        let suite: SuiteFile = yaml::from_str(&text).map_err(|source| SuiteError::Parse {
            path: path.into(),
            source,
        })?;
        let config = suite
            .config
            .as_ref()
            .map_or_else(|| "{}".to_string(), Value::to_string);
        let limits = suite
            .limits
            .limits()
            .map_err(|message| SuiteError::Limits {
                path: path.into(),
                message,
            })?;
        let policy = self.policy(path, &suite.policy, config, limits)?;
        let budgets = Budgets::from(limits);
        let defaults = suite.defaults.unwrap_or(Value::Null);
        let mut results = Vec::new();
        for case in suite
            .cases
            .into_iter()
            .filter(|c| filter.is_none_or(|f| f.is_match(&c.name)))
        {
            let merged = merge(&defaults, &case.input);
            let input: DecisionInput =
                yaml::from_value(merged).map_err(|source| SuiteError::CaseInput {
                    path: path.into(),
                    case: case.name.clone(),
                    source,
                })?;
            let (actual, cost) = self.engine.block_on(policy.decide_measured(&input));
            let over_budget = budgets.exceeded(&actual, &cost);
            let outcome = match over_budget {
                Some(budget) => Outcome::Failed(over(budgets.explain(budget, &cost), actual)),
                None => compare(&case.expect, actual),
            };
            results.push(CaseResult {
                suite: path.into(),
                name: case.name,
                outcome,
                cost,
                budgets,
                over_budget,
            });
        }
        Ok(results)
    }

    fn policy(
        &mut self,
        suite: &Path,
        policy: &str,
        config: String,
        limits: Limits,
    ) -> Result<Arc<Policy>, SuiteError> {
        if tools::is_image(policy) {
            return self.image_policy(suite, policy, config, limits);
        }
        let reference = PolicyRef::parse(policy, suite.parent().unwrap_or(Path::new(".")));
        let location = match &reference {
            PolicyRef::Builtin => PathBuf::from(policy),
            PolicyRef::File(path) => path.clone(),
        };
        let key = (location, config, limits);
        if let Some(loaded) = self.policies.get(&key) {
            return Ok(loaded.clone());
        }
        let loaded = self
            .engine
            .block_on(reference.load(&self.engine, key.1.clone(), limits))
            .map_err(|error| SuiteError::Policy {
                path: suite.into(),
                error,
            })?;
        let loaded = Arc::new(loaded);
        self.policies.insert(key, loaded.clone());
        Ok(loaded)
    }
}

impl SuiteRunner {
    /// Image policies are pulled with the Docker config `path` (see
    /// [`command_line_config`] for the default).
    pub fn with_registry_auth(mut self, path: Option<PathBuf>) -> SuiteRunner {
        self.registry_auth = path;
        self
    }

    fn image_policy(
        &mut self,
        suite: &Path,
        reference: &str,
        config: String,
        limits: Limits,
    ) -> Result<Arc<Policy>, SuiteError> {
        let key = (PathBuf::from(reference), config, limits);
        if let Some(loaded) = self.policies.get(&key) {
            return Ok(loaded.clone());
        }
        let failed = |error: ImagePolicyError| SuiteError::Image {
            path: suite.into(),
            error: Box::new(error),
        };
        let auth =
            command_line_config(self.registry_auth.as_deref()).map_err(|e| failed(e.into()))?;
        let loaded = tools::load_blocking(&self.engine, reference, &auth, key.1.clone(), limits)
            .map_err(failed)?;
        let loaded = Arc::new(loaded);
        self.policies.insert(key, loaded.clone());
        Ok(loaded)
    }
}

/// A failure for going over a budget, with what the call returned.
fn over(explanation: String, actual: Result<Decision, EvalError>) -> String {
    match actual {
        Ok(_) => explanation,
        Err(error) => format!("{explanation}\n{error}"),
    }
}

/// What `decide` produced, in the suite's own spelling.
#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
enum Observed<'a> {
    Decision(&'a Decision),
    Error(&'a DecisionError),
    InvalidDecision(&'a str),
    SandboxFailure(String),
}

fn compare(expect: &Expectation, actual: Result<Decision, EvalError>) -> Outcome {
    let observed = match &actual {
        Ok(decision) => Observed::Decision(decision),
        Err(EvalError::Declined { error, .. }) => Observed::Error(error),
        Err(EvalError::InvalidDecision { problem, .. }) => Observed::InvalidDecision(problem),
        Err(call @ EvalError::Call { .. }) => Observed::SandboxFailure(call.to_string()),
    };
    let expected = match expect {
        Expectation::Decision(decision) => Observed::Decision(decision),
        Expectation::Error(error) => Observed::Error(error),
        Expectation::InvalidDecision(text) => Observed::InvalidDecision(text),
    };
    let passed = match (&expected, &observed) {
        (Observed::Decision(e), Observed::Decision(a)) => e == a,
        (Observed::Error(e), Observed::Error(a)) => e == a,
        (Observed::InvalidDecision(e), Observed::InvalidDecision(a)) => a.contains(e),
        _ => false,
    };
    if passed {
        Outcome::Passed
    } else {
        Outcome::Failed(diff(&expected, &observed))
    }
}

fn diff(expected: &Observed<'_>, actual: &Observed<'_>) -> String {
    let (expected, actual) = (yaml::to_string(expected), yaml::to_string(actual));
    let mut out = String::from("--- expected\n+++ actual\n");
    for change in similar::TextDiff::from_lines(&expected, &actual).iter_all_changes() {
        let sign = match change.tag() {
            similar::ChangeTag::Delete => '-',
            similar::ChangeTag::Insert => '+',
            similar::ChangeTag::Equal => ' ',
        };
        out.push(sign);
        out.push(' ');
        out.push_str(change.value());
        if !change.value().ends_with('\n') {
            out.push('\n');
        }
    }
    out
}
