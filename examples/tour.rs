//! A short tour of the engine on its small arithmetic IR.
//!
//! `cargo run --example tour`

use elevate::core::arith::{self, Term};
use elevate::core::{Budget, Context, Cursor, Path};
use elevate::strategies::*;
use std::time::Duration;

fn main() {
    let program: Term = "-(-(a * 1)) + (b + 0) * (c + 0)".parse().unwrap();
    println!("program:  {program}");

    // Strategies are values: compose them, print them, apply them.
    let simplify = normalize(arith::neg_neg() | arith::mul_one() | arith::add_zero());
    println!("strategy: {simplify}");
    let mut cx = Context::new(Budget::unlimited().steps(1_000)).with_trace();
    let result = simplify.apply(&program, &mut cx).unwrap();
    println!("result:   {result}");
    for entry in cx.trace().unwrap() {
        println!("  {entry}");
    }
    let stats = cx.stats();
    println!(
        "steps: {}, strategy applications: {}",
        stats.steps, stats.applications
    );

    // Programs are immutable: the input is untouched, and every version stays valid.
    println!("input still: {program}");

    // A failure names the strategy that failed and where.
    let failure = all(arith::add_zero()).run(&program).unwrap_err();
    println!("all(addZero) fails: {failure}");

    // Locations: a path, a pre-order position, the n-th match.
    let at = at_path(Path::from(vec![1, 1]), arith::add_zero());
    println!("{at}: {}", at.run(&program).unwrap());
    let second = skip(1, arith::add_zero());
    println!("{second}: {}", second.run(&program).unwrap());

    // A cursor makes several local edits and rebuilds the path to the root once.
    let mut cursor = Cursor::new(program.clone());
    cursor.goto(&Path::from(vec![1, 0])).unwrap();
    cursor
        .apply(&arith::add_zero(), &mut Context::default())
        .unwrap();
    cursor.next_sibling();
    cursor
        .apply(&arith::add_zero(), &mut Context::default())
        .unwrap();
    println!("cursor edits: {}", cursor.into_root());

    // Every run has a budget; running out is a failure that says so, never a hang.
    let mut cx = Context::new(Budget::unlimited().time(Duration::from_millis(20)));
    let failure = repeat(id()).apply(&program, &mut cx).unwrap_err();
    println!("repeat(id): {failure}");
}
