//! A real OCI registry on loopback for the tests: Debian's
//! `docker-registry` (CNCF distribution) serving a temporary directory on
//! a free port, optionally behind htpasswd (bcrypt) authentication; stopped
//! when dropped. Found on the PATH; missing, it fails the test under
//! `CI=true` and is skipped, saying so, elsewhere (`support::tools`).

use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::support::run::process::free_port;
use crate::support::tools::{self, DOCKER_REGISTRY, HTPASSWD};

/// How long the registry may take to answer `/v2/`.
const READY: Duration = Duration::from_secs(20);

/// A user and password the authenticated registry accepts.
pub const USER: &str = "policy-publisher";
pub const PASSWORD: &str = "s3cret-registry-password";

pub struct TestRegistry {
    child: Child,
    /// `127.0.0.1:<port>`.
    pub host: String,
    /// Holds the storage, the config and the htpasswd file.
    dir: TempDir,
}

impl TestRegistry {
    /// An anonymous registry; `None` when not installed outside CI.
    pub fn start() -> Option<TestRegistry> {
        let [binary] = tools::require([DOCKER_REGISTRY])?;
        Some(TestRegistry::spawn(&binary, None))
    }

    /// A registry that wants [`USER`] and [`PASSWORD`] for every request;
    /// `None` when not installed outside CI.
    pub fn start_with_auth() -> Option<TestRegistry> {
        let [binary, htpasswd] = tools::require([DOCKER_REGISTRY, HTPASSWD])?;
        Some(TestRegistry::spawn(&binary, Some(&htpasswd)))
    }

    fn spawn(binary: &Path, htpasswd: Option<&Path>) -> TestRegistry {
        let dir = tempfile::tempdir().expect("a registry directory");
        let host = format!("127.0.0.1:{}", free_port());
        let mut config = format!(
            "version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {host}\n",
            dir.path().join("storage").display()
        );
        if let Some(htpasswd) = htpasswd {
            let output = Command::new(htpasswd)
                .args(["-Bbn", USER, PASSWORD])
                .output()
                .expect("htpasswd runs");
            assert!(output.status.success(), "htpasswd: {output:?}");
            let file = dir.path().join("htpasswd");
            std::fs::write(&file, output.stdout).expect("the htpasswd file is written");
            config.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: vcd-ccm-tests\n    path: {}\n",
                file.display()
            ));
        }
        let config_file = dir.path().join("config.yml");
        std::fs::write(&config_file, config).expect("the registry config is written");
        let log = std::fs::File::create(dir.path().join("registry.log")).expect("a log file");
        let child = Command::new(binary)
            .arg("serve")
            .arg(&config_file)
            .stdout(log.try_clone().expect("the log file"))
            .stderr(log)
            .spawn()
            .expect("docker-registry starts");
        let registry = TestRegistry { child, host, dir };
        registry.wait_ready();
        registry
    }

    fn wait_ready(&self) {
        let deadline = Instant::now() + READY;
        while Instant::now() < deadline {
            if std::net::TcpStream::connect(&self.host).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "the registry did not listen on {} within {READY:?}; its log:\n{}",
            self.host,
            self.log()
        );
    }

    /// `oci://<host>/<repository>`.
    pub fn reference(&self, repository: &str) -> String {
        format!("oci://{}/{repository}", self.host)
    }

    /// What the registry logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("registry.log")).unwrap_or_default()
    }

    /// The blob files of the registry's storage whose digest is `hex`.
    pub fn blob_file(&self, hex: &str) -> std::path::PathBuf {
        self.dir.path().join(format!(
            "storage/docker/registry/v2/blobs/sha256/{}/{hex}/data",
            &hex[..2]
        ))
    }

    /// A Docker config.json granting [`USER`] access to this registry.
    pub fn docker_config(&self) -> String {
        use base64::Engine as _;
        let auth = base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{PASSWORD}"));
        serde_json::json!({"auths": {self.host.clone(): {"auth": auth}}}).to_string()
    }
}

impl Drop for TestRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
