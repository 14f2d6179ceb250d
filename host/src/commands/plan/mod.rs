//! `vcd-ccm plan`: what a reconcile of every LoadBalancer Service would
//! write to VCD now, read only. Exit 0 when nothing would change, 2 when
//! something would, 1 on an error (as `terraform plan -detailed-exitcode`).

mod report;
mod world;

use std::collections::HashSet;
use std::process::ExitCode;

use crate::cli::{Output, PlanArgs};
use crate::controllers::service::has_finalizer;
use crate::lb::{LbError, LoadBalancers, PlannedWrite};
use crate::manager::PlanSide;
use anyhow::Context;
use report::{Outcome, Report, ServicePlan};
use world::World;

/// Plans every Service and prints the report.
pub fn plan(args: &PlanArgs) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("vcd-ccm plan: cannot start the async runtime: {error}");
            return ExitCode::from(1);
        }
    };
    let report = match runtime.block_on(plan_all(args)) {
        Ok(report) => report,
        Err(error) => {
            eprintln!("vcd-ccm plan: {}", super::one_line(&error));
            return ExitCode::from(1);
        }
    };
    let text = match args.output {
        Output::Text => report.text(),
        Output::Json => format!("{:#}\n", report.json()),
    };
    print!("{text}");
    ExitCode::from(report.exit_code())
}

async fn plan_all(args: &PlanArgs) -> anyhow::Result<Report> {
    let settings = crate::commands::run::settings::settings(&args.run)
        .await
        .context("reading run's settings")?;
    if !settings.controllers.service || !settings.cloud.load_balancers_enabled() {
        return Ok(Report::off());
    }
    let side = PlanSide::start(&settings).await?;
    let world = World::list(&side.kube)
        .await
        .context("listing Services, Nodes, EndpointSlices and Namespaces")?;
    let class = &settings.service.classes;
    let mut report = Report::default();
    let mut live = HashSet::new();
    for service in &world.services {
        let wanted =
            class.wants_load_balancer(service) && service.metadata.deletion_timestamp.is_none();
        if !wanted && !has_finalizer(service) {
            continue;
        }
        live.insert(service.metadata.uid.clone().unwrap_or_default());
        let spec = world.caches.spec_of(service);
        let result = match wanted {
            true => {
                let nodes: Vec<_> = world
                    .caches
                    .members_of(service, side.lb.probes_local_nodes())
                    .iter()
                    .map(|n| n.node_spec())
                    .collect();
                side.lb.plan_ensure(&spec, &nodes).await
            }
            false => side.lb.plan_delete(&spec).await,
        };
        report.services.push(ServicePlan {
            service: spec.key(),
            deleting: !wanted,
            outcome: outcome(result),
        });
    }
    for (who, writes) in plan_gone(&side.lb, &live).await? {
        report.services.push(ServicePlan {
            service: who,
            deleting: true,
            outcome: Outcome::Writes(writes),
        });
    }
    Ok(report)
}

/// The deletes of objects whose Service is gone from Kubernetes.
async fn plan_gone(
    lb: &LoadBalancers,
    live: &HashSet<String>,
) -> anyhow::Result<Vec<(String, Vec<PlannedWrite>)>> {
    let gone = lb
        .plan_sweep(live)
        .await
        .context("planning the deletes of Services that are gone")?;
    Ok(gone.into_iter().collect())
}

fn outcome(result: Result<Vec<PlannedWrite>, LbError>) -> Outcome {
    match result {
        Ok(writes) => Outcome::Writes(writes),
        Err(error) => match error.refused_write() {
            Some(write) => Outcome::DecisionWrites(write),
            None => Outcome::Error(error.to_string()),
        },
    }
}
