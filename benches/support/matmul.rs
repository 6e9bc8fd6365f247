//! `matmul.rise` with random square inputs, shared by the interpreter's criterion
//! benchmark and `examples/interp_bench.rs` (and the program by `rewrite_bench`, the
//! source by the bridge's benchmarks).

#![allow(dead_code)]

use elevate::rise::nat::NatVar;
use elevate::rise::{io, NatEnv, Program, Value};

/// The text of the `matmul.rise` example.
pub fn source() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/rise/matmul.rise");
    std::fs::read_to_string(path).expect("the matmul example")
}

/// The type-checked `matmul.rise` example.
pub fn program() -> Program {
    Program::load(&source(), None).expect("matmul type-checks")
}

/// The program, sizes `n = k = m = size`, and reproducible random inputs.
pub fn with_inputs(size: i64) -> (Program, NatEnv, Vec<Value>) {
    let program = program();
    let mut nats = NatEnv::default();
    for name in ["n", "k", "m"] {
        nats.insert(NatVar::Named(name.into()), size);
    }
    let inputs = io::random_inputs(&program.signature(), &nats, 1).expect("inputs");
    (program, nats, inputs)
}

/// The typed `matmul.rise` with its sizes fixed to `size` (`n = k = m = size`), as the
/// ELEVATE paper rewrites it (1024 there).
pub fn instantiated(size: i64) -> elevate::rise::Term {
    use elevate::rise::nat::Nat;
    use elevate::rise::term::Expr;
    let mut term = program().entry().term.clone();
    while let Expr::NatLambda(v, body) = term.expr() {
        term = body.substitute_nat(v, &Nat::cst(size));
    }
    elevate::rise::infer(&term).expect("the instantiated matmul type-checks")
}
