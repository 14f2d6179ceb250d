//! The process: reads the configuration, connects to Kubernetes and VCD,
//! loads the policies, serves /healthz, /readyz and /metrics, wins the
//! leader election, then runs the enabled controllers until leadership is
//! lost or a stop is asked for. A stop is a handover: no new sync starts,
//! the running ones finish (bounded by `shutdown_grace_period`), then the
//! Lease is released so a standby leads at once. `vcd-ccm run` and
//! `vcd-ccm demo` both go through here.

mod cloud;
mod lb_side;
mod plan_side;
mod settings;
mod token_secret;
mod vcd_health;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::Node;
use kube::Api;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use tokio::sync::watch;
use tokio::task::JoinSet;

pub use plan_side::{PlanSide, PlanSideError};
pub use settings::{DEFAULT_KUBE_API_RATE, Settings, StartError};
use settings::{access_client, kube_client};
pub use token_secret::CredentialSecret;

use crate::access::Delegated;
use crate::controllers::leader::{
    DEFAULT_LEASE_NAMESPACE, LeaderElector, Leadership, LeadershipLost,
};
use crate::controllers::lifecycle::{self, LifecycleConfig, LifecycleController};
use crate::controllers::node::{self, CloudNodeController, NodeControllerConfig};
use crate::controllers::service::{
    AnnotationJournal, KubeTlsSecrets, LbSide, ServiceController, ServiceControllerConfig,
};
use crate::controllers::supervise::TaskHealth;
use crate::controllers::{CacheSync, Drained, EventRecorder, Informer, SyncGate};
use crate::policy::oci::SecretReader;
use crate::ratelimit::ThrottleMetrics;
use crate::serve::{self, Authorize, Check, Probes, Server, SharedRegistry};
use crate::vcd::rotation::Rotation;
use crate::vcd::token_memory::MemoryTokenStore;
use cloud::{CloudSide, Components};
use lb_side::LbOwnership;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabels {
    name: &'static str,
    manager: &'static str,
}

/// A started manager: serving, connected, and (once leader) reconciling.
pub struct Manager {
    server: Option<Server>,
    main: tokio::task::JoinHandle<Ended>,
    stop: watch::Sender<bool>,
}

/// How a manager's run ended.
#[derive(Debug)]
pub enum Ended {
    /// Leadership was lost or given up; the process should exit with
    /// status 1 and be restarted, as upstream.
    Lost(LeadershipLost),
    /// Stopped as asked.
    Stopped(Handover),
}

/// What a requested stop did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handover {
    /// Not leading yet: nothing to finish or release.
    Standby,
    /// Led: the syncs drained (or were cut at the bound), and the Lease was
    /// released (`true`) or left to expire.
    Led {
        /// How waiting for the running syncs ended.
        drained: Drained,
        /// Whether the Lease was released.
        released: bool,
    },
}

