//! A space as a tree of decisions over a program: [`Space`] and its [`State`]s.
//!
//! A state is a persistent value: the program so far, the decisions made, and what the
//! next decision is. Choosing an option makes a new state and leaves the old one as it
//! was (both share everything they have in common), so a driver may keep any number of
//! states, go back to any of them in constant time, and share every prefix.
//!
//! The parts of the space's top-level sequence are applied as soon as their choices are
//! made, so the program of a state is always the program its decisions lead to, and
//! `steps` can offer exactly the locations where each alternative applies. Within a
//! part that is a sequence (`a ;; b ; c`, whatever its choices), each item is applied
//! as soon as its own choices are made, as one run of the whole part would apply it
//! (the same fresh names, the same budget); a failure of an item fails the part once
//! its last choice is made, so the decisions are the same either way. What an item
//! gave on a program is kept for the next time (see [`cache`]).

mod cache;
mod follow;
mod locations;
mod template;

use super::space_text::{
    read_space, sequence_cuts, sequence_without_choice, Part, Piece, SpaceError, Template,
};
use super::variants::{defs, render, variants};
use crate::text::Registry;
use cache::{Cache, ItemError, Run};
use elevate_core::{Budget, Context, Strategy, Traversable};
use locations::{rebuild, Locations};
use rpds::{ListSync as List, VectorSync as Vector};
use std::fmt;
use std::sync::{Arc, OnceLock};
use template::{template_size, template_text, widest_choice};

/// `steps` offers each alternative at no more than this many locations.
pub const MAX_LOCATIONS: usize = 64;

/// Derives a space from a program: what `auto` stands for.
pub trait AutoSpace<P>: Send + Sync {
    /// Space text for `program` (without `auto`, `def`s or `<+` at the top level).
    fn space_for(&self, program: &P) -> Result<String, String>;

    /// Points of that space to start a search from (the schedules a library would
    /// pick by hand for `program`), as the strategy text of complete points; none by
    /// default. A text that is no point of the space is left out
    /// ([`Space::starts`]).
    fn starts(&self, _program: &P) -> Vec<String> {
        Vec::new()
    }
}

/// A space of strategies for programs of type `P`: strategy text with choice points
/// (see `spec/search.md`), read once and then explored from [`Space::start`].
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
/// let start = space.start(&t);
/// assert_eq!(start.options(), 2);
/// let point = start.choose(1).unwrap().choose(1).unwrap();
/// assert!(point.is_complete());
/// assert_eq!(point.text(), "topDown(addZero) ; try(topDown(mulOne))");
/// assert_eq!(point.program().to_string(), "a");
/// ```
pub struct Space<P> {
    inner: Arc<Inner<P>>,
}

impl<P> Clone for Space<P> {
    fn clone(&self) -> Self {
        Space {
            inner: self.inner.clone(),
        }
    }
}

struct Inner<P> {
    text: Arc<str>,
    preamble: Arc<str>,
    parts: Parts,
    registry: Arc<Registry<P>>,
    auto: Option<Arc<dyn AutoSpace<P>>>,
    budget: Budget,
    cache: Cache<P>,
    locations: Locations<P>,
}

/// A space's parts, and for each whether it is a sequence whose items can be applied
/// one at a time (a fixed part without `<+` at its top level).
#[derive(Clone)]
struct Parts {
    parts: Arc<[Part]>,
    sequences: Arc<[bool]>,
}

impl Parts {
    fn new(parts: Arc<[Part]>) -> Self {
        let sequences = parts
            .iter()
            .map(|part| matches!(part, Part::Fixed(t) if sequence_without_choice(t)))
            .collect();
        Parts { parts, sequences }
    }
}

impl<P: Traversable> Space<P> {
    /// Reads `text` as a space whose strategies come from `registry`; every option is
    /// checked to be a strategy, and errors are located in `text`.
    pub fn parse(text: &str, registry: Arc<Registry<P>>) -> Result<Self, SpaceError> {
        Space::read(text, registry, None)
    }

