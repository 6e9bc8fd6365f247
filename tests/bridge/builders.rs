//! The payload and its Transform script are operations that the JIT builds with
//! MLIR's builders: each module built is the module MLIR reads from their text (the
//! generic form), operation for operation.

use super::ops::{op, OPS};
use super::{built_payload as payload, lowered, sizes, too_long};
use elevate::bridge::jit;
use elevate::bridge::payload::{Operations, Payload};

/// The payload's module after its script, built, and read from its text.
fn built_and_parsed(p: &Payload) -> (String, String) {
    let parsed = Payload {
        operations: Operations::default(),
        ..p.clone()
    };
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
            let module = p.operations.module.as_ref().expect("a structured payload");
            assert_eq!(
                module.text(0),
                p.mlir,
                "{name}: the text is the operations'"
            );
            // The module alone, then with its script applied.
            let alone = Payload {
                transform: None,
                ..p.clone()
            };
            let (built, parsed) = built_and_parsed(&alone);
            assert_eq!(built, parsed, "{name}, {strategy}");
            let (built, parsed) = built_and_parsed(&p);
            assert_eq!(built, parsed, "{name}, {strategy}");
        }
    }
}

#[test]
fn explicit_loops_built_are_those_their_text_parses_to() {
    // A kernel of more than 1,000 operations is loops, beside a structured one; a
    // reduction carries its accumulator through `scf.for`; a division checks its
    // divisor.
    let sources = [
        format!(
            "def f(x: 64.f32) : 64.f32 = toMem(x |> mapSeq(fun(v => v * 2.0))) |> mapSeq(fun(v => {}))",
            too_long("v", "0.0")
        ),
        "def f(x: 8.16.f32) : 8.f32 = x |> mapPar(fun(r => r |> reduceSeq(fun(a, v => a + v), 0.0)))"
            .to_string(),
        "def f(x: 16.i32, y: 16.i32) : 16.i32 = zip(x, y) |> mapSeq(fun(p => fst(p) / snd(p)))"
            .to_string(),
    ];
    for source in sources {
        let p = payload("f", &lowered(&source, &sizes(&[]), "id"));
        assert!(p.operations.module.is_some(), "{source}");
        let (built, parsed) = built_and_parsed(&p);
        assert_eq!(built, parsed, "{source}");
    }
}

#[test]
fn an_edited_text_is_parsed_rather_than_the_operations_built() {
    let (name, nats) = OPS[0];
    let p = payload("f", &lowered(&op(name), &sizes(nats), "id"));
    // The same module, renamed: the text no longer is the operations'.
    let edited = Payload {
        mlir: p.mlir.replace("sym_name = \"f\"", "sym_name = \"g\""),
        transform: None,
        ..p.clone()
    };
    // The operations' fingerprint says so, without printing them again.
    assert!(p.operations.module_prints_as(&p.mlir));
    assert_eq!(p.operations.module.as_ref().unwrap().text(0), p.mlir);
    assert!(!edited.operations.module_prints_as(&edited.mlir));
    let script = p.transform.as_deref().unwrap();
    assert!(p.operations.script_prints_as(script));
    assert!(!p
        .operations
        .script_prints_as(&format!("{script}\n// edited")));
    let text = jit::transformed(&edited).unwrap_or_else(|e| panic!("{e}"));
    assert!(text.contains("func.func @g("), "{text}");
}
