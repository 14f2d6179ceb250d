//! `vcd-ccm run`: the production entry point.

use std::process::ExitCode;

pub(super) mod settings;

use crate::cli::RunArgs;
use crate::manager::{Ended, Manager};

/// `vcd-ccm run`: the cloud-controller-manager until SIGTERM or SIGINT.
pub fn run(args: &RunArgs) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("vcd-ccm: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async {
        let started = match settings::settings(args).await {
            Ok(settings) => Manager::start(settings).await,
            Err(error) => Err(error),
        };
        let manager = match started {
            Ok(manager) => manager,
            Err(error) => {
                eprintln!("vcd-ccm: {error}");
                return ExitCode::FAILURE;
            }
        };
        match manager.run_until(shutdown_signal()).await {
            Ended::Lost(lost) => {
                // As upstream: a replica that lost the lease exits and restarts.
                tracing::error!(reason = %lost, "leaderelection lost");
                ExitCode::FAILURE
            }
            Ended::Stopped(handover) => {
                tracing::info!(?handover, "stopped on signal");
                ExitCode::SUCCESS
            }
        }
    })
}

/// Ctrl-C, or SIGTERM from the kubelet.
pub async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
}
