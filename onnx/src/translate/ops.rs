//! Each operator's translation: its attributes and inputs checked, its layers made.

use super::{elements, Arg, State, Val, OPERATORS};
use crate::attrs::{window, Attrs, WindowAttrs};
use crate::defs::{Axis, Def, Window};
use crate::error::{shape as shape_error, unsupported, unsupported_attr, ImportErrorKind};
use crate::model::{constant, Const, ConstData, Node};

impl State<'_> {
    pub(super) fn node(&mut self, node: &Node, base: usize) -> Result<(), ImportErrorKind> {
        let at = &node.at;
        if !matches!(node.proto.domain(), "" | "ai.onnx") {
            return Err(unsupported(
                at,
                format!(
                    "the domain `{}` is not supported (only ONNX's own)",
                    node.proto.domain()
                ),
            ));
        }
        let list = &node.proto.attribute;
        match at.op.as_str() {
            "Conv" => {
                let a = Attrs::new(
                    at,
                    list,
                    &[
                        "auto_pad",
                        "dilations",
                        "group",
                        "kernel_shape",
                        "pads",
                        "strides",
                    ],
                )?;
                self.conv(node, &a)
            }
            "BatchNormalization" => {
                let a = Attrs::new(at, list, &["epsilon", "momentum", "training_mode"])?;
                a.int_is("training_mode", 0)?;
                let (x, s) = self.act(node, 0)?;
                let c = rank(node, &s, &[4])?[1];
                let mut args = vec![x];
                for i in 1..5 {
                    let w = self
                        .konst(node, i)?
                        .ok_or_else(|| shape_error(at, format!("its input {i} is missing")))?;
                    if self.consts[w].elements() != c {
                        return Err(shape_error(at, format!(
                            "its input {i} `{}` has shape {:?}; {c} values (one per channel) are needed",
                            self.consts[w].name, self.consts[w].shape)));
                    }
                    args.push(self.param(node, w, vec![c])?);
                }
                let eps = a.float("epsilon", 1e-5);
                if !(eps.is_finite() && eps >= 0.0) {
                    return Err(a.error(
                        "epsilon",
                        format!("{eps} is not a small non-negative number"),
                    ));
                }
                let flops = 2.0 * elements(&s);
                let out = self.layer(node, Def::BatchNorm(eps.to_bits()), args, s.clone(), flops);
                self.output(node, Val::Act(out, s))
            }
            "Relu" => {
                Attrs::new(at, list, &[])?;
                let (x, s) = self.act(node, 0)?;
                let r = rank(node, &s, &[2, 4])?.len();
                let out = self.layer(node, Def::Relu(r), vec![x], s.clone(), elements(&s));
                self.output(node, Val::Act(out, s))
            }
            "Clip" => {
                Attrs::new(at, list, &[])?;
                let (x, s) = self.act(node, 0)?;
                let r = rank(node, &s, &[2, 4])?.len();
                let mut bounds = [None, None];
                for (i, bound) in bounds.iter_mut().enumerate() {
                    if let Some(c) = self.konst(node, i + 1)? {
                        let v = self.consts[c].scalar().ok_or_else(|| {
                            unsupported(
                                at,
                                format!("its bound `{}` is not one float", self.consts[c].name),
                            )
                        })?;
                        if v.is_nan() {
                            return Err(unsupported(at, "a bound is NaN"));
                        }
                        *bound = v.is_finite().then_some(v.to_bits());
                    }
                }
                let out = self.layer(
                    node,
                    Def::Clip(bounds[0], bounds[1], r),
                    vec![x],
                    s.clone(),
                    elements(&s),
                );
                self.output(node, Val::Act(out, s))
            }
            "Add" => {
                Attrs::new(at, list, &[])?;
                self.add(node)
            }
            "Mul" => {
                Attrs::new(at, list, &[])?;
                let (x, s, c) = match (self.input(node, 0)?, self.input(node, 1)?) {
                    (Some(Val::Act(x, s)), Some(Val::Const(c)))
                    | (Some(Val::Const(c)), Some(Val::Act(x, s))) => (x, s, c),
                    _ => {
                        return Err(unsupported(
                            at,
                            "only a product of an activation by a constant is supported",
                        ))
                    }
                };
                let r = rank(node, &s, &[2, 4])?.len();
                let v = self.consts[c].scalar().ok_or_else(|| {
                    unsupported(
                        at,
                        format!(
                    "the constant `{}` has shape {:?}; only a product by one number is supported",
                    self.consts[c].name, self.consts[c].shape),
                    )
                })?;
                if !v.is_finite() {
                    return Err(unsupported(at, format!("a product by {v}")));
                }
                let out = self.layer(
                    node,
                    Def::Mul(v.to_bits(), r),
                    vec![x],
                    s.clone(),
                    elements(&s),
                );
                self.output(node, Val::Act(out, s))
            }
            "MaxPool" | "AveragePool" => {
                let max = at.op == "MaxPool";
                let allowed: &[&str] = if max {
                    &[
                        "auto_pad",
                        "ceil_mode",
                        "dilations",
                        "kernel_shape",
                        "pads",
                        "storage_order",
                        "strides",
                    ]
                } else {
                    &[
                        "auto_pad",
                        "ceil_mode",
                        "count_include_pad",
                        "dilations",
                        "kernel_shape",
                        "pads",
                        "strides",
                    ]
                };
                let a = Attrs::new(at, list, allowed)?;
                a.int_is("ceil_mode", 0)?;
                a.int_is("storage_order", 0)?;
                let (x, s) = self.act(node, 0)?;
                rank(node, &s, &[4])?;
                let w = window(&a, None, [s[2], s[3]])?;
                let (win, oh, ow) = axes(node, &s, &w)?;
                let out_shape = vec![s[0], s[1], oh, ow];
                let def = if max {
                    Def::MaxPool(win)
                } else {
                    let exclude = a.int("count_include_pad", 0) == 0;
                    let padded = win.rows.lo + win.rows.hi + win.cols.lo + win.cols.hi > 0;
                    Def::AvgPool(win, exclude && padded)
                };
                let flops = elements(&out_shape) * (w.kernel[0] * w.kernel[1]) as f64;
                let out = self.layer(node, def, vec![x], out_shape.clone(), flops);
                self.output(node, Val::Act(out, out_shape))
            }
            "GlobalAveragePool" => {
                Attrs::new(at, list, &[])?;
                let (x, s) = self.act(node, 0)?;
                rank(node, &s, &[4])?;
                let out_shape = vec![s[0], s[1], 1, 1];
                let out = self.layer(
                    node,
                    Def::GlobalAvgPool,
                    vec![x],
                    out_shape.clone(),
                    elements(&s),
                );
                self.output(node, Val::Act(out, out_shape))
            }
            "Flatten" => {
                let a = Attrs::new(at, list, &["axis"])?;
                let (x, s) = self.act(node, 0)?;
                let axis = a.int("axis", 1);
                if axis != 1 {
                    return Err(a.error("axis", format!("{axis}: only 1 is supported")));
                }
                self.flatten(node, x, s)
            }
            "Reshape" => {
                let a = Attrs::new(at, list, &["allowzero"])?;
                let (x, s) = self.act(node, 0)?;
                let c = self
                    .konst(node, 1)?
                    .ok_or_else(|| shape_error(at, "its shape input is missing"))?;
                let target = self.consts[c]
                    .i64s()
                    .ok_or_else(|| unsupported(at, "its shape is not int64"))?;
                let target = reshaped(&s, target, a.int("allowzero", 0) == 1)
                    .map_err(|m| shape_error(at, m))?;
                if target == s {
                    return self.output(node, Val::Act(x, s));
                }
                if s.len() == 4 && target == [s[0], s[1] * s[2] * s[3]] {
                    return self.flatten(node, x, s);
                }
                Err(unsupported(at, format!(
                    "a reshape of {s:?} to {target:?}; only to the 2-D shape Flatten gives is supported")))
            }
            "Gemm" | "MatMul" => self.product(node),
            "Softmax" => {
                let a = Attrs::new(at, list, &["axis"])?;
                let (x, s) = self.act(node, 0)?;
                rank(node, &s, &[2])?;
                let axis = a.int("axis", -1);
                if axis != -1 && axis != 1 {
                    return Err(a.error("axis", format!("{axis}: only the last axis is supported")));
                }
                let out = self.layer(node, Def::Softmax, vec![x], s.clone(), 4.0 * elements(&s));
                self.output(node, Val::Act(out, s))
            }
            "Concat" => {
                let a = Attrs::new(at, list, &["axis"])?;
                self.concat(node, &a)
            }
            "Identity" | "Dropout" => {
                if at.op == "Dropout" {
                    Attrs::new(at, list, &["seed"])?;
                    if let Some(c) = self.konst(node, 2)? {
                        if self.constant_bool(c).unwrap_or(true) {
                            return Err(unsupported(
                                at,
                                "training_mode is on (only inference is supported)",
                            ));
                        }
                    }
                } else {
                    Attrs::new(at, list, &[])?;
                }
                let v = self
                    .input(node, 0)?
                    .ok_or_else(|| shape_error(at, "its input is missing"))?;
                self.output(node, v)
            }
            "Constant" => {
                let a = Attrs::new(
                    at,
                    list,
                    &[
                        "value",
                        "value_float",
                        "value_floats",
                        "value_int",
                        "value_ints",
                    ],
                )?;
                self.constant(node, &a, base)
            }
            other => Err(unsupported(
                at,
                format!(
                    "the operator `{other}` is not supported (supported: {})",
                    OPERATORS.join(", ")
                ),
            )),
        }
    }

    /// A boolean constant's value (`Dropout`'s `training_mode`), if it is one.
    fn constant_bool(&self, c: usize) -> Option<bool> {
        let k = &self.consts[c];
        match &k.data {
            ConstData::I64(v) => v.first().map(|&x| x != 0),
            _ => None,
        }
    }

    fn constant(&mut self, node: &Node, a: &Attrs<'_>, base: usize) -> Result<(), ImportErrorKind> {
        let at = &node.at;
        let name = node.proto.output.first().cloned().unwrap_or_default();
        let order = base + at.index;
        let c = if let Some(t) = a.tensor("value") {
            let mut t = t.clone();
            t.name = Some(name.clone());
            constant(t, order, self.path)?
        } else if a.has("value_float") {
            Const {
                name: name.clone(),
                shape: vec![],
                data: ConstData::F32(vec![a.float("value_float", 0.0)].into()),
                order,
            }
        } else if let Some(v) = a.floats("value_floats") {
            Const {
                name: name.clone(),
                shape: vec![v.len()],
                data: ConstData::F32(v.into()),
                order,
            }
        } else if a.has("value_int") {
            Const {
                name: name.clone(),
                shape: vec![],
                data: ConstData::I64(vec![a.int("value_int", 0)]),
                order,
            }
        } else if let Some(v) = a.ints("value_ints") {
            Const {
                name: name.clone(),
                shape: vec![v.len()],
                data: ConstData::I64(v.to_vec()),
                order,
            }
        } else {
            return Err(unsupported_attr(
                at,
                "value",
                "a Constant without a value this importer reads",
            ));
        };
        self.consts.push(c);
        self.output(node, Val::Const(self.consts.len() - 1))
    }

    fn conv(&mut self, node: &Node, a: &Attrs<'_>) -> Result<(), ImportErrorKind> {
        let at = &node.at;
        let (x, s) = self.act(node, 0)?;
        rank(node, &s, &[4])?;
        let w = self
            .konst(node, 1)?
            .ok_or_else(|| shape_error(at, "its weights are missing"))?;
        let ws = self.consts[w].shape.clone();
        if ws.len() != 4 {
            return Err(shape_error(
                at,
                format!("its weights have shape {ws:?}; 4 sizes are needed"),
            ));
        }
        let (n, c) = (s[0], s[1]);
        let group = a.int("group", 1);
        let depthwise = group != 1;
        if depthwise && !(group == c as i64 && ws[0] == c && ws[1] == 1) {
            return Err(a.error("group", format!(
                "{group} with weights {ws:?} on {c} channels: only 1 or the channel count (depthwise, weights {c}x1xKxK) is supported")));
        }
        if !depthwise && ws[1] != c {
            return Err(shape_error(
                at,
                format!(
                    "its weights {ws:?} are for {} input channels, its input {s:?} has {c}",
                    ws[1]
                ),
            ));
        }
        let wa = window(a, Some([ws[2], ws[3]]), [s[2], s[3]])?;
        let (win, oh, ow) = axes(node, &s, &wa)?;
        let k = ws[0];
        let out_shape = vec![n, k, oh, ow];
        let weights = self.param(node, w, ws.clone())?;
        let taps = (ws[1] * ws[2] * ws[3]) as f64;
        let flops = 2.0 * elements(&out_shape) * taps;
        let def = if depthwise {
            Def::Depthwise(win)
        } else {
            Def::Conv(win)
        };
        let mut out = self.layer(node, def, vec![x, weights], out_shape.clone(), flops);
        if let Some(b) = self.konst(node, 2)? {
            if self.consts[b].shape != [k] {
                return Err(shape_error(
                    at,
                    format!(
                        "its bias has shape {:?}; [{k}] is needed",
                        self.consts[b].shape
                    ),
                ));
            }
            let bias = self.param(node, b, vec![k])?;
            out = self.layer(
                node,
                Def::BiasNchw,
                vec![out, bias],
                out_shape.clone(),
                elements(&out_shape),
            );
        }
        self.output(node, Val::Act(out, out_shape))
    }

    fn add(&mut self, node: &Node) -> Result<(), ImportErrorKind> {
        let at = &node.at;
        match (self.input(node, 0)?, self.input(node, 1)?) {
            (Some(Val::Act(x, s)), Some(Val::Act(y, t))) => {
                let r = rank(node, &s, &[2, 4])?.len();
                if s != t {
                    return Err(unsupported(at, format!(
                        "an addition of {s:?} and {t:?}; only of equal shapes (or of a bias) is supported")));
                }
                let out = self.layer(node, Def::Add(r), vec![x, y], s.clone(), elements(&s));
                self.output(node, Val::Act(out, s))
            }
            (Some(Val::Act(x, s)), Some(Val::Const(c)))
            | (Some(Val::Const(c)), Some(Val::Act(x, s))) => {
                let cs = self.consts[c].shape.clone();
                // Broadcast as NumPy does (sizes aligned on the right): a bias per
                // channel is [k, 1, 1] or [1, k, 1, 1] on NCHW, per column [m] or
                // [1, m] on NC.
                let k = s[1];
                let def = match s.len() {
                    4 if cs == [k, 1, 1] || cs == [1, k, 1, 1] => Def::BiasNchw,
                    2 if cs == [k] || cs == [1, k] => Def::BiasNc,
                    _ => return Err(unsupported(at, format!(
                        "an addition of {s:?} and the constant `{}` of {cs:?}; only a bias per channel (NCHW) or per column (NC) is supported",
                        self.consts[c].name))),
                };
                let b = self.param(node, c, vec![k])?;
                let out = self.layer(node, def, vec![x, b], s.clone(), elements(&s));
                self.output(node, Val::Act(out, s))
            }
            _ => Err(unsupported(
                at,
                "an addition of constants (or of a missing input)",
            )),
        }
    }

    fn flatten(&mut self, node: &Node, x: Arg, s: Vec<usize>) -> Result<(), ImportErrorKind> {
        match s.len() {
            2 => self.output(node, Val::Act(x, s)),
            4 => {
                let out_shape = vec![s[0], s[1] * s[2] * s[3]];
                let out = self.layer(node, Def::Flatten, vec![x], out_shape.clone(), 0.0);
                self.output(node, Val::Act(out, out_shape))
            }
            _ => Err(shape_error(
                &node.at,
                format!("its input has shape {s:?}; NCHW or NC is needed"),
            )),
        }
    }

    fn product(&mut self, node: &Node) -> Result<(), ImportErrorKind> {
        let at = &node.at;
        let gemm = at.op == "Gemm";
        let trans_b = if gemm {
            let a = Attrs::new(
                at,
                &node.proto.attribute,
                &["alpha", "beta", "transA", "transB"],
            )?;
            for name in ["alpha", "beta"] {
                let v = a.float(name, 1.0);
                if v != 1.0 {
                    return Err(a.error(name, format!("{v}: only 1 is supported")));
                }
            }
            a.int_is("transA", 0)?;
            match a.int("transB", 0) {
                0 => false,
                1 => true,
                t => return Err(a.error("transB", format!("{t} is not 0 or 1"))),
            }
        } else {
            Attrs::new(at, &node.proto.attribute, &[])?;
            false
        };
        let (x, s) = self.act(node, 0)?;
        rank(node, &s, &[2])?;
        let (b, bs) = match self.input(node, 1)? {
            Some(Val::Act(b, bs)) => (b, bs),
            Some(Val::Const(c)) => {
                let bs = self.consts[c].shape.clone();
                if bs.len() != 2 {
                    return Err(shape_error(
                        at,
                        format!("its second input has shape {bs:?}; a matrix is needed"),
                    ));
                }
                (self.param(node, c, bs.clone())?, bs)
            }
            None => return Err(shape_error(at, "its second input is missing")),
        };
        let (k, m) = if trans_b {
            (bs[1], bs[0])
        } else {
            (bs[0], *bs.get(1).unwrap_or(&0))
        };
        if bs.len() != 2 || k != s[1] {
            return Err(shape_error(
                at,
                format!(
                    "a product of {s:?} and {bs:?}{}: the sizes do not fit",
                    if trans_b { " (transposed)" } else { "" }
                ),
            ));
        }
        let out_shape = vec![s[0], m];
        let def = if gemm {
            Def::Gemm(trans_b)
        } else {
            Def::MatMul
        };
        let flops = 2.0 * elements(&[s[0], k, m]);
        let mut out = self.layer(node, def, vec![x, b], out_shape.clone(), flops);
        if gemm {
            if let Some(c) = self.konst(node, 2)? {
                let cs = self.consts[c].shape.clone();
                if !matches!(cs.as_slice(), [n] | [1, n] if *n == m) {
                    return Err(unsupported(at, format!(
                        "its C `{}` has shape {cs:?}; only a bias of [{m}] or [1, {m}] is supported", self.consts[c].name)));
                }
                let bias = self.param(node, c, vec![m])?;
                out = self.layer(
                    node,
                    Def::BiasNc,
                    vec![out, bias],
                    out_shape.clone(),
                    elements(&out_shape),
                );
            }
        }
        self.output(node, Val::Act(out, out_shape))
    }

    fn concat(&mut self, node: &Node, a: &Attrs<'_>) -> Result<(), ImportErrorKind> {
        let at = &node.at;
        let mut parts = Vec::new();
        for i in 0..node.proto.input.len() {
            parts.push(self.act(node, i)?);
        }
        let Some((_, first)) = parts.first().cloned() else {
            return Err(shape_error(at, "it has no inputs"));
        };
        let r = rank(node, &first, &[2, 4])?.len();
        let axis = a.int("axis", 1);
        if axis != 1 && axis != 1 - r as i64 {
            return Err(a.error(
                "axis",
                format!("{axis}: only along the channels (axis 1) is supported"),
            ));
        }
        let mut channels = 0;
        for (_, s) in &parts {
            let same = s.len() == r
                && s.iter()
                    .zip(&first)
                    .enumerate()
                    .all(|(i, (x, y))| i == 1 || x == y);
            if !same {
                return Err(shape_error(
                    at,
                    format!(
                    "it concatenates {first:?} and {s:?}: all sizes but the channels must agree"),
                ));
            }
            channels += s[1];
        }
        if parts.len() == 1 {
            let (x, s) = parts.remove(0);
            return self.output(node, Val::Act(x, s));
        }
        let mut out_shape = first.clone();
        out_shape[1] = channels;
        let args = parts.iter().map(|(x, _)| *x).collect();
        let out = self.layer(
            node,
            Def::Concat(parts.len(), r),
            args,
            out_shape.clone(),
            0.0,
        );
        self.output(node, Val::Act(out, out_shape))
    }
}

