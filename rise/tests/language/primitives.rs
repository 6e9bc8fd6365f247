//! Every primitive: its type and its value on a small input.

use crate::{load, run};

/// (program, type of the entry point, inputs, output)
const CASES: &[(&str, &str, &str, &str)] = &[
    ("def f(x: f32) = id(x)", "f32 -> f32", "[1.5]", "1.5"),
    ("def f(x: f32) = neg(x)", "f32 -> f32", "[1.5]", "-1.5"),
    ("def f(x: i32) = -x", "i32 -> i32", "[3]", "-3"),
    ("def f(x: bool) = not(x)", "bool -> bool", "[true]", "false"),
    ("def f(x: i32, y: i32) = x + y * 2 - 1", "i32 -> i32 -> i32", "[3, 4]", "10"),
    ("def f(x: i32, y: i32) = (x / y, x % y)", "i32 -> i32 -> (i32, i32)", "[7, 2]", "[3,1]"),
    ("def f(x: f32, y: f32) = (max(x, y), min(x, y))", "f32 -> f32 -> (f32, f32)", "[1, 2]", "[2.0,1.0]"),
    ("def f(x: f32) = (exp(0.0), (sqrt(x), abs(0.0 - x)))", "f32 -> (f32, (f32, f32))", "[4]", "[1.0,[2.0,4.0]]"),
    ("def f(x: i32, y: i32) = (x < y, (x > y, x == y))", "i32 -> i32 -> (bool, (bool, bool))", "[1, 2]", "[true,[false,false]]"),
    ("def f(c: bool, x: f32) = select(c, x, 0.0)", "bool -> f32 -> f32", "[false, 2]", "0.0"),
    ("def f(x: i32) = cast(x) : f64", "i32 -> f64", "[3]", "3.0"),
    ("def f(x: f32) = let y = x * 2.0 in y + y", "f32 -> f32", "[1.5]", "6.0"),
    ("def f(x: 2.f32) = toMem(x)", "2.f32 -> 2.f32", "[[1, 2]]", "[1.0,2.0]"),
    ("def f(x: 2.f32) = toGlobal(x |> map(fun(v => v + 1.0)))", "2.f32 -> 2.f32", "[[1, 2]]", "[2.0,3.0]"),
    ("def f(x: 2.2.f32) = x |> map(fun(r => toShared(r) |> map(fun(v => toPrivate(v * 2.0)))))", "2.2.f32 -> 2.2.f32", "[[[1, 2], [3, 4]]]", "[[2.0,4.0],[6.0,8.0]]"),
    ("def f(x: 3.f32) = generate(fun(i => idx(i, x) * 2.0)) : 3.f32", "3.f32 -> 3.f32", "[[1, 2, 3]]", "[2.0,4.0,6.0]"),
    ("def f(x: 3.f32) = generate(fun(i => indexAsNat(i))) : 3.i64", "3.f32 -> 3.i64", "[[1, 2, 3]]", "[0,1,2]"),
    ("def f(x: 3.f32, i: i64) = idx(natAsIndex(3, i), x)", "3.f32 -> i64 -> f32", "[[1, 2, 3], 2]", "3.0"),
    ("def f(x: 5.f32) = (take(2, x), drop(2, x))", "5.f32 -> (2.f32, 3.f32)", "[[1, 2, 3, 4, 5]]", "[[1.0,2.0],[3.0,4.0,5.0]]"),
    ("def f(x: 2.i32, y: 1.i32) = concat(x, y)", "2.i32 -> 1.i32 -> 3.i32", "[[1, 2], [3]]", "[1,2,3]"),
    ("def f(x: 6.i32) = split(2, x)", "6.i32 -> 3.2.i32", "[[1, 2, 3, 4, 5, 6]]", "[[1,2],[3,4],[5,6]]"),
    ("def f(x: 2.3.i32) = join(x)", "2.3.i32 -> 6.i32", "[[[1, 2, 3], [4, 5, 6]]]", "[1,2,3,4,5,6]"),
    ("def f(x: 5.i32) = slide(3, 2, x)", "5.i32 -> 2.3.i32", "[[1, 2, 3, 4, 5]]", "[[1,2,3],[3,4,5]]"),
    ("def f(x: 2.3.i32) = transpose(x)", "2.3.i32 -> 3.2.i32", "[[[1, 2, 3], [4, 5, 6]]]", "[[1,4],[2,5],[3,6]]"),
    ("def f(x: 2.i32) = padCst(1, 2, 0, x)", "2.i32 -> 5.i32", "[[7, 8]]", "[0,7,8,0,0]"),
    ("def f(x: 2.i32) = padClamp(2, 1, x)", "2.i32 -> 5.i32", "[[7, 8]]", "[7,7,7,8,8]"),
    ("def f(x: 2.i32, y: 2.f32) = zip(x, y)", "2.i32 -> 2.f32 -> 2.(i32, f32)", "[[1, 2], [3, 4]]", "[[1,3.0],[2,4.0]]"),
    ("def f(x: 2.(i32, f32)) = unzip(x)", "2.(i32, f32) -> (2.i32, 2.f32)", "[[[1, 3], [2, 4]]]", "[[1,2],[3.0,4.0]]"),
    ("def f(x: i32, y: f32) = (fst(makePair(x, y)), snd((x, y)))", "i32 -> f32 -> (i32, f32)", "[1, 2]", "[1,2.0]"),
    ("def f(p: (i32, f32)) = mapSnd(fun(y => y * 2.0), mapFst(fun(x => x + 1), p))", "(i32, f32) -> (i32, f32)", "[[1, 2]]", "[2,4.0]"),
    ("def f(x: f32) = vectorFromScalar(x) : vec[f32, 4]", "f32 -> vec[f32, 4]", "[1.5]", "[1.5,1.5,1.5,1.5]"),
    ("def f(x: 4.f32) = asVector(2, x)", "4.f32 -> 2.vec[f32, 2]", "[[1, 2, 3, 4]]", "[[1.0,2.0],[3.0,4.0]]"),
    ("def f(x: 4.f32) = asScalar(map(fun(v => v + v), asVectorAligned(2, x)))", "4.f32 -> 4.f32", "[[1, 2, 3, 4]]", "[2.0,4.0,6.0,8.0]"),
    ("def f(x: 3.i32) = (map(fun(v => v * v), x), mapSeq(fun(v => v + 1), x))", "3.i32 -> (3.i32, 3.i32)", "[[1, 2, 3]]", "[[1,4,9],[2,3,4]]"),
    ("def f(x: 2.i32) = (mapSeqUnroll(neg, x), mapPar(neg, x))", "2.i32 -> (2.i32, 2.i32)", "[[1, 2]]", "[[-1,-2],[-1,-2]]"),
    ("def f(x: 2.2.i32) = mapGlobal(0, mapLocal(1, fun(v => v + 1)), x)", "2.2.i32 -> 2.2.i32", "[[[1, 2], [3, 4]]]", "[[2,3],[4,5]]"),
    ("def f(x: 2.i32) = mapWorkGroup(0, neg, x)", "2.i32 -> 2.i32", "[[1, 2]]", "[-1,-2]"),
    ("def f(x: 4.i32) = (reduce(add, 0, x), reduceSeq(fun(a, v => a * 10 + v), 0, x))", "4.i32 -> (i32, i32)", "[[1, 2, 3, 4]]", "[10,1234]"),
    ("def f(x: 3.i32) = reduceSeqUnroll(max, 0, x)", "3.i32 -> i32", "[[1, 5, 3]]", "5"),
    ("def f(x: 4.i32) = scanSeq(fun(v, acc => acc + v), 0, x)", "4.i32 -> 4.i32", "[[1, 2, 3, 4]]", "[1,3,6,10]"),
    (
        "def f(x: 8.f32) = iterate(3, depFun(l => fun(xs: (l*2).f32 => xs |> split(2) |> map(reduce(add, 0.0)))), x)",
        "8.f32 -> 1.f32",
        "[[1, 2, 3, 4, 5, 6, 7, 8]]",
        "[36.0]",
    ),
    ("def f(x: 2.f32) = [idx(natAsIndex(2, 1i64), x), 0.5, 3.0f64 : f64]", "2.f32 -> 3.f32", "[[1, 2]]", "unused"),
    ("def f(x: n.f32) = x |> map(fun(v => v * 2.0)) |> reduce(add, 0.0)", "n.f32 -> f32", "[[1, 2, 3]]", "12.0"),
    ("def f(x: n.f32) = (map(neg) >> map(neg))(x)", "n.f32 -> n.f32", "[[1, 2]]", "[1.0,2.0]"),
    ("def f<n>(x: (n*2).f32) = split(2, x)", "(n: nat) -> (2*n).f32 -> n.2.f32", "[[1, 2, 3, 4]]", "[[1.0,2.0],[3.0,4.0]]"),
];

