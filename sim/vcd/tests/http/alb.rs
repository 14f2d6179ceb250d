use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::json;
use vcdsim::Scenario;

use crate::support::{Alb, CLOUDAPI, Client, start};

#[tokio::test]
async fn pool_and_virtual_service_lifecycle() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let gw = alb.gateway_id().to_string();

    let pool_id = client
        .write_ok(
            Method::POST,
            "/loadBalancer/pools",
            Some(&alb.pool("pool-a", &["10.0.0.11", "10.0.0.12"])),
        )
        .await;
    let pool = client.ok(&format!("/loadBalancer/pools/{pool_id}")).await;
    assert_eq!(pool["memberCount"], 2);
    assert_eq!(pool["members"].as_array().unwrap().len(), 2);
    assert_eq!(pool["status"], "REALIZED");
    assert_eq!(
        pool["healthStatus"], "UNAVAILABLE",
        "no virtual service uses it yet"
    );
    let summaries = client
        .ok(&format!(
            "/edgeGateways/{gw}/loadBalancer/poolSummaries?filter=name==pool-a"
        ))
        .await;
    assert_eq!(summaries["resultTotal"], 1);
    assert_eq!(summaries["values"][0]["id"], pool_id.as_str());

    let vs_id = client
        .write_ok(
            Method::POST,
            "/loadBalancer/virtualServices",
            Some(&alb.virtual_service("vs-a", &pool_id, "203.0.113.20", 80)),
        )
        .await;
    let summary = client
        .ok(&format!(
            "/edgeGateways/{gw}/loadBalancer/virtualServiceSummaries?filter=name==vs-a"
        ))
        .await;
    let vs = &summary["values"][0];
    assert_eq!(vs["id"], vs_id.as_str());
    assert_eq!(vs["healthStatus"], "UP");
    assert_eq!(vs["status"], "REALIZED");
    assert_eq!(vs["applicationProfileType"], "L4");
    assert_eq!(vs["virtualIpAddress"], "203.0.113.20");
    let used = client
        .ok(&format!("/edgeGateways/{gw}/usedIpAddresses"))
        .await;
    assert!(
        used["values"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u["ipAddress"] == "203.0.113.20" && u["category"] == "Load_Balancer")
    );
    let pool = client.ok(&format!("/loadBalancer/pools/{pool_id}")).await;
    assert_eq!(pool["healthStatus"], "UP");
    assert_eq!(pool["virtualServiceRefs"][0]["id"], vs_id.as_str());
    let assignment = client
        .ok(&format!(
            "/loadBalancer/serviceEngineGroups/assignments?filter=gatewayRef.id=={gw}"
        ))
        .await;
    assert_eq!(assignment["values"][0]["numDeployedVirtualServices"], 1);

    // A pool in use cannot be deleted: refused before any task.
    let reply = client
        .delete(&format!("{CLOUDAPI}/loadBalancer/pools/{pool_id}"))
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert!(reply.body["message"].as_str().unwrap().contains("in use"));

    // Update: GET, modify, PUT the whole object.
    let mut body = client
        .ok(&format!("/loadBalancer/virtualServices/{vs_id}"))
        .await;
    body["servicePorts"][0]["portStart"] = json!(8080);
    client
        .write_ok(
            Method::PUT,
            &format!("/loadBalancer/virtualServices/{vs_id}"),
            Some(&body),
        )
        .await;
    assert_eq!(
        client
            .ok(&format!("/loadBalancer/virtualServices/{vs_id}"))
            .await["servicePorts"][0]["portStart"],
        8080
    );
    let mut pool_body = client.ok(&format!("/loadBalancer/pools/{pool_id}")).await;
    pool_body.as_object_mut().unwrap().remove("id");
    pool_body["members"] = json!([{"ipAddress": "10.0.0.13", "port": 30080}]);
    client
        .write_ok(
            Method::PUT,
            &format!("/loadBalancer/pools/{pool_id}"),
            Some(&pool_body),
        )
        .await;
    assert_eq!(
        client.ok(&format!("/loadBalancer/pools/{pool_id}")).await["memberCount"],
        1
    );

    client
        .write_ok(
            Method::DELETE,
            &format!("/loadBalancer/virtualServices/{vs_id}"),
            None,
        )
        .await;
    client
        .write_ok(
            Method::DELETE,
            &format!("/loadBalancer/pools/{pool_id}"),
            None,
        )
        .await;
    let summaries = client
        .ok(&format!("/edgeGateways/{gw}/loadBalancer/poolSummaries"))
        .await;
    assert_eq!(summaries["resultTotal"], 0);
    let used = client
        .ok(&format!("/edgeGateways/{gw}/usedIpAddresses"))
        .await;
    assert_eq!(used["resultTotal"], 1, "only the primary IP remains");
}

