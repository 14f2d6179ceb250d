//! The `vcd-ccm` binary: parses the command line, sets up logging and runs
//! the chosen command.

use std::process::ExitCode;

use clap::Parser;
use vcd_ccm::cli::{Cli, Command, PolicyCommand};
#[cfg(feature = "demo")]
use vcd_ccm::commands::demo;
use vcd_ccm::commands::{check, plan, policy, run};
use vcd_ccm::logging::{self, LogFormat};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A daemon logs what it does; the tools only their warnings.
    // `RUST_LOG` wins over both.
    let (format, default) = match &cli.command {
        Command::Run(args) => (args.logging_format, args.log_filter()),
        _ => (LogFormat::Text, "warn"),
    };
    logging::init(format, default);
    match cli.command {
        Command::Run(args) => run::run(&args),
        Command::Check(args) => check::check(&args),
        Command::Plan(args) => plan::plan(&args),
        #[cfg(feature = "demo")]
        Command::Demo(args) => demo::demo(&args),
        Command::Policy(PolicyCommand::Test(args)) => policy::test(&args),
        Command::Policy(PolicyCommand::Eval(args)) => policy::eval(&args),
        Command::Policy(PolicyCommand::Inspect(args)) => policy::inspect(&args),
        Command::Policy(PolicyCommand::New(args)) => policy::new(&args),
        Command::Policy(PolicyCommand::Wit(args)) => policy::wit(&args),
        Command::Policy(PolicyCommand::Configmap(args)) => policy::configmap(&args),
        Command::Policy(PolicyCommand::Push(args)) => policy::push::push(&args),
    }
}
