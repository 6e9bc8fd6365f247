//! Bad input: a clear message with a location, never a panic.

use elevate_rise::{ErrorKind, Program};

fn error(source: &str) -> (ErrorKind, String, (usize, usize)) {
    let e = Program::load(source, None).expect_err("should be rejected");
    let at = e.line_col(source).expect("located");
    (e.kind, e.message, at)
}

#[test]
fn each_class_of_bad_program_is_reported_where_it_is() {
    let cases: &[(&str, ErrorKind, &str, (usize, usize))] = &[
        (
            "def f(x: f32) = (x +",
            ErrorKind::Parse,
            "expected an expression",
            (1, 21),
        ),
        (
            "def f(x: f32) = x\n  |> g",
            ErrorKind::UnknownName,
            "unknown name `g`",
            (2, 6),
        ),
        (
            "def f(x: n.f32) =\n  map(fun(v => v + 1), x)",
            ErrorKind::Type,
            "wrong argument: expected ?1.i32, found n.f32",
            (2, 24),
        ),
        (
            "def f(x: 1000.f32) = split(3, x)",
            ErrorKind::Nat,
            "1000 is not divisible by 3",
            (1, 31),
        ),
        (
            "def f(x: f32) = toShared(fun(v => v + x))",
            ErrorKind::Type,
            "expected data (not a function), found f32 -> f32",
            (1, 17),
        ),
        (
            "def f(x: f32) = x(1.0)",
            ErrorKind::Type,
            "expected a function",
            (1, 17),
        ),
        (
            "def f(x: n.f32) = map(add, x)",
            ErrorKind::Type,
            "function inside",
            (1, 19),
        ),
        (
            "def f(x: n.f32, y: m.f32) = zip(x, y)",
            ErrorKind::Nat,
            "n",
            (1, 36),
        ),
        (
            "def f(x: f32) = split(x)",
            ErrorKind::Parse,
            "expected a nat, found the value `x`",
            (1, 23),
        ),
        (
            "def f(x: f32) = /* never closed",
            ErrorKind::Parse,
            "never closed",
            (1, 17),
        ),
        (
            "def f(x: f32) = 99999999999",
            ErrorKind::Parse,
            "out of range",
            (1, 17),
        ),
        (
            "def f(x: f32) = x\ndef f(y: f32) = y",
            ErrorKind::Parse,
            "defined twice",
            (2, 5),
        ),
        (
            "",
            ErrorKind::Parse,
            "no definitions: the file is empty",
            (1, 1),
        ),
        (
            "def f(x: f32) = x : i32",
            ErrorKind::Type,
            "annotation",
            (1, 17),
        ),
        (
            "def f(x: bool) = x + x",
            ErrorKind::Type,
            "a number or a vector of numbers",
            (1, 18),
        ),
    ];
    for (source, kind, fragment, at) in cases {
        let (found_kind, message, found_at) = error(source);
        assert_eq!(found_kind, *kind, "{source}: {message}");
        assert!(message.contains(fragment), "{source}: {message}");
        assert_eq!(found_at, *at, "{source}: {message}");
    }
}

#[test]
fn errors_render_with_file_line_column_and_a_caret() {
    let source = "def f(x: f32) =\n  x |> foo\n";
    let e = Program::load(source, None).unwrap_err();
    let text = e.render("prog.rise", source);
    assert!(text.starts_with("prog.rise:2:8: unknown name:"), "{text}");
    assert!(text.contains("x |> foo"), "{text}");
    assert!(text.contains('^'), "{text}");
}