    /// [`Space::parse`] for text that may hold `auto`, derived by `auto`.
    pub fn parse_with_auto(
        text: &str,
        registry: Arc<Registry<P>>,
        auto: impl AutoSpace<P> + 'static,
    ) -> Result<Self, SpaceError> {
        Space::read(text, registry, Some(Arc::new(auto)))
    }

    fn read(
        text: &str,
        registry: Arc<Registry<P>>,
        auto: Option<Arc<dyn AutoSpace<P>>>,
    ) -> Result<Self, SpaceError> {
        let read = read_space(text, defs(text)?)?;
        let space = Space {
            inner: Arc::new(Inner {
                text: text.into(),
                preamble: read.preamble,
                parts: Parts::new(read.parts),
                registry,
                auto,
                budget: Budget::unlimited().applications(10_000_000),
                cache: Cache::default(),
                locations: Locations::default(),
            }),
        };
        space.check_parts(&space.inner.parts.parts)?;
        Ok(space)
    }

    /// The same space, with `auto` derived by `auto`.
    pub fn with_auto(self, auto: impl AutoSpace<P> + 'static) -> Self {
        self.rebuild(|inner| inner.auto = Some(Arc::new(auto)))
    }

    /// The same space, where applying one part of a point may take at most `budget`
    /// (by default 10^7 strategy applications; the items of a part share it).
    pub fn with_budget(self, budget: Budget) -> Self {
        self.rebuild(|inner| inner.budget = budget)
    }

    fn rebuild(self, change: impl FnOnce(&mut Inner<P>)) -> Self {
        let i = &self.inner;
        let mut inner = Inner {
            text: i.text.clone(),
            preamble: i.preamble.clone(),
            parts: i.parts.clone(),
            registry: i.registry.clone(),
            auto: i.auto.clone(),
            budget: i.budget,
            cache: Cache::default(),
            locations: Locations::default(),
        };
        change(&mut inner);
        Space {
            inner: Arc::new(inner),
        }
    }

    /// The text the space was read from.
    pub fn text(&self) -> &str {
        &self.inner.text
    }

    /// The points of a space that is `auto` alone to start a search of `program`
    /// from: those of [`AutoSpace::starts`] that are points of the space (found by
    /// [`State::follow`]), in its order. Drivers evaluate them first, so that a
    /// search is at least as good as the schedules a library picks by hand.
    pub fn starts(&self, program: &P) -> Vec<State<P>> {
        let (Some(auto), [Part::Auto { .. }]) = (&self.inner.auto, &*self.inner.parts.parts) else {
            return Vec::new();
        };
        let texts = auto.starts(program);
        if texts.is_empty() {
            return Vec::new();
        }
        let root = self.start(program);
        texts.iter().filter_map(|t| root.follow(t)).collect()
    }

    /// The state before any decision, for `program`.
    pub fn start(&self, program: &P) -> State<P> {
        let inner = StateInner {
            space: self.inner.clone(),
            parts: self.inner.parts.clone(),
            part: 0,
            pending: List::new_sync(),
            part_texts: Vector::new_sync(),
            done: Vector::new_sync(),
            program: program.clone(),
            part_start: program.clone(),
            applied: None,
            run: Run::default(),
            part_failure: None,
            decisions: Vector::new_sync(),
            next: Next::Complete,
        };
        State {
            inner: Arc::new(inner.enter_part().settle()),
        }
    }

    /// Every option of every choice must make a strategy: each part is parsed with
    /// the first option everywhere but one choice at a time. A part that is a
    /// sequence is parsed item by item, each distinct item once (variants share most
    /// of their items), and whole only to locate an error.
    fn check_parts(&self, parts: &[Part]) -> Result<(), SpaceError> {
        for part in parts {
            match part {
                Part::Fixed(template) => {
                    let sequence = sequence_without_choice(template);
                    for variant in variants(template) {
                        let (text, origins) = render(&variant);
                        if !(sequence && self.items_parse(&text)) {
                            self.check_text(&text, &origins)?;
                        }
                    }
                }
                Part::Steps { alternatives, .. } => {
                    for alternative in alternatives.iter() {
                        if let Err(e) = self.parse_strategy(alternative) {
                            return Err(SpaceError::new(
                                0,
                                format!("in `{alternative}` of `steps`: {}", e.message),
                            ));
                        }
                    }
                }
                Part::Auto { offset } if self.inner.auto.is_none() => {
                    return Err(SpaceError::new(
                        *offset,
                        "`auto` is not available for this kind of program",
                    ))
                }
                Part::Auto { .. } => {}
            }
        }
        Ok(())
    }

