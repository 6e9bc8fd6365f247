//! The RISE definition of each layer kind: one `def` per kind and attributes, generic
//! in its sizes (nat variables for the batch, the channels and the spatial sizes).
//!
//! The forms are those the library's strategies rewrite: a convolution as
//! `examples/rise/ops/conv2d_nchw.rise` and `conv2d_stride2.rise` write it (what
//! `convKernel` tiles), a product as `matmul.rise` (what `microKernel` tiles), pooling
//! as `maxpool.rise`, softmax as `softmax.rise`.

/// The lowest `f32`, where a maximum starts (and what max pooling pads with).
pub(crate) const LOWEST: &str = "-340282346638528859811704183484516925440.0";

/// How one spatial axis of a convolution or a pooling window is computed: the input
/// has `s*h + b` elements (`h` the def's nat variable), the output `h + a`; the input's
/// first elements up to `s*h + off` are read (`drop` more are never read, and `take`
/// leaves them out), after `lo` padding elements before and `hi` after (the padding
/// that some window reads: ONNX's trailing padding beyond the last window is trimmed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Axis {
    pub k: usize,
    pub s: usize,
    pub lo: usize,
    pub hi: usize,
    pub drop: usize,
    pub a: usize,
    pub b: usize,
}

impl Axis {
    /// The axis of a window of `k` at stride `s` over `size` elements padded with `lo`
    /// before and `hi` after, and its output size (ONNX's `floor((size + lo + hi -
    /// k) / s) + 1`); an error saying why if there is none.
    pub(crate) fn new(
        size: usize,
        k: usize,
        s: usize,
        lo: usize,
        hi: usize,
    ) -> Result<(Axis, usize), String> {
        if k == 0 || s == 0 {
            return Err(format!("a window of {k} at stride {s} has no output"));
        }
        let padded = size + lo + hi;
        if padded < k {
            return Err(format!(
                "the window of {k} is larger than the {size} elements padded to {padded}"
            ));
        }
        let out = (padded - k) / s + 1;
        let (a, b) = if s == 1 {
            // As conv2d_nchw.rise: a "same" convolution takes h to h.
            let b = (k - 1).saturating_sub(lo + hi);
            (b + lo + hi + 1 - k, b)
        } else {
            // As conv2d_stride2.rise: h is the output's size less one.
            let mut a = 1;
            while s * (out - a) > size {
                a += 1;
            }
            (a, size - s * (out - a))
        };
        // Read from the input (and the trailing padding): the windows' extent less the
        // leading padding, beyond `s*h`.
        let off = (s * a + k) as isize - (s + lo) as isize;
        if off < 0 {
            return Err(format!(
                "a leading padding of {lo} that no window of {k} at stride {s} reaches past"
            ));
        }
        let off = off as usize;
        let (hi_used, drop) = if b >= off { (0, b - off) } else { (off - b, 0) };
        if hi_used > hi {
            return Err(format!(
                "the windows read {hi_used} elements past the {size} and its padding {hi}"
            ));
        }
        Ok((
            Axis {
                k,
                s,
                lo,
                hi: hi_used,
                drop,
                a,
                b,
            },
            out,
        ))
    }

    /// `s*h + (elements read past s*h)`: the elements of the input that are read.
    fn off(&self) -> usize {
        self.b + self.hi - self.drop
    }

    /// The input's size, in the def's nat variable `v`.
    pub(crate) fn input(&self, v: &str) -> String {
        linear(self.s, v, self.b)
    }

    /// The output's size, in `v`.
    pub(crate) fn output(&self, v: &str) -> String {
        linear(1, v, self.a)
    }
}

/// `s*v + c` as nat text, without the parts that are 1 or 0.
fn linear(s: usize, v: &str, c: usize) -> String {
    let term = if s == 1 {
        v.to_string()
    } else {
        format!("{s}*{v}")
    };
    if c == 0 {
        term
    } else {
        format!("{term}+{c}")
    }
}

