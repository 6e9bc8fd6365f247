//! Programs 100,000 levels deep or long, in every shape the front end meets: lexed,
//! parsed, typed, printed and parsed back (to the same term), and evaluated where the
//! result is data, without overflowing the stack. Terms and types that deep are also
//! compared, hashed and dropped.

use crate::run;
use elevate_core::NameSupply;
use elevate_rise::prim::Prim;
use elevate_rise::{
    evaluate, parse_program, parse_type, print_definition, Expr, NatEnv, Program, Term, Type, Value,
};
use std::hash::{DefaultHasher, Hash, Hasher};

const DEPTH: usize = 100_000;

/// Loads `source`, prints its entry point and loads that again: the printed program
/// has the same type and, types and locations aside, the same term.
fn round_trip(source: &str) -> Program {
    let program = Program::load(source, None).unwrap_or_else(|e| panic!("{e}"));
    let entry = program.entry();
    let printed = print_definition(&entry.name, &entry.term);
    let again = Program::load(&printed, None).unwrap_or_else(|e| panic!("reparsed: {e}"));
    // (A definition generic in a size prints with its nat parameters explicit, so
    // compare the types of the terms.)
    assert_eq!(again.entry().term.ty(), entry.term.ty());
    assert!(again
        .entry()
        .term
        .erase_types()
        .alpha_eq(&entry.term.erase_types()));
    program
}