    /// Whether each item of the sequence `text` parses (and is kept for its
    /// applications).
    fn items_parse(&self, text: &str) -> bool {
        let mut from = 0;
        let mut items = Vec::new();
        for cut in sequence_cuts(text, 0) {
            items.push(&text[from..cut.at]);
            if cut.normal_form {
                items.push("DFNF");
            }
            from = cut.end();
        }
        items.push(&text[from..]);
        items
            .into_iter()
            .all(|item| self.strategy(item.trim()).is_ok())
    }

    /// The strategy `text` stands for, parsed once and then kept.
    fn strategy(&self, text: &str) -> Result<Strategy<P>, crate::text::TextError> {
        self.inner.cache.strategy(text, |t| self.parse_strategy(t))
    }

    fn check_text(&self, text: &str, origins: &[(usize, usize)]) -> Result<(), SpaceError> {
        self.parse_strategy(text).map(|_| ()).map_err(|e| {
            let offset = e.offset.saturating_sub(self.inner.preamble.len());
            // The piece the offset falls in, and how far into it.
            let (start, origin) = origins
                .iter()
                .rev()
                .find(|(start, _)| *start <= offset)
                .copied()
                .unwrap_or((0, 0));
            SpaceError::new(origin + (offset - start), e.message)
        })
    }

    fn parse_strategy(&self, text: &str) -> Result<Strategy<P>, crate::text::TextError> {
        let inner = &self.inner;
        if inner.preamble.is_empty() {
            inner.registry.parse(text)
        } else {
            inner.registry.parse(&format!("{}{text}", inner.preamble))
        }
    }
}

/// A state of the search: the decisions made so far, the program they lead to, and
/// the next decision. Cheap to clone and to keep (see the [`search`](crate::search) module).
pub struct State<P> {
    inner: Arc<StateInner<P>>,
}

impl<P> Clone for State<P> {
    fn clone(&self) -> Self {
        State {
            inner: self.inner.clone(),
        }
    }
}

/// The next decision of a state.
enum Next<P> {
    /// Which option of a choice.
    Choice(Arc<[Template]>),
    /// Stop taking steps (option 0), or one of these (options 1..).
    Step(Arc<[StepOption<P>]>),
    /// Every decision is made.
    Complete,
    /// A strategy failed: the point fails, with this reason.
    Failed(Arc<str>),
}

impl<P> Clone for Next<P> {
    fn clone(&self) -> Self {
        match self {
            Next::Choice(c) => Next::Choice(c.clone()),
            Next::Step(s) => Next::Step(s.clone()),
            Next::Complete => Next::Complete,
            Next::Failed(r) => Next::Failed(r.clone()),
        }
    }
}

/// One step `steps` offers: its text, and where it rewrites the program into what.
/// The program is rebuilt around the replacement when the step is first taken, and
/// kept: taking it again gives the very same program.
struct StepOption<P> {
    text: Arc<str>,
    path: Vec<usize>,
    replacement: P,
    program: OnceLock<P>,
    /// Which alternative of the `steps`, and at which of its locations.
    alternative: usize,
    location: usize,
}

struct StateInner<P> {
    space: Arc<Inner<P>>,
    /// The parts, with `auto`s met so far replaced by what they stand for.
    parts: Parts,
    /// The part being decided.
    part: usize,
    /// The current part's pieces still to read (a choice's option pushes its own).
    pending: List<Piece>,
    /// The current part's text so far, in pieces (for `steps`: the steps taken).
    part_texts: Vector<Arc<str>>,
    /// The text of each part done (empty parts left out).
    done: Vector<Arc<str>>,
    /// The program after the parts done (and the steps taken, or the items of the
    /// current part applied so far).
    program: P,
    /// The program before the current part (a part that fails leaves it so).
    part_start: P,
    /// How much of the current part's text is applied, item by item: up to this byte
    /// (the end of a cut); `None` where the part is applied whole, at its end.
    applied: Option<usize>,
    /// The run of the current part's strategy, between its items.
    run: Run,
    /// Why an item of the current part failed: the part fails at its end.
    part_failure: Option<Arc<str>>,
    decisions: Vector<u32>,
    next: Next<P>,
}

