//! Equality saturation over RISE with [egg](https://docs.rs/egg) (feature `egraph`).
//!
//! - [`lang`]: RISE as an egg language: typed e-nodes, De Bruijn indices, and an
//!   analysis with each class's type, free indices and smallest term;
//! - [`convert`]: typed terms into the e-graph and back (extraction gives typed terms);
//! - [`rewrite`]: the rule library's equations ([`crate::rules::Equation`]) as egg
//!   rewrites, and beta reduction by extraction;
//! - [`rules`]: named rule sets (`--rules` of `elevate saturate`);
//! - [`saturate`]: [`Saturation`] (limits, cost models, explanations, progress) and
//!   the [`saturate()`] strategy;
//! - [`sketch`]: sketches, sketch-satisfying extraction and sketch-guided search.

pub mod convert;
pub mod goals;
pub mod lang;
pub mod rewrite;
pub mod rules;
pub mod saturate;
pub mod sketch;

pub use convert::{add_term, best_expr, best_term, expr_to_term};
pub use lang::{Op, Rise, RiseAnalysis, RiseData, RiseGraph, TyId};
pub use rewrite::{beta_rewrite, rewrite, RisePattern, RiseRewrite};
pub use rules::RuleSet;
pub use saturate::Grown;
pub use saturate::{
    saturate, Cost, CostModel, Limits, Outcome, Progress, Report, Saturation, SaturationError,
    Step, Work,
};
pub use sketch::{guided, sketch_guided, GuideStep, GuidedOutcome, Sketch, StepReport};
