//! `vcd-ccm check`, the real binary, against a vcdsim world and the two
//! files it reads; its table read back row by row.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use tempfile::TempDir;
use vcdsim::{Scenario, Sim};

use crate::support::CLUSTER;

pub const CHECKS: [&str; 13] = [
    "config",
    "login",
    "org",
    "vdc",
    "network",
    "gateway",
    "load-balancer",
    "service-engine-group",
    "addresses",
    "certificate",
    "rights",
    "zones",
    "clock",
];

/// A vcdsim world and the two files `check` reads.
pub struct Setup {
    pub vcd: Sim,
    dir: TempDir,
    pub cloud_config: PathBuf,
    pub credentials_dir: PathBuf,
}

impl Setup {
    /// `scenario`'s tenant, its `vdc1` and `net1`, and `extra` lines under
    /// `loadbalancer:`.
    pub async fn start(scenario: Scenario, extra: &str) -> Setup {
        let vcd = Sim::start(scenario).await.expect("vcdsim starts");
        let tenant = vcd.tenant().expect("a tenant user").clone();
        let dir = tempfile::tempdir().expect("a temporary directory");
        let credentials_dir = dir.path().join("basic-auth");
        std::fs::create_dir(&credentials_dir).expect("the credentials directory");
        let write =
            |path: &Path, text: &str| std::fs::write(path, text).expect("a file is written");
        write(
            &credentials_dir.join("username"),
            &format!("{}/{}", tenant.org, tenant.user),
        );
        write(&credentials_dir.join("password"), &tenant.password);
        write(&credentials_dir.join("refreshToken"), "");
        let cloud_config = dir.path().join("vcloud-ccm-config.yaml");
        write(
            &cloud_config,
            &format!(
                "vcd:\n  host: {}\n  org: {}\n  vdc: vdc1\nloadbalancer:\n  network: net1\n  enableVirtualServiceSharedIP: true\n{extra}clusterid: {CLUSTER}\nvAppName: cluster1\n",
                vcd.base_url(),
                tenant.org
            ),
        );
        Setup {
            vcd,
            dir,
            cloud_config,
            credentials_dir,
        }
    }

    /// The default scenario with `certAlias: my-cert`: every check passes.
    pub async fn healthy() -> Setup {
        Setup::start(Scenario::default_scenario(), "  certAlias: my-cert\n").await
    }

    /// Rewrites the cloud config.
    pub fn edit_config(&self, edit: impl FnOnce(String) -> String) {
        let text = std::fs::read_to_string(&self.cloud_config).expect("the cloud config");
        std::fs::write(&self.cloud_config, edit(text)).expect("the cloud config is written");
    }

    /// Turns zones on, with a zones file holding `zones` (none: no file).
    pub fn zones(&self, zones: Option<&str>) -> PathBuf {
        let path = self.dir.path().join("zones.yaml");
        if let Some(text) = zones {
            std::fs::write(&path, text).expect("the zones file is written");
        }
        let line = format!(
            "  isZoneEnabledCluster: true\nnodes:\n  zonesFile: {}\n",
            path.display()
        );
        self.edit_config(|text| {
            let (vcd, rest) = text
                .split_once("loadbalancer:")
                .expect("the loadbalancer key");
            let (vcd_keys, nodes) = line.split_once("nodes:").expect("a nodes key");
            format!("{vcd}{vcd_keys}loadbalancer:{rest}nodes:{nodes}")
        });
        path
    }

    pub async fn check(&self, extra: &[&str]) -> Checked {
        let mut command = Command::new(env!("CARGO_BIN_EXE_vcd-ccm"));
        let flag = |name: &str, path: &Path| {
            let mut arg = OsString::from(format!("--{name}="));
            arg.push(path);
            arg
        };
        command
            .arg("check")
            .arg(flag("cloud-config", &self.cloud_config))
            .arg(flag("credentials-dir", &self.credentials_dir))
            .args(extra)
            .env_remove("CLUSTER_ID")
            .env_remove("KUBECONFIG")
            .env_remove("RUST_LOG");
        let output = tokio::task::spawn_blocking(move || command.output())
            .await
            .expect("the check's thread")
            .expect("vcd-ccm check runs");
        Checked {
            status: output.status,
            stdout: String::from_utf8(output.stdout).expect("UTF-8 output"),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

/// What one `vcd-ccm check` printed and how it exited.
pub struct Checked {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// One row of the table: its mark, its text, and the fix under it.
pub struct Row {
    pub mark: char,
    pub text: String,
    pub fix: Option<String>,
}

impl Checked {
    pub fn row(&self, check: &str) -> Row {
        let lines: Vec<&str> = self.stdout.lines().collect();
        let at = lines
            .iter()
            .position(|line| line.split_whitespace().nth(1) == Some(check))
            .unwrap_or_else(|| panic!("no row {check} in:\n{}", self.stdout));
        let line = lines[at];
        let fix = lines
            .get(at + 1)
            .and_then(|next| next.trim().strip_prefix("fix: "))
            .map(str::to_string);
        Row {
            mark: line.chars().next().expect("a mark"),
            text: line
                .split_once(check)
                .map(|(_, text)| text.trim().to_string())
                .unwrap_or_default(),
            fix,
        }
    }

    /// Asserts `check` failed saying `problem`, with a fix saying `fix`,
    /// and the exit status 1.
    pub fn failed(&self, check: &str, problem: &str, fix: &str) {
        let row = self.row(check);
        assert_eq!(row.mark, '✗', "{check} did not fail:\n{}", self.stdout);
        assert!(row.text.contains(problem), "{check}: {}", row.text);
        let given = row
            .fix
            .unwrap_or_else(|| panic!("no fix under {check}:\n{}", self.stdout));
        assert!(given.contains(fix), "{check}'s fix: {given}");
        assert_eq!(
            self.status.code(),
            Some(1),
            "{}{}",
            self.stdout,
            self.stderr
        );
    }

    pub fn passed(&self, check: &str) -> String {
        let row = self.row(check);
        assert_eq!(row.mark, '✓', "{check} did not pass:\n{}", self.stdout);
        row.text
    }

    pub fn skipped(&self, checks: &[&str], reason: &str) {
        for check in checks {
            let row = self.row(check);
            assert_eq!(row.mark, '–', "{check} was not skipped:\n{}", self.stdout);
            assert!(row.text.contains(reason), "{check}: {}", row.text);
        }
    }
}