impl<P: Traversable> StateInner<P> {
    fn successor(&self) -> StateInner<P> {
        StateInner {
            space: self.space.clone(),
            parts: self.parts.clone(),
            part: self.part,
            pending: self.pending.clone(),
            part_texts: self.part_texts.clone(),
            done: self.done.clone(),
            program: self.program.clone(),
            part_start: self.part_start.clone(),
            applied: self.applied,
            run: self.run,
            part_failure: self.part_failure.clone(),
            decisions: self.decisions.clone(),
            next: self.next.clone(),
        }
    }

    /// Starts the part at `self.part`: loads a fixed part's pieces.
    fn enter_part(mut self) -> Self {
        self.pending = List::new_sync();
        self.part_texts = Vector::new_sync();
        self.part_start = self.program.clone();
        self.applied = self
            .parts
            .sequences
            .get(self.part)
            .is_some_and(|&s| s)
            .then_some(0);
        self.run = Run::default();
        self.part_failure = None;
        if let Some(Part::Fixed(template)) = self.parts.parts.get(self.part) {
            for piece in template.iter().rev() {
                self.pending.push_front_mut(piece.clone());
            }
        }
        self
    }

    /// Reads on until the next decision, the end, or a failure.
    fn settle(mut self) -> Self {
        loop {
            let Some(part) = self.parts.parts.get(self.part).cloned() else {
                self.next = Next::Complete;
                return self;
            };
            match part {
                Part::Fixed(_) => {
                    while let Some(piece) = self.pending.first().cloned() {
                        self.pending.drop_first_mut();
                        match piece {
                            Piece::Text(t, _) => self.part_texts.push_back_mut(t),
                            Piece::Choice(options) => {
                                self.apply_items(false);
                                self.next = Next::Choice(options);
                                return self;
                            }
                        }
                    }
                    let text: String = self.part_texts.iter().map(|t| &**t).collect();
                    if let Err(reason) = self.finish_part(&text) {
                        // The point's text keeps the part that failed, and its
                        // program is the one before the part.
                        self.program = self.part_start.clone();
                        self.done.push_back_mut(text.trim().into());
                        self.next = Next::Failed(reason.into());
                        return self;
                    }
                    self.done.push_back_mut(text.trim().into());
                }
                Part::Steps { max, alternatives } => {
                    if self.part_texts.len() < max {
                        let options = self.step_options(&alternatives);
                        if !options.is_empty() {
                            self.next = Next::Step(options.into());
                            return self;
                        }
                    }
                    if !self.part_texts.is_empty() {
                        let steps: Vec<&str> = self.part_texts.iter().map(|t| &**t).collect();
                        self.done.push_back_mut(steps.join(" ; ").into());
                    }
                }
                Part::Auto { offset } => match self.expand_auto(offset) {
                    Ok(()) => {
                        self = self.enter_part();
                        continue;
                    }
                    Err(reason) => {
                        self.next = Next::Failed(reason.into());
                        return self;
                    }
                },
            }
            self.part += 1;
            self = self.enter_part();
        }
    }

