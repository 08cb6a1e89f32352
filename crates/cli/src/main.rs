//! The `toolbelt` binary: argument parsing, terminal I/O and exit codes. Each command in
//! [`commands`] (`call`, `run`, `mcp`, `tools`, `policy`, `config`, `trust`, `untrust`) builds its
//! session with `toolbelt-session` and returns an exit status or a [`error::CliError`].
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod approver;
mod cli;
mod commands;
mod error;
mod output;
mod progress;
mod questions;
mod session;
mod terminal;

fn main() {
    // Before any thread starts: nothing of toolbelt's secrets readable through /proc.
    toolbelt_core::process::harden_process();
    // Large blocks go back to the system when freed (see the module's docs).
    toolbelt_core::process::allocator::bound_allocator();
    toolbelt_core::timings::start();
    // HTTPS through ring, for every client any command builds.
    toolbelt_core::tls::ready();
    let cli = match cli::parse(std::env::args_os().collect()) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { commands::EXIT_USAGE } else { commands::EXIT_OK };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    toolbelt_core::timings::mark("arguments");
    init_logging();
    toolbelt_core::timings::mark("logging");
    // The ACP agent runs several sessions, and the editor's file answers are waited for on
    // the threads that ask: two workers. Every other command needs one thread.
    let mut builder = if matches!(cli.command, cli::Command::Acp(_)) {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(2);
        b
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    builder.enable_all();
    // Only the stdio MCP server polls for a client's next request before the runtime sleeps.
    if matches!(&cli.command, cli::Command::Mcp(a) if a.command.is_none() && a.http.is_none()) {
        builder.on_thread_park(toolbelt_mcp::server::stdio::before_park);
    }
    let runtime = match builder.build() {
        Ok(r) => r,
        Err(e) => {
            output::err_line(&format!("toolbelt: cannot start the async runtime: {e}"));
            std::process::exit(1);
        }
    };
    toolbelt_core::timings::mark("async runtime");
    let result = runtime.block_on(async {
        match cli.command {
            cli::Command::Call(args) => commands::call::run(args).await,
            cli::Command::Run(args) => commands::run::run(args).await,
            cli::Command::Tools { command } => commands::tools::run(command).await,
            cli::Command::Policy { command } => commands::policy::run(command).await,
            cli::Command::Config { command } => commands::config::run(command),
            cli::Command::Mcp(args) => commands::mcp::run(args).await,
            cli::Command::Acp(args) => commands::acp::run(args).await,
            cli::Command::Trust { dir } => commands::trust::run(dir, true),
            cli::Command::Untrust { dir } => commands::trust::run(dir, false),
            cli::Command::Sandbox(args) => commands::sandbox::run(args),
            cli::Command::Completions { shell } => commands::help::completions(shell),
            cli::Command::Man => commands::help::man(),
        }
    });
    let code = match result {
        Ok(code) => code,
        Err(e) => {
            output::err_line(&format!("toolbelt: {}", e.message));
            e.code
        }
    };
    // Do not wait for blocking workers a cancelled or timed-out tool may have left behind.
    runtime.shutdown_background();
    toolbelt_core::timings::mark("runtime shutdown");
    if let Some(report) = toolbelt_core::timings::report() {
        output::err_line(report.trim_end());
    }
    std::process::exit(code);
}

/// Logs go to stderr, filtered by `TOOLBELT_LOG` (e.g. `debug`); warnings by default.
fn init_logging() {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(false)
        // A log line that cannot be written (stderr closed by the client) is dropped; the
        // default reports it with eprintln!, which panics on a broken pipe.
        .log_internal_errors(false);
    // Without TOOLBELT_LOG (or with one that does not parse), warnings, except rmcp's service
    // loop: it logs one line for each message it could not pass on, so a peer that floods
    // (or stops reading) filled stderr with them (issue 35); toolbelt reports what failed.
    // TOOLBELT_LOG holds `level` or `target=level` directives, comma-separated: a plain target
    // filter (`EnvFilter`'s span and field filters cost its set-up at every start, and its
    // `matchers` dependency switched on the full-DFA builder for every regular expression in
    // the process).
    let asked = std::env::var("TOOLBELT_LOG").ok();
    let filter = asked.and_then(|v| v.parse::<tracing_subscriber::filter::Targets>().ok());
    let filter = filter.unwrap_or_else(|| {
        tracing_subscriber::filter::Targets::new()
            .with_default(tracing::Level::WARN)
            .with_target("rmcp::service", tracing_subscriber::filter::LevelFilter::OFF)
            // Its transports log each failure they return too ("worker quit with fatal"),
            // which toolbelt then reports in its own words.
            .with_target("rmcp::transport", tracing_subscriber::filter::LevelFilter::OFF)
    });
    let _ = tracing_subscriber::registry().with(fmt.with_filter(filter)).try_init();
}
