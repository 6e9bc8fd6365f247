//! Whole networks: a RISE program whose entry point is a chain of layers, each a call
//! of one of the file's definitions (the form `elevate import` writes, networks.md),
//! compiled layer by layer into one callable of the network's input.
//!
//! The entry point's first parameter is the input and the others are the weights; its
//! body is `let V = DEF(ARG, ..., ARG) in ... V`, each argument a parameter or an
//! earlier layer. A layer's kind is its definition's name up to the first `_`
//! (`conv_k3x3_s1_p1111` is a `conv`), which is what `layers("conv", S)` names.
//!
//! ```
//! use elevate::network::Network;
//! let source = "
//!     def relu(x: n.c.f32) : n.c.f32 = x |> map(map(fun(v => max(v, 0.0))))
//!     def bias_nc(x: n.c.f32, b: c.f32) : n.c.f32 =
//!       x |> map(fun(row => zip(row, b) |> map(fun(p => fst(p) + snd(p)))))
//!     def net(input: 1.4.f32, fc_bias: 4.f32) : 1.4.f32 =
//!       let y = bias_nc(input, fc_bias) in
//!       let z = relu(y) in
//!       z";
//! let net = Network::parse(source).unwrap();
//! assert_eq!(net.layers().len(), 2);
//! assert_eq!(net.layers()[1].kind, "relu");
//! assert_eq!(net.weights()[0].name, "fc_bias");
//! ```

#[cfg(feature = "mlir")]
mod compiled;
#[cfg(feature = "mlir")]
mod fold;
#[cfg(feature = "mlir")]
mod hoist;
mod strategy;
mod units;

#[cfg(feature = "mlir")]
pub use compiled::{CompiledNetwork, NetworkError};
pub use strategy::{NetworkStrategy, Part, VOCABULARY};
pub use units::{Unit, UnitPlan, KERNELS};

use elevate_onnx::weights::Weights;
use elevate_rise::prim::Prim;
use elevate_rise::{Error, ErrorKind, Expr, Program, Term, Type, TypeKind, Value};

/// A value a layer reads: the network's input, one of its weights or an earlier
/// layer's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// The input (the entry point's first parameter).
    Input,
    /// The `i`-th weight (the entry point's parameter `i + 1`).
    Weight(usize),
    /// The `i`-th layer's result.
    Layer(usize),
}

/// A parameter of the network: its name and its type (with concrete sizes).
#[derive(Debug, Clone)]
pub struct Param {
    /// The name in the program (for a weight, its tensor's name in the weights file).
    pub name: String,
    /// Its type.
    pub ty: Type,
}

/// One layer: a call of a definition on earlier values.
#[derive(Debug, Clone)]
pub struct Layer {
    /// The variable the program binds it to.
    pub name: String,
    /// The definition it calls.
    pub def: String,
    /// Its kind: the definition's name up to the first `_`.
    pub kind: String,
    /// What it reads, in the definition's parameter order.
    pub args: Vec<Source>,
    /// Its result's type.
    pub ty: Type,
}

/// A checked network program: its definitions, parameters and layers.
#[derive(Debug, Clone)]
pub struct Network {
    source: String,
    program: Program,
    input: Param,
    weights: Vec<Param>,
    layers: Vec<Layer>,
    result: Source,
    /// Definitions the layers call besides the file's (a folded BatchNorm's bias).
    extra_definitions: String,
}

