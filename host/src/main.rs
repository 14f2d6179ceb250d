use std::process::ExitCode;

use clap::Parser;
use vcd_ccm::cli::{Cli, Command, PolicyCommand};
use vcd_ccm::commands::{demo, policy, run};

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().command {
        Command::Run(args) => run::run(&args),
        Command::Demo(args) => demo::demo(&args),
        Command::Policy(PolicyCommand::Test(args)) => policy::test(&args),
        Command::Policy(PolicyCommand::Eval(args)) => policy::eval(&args),
        Command::Policy(PolicyCommand::Inspect(args)) => policy::inspect(&args),
    }
}
