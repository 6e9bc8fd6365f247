//! RISE types: scalars, indices, vectors, arrays, pairs, functions, dependent functions.

use crate::nat::{Nat, NatVar, Undefined};
use elevate_core::{stack::guard, Node};
use std::fmt;

/// A scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    /// `bool`
    Bool,
    /// `i32`
    I32,
    /// `i64`
    I64,
    /// `f32`
    F32,
    /// `f64`
    F64,
}

impl Scalar {
    /// The scalar named `name`, if any.
    pub fn from_name(name: &str) -> Option<Scalar> {
        Some(match name {
            "bool" => Scalar::Bool,
            "i32" => Scalar::I32,
            "i64" => Scalar::I64,
            "f32" => Scalar::F32,
            "f64" => Scalar::F64,
            _ => return None,
        })
    }

    /// The type's name in RISE syntax.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
        }
    }

    /// Whether this is `f32` or `f64`.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64)
    }

    /// Bytes per element of a buffer of this scalar.
    pub fn bytes(self) -> u64 {
        match self {
            Scalar::Bool => 1,
            Scalar::I32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::F64 => 8,
        }
    }
}

/// An immutable, shared RISE type (a [`Node`]: hashing is O(1), and dropping or
/// comparing a type 100,000 levels deep does not overflow the stack).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Type(Node<Shape>);

/// A type's node: its shape, and what is known of everything below it, computed once
/// when the node is built (so that inference asks it in O(1)).
#[derive(Debug, PartialEq, Eq, Hash)]
struct Shape {
    kind: TypeKind,
    /// Whether an inference variable (type or nat unknown) occurs in it.
    unknowns: bool,
}

/// The shape of a type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TypeKind {
    /// A scalar.
    Scalar(Scalar),
    /// `idx[n]`: an index in `0..n`.
    Index(Nat),
    /// `vec[t, n]`: a SIMD vector of `n` scalars `t`.
    Vector(Type, Nat),
    /// `n.t`: an array of `n` elements of type `t`.
    Array(Nat, Type),
    /// `(s, t)`
    Pair(Type, Type),
    /// `s -> t`
    Fun(Type, Type),
    /// `(n: nat) -> t`
    DepFun(NatVar, Type),
    /// A type variable of inference (`'t3`), never in a checked program.
    Var(u32),
}

impl Type {
    /// Builds a type from its shape.
    pub fn new(kind: TypeKind) -> Type {
        let unknowns = match &kind {
            TypeKind::Scalar(_) => false,
            TypeKind::Var(_) => true,
            TypeKind::Index(n) => n.contains_unknown(),
            TypeKind::Vector(t, n) | TypeKind::Array(n, t) => {
                n.contains_unknown() || t.has_unknowns()
            }
            TypeKind::Pair(a, b) | TypeKind::Fun(a, b) => a.has_unknowns() || b.has_unknowns(),
            TypeKind::DepFun(_, t) => t.has_unknowns(),
        };
        Type(Node::new(Shape { kind, unknowns }))
    }

    /// The shape.
    pub fn kind(&self) -> &TypeKind {
        &self.0.kind
    }

    /// A scalar type.
    pub fn scalar(s: Scalar) -> Type {
        Type::new(TypeKind::Scalar(s))
    }

    /// `n.t`
    pub fn array(n: Nat, elem: Type) -> Type {
        Type::new(TypeKind::Array(n, elem))
    }

    /// `(a, b)`
    pub fn pair(a: Type, b: Type) -> Type {
        Type::new(TypeKind::Pair(a, b))
    }

    /// `a -> b`
    pub fn fun(a: Type, b: Type) -> Type {
        Type::new(TypeKind::Fun(a, b))
    }

    /// `(v: nat) -> t`
    pub fn dep_fun(v: NatVar, body: Type) -> Type {
        Type::new(TypeKind::DepFun(v, body))
    }

    /// `idx[n]`
    pub fn index(n: Nat) -> Type {
        Type::new(TypeKind::Index(n))
    }

    /// `vec[t, n]`
    pub fn vector(elem: Type, n: Nat) -> Type {
        Type::new(TypeKind::Vector(elem, n))
    }

    /// The inference variable `k`.
    pub fn var(k: u32) -> Type {
        Type::new(TypeKind::Var(k))
    }

    /// Whether this is data (not a function type).
    pub fn is_data(&self) -> bool {
        !matches!(self.kind(), TypeKind::Fun(..) | TypeKind::DepFun(..))
    }

    /// Whether any inference variable (type or nat unknown) remains: O(1), known
    /// since the node was built.
    pub fn has_unknowns(&self) -> bool {
        self.0.unknowns
    }

