//! `vcd-ccm check`: the preflight checks of `run`'s configuration, read
//! only, printed as a table (or JSON); exit status 1 when one fails.

mod report;

use std::io::Write;
use std::process::ExitCode;

use crate::cli::{CheckArgs, Output};
use crate::preflight;

/// Runs every check and prints the report.
pub fn check(args: &CheckArgs) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("vcd-ccm: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let run = &args.run;
    let found = runtime.block_on(preflight::check_files(
        &run.cloud_config,
        &run.credentials_dir,
    ));
    let text = match args.output {
        Output::Text => report::table(&found),
        Output::Json => format!("{:#}\n", report::json(&found)),
    };
    // A reader that went away (`| head`) is not worth a panic.
    let printed = std::io::stdout().write_all(text.as_bytes());
    if found.passed() && printed.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
