//! Bytes → checked, compiled, pre-instantiated policy.
//!
//! Order: digest and pin, compile, import allow-list, link (`InstancePre`),
//! export type-check with `describe`, then `validate-config`. Each step fails
//! with its own [`LoadError`], and nothing is served until all have passed.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};
use wasmtime::component::{Component, ComponentExportIndex, InstancePre};

use super::builtin::{self, DEFAULT_POLICY_NAME};
use super::capacity::{Lane, Share};
use super::contract::Contract;
use super::engine::PolicyEngine;
use super::errors::LoadError;
use super::imports;
use super::model::PolicyInfo;
use super::sandbox::{Limits, Sandbox};

/// Where a policy comes from and how it is to run.
pub struct PolicySource<'a> {
    /// The policy's name, which labels its logs, metrics and errors; `default`
    /// gets the instance pool's reserved lane.
    pub name: &'a str,
    /// The component's bytes.
    pub bytes: &'a [u8],
    /// sha256 (lowercase hex) the bytes must have, when the provider pinned one.
    pub pin: Option<&'a str>,
    /// Provider configuration, JSON text.
    pub config: String,
    /// The budgets every call of the policy runs under.
    pub limits: Limits,
}

/// A compiled component that passed the import check and links against the host.
pub struct Compiled {
    pub(super) engine: Arc<PolicyEngine>,
    pub(super) pre: InstancePre<Sandbox>,
    pub(super) exports: Exports,
    /// The policy's share of the instance pool.
    pub(super) share: Share,
    /// sha256 of the component's bytes, lowercase hex.
    pub digest: String,
}

pub(super) struct Exports {
    /// The contract version the component implements.
    pub contract: Contract,
    pub describe: ComponentExportIndex,
    pub validate_config: ComponentExportIndex,
    pub decide: ComponentExportIndex,
}

/// A policy ready to serve: compiled, described and with an accepted config.
pub struct Policy {
    pub(super) compiled: Compiled,
    pub(super) name: Arc<str>,
    /// What the policy's `describe` returned.
    pub info: PolicyInfo,
    /// The configuration `validate-config` accepted, JSON text; passed to every `decide`.
    pub config: String,
    /// The budgets every call runs under.
    pub limits: Limits,
}

impl Policy {
    /// The name it was loaded under, which labels its logs, metrics and errors.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// sha256 of the component's bytes, lowercase hex.
    pub fn digest(&self) -> &str {
        &self.compiled.digest
    }

    /// The contract version the policy implements.
    pub fn contract(&self) -> Contract {
        self.compiled.exports.contract
    }
}

/// sha256 of `bytes` as lowercase hex, the form a manifest pins.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Compiles and links a component without running any of its code.
pub fn compile(
    engine: &Arc<PolicyEngine>,
    name: &str,
    bytes: &[u8],
    pin: Option<&str>,
) -> Result<Compiled, LoadError> {
    let policy = name.to_string();
    let digest = sha256_hex(bytes);
    if let Some(expected) = pin
        && !expected.eq_ignore_ascii_case(&digest)
    {
        return Err(LoadError::DigestMismatch {
            policy,
            expected: expected.to_string(),
            actual: digest,
        });
    }
    let component = engine
        .compiled
        .get_or_compile(&digest, || Component::new(&engine.engine, bytes))
        .map_err(|e| LoadError::InvalidComponent {
            policy: policy.clone(),
            reason: format!("{e:#}"),
        })?;
    let imports = imports::list(&engine.engine, &component);
    if let Some(import) = imports.iter().find(|import| !imports::is_allowed(import)) {
        return Err(LoadError::ForbiddenImport {
            policy,
            import: import.clone(),
            allowed: imports::allowed_summary(),
        });
    }
    let wrong_world = |reason: String| LoadError::WrongWorld {
        policy: policy.clone(),
        reason,
    };
    let (contract, interface) = Contract::ALL
        .into_iter()
        .find_map(|c| Some((c, component.get_export_index(None, c.policy_interface())?)))
        .ok_or_else(|| {
            let served: Vec<String> = Contract::ALL.iter().map(|c| c.policy_interface()).collect();
            wrong_world(format!("it exports none of {}", served.join(", ")))
        })?;
    let function = |name: &str| {
        component
            .get_export_index(Some(&interface), name)
            .ok_or_else(|| {
                wrong_world(format!(
                    "{} has no function {name}",
                    contract.policy_interface()
                ))
            })
    };
    let exports = Exports {
        contract,
        describe: function("describe")?,
        validate_config: function("validate-config")?,
        decide: function("decide")?,
    };
    let pre = engine
        .linker
        .instantiate_pre(&component)
        .map_err(|e| wrong_world(format!("{e:#}")))?;
    let lane = if name == DEFAULT_POLICY_NAME {
        Lane::Reserved
    } else {
        Lane::Shared
    };
    Ok(Compiled {
        engine: engine.clone(),
        pre,
        exports,
        share: Share::new(lane),
        digest,
    })
}