    /// Replaces the `auto` at the current part with the parts it stands for here.
    fn expand_auto(&mut self, offset: usize) -> Result<(), String> {
        let Some(auto) = &self.space.auto else {
            return Err(format!("`auto` at {offset} is not available"));
        };
        let text = auto.space_for(&self.program)?;
        let read = read_space(&text, 0..0)
            .map_err(|e| format!("the space `auto` stands for does not read: {e}: {text}"))?;
        if read.parts.iter().any(|p| matches!(p, Part::Auto { .. })) {
            return Err("the space `auto` stands for holds `auto` again".into());
        }
        let space = Space {
            inner: self.space.clone(),
        };
        space
            .check_parts(&read.parts)
            .map_err(|e| format!("the space `auto` stands for: {e}: {text}"))?;
        let parts = &self.parts.parts;
        let mut expanded: Vec<Part> = parts[..self.part].to_vec();
        expanded.extend(read.parts.iter().cloned());
        expanded.extend(parts[self.part + 1..].iter().cloned());
        self.parts = Parts::new(expanded.into());
        Ok(())
    }

    /// Applies the items of the current part whose text is complete (`complete`: the
    /// part's text is), one at a time from where the part is applied to.
    fn apply_items(&mut self, complete: bool) {
        let Some(mut from) = self.applied else {
            return;
        };
        if self.part_failure.is_some() {
            return;
        }
        let text: String = self.part_texts.iter().map(|t| &**t).collect();
        for cut in sequence_cuts(&text, from) {
            if !(cut.final_ || complete) {
                break;
            }
            let mut item = self.apply_item(text[from..cut.at].trim());
            if item.is_ok() && cut.normal_form {
                item = self.apply_item("DFNF");
            }
            match item {
                Ok(()) => from = cut.end(),
                Err(ItemError::Failed {
                    reason,
                    budget: false,
                }) => {
                    self.part_failure = Some(reason);
                    break;
                }
                // Text that does not parse, or a budget spent: the whole part, at its
                // end, tells what one run of it does.
                Err(_) => {
                    self.applied = None;
                    self.program = self.part_start.clone();
                    return;
                }
            }
        }
        self.applied = Some(from);
    }

    /// Applies one item of the current part to the program, in the part's run.
    fn apply_item(&mut self, text: &str) -> Result<(), ItemError> {
        let (program, run) = self.run_strategy(&self.program, text, self.run)?;
        self.program = program;
        self.run = run;
        Ok(())
    }

    /// `text` applied to `program` from `run`, through the space's cache.
    fn run_strategy(&self, program: &P, text: &str, run: Run) -> Result<(P, Run), ItemError> {
        let space = Space {
            inner: self.space.clone(),
        };
        self.space
            .cache
            .apply(program, text, run, self.space.budget, |t| {
                space.parse_strategy(t)
            })
    }

    /// Applies what is left of the current part, whose whole text is `text`; the
    /// reason it fails, if it does (as one run of the whole part would tell it).
    fn finish_part(&mut self, text: &str) -> Result<(), String> {
        let whole = text.trim();
        self.apply_items(true);
        if let Some(reason) = &self.part_failure {
            return Err(format!("`{whole}` failed: {reason}"));
        }
        if let Some(from) = self.applied {
            let rest = text[from..].trim();
            if !rest.is_empty() {
                match self.apply_item(rest) {
                    Ok(()) => return Ok(()),
                    Err(ItemError::Failed {
                        reason,
                        budget: false,
                    }) => return Err(format!("`{whole}` failed: {reason}")),
                    Err(_) => {}
                }
            }
        }
        // The part as one strategy, from the program before it.
        match self.run_strategy(&self.part_start, whole, Run::default()) {
            Ok((program, _)) => {
                self.program = program;
                Ok(())
            }
            Err(ItemError::Parse(message)) => Err(format!("`{whole}` does not parse: {message}")),
            Err(ItemError::Failed { reason, .. }) => Err(format!("`{whole}` failed: {reason}")),
        }
    }

    /// Every alternative at every location where it applies (up to
    /// [`MAX_LOCATIONS`] each), as `skip(k)(alternative)`.
    fn step_options(&self, alternatives: &[Arc<str>]) -> Vec<StepOption<P>> {
        let space = Space {
            inner: self.space.clone(),
        };
        let mut options = Vec::new();
        for (index, alternative) in alternatives.iter().enumerate() {
            let Ok(strategy) = self
                .space
                .cache
                .strategy(alternative, |t| space.parse_strategy(t))
            else {
                continue;
            };
            let mut cx = Context::new(self.space.budget);
            let found = self
                .space
                .locations
                .find(&self.program, alternative, &strategy, &mut cx);
            for (k, location) in found.into_iter().enumerate() {
                options.push(StepOption {
                    text: format!("skip({k})({alternative})").into(),
                    path: location.path,
                    replacement: location.result,
                    program: OnceLock::new(),
                    alternative: index,
                    location: k,
                });
            }
        }
        options
    }
}

