//! Where a `steps` alternative applies in a program, found incrementally.
//!
//! A step changes the program along one path from the root; every other subterm is the
//! very same shared node as before. So what an alternative gave at a subterm, and
//! which subterms hold no location of it at all, are kept from one search of the
//! program to the next: the next search attempts the alternative only on the nodes
//! the last step built, and skips unchanged subtrees where it applies nowhere in one
//! lookup. This assumes, as the traversals' failure memos do, that an alternative is a
//! function of the subterm it is applied to; what it gives on a subterm is the same up
//! to the names of the binders it makes (each fresh above the subterm's names), so the
//! programs agree with `skip(k)` up to those names (their fingerprints are equal).

use super::cache::{lock, Generations};
use super::MAX_LOCATIONS;
use elevate_core::{Context, NodeId, Strategy, Traversable};
use std::sync::{Arc, Mutex};

/// Entries kept per generation, in each table.
const ENTRIES: usize = 1 << 15;

/// A subterm, and the alternative (by its text).
type Key = (NodeId, Arc<str>);

/// What the alternative gave at a subterm, kept with the subterm so that its identity
/// is not reused while the entry lives.
struct Attempted<P> {
    _node: P,
    result: Option<P>,
}

/// Where an alternative applies: the path from the root, and what it gives there.
pub(super) struct Location<P> {
    pub(super) path: Vec<usize>,
    pub(super) result: P,
}

/// The tables of one space.
pub(super) struct Locations<P> {
    attempts: Mutex<Generations<Key, Attempted<P>>>,
    /// Subterms (kept alive) where the alternative applies nowhere.
    nowhere: Mutex<Generations<Key, P>>,
}

impl<P> Default for Locations<P> {
    fn default() -> Self {
        Locations {
            attempts: Mutex::new(Generations::new(ENTRIES)),
            nowhere: Mutex::new(Generations::new(ENTRIES)),
        }
    }
}

/// A node of the walk: entering a subterm (with its place in the trail), or leaving
/// it with the number of locations found before it was entered.
enum Visit<P> {
    Enter(P, usize),
    Leave(Option<Key>, P, usize),
}

/// Where each entered node hangs: its parent's place in the trail and its index among
/// the parent's children (the root has none), so that a path is rebuilt only for a
/// location found, not copied at every node of a deep program.
struct Trail(Vec<Option<(usize, usize)>>);

impl Trail {
    fn path(&self, mut at: usize) -> Vec<usize> {
        let mut path = Vec::new();
        while let Some((parent, index)) = self.0[at] {
            path.push(index);
            at = parent;
        }
        path.reverse();
        path
    }
}

impl<P: Traversable> Locations<P> {
    /// The locations of `strategy` (whose text is `text`) in `root`, in pre-order (the
    /// order `skip` counts in), at most [`MAX_LOCATIONS`]; the search stops early
    /// where the strategy runs out of `cx`'s budget.
    pub(super) fn find(
        &self,
        root: &P,
        text: &Arc<str>,
        strategy: &Strategy<P>,
        cx: &mut Context,
    ) -> Vec<Location<P>> {
        let mut found = Vec::new();
        let key = |node: &P| {
            (node.arity() > 0)
                .then(|| node.node_id())
                .flatten()
                .map(|id| (id, text.clone()))
        };
        let mut trail = Trail(vec![None]);
        let mut stack = vec![Visit::Enter(root.clone(), 0)];
        while let Some(visit) = stack.pop() {
            let (node, at) = match visit {
                Visit::Enter(node, at) => (node, at),
                Visit::Leave(Some(k), node, before) if found.len() == before => {
                    lock(&self.nowhere).insert(k, node);
                    continue;
                }
                Visit::Leave(..) => continue,
            };
            let k = key(&node);
            if let Some(k) = &k {
                if lock(&self.nowhere).get(k).is_some() {
                    continue;
                }
            }
            let before = found.len();
            let Ok(result) = self.attempt(&node, k.as_ref(), strategy, cx) else {
                // Out of budget: what was found so far.
                break;
            };
            if let Some(result) = result {
                found.push(Location {
                    path: trail.path(at),
                    result,
                });
                if found.len() == MAX_LOCATIONS {
                    break;
                }
            }
            stack.push(Visit::Leave(k, node.clone(), before));
            for index in (0..node.arity()).rev() {
                trail.0.push(Some((at, index)));
                stack.push(Visit::Enter(node.child(index).clone(), trail.0.len() - 1));
            }
        }
        found
    }

