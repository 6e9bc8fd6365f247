//! Convolutions as micro-kernels (`convKernel`): the weights packed in blocks of `w`
//! channels, the result computed in the channel-blocked order and copied into NCHW,
//! and the convolution itself one structured kernel whose Transform script carries the
//! register tile (`r` unrolled pixels around a vector of `w` channels) with the taps
//! outside it; its input read through a view with one dimension per loop (the window's
//! taps overlapping the pixels). The code computes what the interpreter computes.

use super::ops::op;
use super::{assert_same, lowered, payload, sizes};

/// A program of the suite, its sizes, and the tiles `(mc, nc, r, w)`.
type Case = (
    &'static str,
    &'static [(&'static str, i64)],
    (i64, i64, i64, i64),
);

#[test]
fn conv_kernels_carry_their_register_tile_and_match_the_interpreter() {
    let cases: [Case; 3] = [
        (
            "conv2d_nchw.rise",
            &[("n", 1), ("c", 3), ("h", 8), ("w", 8), ("k", 32)],
            (8, 32, 4, 16),
        ),
        (
            "conv2d_nchw.rise",
            &[("n", 2), ("c", 2), ("h", 4), ("w", 6), ("k", 16)],
            (6, 16, 3, 8),
        ),
        (
            "conv2d_stride2.rise",
            &[("n", 1), ("c", 4), ("h", 3), ("w", 3), ("k", 32)],
            (4, 32, 2, 16),
        ),
    ];
    for (file, nats, (mc, nc, rows, lanes)) in cases {
        let strategy = format!("convKernel({mc}, {nc}, {rows}, {lanes})");
        let what = format!("{file} {nats:?} {strategy}");
        let term = lowered(&op(file), &sizes(nats), &strategy);
        let p = payload("f", &term);
        let script = p.transform().unwrap_or_else(|| panic!("{what}: no script"));
        assert!(
            !p.mlir().contains("scf.for"),
            "{what}: loops in the payload"
        );
        // The input of the convolution: a view whose taps overlap its pixels.
        assert!(p.mlir().contains("memref.reinterpret_cast"), "{what}");
        // The weights packed in blocks of `lanes` channels, innermost.
        let c = nats.iter().find(|(n, _)| *n == "c").unwrap().1;
        let k = nats.iter().find(|(n, _)| *n == "k").unwrap().1;
        let packed = format!("memref<{}x{c}x3x3x{lanes}xf32>", k / lanes);
        assert!(p.mlir().contains(&packed), "{what}: no {packed}");
        // Vector operations of one wide dimension each: the packing's and the register
        // tile's, each one vector of `lanes`, and the padded input's copy, which the
        // bridge schedules itself (in vectors where they divide its rows).
        let vectors: Vec<&str> = script
            .lines()
            .filter_map(|l| l.split("vector_sizes [").nth(1))
            .filter_map(|rest| rest.split(']').next())
            .collect();
        let wide = |v: &str| -> Vec<String> {
            v.split(", ")
                .filter(|x| *x != "1")
                .map(str::to_string)
                .collect()
        };
        let of_lanes = vectors.iter().filter(|v| wide(v) == [lanes.to_string()]);
        assert!(of_lanes.count() >= 2, "{what}: {script}");
        // The tile's contraction reduces one tap per step: a broadcast and an FMA per
        // vector of channels (as outer products, its lanes were unrolled one by one).
        assert!(
            script.contains("lowering_strategy = parallelarith"),
            "{what}: {script}"
        );
        // The result is computed blocked (its channel lanes contiguous), then copied.
        let blocked = format!("x{rows}x{lanes}xf32>");
        assert!(p.mlir().contains(&blocked), "{what}: no {blocked}");
        for v in &vectors {
            assert_eq!(wide(v).len(), 1, "{what}: {v}");
        }
        // The register tile's pixels unrolled, inside the taps' three loops.
        assert!(
            script.contains(&format!("{{factor = {rows} : i64}}")),
            "{what}: {script}"
        );
        // The convolution's kernel is the one unrolled: its last loop is the unrolled
        // pixels, and the three before it the taps (channel, row, column), one by one.
        let mark = script.split("\"elevate.unroll_").nth(1).unwrap();
        let kernel = mark.split('_').next().unwrap();
        let kernel = super::register_tiles::kernel_lines(script, kernel.parse().unwrap());
        let tiles: Vec<&str> = kernel
            .lines()
            .filter(|l| l.contains("tile_sizes"))
            .collect();
        let unrolled = tiles[tiles.len() - 1];
        let handle = unrolled
            .split(", ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap();
        assert!(
            script.contains(&format!("transform.annotate {handle} \"elevate.unroll_")),
            "{what}: {script}"
        );
        for tap in &tiles[tiles.len() - 4..tiles.len() - 1] {
            let sizes = tap.split("tile_sizes [").nth(1).unwrap();
            let ones = sizes
                .split(']')
                .next()
                .unwrap()
                .split(", ")
                .filter(|x| *x == "1");
            assert_eq!(ones.count(), 1, "{what}: {tap}");
        }
        assert_same(&term, &what);
    }
}

#[test]
fn conv_kernel_rejects_tiles_that_do_not_divide() {
    let program = elevate::rise::Program::load(&op("conv2d_nchw.rise"), None).unwrap();
    let registry = elevate::rise::registry();
    let error = registry.parse("convKernel(8, 32, 3, 16)").unwrap_err();
    assert!(
        error.to_string().contains("3 must divide the tile's 8"),
        "{error}"
    );
    // Tiles that do not divide the image: the strategy fails, it does not panic.
    let strategy = registry.parse("convKernel(16, 32, 4, 16)").unwrap();
    let nats = sizes(&[("n", 1), ("c", 2), ("h", 6), ("w", 6), ("k", 32)]);
    let chosen =
        elevate::bridge::choose(&program, &nats, Some(&strategy), &super::Options::default());
    assert!(chosen.is_err());
}
