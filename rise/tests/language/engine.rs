//! RISE terms are programs of the strategy engine: traversals, traces and sharing
//! work on them as on any IR.

use elevate_core::{Context, Traversable};
use elevate_rise::{parse_term, print_term, Expr, Term};
use elevate_strategies::{normalize, rule, top_down};

/// `id(x) -> x`
fn drop_id() -> elevate_core::Strategy<Term> {
    rule("dropId", |t: &Term| match t.expr() {
        Expr::App(f, x) if matches!(f.expr(), Expr::Prim(elevate_rise::prim::Prim::Id)) => {
            Some(x.clone())
        }
        _ => None,
    })
}

#[test]
fn strategies_rewrite_rise_terms_and_share_the_rest() {
    let t = parse_term("fun(x: 4.f32 => x |> map(fun(v => id(v) * 2.0)) |> map(id))").unwrap();
    let mut cx = Context::default().with_trace();
    let r = normalize(drop_id()).apply(&t, &mut cx).unwrap();
    assert_eq!(
        print_term(&r),
        "fun(x: 4.f32 => x |> map(fun(v => v * 2.0)) |> map(id))"
    );
    let trace: Vec<String> = cx
        .trace()
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    // Children of an application: the argument (0), then the function (1).
    assert_eq!(trace, ["dropId @ [0, 0, 1, 0, 0, 1, 0]"]);
    // The untouched function of the outer application, `map(id)`, is shared.
    let r2 = top_down(drop_id()).run(&t).unwrap();
    let (Expr::Lambda(_, _, body), Expr::Lambda(_, _, body2)) = (t.expr(), r2.expr()) else {
        panic!("lambdas")
    };
    assert!(body.child(1).same_node(body2.child(1)));
    // Rewritten terms type-check again (the rule preserves types).
    assert!(elevate_rise::infer(&r).is_ok());
}
