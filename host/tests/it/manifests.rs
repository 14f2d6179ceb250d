//! `manifests/`: every object parses into its Kubernetes type, the
//! Deployment runs `vcd-ccm run` with the upstream mounts at the paths the
//! command reads by default, the example policy list is valid, and RBAC
//! grants exactly the API calls the real manager makes.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::json;
use vcd_ccm::config::CloudConfig;
use vcd_ccm::policy::builtin::ARTIFACTS_DIR;
use vcd_ccm::policy::loader::{self, sha256_hex};
use vcd_ccm::policy::manifest::Manifest;
use vcd_ccm::policy::{PolicyEngine, directory};
use vcdsim::world::compute::PowerState;

/// Where the Deployment keeps compiled policy code (an emptyDir).
const COMPILE_CACHE: &str = "/var/cache/vcd-ccm";

use crate::support::manifests::cluster::{ManagedCluster, eventually};
use crate::support::manifests::deployment::{Mount, vcd_ccm};
use crate::support::manifests::documents::{self, Document, find};
use crate::support::manifests::rbac::{assert_grants_match, calls_of, grants_of};
use crate::support::nodes::{
    SHUTDOWN, UNINITIALIZED, has_taint, initialized_node, kubelet_node, label,
};
use crate::support::objects::ServiceEdits;

#[test]
fn every_manifest_parses_into_its_kubernetes_type() {
    let documents = documents::all();
    let found: BTreeSet<String> = documents
        .iter()
        .map(|d| {
            let namespace = d
                .namespace
                .as_deref()
                .map(|n| format!("{n}/"))
                .unwrap_or_default();
            format!("{}: {} {namespace}{}", d.file, d.kind, d.name)
        })
        .collect();
    let expected = BTreeSet::from(
        [
            "cloud-config.yaml: ConfigMap kube-system/vcloud-ccm-configmap",
            "deployment.yaml: Deployment kube-system/vcd-ccm",
            "components/monitoring/podmonitor.yaml: ClusterRoleBinding vcd-ccm-metrics-scraper",
            "components/monitoring/podmonitor.yaml: PodMonitor kube-system/vcd-ccm",
            "components/monitoring/podmonitor.yaml: Secret kube-system/vcd-ccm-metrics-scraper",
            "components/monitoring/podmonitor.yaml: ServiceAccount kube-system/vcd-ccm-metrics-scraper",
            "components/monitoring/prometheusrule.yaml: PrometheusRule kube-system/vcd-ccm",
            "components/policies/policies.yaml: ConfigMap kube-system/vcd-ccm-policies",
            "pdb.yaml: PodDisruptionBudget kube-system/vcd-ccm",
            "rbac.yaml: ClusterRole system:cloud-controller-manager",
            "rbac.yaml: ClusterRole vcd-ccm-metrics-reader",
            "rbac.yaml: ClusterRole vcd-ccm-policy-capture-reader",
            "rbac.yaml: ClusterRoleBinding system:cloud-controller-manager",
            "rbac.yaml: Role kube-system/vcd-ccm-leader-election",
            "rbac.yaml: Role kube-system/vcd-ccm-credentials",
            "rbac.yaml: RoleBinding kube-system/vcd-ccm-credentials",
            "rbac.yaml: RoleBinding kube-system/vcd-ccm-leader-election",
            "rbac.yaml: ServiceAccount kube-system/cloud-controller-manager",
            "secret.yaml: Secret kube-system/vcloud-basic-auth",
        ]
        .map(String::from),
    );
    assert_eq!(found, expected);
    assert_eq!(documents.len(), expected.len(), "no object twice");
    for document in &documents {
        match document.kind.as_str() {
            "ConfigMap" => check::<ConfigMap>(document),
            "Secret" => check::<Secret>(document),
            "ServiceAccount" => check::<ServiceAccount>(document),
            "ClusterRole" => check::<ClusterRole>(document),
            "ClusterRoleBinding" => check::<ClusterRoleBinding>(document),
            "Role" => check::<Role>(document),
            "RoleBinding" => check::<RoleBinding>(document),
            "Deployment" => check::<Deployment>(document),
            "PodDisruptionBudget" => check::<PodDisruptionBudget>(document),
            // The Prometheus Operator's kinds: `monitoring.rs` checks them.
            "PodMonitor" | "PrometheusRule" => {}
            other => panic!("{}: unexpected kind {other}", document.file),
        }
    }
}

fn check<K: serde::de::DeserializeOwned + serde::Serialize>(document: &Document) {
    let _: K = document.typed();
}

