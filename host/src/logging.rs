//! Where log lines go and how they look: stderr, as text for people (colour
//! only on a terminal, so a Pod's log holds no escape sequences) or as JSON
//! lines for log pipelines (`--logging-format=json`, as Kubernetes
//! components offer it).

use std::io::IsTerminal;

use clap::ValueEnum;
use tracing_subscriber::EnvFilter;

/// `--logging-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum LogFormat {
    /// One human-readable line per event.
    #[default]
    Text,
    /// One JSON object per line: `timestamp`, `level`, `target`, the event's
    /// fields (`message` among them) and the spans it happened in.
    Json,
}

/// Installs the process's subscriber: `RUST_LOG` if set, else `default`.
pub fn init(format: LogFormat, default: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(true)
            .init(),
    }
}
