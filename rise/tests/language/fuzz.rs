//! A mutation fuzzer over program text and strategy text, run for a fixed number of
//! cases (`ELEVATE_FUZZ_CASES`, default 300 of each; set it to 100000 for a long run;
//! `ELEVATE_FUZZ_SHOW=1` prints each input before it runs, to find one that aborts).
//!
//! Inputs are the example programs and strategies, mutated by deleting, duplicating
//! and swapping ranges and by splicing in tokens chosen to hit edge cases (zero, huge
//! and negative sizes, unbalanced brackets, undefined nat arithmetic, keywords). Every
//! input must end in a value or a typed error: no panic, no stack overflow, no
//! allocation abort, no run past its budget. Where a program loads, its printed form
//! must load again, and printing and loading reach a fixed point (the printer and the
//! parser agree).

use elevate_core::{Budget, Context, Log};
use elevate_rise::nat::NatVar;
use elevate_rise::{print_definition, NatEnv, Program};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

const PROGRAMS: [&str; 7] = [
    "dot.rise",
    "scal.rise",
    "matmul.rise",
    "conv2d.rise",
    "mm64.rise",
    "separable.rise",
    "tiled.rise",
];

const PROGRAM_TOKENS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    ",",
    ".",
    ":",
    "=",
    "=>",
    "|>",
    ">>",
    "+",
    "-",
    "*",
    "/",
    "%",
    "0",
    "1",
    "-1",
    "0.0",
    "1e39",
    "4294967296",
    "99999999999999999999",
    "n",
    "n/0",
    "n%0",
    "(1-2)",
    "vec[f32, 0]",
    "idx[0]",
    "idx[n]",
    "f32",
    "i32",
    "f64",
    "bool",
    "def ",
    "fun(x => ",
    "fun(x: f32 => ",
    "depFun(n => ",
    "let y = ",
    " in ",
    "map",
    "reduce(add, 0.0)",
    "split(0)",
    "split(4)",
    "join",
    "transpose",
    "zip",
    "slide(3, 1)",
    "padCst(1099511627776, 0, 0.0)",
    "generate(fun(i => 1.0))",
    "toMem",
    "toShared",
    "asVector(0)",
    "/*",
    "*/",
    "//",
    "\n",
    " ",
    "\"",
    "λ",
    "\u{0}",
];

const STRATEGIES: &[&str] = &[
    "baseline ; (tile(32, 32) @ outermost(mapNest(2)))",
    "normalize(mapFusion <+ splitJoin(4))",
    "DFNF ; try(topDown(splitJoin(2))) ; defaultLowering",
    "repeat(sometd(reduceMapFusion)) ;; vectorize(4)",
    "def s(x) = x ; id\ns(try(BENF))",
    "position(3)(mapFusion) <+ skip(2)(fail)",
    "repeatN(5, one(id)) ; applyN(2, peek)",
    "par",
];

const STRATEGY_TOKENS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    ",",
    ";",
    ";;",
    "<+",
    "@",
    "id",
    "fail",
    "try",
    "repeat",
    "0",
    "-1",
    "99999999999999999999",
    "4294967296",
    "18446744073709551616",
    "mapNest(99999999)",
    "splitJoin(0)",
    "tile(0, 0)",
    "normalize(id)",
    "repeat(id)",
    "def ",
    " = ",
    "\n",
    "outermost",
    "topDown",
    "all",
    "one",
    "some",
    "\"",
    "//",
    "saturate(\"default\", \"ms=50\")",
];

/// Strategy text changed so that it often still parses: wrapped in a combinator,
/// combined with another strategy, a number replaced, or one raw edit.
fn mutate_strategy(rng: &mut ChaCha8Rng, text: &str) -> String {
    const WRAPPERS: [&str; 6] = ["try(", "repeat(", "normalize(", "topDown(", "not(", "all("];
    const NUMBERS: [&str; 5] = ["0", "1", "-1", "99999999", "18446744073709551616"];
    let mut text = text.to_string();
    for _ in 0..rng.random_range(1..=3) {
        text = match rng.random_range(0..4) {
            0 => format!("{}{text})", WRAPPERS[rng.random_range(0..WRAPPERS.len())]),
            1 => {
                let other = STRATEGIES[rng.random_range(0..STRATEGIES.len())];
                let op = [" ; ", " <+ ", " ;; "][rng.random_range(0..3)];
                format!("({text}){op}({})", other.replace('\n', " "))
            }
            2 => match text.find(|c: char| c.is_ascii_digit()) {
                Some(at) => {
                    let end = text[at..]
                        .find(|c: char| !c.is_ascii_digit())
                        .map_or(text.len(), |e| at + e);
                    let number = NUMBERS[rng.random_range(0..NUMBERS.len())];
                    format!("{}{number}{}", &text[..at], &text[end..])
                }
                None => text,
            },
            _ => mutate(rng, &text, STRATEGY_TOKENS, 1),
        };
    }
    text
}

