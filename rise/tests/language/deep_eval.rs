//! The interpreter on terms and values 100,000 levels deep: nested `let`s and applied
//! lambdas, long sums, nested array literals and pairs, chains of views. Built with
//! the term constructors, so that only evaluation is tested; compiled, run, printed
//! and dropped without overflowing the stack.

use elevate_core::NameSupply;
use elevate_rise::nat::Nat;
use elevate_rise::prim::Prim;
use elevate_rise::{evaluate, io, Ident, Literal, NatEnv, Term, Value};

const DEPTH: usize = 100_000;

fn var(x: &Ident) -> Term {
    Term::var(x)
}

fn prim(p: Prim, args: Vec<Term>) -> Term {
    Term::apps(Term::prim(p), args)
}

fn eval(term: &Term, args: &[Value]) -> Value {
    evaluate(term, &NatEnv::default(), args).unwrap_or_else(|e| panic!("{e}"))
}

fn json(value: &Value) -> String {
    let mut out = Vec::new();
    io::write_json(value, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn nested_lets_each_using_the_outermost_variable() {
    let mut ids = NameSupply::new();
    // fun(x => let y0 = x in let y1 = x in ... y_last + x)
    let x = Ident::supplied(&mut ids, "x");
    let names: Vec<Ident> = (0..DEPTH)
        .map(|i| Ident::supplied(&mut ids, &format!("y{i}")))
        .collect();
    let mut body = prim(Prim::Add, vec![var(&names[DEPTH - 1]), var(&x)]);
    for y in names.iter().rev() {
        body = prim(Prim::Let, vec![var(&x), Term::lambda(y.clone(), body)]);
    }
    let term = Term::lambda(x, body);
    assert_eq!(json(&eval(&term, &[Value::I32(21)])), "42");
}

#[test]
fn nested_applied_lambdas() {
    let mut ids = NameSupply::new();
    // fun(x => (fun(y0 => (fun(y1 => ... y_last + x)(y0)) ...)(x))
    let x = Ident::supplied(&mut ids, "x");
    let names: Vec<Ident> = (0..DEPTH)
        .map(|i| Ident::supplied(&mut ids, &format!("y{i}")))
        .collect();
    let mut body = prim(Prim::Mul, vec![var(&names[DEPTH - 1]), var(&x)]);
    for i in (0..DEPTH).rev() {
        let argument = if i == 0 { var(&x) } else { var(&names[i - 1]) };
        body = Term::app(Term::lambda(names[i].clone(), body), argument);
    }
    let term = Term::lambda(x, body);
    assert_eq!(json(&eval(&term, &[Value::I64(-3)])), "9");
}

#[test]
fn long_sums_nested_either_way() {
    let mut ids = NameSupply::new();
    let x = Ident::supplied(&mut ids, "x");
    let mut left = var(&x);
    let mut right = var(&x);
    for _ in 1..DEPTH {
        left = prim(Prim::Add, vec![left, var(&x)]);
        right = prim(Prim::Add, vec![var(&x), right]);
    }
    let pair = prim(Prim::MakePair, vec![left, right]);
    let term = Term::lambda(x, pair);
    assert_eq!(json(&eval(&term, &[Value::I32(2)])), "[200000,200000]");
}

#[test]
fn nested_array_literals_and_pairs_make_deep_values() {
    let mut ids = NameSupply::new();
    let x = Ident::supplied(&mut ids, "x");
    let mut array = var(&x);
    let mut pair = var(&x);
    for _ in 0..DEPTH {
        array = Term::new(elevate_rise::Expr::Array(vec![array]));
        pair = prim(Prim::MakePair, vec![pair, Term::literal(Literal::I32(0))]);
    }
    let array = eval(&Term::lambda(x.clone(), array), &[Value::I32(1)]);
    assert_eq!(
        json(&array),
        format!("{}1{}", "[".repeat(DEPTH), "]".repeat(DEPTH))
    );
    assert_eq!(array.elements().unwrap(), 1);
    let pair = eval(&Term::lambda(x, pair), &[Value::I32(1)]);
    let text = json(&pair);
    assert!(
        text.starts_with("[[[[") && text.ends_with(",0],0]"),
        "{}",
        &text[..20]
    );
    assert_eq!(pair.elements().unwrap(), DEPTH as u128 + 1);
    // Both values are dropped here, level by level.
}

#[test]
fn long_chains_of_views_are_read_and_dropped() {
    let mut ids = NameSupply::new();
    // drop(0, drop(0, ... xs)) and map over the result: every element read goes
    // through 100,000 views.
    let xs = Ident::supplied(&mut ids, "xs");
    let mut chain = var(&xs);
    for _ in 0..DEPTH {
        chain = Term::app(Term::nat_app(Term::prim(Prim::Drop), Nat::cst(0)), chain);
    }
    let v = Ident::supplied(&mut ids, "v");
    let doubled = prim(
        Prim::Map,
        vec![
            Term::lambda(v.clone(), prim(Prim::Add, vec![var(&v), var(&v)])),
            chain,
        ],
    );
    let term = Term::lambda(xs, doubled);
    let input = Value::array(vec![Value::I32(1), Value::I32(2), Value::I32(3)]);
    assert_eq!(json(&eval(&term, &[input])), "[2,4,6]");
}

#[test]
fn closures_capturing_closures_nest_as_deep_as_the_lets_that_bind_them() {
    let mut ids = NameSupply::new();
    // fun(x => let f0 = fun(v => v + 1) in let f1 = fun(v => f0(v) + 1) in ... f_last(x))
    let x = Ident::supplied(&mut ids, "x");
    let names: Vec<Ident> = (0..DEPTH)
        .map(|i| Ident::supplied(&mut ids, &format!("f{i}")))
        .collect();
    let mut body = Term::app(var(&names[DEPTH - 1]), var(&x));
    for i in (0..DEPTH).rev() {
        let v = Ident::supplied(&mut ids, "v");
        let inner = if i == 0 {
            var(&v)
        } else {
            Term::app(var(&names[i - 1]), var(&v))
        };
        let one = Term::literal(Literal::I32(1));
        let function = Term::lambda(v, prim(Prim::Add, vec![inner, one]));
        body = prim(
            Prim::Let,
            vec![function, Term::lambda(names[i].clone(), body)],
        );
    }
    let term = Term::lambda(x, body);
    assert_eq!(json(&eval(&term, &[Value::I32(0)])), DEPTH.to_string());
}