impl Network {
    /// Parses and type-checks `source` and reads its entry point (the last
    /// definition) as a chain of layers; an error, located where the program departs
    /// from that form, otherwise.
    pub fn parse(source: &str) -> Result<Network, Error> {
        let program = Program::load(source, None)?;
        let entry = program.entry();
        let mut term = strip_annotation(&entry.term);
        let mut params = Vec::new();
        // The parameters: `fun(x: T => ...)`, outermost first.
        while let Expr::Lambda(x, _, body) = term.expr() {
            let ty = match term.ty().map(|t| t.kind().clone()) {
                Some(elevate_rise::TypeKind::Fun(from, _)) => from,
                _ => return Err(form_error(&term, "a parameter without a type")),
            };
            params.push((
                x.id,
                Param {
                    name: x.name.to_string(),
                    ty,
                },
            ));
            term = strip_annotation(body);
        }
        if let Expr::NatLambda(..) = term.expr() {
            return Err(form_error(
                &term,
                "a network's sizes are concrete: its entry point has no size parameters",
            ));
        }
        let Some(((_, input), weights)) = params.split_first() else {
            return Err(form_error(&entry.term, "a network takes its input first"));
        };
        let mut scope: Vec<(u64, Source)> = params
            .iter()
            .enumerate()
            .map(|(i, (id, _))| {
                (
                    *id,
                    if i == 0 {
                        Source::Input
                    } else {
                        Source::Weight(i - 1)
                    },
                )
            })
            .collect();
        let defs: Vec<(String, Term)> = program.defs[..program.entry]
            .iter()
            .map(|d| (d.name.clone(), d.term.clone()))
            .collect();
        let mut layers = Vec::new();
        loop {
            // `let x = value in rest` is `let(value)(fun(x => rest))`.
            let Some((value, binder, rest)) = let_parts(&term) else {
                break;
            };
            let (head, args) = spine(&value);
            let def = defs
                .iter()
                .find(|(_, t)| *t == head)
                .map(|(name, _)| name.clone())
                .ok_or_else(|| {
                    form_error(&value, "a layer is a call of one of the file's definitions")
                })?;
            let args = args
                .iter()
                .map(|a| lookup(&scope, a))
                .collect::<Result<Vec<_>, _>>()?;
            let ty = value
                .ty()
                .ok_or_else(|| form_error(&value, "a layer without a type"))?;
            let kind = def.split('_').next().unwrap_or(&def).to_string();
            scope.push((binder, Source::Layer(layers.len())));
            layers.push(Layer {
                name: binder_name(&rest_binder(&term)),
                def,
                kind,
                args,
                ty: ty.clone(),
            });
            term = strip_annotation(&rest);
        }
        let result = lookup(&scope, &strip_annotation(&term))?;
        Ok(Network {
            source: source.to_string(),
            program: program.clone(),
            input: input.clone(),
            weights: weights.iter().map(|(_, p)| p.clone()).collect(),
            layers,
            result,
            extra_definitions: String::new(),
        })
    }

    /// Reads and checks the network program at `path`; the error is rendered with
    /// the file's name and the offending line.
    pub fn load(path: &std::path::Path) -> Result<Network, String> {
        let source = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read it: {e}", path.display()))?;
        Network::parse(&source).map_err(|e| e.render(&path.display().to_string(), &source))
    }

    /// The network compiled under `strategy` with `weights` bound (checked against
    /// the parameters by name and shape), its parallel loops on `threads` threads
    /// (the machine's where `None`).
    #[cfg(feature = "mlir")]
    pub fn compile(
        &self,
        strategy: &NetworkStrategy,
        weights: Weights,
        threads: Option<usize>,
    ) -> Result<CompiledNetwork, NetworkError> {
        let tensors = weights
            .into_tensors()
            .into_iter()
            .map(|t| (t.name, t.shape, t.data));
        CompiledNetwork::new(self, strategy, tensors, threads)
    }

    /// The program's text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The checked program.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The input parameter.
    pub fn input(&self) -> &Param {
        &self.input
    }

    /// The weights, in parameter order.
    pub fn weights(&self) -> &[Param] {
        &self.weights
    }

    /// The layers, in order.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// What the network returns (its last layer, in the form `import` writes).
    pub fn result(&self) -> Source {
        self.result
    }

    /// How often each layer's result is read: by later layers, and once more for the
    /// network's result.
    pub(crate) fn readers(&self) -> Vec<usize> {
        let mut readers = vec![0usize; self.layers.len()];
        for arg in self.layers.iter().flat_map(|l| &l.args) {
            if let Source::Layer(i) = arg {
                readers[*i] += 1;
            }
        }
        if let Source::Layer(i) = self.result {
            readers[i] += 1;
        }
        readers
    }

