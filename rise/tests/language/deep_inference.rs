//! Type inference of programs whose types grow with their depth: `map` applied to a
//! `map` applied to ... 100,000 times, each level's type an array of the level below.
//! Each level binds a type variable to the type of the level below, so an occurs
//! check that walked that type at every level would take quadratic time (most of an
//! hour at this depth, in a release build); inference takes linear time, and so do
//! its errors.

use elevate_rise::{print_definition, Program};

const DEPTH: usize = 100_000;

/// `map(map(...map(inner)...))`, `DEPTH` levels of `map`.
fn nested_maps(inner: &str) -> String {
    format!("{}{inner}{}", "map(".repeat(DEPTH), ")".repeat(DEPTH))
}

/// `n.n. ... n.f32`, an array of `DEPTH` dimensions.
fn dims() -> String {
    format!("{}f32", "n.".repeat(DEPTH))
}

#[test]
fn nested_maps_are_typed_printed_and_parsed_back() {
    let source = format!("def f(x: {}) = {}(x)", dims(), nested_maps("fun(v => v)"));
    let program = Program::load(&source, None).unwrap_or_else(|e| panic!("{e}"));
    let entry = program.entry();
    assert_eq!(entry.ty.to_string(), format!("{} -> {}", dims(), dims()));
    // The printed program is the same program, with the same type.
    let printed = print_definition(&entry.name, &entry.term);
    let again = Program::load(&printed, None).unwrap_or_else(|e| panic!("reparsed: {e}"));
    assert_eq!(again.entry().term.ty(), entry.term.ty());
    assert!(again
        .entry()
        .term
        .erase_types()
        .alpha_eq(&entry.term.erase_types()));
}

#[test]
fn nested_maps_on_too_few_dimensions_are_an_error_at_the_argument() {
    // `x` has one dimension where the maps take 100,000.
    let source = format!("def f(x: n.f32) = {}(x)", nested_maps("fun(v => v)"));
    let e = Program::load(&source, None).unwrap_err();
    assert!(e.message.starts_with("wrong argument"), "{}", e.message);
    let column = source.rfind("(x)").expect("the argument") + 2;
    assert_eq!(e.line_col(&source), Some((1, column)));
}

#[test]
fn the_occurs_check_still_finds_infinite_types() {
    let e = Program::load("def f = fun(x => x(x))", None).unwrap_err();
    assert!(e.message.starts_with("wrong function"), "{}", e.message);
    // `x`, the maps' argument, has the type of the innermost `v` under 100,000
    // dimensions, and their result the type of `x` under as many; `[y, x]` gives `y`
    // the type of `x`, so applying `fun(y => ...)` to the result would make the type
    // of `v` contain itself: found at the end of a chain 100,000 levels long.
    let source = format!(
        "def f = fun(x => x |> {} |> fun(y => [y, x]))",
        nested_maps("fun(v => x)")
    );
    let e = Program::load(&source, None).unwrap_err();
    assert!(e.message.starts_with("wrong argument"), "{}", e.message);
}
