//! The CCM under test: `vcd-ccm run` as a child process against the
//! world's simulators, its `/metrics` over plain HTTP, and its memory and
//! CPU from `/proc`.

use std::fs::File;
use std::process::{Child, Command, Stdio};

use crate::world::{Calls, World, wait};

/// One `vcd-ccm run` process; killed when dropped.
pub struct Ccm {
    name: String,
    child: Child,
    metrics_url: String,
}

impl Ccm {
    /// Starts `vcd-ccm run` on the world's files with 4 service workers
    /// (and 4 node workers, so thousands of Nodes initialise in seconds),
    /// the Kubernetes client limit off (`--kube-api-qps` negative) and no
    /// leader election, so a restart does not wait for the old Lease.
    pub fn spawn(world: &World, name: &str) -> Ccm {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map(|addr| addr.port())
            .expect("a free local port");
        let stderr = File::create(world.dir().join(format!("{name}.stderr")))
            .expect("the stderr file is created");
        let binary = env!("CARGO_BIN_EXE_vcd-ccm");
        let mut command = match std::env::var_os("GATEWAY_SCALE_CCM_WRAPPER") {
            Some(wrapper) => {
                let mut command = Command::new(wrapper);
                command.arg(binary);
                command
            }
            None => Command::new(binary),
        };
        let child = command
            .arg("run")
            .args(world.file_args())
            .args([
                "--concurrent-service-syncs=4",
                "--concurrent-node-syncs=4",
                "--kube-api-qps=-1",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                &format!("--port={port}"),
            ])
            // Nothing from the caller's environment may point it elsewhere.
            .env_remove("CLUSTER_ID")
            .env_remove("KUBECONFIG")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("vcd-ccm starts");
        crate::progress(format!("{name}: vcd-ccm run started, pid {}", child.id()));
        Ccm {
            name: name.to_string(),
            child,
            metrics_url: format!("http://127.0.0.1:{port}/metrics"),
        }
    }

    /// Waits until every one of `services` Services has been synced once.
    pub async fn wait_service_syncs(&mut self, services: usize) {
        let what = format!("{} to sync {services} Services", self.name);
        let (name, child) = (&self.name, &mut self.child);
        wait(&what, || {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("{name} exited with {status}");
            }
            let url = self.metrics_url.clone();
            async move { service_syncs(&url).await >= Some(services as f64) }
        })
        .await;
    }

    fn proc_file(&self, name: &str) -> String {
        let path = format!("/proc/{}/{name}", self.child.id());
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
    }

    /// Peak resident memory (`VmHWM`) in MB.
    pub fn peak_rss_mb(&self) -> f64 {
        let status = self.proc_file("status");
        let kb: f64 = status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))
            .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("/proc/<pid>/status has VmHWM");
        kb / 1024.0
    }

    /// User plus system CPU time so far, in seconds.
    pub fn cpu_seconds(&self) -> f64 {
        let stat = self.proc_file("stat");
        // Fields after the parenthesised command name, which may hold spaces:
        // state is field 3, utime 14 and stime 15.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .expect("/proc/<pid>/stat names the command")
            .1
            .split_whitespace()
            .collect();
        let ticks = |field: usize| -> f64 { fields[field - 3].parse().expect("clock ticks") };
        (ticks(14) + ticks(15)) / clock_ticks_per_second()
    }
}

impl Drop for Ccm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Service syncs done so far (`workqueue_work_duration_seconds` of the
/// service queue); `None` until `/metrics` answers.
async fn service_syncs(metrics_url: &str) -> Option<f64> {
    let body = reqwest::get(metrics_url).await.ok()?.text().await.ok()?;
    body.lines().find_map(|line| {
        let rest = line.strip_prefix("workqueue_work_duration_seconds_count{")?;
        if !rest.contains("name=\"service\"") {
            return None;
        }
        rest.rsplit(' ').next()?.parse().ok()
    })
}

/// `getconf CLK_TCK` (100 on every Linux this runs on, if getconf is missing).
fn clock_ticks_per_second() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok()?.trim().parse().ok())
        .unwrap_or(100.0)
}

/// Kills `old` (the world must be quiet), resets vcdsim's counters and
/// starts `name`; returns it and what it asked VCD until it had synced
/// `services` Services and VCD fell quiet.
pub async fn restart(world: &World, old: Ccm, name: &str, services: usize) -> (Ccm, Calls) {
    drop(old);
    world.vcd.reset_log();
    let mut ccm = Ccm::spawn(world, name);
    ccm.wait_service_syncs(services).await;
    world.wait_quiet().await;
    let calls = world.calls();
    crate::progress(format!(
        "{name}: {services} Services synced after a restart: {} reads, {} writes\n{}",
        calls.reads,
        calls.writes,
        calls.breakdown()
    ));
    (ccm, calls)
}
