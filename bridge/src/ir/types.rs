//! MLIR types as values: what an operation's operands, results and block arguments
//! have. They print as MLIR writes them (`memref<4x8xf32, strided<[8, 1], offset: ?>>`)
//! and the JIT makes each with MLIR's own type constructors.

use elevate_rise::types::Scalar;
use std::fmt::{self, Display, Formatter};

/// An MLIR type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Type {
    /// `index`
    Index,
    /// A signless integer of so many bits: `i1`, `i32`, `i64`.
    Int(u32),
    /// `f32`
    F32,
    /// `f64`
    F64,
    /// `vector<4x8xf32>`: its shape and element type.
    Vector(Vec<i64>, Box<Type>),
    /// `memref<...>`
    MemRef(MemRef),
    /// `(f32, index) -> ()`: a function's (or a named sequence's) type.
    Function(Vec<Type>, Vec<Type>),
    /// `!transform.any_op`: a Transform script's handle to operations.
    AnyOp,
}

/// A memref type: a buffer's shape, element type, layout and memory space.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MemRef {
    /// The extent of each dimension (none: a rank-0 buffer of one element).
    pub shape: Vec<i64>,
    /// The element type.
    pub element: Box<Type>,
    /// A strided layout; row-major where `None`.
    pub layout: Option<Strided>,
    /// Where it lives, where not in the default memory.
    pub space: Option<MemorySpace>,
}

/// A strided layout: element `(i, j, ...)` lies at `offset + i * strides[0] + ...`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Strided {
    /// The stride of each dimension, in elements.
    pub strides: Vec<i64>,
    /// The first element's offset, in elements: `None` where it is known only when
    /// the code runs (`offset: ?`).
    pub offset: Option<i64>,
}

/// A GPU memory space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemorySpace {
    /// A work group's shared memory (`#gpu.address_space<workgroup>`).
    Workgroup,
}

impl Type {
    /// `i1`: a comparison's result.
    pub const BOOL: Type = Type::Int(1);
    /// `i32`
    pub const I32: Type = Type::Int(32);
    /// `i64`
    pub const I64: Type = Type::Int(64);

    /// The type of a RISE scalar.
    pub fn scalar(s: Scalar) -> Type {
        match s {
            Scalar::Bool => Type::BOOL,
            Scalar::I32 => Type::I32,
            Scalar::I64 => Type::I64,
            Scalar::F32 => Type::F32,
            Scalar::F64 => Type::F64,
        }
    }

    /// A scalar, or a vector of `n` of them: `f32` or `vector<8xf32>`.
    pub fn lanes(s: Scalar, lanes: Option<i64>) -> Type {
        match lanes {
            None => Type::scalar(s),
            Some(n) => Type::Vector(vec![n], Box::new(Type::scalar(s))),
        }
    }

    /// A row-major buffer of scalars `s`: `memref<4x8xf32>`.
    pub fn memref(dims: &[i64], s: Scalar) -> Type {
        Type::MemRef(MemRef {
            shape: dims.to_vec(),
            element: Box::new(Type::scalar(s)),
            layout: None,
            space: None,
        })
    }

    /// A buffer of scalars `s` with a strided layout.
    pub fn strided(dims: &[i64], s: Scalar, strides: &[i64], offset: Option<i64>) -> Type {
        Type::MemRef(MemRef {
            shape: dims.to_vec(),
            element: Box::new(Type::scalar(s)),
            layout: Some(Strided {
                strides: strides.to_vec(),
                offset,
            }),
            space: None,
        })
    }

    /// The `i1` type of a comparison of values of this type, lane by lane for vectors.
    pub fn flags(&self) -> Type {
        match self {
            Type::Vector(shape, _) => Type::Vector(shape.clone(), Box::new(Type::BOOL)),
            _ => Type::BOOL,
        }
    }
}

impl Display for Type {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Type::Index => f.write_str("index"),
            Type::Int(bits) => write!(f, "i{bits}"),
            Type::F32 => f.write_str("f32"),
            Type::F64 => f.write_str("f64"),
            Type::Vector(shape, element) => {
                f.write_str("vector<")?;
                for n in shape {
                    write!(f, "{n}x")?;
                }
                write!(f, "{element}>")
            }
            Type::MemRef(m) => m.fmt(f),
            Type::Function(inputs, results) => {
                write!(f, "({}) -> ({})", list(inputs), list(results))
            }
            Type::AnyOp => f.write_str("!transform.any_op"),
        }
    }
}

impl Display for MemRef {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("memref<")?;
        for n in &self.shape {
            write!(f, "{n}x")?;
        }
        write!(f, "{}", self.element)?;
        if let Some(layout) = &self.layout {
            write!(f, ", {layout}")?;
        }
        if let Some(space) = &self.space {
            write!(f, ", {space}")?;
        }
        f.write_str(">")
    }
}

impl Display for Strided {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "strided<[{}], offset: ", list(&self.strides))?;
        match self.offset {
            Some(k) => write!(f, "{k}>"),
            None => f.write_str("?>"),
        }
    }
}

impl Display for MemorySpace {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            MemorySpace::Workgroup => f.write_str("#gpu.address_space<workgroup>"),
        }
    }
}

/// `a, b, c`
pub(crate) fn list<T: Display>(xs: &[T]) -> String {
    xs.iter().map(T::to_string).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_print_as_mlir_writes_them() {
        assert_eq!(
            Type::memref(&[4, 8], Scalar::F32).to_string(),
            "memref<4x8xf32>"
        );
        assert_eq!(Type::memref(&[], Scalar::I32).to_string(), "memref<i32>");
        assert_eq!(
            Type::strided(&[4], Scalar::F64, &[2], None).to_string(),
            "memref<4xf64, strided<[2], offset: ?>>"
        );
        assert_eq!(
            Type::strided(&[2, 2], Scalar::F32, &[8, 1], Some(3)).to_string(),
            "memref<2x2xf32, strided<[8, 1], offset: 3>>"
        );
        let v = Type::lanes(Scalar::F32, Some(8));
        assert_eq!(v.to_string(), "vector<8xf32>");
        assert_eq!(v.flags().to_string(), "vector<8xi1>");
        assert_eq!(Type::F32.flags(), Type::BOOL);
        let f = Type::Function(vec![Type::AnyOp], Vec::new());
        assert_eq!(f.to_string(), "(!transform.any_op) -> ()");
    }
}