/// A size in a type: in parentheses unless it is a name or a number.
fn dim(text: &str) -> String {
    if text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        text.to_string()
    } else {
        format!("({text})")
    }
}

/// An `f32` literal that reads back as the same value.
pub(crate) fn literal(v: f32) -> String {
    if v == f32::MIN {
        return LOWEST.to_string();
    }
    let mut text = format!("{}", v.abs());
    if !text.contains('.') {
        text.push_str(".0");
    }
    if v.is_sign_negative() && v != 0.0 {
        format!("(-{text})")
    } else {
        text
    }
}

/// A number as part of a def's name: `6`, `0p5`, `m1p5`, `0p00001`.
pub(crate) fn name_number(v: f32) -> String {
    format!("{v}").replace('-', "m").replace('.', "p")
}

/// 2-D windows: the rows and the columns of a convolution or a pooling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Window {
    pub rows: Axis,
    pub cols: Axis,
}

impl Window {
    /// `k3x3_s2_p1100` (pads: top, left, bottom, right as read), then `_d1x1` if rows
    /// or columns are never read, `_a2x2` if the output is not `h + 1` at a stride.
    fn name(&self) -> String {
        let (r, c) = (&self.rows, &self.cols);
        let stride = if r.s == c.s {
            format!("{}", r.s)
        } else {
            format!("{}x{}", r.s, c.s)
        };
        let pads = [r.lo, c.lo, r.hi, c.hi];
        let pads = if pads.iter().all(|&p| p < 10) {
            pads.iter().map(|p| p.to_string()).collect::<String>()
        } else {
            pads.map(|p| p.to_string()).join("x")
        };
        let mut name = format!("k{}x{}_s{stride}_p{pads}", r.k, c.k);
        if r.drop + c.drop > 0 {
            name.push_str(&format!("_d{}x{}", r.drop, c.drop));
        }
        let usual = |x: &Axis| x.s == 1 || x.a == 1;
        if !usual(r) || !usual(c) {
            name.push_str(&format!("_a{}x{}", r.a, c.a));
        }
        name
    }

    fn input(&self) -> String {
        format!(
            "{}.{}",
            dim(&self.rows.input("h")),
            dim(&self.cols.input("w"))
        )
    }

    fn output(&self) -> String {
        format!(
            "{}.{}",
            dim(&self.rows.output("h")),
            dim(&self.cols.output("w"))
        )
    }

    /// The windows of one channel `head` (`h.w` as [`Window::input`] says) padded with
    /// `pad`: `(h+a).(w+a).kh.kw`.
    fn of(&self, head: &str, pad: &str, indent: usize) -> String {
        let (r, c) = (&self.rows, &self.cols);
        let mut t = head.to_string();
        if r.drop > 0 {
            t.push_str(&format!(" |> take({})", linear(r.s, "h", r.off())));
        }
        if c.drop > 0 {
            t.push_str(&format!(" |> map(take({}))", linear(c.s, "w", c.off())));
        }
        if c.lo + c.hi > 0 {
            t.push_str(&format!(" |> map(padCst({}, {}, {pad}))", c.lo, c.hi));
        }
        if r.lo + r.hi > 0 {
            t.push_str(&format!(
                " |> padCst({}, {}, generate(fun(i => {pad})))",
                r.lo, r.hi
            ));
        }
        t.push_str(&format!(
            "\n{:indent$}|> map(slide({}, {})) |> slide({}, {}) |> map(transpose)",
            "", c.k, c.s, r.k, r.s
        ));
        t
    }
}

