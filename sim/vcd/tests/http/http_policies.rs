//! HTTP policies of a virtual service (API 38.0+): request, response and
//! security rule lists, replaced whole by a PUT and checked strictly.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use vcdsim::Scenario;

use crate::support::{Alb, CLOUDAPI, Client, start};
use crate::versions::refused;

fn request_rules() -> Value {
    json!({"values": [
        {"name": "to-https", "active": true, "logging": false,
         "matchCriteria": {"protocol": "HTTP", "pathMatch": {"matchCriteria": "BEGINS_WITH", "matchStrings": ["/"]}},
         "redirectAction": {"protocol": "HTTPS", "port": 443, "keepQuery": true, "statusCode": 301}},
        {"name": "forwarded", "matchCriteria": {"clientIpMatch": {"matchCriteria": "IS_IN", "addresses": ["10.0.0.0/8"]},
                                                 "methodMatch": {"matchCriteria": "IS_IN", "methods": ["GET", "POST"]}},
         "headerActions": [{"action": "ADD", "name": "X-Forwarded-Proto", "value": "https"}]},
    ]})
}

#[tokio::test]
async fn rule_lists_are_replaced_whole_and_checked() {
    let sim = start(Scenario::default_scenario()).await;
    let v37 = Client::tenant(&sim).await;
    let mut client = v37.clone();
    client.api_version = "38.0";
    let alb = Alb::discover(&client, "edge1").await;
    let pool = alb.create_pool(&client, "web").await;
    let mut vs = alb.virtual_service("web", &pool, "203.0.113.20", 80);
    vs["applicationProfile"] =
        json!({"systemDefined": true, "name": "System-HTTP", "type": "HTTP"});
    let id = client
        .write_ok(Method::POST, "/loadBalancer/virtualServices", Some(&vs))
        .await;
    let path = |kind: &str| format!("/loadBalancer/virtualServices/{id}/httpPolicy/{kind}");
    assert_eq!(
        client.ok(&path("requestRules")).await,
        json!({"values": []})
    );

    client
        .write_ok(Method::PUT, &path("requestRules"), Some(&request_rules()))
        .await;
    let read = client.ok(&path("requestRules")).await;
    assert_eq!(read["values"][0]["name"], "to-https");
    assert_eq!(
        read["values"][1]["headerActions"][0]["name"],
        "X-Forwarded-Proto"
    );
    let hsts = json!({"values": [{"name": "hsts", "matchCriteria": {},
        "headerActions": [{"action": "ADD", "name": "Strict-Transport-Security", "value": "max-age=31536000"}]}]});
    client
        .write_ok(Method::PUT, &path("responseRules"), Some(&hsts))
        .await;
    let limit = json!({"values": [{"name": "per-client", "matchCriteria": {},
        "rateLimitAction": {"count": 100, "period": 1, "closeConnectionAction": "CLOSE"}}]});
    client
        .write_ok(Method::PUT, &path("securityRules"), Some(&limit))
        .await;
    assert_eq!(
        client.ok(&path("securityRules")).await["values"][0]["rateLimitAction"]["count"],
        100
    );
    // A PUT replaces the list: one rule left.
    let one = json!({"values": [request_rules()["values"][1].clone()]});
    client
        .write_ok(Method::PUT, &path("requestRules"), Some(&one))
        .await;
    let read = client.ok(&path("requestRules")).await;
    assert_eq!(read["values"].as_array().unwrap().len(), 1);
    assert_eq!(read["values"][0]["name"], "forwarded");

    let url = |kind: &str| format!("{CLOUDAPI}{}", path(kind));
    let mut bad = request_rules();
    bad["values"][0]["redirectAction"]["statusCode"] = json!(308);
    refused(
        &client.put(&url("requestRules"), &bad).await,
        &["values[0].redirectAction.statusCode", "308"],
    );
    let mut bad = request_rules();
    bad["values"][1]["matchCriteria"]["methodMatch"]["methods"] = json!(["FETCH"]);
    refused(
        &client.put(&url("requestRules"), &bad).await,
        &["methodMatch.methods[0]", "FETCH"],
    );
    let mut bad = request_rules();
    bad["values"][1]["bogus"] = json!(1);
    refused(
        &client.put(&url("requestRules"), &bad).await,
        &["Unrecognized field \"bogus\""],
    );
    let mut bad = limit.clone();
    bad["values"][0]["matchCriteria"] =
        json!({"statusCodeMatch": {"matchCriteria": "IS_IN", "statusCodes": ["404"]}});
    refused(
        &client.put(&url("securityRules"), &bad).await,
        &["statusCodeMatch"],
    );
    refused(
        &client
            .put(
                &url("securityRules"),
                &json!({"values": [{"name": "x", "matchCriteria": {}}]}),
            )
            .await,
        &["values[0] needs exactly one"],
    );
    assert_eq!(
        client.get(&url("otherRules")).await.status,
        StatusCode::NOT_FOUND
    );

    // An L4 virtual service takes no rules, only an empty list.
    let tcp_pool = alb.create_pool(&client, "tcp").await;
    let tcp = alb.virtual_service("tcp", &tcp_pool, "203.0.113.20", 5432);
    let tcp_id = client
        .write_ok(Method::POST, "/loadBalancer/virtualServices", Some(&tcp))
        .await;
    let tcp_url =
        format!("{CLOUDAPI}/loadBalancer/virtualServices/{tcp_id}/httpPolicy/requestRules");
    refused(
        &client.put(&tcp_url, &request_rules()).await,
        &["HTTP or HTTPS application profile", "tcp has L4"],
    );
    client
        .write_ok(
            Method::PUT,
            &format!("/loadBalancer/virtualServices/{tcp_id}/httpPolicy/requestRules"),
            Some(&json!({"values": []})),
        )
        .await;
    client
        .write_ok(
            Method::DELETE,
            &format!("/loadBalancer/virtualServices/{tcp_id}"),
            None,
        )
        .await;

    // Before 38.0 the endpoints do not exist.
    refused(&v37.get(&url("requestRules")).await, &["38.0", "37.2"]);
    refused(
        &v37.put(&url("requestRules"), &one).await,
        &["38.0", "37.2"],
    );

    // They go with their virtual service.
    client
        .write_ok(
            Method::DELETE,
            &format!("/loadBalancer/virtualServices/{id}"),
            None,
        )
        .await;
    assert!(sim.dump()["httpPolicies"].as_array().unwrap().is_empty());
}
