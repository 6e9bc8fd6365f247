//! Limits on what a run may allocate, checked before memory is taken.
//!
//! Sizes are symbolic until a program runs, and legal sizes can be absurd (`n = 2^40`,
//! `padCst(2^40, ...)`). Every stage that allocates an array for a value (random
//! inputs, the interpreter, the compiled code's buffers) asks [`Limits::check_array`]
//! first, so that an impossible size is an error that names the size and the limit,
//! never an allocation abort.
//!
//! ```
//! use elevate_rise::limits::Limits;
//! let limits = Limits::with_max_bytes(1 << 20);
//! assert!(limits.check_array("the result", 1024, 4).is_ok());
//! let e = limits.check_array("the result", 1 << 40, 4).unwrap_err();
//! assert!(e.to_string().contains("1099511627776 elements"));
//! ```

use crate::nat::Nat;
use crate::types::{Type, TypeKind};
use elevate_core::stack::guard;
use std::fmt;

/// The environment variable that overrides the default memory limit, in bytes
/// (`ELEVATE_MAX_BYTES=4000000000`) or with a unit (`4G`, `512M`, `64K`).
pub const MAX_BYTES_VAR: &str = "ELEVATE_MAX_BYTES";

/// Bounds on one run's allocations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most bytes one array (or all the buffers of one call) may take.
    pub max_bytes: u64,
}

/// A size over a limit, or a size that does not fit in memory at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeError {
    /// What was to be allocated ("the result", "parameter `x`", ...).
    pub what: String,
    /// How many elements it has.
    pub elements: u128,
    /// How many bytes that takes.
    pub bytes: u128,
    /// The limit in bytes.
    pub max_bytes: u64,
}

impl fmt::Display for SizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.elements == u128::MAX {
            // Saturated: the true count does not fit in 128 bits.
            return write!(
                f,
                "{} has more than 2^128 elements, over the limit of {} (set {MAX_BYTES_VAR} to change it)",
                self.what,
                human_bytes(u128::from(self.max_bytes)),
            );
        }
        write!(
            f,
            "{} has {} elements ({}), over the limit of {} (set {MAX_BYTES_VAR} to change it)",
            self.what,
            self.elements,
            human_bytes(self.bytes),
            human_bytes(u128::from(self.max_bytes)),
        )
    }
}

impl std::error::Error for SizeError {}

impl Default for Limits {
    /// Half of the machine's physical memory, or what [`MAX_BYTES_VAR`] says.
    fn default() -> Self {
        let from_env = std::env::var(MAX_BYTES_VAR)
            .ok()
            .and_then(|text| parse_bytes(&text));
        Limits {
            max_bytes: from_env.unwrap_or_else(|| physical_memory() / 2),
        }
    }
}

impl Limits {
    /// Limits of at most `max_bytes` per array.
    pub fn with_max_bytes(max_bytes: u64) -> Self {
        Limits { max_bytes }
    }

    /// Succeeds if an array of `elements` elements of `element_bytes` bytes each fits.
    pub fn check_array(
        &self,
        what: &str,
        elements: u128,
        element_bytes: u64,
    ) -> Result<(), SizeError> {
        let bytes = elements.saturating_mul(u128::from(element_bytes.max(1)));
        if bytes > u128::from(self.max_bytes) {
            return Err(SizeError {
                what: what.to_string(),
                elements,
                bytes,
                max_bytes: self.max_bytes,
            });
        }
        Ok(())
    }
}

/// How many elements a value of the data type `ty` holds once materialized, with the
/// sizes that `size` gives: scalars, each element of an array counting at least one
/// (`1000000.0.f32` is a million empty rows, each a value to make). Saturates at
/// `u128::MAX`, which no limit allows. `None` where a size is unknown or negative,
/// or `ty` is not a data type.
///
/// ```
/// use elevate_rise::{limits::elements_in, nat::Nat, parse_type};
/// let size = |n: &Nat| n.eval(&|_| Some(10));
/// assert_eq!(elements_in(&parse_type("n.(f32, vec[f32, 4])").unwrap(), &size), Some(50));
/// assert_eq!(elements_in(&parse_type("n.n.0.f32").unwrap(), &size), Some(100));
/// ```
pub fn elements_in(ty: &Type, size: &dyn Fn(&Nat) -> Option<i64>) -> Option<u128> {
    let count = |n: &Nat| size(n).and_then(|v| u128::try_from(v).ok());
    // Types nest as deep as programs do.
    guard(|| match ty.kind() {
        TypeKind::Scalar(_) | TypeKind::Index(_) => Some(1),
        TypeKind::Vector(elem, n) | TypeKind::Array(n, elem) => {
            Some(count(n)?.saturating_mul(elements_in(elem, size)?.max(1)))
        }
        TypeKind::Pair(a, b) => Some(elements_in(a, size)?.saturating_add(elements_in(b, size)?)),
        TypeKind::Fun(..) | TypeKind::DepFun(..) | TypeKind::Var(_) => None,
    })
}

/// `4G`, `512M`, `64K` or a plain number of bytes.
pub fn parse_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, scale) = match text.char_indices().last()? {
        (i, 'K' | 'k') => (&text[..i], 1u64 << 10),
        (i, 'M' | 'm') => (&text[..i], 1 << 20),
        (i, 'G' | 'g') => (&text[..i], 1 << 30),
        (i, 'T' | 't') => (&text[..i], 1 << 40),
        _ => (text, 1),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(scale)
}

fn human_bytes(bytes: u128) -> String {
    const UNITS: [(&str, u128); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (unit, size) in UNITS {
        if bytes >= size {
            return format!("{:.1} {unit}", bytes as f64 / size as f64);
        }
    }
    format!("{bytes} bytes")
}

/// The machine's physical memory in bytes (Linux's `/proc/meminfo`; 8 GiB where it
/// cannot be read). Read once per process: limits are made for every program a search
/// costs, and a read of `/proc` each time was a sixth of the cost model's time.
fn physical_memory() -> u64 {
    static MEMORY: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *MEMORY.get_or_init(read_physical_memory)
}

fn read_physical_memory() -> u64 {
    const FALLBACK: u64 = 8 << 30;
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            kib.checked_mul(1024)
        })
        .unwrap_or(FALLBACK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_parse() {
        assert_eq!(parse_bytes("4G"), Some(4 << 30));
        assert_eq!(parse_bytes("512m"), Some(512 << 20));
        assert_eq!(parse_bytes("1000"), Some(1000));
        assert_eq!(parse_bytes("lots"), None);
        assert_eq!(parse_bytes("99999999999T"), None);
    }

    #[test]
    fn saturated_counts_say_so() {
        let e = Limits::with_max_bytes(1)
            .check_array("x", u128::MAX, 4)
            .unwrap_err();
        assert!(e.to_string().contains("more than 2^128 elements"), "{e}");
    }

    #[test]
    fn the_default_is_below_physical_memory() {
        let limits = Limits::default();
        assert!(limits.max_bytes > 0);
        assert!(limits.check_array("x", u128::from(u64::MAX), 4).is_err());
    }
}
