//! A zipper over a program, for repeated local edits without re-walking from the root.

use crate::context::Context;
use crate::failure::RewriteResult;
use crate::strategy::Strategy;
use crate::traversable::Traversable;
use crate::Path;

/// A cursor (zipper) focused on one subterm of a program.
///
/// Moving down remembers the way back; editing the focus marks the way back as changed,
/// and moving up rebuilds only the changed ancestors, sharing everything else. A batch
/// of local edits in one region therefore costs the edits plus one rebuild of the path
/// to the root, not one rebuild per edit.
///
/// ```
/// use elevate_core::{arith::{self, Term}, Context, Cursor, Traversable};
/// let t: Term = "(a + 0) * (b + 0)".parse().unwrap();
/// let mut cursor = Cursor::new(t.clone());
/// let mut cx = Context::default();
/// cursor.down(0).unwrap();
/// cursor.apply(&arith::add_zero(), &mut cx).unwrap();
/// cursor.up();
/// cursor.down(1).unwrap();
/// cursor.apply(&arith::add_zero(), &mut cx).unwrap();
/// assert_eq!(cursor.path().to_string(), "[1]");
/// assert_eq!(cursor.into_root().to_string(), "a * b");
/// assert_eq!(t.to_string(), "(a + 0) * (b + 0)"); // the original is untouched
/// ```
pub struct Cursor<P> {
    focus: P,
    changed: bool,
    ancestors: Vec<Frame<P>>,
}

struct Frame<P> {
    parent: P,
    index: usize,
    parent_changed: bool,
}

/// The cursor could not move: the focus has no such child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoSuchChild {
    /// The requested child position.
    pub index: usize,
    /// The focus's number of children.
    pub arity: usize,
}

impl std::fmt::Display for NoSuchChild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "no child {} (the node has {} children)",
            self.index, self.arity
        )
    }
}

impl std::error::Error for NoSuchChild {}

impl<P: Traversable> Cursor<P> {
    /// A cursor focused on the root of `program`.
    pub fn new(program: P) -> Self {
        Cursor {
            focus: program,
            changed: false,
            ancestors: Vec::new(),
        }
    }

    /// The subterm in focus.
    pub fn focus(&self) -> &P {
        &self.focus
    }

    /// The focus's location from the root.
    pub fn path(&self) -> Path {
        Path::from(
            self.ancestors
                .iter()
                .map(|frame| frame.index as u32)
                .collect::<Vec<_>>(),
        )
    }

    /// How far below the root the focus is.
    pub fn depth(&self) -> usize {
        self.ancestors.len()
    }

    /// Moves the focus to child `index`.
    pub fn down(&mut self, index: usize) -> Result<(), NoSuchChild> {
        let arity = self.focus.arity();
        if index >= arity {
            return Err(NoSuchChild { index, arity });
        }
        let child = self.focus.child(index).clone();
        let parent = std::mem::replace(&mut self.focus, child);
        self.ancestors.push(Frame {
            parent,
            index,
            parent_changed: self.changed,
        });
        self.changed = false;
        Ok(())
    }

    /// Moves the focus to its parent, rebuilding the parent if the focus changed.
    /// Returns `false` at the root.
    pub fn up(&mut self) -> bool {
        let Some(frame) = self.ancestors.pop() else {
            return false;
        };
        let child = std::mem::replace(&mut self.focus, frame.parent);
        if self.changed {
            self.focus = self.focus.with_child(frame.index, child);
        }
        self.changed |= frame.parent_changed;
        true
    }

    /// Moves the focus to the next sibling, if there is one.
    pub fn next_sibling(&mut self) -> bool {
        let Some(frame) = self.ancestors.last() else {
            return false;
        };
        let next = frame.index + 1;
        if next >= frame.parent.arity() {
            return false;
        }
        self.up();
        self.down(next).is_ok()
    }

    /// Moves the focus to the location `path` below the root.
    pub fn goto(&mut self, path: &Path) -> Result<(), NoSuchChild> {
        while self.up() {}
        for &index in path.as_slice() {
            self.down(index as usize)?;
        }
        Ok(())
    }

    /// Replaces the subterm in focus.
    pub fn replace(&mut self, program: P) {
        self.focus = program;
        self.changed = true;
    }

    /// Applies `strategy` to the focus and replaces it with the result; on failure the
    /// focus is unchanged. Trace entries carry the focus's path.
    pub fn apply(&mut self, strategy: &Strategy<P>, cx: &mut Context) -> RewriteResult<()> {
        // The names the strategy makes must be new to the whole program: the
        // ancestors hold every part of it but the focus (each parent as of the last
        // move down, which is current everywhere off the path).
        let names = cx.names_mut();
        names.reserve_above(self.focus.name_floor());
        for frame in &self.ancestors {
            names.reserve_above(frame.parent.name_floor());
        }
        let path = self.path();
        let result = cx.descend_path(&path, |cx| strategy.apply(&self.focus, cx))?;
        if !result.same_node(&self.focus) {
            self.replace(result);
        }
        Ok(())
    }

    /// Moves to the root and returns the whole (edited) program.
    pub fn into_root(mut self) -> P {
        while self.up() {}
        self.focus
    }
}
