//! The operator suite (`examples/rise/ops/`): each program type-checks at the sizes
//! the suite runs it at, and evaluates to what plain loops compute, at small sizes on
//! random inputs.

use crate::load;
use elevate_rise::nat::NatVar;
use elevate_rise::NatEnv;
use serde_json::Value;

fn op(name: &str) -> String {
    let path = format!("{}/../examples/rise/ops/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn nats(values: &[(&str, i64)]) -> NatEnv {
    let mut env = NatEnv::default();
    for (name, value) in values {
        env.insert(NatVar::Named((*name).into()), *value);
    }
    env
}

/// The number at `index` of a nested JSON array.
fn at(v: &Value, index: &[usize]) -> f32 {
    index
        .iter()
        .fold(v, |v, &i| &v[i])
        .as_f64()
        .unwrap_or_else(|| panic!("a number at {index:?}")) as f32
}

/// Every index of an array of `shape`, in order.
fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    shape.iter().fold(vec![vec![]], |all, &n| {
        all.into_iter()
            .flat_map(|prefix| {
                (0..n).map(move |i| {
                    let mut next = prefix.clone();
                    next.push(i);
                    next
                })
            })
            .collect()
    })
}

/// Evaluates the entry point of `file` at `sizes` on random inputs and compares each
/// element of the output (of `shape`) with `reference(inputs, index)`.
fn matches_loops(
    file: &str,
    sizes: &[(&str, i64)],
    shape: &[usize],
    reference: impl Fn(&[Value], &[usize]) -> f32,
) {
    let program = load(&op(file));
    let sizes = nats(sizes);
    let inputs = elevate_rise::io::random_inputs(&program.signature(), &sizes, 7).unwrap();
    let json: Vec<Value> = inputs.iter().map(|v| v.to_json().unwrap()).collect();
    let output = program.eval_json(&json).unwrap().to_json().unwrap();
    for index in indices(shape) {
        let (got, want) = (at(&output, &index), reference(&json, &index));
        assert!(
            (got - want).abs() <= 1e-4 * (1.0 + want.abs()),
            "{file} at {index:?}: {got} where plain loops give {want}"
        );
    }
    // Nothing beyond the shape.
    let mut outer = &output;
    for &n in shape {
        assert_eq!(
            outer.as_array().map(Vec::len),
            Some(n),
            "{file}: the output's shape"
        );
        outer = &outer[0];
    }
}

/// `inputs[input]` at `index`, or 0 outside `0..shape` in the last two dimensions.
fn padded(inputs: &[Value], input: usize, index: &[usize], offset: (i64, i64)) -> f32 {
    let v = &inputs[input];
    let (y, x) = (
        index[index.len() - 2] as i64 + offset.0,
        index[index.len() - 1] as i64 + offset.1,
    );
    let plane = index[..index.len() - 2].iter().fold(v, |v, &i| &v[i]);
    let rows = plane.as_array().unwrap();
    if y < 0 || y >= rows.len() as i64 {
        return 0.0;
    }
    let row = rows[y as usize].as_array().unwrap();
    if x < 0 || x >= row.len() as i64 {
        return 0.0;
    }
    row[x as usize].as_f64().unwrap() as f32
}

#[test]
fn every_operator_type_checks_at_the_suites_sizes() {
    let cases: &[(&str, &[(&str, i64)])] = &[
        ("matmul.rise", &[("n", 1000), ("k", 1000), ("m", 1000)]),
        ("matmul.rise", &[("n", 196), ("k", 2304), ("m", 256)]),
        ("matmul.rise", &[("n", 128), ("k", 768), ("m", 3072)]),
        (
            "batched_matmul.rise",
            &[("b", 8), ("n", 128), ("k", 64), ("m", 128)],
        ),
        (
            "conv2d_nchw.rise",
            &[("n", 1), ("c", 64), ("h", 56), ("w", 56), ("k", 64)],
        ),
        (
            "conv2d_stride2.rise",
            &[("n", 1), ("c", 128), ("h", 13), ("w", 13), ("k", 256)],
        ),
        ("depthwise_conv.rise", &[("c", 64), ("h", 56), ("w", 56)]),
        ("maxpool.rise", &[("c", 64), ("h", 55), ("w", 55)]),
        ("add.rise", &[("n", 1024), ("m", 1024)]),
        ("relu.rise", &[("n", 1024), ("m", 1024)]),
        (
            "matmul_bias_relu.rise",
            &[("n", 1024), ("k", 1024), ("m", 1024)],
        ),
        ("softmax.rise", &[("b", 1024), ("n", 1000)]),
        ("jacobi2d.rise", &[("h", 2048), ("w", 2048)]),
        ("blur_separable.rise", &[("h", 2048), ("w", 2048)]),
    ];
    for (file, sizes) in cases {
        let program = load(&op(file));
        program
            .instantiate(&nats(sizes))
            .unwrap_or_else(|e| panic!("{file} at {sizes:?}: {e}"));
    }
}

