//! A program's entry point at fixed sizes, as a value: rewritten by strategies,
//! run by the interpreter, compiled by the bridge.

use crate::error::{Error, ErrorKind};
use crate::interp::NatEnv;
use crate::term::Term;

/// A program's entry point at fixed sizes: what [`Program::at`] returns and what a
/// strategy rewrites, the interpreter runs and the bridge compiles.
///
/// ```
/// use elevate_rise::{Program, Value};
/// let program = Program::parse("def twice(x: n.f32) = x |> map(fun(v => v * 2.0))").unwrap();
/// let twice = program.at(&[("n", 3)]).unwrap();
/// assert!(program.at(&[]).unwrap_err().to_string().contains("no size for `n`"));
/// assert_eq!(twice.term().ty().unwrap().to_string(), "3.f32 -> 3.f32");
/// let lowered = twice.rewrite("defaultLowering").unwrap();
/// assert!(lowered.to_string().contains("mapSeq"));
/// let y = lowered.eval(&[vec![1.0f32, 2.0, 3.0].into()]).unwrap();
/// assert_eq!(y.to_json().unwrap(), serde_json::json!([2.0, 4.0, 6.0]));
/// // A strategy that fails (or runs out of its budget) is an error naming it.
/// let e = twice.rewrite("mapFusion").unwrap_err();
/// assert!(e.to_string().contains("`mapFusion` failed"), "{e}");
/// // Text that is not a strategy is an error too, not a panic.
/// assert_eq!(twice.rewrite("topDown(").unwrap_err().kind, elevate_rise::ErrorKind::Strategy);
/// ```
#[derive(Debug, Clone)]
pub struct Instance {
    name: String,
    term: Term,
}

impl Instance {
    /// The most rewrite steps [`Instance::rewrite`] takes (as `elevate rewrite`'s default).
    pub const STEPS: u64 = 10_000_000;
    /// The most time [`Instance::rewrite`] takes (as `elevate rewrite`'s default).
    pub const TIME: std::time::Duration = std::time::Duration::from_secs(60);

    /// `term` (typed, closed, with concrete sizes) as the function `name`.
    pub fn new(name: impl Into<String>, term: Term) -> Instance {
        Instance {
            name: name.into(),
            term,
        }
    }

    /// The entry point's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The typed term, every size concrete.
    pub fn term(&self) -> &Term {
        &self.term
    }

    /// Rewritten by the strategy `text` (`spec/strategies.md`'s language, with the RISE
    /// library's rules and strategies), within [`Instance::STEPS`] and [`Instance::TIME`].
    /// A text that does not parse, or a strategy that fails or runs out of its budget,
    /// is an error of kind [`ErrorKind::Strategy`] naming the strategy.
    pub fn rewrite(&self, text: &str) -> Result<Instance, Error> {
        let strategy = crate::registry()
            .parse(text)
            .map_err(|e| Error::unlocated(ErrorKind::Strategy, format!("`{text}`: {e}")))?;
        let budget = elevate_core::Budget::unlimited()
            .steps(Instance::STEPS)
            .time(Instance::TIME);
        self.apply(&strategy, &mut elevate_core::Context::new(budget))
    }

    /// Rewritten by `strategy` in the context `cx` (its budget, trace and memo).
    pub fn apply(
        &self,
        strategy: &elevate_core::Strategy<Term>,
        cx: &mut elevate_core::Context,
    ) -> Result<Instance, Error> {
        let term = strategy.apply(&self.term, cx).map_err(|failure| {
            Error::unlocated(
                ErrorKind::Strategy,
                format!("`{strategy}` failed: {failure}"),
            )
        })?;
        Ok(Instance::new(self.name.clone(), term))
    }

    /// Runs the reference interpreter on `inputs`, one value per parameter.
    pub fn eval(&self, inputs: &[crate::Value]) -> Result<crate::Value, Error> {
        crate::evaluate(&self.term, &NatEnv::default(), inputs)
    }
}

/// The definition, as `elevate rewrite` prints it (it parses back).
impl std::fmt::Display for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::print_definition(&self.name, &self.term))
    }
}
