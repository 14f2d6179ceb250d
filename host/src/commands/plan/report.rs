//! The plan as printed: per Service, the writes a reconcile would make
//! (`+` create, `~` update with the fields that change, `-` delete), a
//! write a decision would make on its way, or why it could not be planned.

use serde_json::{Value, json};

use crate::lb::{Action, PlannedWrite};
use crate::text::sanitize;

/// How long a message from outside (VCD, a policy) may run in the report.
const MESSAGE_BYTES: usize = 1024;

/// What planning one Service gave.
pub enum Outcome {
    /// The writes a reconcile would make (none: up to date).
    Writes(Vec<PlannedWrite>),
    /// The reconcile would write on its way to a plan (a certificate
    /// upload), which a plan does not send: that write.
    DecisionWrites(String),
    /// Why the Service could not be planned.
    Error(String),
}

/// One Service's plan.
pub struct ServicePlan {
    /// `namespace/name`, and `(uid)` for a Service that is gone.
    pub service: String,
    /// Whether its load balancer would be deleted.
    pub deleting: bool,
    pub outcome: Outcome,
}

/// Every Service's plan.
#[derive(Default)]
pub struct Report {
    pub services: Vec<ServicePlan>,
    /// Load balancers are turned off (`loadbalancer.enabled: false`, or
    /// the service controller not enabled): nothing to plan.
    off: bool,
}

impl Report {
    pub fn off() -> Self {
        Self {
            off: true,
            ..Self::default()
        }
    }

    fn writes(&self) -> usize {
        self.services
            .iter()
            .map(|s| match &s.outcome {
                Outcome::Writes(writes) => writes.len(),
                Outcome::DecisionWrites(_) => 1,
                Outcome::Error(_) => 0,
            })
            .sum()
    }

    fn errors(&self) -> usize {
        self.services
            .iter()
            .filter(|s| matches!(s.outcome, Outcome::Error(_)))
            .count()
    }

    /// 1 when a Service could not be planned, else 2 when something would
    /// be written, else 0.
    pub fn exit_code(&self) -> u8 {
        match (self.errors(), self.writes()) {
            (0, 0) => 0,
            (0, _) => 2,
            _ => 1,
        }
    }

    pub fn text(&self) -> String {
        if self.off {
            return "Load balancers are off (loadbalancer.enabled: false, or the service controller is not enabled): nothing to plan.\n".to_string();
        }
        let mut text = String::new();
        for plan in &self.services {
            let gone = if plan.deleting { " (deleted)" } else { "" };
            match &plan.outcome {
                Outcome::Writes(writes) if writes.is_empty() => {
                    text += &format!("{}{gone}: up to date\n", plan.service);
                }
                Outcome::Writes(writes) => {
                    text += &format!("{}{gone}: {} writes\n", plan.service, writes.len());
                    for write in writes {
                        text += &format!("  {}\n", line(write));
                    }
                }
                Outcome::DecisionWrites(write) => {
                    text += &format!(
                        "{}{gone}: a reconcile would first write, on its way to a plan: {} (not sent)\n",
                        plan.service,
                        sanitize(write, MESSAGE_BYTES)
                    );
                }
                Outcome::Error(error) => {
                    text += &format!(
                        "{}{gone}: cannot be planned: {}\n",
                        plan.service,
                        sanitize(error, MESSAGE_BYTES)
                    );
                }
            }
        }
        text += &format!(
            "Plan: {} writes for {} Services, {} could not be planned.\n",
            self.writes(),
            self.services.len(),
            self.errors()
        );
        text
    }

    pub fn json(&self) -> Value {
        let services: Vec<Value> = self
            .services
            .iter()
            .map(|plan| {
                let mut entry = json!({"service": plan.service, "deleting": plan.deleting});
                match &plan.outcome {
                    Outcome::Writes(writes) => entry["writes"] = json!(writes),
                    Outcome::DecisionWrites(write) => {
                        entry["decisionWrites"] = json!(sanitize(write, MESSAGE_BYTES));
                    }
                    Outcome::Error(error) => entry["error"] = json!(sanitize(error, MESSAGE_BYTES)),
                }
                entry
            })
            .collect();
        json!({
            "loadBalancers": if self.off { "off" } else { "on" },
            "services": services,
            "writes": self.writes(),
            "errors": self.errors(),
        })
    }
}

fn line(write: &PlannedWrite) -> String {
    let sign = match write.action {
        Action::Create => '+',
        Action::Update => '~',
        Action::Delete => '-',
    };
    let name = sanitize(&write.name, MESSAGE_BYTES);
    match write.fields.is_empty() {
        true => format!("{sign} {} {name}", write.kind),
        false => format!("{sign} {} {name} ({})", write.kind, write.fields.join(", ")),
    }
}
