//! Programs nested 20,000 levels deep and pipes 50,000 stages long: parsed, typed,
//! printed and evaluated without overflowing the stack.

use crate::run;
use elevate_rise::{print_definition, Program};

#[test]
fn deeply_nested_expressions() {
    let depth = 20_000;
    let body = format!("{}x{}", "(x + ".repeat(depth), ")".repeat(depth));
    let source = format!("def f(x: i32) = {body}");
    let program = Program::load(&source, None).unwrap();
    let printed = print_definition("f", &program.entry().term);
    assert!(Program::load(&printed, None).is_ok());
    assert_eq!(run(&source, "[1]"), (depth + 1).to_string());
}

#[test]
fn deeply_nested_lambdas_and_lets() {
    let depth = 20_000;
    let mut source = String::from("def f(x: i32) = ");
    for i in 0..depth {
        source.push_str(&format!("let y{i} = x in "));
    }
    source.push('x');
    assert_eq!(run(&source, "[7]"), "7");
    let mut negations = String::from("def g(x: f32) = ");
    negations.push_str(&"-(".repeat(depth));
    negations.push('x');
    negations.push_str(&")".repeat(depth));
    assert_eq!(run(&negations, "[2.5]"), "2.5");
}

#[test]
fn long_pipes() {
    let stages = 50_000;
    let mut source = String::from("def f(xs: n.f32) = xs");
    for _ in 0..stages {
        source.push_str(" |> map(fun(v => v + 1.0))");
    }
    let program = Program::load(&source, None).unwrap();
    let printed = print_definition("f", &program.entry().term);
    assert!(Program::load(&printed, None).is_ok());
    assert_eq!(run(&source, "[[0, 1]]"), "[50000.0,50001.0]");
}
