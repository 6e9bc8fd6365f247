//! Random well-typed programs, lowered by `defaultLowering`, compile and match the
//! interpreter (unsupported constructs would be counted and reported); those that are
//! structured go through `linalg` and their Transform script, the others through
//! explicit loops, and both paths are counted.

use super::{compiled_and_interpreted, limits};
use elevate::bridge::{payload, Error};
use elevate::core::Context;
use elevate::rise::generate::Generator;
use elevate::rise::{infer, io, print_term, rules};

#[test]
fn random_programs_compile_and_match_the_interpreter() {
    let (mut compiled, mut unsupported) = (0, Vec::new());
    let mut loops_because = std::collections::BTreeMap::<String, usize>::new();
    for seed in 0..60u64 {
        let mut generator = Generator::new(seed + 90_000);
        let program = infer(&generator.program(8 + (seed % 16) as usize)).unwrap();
        let low = rules::default_lowering()
            .apply(&program, &mut Context::default())
            .unwrap();
        match payload("f", &low, &limits()) {
            Ok(p) => {
                match p.loops_because {
                    Some(why) => *loops_because.entry(why).or_default() += 1,
                    None => assert!(p.transform.is_some()),
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
        "compiled {compiled} of 60 random programs ({} structured: linalg + Transform; {loops} as loops: {loops_because:?}); unsupported: {unsupported:?}",
        compiled - loops
    );
    assert!(
        compiled - loops >= 10,
        "too few structured: {loops_because:?}"
    );
    // Every construct the generator makes is supported (scanSeq, iterate and the GPU
    // maps are not, and it does not make them).
    assert!(unsupported.is_empty(), "{unsupported:?}");
}