    /// What `strategy` gives at `node` itself, from the table where `key` is known.
    fn attempt(
        &self,
        node: &P,
        key: Option<&Key>,
        strategy: &Strategy<P>,
        cx: &mut Context,
    ) -> Result<Option<P>, ()> {
        if let Some(key) = key {
            if let Some(known) = lock(&self.attempts).get(key) {
                return Ok(known.result.clone());
            }
        }
        // `attempt` fails only for want of budget, or where nothing can apply.
        let result = strategy.attempt(node, cx).map_err(|_| ())?;
        if let Some(key) = key {
            lock(&self.attempts).insert(
                key.clone(),
                Attempted {
                    _node: node.clone(),
                    result: result.clone(),
                },
            );
        }
        Ok(result)
    }
}

/// `root` with the node at `path` replaced by `replacement`.
pub(super) fn rebuild<P: Traversable>(root: &P, path: &[usize], replacement: P) -> P {
    let mut ancestors = Vec::with_capacity(path.len());
    let mut node = root.clone();
    for &index in path {
        let child = node.child(index).clone();
        ancestors.push((node, index));
        node = child;
    }
    let mut result = replacement;
    while let Some((parent, index)) = ancestors.pop() {
        result = parent.with_child(index, result);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use elevate_core::arith::{self, Term};
    use elevate_core::{Budget, Traversable};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// `addZero`, counting the inner nodes it is attempted on (leaves are cheaper to
    /// try again than to look up).
    fn counted(count: Arc<AtomicUsize>) -> Strategy<Term> {
        let add_zero = arith::add_zero();
        elevate_core::rule("addZero", move |t: &Term| {
            count.fetch_add(usize::from(t.arity() > 0), Ordering::Relaxed);
            add_zero.attempt(t, &mut Context::default()).ok().flatten()
        })
    }

    fn find(locations: &Locations<Term>, t: &Term, s: &Strategy<Term>) -> Vec<(Vec<usize>, Term)> {
        let text: Arc<str> = "addZero".into();
        let mut cx = Context::new(Budget::unlimited());
        locations
            .find(t, &text, s, &mut cx)
            .into_iter()
            .map(|l| (l.path, l.result))
            .collect()
    }

    #[test]
    fn after_a_step_only_the_nodes_it_built_are_tried_and_the_locations_are_the_same() {
        // 64 summands, one of them `+ 0` at the far right, one at the far left.
        let mut text = "(a + 0)".to_string();
        for i in 0..62 {
            text = format!("({text} + x{i})");
        }
        text = format!("({text} + (b + 0))");
        let t: Term = text.parse().unwrap();
        let count = Arc::new(AtomicUsize::new(0));
        let s = counted(count.clone());
        let locations = Locations::default();
        let first = find(&locations, &t, &s);
        assert_eq!(first.len(), 2);
        let tried_first = count.swap(0, Ordering::Relaxed);
        assert_eq!(tried_first, 65);

        // Take the step at the right: the nodes on its path are new, the rest shared.
        let (path, result) = first[1].clone();
        let after = rebuild(&t, &path, result);
        let second = find(&locations, &after, &s);
        let tried_second = count.swap(0, Ordering::Relaxed);
        assert_eq!(path.len(), 1);
        assert_eq!(tried_second, 1, "only the new root is tried");
        // The same as a search from nothing.
        assert_eq!(second, find(&Locations::default(), &after, &s));
        assert_eq!(second.len(), 1);
    }

    #[test]
    fn a_program_100000_levels_deep_is_searched_without_copying_paths() {
        let x = Term::var("x");
        let mut t = Term::sum(Term::var("a"), Term::num(0));
        for _ in 0..100_000 {
            t = Term::sum(t, x.clone());
        }
        let s = arith::add_zero();
        let locations = Locations::default();
        let found = find(&locations, &t, &s);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, vec![0; 100_000]);
        let after = rebuild(&t, &found[0].0, found[0].1.clone());
        assert!(find(&locations, &after, &s).is_empty());
    }
}
