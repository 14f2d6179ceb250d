//! What `vcd-ccm run` writes to its log when stderr is a file, as in a Pod:
//! no terminal escape sequences, `--logging-format=json` lines that parse
//! one by one, and in neither format a credential.

use std::time::Duration;

use crate::support::poll::wait_until;
use crate::support::run::World;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_in_a_file_are_plain_or_json_lines_without_secrets() {
    let world = World::start().await;
    world.add_nodes().await;
    let password = std::fs::read_to_string(world.files.credentials_dir.join("password"))
        .expect("the password file");
    for format in ["text", "json"] {
        let mut ccm = world.spawn(
            format,
            &[
                &format!("--logging-format={format}"),
                "--leader-elect=false",
            ],
        );
        // A Service for each process, so each logs a reconcile.
        world.create_service(format, &[80]).await;
        wait_until("the Service's address", Duration::from_secs(60), || async {
            world.external_ip(format).await
        })
        .await;
        ccm.kill();
        let log = ccm.stderr();
        assert!(log.lines().count() > 3, "{format}: {log}");
        assert!(
            !log.contains('\u{1b}'),
            "{format}: escape sequences in {log}"
        );
        assert!(
            !log.contains(password.trim()),
            "{format}: the password is logged"
        );
        if format == "json" {
            for line in log.lines().filter(|l| !l.is_empty()) {
                let entry: serde_json::Value = serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
                for key in ["timestamp", "level", "target"] {
                    assert!(entry.get(key).is_some(), "no {key}: {line}");
                }
            }
            assert!(
                log.lines().any(|l| l.contains("\"message\"")),
                "messages are fields"
            );
        }
    }
}
