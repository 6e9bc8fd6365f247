//! The `elevate` command line: a thin layer over the library (see `spec/cli.md`).

use clap::{Parser, Subcommand};
use elevate_rise::{Error, NatEnv, Program};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// A strategy-combinator rewriting engine for RISE.
#[derive(Parser)]
#[command(name = "elevate", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and infer types; print `NAME : TYPE` for every definition, the entry
    /// point last.
    Check {
        /// The RISE file.
        program: PathBuf,
        /// The entry point (default: the last definition).
        #[arg(long)]
        entry: Option<String>,
    },
    /// Run the reference interpreter; print the result as JSON.
    Eval {
        /// The RISE file.
        program: PathBuf,
        /// The entry point (default: the last definition).
        #[arg(long)]
        entry: Option<String>,
        /// JSON inputs, one file per parameter, in order.
        #[arg(long = "input", num_args = 1.., conflicts_with = "random")]
        inputs: Vec<PathBuf>,
        /// Reproducible pseudo-random inputs from this seed.
        #[arg(long)]
        random: Option<u64>,
        /// Sizes for random inputs, e.g. `--nat n=1024`.
        #[arg(long = "nat", value_parser = parse_nat_binding, requires = "random")]
        nats: Vec<(String, i64)>,
    },
}

fn parse_nat_binding(text: &str) -> Result<(String, i64), String> {
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=VALUE, found `{text}`"))?;
    let value = value
        .trim()
        .parse::<i64>()
        .map_err(|_| format!("expected a non-negative integer for `{name}`, found `{value}`"))?;
    if value < 0 {
        return Err(format!("`{name}` must not be negative"));
    }
    Ok((name.trim().to_string(), value))
}

/// A failure of a command: a message for standard error.
struct Failure(String);

fn read(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map_err(|e| Failure(format!("{}: cannot read: {e}", path.display())))
}

fn load(path: &Path, entry: Option<&str>) -> Result<(Program, String), Failure> {
    let source = read(path)?;
    let program = Program::load(&source, entry).map_err(|e| render(&e, path, &source))?;
    Ok((program, source))
}

fn render(e: &Error, path: &Path, source: &str) -> Failure {
    Failure(e.render(&path.display().to_string(), source))
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Check { program, entry } => {
            let (program, _) = load(&program, entry.as_deref())?;
            for line in program.summary() {
                println!("{line}");
            }
        }
        Command::Eval {
            program: path,
            entry,
            inputs,
            random,
            nats,
        } => {
            let (program, source) = load(&path, entry.as_deref())?;
            let value = match random {
                Some(seed) => {
                    let mut env = NatEnv::default();
                    for (name, value) in nats {
                        env.insert(
                            elevate_rise::nat::NatVar::Named(name.as_str().into()),
                            value,
                        );
                    }
                    program.eval_random(&env, seed)
                }
                None => {
                    let mut json = Vec::new();
                    for input in &inputs {
                        let text = read(input)?;
                        json.push(serde_json::from_str(&text).map_err(|e| {
                            Failure(format!(
                                "{}:{}:{}: input error: not JSON: {e}",
                                input.display(),
                                e.line(),
                                e.column()
                            ))
                        })?);
                    }
                    program.eval_json(&json)
                }
            }
            .map_err(|e| render(&e, &path, &source))?;
            let json = value
                .to_json()
                .map_err(|e| Failure(format!("{}: {e}", path.display())))?;
            println!("{json}");
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message)) => {
            eprintln!("{}", message.trim_end());
            ExitCode::from(1)
        }
    }
}