#[test]
fn the_deployment_runs_vcd_ccm_with_the_upstream_mounts_at_the_default_paths() {
    let ccm = vcd_ccm();
    let run = &ccm.run;
    assert_eq!(ccm.replicas, Some(2));
    assert!(
        ccm.container.command.is_none(),
        "the image's entrypoint runs vcd-ccm"
    );
    assert!(run.leader_elect, "leader election on");
    let documents = documents::all();
    let account: ServiceAccount = find(&documents, "ServiceAccount", "cloud-controller-manager");
    assert_eq!(ccm.pod.service_account_name, account.metadata.name);
    assert_eq!(ccm.pod.host_network, None);

    // The cloud config is the ConfigMap's one key, under its mount.
    let cloud_config: ConfigMap = find(&documents, "ConfigMap", "vcloud-ccm-configmap");
    let data = cloud_config.data.expect("cloud config data");
    let [key] = data.keys().collect::<Vec<_>>()[..] else {
        panic!("one key in vcloud-ccm-configmap");
    };
    let config_dir = run.cloud_config.parent().expect("a directory");
    assert_eq!(run.cloud_config, config_dir.join(key));
    // The zones file's default path, read from the shipped cloud config.
    let file = tempfile::NamedTempFile::new().expect("a temporary file");
    std::fs::write(file.path(), &data[key]).expect("the cloud config is written");
    let zones_file = CloudConfig::from_file(file.path())
        .expect("the shipped cloud config is valid")
        .zones_file();
    assert_eq!(zones_file.file_name().unwrap(), "vcloud-cse-zones.yaml");

    let mount = |kind, name: &str, optional, path: &Path| Mount {
        kind,
        name: name.into(),
        optional,
        path: path.to_str().expect("a UTF-8 path").into(),
        read_only: true,
    };
    let expected = vec![
        mount("ConfigMap", "vcloud-ccm-configmap", false, config_dir),
        mount("Secret", "vcloud-basic-auth", false, &run.credentials_dir),
        mount(
            "ConfigMap",
            "vcloud-capvcd-zones",
            true,
            zones_file.parent().unwrap(),
        ),
        mount("ConfigMap", "vcd-ccm-policies", true, &run.policy_dir),
        Mount {
            read_only: false,
            ..mount(
                "EmptyDir",
                "vcd-ccm-compile-cache",
                false,
                Path::new(COMPILE_CACHE),
            )
        },
    ];
    assert_eq!(ccm.mounts(), expected);
    let paths: Vec<String> = expected.into_iter().map(|m| m.path).collect();
    assert_eq!(
        paths,
        [
            "/etc/kubernetes/vcloud",
            "/etc/kubernetes/vcloud/basic-auth",
            "/opt/vmware-cloud-director/ccm",
            "/etc/vcd-ccm/policies",
            COMPILE_CACHE,
        ],
        "upstream's paths are the command's defaults"
    );

    let env = ccm.container.env.clone().unwrap_or_default();
    let [cluster_id, compile_cache] = env.as_slice() else {
        panic!("two variables: {env:?}");
    };
    assert_eq!(cluster_id.name, "CLUSTER_ID");
    assert_eq!(
        compile_cache.name,
        vcd_ccm::policy::engine::COMPILE_CACHE_ENV
    );
    assert_eq!(compile_cache.value.as_deref(), Some(COMPILE_CACHE));
    let from = cluster_id
        .value_from
        .as_ref()
        .and_then(|v| v.secret_key_ref.as_ref());
    let from = from.expect("CLUSTER_ID from a Secret");
    let from = (from.name.as_str(), from.key.as_str(), from.optional);
    assert_eq!(from, ("vcloud-clusterid-secret", "clusterid", Some(true)));

    let expected = [
        (UNINITIALIZED, "true", "NoSchedule"),
        ("CriticalAddonsOnly", "", ""),
        ("node-role.kubernetes.io/control-plane", "", "NoSchedule"),
        ("node-role.kubernetes.io/master", "", "NoSchedule"),
    ]
    .map(|(k, v, e)| (k.into(), v.into(), e.into()));
    assert_eq!(ccm.tolerations(), BTreeSet::from(expected));
}

