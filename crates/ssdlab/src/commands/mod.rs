//! One module per subcommand.

mod age;
mod bench;
mod calibrate;
mod compare;
mod compare_requests;
mod config;
mod figure;
mod phys;
mod plot;
mod presets;
mod pts;
mod replay;
mod run;
mod serve;
mod sweep;
mod sweep_plot;

use anyhow::Result;

use crate::cli::{Cli, Command};

/// Runs the parsed command.
pub fn dispatch(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run(a) => run::run(*a),
        Command::Age(a) => age::run(*a),
        Command::Replay(a) => replay::run(*a),
        Command::Phys(a) => phys::run(a),
        Command::Presets { name } => presets::run(name.as_deref()),
        Command::Config { device, set } => config::run(device.as_deref(), &set),
        Command::Bench(a) => bench::run(a),
        Command::Figure(a) => figure::run(a),
        Command::Plot(a) => plot::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Serve(a) => serve::run(*a),
        Command::Sweep(a) => sweep::run(*a),
        Command::Pts(a) => pts::run(*a),
        Command::Calibrate(a) => calibrate::run(*a),
        Command::SweepWorker(a) => sweep::worker(a),
    }
}

/// Writes `value` as pretty JSON to `path`.
fn write_json(path: &std::path::Path, value: &impl serde::Serialize) -> Result<()> {
    use anyhow::Context;
    let text = serde_json::to_string_pretty(value)?;
    std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
}