    /// The type of a value the layers read.
    pub fn type_of(&self, source: Source) -> &Type {
        match source {
            Source::Input => &self.input.ty,
            Source::Weight(i) => &self.weights[i].ty,
            Source::Layer(i) => &self.layers[i].ty,
        }
    }

    /// The network run by the reference interpreter on `input` (row-major, the
    /// input's dimensions) with `weights` bound by name: the oracle of compiled
    /// networks, for small ones (it takes about [`Network::interpreter_seconds`]).
    pub fn evaluate(&self, input: &[f32], weights: &Weights) -> Result<Vec<f32>, Error> {
        let unlocated = |m: String| Error::unlocated(ErrorKind::Input, m);
        let mut values = vec![nested(&self.input.ty, input)
            .map_err(|m| unlocated(format!("the input `{}`: {m}", self.input.name)))?];
        for param in &self.weights {
            let tensor = weights.get(&param.name).ok_or_else(|| {
                unlocated(format!(
                    "--weights: no tensor `{}` (of type {})",
                    param.name, param.ty
                ))
            })?;
            values.push(
                nested(&param.ty, &tensor.data)
                    .map_err(|m| unlocated(format!("--weights: `{}`: {m}", param.name)))?,
            );
        }
        let value =
            elevate_rise::evaluate(&self.program.entry().term, &Default::default(), &values)?;
        f32_values(&value).map_err(|e| unlocated(format!("a network's result: {e}")))
    }

    /// About how long the reference interpreter takes for the network: its
    /// [multiply-adds](Network::multiply_adds) at the interpreter's rate (about a
    /// million a second: 0.97 million, measured on a residual block of 32 channels).
    pub fn interpreter_seconds(&self) -> f64 {
        self.multiply_adds() / 1e6
    }

    /// The network's multiply-adds, about: the sum of its layers'
    /// ([`Network::layer_multiply_adds`]).
    pub fn multiply_adds(&self) -> f64 {
        (0..self.layers.len())
            .map(|i| self.layer_multiply_adds(i))
            .sum()
    }

    /// Layer `layer`'s multiply-adds, about: its results times the taps of the
    /// weights it reads (a convolution's input channels and window, a product's
    /// inner size), one for a layer without weights (0 for a layer it does not have).
    pub fn layer_multiply_adds(&self, layer: usize) -> f64 {
        let Some(l) = self.layers.get(layer) else {
            return 0.0;
        };
        let taps = l
            .args
            .iter()
            .filter_map(|a| match a {
                Source::Weight(i) => Some(dims(&self.weights[*i].ty)),
                _ => None,
            })
            .map(|d| d.iter().skip(1).product::<i64>().max(1) as f64)
            .fold(1.0, f64::max);
        dims(&l.ty).iter().product::<i64>() as f64 * taps
    }

    /// The definitions the layers call, as RISE text (every definition but the
    /// entry point, in file order).
    pub(crate) fn definitions_text(&self) -> String {
        let entry = &self.program.defs[self.program.entry];
        // The entry point is the last definition: everything before its `def`.
        let cut = self
            .source
            .rfind(&format!("def {}", entry.name))
            .unwrap_or(self.source.len());
        format!("{}\n{}", &self.source[..cut], self.extra_definitions)
    }
}

/// The dimensions of an array type, outermost first (1 for a size that is not a
/// constant).
pub fn dims(ty: &Type) -> Vec<i64> {
    let mut out = Vec::new();
    let mut t = ty.clone();
    while let TypeKind::Array(n, e) = t.kind().clone() {
        out.push(n.as_const().unwrap_or(1));
        t = e;
    }
    out
}

/// `data` (row-major) as the nested arrays of `ty`, an f32 array.
fn nested(ty: &Type, data: &[f32]) -> Result<Value, String> {
    let d = dims(ty);
    let count: i64 = d.iter().product();
    if usize::try_from(count).ok() != Some(data.len()) {
        return Err(format!("{} values for {ty}", data.len()));
    }
    Ok(nested_value(&d, data))
}

