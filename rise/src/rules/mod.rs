//! The RISE rewrite library: rules, each a named [`Strategy`] listed with its
//! equation in the [`catalogue`]; RISE locations, predicates and normal forms; the
//! loop-nest strategies (`tile`, `reorder`, ...), the ELEVATE matrix-multiplication
//! strategies and the separable-convolution strategy.
//!
//! Rules match the curried application form the parser produces (`xs |> map(f)` is
//! `map(f)(xs)`) and rebuild terms with fresh binders, so they are safe to apply
//! anywhere. Each rule types what it builds: the new nodes are inferred around the
//! typed nodes the rule reused, against the type of the node replaced
//! ([`crate::infer::retype_as`]); a result that does not type-check is no result. So
//! rules that read sizes from types (`splitJoin`, `vectorize`, ...) compose.
//!
//! Each file lists its rules in the catalogue (a `RULES` table) and registers its
//! strategies in the strategy language (a `register` function); [`register`] gathers
//! them, and `crate::registry` adds them to Elevate's combinators (and, with the
//! feature `egraph`, equality saturation).
//!
//! | module | holds |
//! |---|---|
//! | `basic` | beta (also for nat functions), eta, let inlining, projections, identity |
//! | `algorithmic` | map fusion and fission, `splitJoin`, transpose pairs |
//! | `movement` | exchanges of maps with layout primitives, zip and take/drop rules, `loopInterchange` |
//! | `reduction` | `reduceMapFusion`/`Fission`, `blockedReduce`, `blockedSum`, `liftReduce`, `reduceMap` |
//! | `layout`, `pairs`, `bindings` | slide/split/join/transpose/take/drop, zip/pair/select, id and let rules |
//! | `lowering` | `mapSeq`, `mapPar`, GPU maps, `reduceSeq`, unrolling, `toMem`, `vectorize`, `storeInMemory`, `defaultLowering` |
//! | `vector_reduce` | `vectorizeReduce`: a reduction over vectors of lanes, then over the lanes |
//! | `traversal`, `predicates` | RISE locations, predicates, `BENF`, `DFNF`, `RNF`, `CNF`, `isEqualTo`, `contains` |
//! | `tiling` | `tile`, `tileND`, `tileNDList`, `interchange`, `reorder`, `mapped`, `stage` |
//! | `gemm`, `separable` | the seven TVM matmul strategies, `microKernel`; separable convolution |
//! | `gpu` | `gpuGlobal` (maps and reductions on global threads), `gpuStencil` (tiles on work groups, staged in shared memory), `gpuSgemm` (the classic SGEMM: block and register tiles, shared tiles of A and B) |
//! | `conv` | the direct convolution as a micro-kernel: `channelsInnermost`, `blockLanes`, `packWeights`, `convKernel` |
//! | `elementwise` | `elementwise(w)`: an elementwise chain fused, vectorized, on threads |
//! | `catalogue`, `equation` | the table of the rules; rules written as equations |

mod algorithmic;
mod basic;
mod bindings;
pub mod catalogue;
mod conv;
mod elementwise;
mod equation;
mod gemm;
mod gpu;
mod layout;
mod lowering;
mod machine_tiles;
mod movement;
mod padding;
mod pairs;
pub(crate) mod pattern;
mod predicates;
mod reduction;
mod reduction_tiles;
mod separable;
mod tiling;
mod traversal;
mod typing;
mod vector_reduce;

pub use self::algorithmic::*;
pub use self::basic::*;
pub use self::bindings::*;
pub use self::catalogue::{ArgError, RuleDef};
pub use self::conv::*;
pub use self::elementwise::*;
pub use self::equation::{Equation, Scope};
pub use self::gemm::*;
pub use self::gpu::*;
pub use self::layout::*;
pub use self::lowering::*;
pub use self::movement::*;
pub use self::padding::*;
pub use self::pairs::*;
pub use self::predicates::*;
pub use self::reduction::*;
pub use self::reduction_tiles::*;
pub use self::separable::*;
pub use self::tiling::*;
pub use self::traversal::*;
pub use self::vector_reduce::*;

