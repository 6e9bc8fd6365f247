//! Properties over random well-typed programs (the reusable generator of
//! `elevate_rise::generate`) and over random bytes.

use elevate_rise::generate::Generator;
use elevate_rise::{evaluate, infer, io, parse_term, print_term, NatEnv, Program, Term};
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

quickcheck! {
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
        if insert % 3 == 0 && at + 1 < chars.len() {
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