/// The shape, if its rank is one of `ranks`.
fn rank<'s>(node: &Node, s: &'s [usize], ranks: &[usize]) -> Result<&'s [usize], ImportErrorKind> {
    if ranks.contains(&s.len()) {
        Ok(s)
    } else {
        Err(shape_error(
            &node.at,
            format!(
                "its input has shape {s:?}; {} is needed",
                ranks
                    .iter()
                    .map(|r| match r {
                        4 => "NCHW (rank 4)".to_string(),
                        2 => "NC (rank 2)".to_string(),
                        r => format!("rank {r}"),
                    })
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        ))
    }
}

/// The window's axes over the input `s` and the output's height and width.
fn axes(
    node: &Node,
    s: &[usize],
    w: &WindowAttrs,
) -> Result<(Window, usize, usize), ImportErrorKind> {
    let axis = |i: usize| {
        Axis::new(
            s[2 + i],
            w.kernel[i],
            w.strides[i],
            w.pads[i],
            w.pads[i + 2],
        )
        .map_err(|m| shape_error(&node.at, format!("{} {m}", ["rows:", "columns:"][i])))
    };
    let (rows, oh) = axis(0)?;
    let (cols, ow) = axis(1)?;
    Ok((Window { rows, cols }, oh, ow))
}

/// ONNX's `Reshape` of `s` to `target` (0: the input's size there, -1: what is left).
/// With `allowzero`, a 0 is a size 0.
fn reshaped(s: &[usize], target: &[i64], allowzero: bool) -> Result<Vec<usize>, String> {
    let total: usize = s.iter().product();
    let mut out = Vec::new();
    let mut infer = None;
    for (i, &t) in target.iter().enumerate() {
        match t {
            0 if allowzero => out.push(0),
            0 => out.push(
                *s.get(i)
                    .ok_or_else(|| format!("a 0 at {i} beyond the input's rank"))?,
            ),
            -1 if infer.is_none() => {
                infer = Some(i);
                out.push(1);
            }
            t if t > 0 => out.push(t as usize),
            t => return Err(format!("the shape {target:?} has {t}")),
        }
    }
    let fail = || format!("{s:?} cannot be reshaped to {target:?}");
    let known = out
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(fail)?;
    if let Some(i) = infer {
        if known == 0 || !total.is_multiple_of(known) {
            return Err(fail());
        }
        out[i] = total / known;
    } else if known != total {
        return Err(fail());
    }
    Ok(out)
}