impl<P: Traversable> State<P> {
    /// How many options the next decision has; 0 once the point is complete or failed.
    pub fn options(&self) -> usize {
        match &self.inner.next {
            Next::Choice(options) => options.len(),
            Next::Step(options) => options.len() + 1,
            Next::Complete | Next::Failed(_) => 0,
        }
    }

    /// Option `i` of the next decision as text: a choice's option (its own choices
    /// written as `{...}`), or a step (`stop` is option 0).
    pub fn option_text(&self, i: usize) -> Option<String> {
        match &self.inner.next {
            Next::Choice(options) => options.get(i).map(template_text),
            Next::Step(_) if i == 0 => Some("stop".into()),
            Next::Step(options) => options.get(i - 1).map(|o| o.text.to_string()),
            _ => None,
        }
    }

    /// Option `i` of the next decision as a pair (transformation, parameter): for a
    /// choice `(i, 0)`; for a step, `(0, 0)` to stop and `(1 + alternative, location)`
    /// otherwise.
    pub fn option_action(&self, i: usize) -> Option<(usize, usize)> {
        match &self.inner.next {
            Next::Choice(options) => (i < options.len()).then_some((i, 0)),
            Next::Step(_) if i == 0 => Some((0, 0)),
            Next::Step(options) => options.get(i - 1).map(|o| (1 + o.alternative, o.location)),
            _ => None,
        }
    }

    /// The largest (transformations, parameters) any decision from here on can have,
    /// as far as the parts known now tell (`auto` counts once it is expanded).
    pub fn action_shape(&self) -> (usize, usize) {
        let inner = &*self.inner;
        let mut shape = (1, 1);
        let mut widen = |t: usize, p: usize| shape = (shape.0.max(t), shape.1.max(p));
        if let Next::Choice(options) = &inner.next {
            widen(options.len(), 1);
            options.iter().for_each(|o| widest_choice(o, &mut widen));
        }
        let pending: Vec<Piece> = inner.pending.iter().cloned().collect();
        widest_choice(&pending.into(), &mut widen);
        for part in inner.parts.parts.iter().skip(inner.part) {
            match part {
                Part::Fixed(t) => widest_choice(t, &mut widen),
                Part::Steps { alternatives, .. } => widen(1 + alternatives.len(), MAX_LOCATIONS),
                Part::Auto { .. } => {}
            }
        }
        shape
    }

    /// Whether the next decision is a step of `steps` (option 0 stops).
    pub fn is_step(&self) -> bool {
        matches!(self.inner.next, Next::Step(_))
    }

    /// The state after taking option `i` of the next decision; `None` if there is no
    /// such option.
    pub fn choose(&self, i: usize) -> Option<State<P>> {
        let mut next = self.inner.successor();
        match &self.inner.next {
            Next::Choice(options) => {
                let option = options.get(i)?;
                for piece in option.iter().rev() {
                    next.pending.push_front_mut(piece.clone());
                }
            }
            Next::Step(_) if i == 0 => {
                // Stop: the part ends with the steps taken so far.
                let steps: Vec<&str> = next.part_texts.iter().map(|t| &**t).collect();
                if !steps.is_empty() {
                    next.done.push_back_mut(steps.join(" ; ").into());
                }
                next.part += 1;
                next = next.enter_part();
            }
            Next::Step(options) => {
                let option = options.get(i - 1)?;
                next.program = option
                    .program
                    .get_or_init(|| {
                        rebuild(
                            &self.inner.program,
                            &option.path,
                            option.replacement.clone(),
                        )
                    })
                    .clone();
                next.part_texts.push_back_mut(option.text.clone());
            }
            Next::Complete | Next::Failed(_) => return None,
        }
        next.decisions.push_back_mut(i as u32);
        Some(State {
            inner: Arc::new(next.settle()),
        })
    }

