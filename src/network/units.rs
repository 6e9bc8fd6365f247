//! A network as units of compilation: each unit one layer, or a layer and the
//! elementwise layers after it fused into it (`network`), written as a RISE function
//! of what the unit reads, with the strategy it is compiled with.

use super::strategy::{Assigned, NetworkStrategy, StrategyError};
use super::{dims, Network, Source};
use elevate_rise::search::library::{
    conv_kernel, conv_kernel_small, elementwise, micro_kernel, reduction_tiles, taps_unrolled,
    PARALLEL, POOLING, SMALL_IMAGE,
};
use elevate_rise::Type;
use std::collections::HashMap;

/// Kinds that follow a layer elementwise: `network` fuses them into it.
const FOLLOWERS: &[&str] = &["bias", "batchnorm", "relu", "clip", "add", "mul"];

/// The most layers one unit fuses: a network's epilogues are a few layers long, and a
/// longer chain (a program of 100,000 ReLUs) is units of this many, compiled once.
const MAX_FUSED: usize = 8;

/// Kinds whose library schedule is a kernel of its own: what follows them is a unit
/// after them (and what a network search searches, `network_search`).
pub const KERNELS: &[&str] = &["conv", "depthwise", "gemm", "matmul", "maxpool", "avgpool"];

/// One unit: the layers it computes (consecutive, each reading the one before), what
/// it reads, its RISE function and its strategies, best first.
#[derive(Debug, Clone)]
pub struct Unit {
    /// The layers, in order; the unit's result is the last one's.
    pub layers: Vec<usize>,
    /// What it reads: activations and weights, in parameter order.
    pub reads: Vec<Source>,
    /// The unit as RISE source: the network's definitions, then `def unit(...)`.
    pub source: String,
    /// The strategies to try, in order (strategy text; `id` is `defaultLowering`
    /// alone).
    pub strategies: Vec<String>,
    /// Whether its program is its layer in another form than the layer's definition
    /// (a pointwise convolution as the product it is): a strategy written for the
    /// definition does not apply to it.
    pub reformed: bool,
}

/// The units of a network under a strategy.
#[derive(Debug, Clone)]
pub struct UnitPlan {
    /// The units, in the order they run.
    pub units: Vec<Unit>,
}

impl UnitPlan {
    /// Plans `network` under `strategy` for a machine with `lanes` f32 lanes per
    /// vector register; an error where the strategy names a layer or a kind the
    /// network does not have.
    pub fn new(
        network: &Network,
        strategy: &NetworkStrategy,
        lanes: u32,
    ) -> Result<UnitPlan, StrategyError> {
        let layers = network.layers();
        if let Some(i) = strategy.named_layers().find(|i| *i >= layers.len()) {
            return Err(StrategyError(format!(
                "layer({i}, ...): the network has {} layers (0 to {})",
                layers.len(),
                layers.len().saturating_sub(1)
            )));
        }
        if let Some(k) = strategy
            .named_kinds()
            .find(|k| !layers.iter().any(|l| l.kind == *k))
        {
            let mut kinds: Vec<&str> = layers.iter().map(|l| l.kind.as_str()).collect();
            kinds.sort_unstable();
            kinds.dedup();
            return Err(StrategyError(format!(
                "layers(\"{k}\", ...): the network has no layer of that kind (it has {})",
                kinds.join(", ")
            )));
        }
        let readers = network.readers();
        let assigned: Vec<Assigned> = layers
            .iter()
            .enumerate()
            .map(|(i, l)| strategy.assigned(i, &l.kind))
            .collect();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (i, layer) in layers.iter().enumerate() {
            // What follows a layer elementwise is one unit with it. A follower of a
            // product or a convolution starts a unit of its own (the library's
            // kernels of those keep their own loop nests: fused, `convKernel`'s
            // epilogue ran 17x slower, measured), the rest of the followers join it.
            let follower = |k: &str| FOLLOWERS.contains(&k);
            let fusable = assigned[i] == Assigned::Library
                && follower(&layer.kind)
                && groups.last().is_some_and(|g| {
                    let last = *g.last().unwrap_or(&usize::MAX);
                    assigned[g[0]] == Assigned::Library
                        && (follower(&layers[g[0]].kind)
                            || !KERNELS.contains(&layers[g[0]].kind.as_str()))
                        && readers[last] == 1
                        && g.len() < MAX_FUSED
                        && layer.args.contains(&Source::Layer(last))
                });
            match groups.last_mut() {
                Some(g) if fusable => g.push(i),
                _ => groups.push(vec![i]),
            }
        }
        let definitions = network.definitions_text();
        let units = groups
            .into_iter()
            .map(|g| unit(network, &definitions, g, &assigned, lanes))
            .collect();
        Ok(UnitPlan { units })
    }
}

