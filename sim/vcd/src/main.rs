//! `vcdsim`: serve a simulated VCD on a loopback port until Ctrl-C.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use vcdsim::{Knobs, Options, Scenario, Sim};

/// A simulated VMware Cloud Director / NSX-T / NSX ALB API for tests.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Scenario YAML seeding the world (default: the built-in scenario).
    #[arg(long)]
    scenario: Option<PathBuf>,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// Serve HTTPS with a CA and server certificate generated at start
    /// (default: plain HTTP).
    #[arg(long)]
    tls: bool,
    /// With --tls: write the CA certificate (PEM) here, for clients to trust.
    #[arg(long, requires = "tls")]
    ca_out: Option<PathBuf>,
    /// Write the connection details as KEY=value lines to this file.
    #[arg(long)]
    env_file: Option<PathBuf>,
    /// Append every request to this JSONL file.
    #[arg(long)]
    request_log: Option<PathBuf>,
    /// Duration of every async task, e.g. `2s` (default: tasks finish at once).
    #[arg(long, value_parser = humantime::parse_duration)]
    task_duration: Option<Duration>,
    /// Latency added to every call, e.g. `50ms`.
    #[arg(long, value_parser = humantime::parse_duration)]
    latency: Option<Duration>,
    /// Lifetime of access tokens, e.g. `10m`.
    #[arg(long, value_parser = humantime::parse_duration)]
    token_ttl: Option<Duration>,
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let args = Args::parse();
    let scenario = match &args.scenario {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            Scenario::from_yaml(&text)?
        }
        None => Scenario::default_scenario(),
    };
    let mut knobs = Knobs::default();
    if let Some(duration) = args.task_duration {
        knobs.task_duration_ms = millis(duration);
    }
    if let Some(latency) = args.latency {
        knobs.latency_ms = millis(latency);
    }
    if let Some(ttl) = args.token_ttl {
        knobs.token_ttl_ms = millis(ttl);
    }
    let options = Options {
        listen: args.listen,
        knobs,
        request_log: args.request_log,
        tls: args.tls,
    };
    let sim = Sim::start_with(scenario, options).await?;
    let mut lines = vec![format!("VCDSIM_URL={}", sim.base_url())];
    for (prefix, credentials) in [("VCDSIM", sim.tenant()), ("VCDSIM_SYSTEM", sim.system())] {
        if let Some(c) = credentials {
            lines.push(format!("{prefix}_ORG={}", c.org));
            lines.push(format!("{prefix}_USER={}", c.user));
            lines.push(format!("{prefix}_PASSWORD={}", c.password));
            lines.push(format!(
                "{prefix}_REFRESH_TOKEN={}",
                c.api_token.clone().unwrap_or_default()
            ));
        }
    }
    if let (Some(path), Some(ca)) = (&args.ca_out, sim.ca_pem()) {
        std::fs::write(path, ca).with_context(|| format!("writing {}", path.display()))?;
        lines.push(format!("VCDSIM_CA_FILE={}", path.display()));
    }
    let env = lines.join("\n") + "\n";
    print!("{env}");
    if let Some(path) = &args.env_file {
        // Written beside it and renamed, so a reader waiting for the file
        // never sees half of it.
        let partial = path.with_extension("partial");
        std::fs::write(&partial, &env)
            .and_then(|()| std::fs::rename(&partial, path))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    tokio::signal::ctrl_c()
        .await
        .context("waiting for Ctrl-C")?;
    sim.shutdown().await;
    Ok(())
}
