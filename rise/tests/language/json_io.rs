//! JSON inputs and outputs: floats that are not numbers, precise messages for inputs
//! that do not fit their type, `--nat` sizes, and where two results differ.

use crate::{load, run};
use elevate_rise::io::{self, bind_nats, first_difference, NatBindingError};
use elevate_rise::{ErrorKind, Value};
use serde_json::json;

#[test]
fn nan_and_infinities_print_as_strings_a_reader_can_tell_apart() {
    let source =
        "def f(x: f32, y: f64) = ((x / 0.0, (0.0 - x) / 0.0), (y / 0.0f64, 0.0f64 / 0.0f64))";
    assert_eq!(
        run(source, "[1, 1]"),
        r#"[["Infinity","-Infinity"],["Infinity","NaN"]]"#
    );
    // The streamed form is the same text.
    let program = load(source);
    let value = program.eval_json(&[json!(1), json!(1)]).unwrap();
    let mut out = Vec::new();
    io::write_json(&value, &mut out).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        value.to_json().unwrap().to_string()
    );
}

#[test]
fn nan_and_infinities_are_accepted_as_inputs() {
    let source = "def f(x: 3.f32, y: f64) = (x |> map(fun(v => v * 2.0)), y)";
    assert_eq!(
        run(source, r#"[["NaN", "Infinity", "-Infinity"], "-Infinity"]"#),
        r#"[["NaN","Infinity","-Infinity"],"-Infinity"]"#
    );
}

/// The message of the input error of `source` on `inputs`.
fn input_error(source: &str, inputs: &str) -> String {
    let program = load(source);
    let inputs: Vec<serde_json::Value> = serde_json::from_str(inputs).unwrap();
    let e = program.eval_json(&inputs).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Input, "{e}");
    e.message
}

#[test]
fn inputs_that_do_not_fit_their_type_say_why() {
    let cases = [
        (
            "def f(x: i32) = x",
            "[3000000000]",
            "parameter `x`: 3000000000 is out of range for i32",
        ),
        (
            "def f(x: i32) = x",
            "[1.5]",
            "parameter `x`: 1.5 is not an integer (expected i32)",
        ),
        (
            "def f(x: i64) = x",
            "[9223372036854775808]",
            "parameter `x`: 9223372036854775808 is out of range for i64",
        ),
        (
            "def f(x: i64) = x",
            "[1e30]",
            "parameter `x`: 1e+30 is out of range for i64",
        ),
        (
            "def f(x: i64) = x",
            "[-0.25]",
            "parameter `x`: -0.25 is not an integer (expected i64)",
        ),
        (
            "def f(x: bool) = x",
            "[1]",
            "parameter `x`: expected bool (true or false), found 1",
        ),
        (
            "def f(x: f32) = x",
            "[1e39]",
            "parameter `x`: 1e+39 is out of range for f32",
        ),
        (
            "def f(x: f32) = x",
            r#"["nan"]"#,
            r#"expected f32: a number or "NaN", "Infinity", "-Infinity", found the string "nan""#,
        ),
        (
            "def f(x: f64) = x",
            "[true]",
            "parameter `x`: expected f64, found a boolean",
        ),
        (
            "def f(x: 2.3.i32) = x",
            "[[[1, 2, 3], [4, 5]]]",
            "parameter `x` at [1]: expected 3 elements (3.i32), found 2",
        ),
        (
            "def f(x: 2.3.i32) = x",
            "[[[1, 2, 3], [4, 5, 6.5]]]",
            "parameter `x` at [1][2]: 6.5 is not an integer (expected i32)",
        ),
        (
            "def f(p: (i32, bool)) = p",
            "[[1, 2]]",
            "parameter `p` at [1]: expected bool (true or false), found 2",
        ),
        (
            "def f(i: idx[4]) = i",
            "[4]",
            "parameter `i`: expected an index below 4 (idx[4]), found 4",
        ),
    ];
    for (source, inputs, expected) in cases {
        let message = input_error(source, inputs);
        assert!(
            message.contains(expected),
            "{source} on {inputs}:\n  {message}\n  expected {expected}"
        );
    }
    // Integers written as floats are integers.
    assert_eq!(run("def f(x: i32) = x + 1", "[2.0]"), "3");
}