fn mm(a: &Value, b: &Value, i: usize, j: usize) -> f32 {
    let k = a[i].as_array().unwrap().len();
    (0..k).map(|l| at(a, &[i, l]) * at(b, &[l, j])).sum()
}

#[test]
fn matmuls_match_plain_loops() {
    matches_loops(
        "matmul.rise",
        &[("n", 5), ("k", 7), ("m", 3)],
        &[5, 3],
        |x, i| mm(&x[0], &x[1], i[0], i[1]),
    );
    matches_loops(
        "batched_matmul.rise",
        &[("b", 2), ("n", 3), ("k", 4), ("m", 5)],
        &[2, 3, 5],
        |x, i| mm(&x[0][i[0]], &x[1][i[0]], i[1], i[2]),
    );
    matches_loops(
        "matmul_bias_relu.rise",
        &[("n", 4), ("k", 6), ("m", 5)],
        &[4, 5],
        |x, i| (mm(&x[0], &x[1], i[0], i[1]) + at(&x[2], &[i[1]])).max(0.0),
    );
}

#[test]
fn convolutions_match_plain_loops() {
    let conv = |stride: usize| {
        move |x: &[Value], i: &[usize]| {
            let channels = x[0][i[0]].as_array().unwrap().len();
            let mut sum = 0.0;
            for c in 0..channels {
                for dy in 0..3 {
                    for dx in 0..3 {
                        let pixel = [i[0], c, i[2] * stride + dy, i[3] * stride + dx];
                        sum += padded(x, 0, &pixel, (-1, -1)) * at(&x[1], &[i[1], c, dy, dx]);
                    }
                }
            }
            sum
        }
    };
    matches_loops(
        "conv2d_nchw.rise",
        &[("n", 2), ("c", 3), ("h", 4), ("w", 5), ("k", 2)],
        &[2, 2, 4, 5],
        conv(1),
    );
    // 6x8 pixels in, 3x4 out.
    matches_loops(
        "conv2d_stride2.rise",
        &[("n", 1), ("c", 2), ("h", 2), ("w", 3), ("k", 3)],
        &[1, 3, 3, 4],
        conv(2),
    );
    matches_loops(
        "depthwise_conv.rise",
        &[("c", 3), ("h", 4), ("w", 5)],
        &[3, 4, 5],
        |x, i| {
            let mut sum = 0.0;
            for dy in 0..3 {
                for dx in 0..3 {
                    let pixel = [i[0], i[1] + dy, i[2] + dx];
                    sum += padded(x, 0, &pixel, (-1, -1)) * at(&x[1], &[i[0], dy, dx]);
                }
            }
            sum
        },
    );
}

#[test]
fn pooling_and_elementwise_operators_match_plain_loops() {
    // 7x5 pixels in, 3x2 out.
    matches_loops(
        "maxpool.rise",
        &[("c", 2), ("h", 2), ("w", 1)],
        &[2, 3, 2],
        |x, i| {
            let mut best = f32::MIN;
            for dy in 0..3 {
                for dx in 0..3 {
                    best = best.max(at(&x[0], &[i[0], 2 * i[1] + dy, 2 * i[2] + dx]));
                }
            }
            best
        },
    );
    matches_loops("add.rise", &[("n", 3), ("m", 4)], &[3, 4], |x, i| {
        at(&x[0], i) + at(&x[1], i)
    });
    matches_loops("relu.rise", &[("n", 3), ("m", 4)], &[3, 4], |x, i| {
        at(&x[0], i).max(0.0)
    });
    matches_loops("softmax.rise", &[("b", 3), ("n", 6)], &[3, 6], |x, i| {
        let row: Vec<f32> = (0..6).map(|j| at(&x[0], &[i[0], j])).collect();
        let top = row.iter().copied().fold(f32::MIN, f32::max);
        let total: f32 = row.iter().map(|v| (v - top).exp()).sum();
        (row[i[1]] - top).exp() / total
    });
}

