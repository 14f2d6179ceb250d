//! `vcd-ccm policy test | eval | inspect | new | wit | configmap | push`.

pub mod configmap;
pub mod push;
pub mod scaffold;

use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use regex::Regex;

use crate::cli::{ConfigMapArgs, EvalArgs, InspectArgs, NewArgs, Output, TestArgs, WitArgs};
use crate::policy::contract::Contract;
use crate::policy::loader::{self, Policy, PolicyRef, sha256_hex};
use crate::policy::model::DecisionInput;
use crate::policy::oci::auth::command_line_config;
use crate::policy::oci::tools;
use crate::policy::suite::{SuiteRunner, report, runner};
use crate::policy::{EvalError, Limits, PolicyEngine, imports, yaml};

/// Exit code for suites or policies that could not be loaded at all.
const LOAD_FAILURE: u8 = 2;

/// `vcd-ccm policy test`.
pub fn test(args: &TestArgs) -> ExitCode {
    match run_suites(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => load_failure(e),
    }
}

fn run_suites(args: &TestArgs) -> Result<bool> {
    let filter = args
        .run
        .as_deref()
        .map(Regex::new)
        .transpose()
        .context("--run is not a valid regular expression")?;
    let files = runner::discover(&args.paths)?;
    if files.is_empty() {
        bail!("no suite files (*.yaml) under {:?}", args.paths);
    }
    let mut runner = SuiteRunner::new(PolicyEngine::new()?)
        .with_registry_auth(args.registry.registry_auth.clone());
    let mut results = Vec::new();
    for file in &files {
        results.extend(runner.run_file(file, filter.as_ref())?);
    }
    let mut out = io::stdout().lock();
    match args.output {
        Output::Text => report::text(&mut out, &results)?,
        Output::Json => report::json(&mut out, &results)?,
    }
    Ok(report::counts(&results).1 == 0)
}

/// `vcd-ccm policy eval`.
pub fn eval(args: &EvalArgs) -> ExitCode {
    let engine = match PolicyEngine::new() {
        Ok(engine) => engine,
        Err(e) => return load_failure(e.into()),
    };
    let policy = match load_for_eval(&engine, args) {
        Ok(policy) => policy,
        Err(e) => return load_failure(e),
    };
    let input = match read_input(&args.input) {
        Ok(input) => input,
        Err(e) => return load_failure(e),
    };
    match engine.block_on(policy.decide(&input)) {
        Ok(decision) => {
            print!("{}", yaml::to_string(&decision));
            ExitCode::SUCCESS
        }
        Err(EvalError::Declined { error, .. }) => {
            print!(
                "{}",
                yaml::to_string(&serde_json::json!({ "error": error }))
            );
            eprintln!("policy {} declined: {error}", policy.name());
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn load_failure(error: anyhow::Error) -> ExitCode {
    eprintln!("error: {}", super::one_line(&error));
    ExitCode::from(LOAD_FAILURE)
}

/// Exit 0, or print the error and exit 1.
fn finish(result: Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", super::one_line(&error));
            ExitCode::FAILURE
        }
    }
}

/// `vcd-ccm policy new`.
pub fn new(args: &NewArgs) -> ExitCode {
    finish((|| {
        let dir = scaffold::new_project(&args.dir, &args.name, args.lang)?;
        let (component, build) = scaffold::component_and_build(args.lang, &args.name);
        println!(
            "created {dir}; build and test it with:\n  cd {dir}\n  {build}    # → {component}\n  vcd-ccm policy test tests/",
            dir = dir.display(),
        );
        Ok(())
    })())
}

/// `vcd-ccm policy wit`.
pub fn wit(args: &WitArgs) -> ExitCode {
    finish(scaffold::write_wit(&args.out).map_err(Into::into))
}

/// `vcd-ccm policy configmap`.
pub fn configmap(args: &ConfigMapArgs) -> ExitCode {
    finish((|| {
        let target = configmap::Target {
            name: &args.name,
            namespace: &args.namespace,
        };
        let yaml = configmap::build(&args.spec, target)?;
        match &args.out {
            Some(path) => {
                std::fs::write(path, yaml).with_context(|| format!("writing {}", path.display()))?
            }
            None => io::stdout().lock().write_all(yaml.as_bytes())?,
        }
        Ok(())
    })())
}

/// The default budgets, with the deadline `--timeout-ms` names.
fn limits(timeout_ms: Option<u64>) -> Limits {
    let defaults = Limits::default();
    Limits {
        timeout: timeout_ms.map_or(defaults.timeout, std::time::Duration::from_millis),
        ..defaults
    }
}

fn load_for_eval(engine: &Arc<PolicyEngine>, args: &EvalArgs) -> Result<Policy> {
    let config = match &args.config {
        Some(path) => {
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?
        }
        None => "{}".to_string(),
    };
    let limits = limits(args.timeout_ms);
    if tools::is_image(&args.policy) {
        let auth = command_line_config(args.registry.registry_auth.as_deref())?;
        return Ok(tools::load_blocking(
            engine,
            &args.policy,
            &auth,
            config,
            limits,
        )?);
    }
    let policy = PolicyRef::parse(&args.policy, Path::new("."));
    Ok(engine.block_on(policy.load(engine, config, limits))?)
}

fn read_input(path: &Path) -> Result<DecisionInput> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    yaml::from_str(&text).with_context(|| path.display().to_string())
}