    /// Replaces nat variables (bound `DepFun` variables are left alone when shadowed).
    pub fn map_nats(&self, f: &dyn Fn(&NatVar) -> Option<Nat>) -> Type {
        guard(|| match self.kind() {
            TypeKind::Scalar(_) | TypeKind::Var(_) => self.clone(),
            TypeKind::Index(n) => Type::index(n.substitute(f)),
            TypeKind::Vector(t, n) => Type::vector(t.map_nats(f), n.substitute(f)),
            TypeKind::Array(n, t) => Type::array(n.substitute(f), t.map_nats(f)),
            TypeKind::Pair(a, b) => Type::pair(a.map_nats(f), b.map_nats(f)),
            TypeKind::Fun(a, b) => Type::fun(a.map_nats(f), b.map_nats(f)),
            TypeKind::DepFun(v, t) => {
                let inner = |w: &NatVar| if w == v { None } else { f(w) };
                Type::dep_fun(v.clone(), t.map_nats(&inner))
            }
        })
    }

    /// Replaces type variables.
    pub fn map_vars(&self, f: &dyn Fn(u32) -> Option<Type>) -> Type {
        guard(|| match self.kind() {
            TypeKind::Scalar(_) | TypeKind::Index(_) => self.clone(),
            TypeKind::Var(k) => f(*k).unwrap_or_else(|| self.clone()),
            TypeKind::Vector(t, n) => Type::vector(t.map_vars(f), n.clone()),
            TypeKind::Array(n, t) => Type::array(n.clone(), t.map_vars(f)),
            TypeKind::Pair(a, b) => Type::pair(a.map_vars(f), b.map_vars(f)),
            TypeKind::Fun(a, b) => Type::fun(a.map_vars(f), b.map_vars(f)),
            TypeKind::DepFun(v, t) => Type::dep_fun(v.clone(), t.map_vars(f)),
        })
    }

    /// Every nat variable occurring free, in order of first appearance.
    pub fn nat_vars(&self) -> Vec<NatVar> {
        let mut all = Vec::new();
        self.collect_nat_vars(&mut all);
        let mut seen = std::collections::HashSet::new();
        all.retain(|v| seen.insert(v.clone()));
        all
    }

    fn collect_nat_vars(&self, out: &mut Vec<NatVar>) {
        guard(|| match self.kind() {
            TypeKind::Scalar(_) | TypeKind::Var(_) => {}
            TypeKind::Index(n) => out.extend(n.vars()),
            TypeKind::Vector(t, n) | TypeKind::Array(n, t) => {
                out.extend(n.vars());
                t.collect_nat_vars(out);
            }
            TypeKind::Pair(a, b) | TypeKind::Fun(a, b) => {
                a.collect_nat_vars(out);
                b.collect_nat_vars(out);
            }
            TypeKind::DepFun(v, t) => {
                let mut inner = Vec::new();
                t.collect_nat_vars(&mut inner);
                out.extend(inner.into_iter().filter(|w| w != v));
            }
        })
    }
}

/// Where a size stands in a type, and the least value it may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeRole {
    /// `n` in `n.t`: at least 0.
    ArrayLength,
    /// `n` in `vec[t, n]`: at least 1, a vector has at least one lane.
    VectorWidth,
    /// `n` in `idx[n]`: at least 1, `idx[0]` has no values.
    IndexBound,
}

impl SizeRole {
    /// The least value a size in this role may take.
    pub fn minimum(self) -> i64 {
        match self {
            SizeRole::ArrayLength => 0,
            SizeRole::VectorWidth | SizeRole::IndexBound => 1,
        }
    }
}

impl fmt::Display for SizeRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SizeRole::ArrayLength => "array length",
            SizeRole::VectorWidth => "vector width",
            SizeRole::IndexBound => "index bound",
        })
    }
}

/// Why a type is not well formed: one of its sizes has no value, or a value
/// that no array, vector or index can have. `ty` is the innermost type with
/// the offending size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IllFormed {
    /// The size is undefined: a division by zero, an overflow, ...
    #[error("the {role} in {ty} is undefined: {why}")]
    Undefined {
        /// Where the size stands.
        role: SizeRole,
        /// The type with the size.
        ty: Type,
        /// Why the size has no value.
        why: Undefined,
    },
    /// The size is a constant fraction such as `3/2`.
    #[error("the {role} {size} in {ty} is not a whole number")]
    Fractional {
        /// Where the size stands.
        role: SizeRole,
        /// The size.
        size: Nat,
        /// The type with the size.
        ty: Type,
    },
    /// The size is below its role's minimum whatever its variables are: a
    /// negative array length (`(1 - 2).f32`, `(0 - n - 1).f32`), a vector
    /// without lanes (`vec[f32, 0]`) or an index type without values
    /// (`idx[0]`).
    #[error("the {role} {size} in {ty} is {}", below(*.role))]
    TooSmall {
        /// Where the size stands.
        role: SizeRole,
        /// The size.
        size: Nat,
        /// The type with the size.
        ty: Type,
    },
}

