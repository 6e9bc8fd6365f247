//! The strategy text language: parsing, printing back, defs, errors.

use crate::gen::{outcome, same, AnyTerm, Desc};
use elevate_core::arith::{self, Term};
use elevate_strategies::text::Registry;
use elevate_strategies::*;
use quickcheck::{quickcheck, TestResult};

fn registry() -> Registry<Term> {
    let mut r = Registry::with_combinators();
    r.rule("addZero", "x + 0 -> x", arith::add_zero);
    r.rule("mulOne", "x * 1 -> x", arith::mul_one);
    r.rule("negNeg", "-(-x) -> x", arith::neg_neg);
    r.rule("foldConstants", "n op m -> value", arith::fold_constants);
    r.rule("addComm", "a + b -> b + a", arith::add_comm);
    r.rule(
        "distribute",
        "a * (b + c) -> a * b + a * c",
        arith::distribute,
    );
    r.rule("DFNF", "a stand-in normal form for `;;`", || {
        inspect("DFNF", |_, _| {})
    });
    r
}

quickcheck! {
    fn printed_strategies_parse_back_to_the_same_strategy(s: Desc, t: AnyTerm) -> TestResult {
        let s = s.build();
        let text = s.to_string();
        let parsed = match registry().parse(&text) {
            Ok(p) => p,
            Err(e) => panic!("{}", e.render("printed", &text)),
        };
        if parsed.to_string() != text {
            return TestResult::failed();
        }
        let (a, b) = (outcome(&s, &t.0), outcome(&parsed, &t.0));
        if a.is_none() || b.is_none() {
            return TestResult::discard();
        }
        TestResult::from_bool(same(&a, &b))
    }
}

fn text(s: &str) -> String {
    registry()
        .parse(s)
        .unwrap_or_else(|e| panic!("{}", e.render("test", s)))
        .to_string()
}

#[test]
fn precedence_and_forms() {
    assert_eq!(
        text("addZero ; mulOne <+ negNeg"),
        "addZero ; mulOne <+ negNeg"
    );
    assert_eq!(
        text("addZero ; (mulOne <+ negNeg)"),
        "addZero ; (mulOne <+ negNeg)"
    );
    assert_eq!(text("addZero @ topDown"), "topDown(addZero)");
    assert_eq!(
        text("addZero ; negNeg @ one ; id"),
        "addZero ; one(negNeg) ; id"
    );
    assert_eq!(text("addZero @ one @ topDown"), "topDown(one(addZero))");
    assert_eq!(text("addZero ;; mulOne"), "addZero ; DFNF ; mulOne");
    assert_eq!(text("position(2)(addZero)"), "position(2)(addZero)");
    assert_eq!(text("position(2, addZero)"), "position(2)(addZero)");
    assert_eq!(text("atPath([0, 1], addZero)"), "atPath([0, 1], addZero)");
    assert_eq!(
        text("debug(\"hello\") // a comment\n /* another */ ; id"),
        "debug(\"hello\") ; id"
    );
    assert_eq!(text("addZero @ position(3)"), "position(3)(addZero)");
}

#[test]
fn defs_with_and_without_parameters() {
    let file = "def twice(s) = s ; s\n\
                def simplify = normalize(addZero <+ mulOne)\n\
                def at(n, s) = position(n)(s)\n\
                twice(negNeg) ; simplify ; at(0, id)";
    assert_eq!(
        text(file),
        "negNeg ; negNeg ; normalize(addZero <+ mulOne) ; position(0)(id)"
    );
    let s = registry().parse(file).unwrap();
    let t: Term = "-(-(-(-(x * 1))))".parse().unwrap();
    assert_eq!(s.run(&t).unwrap().to_string(), "x");
}

#[test]
fn errors_say_where_and_what() {
    let cases = [
        (
            "addZero ; frobnicate",
            (1, 11),
            "unknown strategy `frobnicate`",
        ),
        (
            "topDown(addZero, mulOne)",
            (1, 1),
            "expects 1 argument(s), found 2",
        ),
        (
            "repeatN(addZero, negNeg)",
            (1, 1),
            "argument 1 must be a number",
        ),
        (
            "addZero ;",
            (1, 10),
            "expected a strategy name, found the end",
        ),
        ("topDown(addZero", (1, 16), "expected `)`"),
        (
            "addZero mulOne",
            (1, 9),
            "expected `;`, `<+`, `@` or the end",
        ),
        ("/* open", (1, 1), "never closed"),
        (
            "def loop = loop\nloop",
            (1, 12),
            "defined in terms of itself",
        ),
        (
            "def f(s) = s\nf",
            (2, 1),
            "`f` expects 1 argument(s), found 0",
        ),
        (
            "addZero @ (mulOne)",
            (1, 12),
            "`mulOne`: expects 0 argument(s), found 1",
        ),
        (
            "addZero @ (id ; id)",
            (1, 9),
            "expected a traversal after `@`",
        ),
    ];
    let registry = registry();
    for (source, at, fragment) in cases {
        let e = match registry.parse(source) {
            Err(e) => e,
            Ok(s) => panic!("{source} parsed as {s}"),
        };
        assert_eq!(e.line_col(source), at, "{source}: {}", e.message);
        assert!(e.message.contains(fragment), "{source}: {}", e.message);
    }
    let rendered = registry
        .parse("id ;\n  nope")
        .unwrap_err()
        .render("s.elv", "id ;\n  nope");
    assert_eq!(rendered, "s.elv:2:3: strategy error: unknown strategy `nope` (`elevate strategies` lists them)\n    nope\n    ^");
}

#[test]
fn the_registry_lists_every_combinator_with_a_meaning() {
    let registry = registry();
    let names: Vec<&str> = registry.entries().map(|e| e.name.as_str()).collect();
    for name in [
        "id",
        "fail",
        "try",
        "repeat",
        "repeatN",
        "normalize",
        "not",
        "ifThenElse",
        "debug",
        "all",
        "one",
        "some",
        "topDown",
        "bottomUp",
        "allTopDown",
        "allBottomUp",
        "tryAll",
        "downup",
        "alltd",
        "sometd",
        "somebu",
        "position",
        "skip",
        "atPath",
    ] {
        assert!(names.contains(&name), "{name} missing");
    }
    assert!(registry.entries().all(|e| !e.doc.is_empty()));
}