/// The unit of `layers`, with its strategies.
fn unit(
    network: &Network,
    definitions: &str,
    layers: Vec<usize>,
    assigned: &[Assigned],
    lanes: u32,
) -> Unit {
    let mut reads: Vec<Source> = Vec::new();
    let mut exprs: HashMap<usize, String> = HashMap::new();
    for &i in &layers {
        let layer = &network.layers()[i];
        let args: Vec<String> = layer
            .args
            .iter()
            .map(|a| match a {
                Source::Layer(k) if exprs.contains_key(k) => exprs[k].clone(),
                other => {
                    let at = reads.iter().position(|r| r == other).unwrap_or_else(|| {
                        reads.push(*other);
                        reads.len() - 1
                    });
                    format!("unit_arg{at}")
                }
            })
            .collect();
        exprs.insert(i, format!("{}({})", layer.def, args.join(", ")));
    }
    if let ([only], Assigned::Library) = (&layers[..], &assigned[layers[0]]) {
        if let Some(product) = Product::of(network, *only) {
            let source = format!("{definitions}\n{}", product.source());
            return Unit {
                layers,
                reads,
                source,
                strategies: vec![micro_kernel(product.k, product.pixels, lanes), "id".into()],
                reformed: true,
            };
        }
    }
    let last = *layers.last().unwrap_or(&0);
    let params: Vec<String> = reads
        .iter()
        .enumerate()
        .map(|(k, r)| format!("unit_arg{k}: {}", network.type_of(*r)))
        .collect();
    let source = format!(
        "{definitions}\ndef unit({}) = {}\n",
        params.join(", "),
        exprs[&last]
    );
    let head = &network.layers()[layers[0]];
    let strategies = match &assigned[layers[0]] {
        Assigned::Explicit(s) => vec![s.clone()],
        Assigned::Lowering => vec!["id".to_string()],
        Assigned::Library => {
            let input = head.args.first().map(|a| network.type_of(*a).clone());
            let input = input.unwrap_or_else(|| head.ty.clone());
            let outputs = dims(&head.ty).iter().product::<i64>().max(1) as f64;
            let taps = (network.layer_multiply_adds(layers[0]) / outputs).round() as i64;
            let mut s = library(&head.kind, &head.ty, &input, taps, lanes);
            s.push("id".to_string());
            s
        }
    };
    Unit {
        layers,
        reads,
        source,
        strategies,
        reformed: false,
    }
}

/// A 1x1 convolution of stride 1 without padding at batch 1, `k` channels of `c`,
/// `pixels` of them, as the product it is: its weights a `k x c` matrix times its
/// image a `c x pixels` one, each the same memory as the tensor it is (row-major), the
/// result the `k x pixels` image. `microKernel` then writes the result once, in the
/// network's layout, where `convKernel` writes it channel-blocked and copies it out.
/// Measured on AVX-512, one thread, inside the networks against the library's
/// `convKernel`: faster on images of 56x56 or more with at most 144 input channels
/// (MobileNetV2's 16 to 96 channels at 112x112 0.91 ms against 1.52, 24 to 144 at
/// 56x56 0.33 against 0.60; ResNet-50's 64 to 256 at 56x56 1.47 against 1.92). Alone,
/// it was slower on 14x14 and 28x28 (1024 to 256 at 14x14 0.92 against 0.74), and in
/// the networks on 7x7, against `convKernel` on the joined pixels (ResNet-50's 512 to
/// 2048, 1.48 against 1.22): those keep `convKernel`.
struct Product {
    c: i64,
    k: i64,
    pixels: i64,
}

impl Product {
    /// The layer `layer` of `network` as a product, where it is such a convolution and
    /// the product is the faster form (above).
    fn of(network: &Network, layer: usize) -> Option<Product> {
        let l = &network.layers()[layer];
        let (Some(x), Some(w)) = (l.args.first(), l.args.get(1)) else {
            return None;
        };
        let (x, w, y) = (
            dims(network.type_of(*x)),
            dims(network.type_of(*w)),
            dims(&l.ty),
        );
        let ([1, c, h, wd], [k, c2, 1, 1], [1, k2, h2, w2]) = (&x[..], &w[..], &y[..]) else {
            return None;
        };
        let shaped = l.kind == "conv"
            && l.def.starts_with("conv_k1x1_s1_p0000")
            && l.args.len() == 2
            && matches!(l.args.get(1), Some(Source::Weight(_)))
            && c == c2
            && k == k2
            && (h, wd) == (h2, w2);
        let pixels = h * wd;
        let faster = pixels >= 3136 && *c <= 144;
        (shaped && faster).then_some(Product {
            c: *c,
            k: *k,
            pixels,
        })
    }