/// Why a size is too small for `role`.
fn below(role: SizeRole) -> &'static str {
    match role {
        SizeRole::ArrayLength => "negative",
        SizeRole::VectorWidth => "not positive: a vector needs at least one lane",
        SizeRole::IndexBound => "not positive: an index type needs at least one value",
    }
}

impl Type {
    /// Checks that every size in the type has a value that its place allows:
    /// it is defined (no division by zero, no overflow: see
    /// [`Nat::undefined`]), it is not a constant fraction, and it is not
    /// below the role's minimum whatever its variables are (see
    /// [`Nat::is_always_below`]): array lengths are at least 0, vector
    /// widths and index bounds at least 1. Symbolic sizes such as `n - 1` are
    /// fine: they are checked when the program runs.
    ///
    /// ```
    /// use elevate_rise::parse_type;
    /// use elevate_rise::types::{IllFormed, Type};
    /// use elevate_rise::nat::Nat;
    /// let f32 = parse_type("f32").unwrap();
    /// assert!(Type::array(Nat::named("n") - Nat::cst(1), f32.clone()).check_well_formed().is_ok());
    /// let bad = Type::array(Nat::named("n") / Nat::ZERO, f32.clone());
    /// let e = bad.check_well_formed().unwrap_err();
    /// assert!(matches!(e, IllFormed::Undefined { .. }));
    /// assert_eq!(e.to_string(), "the array length in (n / 0).f32 is undefined: division by zero in n / 0");
    /// let e = Type::vector(f32, Nat::ZERO).check_well_formed().unwrap_err();
    /// assert_eq!(e.to_string(), "the vector width 0 in vec[f32, 0] is not positive: a vector needs at least one lane");
    /// ```
    pub fn check_well_formed(&self) -> Result<(), IllFormed> {
        // An explicit work list: types may be nested very deeply.
        let mut work = vec![self];
        while let Some(ty) = work.pop() {
            match ty.kind() {
                TypeKind::Scalar(_) | TypeKind::Var(_) => {}
                TypeKind::Index(n) => check_size(n, SizeRole::IndexBound, ty)?,
                TypeKind::Vector(elem, n) => {
                    check_size(n, SizeRole::VectorWidth, ty)?;
                    work.push(elem);
                }
                TypeKind::Array(n, elem) => {
                    check_size(n, SizeRole::ArrayLength, ty)?;
                    work.push(elem);
                }
                TypeKind::Pair(a, b) | TypeKind::Fun(a, b) => {
                    work.push(b);
                    work.push(a);
                }
                TypeKind::DepFun(_, body) => work.push(body),
            }
        }
        Ok(())
    }
}

/// Checks one size of `ty` (inference checks each distinct part of a type once).
pub(crate) fn check_size(size: &Nat, role: SizeRole, ty: &Type) -> Result<(), IllFormed> {
    if let Some(why) = size.undefined() {
        return Err(IllFormed::Undefined {
            role,
            ty: ty.clone(),
            why: why.clone(),
        });
    }
    let (size, ty) = (size.clone(), ty.clone());
    if size.is_const() && !size.is_integral() {
        return Err(IllFormed::Fractional { role, size, ty });
    }
    if size.is_always_below(role.minimum()) {
        return Err(IllFormed::TooSmall { role, size, ty });
    }
    Ok(())
}

/// Writes a nat where it must read as one atom (an array size, say).
pub(crate) fn write_nat_atom(f: &mut fmt::Formatter<'_>, n: &Nat) -> fmt::Result {
    let text = n.to_string();
    let atomic = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '?');
    if atomic {
        f.write_str(&text)
    } else {
        write!(f, "({text})")
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        guard(|| match self.kind() {
            TypeKind::Scalar(s) => f.write_str(s.name()),
            TypeKind::Index(n) => write!(f, "idx[{n}]"),
            TypeKind::Vector(t, n) => write!(f, "vec[{t}, {n}]"),
            TypeKind::Array(n, t) => {
                write_nat_atom(f, n)?;
                f.write_str(".")?;
                if t.is_data() {
                    write!(f, "{t}")
                } else {
                    write!(f, "({t})")
                }
            }
            TypeKind::Pair(a, b) => write!(f, "({a}, {b})"),
            TypeKind::Fun(a, b) => {
                if a.is_data() {
                    write!(f, "{a} -> {b}")
                } else {
                    write!(f, "({a}) -> {b}")
                }
            }
            TypeKind::DepFun(v, t) => match v {
                NatVar::Named(name) => write!(f, "({name}: nat) -> {t}"),
                NatVar::Unknown(k) => write!(f, "(?{k}: nat) -> {t}"),
            },
            TypeKind::Var(k) => write!(f, "'t{k}"),
        })
    }
}

impl fmt::Debug for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}
