//! RISE types: scalars, indices, vectors, arrays, pairs, functions, dependent functions.

use crate::nat::{Nat, NatVar};
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
}

/// An immutable, shared RISE type (a [`Node`]: hashing is O(1), and dropping or
/// comparing a type 100,000 levels deep does not overflow the stack).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Type(Node<TypeKind>);

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
        Type(Node::new(kind))
    }

    /// The shape.
    pub fn kind(&self) -> &TypeKind {
        &self.0
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

    /// Whether any inference variable (type or nat unknown) remains.
    pub fn has_unknowns(&self) -> bool {
        guard(|| match self.kind() {
            TypeKind::Scalar(_) => false,
            TypeKind::Var(_) => true,
            TypeKind::Index(n) => n.contains_unknown(),
            TypeKind::Vector(t, n) | TypeKind::Array(n, t) => {
                n.contains_unknown() || t.has_unknowns()
            }
            TypeKind::Pair(a, b) | TypeKind::Fun(a, b) => a.has_unknowns() || b.has_unknowns(),
            TypeKind::DepFun(_, t) => t.has_unknowns(),
        })
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
        let mut out: Vec<NatVar> = Vec::new();
        for v in all {
            if !out.contains(&v) {
                out.push(v);
            }
        }
        out
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
