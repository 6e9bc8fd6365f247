use elevate_core::{Context, Program};
use elevate_rise::{infer, parse_term, print_term, rules, Term};
fn untyped(t: &Term, path: &mut Vec<usize>) {
    if t.ty().is_none() {
        println!("untyped at {path:?}: {}", print_term(t));
        return;
    }
    for i in 0..t.arity() {
        path.push(i);
        untyped(t.child(i), path);
        path.pop();
    }
}
fn main() {
    let t = infer(&parse_term("fun(b: 64.64.f32 => transpose(b))").unwrap()).unwrap();
    let s = rules::registry()
        .parse(&std::env::args().nth(1).unwrap())
        .unwrap();
    let r = s.apply(&t, &mut Context::default()).unwrap();
    println!("{}", print_term(&r));
    untyped(&r, &mut vec![]);
}
