//! RISE as an egg [`Language`]: typed e-nodes with De Bruijn indices, and the
//! [`Analysis`] that keeps, for every e-class, its type, its free variables and its
//! smallest term (which substitution and shifting extract, as in Koehler et al.'s
//! encoding: substitution performed by extraction).

use crate::nat::{Nat, NatVar};
use crate::prim::Prim;
use crate::term::Literal;
use crate::types::Type;
use egg::{Analysis, DidMerge, EGraph, Id, Language};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::fmt;
use std::hash::Hash;
use std::sync::{LazyLock, RwLock};

/// An interned RISE type: e-nodes carry one, so that a variable `%0` of type `f32`
/// and one of type `4.f32` are different e-nodes, and polymorphic primitives are
/// instantiated (`map` on `4.f32` is not `map` on `8.f32`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TyId(u32);

/// An interned nat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NatId(u32);

/// Interning tables are process-wide, so e-nodes and compiled patterns mean the same
/// in every e-graph; types and nats are few, so they are never freed.
struct Interner<T> {
    ids: FxHashMap<T, u32>,
    items: Vec<T>,
}

impl<T: Clone + Eq + Hash> Interner<T> {
    fn new() -> Self {
        Interner {
            ids: FxHashMap::default(),
            items: Vec::new(),
        }
    }
}

fn intern<T: Clone + Eq + Hash>(table: &RwLock<Interner<T>>, value: &T) -> u32 {
    if let Some(&id) = table.read().expect("interner").ids.get(value) {
        return id;
    }
    let mut table = table.write().expect("interner");
    if let Some(&id) = table.ids.get(value) {
        return id;
    }
    let id = table.items.len() as u32;
    table.items.push(value.clone());
    table.ids.insert(value.clone(), id);
    id
}

static TYPES: LazyLock<RwLock<Interner<Type>>> = LazyLock::new(|| RwLock::new(Interner::new()));
static NATS: LazyLock<RwLock<Interner<Nat>>> = LazyLock::new(|| RwLock::new(Interner::new()));

impl TyId {
    /// The id of `ty`.
    pub fn of(ty: &Type) -> TyId {
        TyId(intern(&TYPES, ty))
    }

    /// The type.
    pub fn get(self) -> Type {
        TYPES.read().expect("interner").items[self.0 as usize].clone()
    }

    /// The pseudo-type of nat e-nodes (the argument of `split(n)`).
    pub const NAT: TyId = TyId(u32::MAX);
}

impl NatId {
    /// The id of `n`.
    pub fn of(n: &Nat) -> NatId {
        NatId(intern(&NATS, n))
    }

    /// The nat.
    pub fn get(self) -> Nat {
        NATS.read().expect("interner").items[self.0 as usize].clone()
    }
}

/// A literal as ordered bits (floats compare by representation, as in terms).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LitBits(u8, u64);

impl From<Literal> for LitBits {
    fn from(l: Literal) -> LitBits {
        match l {
            Literal::Bool(b) => LitBits(0, b as u64),
            Literal::I32(v) => LitBits(1, v as u32 as u64),
            Literal::I64(v) => LitBits(2, v as u64),
            Literal::F32(v) => LitBits(3, v.to_bits() as u64),
            Literal::F64(v) => LitBits(4, v.to_bits()),
        }
    }
}

impl From<LitBits> for Literal {
    fn from(b: LitBits) -> Literal {
        match b.0 {
            0 => Literal::Bool(b.1 != 0),
            1 => Literal::I32(b.1 as u32 as i32),
            2 => Literal::I64(b.1 as i64),
            3 => Literal::F32(f32::from_bits(b.1 as u32)),
            _ => Literal::F64(f64::from_bits(b.1)),
        }
    }
}

/// The operator of an e-node.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// A variable, as its De Bruijn index (`%0` is the innermost binder).
    Var(u32),
    /// `fun(body)`: one child.
    Lam,
    /// `f(a)`: children `f`, `a`.
    App,
    /// `depFun(n => body)`: one child; nat variables keep their names (rules never
    /// duplicate nat binders).
    NatLam(NatVar),
    /// `f(n)` for a nat: children `f` and a [`Op::Nat`] node.
    NatApp,
    /// A nat, the argument of [`Op::NatApp`].
    Nat(NatId),
    /// A literal.
    Lit(LitBits),
    /// A primitive.
    Prim(Prim),
    /// `[a, b, ...]`
    Array,
}

