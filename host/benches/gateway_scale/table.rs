//! A row of figures and the Markdown table that prints them.

use std::time::Duration;

use crate::world::Calls;

pub struct Row {
    pub figure: String,
    pub upstream: String,
    pub measured: String,
    pub physical: String,
    pub target: String,
    /// Whether the target is met; `None` when the figure has no target.
    pub met: Option<bool>,
}

impl Row {
    /// A figure with neither a target nor a physical limit.
    pub fn plain(figure: &str, upstream: &str, measured: String) -> Row {
        Row {
            figure: figure.to_string(),
            upstream: upstream.to_string(),
            measured,
            physical: "—".to_string(),
            target: "—".to_string(),
            met: None,
        }
    }

    /// VCD reads per Service of a restart during which nothing changed.
    pub fn restart(services: usize, calls: &Calls) -> Row {
        let per_service = calls.reads as f64 / services as f64;
        Row {
            figure: format!(
                "VCD reads per Service, restart with nothing changed, {services} Services on the gateway"
            ),
            upstream: "≈199 calls (mode A)".to_string(),
            measured: format!(
                "{per_service:.2} ({} reads, {} writes)",
                calls.reads, calls.writes
            ),
            physical: "0".to_string(),
            target: "≤ 1".to_string(),
            met: Some(per_service <= 1.0),
        }
    }
}

pub fn seconds(duration: Duration) -> String {
    format!("{:.2} s", duration.as_secs_f64())
}

pub fn print(title: &str, rows: &[Row], notes: &[String]) {
    println!("\n### {title}\n");
    println!("| figure | upstream CCM | vcd-ccm | physical limit | target | met |");
    println!("|---|---|---|---|---|---|");
    for row in rows {
        let met = match row.met {
            Some(true) => "met",
            Some(false) => "NOT met",
            None => "—",
        };
        println!(
            "| {} | {} | {} | {} | {} | {met} |",
            row.figure, row.upstream, row.measured, row.physical, row.target
        );
    }
    println!();
    for note in notes {
        println!("- {note}");
    }
}
