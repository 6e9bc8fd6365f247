//! Search over strategies (`spec/search.md`): a [`Space`] of strategies, a
//! [`Driver`] that explores it, a [`Cost`] that ranks what it finds, and a log of
//! every candidate that replays.
//!
//! Everything here is generic over the program type, like the rest of this crate: the
//! costs of a particular IR (an analytical model, compiled and measured code) live
//! with that IR.
//!
//! ```
//! use elevate_core::arith::{self, Term};
//! use elevate_strategies::search::{drivers, Cost, Fingerprint, Measure, Rejection, Search, SearchBudget, Space};
//! use elevate_strategies::text::Registry;
//! use std::sync::Arc;
//!
//! /// Smaller programs are better.
//! struct Size;
//! impl Cost<Term> for Size {
//!     fn name(&self) -> String { "size".into() }
//!     fn evaluate(&self, t: &Term) -> Result<Measure, Rejection> {
//!         Ok(Measure::cost(t.to_string().len() as f64))
//!     }
//! }
//!
//! let mut registry = Registry::<Term>::with_combinators();
//! registry.rule("addZero", "x + 0 -> x", arith::add_zero);
//! registry.rule("mulOne", "x * 1 -> x", arith::mul_one);
//! let space = Space::parse("{id, try(topDown(addZero))} ; {id, try(topDown(mulOne))}", Arc::new(registry)).unwrap();
//! let t: Term = "(a + 0) * 1".parse().unwrap();
//! let report = Search::new(space, drivers::exhaustive(), Size)
//!     .budget(SearchBudget::default().evaluations(100))
//!     .run(&t);
//! let best = report.best().unwrap();
//! assert_eq!(best.strategy, "try(topDown(addZero)) ; try(topDown(mulOne))");
//! assert_eq!(report.evaluations, 4);
//! ```

mod cost;
pub mod drivers;
mod env;
mod explorer;
mod run;
mod space;
mod space_text;
mod variants;

pub use cost::{evaluate_as_batch, parallel_map, Cost, Fingerprint, Measure, Rejection, Status};
pub use drivers::Driver;
pub use env::{
    Action, ActionShape, Environment, Features, IllegalAction, Transition, FAILED_REWARD,
};
pub use explorer::{Candidate, Explorer, Pending, Progress, SearchBudget};
pub use run::{Compared, Known, Report, Search, COMPARE_TURNS};
pub use space::{AutoSpace, Space, State, MAX_LOCATIONS};
pub use space_text::{SpaceError, MAX_STEPS, MAX_STEP_ALTERNATIVES};

impl Fingerprint for elevate_core::arith::Term {
    fn fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = rustc_hash::FxHasher::default();
        self.to_string().hash(&mut hasher);
        hasher.finish()
    }
}
