//! Every shared example, lowered by `defaultLowering`, compiles and matches the
//! interpreter.

use super::{assert_same, example, lowered, sizes};

#[test]
fn every_example_compiles_and_matches_the_interpreter() {
    let cases: [(&str, &[(&str, i64)]); 4] = [
        ("dot.rise", &[("n", 37)]),
        ("scal.rise", &[("n", 16)]),
        ("matmul.rise", &[("n", 5), ("k", 7), ("m", 3)]),
        ("conv2d.rise", &[("n", 9), ("m", 6)]),
    ];
    for (name, nats) in cases {
        let term = lowered(&example(name), &sizes(nats), "id");
        assert_same(&term, name);
        // Without defaultLowering, maps are views and reductions loops: the same.
        let high = lowered(&example(name), &sizes(nats), "id");
        assert_same(&high, name);
    }
    let separable = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/rise/separable.rise"
    ))
    .unwrap();
    for strategy in ["id", "separableConvolution"] {
        let term = lowered(&separable, &sizes(&[("n", 8), ("m", 10)]), strategy);
        assert_same(&term, strategy);
    }
}
