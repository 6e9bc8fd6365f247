//! `microKernel` and `convKernel` written without sizes: the register tile of the
//! machine the strategy runs on (its vector registers: AVX-512's 32 of 16 lanes,
//! AVX2's 16 of 8), and cache tiles fitted to the sizes of the program it is applied
//! to, as the library chooses them ([`crate::search::library`]). Written with sizes,
//! they are those sizes on every machine.

use crate::search::library::{conv_kernel_tiles, host_f32_lanes, micro_kernel_tiles};
use crate::term::{Expr, Term};
use crate::types::TypeKind;
use elevate_core::{Context, Name, RewriteResult, Strategy, StrategyImpl};

/// The strategy `name` of four sizes (`make` of them), the sizes chosen when it is
/// applied by `tiles` from the program and this machine's f32 lanes: `microKernel`
/// alone is `fitted("microKernel", micro_kernel_tiles_of, ...)`.
pub fn fitted(
    name: &'static str,
    tiles: fn(&Term, u32) -> [i64; 4],
    make: fn([i64; 4]) -> Strategy<Term>,
) -> Strategy<Term> {
    Strategy::new(MachineTiles { name, tiles, make })
}

/// `microKernel`'s `(mc, nc, r, w)` for `t` on a machine of `lanes` f32 lanes: those
/// of [`micro_kernel_tiles`] for the product's `m x n` result (the last two sizes of
/// what `t` computes); where those sizes are not known, 64 x 64 cache tiles, or
/// 48 x 64 with AVX2's register tile of 6 rows.
pub fn micro_kernel_tiles_of(t: &Term, lanes: u32) -> [i64; 4] {
    match result_sizes(t).as_deref() {
        Some([.., m, n]) => micro_kernel_tiles(*m, *n, lanes),
        _ if lanes >= 16 => [64, 64, 4, 64],
        _ => [48, 64, 6, 16],
    }
}

/// `convKernel`'s `(mc, nc, r, w)` for `t` on a machine of `lanes` f32 lanes: those
/// of [`conv_kernel_tiles`] for the convolution's `n.k.h.w` result (rows of `w`
/// pixels, `k` channels); where those sizes are not known, those of rows of 14 pixels
/// and 64 channels: `(14, 64, 7, 32)` with AVX-512's 16 lanes.
pub fn conv_kernel_tiles_of(t: &Term, lanes: u32) -> [i64; 4] {
    match result_sizes(t).as_deref() {
        Some([_, k, _, w]) => conv_kernel_tiles(*w, *k, lanes),
        _ if lanes >= 16 => [14, 64, 7, 32],
        _ => conv_kernel_tiles(14, 64, lanes),
    }
}

/// A strategy of four sizes, chosen when it is applied from the program and the
/// machine's f32 lanes.
struct MachineTiles {
    name: &'static str,
    tiles: fn(&Term, u32) -> [i64; 4],
    make: fn([i64; 4]) -> Strategy<Term>,
}

impl StrategyImpl<Term> for MachineTiles {
    fn apply(&self, t: &Term, cx: &mut Context) -> RewriteResult<Term> {
        (self.make)((self.tiles)(t, host_f32_lanes())).apply(t, cx)
    }

    fn name(&self) -> Name {
        Name::new(self.name)
    }
}

/// The sizes of the array that `t` computes, where they are all known: the result of
/// its body where it is a function.
fn result_sizes(t: &Term) -> Option<Vec<i64>> {
    let mut body = t;
    while let Expr::Lambda(_, _, b) | Expr::NatLambda(_, b) = body.expr() {
        body = b;
    }
    let mut ty = body.ty()?.clone();
    let mut sizes = Vec::new();
    while let TypeKind::Array(n, element) = ty.kind().clone() {
        sizes.push(n.as_const()?);
        ty = element;
    }
    Some(sizes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{registry, Program};

    const MATMUL: &str = "def mm(a: 200.64.f32, b: 64.96.f32) : 200.96.f32 = a |> map(fun(r =>
        transpose(b) |> map(fun(c => zip(r, c) |> map(fun(p => fst(p) * snd(p)))
        |> reduce(add, 0.0)))))";

    fn rewritten(source: &str, strategy: &str) -> String {
        let program = Program::load(source, None).unwrap();
        let s = registry().parse(strategy).unwrap();
        let t = s
            .apply(&program.entry().term, &mut Context::default())
            .unwrap_or_else(|e| panic!("{strategy}: {e}"));
        crate::print_term(&t)
    }

    #[test]
    fn micro_kernel_alone_is_the_library_s_tiles_for_this_machine_and_the_product() {
        let [mc, nc, r, w] = micro_kernel_tiles(200, 96, host_f32_lanes());
        assert_eq!(
            rewritten(MATMUL, "microKernel"),
            rewritten(MATMUL, &format!("microKernel({mc}, {nc}, {r}, {w})"))
        );
        assert_eq!(
            registry().parse("microKernel").unwrap().to_string(),
            "microKernel"
        );
    }

    #[test]
    fn conv_kernel_alone_is_the_library_s_tiles_for_this_machine_and_the_convolution() {
        let conv = include_str!("../../../examples/rise/ops/conv2d_nchw.rise")
            .replace("x: n.c.h.w.f32", "x: 1.8.14.14.f32")
            .replace("wt: k.c.3.3.f32", "wt: 16.8.3.3.f32")
            .replace(": n.k.h.w.f32", ": 1.16.14.14.f32");
        let [mc, nc, r, w] = conv_kernel_tiles(14, 16, host_f32_lanes());
        assert_eq!(
            rewritten(&conv, "convKernel"),
            rewritten(&conv, &format!("convKernel({mc}, {nc}, {r}, {w})"))
        );
    }

    #[test]
    fn the_tiles_follow_the_vector_registers_and_the_sizes() {
        let t = Program::load(MATMUL, None).unwrap().entry().term.clone();
        assert_eq!(result_sizes(&t), Some(vec![200, 96]));
        // AVX-512: 4 rows of 64 lanes; 40 rows (200 = 5 x 40), 64 columns (96 padded
        // to 128, as little as any multiple of 64 pads).
        assert_eq!(micro_kernel_tiles_of(&t, 16), [40, 64, 4, 64]);
        // AVX2: 6 rows of 16 lanes; 42 rows (210: within 3% of the least padding,
        // 204), 48 columns (96 = 2 x 48).
        assert_eq!(micro_kernel_tiles_of(&t, 8), [42, 48, 6, 16]);
        // Sizes not known: the defaults of each.
        let symbolic = Program::load(
            "def mm(a: n.k.f32, b: k.m.f32) : n.m.f32 = a |> map(fun(r => transpose(b) |> \
             map(fun(c => zip(r, c) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))))",
            None,
        )
        .unwrap();
        let t = &symbolic.entry().term;
        assert_eq!(micro_kernel_tiles_of(t, 16), [64, 64, 4, 64]);
        assert_eq!(micro_kernel_tiles_of(t, 8), [48, 64, 6, 16]);
        assert_eq!(conv_kernel_tiles_of(t, 16), [14, 64, 7, 32]);
        assert_eq!(conv_kernel_tiles_of(t, 8), [14, 64, 14, 8]);
    }
}
