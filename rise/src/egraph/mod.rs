//! Equality saturation over RISE with [egg](https://docs.rs/egg) (feature `egraph`).
//!
//! - [`lang`]: RISE as an egg language: typed e-nodes, De Bruijn indices, and an
//!   analysis with each class's type, free indices and smallest term (and each
//!   e-graph's own table of types);
//! - [`convert`]: typed terms into the e-graph and back (extraction gives typed terms);
//! - [`mod@rewrite`]: the rule library's equations ([`crate::rules::Equation`]) as egg
//!   rewrites, beta reduction by extraction, library strategies as rewrites, and the
//!   e-matcher ([`RisePattern`]) that compares operators, not types;
//! - [`rules`]: named rule sets (`--rules` of `elevate saturate`);
//! - [`cost`]: cost models for extraction;
//! - [`runner`]: the saturation loop and its limits, checked inside every phase;
//! - [`mod@saturate`]: [`Saturation`] (limits, explanations, progress, extraction
//!   within the time limit) and the [`saturate()`] strategy;
//! - [`sketch`]: sketches, sketch-satisfying extraction and sketch-guided search;
//! - [`goals`]: the seven ELEVATE matmul goals as sketch guides;
//! - [`text`]: `saturate` and `sketchGuided` in the strategy language.
//!
//! ```
//! use elevate_rise::egraph::{CostModel, SaturationLimits, RuleSet, Saturation};
//! use elevate_rise::{infer, parse_term, print_term};
//! let t = infer(&parse_term("fun(xs: 8.f32 => xs |> map(neg) |> reduce(add, 0.0))").unwrap()).unwrap();
//! let out = Saturation::new(RuleSet::parse("default").unwrap(), SaturationLimits::default(), CostModel::Lowered)
//!     .run(&t)
//!     .unwrap();
//! // One loop, the negation fused into the reduction, unrolled (8 iterations).
//! assert_eq!(
//!     print_term(&out.program),
//!     "fun(xs: 8.f32 => xs |> reduceSeqUnroll(fun(x, x2 => x + -x2), 0.0))"
//! );
//! ```

pub mod convert;
pub mod cost;
pub mod goals;
pub mod lang;
pub mod rewrite;
pub mod rules;
pub mod runner;
pub mod saturate;
pub mod sketch;
pub mod text;

pub use convert::{add_term, best_expr, best_term, expr_to_term};
pub use cost::{expr_cost, Cost, CostModel, Work};
pub use lang::{Op, Rise, RiseAnalysis, RiseData, RiseGraph, TyId, Types};
pub use rewrite::{beta_rewrite, rewrite, RewriteError, RisePattern, RiseRewrite};
pub use rules::{RuleSet, RuleSetError};
pub use runner::{Phases, Progress, SaturationLimits, SaturationLimitsError};
pub use saturate::{
    saturate, ExplanationStep, Grown, OutOfTime, Outcome, Report, Saturation, SaturationError,
};
pub use sketch::{guided, sketch_guided, GuideStep, GuidedOutcome, Sketch, StepReport};
pub use text::register;
