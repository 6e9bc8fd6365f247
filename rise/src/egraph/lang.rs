//! RISE as an egg [`Language`]: typed e-nodes with De Bruijn indices, and the
//! [`Analysis`] that keeps, for every e-class, its type, its free variables and its
//! smallest term (which substitution and shifting extract, as in Koehler et al.'s
//! encoding: substitution performed by extraction).

use crate::nat::{Nat, NatVar};
use crate::prim::Prim;
use crate::term::{Literal, Term};
use crate::types::Type;
use egg::{Analysis, DidMerge, EGraph, Id, Language, Symbol};
use elevate_core::NameSupply;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::fmt;
use std::time::Instant;

/// An interned RISE type: e-nodes carry one, so that a variable `%0` of type `f32`
/// and one of type `4.f32` are different e-nodes, and polymorphic primitives are
/// instantiated (`map` on `4.f32` is not `map` on `8.f32`).
///
/// The id means a type only in the e-graph that interned it ([`Types`], owned by the
/// e-graph's [`RiseAnalysis`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TyId(u32);

impl TyId {
    /// The pseudo-type of nat e-nodes (the argument of `split(n)`), and of pattern
    /// nodes (which match e-nodes of any type).
    pub const NAT: TyId = TyId(u32::MAX);
}

/// The types of one e-graph's e-nodes, each stored once: e-nodes compare and hash a
/// small id rather than a type. Each e-graph owns its table, so it lives and dies
/// with the e-graph, and e-graphs built in parallel share nothing.
#[derive(Debug, Default, Clone)]
pub struct Types {
    ids: FxHashMap<Type, TyId>,
    items: Vec<Type>,
}

impl Types {
    /// The id of `ty`, interning it if it is new.
    pub fn intern(&mut self, ty: &Type) -> TyId {
        if let Some(&id) = self.ids.get(ty) {
            return id;
        }
        // Ids stop short of `TyId::NAT`; an e-graph with four billion types has run
        // out of memory long before.
        let id = TyId(u32::try_from(self.items.len()).expect("fewer than 2^32 types"));
        self.items.push(ty.clone());
        self.ids.insert(ty.clone(), id);
        id
    }

    /// The id of `ty`, if it is interned.
    pub fn find(&self, ty: &Type) -> Option<TyId> {
        self.ids.get(ty).copied()
    }

    /// The type of `id`; `None` for [`TyId::NAT`] (nat e-nodes and pattern nodes have
    /// no type).
    pub fn get(&self, id: TyId) -> Option<&Type> {
        self.items.get(id.0 as usize)
    }

    /// How many types there are.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
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
    /// A nat, the argument of [`Op::NatApp`] (nat e-nodes are few: one per nat
    /// argument written in the program or made by a rule).
    Nat(Nat),
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
        Rise::leaf(Op::Nat(n.clone()), TyId::NAT)
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
            Op::Nat(n) => write!(f, "{n}"),
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

/// The e-class analysis of RISE, and what belongs to one e-graph: its types, the
/// names of the variables read back from it, the typed right-hand sides its rewrites
/// instantiated, and the limits that the search and the rewrites check while a
/// saturation runs.
#[derive(Debug, Default, Clone)]
pub struct RiseAnalysis {
    /// The types of the e-nodes.
    pub types: Types,
    /// The identities of the variables that terms read back from the e-graph bind
    /// (the e-graph itself has De Bruijn indices): above those of every term added
    /// (see [`add_term`](super::add_term)), so that extracted binders are fresh.
    pub names: NameSupply,
    /// Right-hand sides typed for the types they were instantiated at, by rule.
    pub(crate) templates: FxHashMap<(Symbol, TemplateKey), Option<Term>>,
    /// When searching and rewriting must stop (`None`: no limit).
    pub(crate) deadline: Option<Instant>,
    /// The e-nodes past which rewriting must stop.
    pub(crate) node_limit: Option<usize>,
}

/// The types of an equation's pattern variables, the nats they matched, and the type
/// of the class it rewrites: the typed right-hand side depends on nothing else.
pub(crate) type TemplateKey = (Vec<TyId>, Vec<Nat>, TyId);

impl RiseAnalysis {
    /// The type of `id` (`None` for [`TyId::NAT`]).
    pub fn ty(&self, id: TyId) -> Option<&Type> {
        self.types.get(id)
    }

    /// Whether the deadline has passed.
    pub(crate) fn out_of_time(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

/// Whether a rewrite may still add to `egraph`: the saturation's time and e-node
/// limits hold. Searchers and appliers ask before each class or match, so that one
/// rule cannot run far past the limits.
pub(crate) fn may_grow(egraph: &RiseGraph) -> bool {
    let a = &egraph.analysis;
    !a.out_of_time() && a.node_limit.is_none_or(|n| egraph.total_size() <= n)
}

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