/// A layer's kind and attributes: what one def computes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Def {
    /// A convolution (groups 1) without bias: `x: n.c.H.W`, `wt: k.c.kh.kw`.
    Conv(Window),
    /// A depthwise convolution (groups = channels): `wt: c.1.kh.kw`.
    Depthwise(Window),
    /// A bias per channel: `x: n.k.h.w`, `b: k`.
    BiasNchw,
    /// A bias per column: `x: n.m`, `b: m`.
    BiasNc,
    /// Inference batch normalization with this epsilon (its bits).
    BatchNorm(u32),
    /// `max(x, 0)` elementwise, on an array of this rank.
    Relu(usize),
    /// `min(max(x, lo), hi)` elementwise (bounds' bits), on this rank.
    Clip(Option<u32>, Option<u32>, usize),
    /// The sum of two arrays of this rank.
    Add(usize),
    /// The product by a constant (its bits), on this rank.
    Mul(u32, usize),
    /// Max pooling.
    MaxPool(Window),
    /// Average pooling; `true`: the padding is not counted.
    AvgPool(Window, bool),
    /// The mean of each channel: `n.c.h.w -> n.c.1.1`.
    GlobalAvgPool,
    /// `n.c.h.w -> n.(c*h*w)`.
    Flatten,
    /// `a: n.k`, `b: k.m` (`false`) or `m.k` (`true`, ONNX's `transB`).
    Gemm(bool),
    /// `a: n.k`, `b: k.m`.
    MatMul,
    /// Softmax of each row of `n.m`.
    Softmax,
    /// Concatenation along axis 1 of this many arrays of this rank.
    Concat(usize, usize),
}

/// `_nchw` or `_nc` (or `_rN`): the layout an elementwise def is written for.
fn layout(rank: usize) -> String {
    match rank {
        4 => "_nchw".into(),
        2 => "_nc".into(),
        r => format!("_r{r}"),
    }
}

/// Nat variables naming the sizes of an array of rank `rank` (NCHW order).
fn sizes(rank: usize) -> Vec<String> {
    match rank {
        4 => ["n", "c", "h", "w"].map(String::from).to_vec(),
        2 => ["n", "m"].map(String::from).to_vec(),
        r => (0..r).map(|i| format!("d{i}")).collect(),
    }
}

/// `n.c.h.w.f32` for these sizes.
fn array(sizes: &[String]) -> String {
    let mut t: String = sizes.iter().map(|s| format!("{}.", dim(s))).collect();
    t.push_str("f32");
    t
}

/// `f` applied to every scalar of an array of rank `rank`: `map(map(f))` for 2.
fn elementwise(rank: usize, f: &str) -> String {
    let mut t = f.to_string();
    for _ in 0..rank {
        t = format!("map({t})");
    }
    t
}

impl Def {
    /// The def's name: `KIND` or `KIND_DETAILS`, KIND without an underscore.
    pub(crate) fn name(&self) -> String {
        match self {
            Def::Conv(w) => format!("conv_{}", w.name()),
            Def::Depthwise(w) => format!("depthwise_{}", w.name()),
            Def::BiasNchw => "bias_nchw".into(),
            Def::BiasNc => "bias_nc".into(),
            Def::BatchNorm(eps) => format!("batchnorm_eps{}", name_number(f32::from_bits(*eps))),
            Def::Relu(r) => format!("relu{}", layout(*r)),
            Def::Clip(lo, hi, r) => {
                let bound =
                    |b: &Option<u32>| b.map_or("none".into(), |b| name_number(f32::from_bits(b)));
                format!("clip_{}_{}{}", bound(lo), bound(hi), layout(*r))
            }
            Def::Add(r) => format!("add{}", layout(*r)),
            Def::Mul(c, r) => format!("mul_{}{}", name_number(f32::from_bits(*c)), layout(*r)),
            Def::MaxPool(w) => format!("maxpool_{}", w.name()),
            Def::AvgPool(w, false) => format!("avgpool_{}", w.name()),
            Def::AvgPool(w, true) => format!("avgpool_{}_excl", w.name()),
            Def::GlobalAvgPool => "globalavgpool".into(),
            Def::Flatten => "flatten_nchw".into(),
            Def::Gemm(false) => "gemm".into(),
            Def::Gemm(true) => "gemm_tb".into(),
            Def::MatMul => "matmul".into(),
            Def::Softmax => "softmax_nc".into(),
            Def::Concat(k, r) => format!("concat_{k}{}", layout(*r)),
        }
    }

