//! Cheap, clonable names of strategies and rules.

use std::fmt;
use std::sync::Arc;

/// The name of a strategy or rule, e.g. `topDown` or `mapFusion`.
///
/// Names are cloned on every failure, so a clone must be cheap: a static name is a
/// pointer copy, a name built at run time (from a strategy file, say) is an `Arc` bump.
///
/// ```
/// use elevate_core::Name;
/// let fixed = Name::from("topDown");
/// let built = Name::from(String::from("myRule"));
/// assert_eq!(fixed.as_str(), "topDown");
/// assert_eq!(built.to_string(), "myRule");
/// ```
#[derive(Clone)]
pub struct Name(Repr);

#[derive(Clone)]
enum Repr {
    Static(&'static str),
    Shared(Arc<str>),
}

impl Name {
    /// A name known at compile time; usable in `const` contexts.
    pub const fn new(name: &'static str) -> Self {
        Name(Repr::Static(name))
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Static(s) => s,
            Repr::Shared(s) => s,
        }
    }
}

impl From<&'static str> for Name {
    fn from(name: &'static str) -> Self {
        Name::new(name)
    }
}

impl From<String> for Name {
    fn from(name: String) -> Self {
        Name(Repr::Shared(name.into()))
    }
}

impl std::ops::Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Name {}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::hash::Hash for Name {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}
