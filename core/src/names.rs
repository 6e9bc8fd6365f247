//! Supplies of fresh identities for the names (variables, binders) a program makes.

/// A counter that hands out identities for new names, owned by whoever makes them: a
/// [`Context`](crate::Context) for the rules of one run, a parser for one file, a
/// program generator, a printer.
///
/// There is no process-wide counter: two runs never share a supply, so a run's result
/// (its identities included) depends only on the program and the strategy, not on
/// what ran before in the process. A supply only knows the identities it gave out;
/// the identities already used by a program are told to it with
/// [`reserve_above`](Self::reserve_above) and a program's
/// [`name_floor`](crate::Traversable::name_floor). Traversals do this whenever they
/// move from a node to a child, and rules for the node they rewrite, so that within
/// a run every new identity is above every identity of the whole program.
///
/// ```
/// use elevate_core::NameSupply;
/// let mut names = NameSupply::new();
/// assert_eq!(names.fresh(), 0);
/// names.reserve_above(10); // a program uses identities up to 9
/// assert_eq!(names.fresh(), 10);
/// names.reserve_above(5); // never goes back
/// assert_eq!(names.fresh(), 11);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameSupply {
    /// The identity handed out next.
    next: u64,
}

impl NameSupply {
    /// A supply that starts at 0.
    pub fn new() -> Self {
        NameSupply::default()
    }

    /// A supply whose identities are all `>= floor`.
    pub fn above(floor: u64) -> Self {
        NameSupply { next: floor }
    }

    /// A fresh identity: distinct from every identity this supply gave before, and
    /// `>=` every floor it was told of.
    ///
    /// # Panics
    /// If all 2^64 identities have been given out (a floor that high is never the
    /// floor of a real program: its identities come from supplies).
    #[inline]
    pub fn fresh(&mut self) -> u64 {
        let id = self.next;
        self.next = id.checked_add(1).expect("the name supply is exhausted");
        id
    }

    /// Makes every identity given from now on `>= floor`. Cheap (a comparison), so
    /// traversals call it at every node they descend from.
    #[inline]
    pub fn reserve_above(&mut self, floor: u64) {
        self.next = self.next.max(floor);
    }

    /// The identity [`fresh`](Self::fresh) would give next: every identity given so
    /// far is below it.
    #[inline]
    pub fn peek(&self) -> u64 {
        self.next
    }
}
