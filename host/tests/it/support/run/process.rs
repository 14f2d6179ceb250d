//! One `vcd-ccm run` child process: its stderr goes to a file, its plain
//! HTTP endpoints are polled, and it is killed when dropped, whatever way
//! the test ends.

use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How much of a process's log a failing test shows.
const LOG_TAIL_LINES: usize = 40;

/// A running `vcd-ccm run` process.
pub struct CcmProcess {
    pub name: String,
    child: Child,
    stderr: PathBuf,
    /// `http://127.0.0.1:<port>` when serving.
    url: Option<String>,
}

/// What the child's `RUST_LOG` is.
#[derive(Clone, Copy)]
pub enum Logging {
    /// Unset: the binary's default (`--v=2`: vcd-ccm at info), as an operator sees it.
    Default,
    /// `info`, so a failing test can show what the process did.
    Info,
}

impl CcmProcess {
    /// Starts `vcd-ccm run <args>`, serving plain HTTP on 127.0.0.1:`port`
    /// when given, else nothing.
    pub fn spawn(
        name: &str,
        dir: &Path,
        args: Vec<OsString>,
        port: Option<u16>,
        logging: Logging,
    ) -> CcmProcess {
        Self::spawn_with_env(name, dir, args, port, logging, &[])
    }

    /// The same, with `env` added to the child's environment.
    pub fn spawn_with_env(
        name: &str,
        dir: &Path,
        args: Vec<OsString>,
        port: Option<u16>,
        logging: Logging,
        env: &[(&str, &str)],
    ) -> CcmProcess {
        let binary = Path::new(env!("CARGO_BIN_EXE_vcd-ccm"));
        Self::spawn_binary(binary, name, dir, args, port, logging, env)
    }

    /// The same, running `binary` (another release's) instead of this one.
    pub fn spawn_binary(
        binary: &Path,
        name: &str,
        dir: &Path,
        args: Vec<OsString>,
        port: Option<u16>,
        logging: Logging,
        env: &[(&str, &str)],
    ) -> CcmProcess {
        let stderr = dir.join(format!("{name}.stderr"));
        let file = File::create(&stderr).expect("the stderr file is created");
        // Without a plain port, serve HTTPS on a port of the test's own
        // choosing, or else on any free one.
        let secure = args
            .iter()
            .any(|a| a.to_string_lossy().starts_with("--secure-port="));
        let mut command = Command::new(binary);
        command
            .arg("run")
            .args(args)
            .arg("--bind-address=127.0.0.1");
        match port {
            Some(port) => {
                command.arg(format!("--port={port}"));
            }
            None if !secure => {
                command.arg("--secure-port=0");
            }
            None => {}
        }
        // The environment must not leak a cluster id or a kubeconfig in.
        command
            .env_remove("CLUSTER_ID")
            .env_remove("KUBECONFIG")
            .env_remove("RUST_LOG");
        if let Logging::Info = logging {
            command.env("RUST_LOG", "info");
        }
        command.envs(env.iter().copied());
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .expect("vcd-ccm starts");
        CcmProcess {
            name: name.to_string(),
            child,
            stderr,
            url: port.map(|port| format!("http://127.0.0.1:{port}")),
        }
    }

    /// Everything the process wrote to stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// SIGKILL, as a node failure or an OOM kill would end it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, as the kubelet stops a Pod; the process ends by itself.
    pub fn terminate(&self) {
        self.signal("TERM");
    }

    /// SIGSTOP: the process does nothing until [`CcmProcess::resume`], so a
    /// test can look at what it left without racing it.
    pub fn freeze(&self) {
        self.signal("STOP");
    }

    /// SIGCONT, after [`CcmProcess::freeze`].
    pub fn resume(&self) {
        self.signal("CONT");
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{signal} {}: {status}", self.name);
    }

    /// The exit status, once the process ended by itself.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().expect("the child can be waited on")
    }

    /// Waits for the process to end by itself within `limit`.
    pub async fn exit_within(&mut self, limit: Duration) -> (ExitStatus, Duration) {
        let started = Instant::now();
        loop {
            if let Some(status) = self.exited() {
                return (status, started.elapsed());
            }
            assert!(
                started.elapsed() < limit,
                "{} still runs after {limit:?}; stderr so far:\n{}",
                self.name,
                self.stderr()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// GET `path` on the process's HTTP endpoint: (status, body).
    pub async fn get(&self, path: &str) -> Result<(u16, String), String> {
        let url = self.url.as_ref().expect("the process serves HTTP");
        let response = reqwest::Client::new()
            .get(format!("{url}{path}"))
            .timeout(Duration::from_secs(2))
            .send()
            .await
            .map_err(|e| format!("{} GET {path}: {e}", self.name))?;
        let status = response.status().as_u16();
        let body = response.text().await.map_err(|e| e.to_string())?;
        Ok((status, body))
    }

    /// `/readyz` answered 200.
    pub async fn ready(&self) -> Result<(), String> {
        match self.get("/readyz").await? {
            (200, _) => Ok(()),
            (status, body) => Err(format!("{} /readyz {status}: {body}", self.name)),
        }
    }

    /// The value of the one sample of `family` on `/metrics`.
    pub async fn metric(&self, family: &str) -> Result<f64, String> {
        let (_, body) = self.get("/metrics").await?;
        let sample = body
            .lines()
            .find(|line| {
                line.strip_prefix(family)
                    .is_some_and(|rest| rest.starts_with(['{', ' ']))
            })
            .ok_or_else(|| format!("{} /metrics has no {family}", self.name))?;
        let value = sample.rsplit(' ').next().unwrap_or_default();
        value
            .parse()
            .map_err(|_| format!("{} /metrics: {sample:?} has no number", self.name))
    }

    /// `leader_election_master_status`: 1 while this process leads.
    pub async fn master_status(&self) -> Result<f64, String> {
        self.metric("leader_election_master_status").await
    }
}

impl Drop for CcmProcess {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            let log = self.stderr();
            let lines: Vec<&str> = log.lines().collect();
            let tail = &lines[lines.len().saturating_sub(LOG_TAIL_LINES)..];
            eprintln!("--- {} (last {} lines) ---", self.name, tail.len());
            for line in tail {
                eprintln!("{line}");
            }
        }
    }
}

/// A port nothing listens on now, for a child to bind.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("a free local port")
}
