//! MLIR attributes as values: an operation's properties and discardable attributes.
//! They print as MLIR's generic form writes them (`array<i64: 1, 0>`,
//! `affine_map<(d0, d1) -> (d1)>`), and the JIT makes each with MLIR's own attribute
//! constructors (the few dialect attributes MLIR's C API has no constructor for from
//! their text, once per context).

use super::types::{list, MemorySpace, Type};
use elevate_rise::loop_program::DimExpr;
use std::fmt::{self, Display, Formatter};

/// An MLIR attribute.
#[derive(Debug, Clone, PartialEq)]
pub enum Attr {
    /// A unit attribute (present or not): written by its name alone in a dictionary.
    Unit,
    /// `true`, `false`
    Bool(bool),
    /// An integer of a type: `64 : i64`, `2 : i32`, `-1 : index`.
    Int(i64, Type),
    /// A float of a type, by its bits (exact): `0x3F800000 : f32`.
    Float(u64, Type),
    /// A vector (or another shaped type) each element of which is the integer or
    /// float: `dense<0x3F800000> : vector<8xf32>`.
    Splat(Box<Attr>, Type),
    /// `"text"`
    Str(String),
    /// `array<i64: 1, 2>`
    I64s(Vec<i64>),
    /// `array<i32: 1, 2>` (operand segment sizes).
    I32s(Vec<i32>),
    /// `array<i1: false, true>`
    Bools(Vec<bool>),
    /// `[1, 2]`: integers of type `i64` in an array (promoted operands, a group of
    /// dimensions of a reassociation).
    Ints(Vec<i64>),
    /// `[a, b]`
    Array(Vec<Attr>),
    /// `{a = 1 : i64, b}`
    Dict(Vec<(String, Attr)>),
    /// A type as an attribute: a function's type.
    Type(Type),
    /// `affine_map<(d0, d1) -> (d1, d0 * 4 + 1)>`: each result in the dimensions.
    AffineMap {
        /// The number of dimensions.
        dims: usize,
        /// The results.
        results: Vec<DimExpr>,
    },
    /// `#linalg.iterator_type<parallel>` (`false`) or `<reduction>` (`true`).
    Iterator {
        /// Whether the dimension is a reduction.
        reduction: bool,
    },
    /// `#arith.fastmath<contract>`: a float operation may fuse into a multiply-add.
    Contract,
    /// `#vector.kind<or>`
    VectorOr,
    /// `#gpu.block<x>` (`thread` false) or `#gpu.thread<x>`: what a loop maps to.
    GpuMapping {
        /// Threads of a block, or blocks.
        thread: bool,
        /// 0, 1, 2 for `x`, `y`, `z`.
        axis: u8,
    },
    /// A memory space.
    Space(MemorySpace),
}

impl Attr {
    /// `n : i64`
    pub fn i64(n: i64) -> Attr {
        Attr::Int(n, Type::I64)
    }

    /// `n : i32`
    pub fn i32(n: i64) -> Attr {
        Attr::Int(n, Type::I32)
    }

    /// `value` (an integer or float) of type `ty`, each lane of it where `ty` is a
    /// vector.
    pub fn of_type(value: Attr, ty: &Type) -> Attr {
        match ty {
            Type::Vector(..) => Attr::Splat(Box::new(value), ty.clone()),
            _ => value,
        }
    }

    /// `"text"`
    pub fn string(text: impl Into<String>) -> Attr {
        Attr::Str(text.into())
    }

    /// `array<i32: ...>`: the operand segment sizes of an operation with variadic
    /// operand groups.
    pub fn segments(sizes: &[usize]) -> Attr {
        Attr::I32s(sizes.iter().map(|&n| n as i32).collect())
    }

    /// `[name]`: a list of one string.
    pub fn names(names: &[&str]) -> Attr {
        Attr::Array(names.iter().map(|n| Attr::string(*n)).collect())
    }
}

