//! `--controllers`: which controllers run, with upstream's names, aliases,
//! `*` and `-name`.

/// The controllers this CCM implements, by canonical name and alias.
const KNOWN: [(&str, &str); 3] = [
    ("cloud-node-controller", "cloud-node"),
    ("cloud-node-lifecycle-controller", "cloud-node-lifecycle"),
    ("service-lb-controller", "service"),
];
/// Accepted for drop-in command lines; VCD clusters need no cloud routes.
const ROUTE: [&str; 2] = ["node-route-controller", "route"];

/// Which controllers `--controllers` turns on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnabledControllers {
    /// `cloud-node-controller`: initialises Nodes and refreshes their addresses.
    pub cloud_node: bool,
    /// `cloud-node-lifecycle-controller`: deletes Nodes whose VM is gone, taints shut-down ones.
    pub cloud_node_lifecycle: bool,
    /// `service-lb-controller`: load balancers for Services of type LoadBalancer.
    pub service: bool,
}

impl EnabledControllers {
    /// Upstream's rules: `*` enables every controller not named with a
    /// leading `-`; a name enables it; an unknown name is an error.
    pub fn parse(list: &[String]) -> Result<Self, String> {
        let mut all = false;
        let mut on = [false; 3];
        let mut off = [false; 3];
        for item in list.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
            if item == "*" {
                all = true;
                continue;
            }
            let (disable, name) = match item.strip_prefix('-') {
                Some(name) => (true, name),
                None => (false, item),
            };
            if ROUTE.contains(&name) {
                if !disable {
                    tracing::warn!("the route controller is not needed on VCD and does not run");
                }
                continue;
            }
            let index = KNOWN
                .iter()
                .position(|(canonical, alias)| name == *canonical || name == *alias)
                .ok_or_else(|| format!("--controllers: {name:?} is not in the list of known controllers (known: *, {})", known_names()))?;
            if disable {
                off[index] = true;
            } else {
                on[index] = true;
            }
        }
        let enabled = |i: usize| !off[i] && (all || on[i]);
        Ok(Self {
            cloud_node: enabled(0),
            cloud_node_lifecycle: enabled(1),
            service: enabled(2),
        })
    }
}

fn known_names() -> String {
    KNOWN
        .iter()
        .flat_map(|(canonical, alias)| [*canonical, *alias])
        .chain(ROUTE)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(items: &[&str]) -> Result<EnabledControllers, String> {
        EnabledControllers::parse(&items.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn star_minus_and_aliases_follow_upstream() {
        let on = |cloud_node, cloud_node_lifecycle, service| EnabledControllers {
            cloud_node,
            cloud_node_lifecycle,
            service,
        };
        assert_eq!(parse(&["*"]).unwrap(), on(true, true, true));
        assert_eq!(parse(&["*", "-service"]).unwrap(), on(true, true, false));
        assert_eq!(
            parse(&["cloud-node-lifecycle-controller"]).unwrap(),
            on(false, true, false)
        );
        assert_eq!(
            parse(&["service", "cloud-node"]).unwrap(),
            on(true, false, true)
        );
        assert_eq!(parse(&["*", "route"]).unwrap(), on(true, true, true));
        let error = parse(&["*", "servce"]).unwrap_err();
        assert!(
            error.contains("\"servce\" is not in the list of known controllers"),
            "{error}"
        );
    }
}
