//! The strategy text language: parsing, printing back, defs, errors.

use crate::gen::{outcome, same, AnyTerm, Desc};
use elevate_core::arith::{self, Term};
use elevate_strategies::text::Registry;
use elevate_strategies::*;
use quickcheck::{quickcheck, TestResult};

/// The combinators and a few arithmetic rules, by name.
pub(crate) fn registry() -> Registry<Term> {
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
    // The definitions print in front, as written; a reference to one prints as
    // written, so the text parses back on its own to a strategy that prints the same.
    let printed = text(file);
    assert_eq!(printed, file.replace("id\n", "id"));
    let defs = file.rsplit_once('\n').unwrap().0;
    assert_eq!(
        printed,
        format!("{defs}\ntwice(negNeg) ; simplify ; at(0, id)")
    );
    assert_eq!(text(&printed), printed);
    let s = registry().parse(file).unwrap();
    let t: Term = "-(-(-(-(x * 1))))".parse().unwrap();
    assert_eq!(s.run(&t).unwrap().to_string(), "x");
    let again = registry().parse(&printed).unwrap();
    assert_eq!(again.run(&t).unwrap().to_string(), "x");
    // The main strategy may start with a parenthesis.
    let file = "def a = addZero\n(a <+ mulOne) ; id";
    assert_eq!(text(file), file);
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
            (1, 9),
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

/// The error of `source`: its (line, column) and message.
fn error(source: &str) -> ((usize, usize), String) {
    match registry().parse(source) {
        Err(e) => (e.line_col(source), e.message),
        Ok(s) => panic!("{source} parsed as {s}"),
    }
}

#[test]
fn a_long_chain_of_definitions_is_no_cycle_and_a_cycle_is_named() {
    let mut chain = String::from("def s0 = negNeg\n");
    for i in 1..66 {
        chain.push_str(&format!("def s{i} = s{}\n", i - 1));
    }
    chain.push_str("s65");
    let t: Term = "-(-x)".parse().unwrap();
    assert_eq!(
        registry()
            .parse(&chain)
            .unwrap()
            .run(&t)
            .unwrap()
            .to_string(),
        "x"
    );

    let (at, message) = error("def a = b\ndef b = id ; c\ndef c = try(a)\na");
    assert_eq!(at, (3, 13));
    assert_eq!(
        message,
        "`a` is defined in terms of itself: a -> b -> c -> a"
    );
    let (at, message) = error("def f(s) = s ; f(s)\nf(id)");
    assert_eq!(at, (1, 16));
    assert_eq!(message, "`f` is defined in terms of itself");
    // A parameter that shadows a definition is not a reference to it.
    let shadowed = "def s = negNeg\ndef twice(s) = s ; s\ntwice(addZero)";
    let t: Term = "x + 0 + 0".parse().unwrap();
    let s = registry().parse(shadowed).unwrap();
    assert_eq!(s.run(&t).unwrap().to_string(), "x");
    let (at, message) = error("def a = id\ndef a = fail\na");
    assert_eq!((at, message.as_str()), ((2, 5), "`a` is defined twice"));
}

#[test]
fn definitions_instantiated_with_ever_new_arguments_hit_a_limit() {
    // Each s_i uses s_{i-1} with two new arguments: 2^40 different instances.
    let mut text = String::from("def s0(x) = x\n");
    for i in 1..=40 {
        text.push_str(&format!(
            "def s{i}(x) = s{0}(x ; id) ; s{0}(x ; fail)\n",
            i - 1
        ));
    }
    text.push_str("s40(id)");
    let (_, message) = error(&text);
    assert!(message.contains("expands to more than"), "{message}");
}

#[test]
fn bad_numbers_are_errors_at_the_argument() {
    let cases = [
        ("repeatN(-3, id)", (1, 9), "must be non-negative, found -3"),
        ("position(-1)(id)", (1, 10), "must be non-negative"),
        (
            "repeatN(99999999999999999999, id)",
            (1, 9),
            "the integer 99999999999999999999 is too large",
        ),
        (
            "atPath([0, -1], id)",
            (1, 8),
            "non-negative child positions",
        ),
        ("atPath([4294967296], id)", (1, 8), "too large: 4294967296"),
        (
            "applyN(100001, one)(id)",
            (1, 8),
            "too large: at most 100000",
        ),
        ("applyN(-1, one)(id)", (1, 8), "must be non-negative"),
        (
            "id @ applyN(2, 3)",
            (1, 6),
            "argument 2 must be a traversal",
        ),
        ("applyN(0, nope)(id)", (1, 11), "unknown strategy `nope`"),
    ];
    for (source, at, fragment) in cases {
        let (found_at, message) = error(source);
        assert_eq!(found_at, at, "{source}: {message}");
        assert!(message.contains(fragment), "{source}: {message}");
    }
    // Huge but legal counts are fine: they are bounded by the budget or the program.
    for source in [
        "repeatN(9223372036854775807, id)",
        "position(1000000000000)(id)",
        "skip(1000000000000)(id)",
        "applyN(9223372036854775807, id)",
    ] {
        assert!(registry().parse(source).is_ok(), "{source}");
    }
    let t: Term = "a + 0".parse().unwrap();
    assert!(registry()
        .parse("position(1000000000000)(id) <+ skip(1000000000000)(id)")
        .unwrap()
        .run(&t)
        .is_err());
}

#[test]
fn apply_n_and_peek_are_strategies_in_text() {
    let t: Term = "-(a * (b + 0))".parse().unwrap();
    assert_eq!(text("applyN(2, one)(addZero)"), "one(one(addZero))");
    assert_eq!(text("addZero @ applyN(2, one)"), "one(one(addZero))");
    assert_eq!(text("addZero @ applyN(0, one)"), "addZero");
    let s = registry().parse("addZero @ applyN(2, one)").unwrap();
    assert_eq!(s.run(&t).unwrap().to_string(), "-(a * b)");
    // With a strategy rather than a traversal: the strategy n times.
    assert_eq!(text("applyN(3, id)"), "applyN(3, id)");
    let mut cx = elevate_core::Context::default();
    let s = registry().parse("applyN(3, id)").unwrap();
    assert_eq!(s.apply(&t, &mut cx).unwrap(), t);
    assert_eq!(cx.stats().applications, 4);
    let s = registry().parse("applyN(2, negNeg)").unwrap();
    let u: Term = "-(-(-(-x)))".parse().unwrap();
    assert_eq!(s.run(&u).unwrap().to_string(), "x");

    let mut cx = elevate_core::Context::default().with_log(elevate_core::Log::Collect(Vec::new()));
    let s = registry().parse("peek ; topDown(addZero) ; peek").unwrap();
    assert_eq!(s.to_string(), "peek ; topDown(addZero) ; peek");
    s.apply(&t, &mut cx).unwrap();
    assert_eq!(cx.messages(), ["-(a * (b + 0))", "-(a * b)"]);
}
