//! `vcd-ccm demo`: the real controllers, through the same manager as
//! `vcd-ccm run`, against vcdsim and kubesim started in this process.

mod objects;
mod setup;
mod table;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use kubesim::KubeSim;

use crate::cli::DemoArgs;
use crate::commands::run::shutdown_signal;
use crate::config::CloudConfig;
use crate::controllers::EnabledControllers;
use crate::controllers::leader::{LeaderConfig, default_identity};
use crate::controllers::lifecycle::DeletionFraction;
use crate::controllers::node::NodeControllerConfig;
use crate::controllers::service::ServiceControllerConfig;
use crate::manager::{DEFAULT_KUBE_API_RATE, Ended, Manager, Settings};
use crate::serve::{ServeConfig, Transport};
use table::Snapshot;

/// How often the table is refreshed.
const REFRESH: Duration = Duration::from_millis(250);

/// `vcd-ccm demo`: the controllers against embedded simulators, with a live table.
pub fn demo(args: &DemoArgs) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("vcd-ccm demo: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("vcd-ccm demo: {}", crate::commands::one_line(&error));
            ExitCode::FAILURE
        }
    }
}

async fn run(args: &DemoArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let (vcd, vms) = setup::start_vcd(args.scenario).await?;
    let kube = KubeSim::start().await.context("kubesim")?;
    kube.write_kubeconfig(&args.kubeconfig_out)
        .with_context(|| format!("writing {}", args.kubeconfig_out.display()))?;
    let dir = tempfile::tempdir().context("a temporary directory")?;
    let files = setup::write_files(dir.path(), &vcd)?;
    let kubeconfig =
        kube::config::Kubeconfig::from_yaml(&kube.kubeconfig()).context("kubesim's kubeconfig")?;
    let identity = default_identity();
    let settings = Settings {
        cloud: CloudConfig::from_file(&files.cloud_config)?,
        secret_dir: files.secret_dir,
        credentials_secret: None,
        policy_dir: Some(files.policy_dir),
        kube: kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .context("kubesim's kubeconfig")?,
        // As `run`: the demo shows what a cluster sees, throttling included.
        kube_api_rate: Some(DEFAULT_KUBE_API_RATE),
        controllers: EnabledControllers::parse(&["*".to_string()]).map_err(anyhow::Error::msg)?,
        service: ServiceControllerConfig {
            workers: 2,
            ..ServiceControllerConfig::default()
        },
        node: NodeControllerConfig {
            concurrent_node_syncs: 2,
            ..NodeControllerConfig::default()
        },
        node_monitor_period: Duration::from_secs(1),
        max_node_deletion_fraction: DeletionFraction::default(),
        vcd_unreachable_timeout: std::time::Duration::from_secs(60),
        shutdown_grace_period: std::time::Duration::from_secs(5),
        leader: Some(LeaderConfig {
            identity: identity.clone(),
            ..LeaderConfig::default()
        }),
        serve: Some(ServeConfig {
            listen: ([127, 0, 0, 1], 0).into(),
            transport: Transport::Http,
        }),
        delegated_access: None,
        identity,
    };
    let manager = Manager::start(settings).await?;
    println!("vcdsim (VMware Cloud Director):  {}", vcd.base_url());
    println!("kubesim (Kubernetes API):        {}", kube.url());
    if let Some(url) = manager.serving_url() {
        println!("health and metrics:              {url}/metrics");
    }
    println!(
        "kubectl:                         kubectl --kubeconfig {} get svc,nodes -A\n",
        args.kubeconfig_out.display()
    );
    let client = kube.client().context("kubesim client")?;
    objects::create(&client, &vms).await?;
    let watch = watch_table(&client, &vcd, started, args);
    let result = if args.once {
        watch.await
    } else {
        tokio::select! {
            result = watch => result,
            ended = manager.run_until(shutdown_signal()) => match ended {
                Ended::Lost(lost) => Err(anyhow::Error::new(lost).context("leadership lost")),
                Ended::Stopped(_) => Ok(()),
            },
        }
    };
    if let Some(dir) = &args.request_log {
        write_request_logs(dir, &vcd, &kube)?;
    }
    result
}

/// Writes what each simulator answered, one JSON object per line.
fn write_request_logs(
    dir: &std::path::Path,
    vcd: &vcdsim::Sim,
    kube: &KubeSim,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let kube_lines: String = kube
        .requests()
        .iter()
        .map(|r| serde_json::to_string(r).map(|line| line + "\n"))
        .collect::<Result<_, _>>()?;
    for (file, text) in [
        ("vcd.jsonl", vcd.requests_jsonl()),
        ("kube.jsonl", kube_lines),
    ] {
        let path = dir.join(file);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Prints the table whenever it changes. With `--once`, returns at
/// convergence (or fails at the timeout); otherwise runs until stopped.
async fn watch_table(
    client: &kube::Client,
    vcd: &vcdsim::Sim,
    started: Instant,
    args: &DemoArgs,
) -> anyhow::Result<()> {
    let mut shown = String::new();
    let mut converged_at = None;
    loop {
        let snapshot = Snapshot::take(client, vcd)
            .await
            .context("reading the cluster")?;
        let table = snapshot.render();
        if table != shown {
            println!("--- {:.1} s\n{table}", started.elapsed().as_secs_f64());
            shown = table;
        }
        if converged_at.is_none() && snapshot.converged() {
            let elapsed = started.elapsed().as_secs_f64();
            converged_at = Some(elapsed);
            println!("{}", summary(&snapshot, elapsed));
            if args.once {
                return Ok(());
            }
            println!(
                "Watching for changes (try kubectl edit/delete against the kubeconfig above); Ctrl-C stops."
            );
        }
        if args.once && started.elapsed() > args.timeout {
            let warnings = table::warnings(client)
                .await
                .unwrap_or_else(|e| format!("  (could not read Events: {e})\n"));
            bail!(
                "not converged after {:?}; last state:\n{shown}\nWarning Events:\n{warnings}",
                args.timeout
            );
        }
        tokio::time::sleep(REFRESH).await;
    }
}

fn summary(snapshot: &Snapshot, elapsed: f64) -> String {
    let virtual_services: usize = snapshot.services.iter().map(|s| s.virtual_services).sum();
    let pools: usize = snapshot.services.iter().map(|s| s.pools).sum();
    format!(
        "Converged in {elapsed:.1} s: {} Services have external IPs ({virtual_services} virtual services, {pools} pools on edge1), {} Nodes initialised.",
        snapshot.services.len(),
        snapshot.nodes.len()
    )
}
