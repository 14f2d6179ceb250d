//! Watches: ordering, resume, 410 Gone, selectors, dropped connections, streaming lists.

use crate::common::{WAIT, list_version, next, start, typed};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::json;

fn config_map(name: &str, team: &str) -> ConfigMap {
    typed(json!({"metadata": {"name": name, "labels": {"team": team}}}))
}

fn kind_and_name(event: &WatchEvent<ConfigMap>) -> (String, String) {
    match event {
        WatchEvent::Added(o) => ("ADDED".into(), o.name_any()),
        WatchEvent::Modified(o) => ("MODIFIED".into(), o.name_any()),
        WatchEvent::Deleted(o) => ("DELETED".into(), o.name_any()),
        WatchEvent::Bookmark(_) => ("BOOKMARK".into(), String::new()),
        WatchEvent::Error(e) => (format!("ERROR {}", e.code), e.reason.clone()),
    }
}

#[tokio::test]
async fn watch_delivers_changes_in_order() {
    let (_sim, client) = start().await;
    let api = Api::<ConfigMap>::default_namespaced(client);
    let version = list_version(&api).await;
    let mut stream = api
        .watch(&WatchParams::default(), &version)
        .await
        .unwrap()
        .boxed();
    api.create(&PostParams::default(), &config_map("a", "x"))
        .await
        .unwrap();
    let patch = Patch::Merge(json!({"data": {"k": "v"}}));
    api.patch("a", &PatchParams::default(), &patch)
        .await
        .unwrap();
    api.delete("a", &DeleteParams::default()).await.unwrap();
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(kind_and_name(&next(&mut stream).await.unwrap()));
    }
    let expected = ["ADDED", "MODIFIED", "DELETED"].map(|k| (k.to_string(), "a".to_string()));
    assert_eq!(seen, expected);
}

#[tokio::test]
async fn watch_resumes_after_a_resource_version_and_old_versions_are_gone() {
    let (sim, client) = start().await;
    let api = Api::<ConfigMap>::default_namespaced(client);
    let a = api
        .create(&PostParams::default(), &config_map("a", "x"))
        .await
        .unwrap();
    api.create(&PostParams::default(), &config_map("b", "x"))
        .await
        .unwrap();
    let after_a = a.resource_version().unwrap();
    let mut stream = api
        .watch(&WatchParams::default(), &after_a)
        .await
        .unwrap()
        .boxed();
    assert_eq!(
        kind_and_name(&next(&mut stream).await.unwrap()),
        ("ADDED".into(), "b".into())
    );

    sim.compact();
    let mut stream = api
        .watch(&WatchParams::default(), &after_a)
        .await
        .unwrap()
        .boxed();
    assert_eq!(
        kind_and_name(&next(&mut stream).await.unwrap()),
        ("ERROR 410".into(), "Expired".into())
    );
}

#[tokio::test]
async fn selector_watches_see_objects_enter_and_leave() {
    let (_sim, client) = start().await;
    let api = Api::<ConfigMap>::default_namespaced(client);
    let version = list_version(&api).await;
    let params = WatchParams::default().labels("team=blue");
    let mut stream = api.watch(&params, &version).await.unwrap().boxed();
    api.create(&PostParams::default(), &config_map("red", "red"))
        .await
        .unwrap();
    api.create(&PostParams::default(), &config_map("blue", "blue"))
        .await
        .unwrap();
    let recolor = |team: &str| Patch::Merge(json!({"metadata": {"labels": {"team": team}}}));
    api.patch("red", &PatchParams::default(), &recolor("blue"))
        .await
        .unwrap();
    api.patch("blue", &PatchParams::default(), &recolor("green"))
        .await
        .unwrap();
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(kind_and_name(&next(&mut stream).await.unwrap()));
    }
    let expected: Vec<(String, String)> =
        [("ADDED", "blue"), ("ADDED", "red"), ("DELETED", "blue")]
            .iter()
            .map(|(k, n)| (k.to_string(), n.to_string()))
            .collect();
    assert_eq!(seen, expected);
}