/// The contract version the component implements, found as the loader finds
/// it (the newest served version it exports); a version the host does not
/// serve is named as such.
fn contract_of(exports: &[String]) -> String {
    if let Some(contract) = Contract::ALL
        .into_iter()
        .find(|c| exports.contains(&c.policy_interface()))
    {
        return contract.to_string();
    }
    let served: Vec<&str> = Contract::ALL.iter().map(|c| c.version()).collect();
    match exports
        .iter()
        .find_map(|e| e.strip_prefix("vcd:lb-policy/policy@"))
    {
        Some(version) => format!(
            "vcd:lb-policy@{version} (not served: this host serves {})",
            served.join(", ")
        ),
        None => "none (does not export vcd:lb-policy/policy)".into(),
    }
}

/// `vcd-ccm policy inspect`.
pub fn inspect(args: &InspectArgs) -> ExitCode {
    match print_inspection(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => load_failure(e),
    }
}

/// Prints what the component is and whether the host would load it.
fn print_inspection(args: &InspectArgs) -> Result<bool> {
    let engine = PolicyEngine::new()?;
    let mut out = io::stdout().lock();
    let (name, bytes) = if tools::is_image(&args.component) {
        let auth = command_line_config(args.registry.registry_auth.as_deref())?;
        let (reference, pulled) = tools::pull_blocking(&engine, &args.component, &auth)?;
        writeln!(out, "component: {reference}")?;
        writeln!(
            out,
            "manifest:  sha256:{} (verified)",
            pulled.manifest_digest
        )?;
        (tools::policy_name(&reference).to_string(), pulled.component)
    } else {
        let path = Path::new(&args.component);
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        writeln!(out, "component: {}", path.display())?;
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("policy");
        (name.to_string(), bytes)
    };
    writeln!(out, "sha256:    {}", sha256_hex(&bytes))?;
    let (imports, exports) = match loader::component_interfaces(&engine, &bytes) {
        Ok(found) => found,
        Err(e) => {
            writeln!(out, "accepted:  no: {e}")?;
            return Ok(false);
        }
    };
    writeln!(out, "imports:")?;
    for import in &imports {
        let verdict = if imports::is_allowed(import) {
            "allowed"
        } else {
            "FORBIDDEN"
        };
        writeln!(out, "  {import} ({verdict})")?;
    }
    writeln!(out, "exports:")?;
    for export in &exports {
        writeln!(out, "  {export}")?;
    }
    writeln!(out, "contract:  {}", contract_of(&exports))?;
    let verdict = loader::compile(&engine, &name, &bytes, None)
        .and_then(|compiled| engine.block_on(compiled.verify(&name, limits(args.timeout_ms))));
    match verdict {
        Ok(info) => {
            writeln!(out, "policy:    {} {}", info.name, info.version)?;
            writeln!(
                out,
                "accepted:  yes (its settings are checked by validate-config when it is loaded)"
            )?;
            Ok(true)
        }
        Err(e) => {
            writeln!(out, "accepted:  no: {e}")?;
            Ok(false)
        }
    }
}
