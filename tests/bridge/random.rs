//! Random well-typed programs, lowered by `defaultLowering`, compile and match the
//! interpreter (unsupported constructs would be counted and reported); each array they
//! write is a kernel (`linalg` and its Transform script), and the kernels are counted.

use super::{compiled_and_interpreted, limits};
use elevate::bridge::{payload, payload::loop_program_text, Error};
use elevate::core::Context;
use elevate::rise::generate::Generator;
use elevate::rise::{infer, io, print_term, rules};

#[test]
fn random_programs_compile_and_match_the_interpreter() {
    let (mut compiled, mut kernels, mut unsupported) = (0, 0, Vec::new());
    for seed in 0..300u64 {
        let mut generator = Generator::new(seed + 90_000);
        let program = infer(&generator.program(8 + (seed % 16) as usize)).unwrap();
        let low = rules::default_lowering()
            .apply(&program, &mut Context::default())
            .unwrap();
        match payload("f", &low, &limits()) {
            Ok(p) => {
                // The loop program prints a line per kernel the payload computes.
                let text = loop_program_text(&low, &limits()).unwrap();
                let printed = text.lines().filter(|l| l.starts_with("kernel ")).count();
                assert!(printed >= p.kernels, "{text}\n{:?}", p.kernels);
                assert!(p.transform().is_some());
                kernels += p.kernels;
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
    println!("compiled {compiled} of 300 random programs, {kernels} kernels; unsupported: {unsupported:?}");
    assert!(kernels >= compiled, "every payload has a kernel");
    // Every construct the generator makes is supported (scanSeq, iterate and the GPU
    // maps are not, and it does not make them).
    assert!(unsupported.is_empty(), "{unsupported:?}");
}
