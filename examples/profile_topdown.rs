#[path = "../benches/support/workloads.rs"]
mod workloads;
fn main() {
    let n: usize = std::env::args().nth(1).map_or(1000, |a| a.parse().unwrap());
    let t = workloads::workload(100_000, 1_000);
    let start = std::time::Instant::now();
    let v = workloads::persistent(&t, n, false);
    println!("{} {:?}", v.len(), start.elapsed());
    {
        use elevate::core::Context;
        let step = elevate::strategies::top_down(elevate::core::arith::neg_neg());
        let mut cx = Context::default();
        let mut cur = t.clone();
        let start = std::time::Instant::now();
        for _ in 0..n {
            cur = step.apply(&cur, &mut cx).unwrap();
        }
        println!("apps {} {:?}", cx.stats().applications, start.elapsed());
    }
    let start = std::time::Instant::now();
    let v2 = plain(&t, n);
    println!("plain {:?}", start.elapsed());
    assert_eq!(v2.last(), v.last());
    let m = workloads::Mutable::from_term(&t);
    let start = std::time::Instant::now();
    let r = workloads::destructive(m, n);
    println!("{:?}", start.elapsed());
    drop(r);
}
use elevate::core::arith::{Expr, Term};
use elevate::core::Program;
fn first(t: &Term) -> Option<Term> {
    if let Expr::Neg(i) = t.expr() {
        if let Expr::Neg(x) = i.expr() {
            return Some(x.clone());
        }
    }
    for i in 0..t.arity() {
        if let Some(c) = first(t.child(i)) {
            return Some(t.with_child(i, c));
        }
    }
    None
}
#[allow(dead_code)]
pub fn plain(t: &Term, n: usize) -> Vec<Term> {
    let mut v = vec![t.clone()];
    for _ in 0..n {
        let nx = first(v.last().unwrap()).unwrap();
        v.push(nx);
    }
    v
}