#[test]
fn the_container_is_non_root_read_only_and_bounded() {
    let ccm = vcd_ccm();
    let pod_security = ccm.pod.security_context.expect("a pod security context");
    assert_eq!(pod_security.run_as_non_root, Some(true));
    assert_eq!(pod_security.run_as_user, Some(65532), "the image's user");
    let seccomp = pod_security.seccomp_profile.expect("a seccomp profile");
    assert_eq!(seccomp.type_, "RuntimeDefault");
    let security = ccm
        .container
        .security_context
        .expect("a container security context");
    assert_eq!(security.allow_privilege_escalation, Some(false));
    assert_eq!(security.read_only_root_filesystem, Some(true));
    let capabilities = security.capabilities.expect("capabilities");
    assert_eq!(capabilities.drop, Some(vec!["ALL".to_string()]));
    assert_eq!(capabilities.add, None);
    let resources = ccm.container.resources.expect("resources");
    for wanted in ["cpu", "memory"] {
        assert!(
            resources
                .requests
                .as_ref()
                .is_some_and(|r| r.contains_key(wanted))
        );
        assert!(
            resources
                .limits
                .as_ref()
                .is_some_and(|r| r.contains_key(wanted))
        );
    }
    let image = ccm.container.image.as_deref();
    assert_eq!(image, Some("ghcr.io/vcd-ccm/vcd-ccm:0.1.0"));
}

#[test]
fn the_probes_ask_healthz_and_readyz_on_the_serving_port() {
    let ccm = vcd_ccm();
    assert_eq!(ccm.run.secure_port, 10258);
    for (probe, path) in [
        (&ccm.container.liveness_probe, "/healthz"),
        (&ccm.container.readiness_probe, "/readyz"),
    ] {
        let get = probe.as_ref().and_then(|p| p.http_get.as_ref());
        let get = get.expect("an HTTP probe");
        assert_eq!(get.path.as_deref(), Some(path));
        assert_eq!(get.port, IntOrString::Int(ccm.run.secure_port.into()));
        assert_eq!(
            get.scheme.as_deref(),
            Some("HTTPS"),
            "serving is HTTPS by default"
        );
    }
}

#[test]
fn the_example_policy_list_loads_once_its_component_and_digest_are_added() {
    let policies: ConfigMap = find(&documents::all(), "ConfigMap", "vcd-ccm-policies");
    let text = policies.data.expect("data")["policies.yaml"].clone();
    let manifest = Manifest::parse(Path::new("policies.yaml"), &text).expect("a valid list");
    let [entry] = manifest.policies.as_slice() else {
        panic!("one policy")
    };
    assert_eq!(entry.name, "namespace-pools");
    assert_eq!(
        entry.sha256,
        Some("0".repeat(64)),
        "the shipped digest is the placeholder"
    );

    let engine = PolicyEngine::new().expect("the engine starts");
    let default = Arc::new(
        engine
            .block_on(loader::load_default(
                &engine,
                "{}".into(),
                Default::default(),
            ))
            .expect("the default policy"),
    );
    let load = |dir: &Path| {
        let (_, report) = engine
            .block_on(directory::load(&engine, dir, default.clone(), None))
            .expect("a valid list");
        report
    };
    // As shipped: the list loads (so the manager starts); the policy is refused.
    let shipped = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(shipped.path().join("policies.yaml"), &text).expect("written");
    let report = load(shipped.path());
    assert_eq!(report.failed.len(), 1, "{:?}", report.failed);
    // As the comment in policies.yaml says to complete it: loaded, with its settings.
    let component = std::fs::read(format!("{ARTIFACTS_DIR}/namespace_pools.wasm")).expect("built");
    let completed = tempfile::tempdir().expect("a temporary directory");
    let placeholder = entry.sha256.as_deref().expect("a file's pin");
    let pinned = text.replace(placeholder, &sha256_hex(&component));
    std::fs::write(completed.path().join("policies.yaml"), pinned).expect("written");
    std::fs::write(completed.path().join("namespace-pools.wasm"), component).expect("written");
    let report = load(completed.path());
    assert_eq!(
        report.loaded,
        vec!["namespace-pools".to_string()],
        "{:?}",
        report.failed
    );
}