/// An e-node of RISE: an operator, its type, its children.
///
/// Equality and hashing include the type; [`Language::matches`] (what patterns use)
/// compares operators only, so a rule's pattern matches instances of any type.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rise {
    /// The operator.
    pub op: Op,
    /// The type of the e-node (all e-nodes of a class have equal types).
    pub ty: TyId,
    /// The children.
    pub children: SmallVec<[Id; 2]>,
}

impl Rise {
    /// An e-node.
    pub fn new(op: Op, ty: TyId, children: impl IntoIterator<Item = Id>) -> Rise {
        Rise {
            op,
            ty,
            children: children.into_iter().collect(),
        }
    }

    /// A leaf.
    pub fn leaf(op: Op, ty: TyId) -> Rise {
        Rise::new(op, ty, [])
    }

    /// The nat leaf for `n`.
    pub fn nat(n: &Nat) -> Rise {
        Rise::leaf(Op::Nat(NatId::of(n)), TyId::NAT)
    }
}

impl Language for Rise {
    type Discriminant = Op;

    fn discriminant(&self) -> Op {
        self.op.clone()
    }

    fn matches(&self, other: &Self) -> bool {
        self.op == other.op && self.children.len() == other.children.len()
    }

    fn children(&self) -> &[Id] {
        &self.children
    }

    fn children_mut(&mut self) -> &mut [Id] {
        &mut self.children
    }
}

impl fmt::Display for Rise {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.op {
            Op::Var(i) => write!(f, "%{i}"),
            Op::Lam => f.write_str("fun"),
            Op::App => f.write_str("app"),
            Op::NatLam(v) => write!(f, "depFun({v})"),
            Op::NatApp => f.write_str("natApp"),
            Op::Nat(n) => write!(f, "{}", n.get()),
            Op::Lit(l) => {
                let term = crate::term::Term::literal(Literal::from(*l));
                f.write_str(&crate::print::print_term(&term))
            }
            Op::Prim(p) => f.write_str(p.name()),
            Op::Array => f.write_str("array"),
        }
    }
}

/// The free De Bruijn indices of a class, sorted (few: the binders a subterm sees).
pub type FreeVars = SmallVec<[u32; 4]>;

/// What the analysis knows about an e-class.
#[derive(Debug, Clone)]
pub struct RiseData {
    /// The class's type.
    pub ty: TyId,
    /// Indices free in some e-node of the class (a union: a rule that needs a
    /// variable not to occur is then sound for every representative).
    pub free: FreeVars,
    /// The size of the smallest term of the class.
    pub size: usize,
    /// The root of that smallest term (children are the classes' own smallest terms).
    pub best: Rise,
}

/// The e-class analysis of RISE.
#[derive(Debug, Default, Clone)]
pub struct RiseAnalysis;

/// An e-graph of RISE.
pub type RiseGraph = EGraph<Rise, RiseAnalysis>;

fn union_sorted(a: &FreeVars, b: &FreeVars) -> FreeVars {
    let mut out: FreeVars = a.iter().chain(b.iter()).copied().collect();
    out.sort_unstable();
    out.dedup();
    out
}

impl Analysis<Rise> for RiseAnalysis {
    type Data = RiseData;

    fn make(egraph: &mut RiseGraph, enode: &Rise, _id: Id) -> RiseData {
        let data = |id: Id| &egraph[id].data;
        let mut free: FreeVars = match enode.op {
            Op::Var(i) => [i].into_iter().collect(),
            _ => FreeVars::new(),
        };
        for &c in &enode.children {
            let child = &data(c).free;
            if enode.op == Op::Lam {
                free.extend(child.iter().filter(|&&i| i > 0).map(|i| i - 1));
            } else {
                free = union_sorted(&free, child);
            }
        }
        let size = enode
            .children
            .iter()
            .fold(1usize, |s, &c| s.saturating_add(data(c).size));
        RiseData {
            ty: enode.ty,
            free,
            size,
            best: enode.clone(),
        }
    }

    fn merge(&mut self, a: &mut RiseData, b: RiseData) -> DidMerge {
        let free = union_sorted(&a.free, &b.free);
        let free_changed = free != a.free;
        let b_free_changed = free != b.free;
        a.free = free;
        let (a_changed, b_changed) = match b.size.cmp(&a.size) {
            std::cmp::Ordering::Less => {
                a.size = b.size;
                a.best = b.best;
                (true, false)
            }
            std::cmp::Ordering::Greater => (false, true),
            std::cmp::Ordering::Equal => (false, false),
        };
        DidMerge(a_changed || free_changed, b_changed || b_free_changed)
    }
}
