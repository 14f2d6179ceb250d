//! Server-side printing: `Accept: …;as=Table` answers, as kubectl asks for them.

use crate::common::{next, start, typed};
use axum::http::{Request, header};
use k8s_openapi::api::core::v1::{Node, Service};
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams, WatchEvent};
use serde_json::{Value, json};

/// What kubectl sends for `kubectl get`.
const KUBECTL_ACCEPT: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

fn table_request(path: &str) -> Request<Vec<u8>> {
    Request::get(path)
        .header(header::ACCEPT, KUBECTL_ACCEPT)
        .body(Vec::new())
        .unwrap()
}

/// The Content-Type and decoded body of a Table GET.
async fn get_table(client: &Client, path: &str) -> (String, Value) {
    let (parts, body) = table_request(path).into_parts();
    let request = Request::from_parts(parts, kube::client::Body::from(body));
    let response = client.send(request).await.unwrap();
    assert_eq!(response.status(), 200, "GET {path}");
    let content_type = response.headers()[header::CONTENT_TYPE]
        .to_str()
        .unwrap()
        .to_string();
    let bytes = response.into_body().collect_bytes().await.unwrap();
    (content_type, serde_json::from_slice(&bytes).unwrap())
}

fn column_names(table: &Value) -> Vec<&str> {
    table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect()
}

/// The row whose object is named `name`.
fn row<'a>(table: &'a Value, name: &str) -> &'a Value {
    table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["object"]["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("a row for {name} in {table}"))
}

async fn seed_load_balancer(client: &Client) {
    let services = Api::<Service>::default_namespaced(client.clone());
    let web: Service = typed(json!({
        "metadata": {"name": "web"},
        "spec": {
            "type": "LoadBalancer",
            "selector": {"app": "web"},
            "ports": [
                {"name": "http", "port": 80, "nodePort": 30080},
                {"name": "https", "port": 443, "nodePort": 30443},
            ],
        },
    }));
    services.create(&PostParams::default(), &web).await.unwrap();
    let ingress = json!({"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}}});
    services
        .patch_status("web", &PatchParams::default(), &Patch::Merge(ingress))
        .await
        .unwrap();
}

#[tokio::test]
async fn service_lists_print_the_real_columns() {
    let (_sim, client) = start().await;
    seed_load_balancer(&client).await;
    let (content_type, table) = get_table(&client, "/api/v1/namespaces/default/services").await;
    assert_eq!(content_type, "application/json;as=Table;v=v1;g=meta.k8s.io");
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["apiVersion"], "meta.k8s.io/v1");
    assert!(table["metadata"]["resourceVersion"].is_string());
    assert_eq!(
        column_names(&table),
        [
            "Name",
            "Type",
            "Cluster-IP",
            "External-IP",
            "Port(s)",
            "Age",
            "Selector"
        ]
    );
    assert_eq!(table["columnDefinitions"][6]["priority"], 1);
    let web = row(&table, "web");
    let cells = web["cells"].as_array().unwrap();
    assert_eq!(cells[0], "web");
    assert_eq!(cells[1], "LoadBalancer");
    assert!(cells[2].as_str().unwrap().starts_with("10.96."));
    assert_eq!(cells[3], "192.0.2.10");
    assert_eq!(cells[4], "80:30080/TCP,443:30443/TCP");
    assert!(cells[5].as_str().unwrap().ends_with('s'), "{cells:?}");
    assert_eq!(cells[6], "app=web");
    assert_eq!(web["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(web["object"]["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(web["object"]["metadata"]["namespace"], "default");
    let kubernetes = row(&table, "kubernetes");
    assert_eq!(kubernetes["cells"][3], "<none>");
    assert_eq!(kubernetes["cells"][4], "443/TCP");

    let (_, first_page) = get_table(&client, "/api/v1/services?limit=1").await;
    assert_eq!(first_page["rows"].as_array().unwrap().len(), 1);
    assert!(first_page["metadata"]["continue"].is_string());
}

#[tokio::test]
async fn single_objects_print_as_one_row_and_can_carry_the_whole_object() {
    let (_sim, client) = start().await;
    let nodes = Api::<Node>::all(client.clone());
    let node: Node = typed(json!({
        "metadata": {"name": "worker-1", "labels": {"node-role.kubernetes.io/worker": ""}},
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}],
            "addresses": [{"type": "InternalIP", "address": "10.0.0.11"}],
            "nodeInfo": {
                "kubeletVersion": "v1.31.0", "osImage": "Photon OS 5.0",
                "kernelVersion": "6.1.0", "containerRuntimeVersion": "containerd://1.7.0",
                "machineID": "", "systemUUID": "", "bootID": "", "kubeProxyVersion": "",
                "operatingSystem": "linux", "architecture": "amd64",
            },
        },
    }));
    nodes.create(&PostParams::default(), &node).await.unwrap();
    let path = "/api/v1/nodes/worker-1?includeObject=Object";
    let (_, table) = get_table(&client, path).await;
    assert_eq!(
        column_names(&table),
        [
            "Name",
            "Status",
            "Roles",
            "Age",
            "Version",
            "Internal-IP",
            "External-IP",
            "OS-Image",
            "Kernel-Version",
            "Container-Runtime"
        ]
    );
    let rows = table["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    let cells = rows[0]["cells"].as_array().unwrap();
    assert_eq!(
        cells[..3],
        [json!("worker-1"), json!("Ready"), json!("worker")]
    );
    assert_eq!(
        cells[4..],
        [
            json!("v1.31.0"),
            json!("10.0.0.11"),
            json!("<none>"),
            json!("Photon OS 5.0"),
            json!("6.1.0"),
            json!("containerd://1.7.0")
        ]
    );
    assert_eq!(rows[0]["object"]["kind"], "Node");
    assert_eq!(
        rows[0]["object"]["status"]["nodeInfo"]["osImage"],
        "Photon OS 5.0"
    );
    assert_eq!(
        table["metadata"]["resourceVersion"],
        rows[0]["object"]["metadata"]["resourceVersion"]
    );

    // Without a Table in Accept, the object itself, as before.
    let plain = nodes.get("worker-1").await.unwrap();
    assert_eq!(plain.metadata.name.as_deref(), Some("worker-1"));
}

#[tokio::test]
async fn table_watches_send_column_definitions_once() {
    let (_sim, client) = start().await;
    seed_load_balancer(&client).await;
    let request = table_request(
        "/api/v1/namespaces/default/services?watch=1&fieldSelector=metadata.name%3Dweb",
    );
    let mut events = Box::pin(client.request_events::<Value>(request).await.unwrap());
    let WatchEvent::Added(first) = next(&mut events).await.unwrap() else {
        panic!("the watch starts with ADDED");
    };
    assert_eq!(first["kind"], "Table");
    assert_eq!(column_names(&first).len(), 7);
    assert_eq!(first["rows"][0]["cells"][3], "192.0.2.10");

    let services = Api::<Service>::default_namespaced(client.clone());
    let cleared = json!({"status": {"loadBalancer": {"ingress": []}}});
    services
        .patch_status("web", &PatchParams::default(), &Patch::Merge(cleared))
        .await
        .unwrap();
    let WatchEvent::Modified(second) = next(&mut events).await.unwrap() else {
        panic!("the status change arrives as MODIFIED");
    };
    assert_eq!(second["columnDefinitions"], json!([]));
    assert_eq!(second["rows"][0]["cells"][3], "<pending>");
}