fn cases() -> usize {
    std::env::var("ELEVATE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

/// `text` changed in one to `edits` places.
fn mutate(rng: &mut ChaCha8Rng, text: &str, tokens: &[&str], edits: usize) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for _ in 0..rng.random_range(1..=edits) {
        let len = chars.len();
        let at = rng.random_range(0..=len);
        let end = (at + rng.random_range(0..=16)).min(len);
        match rng.random_range(0..4) {
            0 => {
                chars.drain(at..end);
            }
            1 => {
                let piece: Vec<char> = chars[at..end].to_vec();
                let to = rng.random_range(0..=len);
                chars.splice(to..to, piece);
            }
            2 => {
                let token = tokens[rng.random_range(0..tokens.len())];
                chars.splice(at..at, token.chars());
            }
            _ => {
                let token = tokens[rng.random_range(0..tokens.len())];
                chars.splice(at..end, token.chars());
            }
        }
    }
    chars.into_iter().collect()
}

fn example_text(name: &str) -> String {
    crate::example(name)
}

/// Runs `f`, turning a panic into a test failure that shows the input.
fn no_panic(kind: &str, input: &str, f: impl FnOnce()) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(f)) {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        panic!("{kind} input panicked ({message}):\n{input}");
    }
}

/// Loads, prints and re-loads a program; evaluates it on small random inputs. Says
/// whether it loaded.
fn exercise_program(source: &str) -> bool {
    let Ok(program) = Program::load(source, None) else {
        return false;
    };
    // Earlier definitions are inlined by the loader, so the printed entry stands alone.
    // Its first printing may name inlined binders as they were written (shadowing is
    // legal); from then on, printing and loading reach a fixed point.
    let reprint = |text: &str| match Program::load(text, None) {
        Ok(again) => print_definition(&again.entry().name, &again.entry().term),
        Err(e) => panic!(
            "printed program does not load: {}\n{text}",
            e.render("printed", text)
        ),
    };
    let entry = program.entry();
    let printed = reprint(&print_definition(&entry.name, &entry.term));
    assert_eq!(
        reprint(&printed),
        printed,
        "the printed program prints differently after loading"
    );
    let mut nats = NatEnv::default();
    for v in &program.signature().nats {
        if let NatVar::Named(_) = v {
            nats.insert(v.clone(), 4);
        }
    }
    // A value or a typed error: both are fine.
    let _ = program.eval_random(&nats, 1);
    true
}

#[test]
fn mutated_programs_end_in_a_value_or_an_error() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed);
    let corpus: Vec<String> = PROGRAMS.iter().map(|name| example_text(name)).collect();
    let mut loaded = 0;
    for _ in 0..cases() {
        let seed = &corpus[rng.random_range(0..corpus.len())];
        let source = mutate(&mut rng, seed, PROGRAM_TOKENS, 4);
        if std::env::var_os("ELEVATE_FUZZ_SHOW").is_some() {
            eprintln!("program input: {source:?}");
        }
        no_panic("program", &source, || {
            loaded += usize::from(exercise_program(&source))
        });
    }
    // Mutants that still load reach inference, the printer and the interpreter.
    assert!(
        loaded * 20 > cases(),
        "only {loaded} of {} mutants loaded",
        cases()
    );
}

#[test]
fn mutated_strategies_end_within_their_budget() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xe1e7);
    let registry = elevate_rise::registry();
    let programs: Vec<Program> = ["dot.rise", "matmul.rise"]
        .iter()
        .map(|name| crate::load(&example_text(name)))
        .collect();
    let mut parsed = 0;
    for _ in 0..cases() {
        let seed = STRATEGIES[rng.random_range(0..STRATEGIES.len())];
        let text = mutate_strategy(&mut rng, seed);
        let program = &programs[rng.random_range(0..programs.len())];
        if std::env::var_os("ELEVATE_FUZZ_SHOW").is_some() {
            eprintln!("strategy input: {text:?}");
        }
        no_panic("strategy", &text, || {
            let Ok(strategy) = registry.parse(&text) else {
                return;
            };
            parsed += 1;
            // Printing a strategy gives text that parses again, on its own (the
            // strategy of a file with defs prints them in front) and prints the same.
            let printed = strategy.to_string();
            let again = registry
                .parse(&printed)
                .unwrap_or_else(|e| panic!("printed strategy does not parse: {printed}: {e}"));
            assert_eq!(again.to_string(), printed);
            let budget = Budget::unlimited()
                .steps(20_000)
                .time(Duration::from_millis(200));
            let mut cx = Context::new(budget).with_log(Log::Silent);
            let _ = strategy.apply(&program.entry().term, &mut cx);
        });
    }
    assert!(
        parsed * 20 > cases(),
        "only {parsed} of {} mutants parsed",
        cases()
    );
}