#[test]
fn inputs_that_contradict_the_types_are_rejected() {
    let program = Program::load("def f(a: n.f32, b: n.f32) = zip(a, b)", None).unwrap();
    let json = |s: &str| -> Vec<serde_json::Value> { serde_json::from_str(s).unwrap() };
    let cases = [
        ("[[1, 2], [1, 2, 3]]", "contradict"),
        ("[[1, 2]]", "expected 2 inputs"),
        ("[[[1], [2]], [1, 2]]", "parameter `a`: expected f32"),
        ("[[1, 2], [true, 2]]", "parameter `b`"),
    ];
    for (inputs, fragment) in cases {
        let e = program.eval_json(&json(inputs)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Input);
        assert!(e.message.contains(fragment), "{inputs}: {}", e.message);
    }
    let e = program
        .eval_random(&elevate_rise::NatEnv::default(), 1)
        .unwrap_err();
    assert!(e.message.contains("--nat n="), "{}", e.message);
}

#[test]
fn entry_points_are_found_by_name() {
    let source = "def g(x: f32) = x\ndef h(x: f32) = g(x) * 2.0";
    let program = Program::load(source, Some("g")).unwrap();
    assert_eq!(program.summary(), ["h : f32 -> f32", "g : f32 -> f32"]);
    let e = Program::load(source, Some("nope")).unwrap_err();
    assert!(e.message.contains("no definition named `nope`"));
}

#[test]
fn repeated_parameters_are_located_errors() {
    let cases = [
        ("def f(x: f32, x: f32) = x", "x", (1, 15)),
        ("def f<n, n>(x: n.f32) = x", "n", (1, 10)),
        ("def f<n>(n: f32) = n", "n", (1, 10)),
        ("def f(x: f32) = fun(y, y => y)", "y", (1, 24)),
        ("def f(x: f32) =\n  fun(y: f32, z, y => y)(x)", "y", (2, 18)),
        ("def f(x: n.f32) = depFun(m, (m: nat) => x)", "m", (1, 30)),
    ];
    for (source, name, at) in cases {
        let (kind, message, found_at) = error(source);
        assert_eq!(kind, ErrorKind::Parse, "{source}: {message}");
        assert!(
            message.contains(&format!("repeated parameter `{name}`")),
            "{source}: {message}"
        );
        assert_eq!(found_at, at, "{source}: {message}");
    }
    // The same name in nested binders is shadowing, not repetition.
    assert!(Program::load("def f(x: f32) = fun(x => fun(x => x))(x)(x)", None).is_ok());
}

#[test]
fn a_file_without_definitions_says_so() {
    for (source, what) in [
        ("", "the file is empty"),
        ("  \n\t\n", "the file is empty"),
        ("// nothing\n", "the file holds only comments"),
        ("/* a */ // b\n/* c */", "the file holds only comments"),
    ] {
        let (kind, message, _) = error(source);
        assert_eq!(kind, ErrorKind::Parse);
        assert!(
            message.starts_with("no definitions"),
            "{source:?}: {message}"
        );
        assert!(message.contains(what), "{source:?}: {message}");
    }
}

#[test]
fn huge_types_in_messages_are_cut_short() {
    // A wrong argument whose type is 100,000 dimensions deep.
    let source = format!("def f(x: {}f32) = x + 1.0", "1.".repeat(100_000));
    let (kind, message, _) = error(&source);
    assert_eq!(kind, ErrorKind::Type);
    assert!(message.len() < 2_000, "{} bytes", message.len());
    assert!(message.contains("too long to show"), "{message}");
}

#[test]
fn errors_on_very_long_lines_show_part_of_the_line() {
    // 100,000 nested lambdas on one line, without parameter types.
    let source = format!(
        "def f = {}x{}",
        "fun(x => ".repeat(100_000),
        ")".repeat(100_000)
    );
    let e = Program::load(&source, None).unwrap_err();
    let text = e.render("deep.rise", &source);
    assert!(text.starts_with("deep.rise:1:9: type error:"), "{text}");
    assert!(text.len() < 2_000, "{} bytes", text.len());
    assert!(text.contains("def f = fun(x => fun(x =>"), "{text}");
    assert!(text.contains("^^^"), "{text}");
}
