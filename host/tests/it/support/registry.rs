//! A real OCI registry on loopback for the tests: Debian's
//! `docker-registry` (CNCF distribution) serving a temporary directory on
//! a free port, optionally behind htpasswd (bcrypt) authentication; stopped
//! when dropped. Missing, it fails the test under `CI=true` and is skipped,
//! saying so, elsewhere.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::support::run::process::free_port;

const BINARY: &str = "/usr/bin/docker-registry";
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

/// Whether the registry (and, for `auth`, htpasswd) is installed; missing,
/// CI fails and elsewhere the test says it is skipped.
fn installed(auth: bool) -> bool {
    let registry = Path::new(BINARY).is_file();
    let htpasswd = !auth
        || Command::new("htpasswd")
            .arg("-h")
            .stderr(Stdio::null())
            .status()
            .is_ok();
    let in_ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
    let present = registry && htpasswd;
    assert!(
        present || !in_ci,
        "docker-registry or htpasswd is not installed, and CI runs the registry tests (Debian: apt-get install docker-registry apache2-utils)"
    );
    if !present {
        eprintln!(
            "docker-registry or htpasswd is not installed: skipped (Debian: apt-get install docker-registry apache2-utils)"
        );
    }
    present
}

impl TestRegistry {
    /// An anonymous registry; `None` when not installed outside CI.
    pub fn start() -> Option<TestRegistry> {
        installed(false).then(|| TestRegistry::spawn(false))
    }

    /// A registry that wants [`USER`] and [`PASSWORD`] for every request.
    pub fn start_with_auth() -> Option<TestRegistry> {
        installed(true).then(|| TestRegistry::spawn(true))
    }

    fn spawn(auth: bool) -> TestRegistry {
        let dir = tempfile::tempdir().expect("a registry directory");
        let host = format!("127.0.0.1:{}", free_port());
        let mut config = format!(
            "version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {host}\n",
            dir.path().join("storage").display()
        );
        if auth {
            let output = Command::new("htpasswd")
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
        let child = Command::new(BINARY)
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