#[test]
fn stencils_match_plain_loops() {
    matches_loops("jacobi2d.rise", &[("h", 4), ("w", 5)], &[4, 5], |x, i| {
        let p = |dy: i64, dx: i64| padded(x, 0, i, (dy, dx));
        0.2 * (p(-1, 0) + p(0, -1) + p(0, 0) + p(0, 1) + p(1, 0))
    });
    matches_loops(
        "blur_separable.rise",
        &[("h", 4), ("w", 5)],
        &[4, 5],
        |x, i| {
            let mut sum = 0.0;
            for dy in 0..3 {
                for dx in 0..3 {
                    let weight = at(&x[1], &[dy]) * at(&x[2], &[dx]);
                    sum += padded(x, 0, i, (dy as i64 - 1, dx as i64 - 1)) * weight;
                }
            }
            sum
        },
    );
}

/// The library's schedule of each operator (`search::library`, what the benchmarks
/// call the library strategy) is a point of its `auto` space, for AVX2's vector width
/// and AVX-512's, and searches start from it: `Space::starts` finds it, complete,
/// and its program is what its text gives.
#[test]
fn the_library_s_schedules_are_points_of_auto_where_searches_start() {
    use elevate_core::{Budget, Context};
    use elevate_rise::search::{library, Auto};
    use elevate_strategies::search::Space;
    use std::sync::Arc;
    /// An operator, its sizes, and its library schedule for a number of lanes.
    type Case = (
        &'static str,
        Vec<(&'static str, i64)>,
        Box<dyn Fn(u32) -> String>,
    );
    let cases: Vec<Case> = vec![
        (
            "matmul.rise",
            vec![("n", 96), ("k", 32), ("m", 128)],
            Box::new(|l| library::micro_kernel(96, 128, l)),
        ),
        (
            "conv2d_nchw.rise",
            vec![("n", 1), ("c", 4), ("h", 14), ("w", 14), ("k", 32)],
            Box::new(|l| library::conv_kernel(14, 32, l)),
        ),
        (
            "depthwise_conv.rise",
            vec![("c", 4), ("h", 16), ("w", 16)],
            Box::new(|l| {
                library::taps_unrolled(&library::reduction_tiles(16, 16, l).expect("tiles"))
            }),
        ),
        (
            "maxpool.rise",
            vec![("c", 4), ("h", 7), ("w", 7)],
            Box::new(|_| library::POOLING.to_string()),
        ),
        (
            "relu.rise",
            vec![("n", 16), ("m", 64)],
            Box::new(|l| library::elementwise(64, l)),
        ),
    ];
    for lanes in [8, 16] {
        let space = Space::parse_with_auto(
            "auto",
            Arc::new(elevate_rise::registry()),
            Auto::for_lanes(lanes),
        )
        .expect("auto");
        for (file, sizes, library) in &cases {
            let term = load(&op(file)).instantiate(&nats(sizes)).expect("sizes");
            let starts = space.starts(&term);
            let nest = library(lanes);
            let start = starts
                .iter()
                .find(|s| s.text().contains(&format!(" ; {nest} ; ")))
                .unwrap_or_else(|| panic!("{file}, {lanes} lanes: no start with {nest}"));
            assert!(start.is_complete(), "{file}: {}", start.text());
            let replayed = elevate_rise::registry()
                .parse(&start.text())
                .expect("parses")
                .apply(&term, &mut Context::new(Budget::unlimited()))
                .expect("applies");
            assert_eq!(*start.program(), replayed, "{file}: {}", start.text());
        }
    }
}