    /// The def's text.
    pub(crate) fn text(&self) -> String {
        let name = self.name();
        match self {
            Def::Conv(w) => format!(
                "def {name}(x: n.c.{}.f32, wt: k.c.{}.{}.f32) : n.k.{}.f32 =\n\
                 \x20 x |> map(fun(img =>\n\
                 \x20   let nbhs = img\n\
                 \x20     |> map(fun(ch => {}))\n\
                 \x20     |> transpose |> map(transpose) in\n\
                 \x20   wt |> map(fun(wk =>\n\
                 \x20     nbhs |> map(map(fun(nbh =>\n\
                 \x20       zip(join(join(nbh)), join(join(wk)))\n\
                 \x20         |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0))))))))\n",
                w.input(),
                w.rows.k,
                w.cols.k,
                w.output(),
                w.of("ch", "0.0", 23),
            ),
            Def::Depthwise(w) => format!(
                "def {name}(x: n.c.{}.f32, wt: c.1.{}.{}.f32) : n.c.{}.f32 =\n\
                 \x20 x |> map(fun(img =>\n\
                 \x20   zip(img, wt) |> map(fun(cw =>\n\
                 \x20     {} |> map(map(fun(nbh =>\n\
                 \x20       zip(join(nbh), join(join(snd(cw))))\n\
                 \x20         |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0))))))))\n",
                w.input(),
                w.rows.k,
                w.cols.k,
                w.output(),
                w.of("fst(cw)", "0.0", 6),
            ),
            Def::BiasNchw => format!(
                "def {name}(x: n.k.h.w.f32, b: k.f32) : n.k.h.w.f32 =\n\
                 \x20 x |> map(fun(img =>\n\
                 \x20   zip(img, b) |> map(fun(cb => fst(cb) |> map(map(fun(v => v + snd(cb))))))))\n"
            ),
            Def::BiasNc => format!(
                "def {name}(x: n.m.f32, b: m.f32) : n.m.f32 =\n\
                 \x20 x |> map(fun(row => zip(row, b) |> map(fun(p => fst(p) + snd(p)))))\n"
            ),
            Def::BatchNorm(eps) => format!(
                "def {name}(x: n.c.h.w.f32, scale: c.f32, bias: c.f32, mean: c.f32, var: c.f32) : n.c.h.w.f32 =\n\
                 \x20 x |> map(fun(img =>\n\
                 \x20   zip(img, zip(zip(scale, bias), zip(mean, var))) |> map(fun(cp =>\n\
                 \x20     let g = fst(fst(snd(cp))) / sqrt(snd(snd(snd(cp))) + {}) in\n\
                 \x20     fst(cp) |> map(map(fun(v => (v - fst(snd(snd(cp)))) * g + snd(fst(snd(cp))))))))))\n",
                literal(f32::from_bits(*eps))
            ),
            Def::Relu(r) => unary(&name, *r, "max(v, 0.0)"),
            Def::Clip(lo, hi, r) => {
                let mut body = "v".to_string();
                if let Some(lo) = lo {
                    body = format!("max({body}, {})", literal(f32::from_bits(*lo)));
                }
                if let Some(hi) = hi {
                    body = format!("min({body}, {})", literal(f32::from_bits(*hi)));
                }
                unary(&name, *r, &body)
            }
            Def::Mul(c, r) => unary(&name, *r, &format!("v * {}", literal(f32::from_bits(*c)))),
            Def::Add(r) => {
                let ty = array(&sizes(*r));
                // zip(x, y) |> map(fun(q1 => zip(fst(q1), snd(q1)) |> map(fun(q2 => ...
                let mut body = format!("fst(q{r}) + snd(q{r})");
                for i in (1..*r).rev() {
                    body = format!(
                        "zip(fst(q{i}), snd(q{i})) |> map(fun(q{} => {body}))",
                        i + 1
                    );
                }
                format!("def {name}(x: {ty}, y: {ty}) : {ty} =\n  zip(x, y) |> map(fun(q1 => {body}))\n")
            }
            Def::MaxPool(w) => format!(
                "def {name}(x: n.c.{}.f32) : n.c.{}.f32 =\n\
                 \x20 x |> map(map(fun(ch =>\n\
                 \x20   {}\n\
                 \x20     |> map(map(fun(nbh => join(nbh) |> reduce(max, {LOWEST})))))))\n",
                w.input(),
                w.output(),
                w.of("ch", LOWEST, 6),
            ),
            Def::AvgPool(w, false) => format!(
                "def {name}(x: n.c.{}.f32) : n.c.{}.f32 =\n\
                 \x20 x |> map(map(fun(ch =>\n\
                 \x20   {}\n\
                 \x20     |> map(map(fun(nbh => (join(nbh) |> reduce(add, 0.0)) / {}))))))\n",
                w.input(),
                w.output(),
                w.of("ch", "0.0", 6),
                literal((w.rows.k * w.cols.k) as f32),
            ),
            Def::AvgPool(w, true) => format!(
                "def {name}(x: n.c.{}.f32) : n.c.{}.f32 =\n\
                 \x20 x |> map(map(fun(ch =>\n\
                 \x20   let sums = {}\n\
                 \x20     |> map(map(fun(nbh => join(nbh) |> reduce(add, 0.0)))) in\n\
                 \x20   // How many of each window's elements are the input's, not padding.\n\
                 \x20   let counts = {}\n\
                 \x20     |> map(map(fun(nbh => join(nbh) |> reduce(add, 0.0)))) in\n\
                 \x20   zip(sums, counts) |> map(fun(r => zip(fst(r), snd(r)) |> map(fun(p => fst(p) / snd(p))))))))\n",
                w.input(),
                w.output(),
                w.of("ch", "0.0", 6),
                w.of("(ch |> map(map(fun(v => 1.0))))", "0.0", 6),
            ),
            Def::GlobalAvgPool => format!(
                "def {name}(x: n.c.h.w.f32) : n.c.1.1.f32 =\n\
                 \x20 x |> map(map(fun(ch =>\n\
                 \x20   let total = join(ch) |> reduce(add, 0.0) in\n\
                 \x20   // h*w as an f32: the def is generic in the sizes.\n\
                 \x20   let count = join(ch) |> map(fun(v => 1.0)) |> reduce(add, 0.0) in\n\
                 \x20   [[total / count]])))\n"
            ),
            Def::Flatten => format!(
                "def {name}(x: n.c.h.w.f32) : n.(c*h*w).f32 =\n\
                 \x20 x |> map(fun(img => join(join(img))))\n"
            ),
            Def::Gemm(false) | Def::MatMul => format!(
                "def {name}(a: n.k.f32, b: k.m.f32) : n.m.f32 =\n\
                 \x20 a |> map(fun(arow =>\n\
                 \x20   transpose(b) |> map(fun(bcol =>\n\
                 \x20     zip(arow, bcol) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))))\n"
            ),
            Def::Gemm(true) => format!(
                "def {name}(a: n.k.f32, bt: m.k.f32) : n.m.f32 =\n\
                 \x20 // transB: the weights are m.k, the product's b is transpose(bt).\n\
                 \x20 a |> map(fun(arow =>\n\
                 \x20   transpose(transpose(bt)) |> map(fun(bcol =>\n\
                 \x20     zip(arow, bcol) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))))\n"
            ),
            Def::Softmax => format!(
                "def {name}(x: n.m.f32) : n.m.f32 =\n\
                 \x20 x |> map(fun(row =>\n\
                 \x20   let top = row |> reduce(max, {LOWEST}) in\n\
                 \x20   let e = row |> map(fun(v => exp(v - top))) |> toMem in\n\
                 \x20   let total = e |> reduce(add, 0.0) in\n\
                 \x20   e |> map(fun(v => v / total))))\n"
            ),
            Def::Concat(k, r) => concat(&name, *k, *r),
        }
    }
}

