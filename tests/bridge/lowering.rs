//! Payloads through MLIR: bad modules are verification errors, and `mapPar`, vectors
//! and reductions compute what the interpreter computes.

use super::{lowered, sizes};
use elevate::bridge::jit;

#[test]
fn bad_modules_are_verification_errors() {
    let e = jit::lower("module { func.func @f() { return %x } }").unwrap_err();
    assert!(e.to_string().starts_with("mlir verification error"), "{e}");
}

#[test]
fn map_par_computes_what_the_interpreter_computes() {
    let source = "def f(x: 8.4.f32) = x |> mapPar(fun(r => r |> reduceSeq(add, 0.0)))";
    super::assert_same(&lowered(source, &sizes(&[]), "id"), "mapPar");
}

#[test]
fn vectors_loaded_at_once_or_gathered_compute_the_same() {
    for source in [
        "def f(x: 64.f32) = x |> asVector(8) |> mapSeq(fun(v => v * vectorFromScalar(2.0))) |> asScalar",
        "def f(x: 8.8.f32) = x |> transpose |> mapSeq(fun(c => c |> asVector(8) |> mapSeq(fun(v => v + v)) |> asScalar))",
    ] {
        super::assert_same(&lowered(source, &sizes(&[]), "id"), source);
    }
}

/// How far `found` is from `expected` in units of the last place of `expected`.
fn ulps(found: f32, expected: f32) -> f32 {
    let ulp = (f32::from_bits(expected.to_bits() + 1) - expected).abs();
    (found - expected).abs() / ulp
}

#[test]
fn exp_of_f32_is_within_two_ulp_of_the_c_library_on_scalars_and_vectors() {
    // `exp` is arithmetic of our own (LLVM would call `expf` once per lane): every
    // input from below the smallest denormal result to above the largest finite one,
    // on scalars (`id`) and on vectors of 8 (`elementwise`), and what `expf` does with
    // infinities and NaN.
    let n = 8192usize;
    let mut xs: Vec<f32> = (0..n - 4)
        .map(|i| -110.0 + 200.0 * i as f32 / (n - 4) as f32)
        .collect();
    xs.extend([f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 0.0]);
    let source = format!("def f(x: {n}.f32) : {n}.f32 = x |> map(fun(v => exp(v)))");
    let json = |x: f32| match x {
        x if x.is_nan() => serde_json::json!("NaN"),
        f32::INFINITY => serde_json::json!("Infinity"),
        f32::NEG_INFINITY => serde_json::json!("-Infinity"),
        x => serde_json::json!(x),
    };
    let input = serde_json::Value::Array(xs.iter().map(|x| json(*x)).collect());
    for strategy in ["id", "elementwise(8)"] {
        let term = lowered(&source, &sizes(&[]), strategy);
        let p = super::payload("f", &term);
        assert!(!p.mlir().contains("math.exp"), "{strategy}: {}", p.mlir());
        let compiled = elevate::bridge::jit::compile_payload(&p, &super::limits()).unwrap();
        let (_, inputs) = elevate::rise::io::bind_inputs(
            &elevate::rise::io::signature(&term),
            std::slice::from_ref(&input),
        )
        .unwrap();
        let found = compiled.run(&inputs).unwrap().to_json().unwrap();
        let found = found.as_array().unwrap();
        for (x, y_json) in xs.iter().zip(found) {
            let (expected, y) = (x.exp(), y_json.as_f64().map(|v| v as f32));
            match y {
                Some(y) if expected.is_finite() => assert!(
                    ulps(y, expected) <= 2.0,
                    "{strategy}: exp({x}) = {y}, expected {expected}"
                ),
                _ => assert_eq!(*y_json, json(expected), "{strategy}: exp({x})"),
            }
        }
    }
}