#[tokio::test]
async fn names_are_unique_per_gateway() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let pool_id = client
        .write_ok(
            Method::POST,
            "/loadBalancer/pools",
            Some(&alb.pool("dup", &["10.0.0.11"])),
        )
        .await;
    let reply = client
        .post(
            &format!("{CLOUDAPI}/loadBalancer/pools"),
            &alb.pool("dup", &["10.0.0.12"]),
        )
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.minor(), "DUPLICATE_NAME");
    client
        .write_ok(
            Method::POST,
            "/loadBalancer/virtualServices",
            Some(&alb.virtual_service("vs", &pool_id, "203.0.113.20", 80)),
        )
        .await;
    let reply = client
        .post(
            &format!("{CLOUDAPI}/loadBalancer/virtualServices"),
            &alb.virtual_service("vs", &pool_id, "203.0.113.21", 80),
        )
        .await;
    assert_eq!(reply.minor(), "DUPLICATE_NAME");
}

#[tokio::test]
async fn queued_duplicate_create_is_refused_once_the_first_lands() {
    let sim = start(Scenario::default_scenario()).await;
    sim.set_knobs(|k| {
        k.task_duration_ms = 300;
        k.busy_mode = vcdsim::BusyMode::Queue;
    });
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let body = alb.pool("racer", &["10.0.0.11"]);
    let path = format!("{CLOUDAPI}/loadBalancer/pools");
    let (a, b) = tokio::join!(client.post(&path, &body), client.post(&path, &body));
    let mut statuses = [a.status.as_u16(), b.status.as_u16()];
    statuses.sort();
    assert_eq!(statuses, [202, 400]);
    let refused = if a.status == StatusCode::BAD_REQUEST {
        &a
    } else {
        &b
    };
    assert_eq!(refused.minor(), "DUPLICATE_NAME");
    let gw = alb.gateway_id();
    assert_eq!(
        client
            .ok(&format!("/edgeGateways/{gw}/loadBalancer/poolSummaries"))
            .await["resultTotal"],
        1
    );
}

