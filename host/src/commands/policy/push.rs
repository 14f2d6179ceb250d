//! `vcd-ccm policy push FILE REF`: checks the component as the CCM would
//! load it, publishes it as a wasm artifact and prints the reference
//! pinned by the manifest's digest.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};

use crate::cli::PushArgs;
use crate::policy::oci::artifact::ComponentInterfaces;
use crate::policy::oci::auth::command_line_config;
use crate::policy::oci::{Reference, on_registry_runtime, push as registry_push};
use crate::policy::{Limits, PolicyEngine, loader};

/// `vcd-ccm policy push`.
pub fn push(args: &PushArgs) -> ExitCode {
    super::finish(publish(args).map(|reference| println!("{reference}")))
}

fn publish(args: &PushArgs) -> Result<Reference> {
    let target = Reference::push_target(&args.reference)?;
    let component = std::fs::read(&args.component)
        .with_context(|| format!("reading {}", args.component.display()))?;
    let engine = PolicyEngine::new()?;
    let interfaces = accepted(&engine, &args.component, &component)?;
    let auth = command_line_config(args.registry.registry_auth.as_deref())?;
    let credentials = auth.for_registry(&target.registry)?;
    let started = Instant::now();
    let owned = target.clone();
    let pinned = engine
        .block_on(on_registry_runtime(async move {
            registry_push::push(&owned, credentials, &component, interfaces).await
        }))
        .map_err(anyhow::Error::msg)?
        .with_context(|| format!("pushing to {target}"))?;
    tracing::info!(reference = %pinned, elapsed = ?started.elapsed(), "pushed");
    Ok(pinned)
}

/// The component's interfaces, once it compiles, links and describes
/// itself as the CCM requires.
fn accepted(
    engine: &std::sync::Arc<PolicyEngine>,
    path: &Path,
    bytes: &[u8],
) -> Result<ComponentInterfaces> {
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("policy");
    let (imports, exports) =
        loader::component_interfaces(engine, bytes).map_err(anyhow::Error::msg)?;
    let compiled = loader::compile(engine, name, bytes, None)?;
    engine.block_on(compiled.verify(name, Limits::default()))?;
    Ok(ComponentInterfaces { imports, exports })
}