/// `def NAME(x: T) : T = x |> map(...(fun(v => BODY)))`.
fn unary(name: &str, rank: usize, body: &str) -> String {
    let ty = array(&sizes(rank));
    format!(
        "def {name}(x: {ty}) : {ty} =\n  x |> {}\n",
        elementwise(rank, &format!("fun(v => {body})"))
    )
}

/// The concatenation of `k` arrays along axis 1: `zip(x1, zip(x2, x3))` and, of each
/// image, `concat(concat(x1, x2), x3)`.
fn concat(name: &str, k: usize, rank: usize) -> String {
    let mut dims = sizes(rank);
    let params: Vec<String> = (1..=k)
        .map(|i| {
            dims[1] = format!("c{i}");
            format!("x{i}: {}", array(&dims))
        })
        .collect();
    dims[1] = (1..=k)
        .map(|i| format!("c{i}"))
        .collect::<Vec<_>>()
        .join("+");
    let result = array(&dims);
    let mut zipped = format!("x{k}");
    for i in (1..k).rev() {
        zipped = format!("zip(x{i}, {zipped})");
    }
    // The i-th image of the zip: fst(p), fst(snd(p)), ..., snd(...snd(p)).
    let part = |i: usize| {
        let mut t = "p".to_string();
        for _ in 1..i {
            t = format!("snd({t})");
        }
        if i < k {
            format!("fst({t})")
        } else {
            t
        }
    };
    let mut body = part(1);
    for i in 2..=k {
        body = format!("concat({body}, {})", part(i));
    }
    format!(
        "def {name}({}) : {result} =\n  {zipped} |> map(fun(p => {body}))\n",
        params.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_as_the_examples_write_them() {
        // conv2d_stride2.rise: 28 rows, 3 at stride 2, padding 1: (2h+2) -> (h+1).
        let (a, out) = Axis::new(28, 3, 2, 1, 1).unwrap();
        assert_eq!(
            (out, a.input("h"), a.output("h"), a.lo, a.hi, a.drop),
            (14, "2*h+2".into(), "h+1".into(), 1, 0, 0)
        );
        // conv2d_nchw.rise: 3 at stride 1, padding 1: h -> h.
        let (a, out) = Axis::new(56, 3, 1, 1, 1).unwrap();
        assert_eq!(
            (out, a.input("h"), a.output("h"), a.hi),
            (56, "h".into(), "h".into(), 1)
        );
        // 1x1 at stride 2 over 8: 4 out, the last row never read.
        let (a, out) = Axis::new(8, 1, 2, 0, 0).unwrap();
        assert_eq!(
            (out, a.input("h"), a.drop, a.off()),
            (4, "2*h+2".into(), 1, 1)
        );
        // 7x7 at stride 2, padding 3, over 16: 8 out, 2 of the 3 trailing pads read.
        let (a, out) = Axis::new(16, 7, 2, 3, 3).unwrap();
        assert_eq!((out, a.input("h"), a.lo, a.hi), (8, "2*h+2".into(), 3, 2));
        // A valid 3x3: h+2 -> h.
        let (a, out) = Axis::new(10, 3, 1, 0, 0).unwrap();
        assert_eq!(
            (out, a.input("h"), a.output("h")),
            (8, "h+2".into(), "h".into())
        );
        assert!(Axis::new(2, 5, 1, 0, 0).is_err());
    }

    #[test]
    fn literals_and_name_numbers() {
        assert_eq!(literal(6.0), "6.0");
        assert_eq!(literal(-1.5), "(-1.5)");
        assert_eq!(literal(1e-5), "0.00001");
        assert_eq!(literal(f32::MIN), LOWEST);
        assert_eq!(name_number(-1.5), "m1p5");
        assert_eq!(name_number(1e-5), "0p00001");
    }
}
