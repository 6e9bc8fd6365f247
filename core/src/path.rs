//! Paths: locations in a program as child positions from the root.

use std::fmt;
use std::str::FromStr;

/// A location in a program: the child positions taken from the root, outermost first.
///
/// Displays as `[0, 1, 1]`; the root is `[]`. Parses back from the same text.
///
/// ```
/// use elevate_core::Path;
/// let p: Path = "[0, 2]".parse().unwrap();
/// assert_eq!(p.as_slice(), &[0, 2]);
/// assert_eq!(p.child(1).to_string(), "[0, 2, 1]");
/// assert_eq!(Path::root().to_string(), "[]");
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Path(Vec<u32>);

impl Path {
    /// The empty path: the root of the program.
    pub fn root() -> Self {
        Path(Vec::new())
    }

    /// The child positions, outermost first.
    pub fn as_slice(&self) -> &[u32] {
        &self.0
    }

    /// Number of steps from the root.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether this is the root.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// This path extended by one step into child `index`.
    pub fn child(&self, index: u32) -> Path {
        let mut steps = self.0.clone();
        steps.push(index);
        Path(steps)
    }

    /// Appends a step.
    pub fn push(&mut self, index: u32) {
        self.0.push(index)
    }

    /// Removes the last step.
    pub fn pop(&mut self) -> Option<u32> {
        self.0.pop()
    }

    /// Whether `self` is `other` or lies below it.
    pub fn starts_with(&self, other: &Path) -> bool {
        self.0.starts_with(&other.0)
    }
}

impl From<Vec<u32>> for Path {
    fn from(steps: Vec<u32>) -> Self {
        Path(steps)
    }
}

impl From<&[u32]> for Path {
    fn from(steps: &[u32]) -> Self {
        Path(steps.to_vec())
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, step) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{step}")?;
        }
        f.write_str("]")
    }
}

impl fmt::Debug for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The text was not a path such as `[0, 1]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsePathError {
    /// Byte offset in the text where the problem was found.
    pub offset: usize,
}

impl fmt::Display for ParsePathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "expected a path such as [0, 1] (column {})",
            self.offset + 1
        )
    }
}

impl std::error::Error for ParsePathError {}

impl FromStr for Path {
    type Err = ParsePathError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let trimmed = text.trim();
        let start = text.len() - text.trim_start().len();
        let inner = trimmed
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .ok_or(ParsePathError { offset: start })?;
        if inner.trim().is_empty() {
            return Ok(Path::root());
        }
        let mut offset = start + 1;
        let mut steps = Vec::new();
        for part in inner.split(',') {
            let step = part.trim().parse().map_err(|_| ParsePathError { offset })?;
            steps.push(step);
            offset += part.len() + 1;
        }
        Ok(Path(steps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_print_and_parse() {
        for text in ["[]", "[0]", "[0, 1, 12]"] {
            assert_eq!(text.parse::<Path>().unwrap().to_string(), text);
        }
        assert_eq!(" [ 1,2 ] ".parse::<Path>().unwrap().as_slice(), &[1, 2]);
        assert_eq!("[0, x]".parse::<Path>().unwrap_err().offset, 3);
        assert_eq!("0, 1".parse::<Path>().unwrap_err().offset, 0);
        assert!(Path::from(vec![0, 1]).starts_with(&Path::from(vec![0])));
    }
}
