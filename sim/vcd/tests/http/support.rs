//! A small client for driving the simulator over HTTP in tests.

use std::time::{Duration, Instant};

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use vcdsim::{Scenario, Sim};

pub const CLOUDAPI: &str = "/cloudapi/1.0.0";

pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts a CloudAPI error and returns its `minorErrorCode`.
    pub fn minor(&self) -> &str {
        assert!(
            self.body["message"].is_string(),
            "not an error body: {}",
            self.body
        );
        assert!(
            self.body["message"].as_str().unwrap().starts_with("[ "),
            "{}",
            self.body
        );
        self.body["minorErrorCode"].as_str().unwrap_or_default()
    }
}

#[derive(Clone)]
pub struct Client {
    pub http: reqwest::Client,
    pub base: String,
    pub token: Option<String>,
    pub tenant_context: Option<String>,
    /// The version named in `Accept` on every call.
    pub api_version: &'static str,
}

pub async fn start(scenario: Scenario) -> Sim {
    Sim::start(scenario).await.expect("the simulator starts")
}

pub fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .expect("an HTTP client")
}

impl Client {
    pub fn anonymous(sim: &Sim) -> Self {
        Self {
            http: http(),
            base: sim.base_url().to_string(),
            token: None,
            tenant_context: None,
            api_version: "37.2",
        }
    }

    /// Basic login as `user@org` on `/sessions` (or `/sessions/provider`).
    pub async fn login(sim: &Sim, user: &str, org: &str, password: &str) -> Self {
        let mut client = Self::anonymous(sim);
        let path = if org.eq_ignore_ascii_case("system") {
            "/sessions/provider"
        } else {
            "/sessions"
        };
        let response = client
            .http
            .post(format!("{}{CLOUDAPI}{path}", client.base))
            .basic_auth(format!("{user}@{org}"), Some(password))
            .header("accept", "application/json;version=37.2")
            .send()
            .await
            .expect("login request");
        assert_eq!(response.status(), StatusCode::OK, "login of {user}@{org}");
        let token = response.headers()["x-vmware-vcloud-access-token"]
            .to_str()
            .unwrap()
            .to_string();
        client.token = Some(token);
        client
    }

    pub async fn tenant(sim: &Sim) -> Self {
        let c = sim.tenant().expect("the scenario has a tenant").clone();
        Self::login(sim, &c.user, &c.org, &c.password).await
    }

    pub async fn system(sim: &Sim) -> Self {
        let c = sim
            .system()
            .expect("the scenario has a system user")
            .clone();
        Self::login(sim, &c.user, &c.org, &c.password).await
    }