impl Manager {
    /// Checks the settings and starts. Errors here are the one line the
    /// process stops with: a wrong file, flag or policy directory.
    pub async fn start(settings: Settings) -> Result<Manager, StartError> {
        let metrics: SharedRegistry = SharedRegistry::default();
        let throttle = ThrottleMetrics::register(&mut write(&metrics));
        let client = kube_client(&settings, &throttle)?;
        let host = settings.identity.clone();
        let events_client = client.clone();
        let recorder =
            move |component: &str| EventRecorder::new(events_client.clone(), component, &host);
        let elector = match &settings.leader {
            Some(config) => Some(
                LeaderElector::new(
                    // Its own rate, as client-go's: a busy controller must
                    // not delay the lease renewal.
                    kube_client(&settings, &throttle)?,
                    config.clone(),
                    recorder("cloud-controller-manager"),
                    &mut write(&metrics),
                )
                .map_err(StartError::Leader)?,
            ),
            None => None,
        };
        // Standbys never exchange a refresh token: it may be a service
        // account's, which works once. The Secret is written with a client
        // of its own, never held up by --kube-api-qps.
        let (leading, leading_now) = watch::channel(elector.is_none());
        let rotation = Some(credential_rotation(&settings, leading_now)?);
        if let (Some(rotation), Some(secret)) = (&rotation, settings.credentials_secret.clone()) {
            tokio::spawn(token_secret::report_refusals(
                rotation.health(),
                secret,
                rotation.store_name().to_string(),
                recorder("cloud-controller-manager"),
            ));
        }
        let pull_secrets = pull_secrets(&settings, &client);
        let cloud = CloudSide::prepare(&settings, &metrics, rotation.clone(), pull_secrets).await?;
        let leader_only_login = elector.is_some() && cloud.leader_only_login();
        let serve_lb = settings.controllers.service && settings.cloud.load_balancers_enabled();
        if settings.controllers.service && !serve_lb {
            tracing::info!("loadbalancer.enabled is false: no load balancers, the node side only");
        }
        let lb = match serve_lb {
            true => Some(LbOwnership {
                identity: cloud::cluster_identity(&client).await?,
                journal: Arc::new(AnnotationJournal::new(client.clone())),
                tls_secrets: Arc::new(KubeTlsSecrets::new(client.clone())),
            }),
            false => None,
        };
        let (lb_side, lb_watch) = watch::channel(LbSide::Pending(
            "VMware Cloud Director has not been reached yet".to_string(),
        ));
        let lb_ready = Gauge::default();
        write(&metrics).register(
            "vcd_ccm_load_balancer_ready",
            "1 once the load-balancer side (gateway, ALB, address source) is set up; 0 while it is retried",
            lb_ready.clone(),
        );
        let task_health = TaskHealth::register(&mut write(&metrics));
        let vcd_reached = Arc::new(AtomicBool::new(false));
        let reach = cloud.reachability();
        let unreachable_timeout = settings.vcd_unreachable_timeout;
        let caches = CacheSync::default();
        let server = match settings.serve.clone() {
            None => None,
            Some(config) => {
                let synced = caches.clone();
                let mut probes = Probes {
                    ready: vec![
                        Check::new("informer-sync", move || synced.check()),
                        vcd_health::readiness(
                            vcd_reached.clone(),
                            reach.clone(),
                            settings.vcd_unreachable_timeout,
                        ),
                    ],
                    ..Probes::default()
                };
                if let Some(rotation) = &rotation {
                    probes.ready.push(token_secret::readiness(rotation));
                }
                if lb.is_some() {
                    let side = lb_watch.clone();
                    // A standby that must not log in sets it up once it leads.
                    let led = leading.subscribe();
                    let standing_by = move || leader_only_login && !*led.borrow();
                    probes
                        .ready
                        .push(Check::new("load-balancer", move || match &*side.borrow() {
                            _ if standing_by() => Ok(()),
                            LbSide::Ready(_) => Ok(()),
                            LbSide::Pending(reason) => Err(reason.clone()),
                        }));
                }
                let tasks = task_health.clone();
                probes
                    .health
                    .push(Check::new("controller-tasks", move || tasks.check()));
                if let Some(elector) = &elector {
                    let health = elector.health();
                    probes
                        .health
                        .push(Check::new("leaderElection", move || health.check()));
                }
                let access = match settings.delegated_access.clone() {
                    Some(paths) => Some(Arc::new(Delegated::new(
                        access_client(&settings)?,
                        paths,
                        &mut write(&metrics),
                    )) as Arc<dyn Authorize>),
                    None => None,
                };
                Some(
                    serve::start(
                        config,
                        probes,
                        metrics.clone(),
                        access,
                        Some(cloud.captures()),
                    )
                    .await
                    .map_err(StartError::Serve)?,
                )
            }
        };
        let running = Family::<ControllerLabels, Gauge>::default();
        write(&metrics).register(
            "running_managed_controllers",
            "Controllers running in this process (1) by name",
            running.clone(),
        );
        let (stop, stop_asked) = watch::channel(false);
        let main = tokio::spawn(async move {
            // A refresh token is exchanged by the leader alone: a standby
            // only checks that VCD answers, and connects once it leads.
            let mut leadership = None;
            if leader_only_login && let Some(elector) = &elector {
                let standby = acquire_standing_by(&cloud, elector, vcd_reached.clone());
                match unless_stopped(&stop_asked, standby).await {
                    Some(won) => leadership = Some(won),
                    None => return Ended::Stopped(Handover::Standby),
                }
                leading.send_replace(true);
                vcd_reached.store(false, Ordering::Relaxed);
            }
            let Some(Components {
                instances,
                policy_watcher: _reloading,
                lb_setup,
            }) = unless_stopped(&stop_asked, cloud.connect()).await
            else {
                return Ended::Stopped(Handover::Standby);
            };
            let _probe = AbortOnDrop(tokio::spawn(vcd_health::probe(
                lb_setup.client.clone(),
                reach.clone(),
                vcd_health::probe_period(unreachable_timeout),
            )));
            // Standbys set it up too: they report it, and take over ready.
            let policies = lb_setup.policies.clone();
            let lb_task = lb.map(|ownership| {
                AbortOnDrop(tokio::spawn(lb_setup.run(ownership, lb_side, lb_ready)))
            });
            let leadership = match (&elector, leadership) {
                (_, Some(won)) => Some(won),
                (Some(elector), None) => {
                    // A standby is ready once VCD answers.
                    vcd_reached.store(true, Ordering::Relaxed);
                    match unless_stopped(&stop_asked, elector.acquire()).await {
                        Some(leadership) => {
                            leading.send_replace(true);
                            Some(leadership)
                        }
                        None => return Ended::Stopped(Handover::Standby),
                    }
                }
                (None, None) => None,
            };
            let gate = SyncGate::default();
            let mut controllers = JoinSet::new();
            // Every controller reads Nodes: one watch and one cache for all.
            let mut nodes =
                Informer::new(Api::<Node>::all(client.clone())).trimmed(node::trim_cached);
            let s = &settings;
            if lb_task.is_some() {
                let controller = ServiceController::new(
                    client.clone(),
                    &mut nodes,
                    policies,
                    lb_watch,
                    recorder("service-controller"),
                    ServiceControllerConfig {
                        tasks: task_health.clone(),
                        gate: gate.clone(),
                        ..s.service.clone()
                    },
                    &mut write(&metrics),
                );
                controllers.spawn(controller.run(caches.register("service")));
                mark_running(&running, "service");
            }
            if s.controllers.cloud_node {
                let controller = CloudNodeController::new(
                    client.clone(),
                    &mut nodes,
                    instances.clone(),
                    recorder(node::COMPONENT),
                    NodeControllerConfig {
                        gate: gate.clone(),
                        ..s.node.clone()
                    },
                    &mut write(&metrics),
                );
                controllers.spawn(controller.run(caches.register("cloud-node")));
                mark_running(&running, "cloud-node");
            }
            if s.controllers.cloud_node_lifecycle {
                let controller = LifecycleController::new(
                    client.clone(),
                    &nodes,
                    instances.clone(),
                    recorder(lifecycle::COMPONENT),
                    LifecycleConfig {
                        monitor_period: s.node_monitor_period,
                        max_deletion_fraction: s.max_node_deletion_fraction,
                        gate: gate.clone(),
                    },
                    &mut write(&metrics),
                );
                controllers.spawn(controller.run(caches.register("cloud-node-lifecycle")));
                mark_running(&running, "cloud-node-lifecycle");
            }
            if !controllers.is_empty() {
                controllers.spawn(nodes.run());
            }
            // Only now: until the caches are registered, `informer-sync`
            // would pass without them.
            vcd_reached.store(true, Ordering::Relaxed);
            let leading = leadership.is_some();
            let why = tokio::select! {
                lost = lost(leadership.as_ref()) => Stop::Lost(lost),
                reason = vcd_health::unanswered_too_long(reach, unreachable_timeout), if leading => {
                    Stop::Unanswered(reason)
                }
                () = asked(&stop_asked) => Stop::Asked,
                never = watch_controllers(&mut controllers, task_health) => match never {},
            };
            let drained = match why {
                Stop::Asked => Some(drain(&gate, s.shutdown_grace_period).await),
                _ => None,
            };
            controllers.abort_all();
            match (why, leadership) {
                (Stop::Lost(lost), _) => Ended::Lost(lost),
                (Stop::Unanswered(reason), Some(leadership)) => {
                    Ended::Lost(leadership.step_down(reason).await)
                }
                (_, leadership) => Ended::Stopped(Handover::Led {
                    drained: drained.unwrap_or(Drained::Finished(Duration::ZERO)),
                    released: match leadership {
                        Some(leadership) => leadership.release().await,
                        None => false,
                    },
                }),
            }
        });
        Ok(Manager { server, main, stop })
    }

