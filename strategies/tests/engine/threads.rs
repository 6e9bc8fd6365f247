//! Everything is `Send + Sync`: runs proceed in parallel on shared programs.

use elevate_core::arith::{self, Term};
use elevate_core::{Context, Cursor, Failure, Node, Strategy};
use elevate_strategies::*;

fn send_sync<T: Send + Sync>() {}

#[test]
fn the_engine_types_are_send_and_sync() {
    send_sync::<Strategy<Term>>();
    send_sync::<Term>();
    send_sync::<Node<u32>>();
    send_sync::<Context>();
    send_sync::<Failure>();
    send_sync::<Cursor<Term>>();
}

#[test]
fn parallel_runs_on_one_shared_program_agree() {
    let program: Term = (0..500).fold(Term::var("x"), |t, i| {
        let leaf = Term::negate(Term::negate(Term::num(i + 1)));
        Term::sum(t, Term::sum(leaf, Term::num(0)))
    });
    let simplify = normalize(arith::neg_neg() | arith::add_zero());
    let results: Vec<(Term, u64)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| {
                    let mut cx = Context::default().with_failure_memo();
                    let r = simplify.apply(&program, &mut cx).unwrap();
                    (r, cx.stats().steps)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(results[0], results[1]);
    assert_eq!(results[0].1, 1_000);
    assert_eq!(results[0].0.size(), 1_001);
}
