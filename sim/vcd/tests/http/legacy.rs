use reqwest::StatusCode;
use serde_json::json;
use vcdsim::Scenario;
use vcdsim::world::compute::PowerState;

use crate::support::{Client, start};

#[tokio::test]
async fn vm_query_filters_pages_and_accepts_bare_ids() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let reply = client
        .get("/api/query?type=vm&filterEncoded=true&filter=isVAppTemplate==false;name==worker-0")
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(
        reply
            .header("content-type")
            .unwrap()
            .starts_with("application/vnd.vmware.vcloud.query.records+json")
    );
    assert_eq!(reply.body["total"], 1);
    let record = &reply.body["record"][0];
    assert_eq!(record["status"], "POWERED_ON");
    assert_eq!(record["ipAddress"], "10.0.0.11");
    assert_eq!(record["containerName"], "cluster1");
    assert!(record["vdc"].as_str().unwrap().contains("/api/vdc/"));
    let href = record["href"].as_str().unwrap();
    let uuid = href.rsplit("vm-").next().unwrap();

    for id in [uuid.to_string(), format!("urn:vcloud:vm:{uuid}")] {
        let by_id = client
            .get(&format!("/api/query?type=vm&filter=id=={id}"))
            .await
            .body;
        assert_eq!(by_id["total"], 1, "{id}");
        assert_eq!(by_id["record"][0]["name"], "worker-0");
    }
    let page2 = client
        .get("/api/query?type=vm&pageSize=2&page=2")
        .await
        .body;
    assert_eq!(page2["total"], 3);
    assert_eq!(page2["record"].as_array().unwrap().len(), 1);
    let past = client
        .get("/api/query?type=vm&pageSize=2&page=3")
        .await
        .body;
    assert_eq!(past["record"], json!([]));
    let bad = client.get("/api/query?type=vm&filter=name").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert_eq!(bad.body["majorErrorCode"], 400);
}

#[tokio::test]
async fn vm_and_vapp_documents_and_the_deleted_vm_wording() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let record = client
        .get("/api/query?type=vm&filter=name==worker-1")
        .await
        .body["record"][0]
        .clone();
    let vm = client.get(record["href"].as_str().unwrap()).await;
    assert_eq!(vm.status, StatusCode::OK);
    assert!(
        vm.header("content-type")
            .unwrap()
            .starts_with("application/vnd.vmware.vcloud.vm+json")
    );
    assert_eq!(vm.body["status"], 4);
    assert!(
        vm.body["id"]
            .as_str()
            .unwrap()
            .starts_with("urn:vcloud:vm:")
    );
    let section = &vm.body["section"][0];
    assert_eq!(section["primaryNetworkConnectionIndex"], 0);
    assert_eq!(section["networkConnection"][0]["ipAddress"], "10.0.0.12");
    let up = vm.body["link"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["rel"] == "up")
        .unwrap();
    assert_eq!(up["type"], "application/vnd.vmware.vcloud.vApp+json");
    let vapp = client.get(up["href"].as_str().unwrap()).await.body;
    assert_eq!(vapp["name"], "cluster1");
    assert_eq!(vapp["children"]["vm"].as_array().unwrap().len(), 3);

    let vm_id = vm.body["id"].as_str().unwrap().to_string();
    sim.with_world(|w| w.set_vm_power(&vm_id, PowerState::PoweredOff))
        .unwrap();
    assert_eq!(
        client.get(record["href"].as_str().unwrap()).await.body["status"],
        8
    );

    // Over the admin API: remove the VM; reading it gives the VAPP_VM_VIEW 403.
    let url = format!("{}/_sim/vms/{vm_id}", sim.base_url());
    assert_eq!(
        crate::support::http()
            .delete(url)
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::OK
    );
    let gone = client.get(record["href"].as_str().unwrap()).await;
    assert_eq!(gone.status, StatusCode::FORBIDDEN);
    assert_eq!(gone.body["majorErrorCode"], 403);
    assert_eq!(
        gone.body["minorErrorCode"],
        "ACCESS_TO_RESOURCE_IS_FORBIDDEN"
    );
    let message = gone.body["message"].as_str().unwrap();
    assert!(message.contains("Either you need some or all of the following rights [Base]"));
    assert!(message.contains("to perform operations [VAPP_VM_VIEW]"));
    assert!(message.contains("target entity is invalid"));
}

#[tokio::test]
async fn admin_api_adds_vms_and_sets_power() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let vapp_id = sim.with_world(|w| w.vapps[0].id.clone());
    let http = crate::support::http();
    let added: serde_json::Value = http
        .post(format!("{}/_sim/vapps/{vapp_id}/vms", sim.base_url()))
        .json(&json!({"name": "worker-9", "nics": [{"network": "net1", "ip": "10.0.0.99"}]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = added["id"].as_str().unwrap();
    let status = http
        .put(format!("{}/_sim/vms/{id}/power", sim.base_url()))
        .json(&json!({"state": "SUSPENDED"}))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, StatusCode::OK);
    let record = client
        .get("/api/query?type=vm&filter=name==worker-9")
        .await
        .body;
    assert_eq!(record["record"][0]["status"], "SUSPENDED");
    assert_eq!(record["record"][0]["ipAddress"], "10.0.0.99");
    let missing = http
        .delete(format!("{}/_sim/vms/urn:vcloud:vm:nope", sim.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn org_and_vdc_documents() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let orgs = client.get("/api/org").await.body;
    assert_eq!(orgs["org"].as_array().unwrap().len(), 1);
    let org = client
        .get(orgs["org"][0]["href"].as_str().unwrap())
        .await
        .body;
    assert!(org["id"].as_str().unwrap().starts_with("urn:vcloud:org:"));
    let vdc_link = org["link"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["rel"] == "down")
        .unwrap();
    let vdc = client.get(vdc_link["href"].as_str().unwrap()).await.body;
    assert_eq!(vdc["name"], "vdc1");
}

#[tokio::test]
async fn vms_carry_sizing_policy_and_computer_name_and_vapps_match_by_prefix() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let vapp_id = sim.with_world(|w| w.vapps[0].id.clone());
    let added: serde_json::Value = crate::support::http()
        .post(format!("{}/_sim/vapps/{vapp_id}/vms", sim.base_url()))
        .json(
            &json!({"name": "gpu-0", "sizingPolicy": "gpu.large", "computerName": "gpu-host",
            "nics": [{"network": "net1", "ip": "10.0.0.98"}]}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let uuid = added["id"].as_str().unwrap().rsplit(':').next().unwrap();
    let vm = client.get(&format!("/api/vApp/vm-{uuid}")).await.body;
    assert_eq!(vm["computePolicy"]["vmSizingPolicy"]["name"], "gpu.large");
    assert!(
        vm["computePolicy"]["vmSizingPolicy"]["id"]
            .as_str()
            .unwrap()
            .starts_with("urn:vcloud:vdcComputePolicy:")
    );
    let guest = vm["section"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["_type"] == "GuestCustomizationSectionType")
        .unwrap();
    assert_eq!(guest["computerName"], "gpu-host");

    // Without them: no sizing policy, and the computer name is the VM name.
    let records = client
        .get("/api/query?type=vm&filter=containerName==CLUS*")
        .await
        .body;
    assert_eq!(records["total"], 4);
    let worker = client
        .get(records["record"][0]["href"].as_str().unwrap())
        .await
        .body;
    assert!(worker["computePolicy"]["vmSizingPolicy"].is_null());
    assert_eq!(worker["section"][1]["computerName"], worker["name"]);
}
