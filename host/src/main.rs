//! The `vcd-ccm` binary: parses the command line, sets up logging and runs
//! the chosen command.

use std::process::ExitCode;

use clap::Parser;
use vcd_ccm::cli::{Cli, Command, PolicyCommand};
use vcd_ccm::commands::{demo, policy, run};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A daemon logs what it does; the tools only their warnings.
    // `RUST_LOG` wins over both.
    let default = match &cli.command {
        Command::Run(args) => args.log_filter(),
        _ => "warn",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    match cli.command {
        Command::Run(args) => run::run(&args),
        Command::Demo(args) => demo::demo(&args),
        Command::Policy(PolicyCommand::Test(args)) => policy::test(&args),
        Command::Policy(PolicyCommand::Eval(args)) => policy::eval(&args),
        Command::Policy(PolicyCommand::Inspect(args)) => policy::inspect(&args),
    }
}
