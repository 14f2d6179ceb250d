//! The rules of a health monitor body (API 39.0), each refused with a 400
//! naming the field, the value and the bound: the reference's
//! constraints, NSX ALB's bounds, settings of the monitor's type only, an
//! HTTP request line as sent, and strict bodies.

use serde_json::{Value, json};
use vcdsim::Scenario;

use crate::health_monitors::{MONITORS, create_monitor, http_monitor, tenant_at};
use crate::support::{Alb, CLOUDAPI, find_named, start};
use crate::versions::refused;

/// `body` with `value` at the JSON pointer `at`; `Value::Null` removes it.
fn with(mut body: Value, at: &str, value: Value) -> Value {
    let (parent, key) = at.rsplit_once('/').unwrap();
    let object = body
        .pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .unwrap();
    match value {
        Value::Null => object.remove(key),
        value => object.insert(key.to_string(), value),
    };
    body
}

fn other_type(monitor_type: &str, settings: Option<(&str, Value)>) -> Value {
    let mut body = with(http_monitor("m", 80), "/type", json!(monitor_type));
    body.as_object_mut().unwrap().remove("httpSettings");
    if let Some((field, value)) = settings {
        body[field] = value;
    }
    body
}

#[tokio::test]
async fn every_rule_of_a_monitor_body_is_refused_naming_the_field_and_bound() {
    let sim = start(Scenario::default_scenario()).await;
    let client = tenant_at(&sim, "39.1").await;
    let good = http_monitor("taken", 10256);
    create_monitor(&client, &good).await;
    for ok in [
        other_type(
            "HTTPS",
            Some((
                "httpsSettings",
                json!({"port": 443, "requestHeader": "HEAD / HTTP/1.0"}),
            )),
        ),
        other_type(
            "TCP",
            Some((
                "tcpSettings",
                json!({"port": 22, "requestData": "ping", "expectedResponseData": "pong"}),
            )),
        ),
        other_type("UDP", Some(("udpSettings", json!({"port": 53})))),
        other_type("PING", None),
    ] {
        let name = format!("ok-{}", ok["type"].as_str().unwrap());
        create_monitor(&client, &with(ok, "/name", json!(name))).await;
    }
    let long = |n: usize| json!("x".repeat(n));
    let header = |text: &str| with(good.clone(), "/httpSettings/requestHeader", json!(text));
    let auth = |value: Value| with(good.clone(), "/httpSettings/authSettings", value);
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            with(good.clone(), "/name", Value::Null),
            vec!["$.name", "required"],
        ),
        (
            with(good.clone(), "/name", json!("")),
            vec!["$.name", "1 to 128"],
        ),
        (
            with(good.clone(), "/name", long(129)),
            vec!["$.name", "129 characters"],
        ),
        (
            with(good.clone(), "/name", json!("taken")),
            vec!["taken", "already exists"],
        ),
        (
            with(good.clone(), "/name", json!("System-Ping")),
            vec!["System-Ping", "SYSTEM"],
        ),
        (
            with(good.clone(), "/type", Value::Null),
            vec!["$.type", "required"],
        ),
        (
            with(good.clone(), "/type", json!("GRPC")),
            vec!["$.type", "'GRPC' is not one of HTTP, HTTPS, TCP, UDP, PING"],
        ),
        (
            with(good.clone(), "/systemDefined", json!(true)),
            vec!["$.systemDefined", "true"],
        ),
        (
            with(
                good.clone(),
                "/id",
                json!("urn:vcloud:loadBalancerHealthMonitor:1"),
            ),
            vec!["$.id", "on create"],
        ),
        (
            with(good.clone(), "/successfulChecksCount", Value::Null),
            vec!["$.successfulChecksCount", "required"],
        ),
        (
            with(good.clone(), "/successfulChecksCount", json!(0)),
            vec!["$.successfulChecksCount", "0 is below minimum 1", "1 to 50"],
        ),
        (
            with(good.clone(), "/failedChecksCount", json!(51)),
            vec!["$.failedChecksCount", "51 is above maximum 50"],
        ),
        (
            with(good.clone(), "/sendInterval", json!(3601)),
            vec!["$.sendInterval", "3601 is above maximum 3600"],
        ),
        (
            with(good.clone(), "/sendInterval", json!("10")),
            vec!["$.sendInterval", "expected an integer"],
        ),
        (
            with(good.clone(), "/receiveTimeout", json!(0)),
            vec!["$.receiveTimeout", "0 is below minimum 1"],
        ),
        (
            with(
                with(good.clone(), "/sendInterval", json!(3000)),
                "/receiveTimeout",
                json!(2401),
            ),
            vec!["$.receiveTimeout", "2401 is above maximum 2400"],
        ),
        (
            with(good.clone(), "/receiveTimeout", json!(10)),
            vec!["$.receiveTimeout", "10 is not less than sendInterval 10"],
        ),
        (
            with(good.clone(), "/tcpSettings", json!({"port": 80})),
            vec!["$.tcpSettings", "TCP monitor", "type HTTP"],
        ),
        (
            other_type("PING", Some(("httpSettings", json!({"port": 80})))),
            vec!["$.httpSettings", "type PING", "PING takes none"],
        ),
        (
            with(good.clone(), "/httpSettings/port", json!(0)),
            vec!["$.httpSettings.port", "0 is below minimum 1"],
        ),
        (
            with(good.clone(), "/httpSettings/port", json!(65536)),
            vec!["$.httpSettings.port", "65536 is above maximum 65535"],
        ),
        (
            header(&"x".repeat(10241)),
            vec![
                "$.httpSettings.requestHeader",
                "10241 characters, maxLength 10240",
            ],
        ),
        (
            header("FETCH /healthz HTTP/1.0"),
            vec![
                "$.httpSettings.requestHeader (method)",
                "'FETCH' is not one of GET, HEAD",
            ],
        ),
        (
            header("GET healthz HTTP/1.0"),
            vec![
                "$.httpSettings.requestHeader",
                "'healthz' does not start with '/'",
            ],
        ),
        (
            header("GET / HTTP/2"),
            vec![
                "$.httpSettings.requestHeader",
                "'HTTP/2' is not one of HTTP/1.0, HTTP/1.1",
            ],
        ),
        (
            header("GET /healthz"),
            vec!["$.httpSettings.requestHeader", "is not a request line"],
        ),
        (
            header("GET / HTTP/1.1"),
            vec!["$.httpSettings.requestHeader", "HTTP/1.1", "Host"],
        ),
        (
            header("GET / HTTP/1.0\r\nbad header"),
            vec![
                "$.httpSettings.requestHeader",
                "'bad header' is not a header line",
            ],
        ),
        (
            header("GET / HTTP/1.0\nHost: x"),
            vec!["$.httpSettings.requestHeader", "is not a request line"],
        ),
        (
            with(good.clone(), "/httpSettings/requestBody", long(10241)),
            vec!["$.httpSettings.requestBody", "maxLength 10240"],
        ),
        (
            with(
                good.clone(),
                "/httpSettings/expectedResponseData",
                long(2049),
            ),
            vec!["$.httpSettings.expectedResponseData", "maxLength 2048"],
        ),
        (
            with(good.clone(), "/httpSettings/useExactRequest", json!("yes")),
            vec!["$.httpSettings.useExactRequest", "expected a boolean"],
        ),
        (
            with(
                good.clone(),
                "/httpSettings/expectedResponseCodes",
                json!([]),
            ),
            vec!["$.httpSettings.expectedResponseCodes", "minItems 1"],
        ),
        (
            with(
                good.clone(),
                "/httpSettings/expectedResponseCodes",
                json!(vec!["HTTP_ANY"; 7]),
            ),
            vec![
                "$.httpSettings.expectedResponseCodes",
                "7 items, maxItems 6",
            ],
        ),
        (
            with(
                good.clone(),
                "/httpSettings/expectedResponseCodes",
                json!(["200"]),
            ),
            vec![
                "$.httpSettings.expectedResponseCodes[0]",
                "'200' is not one of HTTP_ANY",
            ],
        ),
        (
            with(
                good.clone(),
                "/httpSettings/expectedResponseCodes",
                json!(["HTTP_2XX", "HTTP_3XX", "HTTP_2XX"]),
            ),
            vec!["expectedResponseCodes[2]", "listed twice"],
        ),
        (
            auth(json!({"username": "u", "password": "p"})),
            vec!["$.httpSettings.authSettings.type", "required"],
        ),
        (
            auth(json!({"type": "OAUTH", "username": "u", "password": "p"})),
            vec![
                "$.httpSettings.authSettings.type",
                "'OAUTH' is not one of NTLM, BASIC, NONE",
            ],
        ),
        (
            auth(json!({"type": "BASIC", "username": "", "password": "p"})),
            vec!["$.httpSettings.authSettings.username", "minLength 1"],
        ),
        (
            auth(json!({"type": "NTLM", "username": "u", "password": "x".repeat(1025)})),
            vec!["$.httpSettings.authSettings.password", "maxLength 1024"],
        ),
        (
            auth(json!({"type": "NTLM", "username": "u", "password": "   "})),
            vec!["$.httpSettings.authSettings.password", "white space"],
        ),
        (
            auth(json!({"type": "BASIC", "username": "u"})),
            vec![
                "$.httpSettings.authSettings",
                "BASIC needs a username and a password",
            ],
        ),
        (
            auth(json!({"type": "NONE", "username": "u"})),
            vec![
                "$.httpSettings.authSettings",
                "NONE takes no username or password",
            ],
        ),
        (
            other_type("TCP", Some(("tcpSettings", json!({"port": 0})))),
            vec!["$.tcpSettings.port", "minimum 1"],
        ),
        (
            other_type(
                "UDP",
                Some(("udpSettings", json!({"requestData": "x".repeat(10241)}))),
            ),
            vec!["$.udpSettings.requestData", "maxLength 10240"],
        ),
        (
            other_type(
                "TCP",
                Some((
                    "tcpSettings",
                    json!({"expectedResponseData": "x".repeat(2049)}),
                )),
            ),
            vec!["$.tcpSettings.expectedResponseData", "maxLength 2048"],
        ),
        (
            with(good.clone(), "/interval", json!(5)),
            vec!["Unrecognized field \"interval\" (class EdgeLoadBalancerHealthMonitor)"],
        ),
        (
            with(good.clone(), "/httpSettings/method", json!("GET")),
            vec!["Unrecognized field \"method\" (class EdgeLoadBalancerHealthMonitorHttpSettings)"],
        ),
        (
            other_type("HTTPS", Some(("httpsSettings", json!({"sni": "x"})))),
            vec!["Unrecognized field \"sni\" (class EdgeLoadBalancerHealthMonitorHttpsSettings)"],
        ),
        (
            other_type("UDP", Some(("udpSettings", json!({"maxLength": 1})))),
            vec![
                "Unrecognized field \"maxLength\" (class EdgeLoadBalancerHealthMonitorUdpSettings)",
            ],
        ),
        (
            auth(json!({"type": "NONE", "domain": "d"})),
            vec![
                "Unrecognized field \"domain\" (class EdgeLoadBalancerHealthMonitorAuthenticationSettings)",
            ],
        ),
    ];
    let url = format!("{CLOUDAPI}{MONITORS}");
    for (body, needles) in &cases {
        refused(&client.post(&url, body).await, needles);
    }
    // A PUT is held to the same rules.
    let id = find_named(
        &client
            .ok(&format!(
                "/edgeGateways/{}/loadBalancer/healthMonitorSummaries?filter=name==taken",
                Alb::discover(&client, "edge1").await.gateway_id()
            ))
            .await,
        "taken",
    )["id"]
        .as_str()
        .unwrap()
        .to_string();
    for (body, needles) in cases
        .iter()
        .filter(|(_, n)| !n[0].contains("taken") && !n[0].starts_with("$.id"))
    {
        refused(&client.put(&format!("{url}/{id}"), body).await, needles);
    }
}
