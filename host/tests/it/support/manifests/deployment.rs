//! The Deployment of manifests/deployment.yaml, taken apart: its pod, its
//! container, the `vcd-ccm run` arguments as the command parses them, and
//! what it mounts where.

use std::collections::BTreeSet;

use clap::Parser;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Container, PodSpec};
use vcd_ccm::cli::{Cli, Command, RunArgs};

use super::documents::{self, find};

/// The vcd-ccm Deployment as the manifests declare it.
pub struct CcmDeployment {
    pub replicas: Option<i32>,
    pub pod: PodSpec,
    pub container: Container,
    /// The container's args parsed by `vcd-ccm`'s own command line.
    pub run: RunArgs,
}

/// One volume mount and the object behind it.
#[derive(Debug, PartialEq, Eq)]
pub struct Mount {
    /// `ConfigMap` or `Secret`.
    pub kind: &'static str,
    pub name: String,
    pub optional: bool,
    pub path: String,
    pub read_only: bool,
}

pub fn vcd_ccm() -> CcmDeployment {
    let deployment: Deployment = find(&documents::rendered("manifests"), "Deployment", "vcd-ccm");
    let pod = deployment.spec.template.spec.expect("a pod spec");
    let [container] = pod.containers.as_slice() else {
        panic!("one container");
    };
    let args = container.args.clone().unwrap_or_default();
    let cli = Cli::try_parse_from(std::iter::once("vcd-ccm".to_string()).chain(args))
        .unwrap_or_else(|e| panic!("the container's args are not a vcd-ccm command line:\n{e}"));
    let Command::Run(run) = cli.command else {
        panic!("the container does not run `vcd-ccm run`");
    };
    CcmDeployment {
        replicas: deployment.spec.replicas,
        container: container.clone(),
        pod,
        run: *run,
    }
}

impl CcmDeployment {
    /// Every mount, in the container's order; each volume is mounted once.
    pub fn mounts(&self) -> Vec<Mount> {
        let volumes = self.pod.volumes.clone().unwrap_or_default();
        let mounts = self.container.volume_mounts.clone().unwrap_or_default();
        assert_eq!(volumes.len(), mounts.len(), "every volume mounted once");
        mounts
            .iter()
            .map(|mount| {
                let volume = volumes
                    .iter()
                    .find(|v| v.name == mount.name)
                    .expect("the mount's volume");
                let (kind, name, optional) = match (&volume.config_map, &volume.secret) {
                    (Some(c), None) => ("ConfigMap", c.name.clone(), c.optional),
                    (None, Some(s)) => (
                        "Secret",
                        s.secret_name.clone().unwrap_or_default(),
                        s.optional,
                    ),
                    (None, None) if volume.empty_dir.is_some() => {
                        ("EmptyDir", volume.name.clone(), None)
                    }
                    _ => panic!(
                        "volume {} is neither a ConfigMap, a Secret nor an emptyDir",
                        volume.name
                    ),
                };
                Mount {
                    kind,
                    name,
                    optional: optional == Some(true),
                    path: mount.mount_path.clone(),
                    read_only: mount.read_only == Some(true),
                }
            })
            .collect()
    }

    /// (key, value, effect) of each toleration, `""` where unset.
    pub fn tolerations(&self) -> BTreeSet<(String, String, String)> {
        let field = |v: &Option<String>| v.clone().unwrap_or_default();
        self.pod
            .tolerations
            .iter()
            .flatten()
            .map(|t| (field(&t.key), field(&t.value), field(&t.effect)))
            .collect()
    }
}