    /// Whether every decision is made and every strategy succeeded.
    pub fn is_complete(&self) -> bool {
        matches!(self.inner.next, Next::Complete)
    }

    /// Why the point failed (a strategy failed or did not parse), if it did.
    pub fn failure(&self) -> Option<&str> {
        match &self.inner.next {
            Next::Failed(reason) => Some(reason),
            _ => None,
        }
    }

    /// Whether no decision is left: complete or failed.
    pub fn is_final(&self) -> bool {
        self.options() == 0
    }

    /// The program the decisions so far lead to (for a complete point: its program;
    /// inside a part that is a sequence, the program after the items whose choices are
    /// made; for a failed point, the program before the part that failed).
    pub fn program(&self) -> &P {
        &self.inner.program
    }

    /// The decisions made, in order.
    pub fn decisions(&self) -> impl Iterator<Item = usize> + '_ {
        self.inner.decisions.iter().map(|&d| d as usize)
    }

    /// How many decisions were made.
    pub fn depth(&self) -> usize {
        self.inner.decisions.len()
    }

    /// The strategy text of the parts decided so far, with the space's `def`s in
    /// front: for a complete point, ordinary strategy text that replays its program.
    pub fn text(&self) -> String {
        let body: Vec<&str> = self.inner.done.iter().map(|t| &**t).collect();
        let body = if body.is_empty() {
            "id".to_string()
        } else {
            body.join(" ; ")
        };
        format!("{}{body}", self.inner.space.preamble)
    }

    /// How many points the rest of the space holds below this state, estimated: exact
    /// for choices; for `steps`, the alternatives at one location each; `auto` not yet
    /// expanded counts as one.
    pub fn size_estimate(&self) -> f64 {
        let inner = &*self.inner;
        let mut size = match &inner.next {
            Next::Choice(options) => options.iter().map(template_size).sum(),
            Next::Step(options) => 1.0 + options.len() as f64,
            _ => return 1.0,
        };
        let pending: Vec<Piece> = inner.pending.iter().cloned().collect();
        size *= template_size(&pending.into());
        for part in inner.parts.parts.iter().skip(inner.part + 1) {
            size *= match part {
                Part::Fixed(t) => template_size(t),
                Part::Steps { max, alternatives } => {
                    let a = alternatives.len() as f64;
                    (0..=*max as i32).map(|k| a.powi(k)).sum()
                }
                Part::Auto { .. } => 1.0,
            };
        }
        size
    }
}

