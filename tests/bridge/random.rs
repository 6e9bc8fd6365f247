//! Random well-typed programs, lowered by `defaultLowering`, compile and match the
//! interpreter (unsupported constructs would be counted and reported).

use super::compiled_and_interpreted;
use elevate::bridge::payload;
use elevate::core::Context;
use elevate::rise::generate::Generator;
use elevate::rise::{infer, io, print_term, rules};

#[test]
fn random_programs_compile_and_match_the_interpreter() {
    let (mut compiled, mut unsupported) = (0, Vec::new());
    for seed in 0..60u64 {
        let mut generator = Generator::new(seed + 90_000);
        let program = infer(&generator.program(8 + (seed % 16) as usize)).unwrap();
        let low = rules::default_lowering()
            .apply(&program, &mut Context::default())
            .unwrap();
        match payload("f", &low) {
            Ok(_) => {
                let (found, expected) = compiled_and_interpreted(&low, seed);
                assert!(
                    io::approx_eq(&found, &expected),
                    "compiled {found} vs interpreted {expected}\n{}",
                    print_term(&low)
                );
                compiled += 1;
            }
            Err(e) => {
                assert!(e.message.starts_with("unsupported construct"), "{e}");
                unsupported.push(e.message);
            }
        }
    }
    unsupported.sort();
    unsupported.dedup();
    println!("compiled {compiled} of 60 random programs; unsupported: {unsupported:?}");
    // Every construct the generator makes is supported (scanSeq, iterate and the GPU
    // maps are not, and it does not make them).
    assert!(unsupported.is_empty(), "{unsupported:?}");
}