    /// Where /healthz, /readyz and /metrics are served, if anywhere.
    pub fn serving_url(&self) -> Option<String> {
        self.server.as_ref().map(Server::url)
    }

    /// Runs until leadership is lost or `stop` resolves (SIGTERM), then
    /// hands over: see the module's documentation.
    pub async fn run_until(self, stop: impl Future<Output = ()>) -> Ended {
        let Manager {
            server,
            mut main,
            stop: asker,
        } = self;
        let joined = tokio::select! {
            joined = &mut main => joined,
            () = stop => {
                tracing::info!("stopping: no new syncs, the running ones finish, then the leader lease is released");
                asker.send_replace(true);
                main.await
            }
        };
        let ended = match joined {
            Ok(ended) => ended,
            Err(error) => std::panic::resume_unwind(error.into_panic()),
        };
        if let Some(server) = server {
            server.stop().await;
        }
        ended
    }

    /// Stops at once, as a killed process would: nothing is cleaned up.
    pub fn abort(self) {
        self.main.abort();
    }
}

/// A task that ends with its owner.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Reports a controller whose run ends (they run for the life of the
/// process) to `/healthz`; never returns.
async fn watch_controllers(
    controllers: &mut JoinSet<()>,
    health: TaskHealth,
) -> std::convert::Infallible {
    loop {
        match controllers.join_next().await {
            Some(Ok(())) => health.controller_stopped("a controller's run ended".into()),
            Some(Err(error)) if error.is_panic() => {
                health.controller_stopped("a controller panicked".into())
            }
            Some(Err(_)) => {}
            None => std::future::pending::<()>().await,
        }
    }
}