    pub async fn call(&self, method: Method, path: &str, body: Option<&Value>) -> Reply {
        let url = if path.starts_with("http") {
            path.to_string()
        } else {
            format!("{}{path}", self.base)
        };
        let mut request = self.http.request(method, url).header(
            "accept",
            format!("application/json;version={}", self.api_version),
        );
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(org) = &self.tenant_context {
            request = request.header("x-vmware-vcloud-tenant-context", org);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.expect("the request is sent");
        let status = response.status();
        let headers = response.headers().clone();
        let text = response.text().await.expect("the body is read");
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        Reply {
            status,
            headers,
            body,
        }
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.call(Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: &Value) -> Reply {
        self.call(Method::POST, path, Some(body)).await
    }

    pub async fn put(&self, path: &str, body: &Value) -> Reply {
        self.call(Method::PUT, path, Some(body)).await
    }

    pub async fn delete(&self, path: &str) -> Reply {
        self.call(Method::DELETE, path, None).await
    }

    /// GET on a CloudAPI path that must answer 200; returns the body.
    pub async fn ok(&self, path: &str) -> Value {
        let reply = self.get(&format!("{CLOUDAPI}{path}")).await;
        assert_eq!(reply.status, StatusCode::OK, "GET {path}: {}", reply.body);
        reply.body
    }

    /// Polls a task (by its absolute `Location`) until it ends; bounded.
    pub async fn wait_task(&self, location: &str) -> Value {
        assert!(
            location.starts_with("http://"),
            "Location must be absolute: {location}"
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let task = self.get(location).await;
            assert_eq!(task.status, StatusCode::OK, "{}", task.body);
            let status = task.body["status"].as_str().unwrap_or_default().to_string();
            if !matches!(status.as_str(), "queued" | "running") {
                return task.body;
            }
            assert!(Instant::now() < deadline, "task {location} did not finish");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// A write that must answer 202; waits for its task and returns it.
    pub async fn write(&self, method: Method, path: &str, body: Option<&Value>) -> Value {
        let reply = self
            .call(method.clone(), &format!("{CLOUDAPI}{path}"), body)
            .await;
        assert_eq!(
            reply.status,
            StatusCode::ACCEPTED,
            "{method} {path}: {}",
            reply.body
        );
        let location = reply
            .header("location")
            .expect("a Location header")
            .to_string();
        self.wait_task(&location).await
    }

    /// A write whose task must succeed; returns the owner id.
    pub async fn write_ok(&self, method: Method, path: &str, body: Option<&Value>) -> String {
        let task = self.write(method, path, body).await;
        assert_eq!(task["status"], "success", "{task}");
        task["owner"]["id"].as_str().unwrap().to_string()
    }
}

/// The id and name of the first object named `name` in a page.
pub fn find_named<'a>(page: &'a Value, name: &str) -> &'a Value {
    page["values"]
        .as_array()
        .and_then(|values| values.iter().find(|v| v["name"] == name))
        .unwrap_or_else(|| panic!("{name} not in {page}"))
}

/// The default world's edge gateway, SEG and a pool/VS body builder.
pub struct Alb {
    pub gateway: Value,
    pub seg: Value,
}

impl Alb {
    pub async fn discover(client: &Client, gateway_name: &str) -> Self {
        let gateways = client
            .ok(&format!("/edgeGateways?filter=name=={gateway_name}"))
            .await;
        let gateway = find_named(&gateways, gateway_name);
        let gateway = serde_json::json!({"name": gateway["name"], "id": gateway["id"]});
        let assignments = client
            .ok(&format!(
                "/loadBalancer/serviceEngineGroups/assignments?filter=gatewayRef.id=={}",
                gateway["id"].as_str().unwrap()
            ))
            .await;
        let seg = assignments["values"][0]["serviceEngineGroupRef"].clone();
        Self { gateway, seg }
    }

    pub fn pool(&self, name: &str, members: &[&str]) -> Value {
        let members: Vec<Value> = members
            .iter()
            .map(|ip| serde_json::json!({"ipAddress": ip, "port": 30080, "ratio": 1, "enabled": true}))
            .collect();
        serde_json::json!({
            "enabled": true, "name": name, "defaultPort": 30080, "gracefulTimeoutPeriod": 0,
            "algorithm": "ROUND_ROBIN", "members": members, "gatewayRef": self.gateway,
            "healthMonitors": [{"type": "TCP"}],
        })
    }

    pub fn virtual_service(&self, name: &str, pool_id: &str, vip: &str, port: u16) -> Value {
        serde_json::json!({
            "name": name, "enabled": true, "virtualIpAddress": vip,
            "loadBalancerPoolRef": {"id": pool_id}, "gatewayRef": self.gateway,
            "serviceEngineGroupRef": self.seg,
            "servicePorts": [{"tcpUdpProfile": {"type": "TCP_PROXY"}, "portStart": port}],
            "applicationProfile": {"systemDefined": true, "name": "System-L4-Application", "type": "L4"},
        })
    }

    /// A pool named `name` with the member `10.0.0.11`; its id.
    pub async fn create_pool(&self, client: &Client, name: &str) -> String {
        client
            .write_ok(
                Method::POST,
                "/loadBalancer/pools",
                Some(&self.pool(name, &["10.0.0.11"])),
            )
            .await
    }

    /// A pool named `name` whose members are an IP set `<name>-nodes` of
    /// `addresses` (group mode); its id.
    pub async fn create_group_pool(
        &self,
        client: &Client,
        name: &str,
        addresses: &[&str],
    ) -> String {
        let set = crate::firewall::ip_set(&self.gateway, &format!("{name}-nodes"), addresses);
        let set = client
            .write_ok(Method::POST, "/firewallGroups", Some(&set))
            .await;
        let mut grouped = self.pool(name, &[]);
        grouped["memberGroupRef"] = serde_json::json!({"id": set});
        client
            .write_ok(Method::POST, "/loadBalancer/pools", Some(&grouped))
            .await
    }

    pub fn gateway_id(&self) -> &str {
        self.gateway["id"].as_str().unwrap()
    }
}
