//! Properties over random well-typed programs (the reusable generator of
//! `elevate_rise::generate`) and over random bytes.

use elevate_rise::evaluate_with;
use elevate_rise::generate::Generator;
use elevate_rise::limits::Limits;
use elevate_rise::{evaluate, infer, io, parse_term, print_term, ErrorKind, NatEnv, Program, Term};
use quickcheck::{quickcheck, TestResult};

fn typed(seed: u64, size: u8) -> Term {
    let program = Generator::new(seed).program(size as usize % 40 + 1);
    infer(&program).unwrap_or_else(|e| {
        panic!(
            "generated program does not type-check: {e}\n{}",
            print_term(&program)
        )
    })
}

fn outputs(term: &Term, seed: u64) -> serde_json::Value {
    let signature = io::signature(term);
    let inputs = io::random_inputs(&signature, &NatEnv::default(), seed).unwrap();
    evaluate(term, &NatEnv::default(), &inputs)
        .unwrap()
        .to_json()
        .unwrap()
}

/// Numbers to put in place of the numbers of a generated program (sizes, nat
/// arguments, literals, names): ordinary ones, the edges of machine words, and sizes
/// beyond any memory.
const SIZES: [&str; 10] = [
    "0",
    "1",
    "7",
    "65536",
    "2147483648",
    "4294967297",
    "1099511627776",
    "4611686018427387904",
    "9223372036854775807",
    "99999999999999999999",
];

/// `text` with some of its numbers replaced: `(k, j)` replaces number `k` (modulo
/// their count) by `SIZES[j]` (modulo theirs).
fn with_sizes(text: &str, picks: &[(u8, u8)]) -> String {
    let mut runs = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            runs.push(start..i);
        } else {
            i += 1;
        }
    }
    if runs.is_empty() {
        return text.to_string();
    }
    let mut replacements: Vec<(std::ops::Range<usize>, &str)> = picks
        .iter()
        .map(|(k, j)| {
            let run = runs[*k as usize % runs.len()].clone();
            (run, SIZES[*j as usize % SIZES.len()])
        })
        .collect();
    replacements.sort_by_key(|(run, _)| std::cmp::Reverse(run.start));
    replacements.dedup_by_key(|(run, _)| run.start);
    let mut out = text.to_string();
    for (run, size) in replacements {
        out.replace_range(run, size);
    }
    out
}

/// A generated program with some numbers replaced by `picks` (see [`with_sizes`])
/// either does not load, or fails with an input or evaluation error, or runs to a
/// value that prints as JSON.
fn evaluates_or_fails_cleanly(seed: u64, size: u8, picks: Vec<(u8, u8)>) -> bool {
    let term = typed(seed, size);
    let text = with_sizes(&format!("def f = {}", print_term(&term)), &picks);
    let Ok(program) = Program::load(&text, None) else {
        return true;
    };
    // A small limit keeps what is allowed quick to compute.
    let limits = Limits::with_max_bytes(1 << 20);
    let inputs =
        match io::random_inputs_with(&program.signature(), &NatEnv::default(), seed, &limits) {
            Ok(inputs) => inputs,
            Err(e) => return e.kind == ErrorKind::Input && !e.message.is_empty(),
        };
    match evaluate_with(&program.entry().term, &NatEnv::default(), &inputs, &limits) {
        Ok(value) => {
            let mut out = Vec::new();
            io::write_json(&value, &mut out).is_ok()
                && serde_json::from_slice::<serde_json::Value>(&out).is_ok()
        }
        Err(e) => e.kind == ErrorKind::Eval && !e.message.is_empty(),
    }
}

#[test]
fn random_sizes_never_make_the_interpreter_panic() {
    // About one case in ten puts a size into a primitive that makes an array; many
    // cases find some.
    quickcheck::QuickCheck::new()
        .tests(1000)
        .quickcheck(evaluates_or_fails_cleanly as fn(u64, u8, Vec<(u8, u8)>) -> bool);
}

quickcheck! {
    fn streamed_output_is_the_json_form(seed: u64, size: u8) -> bool {
        let term = typed(seed, size);
        let inputs = io::random_inputs(&io::signature(&term), &NatEnv::default(), seed).unwrap();
        let value = evaluate(&term, &NatEnv::default(), &inputs).unwrap();
        let mut out = Vec::new();
        io::write_json(&value, &mut out).unwrap();
        let text = value.to_json().unwrap().to_string();
        String::from_utf8(out).unwrap() == text
    }

    fn generated_programs_are_well_typed_and_evaluate(seed: u64, size: u8) -> bool {
        let term = typed(seed, size);
        outputs(&term, seed).is_array() || outputs(&term, seed).is_number() || outputs(&term, seed).is_boolean()
    }

    fn printing_then_parsing_gives_an_alpha_equivalent_term_of_the_same_type(seed: u64, size: u8) -> TestResult {
        let term = typed(seed, size);
        let text = print_term(&term);
        let reparsed = match parse_term(&text) {
            Ok(t) => t,
            Err(e) => panic!("{}", e.render("printed", &text)),
        };
        let retyped = infer(&reparsed).unwrap_or_else(|e| panic!("{}", e.render("printed", &text)));
        TestResult::from_bool(
            reparsed.alpha_eq(&term.erase_types())
                && retyped.ty() == term.ty()
                && print_term(&retyped) == text
        )
    }

    fn printed_programs_compute_the_same_values(seed: u64, size: u8) -> bool {
        let term = typed(seed, size);
        let reparsed = infer(&parse_term(&print_term(&term)).unwrap()).unwrap();
        outputs(&term, seed) == outputs(&reparsed, seed)
    }

    fn random_bytes_are_an_error_not_a_panic(bytes: Vec<u8>) -> bool {
        let text = String::from_utf8_lossy(&bytes);
        let _ = Program::load(&text, None);
        true
    }

    fn mutated_programs_are_an_error_or_fine_never_a_panic(seed: u64, size: u8, cut: usize, insert: u8) -> bool {
        let term = typed(seed, size);
        let text = format!("def f = {}", print_term(&term));
        let mut chars: Vec<char> = text.chars().collect();
        let at = cut % chars.len().max(1);
        let pieces = ['(', ')', ',', '.', ':', '=', '>', '|', '1', 'x', ' ', '[', '-', '*'];
        chars.insert(at, pieces[insert as usize % pieces.len()]);
        if insert.is_multiple_of(3) && at + 1 < chars.len() {
            chars.remove(at + 1);
        }
        let mutated: String = chars.into_iter().collect();
        if let Ok(program) = Program::load(&mutated, None) {
            // Anything that type-checks can be evaluated (or reports an error).
            let signature = program.signature();
            if let Ok(inputs) = io::random_inputs(&signature, &NatEnv::default(), seed) {
                let _ = evaluate(&program.entry().term, &NatEnv::default(), &inputs);
            }
        }
        true
    }
}