#[test]
fn nat_sizes_must_name_parameters_once() {
    let program = load("def f(x: n.f32, y: m.f32) = (x, y)");
    let signature = program.signature();
    let env = bind_nats(&signature, &[("n".into(), 4)], None).unwrap();
    assert_eq!(env.len(), 1);
    let env = bind_nats(&signature, &[("n".into(), 4)], Some(16)).unwrap();
    assert_eq!(
        env.values()
            .copied()
            .collect::<std::collections::BTreeSet<_>>(),
        [4, 16].into()
    );
    let e = bind_nats(&signature, &[("q".into(), 4)], None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "--nat q=...: the program has no nat parameter `q` (it has `n`, `m`)"
    );
    let e = bind_nats(&signature, &[("n".into(), 4), ("n".into(), 5)], None).unwrap_err();
    assert_eq!(
        e,
        NatBindingError::Duplicate {
            name: "n".into(),
            first: 4,
            second: 5
        }
    );
    assert_eq!(e.to_string(), "--nat n: given twice (4, then 5)");
    let e = bind_nats(&signature, &[("m".into(), -1)], None).unwrap_err();
    assert!(
        matches!(e, NatBindingError::Negative { value: -1, .. }),
        "{e}"
    );
    let scalar = load("def f(x: f32) = x");
    let e = bind_nats(&scalar.signature(), &[("n".into(), 4)], None).unwrap_err();
    assert!(e.to_string().ends_with("(it has none)"), "{e}");
}

#[test]
fn the_first_difference_names_its_index_and_both_values() {
    let expected = json!([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]);
    let found = json!([[1.0, 2.0], [3.0, 4.5], [5.0, 7.0]]);
    let d = first_difference(&expected, &found).unwrap();
    assert_eq!(d.path, vec![1, 1]);
    assert_eq!(d.path_text(), "[1][1]");
    assert_eq!(
        (d.expected.clone(), d.found.clone()),
        (json!(4.0), json!(4.5))
    );
    assert_eq!(d.to_string(), "at [1][1]: expected 4.0, found 4.5");
    // Within the tolerance of approx_eq there is no difference.
    let close = json!([[1.0, 2.0], [3.0, 4.00001], [5.0, 6.0]]);
    assert!(first_difference(&expected, &close).is_none());
    assert!(io::approx_eq(&expected, &close));
    let d = first_difference(&json!([1, 2]), &json!([1, 2, 3])).unwrap();
    assert_eq!(
        d.to_string(),
        "at the top: expected an array of 2 elements, found an array of 3 elements"
    );
    let d = first_difference(&json!([true, "NaN"]), &json!([true, 0.0])).unwrap();
    assert_eq!(d.to_string(), "at [1]: expected \"NaN\", found 0.0");
}

#[test]
fn streamed_output_is_the_json_form() {
    let value = Value::pair(
        Value::array(vec![Value::I32(1), Value::I32(-2)]),
        Value::pair(
            Value::Bool(true),
            Value::Vector(vec![Value::F64(0.1), Value::F64(2.0)].into()),
        ),
    );
    let mut out = Vec::new();
    io::write_json(&value, &mut out).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "[[1,-2],[true,[0.1,2.0]]]");
    let identity = load("def f = fun(x: f32 => x)");
    let function =
        elevate_rise::evaluate(&identity.entry().term, &Default::default(), &[]).unwrap();
    let e = io::write_json(&function, &mut Vec::new()).unwrap_err();
    assert_eq!(e.to_string(), "a function has no JSON form");
}