impl Compiled {
    /// Calls `describe` and type-checks `decide` against the contract, so a
    /// component built from another version of `wit/` fails here, not per Service.
    pub async fn verify(&self, name: &str, limits: Limits) -> Result<PolicyInfo, LoadError> {
        let name_arc: Arc<str> = Arc::from(name);
        let failed = |call: &'static str| {
            move |cause| LoadError::Call {
                policy: name.to_string(),
                call,
                cause,
            }
        };
        let info = self
            .describe(&name_arc, limits)
            .await
            .map_err(failed("describe"))?;
        self.check_decide_type(&name_arc, limits)
            .await
            .map_err(failed("decide type check"))?;
        Ok(info)
    }
}

/// Compiles, verifies and configures a policy.
pub async fn load(
    engine: &Arc<PolicyEngine>,
    source: PolicySource<'_>,
) -> Result<Policy, LoadError> {
    let compiled = compile(engine, source.name, source.bytes, source.pin)?;
    let info = compiled.verify(source.name, source.limits).await?;
    let name: Arc<str> = Arc::from(source.name);
    compiled
        .validate_config(&name, source.limits, &source.config)
        .await
        .map_err(|cause| LoadError::Call {
            policy: source.name.to_string(),
            call: "validate-config",
            cause,
        })?
        .map_err(|message| LoadError::InvalidConfig {
            policy: source.name.to_string(),
            message,
        })?;
    Ok(Policy {
        compiled,
        name,
        info,
        config: source.config,
        limits: source.limits,
    })
}

/// A policy named on a command line or in a suite: the built-in `default`, or
/// a component file.
pub enum PolicyRef {
    /// The built-in `default` policy.
    Builtin,
    /// A component file.
    File(PathBuf),
}

impl PolicyRef {
    /// `default`, or a path taken relative to `base`.
    pub fn parse(spec: &str, base: &Path) -> PolicyRef {
        if spec == DEFAULT_POLICY_NAME {
            PolicyRef::Builtin
        } else {
            PolicyRef::File(base.join(spec))
        }
    }

    /// Loads it under `limits` with no pin: for tools, not for serving.
    pub async fn load(
        &self,
        engine: &Arc<PolicyEngine>,
        config: String,
        limits: Limits,
    ) -> Result<Policy, LoadError> {
        let (name, bytes) = match self {
            PolicyRef::Builtin => (DEFAULT_POLICY_NAME, builtin::DEFAULT_POLICY_WASM.to_vec()),
            PolicyRef::File(path) => {
                let bytes = std::fs::read(path).map_err(|error| LoadError::Read {
                    path: path.clone(),
                    error,
                })?;
                let name = path.file_stem().and_then(|s| s.to_str());
                (name.unwrap_or("policy"), bytes)
            }
        };
        let source = PolicySource {
            name,
            bytes: &bytes,
            pin: None,
            config,
            limits,
        };
        load(engine, source).await
    }
}

/// The component's imports and exports by name, without linking or running it.
pub fn component_interfaces(
    engine: &Arc<PolicyEngine>,
    bytes: &[u8],
) -> Result<(Vec<String>, Vec<String>), String> {
    let component = engine
        .compiled
        .get_or_compile(&sha256_hex(bytes), || Component::new(&engine.engine, bytes))
        .map_err(|e| format!("not a valid WebAssembly component: {e:#}"))?;
    let exports = component
        .component_type()
        .exports(&engine.engine)
        .map(|(name, _)| name.to_string())
        .collect();
    Ok((imports::list(&engine.engine, &component), exports))
}

/// Loads the default policy with the given settings (JSON text) and budgets.
pub async fn load_default(
    engine: &Arc<PolicyEngine>,
    config: String,
    limits: Limits,
) -> Result<Policy, LoadError> {
    load(
        engine,
        PolicySource {
            name: DEFAULT_POLICY_NAME,
            bytes: builtin::DEFAULT_POLICY_WASM,
            pin: None,
            config,
            limits,
        },
    )
    .await
}