/// Waits to lead while VCD is asked, without a login, whether it answers
/// (which makes the standby ready).
async fn acquire_standing_by(
    cloud: &CloudSide,
    elector: &LeaderElector,
    reached: Arc<AtomicBool>,
) -> Leadership {
    let acquire = elector.acquire();
    tokio::pin!(acquire);
    tokio::select! {
        won = &mut acquire => won,
        () = cloud.wait_for_answer(reached) => acquire.await,
    }
}

/// Why the leader's run ends.
enum Stop {
    Lost(LeadershipLost),
    /// VCD went unanswered too long: a standby may reach it.
    Unanswered(String),
    Asked,
}

/// Until leadership is lost (never without leader election).
async fn lost(leadership: Option<&Leadership>) -> LeadershipLost {
    match leadership {
        Some(leadership) => leadership.lost().await,
        None => std::future::pending().await,
    }
}

/// Resolves once a stop is asked for.
async fn asked(stop: &watch::Receiver<bool>) {
    let mut stop = stop.clone();
    // An error means the manager is gone: stopping is all that is left.
    let _ = stop.wait_for(|asked| *asked).await;
}

/// `work`'s output, or `None` when a stop is asked for first.
async fn unless_stopped<T>(
    stop: &watch::Receiver<bool>,
    work: impl Future<Output = T>,
) -> Option<T> {
    tokio::select! {
        done = work => Some(done),
        () = asked(stop) => None,
    }
}

/// Closes the gate and says how the running syncs ended.
async fn drain(gate: &SyncGate, limit: Duration) -> Drained {
    let drained = gate.close(limit).await;
    match drained {
        Drained::Finished(took) => {
            tracing::info!(took = ?took, "the running syncs finished")
        }
        Drained::TimedOut(took) => tracing::warn!(
            took = ?took,
            "syncs still running after the shutdown grace period are cut; the next leader finishes them"
        ),
    }
    drained
}

fn mark_running(running: &Family<ControllerLabels, Gauge>, name: &'static str) {
    tracing::info!(controller = name, "controller started");
    running
        .get_or_create(&ControllerLabels {
            name,
            manager: "cloud-controller-manager",
        })
        .set(1);
}

/// How the VCD credentials rotate: a one-time refresh token (a service
/// account's) is written back to the credential Secret, or without one
/// kept in memory (dropping VCD's new token would void the only one left).
fn credential_rotation(
    settings: &Settings,
    leading: watch::Receiver<bool>,
) -> Result<Arc<Rotation>, StartError> {
    Ok(match settings.credentials_secret.clone() {
        Some(secret) => token_secret::rotation(access_client(settings)?, secret, leading),
        None => {
            let source = settings
                .cloud
                .client_config(&settings.secret_dir)?
                .credentials;
            Arc::new(Rotation::new(
                Arc::new(MemoryTokenStore::new(source)),
                leading,
            ))
        }
    })
}

/// Where image policies' pull Secrets are read: the Lease's namespace, the CCM's.
fn pull_secrets(settings: &Settings, client: &kube::Client) -> SecretReader {
    SecretReader {
        client: client.clone(),
        namespace: settings
            .service
            .events_on
            .namespace
            .clone()
            .unwrap_or_else(|| DEFAULT_LEASE_NAMESPACE.to_string()),
    }
}

fn write(metrics: &SharedRegistry) -> std::sync::RwLockWriteGuard<'_, Registry> {
    metrics.write().unwrap_or_else(|p| p.into_inner())
}