impl Display for Attr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Attr::Unit => f.write_str("unit"),
            Attr::Bool(b) => write!(f, "{b}"),
            Attr::Int(n, ty) => write!(f, "{n} : {ty}"),
            Attr::Float(bits, Type::F32) => write!(f, "0x{bits:08X} : f32"),
            Attr::Float(bits, ty) => write!(f, "0x{bits:016X} : {ty}"),
            Attr::Splat(element, ty) => match &**element {
                Attr::Int(n, _) => write!(f, "dense<{n}> : {ty}"),
                Attr::Float(bits, Type::F32) => write!(f, "dense<0x{bits:08X}> : {ty}"),
                Attr::Float(bits, _) => write!(f, "dense<0x{bits:016X}> : {ty}"),
                other => write!(f, "dense<{other}> : {ty}"),
            },
            Attr::Str(s) => write!(f, "{s:?}"),
            Attr::I64s(xs) => dense(f, "i64", xs),
            Attr::I32s(xs) => dense(f, "i32", xs),
            Attr::Bools(xs) => dense(f, "i1", xs),
            Attr::Ints(xs) => write!(f, "[{}]", list(xs)),
            Attr::Array(xs) => write!(f, "[{}]", list(xs)),
            Attr::Dict(entries) => write!(f, "{{{}}}", dictionary(entries)),
            Attr::Type(ty) => write!(f, "{ty}"),
            Attr::AffineMap { dims, results } => {
                let dims: Vec<String> = (0..*dims).map(|d| format!("d{d}")).collect();
                write!(
                    f,
                    "affine_map<({}) -> ({})>",
                    dims.join(", "),
                    list(results)
                )
            }
            Attr::Iterator { reduction } => {
                let kind = if *reduction { "reduction" } else { "parallel" };
                write!(f, "#linalg.iterator_type<{kind}>")
            }
            Attr::Contract => f.write_str("#arith.fastmath<contract>"),
            Attr::VectorOr => f.write_str("#vector.kind<or>"),
            Attr::GpuMapping { thread, axis } => {
                let level = if *thread { "thread" } else { "block" };
                let axis = ["x", "y", "z"][usize::from(*axis).min(2)];
                write!(f, "#gpu.{level}<{axis}>")
            }
            Attr::Space(space) => write!(f, "{space}"),
        }
    }
}

/// `array<i64: 1, 2>`, `array<i64>` where empty.
fn dense<T: Display>(f: &mut Formatter<'_>, ty: &str, xs: &[T]) -> fmt::Result {
    match xs.is_empty() {
        true => write!(f, "array<{ty}>"),
        false => write!(f, "array<{ty}: {}>", list(xs)),
    }
}

/// `a = 1, b` from attribute names and values (a unit attribute by its name alone).
pub(crate) fn dictionary(entries: &[(String, Attr)]) -> String {
    entries
        .iter()
        .map(|(k, v)| match v {
            Attr::Unit => k.clone(),
            _ => format!("{k} = {v}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_print_as_the_generic_form_writes_them() {
        assert_eq!(Attr::i64(64).to_string(), "64 : i64");
        assert_eq!(Attr::Int(-3, Type::Index).to_string(), "-3 : index");
        assert_eq!(
            Attr::Float(1.0f32.to_bits() as u64, Type::F32).to_string(),
            "0x3F800000 : f32"
        );
        assert_eq!(
            Attr::Float(1.0f64.to_bits(), Type::F64).to_string(),
            "0x3FF0000000000000 : f64"
        );
        let v = Type::Vector(vec![8], Box::new(Type::I32));
        assert_eq!(
            Attr::of_type(Attr::Int(127, Type::I32), &v).to_string(),
            "dense<127> : vector<8xi32>"
        );
        assert_eq!(Attr::I64s(vec![1, 0]).to_string(), "array<i64: 1, 0>");
        assert_eq!(Attr::I64s(Vec::new()).to_string(), "array<i64>");
        assert_eq!(Attr::segments(&[2, 1]).to_string(), "array<i32: 2, 1>");
        assert_eq!(
            Attr::Bools(vec![false; 2]).to_string(),
            "array<i1: false, false>"
        );
        let groups = Attr::Array(vec![Attr::Ints(vec![0, 1]), Attr::Ints(vec![2])]);
        assert_eq!(groups.to_string(), "[[0, 1], [2]]");
        let dict = Attr::Dict(vec![
            ("transform.readonly".into(), Attr::Unit),
            ("elevate.kernel".into(), Attr::i64(3)),
        ]);
        assert_eq!(
            dict.to_string(),
            "{transform.readonly, elevate.kernel = 3 : i64}"
        );
        let map = Attr::AffineMap {
            dims: 2,
            results: vec![
                DimExpr {
                    terms: vec![(1, 1)],
                    c: 0,
                },
                DimExpr {
                    terms: vec![(0, 4)],
                    c: 1,
                },
            ],
        };
        assert_eq!(map.to_string(), "affine_map<(d0, d1) -> (d1, d0 * 4 + 1)>");
        let thread = Attr::GpuMapping {
            thread: true,
            axis: 1,
        };
        assert_eq!(thread.to_string(), "#gpu.thread<y>");
        assert_eq!(
            Attr::names(&["linalg.copy"]).to_string(),
            "[\"linalg.copy\"]"
        );
    }
}