#[tokio::test]
async fn shared_vips_need_disjoint_ports_and_cannot_move() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let pool = client
        .write_ok(
            Method::POST,
            "/loadBalancer/pools",
            Some(&alb.pool("p", &["10.0.0.11"])),
        )
        .await;
    let vs = "/loadBalancer/virtualServices";
    let first = client
        .write_ok(
            Method::POST,
            vs,
            Some(&alb.virtual_service("http", &pool, "203.0.113.30", 80)),
        )
        .await;
    client
        .write_ok(
            Method::POST,
            vs,
            Some(&alb.virtual_service("https", &pool, "203.0.113.30", 443)),
        )
        .await;
    let reply = client
        .post(
            &format!("{CLOUDAPI}{vs}"),
            &alb.virtual_service("clash", &pool, "203.0.113.30", 80),
        )
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap()
            .contains("already used")
    );
    // Another protocol on the same port does not clash.
    let mut udp = alb.virtual_service("udp", &pool, "203.0.113.30", 80);
    udp["servicePorts"][0]["tcpUdpProfile"] =
        json!({"type": "UDP_FAST_PATH", "systemDefined": true});
    client.write_ok(Method::POST, vs, Some(&udp)).await;
    let mut body = client.ok(&format!("{vs}/{first}")).await;
    body["virtualIpAddress"] = json!("203.0.113.31");
    let reply = client.put(&format!("{CLOUDAPI}{vs}/{first}"), &body).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    // The primary IP is not a VIP.
    let reply = client
        .post(
            &format!("{CLOUDAPI}{vs}"),
            &alb.virtual_service("primary", &pool, "203.0.113.10", 81),
        )
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn references_are_checked() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let pool = client
        .write_ok(
            Method::POST,
            "/loadBalancer/pools",
            Some(&alb.pool("p", &["10.0.0.11"])),
        )
        .await;
    let vs = format!("{CLOUDAPI}/loadBalancer/virtualServices");

    let missing_pool =
        alb.virtual_service("a", "urn:vcloud:loadBalancerPool:nope", "203.0.113.20", 80);
    assert_eq!(
        client.post(&vs, &missing_pool).await.status,
        StatusCode::BAD_REQUEST
    );
    let mut bad_seg = alb.virtual_service("b", &pool, "203.0.113.20", 80);
    bad_seg["serviceEngineGroupRef"] = json!({"id": "urn:vcloud:serviceEngineGroup:nope"});
    assert_eq!(
        client.post(&vs, &bad_seg).await.status,
        StatusCode::BAD_REQUEST
    );

    let mut https = alb.virtual_service("tls", &pool, "203.0.113.20", 443);
    https["applicationProfile"] =
        json!({"name": "System-Secure-HTTP", "type": "HTTPS", "systemDefined": true});
    https["servicePorts"][0]["sslEnabled"] = json!(true);
    let reply = client.post(&vs, &https).await;
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap()
            .contains("certificateRef"),
        "{}",
        reply.body
    );
    let certs = client
        .ok("/ssl/certificateLibrary?filter=alias==my-cert")
        .await;
    assert_eq!(certs["resultTotal"], 1);
    let cert = certs["values"][0].clone();
    https["certificateRef"] = json!({"name": cert["alias"], "id": cert["id"]});
    client
        .write_ok(Method::POST, "/loadBalancer/virtualServices", Some(&https))
        .await;
    // The certificate is now in use.
    let reply = client
        .delete(&format!(
            "{CLOUDAPI}/ssl/certificateLibrary/{}",
            cert["id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);

    let mut ssl_on_l4 = alb.virtual_service("l4ssl", &pool, "203.0.113.21", 443);
    ssl_on_l4["servicePorts"][0]["sslEnabled"] = json!(true);
    assert_eq!(
        client.post(&vs, &ssl_on_l4).await.status,
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test]
async fn a_full_seg_assignment_refuses_more_virtual_services() {
    let sim = start(Scenario::default_scenario()).await;
    sim.with_world(|w| w.seg_assignments[0].max_virtual_services = Some(1));
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let pool = client
        .write_ok(
            Method::POST,
            "/loadBalancer/pools",
            Some(&alb.pool("p", &["10.0.0.11"])),
        )
        .await;
    client
        .write_ok(
            Method::POST,
            "/loadBalancer/virtualServices",
            Some(&alb.virtual_service("one", &pool, "203.0.113.20", 80)),
        )
        .await;
    let reply = client
        .post(
            &format!("{CLOUDAPI}/loadBalancer/virtualServices"),
            &alb.virtual_service("two", &pool, "203.0.113.21", 80),
        )
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert!(reply.body["message"].as_str().unwrap().contains("full"));
}

#[tokio::test]
async fn health_follows_members_and_the_pending_window() {
    let sim = start(Scenario::default_scenario()).await;
    sim.set_knobs(|k| k.vs_pending_ms = 1000);
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let gw = alb.gateway_id().to_string();
    let pool = client
        .write_ok(
            Method::POST,
            "/loadBalancer/pools",
            Some(&alb.pool("p", &["10.0.0.11", "10.0.0.12", "10.0.0.13"])),
        )
        .await;
    client
        .write_ok(
            Method::POST,
            "/loadBalancer/virtualServices",
            Some(&alb.virtual_service("vs", &pool, "203.0.113.20", 80)),
        )
        .await;
    let health = || async {
        let page = client
            .ok(&format!(
                "/edgeGateways/{gw}/loadBalancer/virtualServiceSummaries"
            ))
            .await;
        page["values"][0]["healthStatus"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(health().await, "PENDING");
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(health().await, "UP");

    // Over the admin API: two of three members down → pool RUNNING, VS UP.
    let http = crate::support::http();
    for ip in ["10.0.0.11", "10.0.0.12"] {
        let url = format!("{}/_sim/pools/{pool}/members/{ip}/health", sim.base_url());
        let status = http
            .put(url)
            .json(&json!({"health": "DOWN"}))
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status, StatusCode::OK);
    }
    assert_eq!(
        client.ok(&format!("/loadBalancer/pools/{pool}")).await["healthStatus"],
        "RUNNING"
    );
    assert_eq!(health().await, "UP");
    sim.with_world(|w| w.set_member_health(&pool, "10.0.0.13", "DOWN"))
        .unwrap();
    assert_eq!(
        client.ok(&format!("/loadBalancer/pools/{pool}")).await["healthStatus"],
        "DOWN"
    );
    assert_eq!(health().await, "DOWN");
    let pool_view = client.ok(&format!("/loadBalancer/pools/{pool}")).await;
    assert_eq!(pool_view["upMemberCount"], 0);
    assert_eq!(pool_view["members"][0]["healthStatus"], "DOWN");
}

#[tokio::test]
async fn certificate_library_crud() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let path = format!("{CLOUDAPI}/ssl/certificateLibrary");
    let body = json!({"alias": "new-cert", "certificate": "-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n", "privateKey": "secret"});
    let created = client.post(&path, &body).await;
    assert_eq!(created.status, StatusCode::CREATED);
    assert!(
        created.body.get("privateKey").is_none(),
        "the private key is write-only"
    );
    let id = created.body["id"].as_str().unwrap().to_string();
    let duplicate = client.post(&path, &body).await;
    assert_eq!(duplicate.minor(), "DUPLICATE_NAME");
    let mut update = created.body.clone();
    update["description"] = json!("rotated");
    assert_eq!(
        client.put(&format!("{path}/{id}"), &update).await.status,
        StatusCode::OK
    );
    assert_eq!(
        client.ok(&format!("/ssl/certificateLibrary/{id}")).await["description"],
        "rotated"
    );
    assert_eq!(
        client.delete(&format!("{path}/{id}")).await.status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        client.get(&format!("{path}/{id}")).await.status,
        StatusCode::FORBIDDEN
    );
}