use crate::prim::Prim;
use crate::term::Term;
use catalogue::Role;
use elevate_core::Strategy;
use elevate_strategies::text::{self, int_arg, name_arg, strategy_arg, ArgKind, Registry, Value};

/// A rule of the library with the arguments tests use: its name as strategy text
/// (`splitJoin(2)`), its equation, how to make it, and what the property tests need.
pub struct RuleInfo {
    /// The rule with its arguments, as strategy text.
    pub name: &'static str,
    /// The equation, `lhs -> rhs`, and its note.
    pub equation: String,
    /// The rule.
    pub make: std::sync::Arc<dyn Fn() -> Strategy<Term> + Send + Sync>,
    /// A primitive whose presence makes the left-hand side likely, to bias random
    /// programs in tests.
    pub bias: Option<Prim>,
    /// A small program in which the rule applies (tests check it there too).
    pub example: &'static str,
}

/// Every rule of the library (the catalogue's rules, not its strategies), with the
/// arguments of its entry's [`RuleDef::typical`].
pub fn library() -> Vec<RuleInfo> {
    catalogue()
        .into_iter()
        .filter(|def| def.role == Role::Rule)
        .map(|def| {
            let args = def.typical;
            // The tests keep names as `&'static str`: a rule with arguments leaks its
            // label (a few bytes, for the handful of such rules, per listing).
            let name: &'static str = match args {
                [] => def.name,
                args => Box::leak(def.label(args).into_boxed_str()),
            };
            RuleInfo {
                name,
                equation: def.description(),
                make: std::sync::Arc::new(move || {
                    def.strategy(args)
                        .unwrap_or_else(|e| panic!("the typical arguments of {name}: {e}"))
                }),
                bias: def.bias,
                example: def.example,
            }
        })
        .collect()
}

/// Registers the library in the strategy language: every rule of the catalogue (a
/// bad argument is an error where it is written), then each module's strategies.
pub fn register(r: &mut Registry<Term>) {
    for def in catalogue() {
        let doc = match def.in_egraph() {
            true => format!("{}   [e-graph]", def.description()),
            false => def.description(),
        };
        r.add(def.name, &def.signature(), &doc, move |a| {
            let args = a
                .iter()
                .enumerate()
                .map(|(index, v)| match v {
                    Value::Int(n) => Ok(*n),
                    _ => Err(text::ArgError::WrongKind {
                        index,
                        expected: ArgKind::Number,
                    }),
                })
                .collect::<Result<Vec<i64>, _>>()?;
            def.strategy(&args).map_err(|e| match e {
                catalogue::ArgError::Count { expected, found } => {
                    text::ArgError::Arity { expected, found }
                }
                // The check stops at the first argument that does not fit.
                e => text::ArgError::invalid(
                    def.params
                        .iter()
                        .zip(&args)
                        .position(|(p, &v)| p.check(v).is_err()),
                    e.to_string(),
                ),
            })
        });
    }
    register_locations(r);
    predicates::register(r);
    tiling::register(r);
    gemm::register(r);
    gpu::register(r);
    padding::register(r);
    conv::register(r);
    elementwise::register(r);
    reduction_tiles::register(r);
    lowering::register(r);
    separable::register(r);
}

/// The RISE locations of [`traversal`](self::traversal).
fn register_locations(r: &mut Registry<Term>) {
    type Location = fn(Strategy<Term>) -> Strategy<Term>;
    let locations: [(&str, &str, Location); 4] = [
        ("body", "s on the body of a lambda", body),
        (
            "annotated",
            "s on the term of a type annotation e : T",
            annotated,
        ),
        (
            "function",
            "s on the function of an application f(a)",
            function,
        ),
        (
            "argument",
            "s on the argument of an application f(a)",
            argument,
        ),
    ];
    for (name, doc, make) in locations {
        r.unary(name, doc, make);
    }
    r.unary(
        "fmap",
        "function(argumentOf(map, body(s))): s in the lambda of an applied map",
        fmap,
    );
    r.add(
        "mapNest",
        "(d)",
        "predicate: d maps nested in each other's lambda bodies",
        |a| Ok(map_nest(int_arg(a, 0)?)),
    );
    type WithPredicate = fn(Strategy<Term>, Strategy<Term>) -> Strategy<Term>;
    let guided: [(&str, &str, WithPredicate); 3] = [
        (
            "outermost",
            "topDown(p ; s): s where p holds first, top-down",
            outermost,
        ),
        (
            "innermost",
            "bottomUp(p ; s): s where p holds first, bottom-up",
            innermost,
        ),
        ("check", "p ; s", check),
    ];
    for (name, doc, make) in guided {
        r.guided(name, doc, make);
    }
    r.unary("everywhere", "normalize(s)", everywhere);
    r.add(
        "argumentOf",
        "(PRIM, s)",
        "s on the argument of PRIM(a)",
        |a| {
            let prim = prim_arg(a, 0)?;
            Ok(argument_of(prim, strategy_arg(a, 1)?))
        },
    );
    r.unary(
        "inLambda",
        "s on the body below the leading lambdas",
        in_lambda,
    );
}

