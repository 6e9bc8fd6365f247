//! Exact type-level division: splitting and joining symbolic sizes, and
//! fractional sizes printed and parsed back.

use elevate_rise::{parse_nat, parse_type, print_definition, ErrorKind, Program};

use crate::{load, run};

/// The type of the entry point of `source`, as text.
fn type_of(source: &str) -> String {
    load(source).entry().ty.to_string()
}

#[test]
fn split_divides_and_join_multiplies_back() {
    assert_eq!(
        type_of("def f(x: n.f32) = split(4, x)"),
        "n.f32 -> (n/4).4.f32"
    );
    assert_eq!(
        type_of("def f(x: n.f32) = x |> split(4) |> map(split(2))"),
        "n.f32 -> (n/4).2.2.f32"
    );
    assert_eq!(
        type_of("def f(x: n.f32) = x |> split(4) |> join"),
        "n.f32 -> n.f32"
    );
    // `(n/4)*4` is `n`, so the joined array zips with the original one.
    assert_eq!(
        type_of("def f(x: n.f32) = zip(x |> split(4) |> join, x)"),
        "n.f32 -> n.(f32, f32)"
    );
    assert_eq!(
        type_of("def f(x: (3*n).f32) = x |> split(2) |> split(3)"),
        "(3*n).f32 -> (n/2).3.2.f32"
    );
}

#[test]
fn split_of_a_constant_length_needs_a_divisor() {
    assert_eq!(
        type_of("def f(x: 12.f32) = split(4, x)"),
        "12.f32 -> 3.4.f32"
    );
    let e = Program::load("def f(x: 10.f32) = split(4, x)", None).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Nat);
    assert!(
        e.message.contains("10 is not divisible by 4"),
        "{}",
        e.message
    );
}

#[test]
fn fractional_sizes_print_and_parse_back() {
    for text in [
        "n/4",
        "3*n/4",
        "n/2 + 1/2",
        "(n / m)/2",
        "0 - 7/2",
        "n/2 % m",
    ] {
        let nat = parse_nat(text).unwrap();
        assert_eq!(nat.to_string(), text);
        assert_eq!(parse_nat(&nat.to_string()).unwrap(), nat);
    }
    for text in ["(n/4).4.f32", "(3*n/4).f32 -> (n/4).3.f32", "vec[f32, n/2]"] {
        let ty = parse_type(text).unwrap();
        assert_eq!(ty.to_string(), text);
        assert_eq!(parse_type(&ty.to_string()).unwrap(), ty);
    }
    assert_eq!(
        parse_type("((n*4)/8).f32").unwrap(),
        parse_type("(n/2).f32").unwrap()
    );
}

#[test]
fn printed_programs_with_fractional_sizes_load_again() {
    let source = "def f(x: (2*n).f32) = x |> split(4) |> map(fun(c => c |> split(2)))";
    let program = load(source);
    let printed = print_definition("f", &program.entry().term);
    // The printed definition names its nat parameter: `def f<n>(...)`.
    assert_eq!(
        load(&printed).entry().ty.to_string(),
        "(n: nat) -> (2*n).f32 -> (n/2).2.2.f32",
        "{printed}"
    );
    let again = load(&print_definition("f", &load(&printed).entry().term));
    assert_eq!(again.entry().ty, load(&printed).entry().ty);
}

#[test]
fn split_and_join_evaluate_on_divisible_lengths() {
    let source = "def f(x: n.f32) = x |> split(4) |> map(reduce(add, 0.0))";
    assert_eq!(run(source, "[[1, 2, 3, 4, 5, 6, 7, 8]]"), "[10.0,26.0]");
    let program = load(source);
    let inputs = [serde_json::json!([1, 2, 3, 4, 5, 6])];
    let e = program.eval_json(&inputs).unwrap_err();
    assert!(
        e.message.contains("split(4) of 6 elements"),
        "{}",
        e.message
    );
}

#[test]
fn a_generic_function_used_at_a_size_its_types_cannot_take_is_a_nat_error() {
    let source = "def halves(x: n.f32) = x |> split(2)\ndef f(y: 3.f32) = halves(y)";
    let e = elevate_rise::Program::load(source, None).unwrap_err();
    assert_eq!(e.kind, elevate_rise::ErrorKind::Nat);
    assert!(e.message.contains("the size 3/2"), "{}", e.message);
    // Known limit: a division that does not show in the function's type (`split(2)`
    // then `join`) is not checked at the call, only when the program runs.
    let hidden = "def same(x: n.f32) = x |> split(2) |> join\ndef f(y: 3.f32) = same(y)";
    assert!(elevate_rise::Program::load(hidden, None).is_ok());
}
