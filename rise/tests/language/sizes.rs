//! Sizes are checked before memory is taken: a program or an input that would need
//! an array over the memory limit is an error that names the size and the limit,
//! located at the primitive that makes it, never an allocation abort.

use crate::load;
use elevate_rise::evaluate_with;
use elevate_rise::limits::Limits;
use elevate_rise::value::{Array, EvalErrorKind, View};
use elevate_rise::view::Reshape;
use elevate_rise::{io, Error, ErrorKind, NatEnv, Program, Value};

const TWO_TO_40: &str = "1099511627776";

/// Evaluates the entry point of `source` on `inputs` (JSON) within `limits`.
fn eval_within(source: &str, inputs: &str, limits: Limits) -> Result<Value, Error> {
    let program = load(source);
    let inputs: Vec<serde_json::Value> = serde_json::from_str(inputs).unwrap();
    let (nats, values) = io::bind_inputs(&program.signature(), &inputs)?;
    evaluate_with(&program.entry().term, &nats, &values, &limits)
}

/// Asserts that evaluating `source` fails at the text `at` with a message that
/// names the primitive, the size and the limit.
fn assert_too_large(source: &str, inputs: &str, limits: Limits, what: &str, at: &str) {
    let e = eval_within(source, inputs, limits).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Eval, "{e}");
    assert!(e.message.contains(what), "{what}: {}", e.message);
    assert!(e.message.contains("over the limit of"), "{}", e.message);
    let span = e.span.expect("a location");
    assert!(
        source[span.start as usize..].starts_with(at),
        "located at {:?}, expected {at:?}",
        &source[span.start as usize..]
    );
}

#[test]
fn huge_results_are_refused_where_they_are_made() {
    let limits = Limits::default();
    let cases = [
        (
            format!("def f = generate(fun(i => 1.0)) : {TWO_TO_40}.f32"),
            "[]",
            format!("the result of `generate` has {TWO_TO_40} elements"),
            "generate",
        ),
        (
            format!("def f(x: 4.f32) = padCst({TWO_TO_40}, 0, 0.0, x)"),
            "[[1, 2, 3, 4]]",
            "the result of `padCst` has 1099511627780 elements".into(),
            "padCst",
        ),
        (
            format!("def f(x: 4.f32) = padClamp(1, {TWO_TO_40}, x)"),
            "[[1, 2, 3, 4]]",
            "the result of `padClamp` has 1099511627781 elements".into(),
            "padClamp",
        ),
        (
            format!("def f(x: f32) = vectorFromScalar(x) : vec[f32, {TWO_TO_40}]"),
            "[1]",
            format!("the result of `vectorFromScalar` has {TWO_TO_40} elements"),
            "vectorFromScalar",
        ),
    ];
    for (source, inputs, what, at) in &cases {
        assert_too_large(source, inputs, limits, what, at);
    }
}

#[test]
fn nested_results_count_in_full() {
    // Each row (1024 elements) fits in 1 MiB; the 1024 rows together do not.
    let limits = Limits::with_max_bytes(1 << 20);
    let source = "def f(x: 1024.f32) = x |> map(fun(v => generate(fun(i => v)) : 1024.f32))";
    let inputs = format!("[[{}]]", vec!["1"; 1024].join(","));
    assert_too_large(
        source,
        &inputs,
        limits,
        "the result of `map` has 1048576 elements",
        "x |> map",
    );
    // Overlapping windows hold more than their source.
    let source = "def f(x: 4096.f32) = slide(2048, 1, x)";
    let inputs = format!("[[{}]]", vec!["1"; 4096].join(","));
    assert_too_large(
        source,
        &inputs,
        limits,
        "`slide` has 4196352 elements",
        "slide",
    );
    // Two views that fit, joined into one that does not.
    let source = "def f(x: 4.f32) = concat(padCst(30000, 0, 0.0, x), padClamp(30000, 0, x))";
    let what = "the result of `concat` has 60008 elements";
    assert_too_large(source, "[[1, 2, 3, 4]]", limits, what, "concat");
    // The same programs run where the limit allows them.
    let roomy = Limits::with_max_bytes(1 << 30);
    let value = eval_within(source, "[[1, 2, 3, 4]]", roomy).unwrap();
    assert_eq!(value.as_array().unwrap().len(), 60008);
}