/// Waits until the server has answered `count` watch requests.
async fn watch_requests_reach(sim: &kubesim::KubeSim, count: usize) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while sim
        .requests()
        .iter()
        .filter(|r| r.query.contains("watch=true"))
        .count()
        < count
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no watch request #{count}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn watcher_recovers_after_dropped_connections() {
    let (sim, client) = start().await;
    let api = Api::<ConfigMap>::default_namespaced(client);
    let (sender, mut names) = tokio::sync::mpsc::unbounded_channel();
    let stream = watcher(api.clone(), watcher::Config::default())
        .default_backoff()
        .applied_objects();
    let consumer = tokio::spawn(async move {
        let mut stream = stream.boxed();
        while let Some(item) = stream.next().await {
            if let Ok(object) = item {
                let _ = sender.send(object.name_any());
            }
        }
    });
    watch_requests_reach(&sim, 1).await;
    sim.faults().drop_watches();
    // The watcher sees the reset, re-watches from its last resourceVersion and
    // must not miss an object created while it was disconnected.
    api.create(&PostParams::default(), &config_map("after", "x"))
        .await
        .unwrap();
    let name = tokio::time::timeout(WAIT, names.recv())
        .await
        .expect("object in time");
    assert_eq!(name.as_deref(), Some("after"));
    watch_requests_reach(&sim, 2).await;
    consumer.abort();
}

#[tokio::test]
async fn streaming_lists_end_initial_events_with_a_bookmark() {
    let (_sim, client) = start().await;
    let api = Api::<ConfigMap>::default_namespaced(client);
    api.create(&PostParams::default(), &config_map("a", "x"))
        .await
        .unwrap();
    api.create(&PostParams::default(), &config_map("b", "x"))
        .await
        .unwrap();
    let events = watcher(api.clone(), watcher::Config::default().streaming_lists());
    let initial: Vec<_> = tokio::time::timeout(
        WAIT,
        events
            .take_while(|e| futures::future::ready(!matches!(e, Ok(watcher::Event::InitDone))))
            .try_collect::<Vec<_>>(),
    )
    .await
    .expect("initial events end")
    .expect("no watch errors");
    let names: Vec<String> = initial
        .iter()
        .filter_map(|e| match e {
            watcher::Event::InitApply(o) => Some(o.name_any()),
            _ => None,
        })
        .collect();
    assert_eq!(names, ["a", "b"]);
}

#[tokio::test]
async fn lagging_watches_hold_back_only_their_resource() {
    let (sim, client) = start().await;
    // Long enough that the prompt watch's event, on a loaded machine,
    // still comes well within it.
    let lag = std::time::Duration::from_secs(2);
    sim.faults().lag_watches("configmaps", lag);
    let maps = Api::<ConfigMap>::default_namespaced(client.clone());
    let secrets = Api::<k8s_openapi::api::core::v1::Secret>::default_namespaced(client);
    let version = list_version(&maps).await;
    let params = WatchParams::default();
    let mut map_events = maps.watch(&params, &version).await.unwrap().boxed();
    let mut secret_events = secrets.watch(&params, &version).await.unwrap().boxed();
    let started = std::time::Instant::now();
    maps.create(&PostParams::default(), &config_map("late", "x"))
        .await
        .unwrap();
    secrets
        .create(
            &PostParams::default(),
            &typed(json!({"metadata": {"name": "prompt"}})),
        )
        .await
        .unwrap();
    assert!(matches!(
        next(&mut secret_events).await,
        Ok(WatchEvent::Added(_))
    ));
    assert!(started.elapsed() < lag, "the secret watch was held back");
    assert_eq!(
        kind_and_name(&next(&mut map_events).await.unwrap()),
        ("ADDED".to_string(), "late".to_string())
    );
    assert!(
        started.elapsed() >= lag,
        "the configmap watch was not held back"
    );
}