impl<P: Traversable> fmt::Debug for State<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("State")
            .field("decisions", &self.decisions().collect::<Vec<_>>())
            .field("text", &self.text())
            .field("options", &self.options())
            .field("failure", &self.failure())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elevate_core::arith::{self, Term};

    fn registry() -> Arc<Registry<Term>> {
        let mut registry = Registry::<Term>::with_combinators();
        registry.rule("addZero", "x + 0 -> x", arith::add_zero);
        registry.rule("mulOne", "x * 1 -> x", arith::mul_one);
        registry.rule("addComm", "x + y -> y + x", arith::add_comm);
        Arc::new(registry)
    }

    fn space(text: &str) -> Space<Term> {
        Space::parse(text, registry()).unwrap()
    }

    /// Every final state below `state`, depth first.
    fn finals(state: &State<Term>) -> Vec<State<Term>> {
        let mut out = Vec::new();
        let mut stack = vec![state.clone()];
        while let Some(s) = stack.pop() {
            stack.extend((0..s.options()).filter_map(|i| s.choose(i)));
            if s.is_final() {
                out.push(s);
            }
        }
        out
    }

    /// What one run of `text` does to `t`, as the point's text replays it.
    fn replay(text: &str, t: &Term) -> Result<Term, String> {
        let strategy = registry().parse(text).map_err(|e| e.message)?;
        strategy
            .apply(t, &mut Context::default())
            .map_err(|f| format!("`{text}` failed: {f}"))
    }

    const SEQUENCES: &str = "{topDown(mulOne) ; {topDown(addZero), id}, id} ; \
         {addComm ; {topDown(mulOne) ; try(topDown(addZero)), try(addComm)}, try(topDown(addZero))}";

    #[test]
    fn items_apply_as_their_choices_are_made_and_points_are_what_their_text_gives() {
        let t: Term = "(a * 1 + 0) + (b + 0) * 1".parse().unwrap();
        let start = space(SEQUENCES).start(&t);
        // Choosing `topDown(mulOne) ; {...}` applies `topDown(mulOne)` at once.
        let first = start.choose(0).unwrap();
        assert!(!first.is_final());
        assert_eq!(first.program(), &replay("topDown(mulOne)", &t).unwrap());
        let points = finals(&start);
        assert_eq!(points.len(), 9);
        for point in &points {
            match replay(&point.text(), &t) {
                Ok(expected) => {
                    assert!(point.is_complete(), "{:?}", point.failure());
                    assert_eq!(point.program(), &expected, "{}", point.text());
                }
                Err(_) => assert!(point.failure().is_some(), "{}", point.text()),
            }
        }
    }

    #[test]
    fn an_item_that_fails_fails_the_part_once_its_choices_are_made() {
        let t: Term = "a + b".parse().unwrap();
        let start = space("{topDown(mulOne) ; {topDown(addZero), id}, id}").start(&t);
        let after = start.choose(0).unwrap();
        // The decisions are those of the whole part: one more before it fails.
        assert!(!after.is_final());
        assert_eq!(after.options(), 2);
        let failed = after.choose(1).unwrap();
        let reason = failed.failure().expect("the part fails");
        assert_eq!(reason, replay("topDown(mulOne) ; id", &t).unwrap_err());
        assert_eq!(failed.text(), "topDown(mulOne) ; id");
        assert!(
            failed.program().node_id() == t.node_id(),
            "a failed part leaves the program as it was"
        );
    }

    #[test]
    fn walking_the_same_decisions_again_gives_the_very_same_program() {
        let t: Term = "(a * 1 + 0) + (b + 0) * 1".parse().unwrap();
        let space = space(SEQUENCES);
        let walk = |space: &Space<Term>| {
            let mut state = space.start(&t);
            for i in [0, 0, 0, 0] {
                state = state.choose(i).unwrap();
            }
            assert!(state.is_complete(), "{:?}", state.failure());
            state.program().clone()
        };
        let first = walk(&space);
        let again = walk(&space);
        assert!(first.node_id() == again.node_id(), "the kept program");
        // A fresh space (nothing kept) computes the same program.
        let fresh = walk(&super::tests::space(SEQUENCES));
        assert!(fresh.node_id() != first.node_id());
        assert_eq!(fresh, first);
    }

    #[test]
    fn an_option_that_is_no_strategy_is_located_in_a_sequence_as_anywhere() {
        let text = "{topDown(mulOne) ; {topDown(addZero), try(nope)}, id}";
        let Err(e) = Space::parse(text, registry()) else {
            panic!("`nope` is no strategy")
        };
        assert_eq!(&text[e.offset..e.offset + 4], "nope", "{}", e.message);
        assert!(e.message.contains("nope"), "{}", e.message);
    }

    #[test]
    fn the_items_of_a_part_share_its_budget() {
        let t: Term = "((a + 0) + 0) + ((b + 0) + 0)".parse().unwrap();
        let part = "{topDown(addZero) ; topDown(addZero), id}";
        let mut cx = Context::default();
        let item = registry().parse("topDown(addZero)").unwrap();
        item.apply(&t, &mut cx).unwrap();
        let one_item = cx.stats().applications;
        // Enough for the first item, not for both.
        let tight = space(part).with_budget(Budget::unlimited().applications(one_item + 1));
        let point = tight.start(&t).choose(0).unwrap();
        let reason = point.failure().expect("the part runs out of budget");
        assert!(reason.contains("budget"), "{reason}");
        let ample = space(part).with_budget(Budget::unlimited().applications(10 * one_item));
        assert!(ample.start(&t).choose(0).unwrap().is_complete());
    }
}
