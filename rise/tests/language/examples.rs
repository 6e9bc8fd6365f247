//! Every example checks and evaluates to independently computed values.

use crate::{example, load, run};

#[test]
fn every_example_type_checks() {
    let expected = [
        ("dot.rise", vec!["dot : n.f32 -> n.f32 -> f32"]),
        ("scal.rise", vec!["scal : f32 -> n.f32 -> n.f32"]),
        ("matmul.rise", vec!["mm : n.k.f32 -> k.m.f32 -> n.m.f32"]),
        (
            "conv2d.rise",
            vec![
                "slide2d : n.m.f32 -> (n - 2).(m - 2).3.3.f32",
                "conv3x3 : n.m.f32 -> 3.3.f32 -> n.m.f32",
            ],
        ),
    ];
    for (file, lines) in expected {
        assert_eq!(load(&example(file)).summary(), lines, "{file}");
    }
}

#[test]
fn dot_scal_and_matmul_compute_by_hand() {
    assert_eq!(run(&example("dot.rise"), "[[1, 2, 3], [4, 5, 6]]"), "32.0");
    assert_eq!(
        run(&example("scal.rise"), "[2, [1, -2, 0.5]]"),
        "[2.0,-4.0,1.0]"
    );
    assert_eq!(
        run(
            &example("matmul.rise"),
            "[[[1, 2, 3], [4, 5, 6]], [[7, 8], [9, 10], [11, 12]]]"
        ),
        "[[58.0,64.0],[139.0,154.0]]"
    );
}

/// A 3x3 convolution with zero padding, in plain loops.
fn conv_reference(img: &[Vec<f32>], w: &[Vec<f32>]) -> Vec<Vec<f32>> {
    let (n, m) = (img.len() as i64, img[0].len() as i64);
    let at = |i: i64, j: i64| {
        if i < 0 || j < 0 || i >= n || j >= m {
            0.0
        } else {
            img[i as usize][j as usize]
        }
    };
    (0..n)
        .map(|i| {
            (0..m)
                .map(|j| {
                    let mut sum = 0.0;
                    for di in 0..3 {
                        for dj in 0..3 {
                            sum += at(i + di - 1, j + dj - 1) * w[di as usize][dj as usize];
                        }
                    }
                    sum
                })
                .collect()
        })
        .collect()
}

#[test]
fn conv2d_matches_plain_loops() {
    let img: Vec<Vec<f32>> = (0..5)
        .map(|i| (0..7).map(|j| ((i * 7 + j) % 5) as f32 - 2.0).collect())
        .collect();
    let w = vec![
        vec![1.0, 2.0, 1.0],
        vec![0.0, -1.0, 0.5],
        vec![-1.0, 0.25, 2.0],
    ];
    let inputs = serde_json::json!([img, w]).to_string();
    let output: Vec<Vec<f32>> =
        serde_json::from_str(&run(&example("conv2d.rise"), &inputs)).unwrap();
    let expected = conv_reference(&img, &w);
    for (row, want) in output.iter().zip(&expected) {
        for (a, b) in row.iter().zip(want) {
            assert!((a - b).abs() < 1e-4, "{output:?} vs {expected:?}");
        }
    }
    assert_eq!(output.len(), 5);
    assert_eq!(output[0].len(), 7);
}

#[test]
fn matmul_matches_plain_loops_on_random_inputs() {
    let program = load(&example("matmul.rise"));
    let mut nats = elevate_rise::NatEnv::default();
    for (name, value) in [("n", 5), ("k", 7), ("m", 3)] {
        nats.insert(elevate_rise::nat::NatVar::Named(name.into()), value);
    }
    let signature = program.signature();
    let inputs = elevate_rise::io::random_inputs(&signature, &nats, 42).unwrap();
    let json: Vec<serde_json::Value> = inputs.iter().map(|v| v.to_json().unwrap()).collect();
    let a: Vec<Vec<f32>> = serde_json::from_value(json[0].clone()).unwrap();
    let b: Vec<Vec<f32>> = serde_json::from_value(json[1].clone()).unwrap();
    let output: Vec<Vec<f32>> =
        serde_json::from_value(program.eval_json(&json).unwrap().to_json().unwrap()).unwrap();
    for i in 0..5 {
        for j in 0..3 {
            let want: f32 = (0..7).map(|k| a[i][k] * b[k][j]).sum();
            assert!((output[i][j] - want).abs() < 1e-5);
        }
    }
}