/// Drives every controller through every call it makes, then compares the
/// manager's requests with what rbac.yaml grants, in both directions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rbac_grants_exactly_the_calls_the_controllers_make() {
    let shop = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}});
    let nodes = [
        kubelet_node("control-plane-0", true, true),
        kubelet_node("worker-0", true, true),
    ];
    // Another replica leads at first, with a Lease that never expires.
    let rival = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "cloud-controller-manager", "namespace": "kube-system"},
        "spec": {"holderIdentity": "rival", "leaseDurationSeconds": 3600,
            "renewTime": jiff::Timestamp::now().to_string()}});
    let cluster = ManagedCluster::start([vec![shop, rival], nodes.to_vec()].concat()).await;
    let events = |reason: &str| cluster.event_count("shop", "web", reason);

    // Leader election: a candidate reads the Lease and watches it by name
    // (list and watch); once it is gone, get (absent), create, then update
    // on every renewal.
    eventually("this candidate watches the Lease", || {
        let watching = cluster.proxy.requests().iter().any(|r| {
            r.path == "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
                && r.query.contains("watch=true")
        });
        watching.then_some(())
    })
    .await;
    cluster.delete_lease().await;
    eventually("this manager leads", || {
        (cluster.lease_holder()? == cluster.identity).then_some(())
    })
    .await;
    // The leader's first login exchanges the service account's refresh
    // token: the credential Secret is read (get), then updated with the new
    // one VCD answered.
    eventually("a new refresh token in the credential Secret", || {
        let stored = cluster.stored_refresh_token()?;
        (stored != "manifests-service-account-token").then_some(())
    })
    .await;
    // cloud-node: initialisation PUT, address PATCH of /status, Synced Events.
    for name in ["control-plane-0", "worker-0"] {
        eventually(&format!("{name} initialised"), || {
            let node = cluster.node(name)?;
            let done = !has_taint(&node, UNINITIALIZED) && node.spec?.provider_id.is_some();
            done.then_some(())
        })
        .await;
    }

    // service: finalizer and ingress through /status, Events. A change
    // ensures again: the same Events again, folded into PATCHes.
    cluster.create_service("shop", "web", &[80]).await;
    eventually("an external IP", || cluster.external_ip("shop", "web")).await;
    let ports = json!([{"name": "p80", "port": 80, "protocol": "TCP"},
        {"name": "p8080", "port": 8080, "protocol": "TCP"}]);
    cluster
        .patch_service("shop", "web", json!({"spec": {"ports": ports}}))
        .await;
    eventually("a second EnsuredLoadBalancer", || {
        (events("EnsuredLoadBalancer") >= 2).then_some(())
    })
    .await;

    // service: a Service naming a TLS Secret reads it by name (a GET, no
    // list or watch); a missing one is a Warning naming it.
    cluster.create_service("shop", "tls", &[443]).await;
    let annotation = json!({"metadata": {"annotations": {"vcd-ccm.io/tls-secret": "tls-cert"}}});
    cluster.patch_service("shop", "tls", annotation).await;
    eventually("a Warning about the missing Secret", || {
        (cluster.event_count("shop", "tls", "SyncLoadBalancerFailed") >= 1).then_some(())
    })
    .await;

    // A node joins, initialised, with only the beta instance-type label:
    // cloud-node patches the GA label; service updates the load balancer.
    let (urn, ip) = cluster.vm("worker-1");
    let mut joining = initialized_node("worker-1", &format!("vmware-cloud-director://{urn}"), true);
    joining["metadata"]["labels"] = json!({"beta.kubernetes.io/instance-type": "custom"});
    joining["status"]["addresses"] = json!([{"type": "InternalIP", "address": ip}]);
    cluster.kube.seed(joining).expect("worker-1 joins");
    eventually("the GA instance-type label", || {
        let node = cluster.node("worker-1")?;
        (label(&node, "node.kubernetes.io/instance-type")? == "custom").then_some(())
    })
    .await;
    eventually("UpdatedLoadBalancer", || {
        (events("UpdatedLoadBalancer") >= 1).then_some(())
    })
    .await;

    // cloud-node-lifecycle: worker-1's VM is deleted (DeletingNode, node
    // DELETE, and the load balancer loses a member); worker-0's VM is
    // powered off (taint: GET then PATCH), then on and Ready (taint removed).
    cluster.set_ready("worker-1", false).await;
    cluster.remove_vm("worker-1");
    cluster.set_ready("worker-0", false).await;
    cluster.set_power("worker-0", PowerState::PoweredOff);
    eventually("worker-1 deleted", || {
        cluster.node("worker-1").is_none().then_some(())
    })
    .await;
    eventually("worker-0 tainted", || {
        has_taint(&cluster.node("worker-0")?, SHUTDOWN).then_some(())
    })
    .await;
    eventually("a second UpdatedLoadBalancer", || {
        (events("UpdatedLoadBalancer") >= 2).then_some(())
    })
    .await;
    cluster.set_power("worker-0", PowerState::PoweredOn);
    cluster.set_ready("worker-0", true).await;
    eventually("worker-0 untainted", || {
        (!has_taint(&cluster.node("worker-0")?, SHUTDOWN)).then_some(())
    })
    .await;

    // ClusterIP and back, then deleted: the load balancer and the finalizer go.
    cluster
        .patch_service("shop", "web", json!({"spec": {"type": "ClusterIP"}}))
        .await;
    eventually("DeletedLoadBalancer", || {
        (events("DeletedLoadBalancer") >= 1).then_some(())
    })
    .await;
    eventually("no external IP", || {
        cluster.external_ip("shop", "web").is_none().then_some(())
    })
    .await;
    cluster
        .patch_service("shop", "web", json!({"spec": {"type": "LoadBalancer"}}))
        .await;
    eventually("an external IP again", || {
        cluster.external_ip("shop", "web")
    })
    .await;
    cluster.delete_service("shop", "web").await;
    eventually("the Service gone", || {
        cluster.service("shop", "web").is_none().then_some(())
    })
    .await;

    // The HTTPS port asks the API server who a scraper is and what it may
    // read (the admin group skips the second question).
    cluster
        .kube
        .add_token("admin-token", "admin", &["system:masters"]);
    assert_eq!(cluster.scrape("admin-token").await, 200);
    let stranger = cluster.kube.service_account_token("default", "app");
    assert_eq!(cluster.scrape(&stranger).await, 403);

    let requests = cluster.proxy.requests();
    // The three controllers share one Node watch (and its one list).
    let on_nodes = |watch: bool| {
        requests
            .iter()
            .filter(|r| r.method == "GET" && r.path == "/api/v1/nodes")
            .filter(|r| r.query.contains("watch=true") == watch)
            .count()
    };
    assert_eq!(
        (on_nodes(false), on_nodes(true)),
        (1, 1),
        "Node lists, watches"
    );
    let calls = calls_of(&requests);
    // What `kubectl apply -k manifests/` grants.
    let grants = grants_of(
        &documents::rendered("manifests"),
        "kube-system",
        "cloud-controller-manager",
    );
    assert_grants_match(&calls, &grants);
}

