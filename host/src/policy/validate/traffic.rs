//! The contract's rules for `traffic` (0.3.0): each entry names a port the
//! decision serves, once, and asks only for what that port's profile and the
//! gateway can do; its HTTP rules are checked in `http`.

use std::collections::HashSet;

use crate::policy::model::{AppProfile, Decision, DecisionInput, Persistence, PortTraffic};

/// The longest cookie name accepted: NSX ALB's own limit is not published,
/// and real session cookies (`JSESSIONID`, `PHPSESSID`) are far shorter.
pub const MAX_COOKIE_NAME: usize = 64;

/// The longest drain period: AWS's deregistration delay has the same limit,
/// and nodes leave for upgrades that should not wait longer.
pub const MAX_DRAIN_SECONDS: u32 = 3600;

/// Every rule `decision.traffic` breaks, added to `problems`.
pub fn check(input: &DecisionInput, decision: &Decision, problems: &mut Vec<String>) {
    let mut seen = HashSet::new();
    for entry in &decision.traffic {
        let at = format!("traffic for port {}/{}", entry.service_port, entry.protocol);
        if !seen.insert((entry.service_port, entry.protocol)) {
            problems.push(format!("{at}: more than one entry"));
            continue;
        }
        let served = decision
            .ports
            .iter()
            .find(|p| p.service_port == entry.service_port && p.protocol == entry.protocol);
        match served {
            None => problems.push(format!("{at}: matches no Service port")),
            Some(port) => {
                if entry.drain_seconds > MAX_DRAIN_SECONDS {
                    problems.push(format!(
                        "{at}: drain-seconds {} is over {MAX_DRAIN_SECONDS} (an hour)",
                        entry.drain_seconds
                    ));
                }
                check_persistence(input, entry, port.profile, &at, problems);
                super::http::check(input, &entry.http, port.profile, &at, problems);
            }
        }
    }
}

fn check_persistence(
    input: &DecisionInput,
    entry: &PortTraffic,
    profile: AppProfile,
    at: &str,
    problems: &mut Vec<String>,
) {
    let persistence = &entry.persistence;
    let http = matches!(profile, AppProfile::Http | AppProfile::Https);
    let tls = matches!(profile, AppProfile::Https | AppProfile::L4Tls);
    let kind = persistence.wit_name();
    let fits = match persistence {
        Persistence::None | Persistence::ClientIp => true,
        Persistence::HttpCookie(_) | Persistence::AppCookie(_) => http,
        Persistence::Tls => tls,
    };
    if !fits {
        let needs = match persistence {
            Persistence::Tls => "an https or l4-tls port",
            _ => "an http or https port",
        };
        problems.push(format!(
            "{at}: persistence {kind} needs {needs}, not profile {profile}; client-ip works with any profile"
        ));
    }
    let premium = matches!(persistence, Persistence::AppCookie(_) | Persistence::Tls);
    if premium && !input.cluster.capabilities.premium {
        problems.push(format!(
            "{at}: persistence {kind} needs the PREMIUM load-balancer feature set, and edge gateway {} has STANDARD; client-ip and http-cookie work on either",
            input.cluster.gateway
        ));
    }
    if let Persistence::HttpCookie(name) | Persistence::AppCookie(name) = persistence
        && let Err(why) = cookie_name(name)
    {
        problems.push(format!("{at}: cookie name {name:?} {why}"));
    }
}

