//! From a point's text back to its decisions: [`State::follow`].

use super::{Next, State};
use elevate_core::Traversable;

/// `follow` gives up after trying this many states (a text that many options agree
/// with for long would otherwise take as long as the space is large).
const MAX_TRIED: usize = 100_000;

/// `text` without its whitespace: point texts are compared up to layout.
fn squeezed(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

impl<P: Traversable> State<P> {
    /// The complete point below this state whose strategy text, without the space's
    /// `def`s, is `text` up to whitespace: a point known by its text (a schedule
    /// written by hand, a log's line) as decisions, so that a driver can start from
    /// it. At each decision the options whose text agrees with `text` so far are
    /// tried, depth first in their order; `None` if no point writes `text`.
    ///
    /// ```
    /// use elevate_core::arith::{self, Term};
    /// use elevate_strategies::{search::Space, text::Registry};
    /// use std::sync::Arc;
    /// let mut registry = Registry::<Term>::with_combinators();
    /// registry.rule("addZero", "x + 0 -> x", arith::add_zero);
    /// registry.rule("mulOne", "x * 1 -> x", arith::mul_one);
    /// let space = Space::parse("{id, topDown(addZero)} ; try(topDown({addZero, mulOne}))", Arc::new(registry)).unwrap();
    /// let t: Term = "(a + 0) * 1".parse().unwrap();
    /// let point = space.start(&t).follow("topDown(addZero) ; try(topDown(mulOne))").unwrap();
    /// assert_eq!(point.decisions().collect::<Vec<_>>(), [1, 1]);
    /// assert!(space.start(&t).follow("topDown(mulOne)").is_none());
    /// ```
    pub fn follow(&self, text: &str) -> Option<State<P>> {
        let target = squeezed(text);
        let mut stack = vec![self.clone()];
        let mut tried = 0;
        while let Some(state) = stack.pop() {
            tried += 1;
            if tried > MAX_TRIED {
                return None;
            }
            let so_far = state.written("");
            if !target.starts_with(&so_far) {
                continue;
            }
            if state.is_final() {
                if state.is_complete() && so_far == target {
                    return Some(state);
                }
                continue;
            }
            // Pushed last to first: the first option is tried first.
            for i in (0..state.options()).rev() {
                if let Some(lead) = state.option_lead(i) {
                    if !target.starts_with(&state.written(&lead)) {
                        continue;
                    }
                }
                stack.extend(state.choose(i));
            }
        }
        None
    }

    /// The text of option `i` of a choice up to its first choice of its own (what
    /// choosing it adds to the part's text for sure); `None` for a step.
    fn option_lead(&self, i: usize) -> Option<String> {
        match &self.inner.next {
            Next::Choice(_) => {
                let text = self.option_text(i)?;
                Some(text.split('{').next().unwrap_or_default().to_string())
            }
            _ => None,
        }
    }

    /// The text of the parts done and of the current part so far, then `more` in
    /// the current part, without whitespace (as [`State::text`] writes it, `def`s
    /// left out).
    fn written(&self, more: &str) -> String {
        let inner = &*self.inner;
        let mut parts: Vec<String> = inner.done.iter().map(|t| t.to_string()).collect();
        let current: String = if matches!(inner.next, Next::Step(_)) {
            let steps: Vec<&str> = inner.part_texts.iter().map(|t| &**t).collect();
            steps.join(" ; ")
        } else {
            inner.part_texts.iter().map(|t| &**t).collect()
        } + more;
        if !current.trim().is_empty() {
            parts.push(current);
        }
        squeezed(&parts.join(" ; "))
    }
}
