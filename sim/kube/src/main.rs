//! `kubesim`: run the emulator so `kubectl` (or a controller) can talk to it.

use anyhow::Context;
use clap::Parser;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    version,
    about = "An in-memory Kubernetes API server for tests and demos"
)]
struct Args {
    /// Address to serve the API on (plain HTTP).
    #[arg(long, default_value = "127.0.0.1:6443")]
    listen: SocketAddr,
    /// Write a kubeconfig for this server here.
    #[arg(long)]
    kubeconfig_out: Option<PathBuf>,
    /// YAML file of objects (documents separated by `---`) to create at start.
    #[arg(long)]
    seed: Vec<PathBuf>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let args = Args::parse();
    let config = kubesim::Config {
        listen: args.listen,
        ..kubesim::Config::default()
    };
    let sim = kubesim::KubeSim::start_with(config).await?;
    for path in &args.seed {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        for document in serde_yaml_ng::Deserializer::from_str(&text) {
            let object: serde_json::Value = serde::Deserialize::deserialize(document)
                .with_context(|| format!("parsing {}", path.display()))?;
            if object.is_null() {
                continue;
            }
            sim.seed(object)
                .with_context(|| format!("seeding from {}", path.display()))?;
        }
    }
    if let Some(path) = &args.kubeconfig_out {
        sim.write_kubeconfig(path)?;
        eprintln!("kubesim: kubeconfig written to {}", path.display());
    }
    eprintln!("kubesim: serving the Kubernetes API on {}", sim.url());
    tokio::signal::ctrl_c()
        .await
        .context("waiting for Ctrl-C")?;
    Ok(())
}