/// A cookie name is an HTTP token (RFC 6265 section 4.1.1, RFC 9110 section 5.6.2).
fn cookie_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_COOKIE_NAME {
        return Err(format!("must be 1 to {MAX_COOKIE_NAME} characters"));
    }
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    match name.chars().find(|c| !token(*c)) {
        None => Ok(()),
        Some(c) => Err(format!(
            "has {c:?}: use letters, digits and !#$%&'*+-.^_`|~"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::model::{
        AddressChoice, HealthMonitor, PoolAlgorithm, PortDecision, Protocol,
    };

    fn decision(profile: AppProfile, traffic: Vec<PortTraffic>) -> Decision {
        let port = PortDecision {
            service_port: 80,
            protocol: Protocol::Tcp,
            listen_port: 80,
            profile,
            certificate: None,
            health_monitor: HealthMonitor::Tcp,
            algorithm: PoolAlgorithm::RoundRobin,
            monitor: None,
        };
        Decision {
            traffic,
            ..Decision::of(AddressChoice::KeepCurrent, vec![port], Vec::new())
        }
    }

    fn on(port: u16, persistence: Persistence) -> PortTraffic {
        PortTraffic {
            service_port: port,
            protocol: Protocol::Tcp,
            persistence,
            http: Default::default(),
            drain_seconds: 0,
        }
    }

    fn problems(premium: bool, decision: &Decision) -> Vec<String> {
        let mut input = DecisionInput::default();
        input.cluster.gateway = "edge-1".into();
        input.cluster.capabilities.premium = premium;
        let mut problems = Vec::new();
        check(&input, decision, &mut problems);
        problems
    }

    #[test]
    fn what_the_port_or_gateway_cannot_do_is_refused_with_what_works() {
        let cookie = Persistence::HttpCookie("shop".into());
        assert!(
            problems(
                false,
                &decision(AppProfile::Http, vec![on(80, cookie.clone())])
            )
            .is_empty()
        );
        assert_eq!(
            problems(false, &decision(AppProfile::L4Tcp, vec![on(80, cookie)])),
            [
                "traffic for port 80/tcp: persistence http-cookie needs an http or https port, not profile l4-tcp; client-ip works with any profile"
            ]
        );
        assert_eq!(
            problems(
                false,
                &decision(AppProfile::Https, vec![on(80, Persistence::Tls)])
            ),
            [
                "traffic for port 80/tcp: persistence tls needs the PREMIUM load-balancer feature set, and edge gateway edge-1 has STANDARD; client-ip and http-cookie work on either"
            ]
        );
        assert!(
            problems(
                true,
                &decision(AppProfile::Https, vec![on(80, Persistence::Tls)])
            )
            .is_empty()
        );
        assert_eq!(
            problems(
                true,
                &decision(
                    AppProfile::Http,
                    vec![on(80, Persistence::AppCookie("a b".into()))]
                )
            ),
            [
                "traffic for port 80/tcp: cookie name \"a b\" has ' ': use letters, digits and !#$%&'*+-.^_`|~"
            ]
        );
    }

    #[test]
    fn a_drain_over_an_hour_and_rules_on_an_l4_port_are_refused() {
        let mut long = on(80, Persistence::None);
        long.drain_seconds = 3601;
        assert_eq!(
            problems(false, &decision(AppProfile::L4Tcp, vec![long])),
            ["traffic for port 80/tcp: drain-seconds 3601 is over 3600 (an hour)"]
        );
        let mut ruled = on(80, Persistence::None);
        ruled
            .http
            .security
            .push(crate::policy::model::SecurityRule {
                name: "deny".into(),
                when: Default::default(),
                action: crate::policy::model::SecurityAction::Close,
            });
        assert_eq!(
            problems(false, &decision(AppProfile::L4Tcp, vec![ruled])),
            ["traffic for port 80/tcp: HTTP rules need an http or https port, not profile l4-tcp"]
        );
    }

    #[test]
    fn each_entry_names_one_served_port_once() {
        let twice = vec![on(80, Persistence::ClientIp), on(80, Persistence::None)];
        assert_eq!(
            problems(false, &decision(AppProfile::L4Tcp, twice)),
            ["traffic for port 80/tcp: more than one entry"]
        );
        assert_eq!(
            problems(
                false,
                &decision(AppProfile::L4Tcp, vec![on(81, Persistence::ClientIp)])
            ),
            ["traffic for port 81/tcp: matches no Service port"]
        );
    }

    #[test]
    fn cookie_names_are_http_tokens() {
        for good in ["JSESSIONID", "a", "session_id-2", "x.y~z"] {
            assert!(cookie_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "two words",
            "semi;colon",
            "equals=",
            "naïve",
            &"n".repeat(65),
        ] {
            assert!(cookie_name(bad).is_err(), "{bad}");
        }
    }
}
