//! The command line: `vcd-ccm policy {test,eval,inspect}`.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "vcd-ccm",
    version,
    about = "Kubernetes cloud-controller-manager for VMware Cloud Director"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Work with load-balancer policies.
    #[command(subcommand)]
    Policy(PolicyCommand),
}

#[derive(Subcommand)]
pub enum PolicyCommand {
    /// Run policy test suites (exit 0: all passed, 1: a case failed, 2: a suite could not run).
    Test(TestArgs),
    /// Print the decision a policy makes for one input.
    Eval(EvalArgs),
    /// Show a component's imports, exports, contract version and digest, and whether the host accepts it.
    Inspect(InspectArgs),
}

#[derive(clap::Args)]
pub struct TestArgs {
    /// Suite files, or directories searched for *.yaml.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Run only the cases whose name matches this regular expression.
    #[arg(long)]
    pub run: Option<String>,
    #[arg(long, value_enum, default_value_t = Output::Text)]
    pub output: Output,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Output {
    Text,
    Json,
}

#[derive(clap::Args)]
pub struct EvalArgs {
    /// `default`, or the path of a policy component (.wasm).
    #[arg(long)]
    pub policy: String,
    /// A decision-input document (YAML or JSON, WIT field names).
    #[arg(long)]
    pub input: PathBuf,
    /// The policy's settings (a JSON file); `{}` when omitted.
    #[arg(long)]
    pub config: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct InspectArgs {
    /// The policy component (.wasm).
    pub component: PathBuf,
}