/// `data` (row-major, as many values as the dimensions' product) as nested arrays:
/// the interpreter's form of an activation or a weight.
///
/// ```
/// use elevate::network::{f32_values, nested_value};
/// let v = nested_value(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
/// assert_eq!(f32_values(&v).unwrap(), [1.0, 2.0, 3.0, 4.0]);
/// ```
pub fn nested_value(d: &[i64], data: &[f32]) -> Value {
    match d.split_first() {
        None => Value::F32(data.first().copied().unwrap_or(0.0)),
        Some((n, rest)) => {
            let step = rest.iter().product::<i64>().max(0) as usize;
            Value::array(
                (0..(*n).max(0) as usize)
                    .map(|i| nested_value(rest, &data[i * step..(i + 1) * step]))
                    .collect(),
            )
        }
    }
}

/// The f32s of `value` (nested arrays of f32) in row-major order; an error for
/// anything else.
pub fn f32_values(value: &Value) -> Result<Vec<f32>, elevate_rise::EvalError> {
    fn flatten(value: &Value, out: &mut Vec<f32>) -> Result<(), elevate_rise::EvalError> {
        match value {
            Value::F32(x) => out.push(*x),
            Value::Array(a) => {
                for item in a.to_vec()? {
                    flatten(&item, out)?;
                }
            }
            _ => return Err("expected arrays of f32".to_string().into()),
        }
        Ok(())
    }
    let mut out = Vec::new();
    flatten(value, &mut out)?;
    Ok(out)
}

/// `let(value)(fun(x => rest))` as `(value, x's identity, rest)`.
fn let_parts(term: &Term) -> Option<(Term, u64, Term)> {
    let Expr::App(f, lambda) = term.expr() else {
        return None;
    };
    let Expr::App(l, value) = f.expr() else {
        return None;
    };
    if !matches!(l.expr(), Expr::Prim(Prim::Let)) {
        return None;
    }
    let Expr::Lambda(x, _, rest) = lambda.expr() else {
        return None;
    };
    Some((value.clone(), x.id, rest.clone()))
}

/// The binder of a `let` term.
fn rest_binder(term: &Term) -> Term {
    match term.expr() {
        Expr::App(_, lambda) => lambda.clone(),
        _ => term.clone(),
    }
}

fn binder_name(lambda: &Term) -> String {
    match lambda.expr() {
        Expr::Lambda(x, _, _) => x.name.to_string(),
        _ => String::new(),
    }
}

/// `f(a)(b)...` as `(f, [a, b, ...])`, annotations and size arguments looked through.
fn spine(term: &Term) -> (Term, Vec<Term>) {
    let mut args = Vec::new();
    let mut t = strip_annotation(term);
    loop {
        match t.expr() {
            Expr::App(f, a) => {
                args.push(a.clone());
                t = strip_annotation(f);
            }
            Expr::NatApp(f, _) => t = strip_annotation(f),
            _ => break,
        }
    }
    args.reverse();
    (t, args)
}

fn strip_annotation(term: &Term) -> Term {
    let mut t = term.clone();
    while let Expr::Annotation(inner, _) = t.expr() {
        t = inner.clone();
    }
    t
}

fn lookup(scope: &[(u64, Source)], arg: &Term) -> Result<Source, Error> {
    let arg = strip_annotation(arg);
    match arg.expr() {
        Expr::Var(x) => scope
            .iter()
            .rev()
            .find(|(id, _)| *id == x.id)
            .map(|(_, s)| *s)
            .ok_or_else(|| form_error(&arg, "a layer reads a parameter or an earlier layer")),
        _ => Err(form_error(
            &arg,
            "a layer's argument is a parameter or an earlier layer (bind anything else to a layer of its own)",
        )),
    }
}

fn form_error(term: &Term, message: &str) -> Error {
    let message = format!("not a network: {message}");
    match term.span() {
        Some(span) => Error::new(ErrorKind::Type, span, message),
        None => Error::unlocated(ErrorKind::Type, message),
    }
}
