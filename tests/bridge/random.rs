//! Random well-typed programs, lowered by `defaultLowering`, compile and match the
//! interpreter (unsupported constructs would be counted and reported); each array they
//! write is a kernel, structured (`linalg` and its Transform script) or explicit loops,
//! and both are counted, with the reasons for the loops.

use super::{compiled_and_interpreted, limits};
use elevate::bridge::{
    payload, payload::all_structured, payload::loop_program_text, Error, KernelForm,
};
use elevate::core::Context;
use elevate::rise::generate::Generator;
use elevate::rise::{infer, io, print_term, rules};

#[test]
fn random_programs_compile_and_match_the_interpreter() {
    let (mut compiled, mut unsupported) = (0, Vec::new());
    let mut loops_because = std::collections::BTreeMap::<String, usize>::new();
    // Kernels (arrays the programs write), and the reasons those that are explicit loops are.
    let (mut kernels, mut loop_kernels) = (0, std::collections::BTreeMap::<String, usize>::new());
    for seed in 0..300u64 {
        let mut generator = Generator::new(seed + 90_000);
        let program = infer(&generator.program(8 + (seed % 16) as usize)).unwrap();
        let low = rules::default_lowering()
            .apply(&program, &mut Context::default())
            .unwrap();
        match payload("f", &low, &limits()) {
            Ok(p) => {
                // The search's quick answer is the payload's, and the loop program
                // prints with a line per kernel the payload computes structured.
                assert_eq!(all_structured(&low, &limits()), p.all_structured());
                let text = loop_program_text(&low, &limits()).unwrap();
                let structured = p.kernels.iter().filter(|k| **k == KernelForm::Structured);
                let printed = text.lines().filter(|l| l.starts_with("kernel ")).count();
                assert!(printed >= structured.count(), "{text}\n{:?}", p.kernels);
                kernels += p.kernels.len();
                for why in p.loop_kernels() {
                    *loop_kernels.entry(why.to_string()).or_default() += 1;
                }
                match &p.loops_because {
                    Some(why) => *loops_because.entry(why.clone()).or_default() += 1,
                    None => assert!(p.transform().is_some()),
                }
                let (found, expected) = compiled_and_interpreted(&low, seed);
                assert!(
                    io::approx_eq(&found, &expected),
                    "compiled {found} vs interpreted {expected}\n{}",
                    print_term(&low)
                );
                compiled += 1;
            }
            Err(e) => {
                assert!(matches!(e, Error::Unsupported { .. }), "{e}");
                unsupported.push(e.to_string());
            }
        }
    }
    unsupported.sort();
    unsupported.dedup();
    let loops: usize = loops_because.values().sum();
    println!(
        "compiled {compiled} of 300 random programs ({} structured: linalg + Transform; {loops} as loops: {loops_because:?}); unsupported: {unsupported:?}",
        compiled - loops
    );
    let loop_count: usize = loop_kernels.values().sum();
    println!(
        "{} of {kernels} kernels structured; as loops: {loop_kernels:?}",
        kernels - loop_count
    );
    assert!(kernels >= compiled, "every payload has a kernel");
    // Each array the programs write is a kernel of its own, structured unless it
    // indexes by data (which the generator does not make): all of them.
    assert!(
        loop_kernels
            .keys()
            .all(|why| why.contains("computed from data")),
        "kernels as loops for another reason: {loop_kernels:?}"
    );
    assert!(loops_because.is_empty(), "as loops: {loops_because:?}");
    // Every construct the generator makes is supported (scanSeq, iterate and the GPU
    // maps are not, and it does not make them).
    assert!(unsupported.is_empty(), "{unsupported:?}");
}