/// The value of the entry point of `program` on scalar inputs.
fn eval(program: &Program, args: &[Value]) -> Value {
    evaluate(&program.entry().term, &NatEnv::default(), args).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn nested_parentheses_and_operators() {
    let body = format!("{}x{}", "(x + ".repeat(DEPTH), ")".repeat(DEPTH));
    let source = format!("def f(x: i32) = {body}");
    round_trip(&source);
    assert_eq!(run(&source, "[1]"), (DEPTH + 1).to_string());
}

#[test]
fn long_operator_chains() {
    let sum = format!("def f(x: i32) = x{}", " + x".repeat(DEPTH));
    round_trip(&sum);
    assert_eq!(run(&sum, "[2]"), (2 * (DEPTH + 1)).to_string());
    // Every level of precedence, left to right, then a comparison at the end.
    let mixed = format!(
        "def f(x: i32) = x{} < x",
        " * 1 + x - x % 7".repeat(DEPTH / 4)
    );
    round_trip(&mixed);
    assert_eq!(run(&mixed, "[3]"), "false");
}

#[test]
fn nested_array_literals() {
    let source = format!("def f = {}1.5{}", "[".repeat(DEPTH), "]".repeat(DEPTH));
    let program = round_trip(&source);
    assert_eq!(
        program.entry().ty.to_string(),
        format!("{}f32", "1.".repeat(DEPTH))
    );
    // The interpreter evaluates array literals recursively, so evaluation is
    // checked at a depth its stack takes.
    let shallow = 1_000;
    let source = format!("def f = {}1.5{}", "[".repeat(shallow), "]".repeat(shallow));
    let mut value = eval(&Program::load(&source, None).unwrap(), &[]);
    let mut depth = 0;
    while let Value::Array(items) = &value {
        assert_eq!(items.len(), 1);
        value = items.get(0).unwrap();
        depth += 1;
    }
    assert_eq!(depth, shallow);
    assert!(matches!(value, Value::F32(v) if v == 1.5));
}

#[test]
fn nested_applications() {
    let source = format!(
        "def f(x: i32) = {}x{}",
        "id(".repeat(DEPTH),
        ")".repeat(DEPTH)
    );
    round_trip(&source);
    assert_eq!(run(&source, "[4]"), "4");
}

#[test]
fn chains_of_applications() {
    // The type of the first `id`, written out, doubles with every application.
    let source = format!("def f(x: i32) = id{}(x)", "(id)".repeat(DEPTH));
    let program = round_trip(&source);
    assert_eq!(program.entry().ty.to_string(), "i32 -> i32");
    assert_eq!(run(&source, "[5]"), "5");
}

#[test]
fn nested_lambdas() {
    let source = format!(
        "def f(x: f32) = {}x{}",
        "fun(y: f32 => ".repeat(DEPTH),
        ")".repeat(DEPTH)
    );
    let program = round_trip(&source);
    let ty = program.entry().ty.to_string();
    assert_eq!(ty.len(), "f32 -> ".len() * (DEPTH + 1) + "f32".len());
    // Without annotations the parameters' types are unknown: a located error, not a
    // crash.
    let untyped = format!(
        "def f = {}x{}",
        "fun(x => ".repeat(DEPTH),
        ")".repeat(DEPTH)
    );
    let e = Program::load(&untyped, None).unwrap_err();
    assert!(e.message.contains("cannot infer the type"), "{}", e.message);
    assert_eq!(e.line_col(&untyped), Some((1, 9)));
}

#[test]
fn nested_lets_and_negations() {
    // Each `let` binds the `y` of the one before (the interpreter looks a variable up
    // from the innermost binding out).
    let source = format!(
        "def f(x: i32) = let y = x in {}y",
        "let y = y in ".repeat(DEPTH)
    );
    round_trip(&source);
    assert_eq!(run(&source, "[7]"), "7");
    let negations = format!(
        "def g(x: f32) = {}x{}",
        "-(".repeat(DEPTH),
        ")".repeat(DEPTH)
    );
    round_trip(&negations);
    assert_eq!(run(&negations, "[2.5]"), "2.5");
}

#[test]
fn long_pipes_and_compositions() {
    let mut source = String::from("def f(xs: n.f32) = xs");
    for _ in 0..DEPTH {
        source.push_str(" |> map(fun(v => v + 1.0))");
    }
    round_trip(&source);
    assert_eq!(run(&source, "[[0, 1]]"), "[100000.0,100001.0]");
    let composed = format!("def g(x: f32) = (neg{})(x)", " >> neg".repeat(DEPTH - 1));
    round_trip(&composed);
    assert_eq!(run(&composed, "[1.5]"), "1.5");
}

#[test]
fn types_deep_in_every_shape() {
    let shapes = [
        format!("{}f32", "2.".repeat(DEPTH)),
        format!("{}f32{}", "(".repeat(DEPTH), ")".repeat(DEPTH)),
        format!("{}f32", "f32 -> ".repeat(DEPTH)),
        format!("{}f32{}", "(f32, ".repeat(DEPTH), ")".repeat(DEPTH)),
        format!("{}f32{}", "vec[".repeat(DEPTH), ", 4]".repeat(DEPTH)),
        format!("{}n.f32", "(n: nat) -> ".repeat(DEPTH)),
    ];
    for text in &shapes {
        let ty = parse_type(text).unwrap_or_else(|e| panic!("{e}"));
        let again = parse_type(&ty.to_string()).unwrap();
        assert_eq!(again, ty);
        let mut hasher = DefaultHasher::new();
        ty.hash(&mut hasher);
        drop(again);
    }
    // In a program: a parameter with 100,000 dimensions, or in 100,000 parentheses.
    let dims = format!("def f(x: {}f32) = x", "1.".repeat(DEPTH));
    round_trip(&dims);
    let parens = format!(
        "def f(x: {}f32{}) = x",
        "(".repeat(DEPTH),
        ")".repeat(DEPTH)
    );
    round_trip(&parens);
    assert_eq!(run(&parens, "[2.5]"), "2.5");
}

#[test]
fn chains_of_definitions() {
    let mut source = String::from("def d0(x: f32) = x\n");
    for i in 1..DEPTH {
        source.push_str(&format!("def d{i}(x: f32) = d{}(x) + 1.0\n", i - 1));
    }
    let program = Program::load(&source, None).unwrap();
    assert_eq!(program.defs.len(), DEPTH);
    assert_eq!(program.entry().ty.to_string(), "f32 -> f32");
    assert_eq!(run(&source, "[0.5]"), format!("{}.5", DEPTH - 1));
    // Definitions generic in a size, each using the one before.
    let mut generic = String::from("def g0(x: n.f32) = x\n");
    for i in 1..DEPTH / 10 {
        generic.push_str(&format!("def g{i}(x: n.f32) = g{}(x) |> map(neg)\n", i - 1));
    }
    let program = Program::load(&generic, None).unwrap();
    assert_eq!(program.entry().ty.to_string(), "n.f32 -> n.f32");
}

/// `neg(neg(...(x)))`, `depth` deep, built node by node, `x` named from `names`.
fn tower(depth: usize, names: &mut NameSupply) -> Term {
    let x = elevate_rise::Ident::supplied(names, "x");
    let mut t = Term::var(&x);
    for _ in 0..depth {
        t = Term::app(Term::prim(Prim::Neg), t);
    }
    Term::lambda(x, t)
}

#[test]
fn deep_terms_compare_hash_and_drop() {
    let mut names = NameSupply::new();
    let (a, b) = (tower(DEPTH, &mut names), tower(DEPTH, &mut names));
    // Different binders: not equal, but alpha-equivalent.
    assert_ne!(a, b);
    assert!(a.alpha_eq(&b));
    let Expr::Lambda(x, _, body) = a.expr() else {
        panic!("a lambda")
    };
    let rebuilt = Term::lambda(x.clone(), Term::app(Term::prim(Prim::Id), body.clone()));
    let copy = Term::lambda(x.clone(), Term::app(Term::prim(Prim::Id), body.clone()));
    assert_eq!(rebuilt, copy);
    let hash = |t: &Term| {
        let mut h = DefaultHasher::new();
        t.hash(&mut h);
        h.finish()
    };
    assert_eq!(hash(&rebuilt), hash(&copy));
    assert_eq!(
        a.erase_types().free_vars().len(),
        0,
        "closed after erasing types"
    );
    drop((a, b, rebuilt, copy));
    let deep_type = (0..DEPTH).fold(Type::scalar(elevate_rise::Scalar::F32), |t, _| {
        Type::array(elevate_rise::nat::Nat::cst(3), t)
    });
    let same = parse_type(&deep_type.to_string()).unwrap();
    assert_eq!(deep_type, same);
    drop((deep_type, same));
}

#[test]
fn deep_input_is_lexed_and_parsed_whole() {
    // A file of 100,000 definitions separated by comments.
    let source: String = (0..DEPTH)
        .map(|i| format!("// {i}\ndef f{i}(x: i32) = x /* {i} */\n"))
        .collect();
    assert_eq!(parse_program(&source).unwrap().len(), DEPTH);
}

#[test]
fn library_strategies_take_a_map_whose_body_is_100000_operations_long() {
    // DFNF, vectorization and the element-wise strategy walk the body without
    // recursion (and in one pass where each node would otherwise be asked again);
    // the micro-kernel, which finds no product in it, fails with a message.
    let source = format!(
        "def f(x: 8.f32) = x |> map(fun(v => v{}))",
        " + v".repeat(DEPTH)
    );
    let program = Program::load(&source, None).unwrap_or_else(|e| panic!("{e}"));
    let term = &program.entry().term;
    let registry = elevate_rise::registry();
    for strategy in ["DFNF", "elementwise(8)"] {
        let s = registry.parse(strategy).unwrap();
        let out = s
            .apply(term, &mut elevate_core::Context::default())
            .unwrap_or_else(|e| panic!("{strategy}: {e}"));
        assert!(out.ty().is_some(), "{strategy}");
        if strategy != "DFNF" {
            let text = elevate_rise::print_term(&out);
            assert!(text.contains("asVector(8)"), "{strategy}");
        }
    }
    let kernel = registry.parse("microKernel(8, 8, 4, 8)").unwrap();
    assert!(kernel
        .apply(term, &mut elevate_core::Context::default())
        .is_err());
}
