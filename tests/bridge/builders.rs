//! The payload and its Transform script are operations that the JIT builds with
//! MLIR's builders: each module built is the module MLIR reads from their text (the
//! generic form), operation for operation.

use super::ops::{op, OPS};
use super::{built_payload as payload, long_body, lowered, sizes};
use elevate::bridge::jit;
use elevate::bridge::payload::Payload;

/// The payload's module after its script, built, and read from its text.
fn built_and_parsed(p: &Payload) -> (String, String) {
    let parsed = p
        .clone()
        .with_mlir(p.mlir())
        .with_transform(p.transform().map(String::from));
    let text = |p: &Payload| jit::transformed(p).unwrap_or_else(|e| panic!("{e}"));
    (text(p), text(&parsed))
}

#[test]
fn each_operator_s_module_and_script_built_are_those_their_text_parses_to() {
    let strategies = [
        "id",
        "elementwise(4)",
        "parallel @ outermost(isApplied(isMap))",
    ];
    for (name, nats) in OPS {
        for strategy in strategies {
            let term = lowered(&op(name), &sizes(nats), strategy);
            let p = payload("f", &term);
            assert_eq!(
                p.module().text(0),
                p.mlir(),
                "{name}: the text is the operations'"
            );
            // The module alone, then with its script applied.
            let alone = p.clone().with_transform(None);
            let (built, parsed) = built_and_parsed(&alone);
            assert_eq!(built, parsed, "{name}, {strategy}");
            let (built, parsed) = built_and_parsed(&p);
            assert_eq!(built, parsed, "{name}, {strategy}");
        }
    }
}

#[test]
fn long_bodies_reductions_and_checks_built_are_those_their_text_parses_to() {
    // A kernel of more than 1,000 operations beside a short one; a parallel
    // reduction; a division that checks its divisor.
    let sources = [
        format!(
            "def f(x: 64.f32) : 64.f32 = toMem(x |> mapSeq(fun(v => v * 2.0))) |> mapSeq(fun(v => {}))",
            long_body("v", "0.0")
        ),
        "def f(x: 8.16.f32) : 8.f32 = x |> mapPar(fun(r => r |> reduceSeq(fun(a, v => a + v), 0.0)))"
            .to_string(),
        "def f(x: 16.i32, y: 16.i32) : 16.i32 = zip(x, y) |> mapSeq(fun(p => fst(p) / snd(p)))"
            .to_string(),
    ];
    for source in sources {
        let p = payload("f", &lowered(&source, &sizes(&[]), "id"));
        let (built, parsed) = built_and_parsed(&p);
        assert_eq!(built, parsed, "{source}");
    }
}

#[test]
fn an_edited_text_is_parsed_rather_than_the_operations_built() {
    let (name, nats) = OPS[0];
    let p = payload("f", &lowered(&op(name), &sizes(nats), "id"));
    assert!(p.given_mlir().is_none() && p.given_transform().is_none());
    // The same module, renamed, without its script: the text given is compiled.
    let renamed = p.mlir().replace("sym_name = \"f\"", "sym_name = \"g\"");
    let edited = p.clone().with_mlir(renamed.clone()).with_transform(None);
    assert_eq!(edited.given_mlir(), Some(renamed.as_str()));
    assert_eq!(edited.given_transform(), Some(None));
    // Its script's text, asked for, says it was taken away, and does nothing.
    let idle = edited.transform_text();
    assert!(
        idle.starts_with("// no transform script: it was taken away")
            && idle.contains("transform.named_sequence @__transform_main(")
            && idle.contains("transform.yield"),
        "{idle}"
    );
    assert_eq!(p.mlir(), p.module().text(0));
    let text = jit::transformed(&edited).unwrap_or_else(|e| panic!("{e}"));
    assert!(text.contains("func.func @g("), "{text}");
    // A script given as text is parsed: one that does nothing leaves the module as
    // it is without a script, which the program's script does not.
    let idle = "module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    transform.yield
  }
}";
    let scripted = p.clone().with_transform(Some(idle.to_string()));
    assert_eq!(scripted.transform(), Some(idle));
    let transformed = |p: &Payload| jit::transformed(p).unwrap_or_else(|e| panic!("{e}"));
    let unscheduled = transformed(&p.clone().with_transform(None));
    assert_eq!(transformed(&scripted), unscheduled);
    assert_ne!(transformed(&p), unscheduled);
}
