//! Integer semantics: `add`, `sub`, `mul` wrap (two's complement, as the compiled
//! code does); division and remainder by zero, and `MIN / -1`, are evaluation errors
//! located at the operation; `MIN % -1` is 0, as in compiled code.

use crate::{load, run};
use elevate_rise::ErrorKind;

/// The error of evaluating `source` on `inputs`: its message and the source text
/// from its location on.
fn failure(source: &str, inputs: &str) -> (String, String) {
    let program = load(source);
    let inputs: Vec<serde_json::Value> = serde_json::from_str(inputs).unwrap();
    let e = program.eval_json(&inputs).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Eval, "{e}");
    let span = e.span.unwrap_or_else(|| panic!("no location: {e}"));
    (e.message, source[span.start as usize..].to_string())
}

#[test]
fn division_by_zero_is_an_error_at_the_division() {
    let source = "def f(x: i32, y: i32) = x + 1 + x / y";
    let (message, at) = failure(source, "[7, 0]");
    assert_eq!(message, "division by zero: 7 / 0 in i32");
    assert!(at.starts_with("x / y"), "{at}");
    let source = "def f(x: i64, y: i64) = (x, x % y)";
    let (message, at) = failure(source, "[7, 0]");
    assert_eq!(message, "remainder by zero: 7 % 0 in i64");
    assert!(at.starts_with("x % y"), "{at}");
}

#[test]
fn the_quotient_that_does_not_fit_is_an_error() {
    let cases = [
        ("def f(x: i32, y: i32) = x / y", "[-2147483648, -1]", "integer overflow: -2147483648 / -1 in i32 (the quotient 2147483648 does not fit)"),
        ("def f(x: i64, y: i64) = x / y", "[-9223372036854775808, -1]", "integer overflow: -9223372036854775808 / -1 in i64 (the quotient 9223372036854775808 does not fit)"),
    ];
    for (source, inputs, expected) in cases {
        let (message, at) = failure(source, inputs);
        assert!(
            message.starts_with(expected) || message.contains(expected),
            "{message}"
        );
        assert!(at.starts_with("x "), "{at}");
    }
    // The remainder of the same division is exact: 0.
    assert_eq!(
        run("def f(x: i32, y: i32) = x % y", "[-2147483648, -1]"),
        "0"
    );
    assert_eq!(
        run(
            "def f(x: i64, y: i64) = x % y",
            "[-9223372036854775808, -1]"
        ),
        "0"
    );
    // Next to the edge, division is exact.
    assert_eq!(
        run("def f(x: i32, y: i32) = (x / y, x % y)", "[-2147483648, 1]"),
        "[-2147483648,0]"
    );
    assert_eq!(
        run(
            "def f(x: i32, y: i32) = (x / y, x % y)",
            "[-2147483647, -1]"
        ),
        "[2147483647,0]"
    );
    assert_eq!(
        run("def f(x: i32, y: i32) = (x / y, x % y)", "[-7, 2]"),
        "[-3,-1]"
    );
}

#[test]
fn division_inside_functions_and_reductions_is_located_too() {
    let source = "def f(xs: n.i32) = xs |> map(fun(v => 10 / v))";
    let (message, at) = failure(source, "[[1, 2, 0, 4]]");
    assert_eq!(message, "division by zero: 10 / 0 in i32");
    assert!(at.starts_with("10 / v"), "{at}");
    let source = "def f(xs: n.i32) = xs |> reduce(div, 100)";
    let (message, at) = failure(source, "[[1, 0]]");
    assert_eq!(message, "division by zero: 100 / 0 in i32");
    assert!(at.starts_with("div"), "{at}");
}

#[test]
fn addition_subtraction_and_multiplication_wrap() {
    let source = "def f(x: i32) = (x + 1, (x * 2, (0 - x - 1 - 1, -(x + 1))))";
    assert_eq!(
        run(source, "[2147483647]"),
        "[-2147483648,[-2,[2147483647,-2147483648]]]"
    );
    let source = "def f(x: i64) = (x + 1i64, x * x)";
    assert_eq!(
        run(source, "[9223372036854775807]"),
        "[-9223372036854775808,1]"
    );
}

#[test]
fn float_division_by_zero_is_ieee() {
    let source = "def f(x: f32) = (x / 0.0, ((0.0 - x) / 0.0, 0.0 / 0.0))";
    assert_eq!(run(source, "[1]"), r#"["Infinity",["-Infinity","NaN"]]"#);
}