#[test]
fn array_literals_and_scans_are_checked_too() {
    let limits = Limits::with_max_bytes(1 << 16);
    let source = "def f(x: 4096.f32) = [x, x]";
    let inputs = format!("[[{}]]", vec!["1"; 4096].join(","));
    assert_too_large(
        source,
        &inputs,
        limits,
        "the array literal has 8192 elements",
        "[x, x]",
    );
    let source = "def f(x: 4096.f32) = scanSeq(fun(v, acc => acc + v), 0.0, x)";
    assert_too_large(
        source,
        &inputs,
        limits,
        "the result of `scanSeq`",
        "scanSeq",
    );
}

#[test]
fn random_inputs_are_checked_before_they_are_made() {
    let program = load("def f(x: n.f32, y: n.f32) = zip(x, y)");
    let signature = program.signature();
    let mut nats = NatEnv::default();
    nats.insert(signature.nats[0].clone(), 1 << 40);
    let e = io::random_inputs(&signature, &nats, 1).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Input);
    assert!(
        e.message.contains(
            "parameter `x` (n.f32) has 1099511627776 elements (24.0 TiB), over the limit"
        ),
        "{}",
        e.message
    );
    // Each input fits, both together do not.
    nats.insert(signature.nats[0].clone(), 30_000);
    let limits = Limits::with_max_bytes(1 << 20);
    let e = io::random_inputs_with(&signature, &nats, 1, &limits).unwrap_err();
    assert!(
        e.message.contains("the input set has 60000 elements"),
        "{}",
        e.message
    );
    nats.insert(signature.nats[0].clone(), 1000);
    assert_eq!(
        io::random_inputs_with(&signature, &nats, 1, &limits)
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn empty_rows_count_as_elements() {
    // No scalar at all, but three billion empty rows to make.
    let program = load("def f(x: 3.1000000000.0.f32) = x");
    let e = io::random_inputs(&program.signature(), &NatEnv::default(), 1).unwrap_err();
    assert!(
        e.message
            .contains("parameter `x` (3.1000000000.0.f32) has 3000000000 elements"),
        "{}",
        e.message
    );
    let source = "def f(x: 0.f32) = generate(fun(i => x)) : 4000000000.0.f32";
    assert_too_large(
        source,
        "[[]]",
        Limits::default(),
        "`generate` has 4000000000 elements",
        "generate",
    );
}

#[test]
fn sizes_beyond_any_machine_word_are_refused() {
    // A size whose square overflows i64: the nat cannot be evaluated at all.
    let program = load("def f(x: n.n.f32) = x");
    let signature = program.signature();
    let mut nats = NatEnv::default();
    nats.insert(signature.nats[0].clone(), i64::MAX);
    assert!(io::random_inputs(&signature, &nats, 1).is_err());
    // Views whose length overflows are never made.
    let row = Array::dense(vec![Value::F32(1.0)]);
    let rows = Array::dense(vec![Value::Array(row.clone()), Value::Array(row)]);
    let e = Array::new(View::Reshaped {
        reshape: Reshape::Join {
            rows: 2,
            columns: i64::MAX,
        },
        source: rows,
        with: None,
    })
    .err()
    .expect("an overflow");
    assert!(matches!(e.kind(), EvalErrorKind::LengthOverflow(_)), "{e}");
    let source = Array::dense(vec![Value::F32(1.0)]);
    let e = Array::new(View::Reshaped {
        reshape: Reshape::PadClamp {
            left: i64::MAX,
            right: 1,
            len: 1,
        },
        source,
        with: None,
    })
    .err()
    .expect("an overflow");
    assert_eq!(e.to_string(), "the length of the padded array overflows");
}

#[test]
fn json_forms_of_huge_values_are_refused() {
    let source = Array::dense(vec![Value::F32(1.0)]);
    let padded = Array::new(View::Reshaped {
        reshape: Reshape::PadConstant {
            left: 1 << 40,
            right: 0,
            len: 1,
        },
        source,
        with: Some(Value::F32(0.0)),
    })
    .unwrap();
    let e = Value::Array(padded).to_json().unwrap_err();
    assert!(
        e.to_string()
            .contains("the JSON form of the value has 1099511627777 elements"),
        "{e}"
    );
}

#[test]
fn the_default_evaluation_still_runs_ordinary_programs() {
    let program = Program::load("def f(x: n.f32) = x |> map(fun(v => v * 2.0))", None).unwrap();
    let inputs = vec![serde_json::json!([1, 2, 3])];
    let value = program.eval_json(&inputs).unwrap();
    assert_eq!(value.to_json().unwrap(), serde_json::json!([2.0, 4.0, 6.0]));
}