/// Argument `i` as a primitive's name. Some primitives are also the names of rules
/// (`reduceSeq`, `mapSeq`, ...), which the text parser reads as strategies.
fn prim_arg(a: &[Value<Term>], i: usize) -> Result<Prim, text::ArgError> {
    let name = match a.get(i) {
        Some(Value::Strategy(s)) => s.to_string(),
        _ => name_arg(a, i)?.to_string(),
    };
    Prim::from_name(&name).ok_or(text::ArgError::UnknownName {
        index: i,
        name,
        expected: "a primitive",
    })
}

/// Arguments `from..` as sizes (positive numbers), for the tiling strategies.
fn sizes(a: &[Value<Term>], from: usize) -> Result<Vec<i64>, text::ArgError> {
    (from..a.len())
        .map(|i| match int_arg(a, i)? {
            0 => Err(text::ArgError::Rejected {
                index: i,
                reason: "is a size: it must be positive, found 0".into(),
            }),
            // An `int_arg` was a non-negative i64.
            n => Ok(i64::try_from(n).unwrap_or(i64::MAX)),
        })
        .collect()
}

/// A name, its meaning, and the strategy.
type Named = (&'static str, &'static str, fn() -> Strategy<Term>);

/// Every entry of the catalogue, file by file.
pub fn catalogue() -> Vec<&'static RuleDef> {
    [
        basic::RULES,
        algorithmic::RULES,
        movement::RULES,
        reduction::RULES,
        lowering::RULES,
        vector_reduce::RULES,
        layout::RULES,
        pairs::RULES,
        padding::RULES,
        bindings::RULES,
        separable::RULES,
        gemm::RULES,
        conv::RULES,
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The entry named `name`.
pub fn find(name: &str) -> Option<&'static RuleDef> {
    catalogue().into_iter().find(|d| d.name == name)
}

/// Helpers for the rules' unit tests.
#[cfg(test)]
pub(crate) mod test_support {
    use crate::term::{Expr, Term};
    use crate::{infer, parse_term, print_term};
    use elevate_core::{Context, Strategy};

    /// `rule` applied to the body of the program `source` (a lambda), printed.
    pub(crate) fn rewrite(rule: Strategy<Term>, source: &str) -> Option<String> {
        let t = infer(&parse_term(source).unwrap()).unwrap();
        let Expr::Lambda(_, _, body) = t.expr() else {
            panic!("a program");
        };
        let r = rule.apply(body, &mut Context::default()).ok()?;
        Some(print_term(&r))
    }

    /// `after` has `before`'s type and computes its values on two random inputs.
    pub(crate) fn same_program(before: &Term, after: &Term) {
        use crate::{evaluate, io, NatEnv};
        assert_eq!(before.ty(), after.ty());
        for seed in 0..2 {
            let inputs =
                io::random_inputs(&io::signature(before), &NatEnv::default(), seed).unwrap();
            let value = |t: &Term| {
                evaluate(t, &NatEnv::default(), &inputs)
                    .unwrap()
                    .to_json()
                    .unwrap()
            };
            assert!(
                io::approx_eq(&value(before), &value(after)),
                "{}",
                print_term(after)
            );
        }
    }
}