#[test]
fn every_kustomization_renders_and_each_component_does_what_it_says() {
    let base = documents::rendered("manifests");
    let names = |documents: &[Document]| -> BTreeSet<String> {
        documents
            .iter()
            .map(|d| format!("{} {}", d.kind, d.name))
            .collect()
    };
    let image = |documents: &[Document]| {
        let deployment: Deployment = find(documents, "Deployment", "vcd-ccm");
        let pod = deployment.spec.template.spec.unwrap();
        (pod.containers[0].image.clone().unwrap_or_default(), pod)
    };
    assert!(names(&base).contains("PodDisruptionBudget vcd-ccm"));
    assert!(names(&base).contains("ConfigMap vcloud-ccm-configmap"));
    let (base_image, base_pod) = image(&base);
    assert_eq!(base_image, "ghcr.io/vcd-ccm/vcd-ccm:0.1.0");
    assert_eq!(
        base_pod.priority_class_name.as_deref(),
        Some("system-cluster-critical")
    );
    let pdb: PodDisruptionBudget = find(&base, "PodDisruptionBudget", "vcd-ccm");
    assert_eq!(pdb.spec.unwrap().min_available, Some(IntOrString::Int(1)));

    let full = documents::rendered("deploy/example");
    let rendered = names(&full);
    // capvcd: CAPVCD's ClusterResourceSet owns the cloud config and credentials.
    assert!(
        !rendered.contains("ConfigMap vcloud-ccm-configmap"),
        "{rendered:?}"
    );
    assert!(
        !rendered.contains("Secret vcloud-basic-auth"),
        "{rendered:?}"
    );
    // policies: the policy ConfigMap the Deployment mounts.
    assert!(
        rendered.contains("ConfigMap vcd-ccm-policies"),
        "{rendered:?}"
    );
    // private-ca: the CA bundle, mounted where vcd.caFile points.
    let (full_image, pod) = image(&full);
    assert_eq!(full_image, "registry.example.com/vcd-ccm:0.1.0");
    let ca = pod
        .volumes
        .unwrap_or_default()
        .into_iter()
        .find(|v| v.name == "vcd-ccm-ca")
        .expect("the CA volume");
    let generated = ca.config_map.unwrap().name;
    assert!(generated.starts_with("vcd-ccm-ca-"), "{generated}");
    assert!(rendered.contains(&format!("ConfigMap {generated}")));
    let mounts = pod.containers[0].volume_mounts.clone().unwrap_or_default();
    assert!(
        mounts
            .iter()
            .any(|m| m.name == "vcd-ccm-ca" && m.mount_path == "/etc/vcd-ccm/ca")
    );
    for document in full.iter().chain(&base) {
        match document.kind.as_str() {
            "ConfigMap" => check::<ConfigMap>(document),
            "Deployment" => check::<Deployment>(document),
            "PodDisruptionBudget" => check::<PodDisruptionBudget>(document),
            _ => {}
        }
    }
}