#[test]
fn every_primitive_has_its_type_and_value() {
    let mut failures = Vec::new();
    for (source, ty, inputs, output) in CASES {
        if *output == "unused" {
            continue;
        }
        let program = load(source);
        let found_ty = program.entry().ty.to_string();
        if found_ty != *ty {
            failures.push(format!("{source}\n  type {found_ty}, expected {ty}"));
            continue;
        }
        let found = run(source, inputs);
        if found != *output {
            failures.push(format!("{source}\n  value {found}, expected {output}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn array_elements_must_agree() {
    // The unused case above: an f64 among f32s.
    let (source, ..) = CASES.iter().find(|case| case.3 == "unused").unwrap();
    let e = elevate_rise::Program::load(source, None).unwrap_err();
    assert!(
        e.message.contains("expected f32, found f64"),
        "{}",
        e.message
    );
}

#[test]
fn every_primitive_is_exercised() {
    let text: String = CASES.iter().map(|c| c.0).collect::<Vec<_>>().join(" ");
    let words: std::collections::HashSet<&str> =
        text.split(|c: char| !c.is_ascii_alphanumeric()).collect();
    let operators = [
        ("add", "+"),
        ("sub", "-"),
        ("mul", "*"),
        ("div", "/"),
        ("mod", "%"),
        ("lt", "<"),
        ("gt", ">"),
        ("equal", "=="),
        ("makePair", "makePair"),
        ("let", "let"),
    ];
    for p in elevate_rise::prim::Prim::ALL {
        let name = p.name();
        let by_operator = operators
            .iter()
            .any(|(n, op)| *n == name && text.contains(op));
        assert!(words.contains(name) || by_operator, "no test uses `{name}`");
    }
}

/// The table's loop facts agree with each loop primitive's type: the argument it names
/// is an array, a map makes an array as long as it, and an accumulation is of its
/// start value's type.
#[test]
fn every_loop_primitive_iterates_over_the_argument_its_type_says() {
    use elevate_rise::nat::Nat;
    use elevate_rise::prim::{FreshVars, Makes, Prim};
    use elevate_rise::types::{Type, TypeKind};
    struct Fresh(u32);
    impl FreshVars for Fresh {
        fn fresh_type(&mut self) -> Type {
            self.0 += 1;
            Type::var(self.0)
        }
        fn fresh_nat(&mut self) -> Nat {
            self.0 += 1;
            Nat::unknown(self.0)
        }
    }
    let mut loops = 0;
    for &p in Prim::ALL {
        let Some(it) = p.iteration() else { continue };
        loops += 1;
        let mut ty = p.instantiate(&mut Fresh(0)).ty;
        while let TypeKind::DepFun(_, body) = ty.kind() {
            ty = body.clone();
        }
        let mut params = Vec::new();
        while let TypeKind::Fun(param, result) = ty.kind() {
            params.push(param.clone());
            ty = result.clone();
        }
        assert_eq!(params.len(), p.value_arity(), "{p}");
        let TypeKind::Array(n, _) = params[it.array].kind() else {
            panic!(
                "`{p}` iterates over argument {}, {}",
                it.array, params[it.array]
            );
        };
        match it.makes {
            Makes::Elements | Makes::Prefixes => {
                let TypeKind::Array(m, _) = ty.kind() else {
                    panic!("`{p}` makes {ty}")
                };
                assert_eq!(m, n, "`{p}`'s result is as long as its array");
            }
            Makes::Accumulation => assert_eq!(ty, params[1], "`{p}` accumulates its start"),
        }
    }
    assert_eq!(loops, 11);
}