    /// The unit's definition: `unit(image: c.pixels, weights: k.c) : k.pixels`.
    fn source(&self) -> String {
        let Product { c, k, pixels } = self;
        format!(
            "def unit(unit_arg0: {c}.{pixels}.f32, unit_arg1: {k}.{c}.f32) : {k}.{pixels}.f32 =
  unit_arg1 |> map(fun(row => transpose(unit_arg0) |> map(fun(column =>
    zip(row, column) |> map(fun(p => fst(p) * snd(p))) |> reduce(add, 0.0)))))
"
        )
    }
}

/// The library's schedules for a layer of `kind` whose result is `ty` and whose
/// first argument (its activation) is `input`, best first.
///
/// A network at batch 1 has a single iteration in its outermost loop: the loop on
/// threads is then the outermost of more than one iteration (`parallel @
/// outermost(isApplied(isMap) ; overMany)`: an image's channels). (`parallel @
/// skip(1)`, the second map from the outside, put a depthwise convolution's threads on
/// its batch of one after `reductionTiles`: MobileNetV2's ran 2x slower on two threads
/// than on one, measured.) A product's row keeps `skip(1)`: its columns.
fn library(kind: &str, ty: &Type, input: &Type, taps: i64, lanes: u32) -> Vec<String> {
    let d = dims(ty);
    let inner = *d.last().unwrap_or(&1);
    let batch_of_one = d.first() == Some(&1);
    let on_threads = |s: &str| {
        let mut out = Vec::new();
        if batch_of_one {
            out.push(format!("{s} ; {OVER_MANY_ON_THREADS}"));
        }
        out.push(format!("{s} ; {PARALLEL}"));
        out.push(s.to_string());
        out
    };
    match (kind, d.as_slice()) {
        ("conv", [_, k, h, w]) if h * w <= SMALL_IMAGE => vec![
            conv_kernel_small(h * w, *k, taps, lanes),
            conv_kernel(*w, *k, lanes),
        ],
        ("conv", [_, k, _, w]) => vec![conv_kernel(*w, *k, lanes)],
        // A depthwise convolution's windows on vectors (`reductionTiles`) or each output
        // its unrolled taps (as a pooling): with a stride of 2 the vectors gather, and
        // the taps were 1.3 to 3.2x faster (MobileNetV2's 96 channels at 112x112: 0.30
        // ms against 0.81); with a stride of 1, faster from 28x28 on (32 channels at
        // 112x112: 0.19 against 0.26), slower at 14x14 (0.13 against 0.08). One thread,
        // the Xeon (AVX-512).
        ("depthwise", [_, _, h, w]) => {
            let strided = dims(input).get(2).is_some_and(|i| *i > h + 2);
            let tiles = reduction_tiles(*h, *w, lanes).map(|t| on_threads(&taps_unrolled(&t)));
            let taps = on_threads(POOLING);
            match tiles {
                Some(tiles) if !strided && *w < 28 => tiles.into_iter().chain(taps).collect(),
                Some(tiles) => taps.into_iter().chain(tiles).collect(),
                None => taps,
            }
        }
        // A product of fewer rows than a register tile's (a batch of one): each
        // result a dot product of vectors, the columns on threads.
        ("gemm" | "matmul", [n, m]) if *n < 4 => {
            let k = *dims(input).last().unwrap_or(&1);
            let w = widest(k, 2 * i64::from(lanes));
            let mut s = vec![
                format!("vectorizeReduce({w}) @ topDown ; parallel @ skip(1)"),
                format!("vectorizeReduce({w}) @ topDown"),
            ];
            s.push(micro_kernel(*n, *m, lanes));
            s
        }
        ("gemm" | "matmul", [n, m]) => vec![micro_kernel(*n, *m, lanes)],
        ("maxpool" | "avgpool", _) => on_threads(POOLING),
        ("softmax", _) => vec![elementwise(inner, lanes)],
        // Copies and small reductions: as they are.
        ("globalavgpool" | "flatten" | "concat", _) => Vec::new(),
        // `elementwise` puts the threads on the outermost loop of more than one
        // iteration itself.
        _ => vec![elementwise(inner, lanes)],
    }
}

/// The outermost map of more than one iteration on threads.
const OVER_MANY_ON_THREADS: &str = "parallel @ outermost(isApplied(isMap) ; overMany)";

/// The widest power of two up to `most` that divides `n` (at least 1).
fn widest(n: i64, most: i64) -> i64 {
    std::iter::successors(Some(most.max(1)), |w| (*w > 1).then_some(w / 2))
        .find(|w| n % w == 0 && (w & (w - 1)) == 0)
        .unwrap_or(1)
}
