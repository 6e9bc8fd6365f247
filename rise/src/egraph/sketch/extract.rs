//! Sketch-satisfying extraction by dynamic programming over (sketch part, e-class).
//!
//! A sketch is compiled into patterns over e-nodes, children first and shared
//! (`map(?, ?)` has one `?`). For every pattern, a table gives each e-class's cheapest
//! term that satisfies it, and how that term is built. `?` and `contains` are
//! recursive through the e-graph's cycles: their tables come from Knuth's
//! generalisation of Dijkstra's algorithm (node costs are not negative, and a term
//! costs at least as much as each of its subterms), which settles every class once,
//! cheapest first. The other patterns look one e-node deep into finished tables.
//! Each table costs one pass over the e-nodes (times a logarithm for the recursive
//! ones).

use super::Sketch;
use crate::egraph::convert::Nodes;
use crate::egraph::cost::{CostModel, Work};
use crate::egraph::lang::{Op, Rise, RiseGraph};
use crate::egraph::saturate::OutOfTime;
use crate::nat::Nat;
use crate::prim::Prim;
use crate::types::{Type, TypeKind};
use egg::{Id, RecExpr};
use elevate_core::stack::guard;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::cell::Cell;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::time::Instant;

/// The cheapest term of class `root` that satisfies `sketch`, with its cost by
/// `cost`; `None` if no term of the class does.
///
/// ```
/// use elevate_rise::egraph::sketch::{extract, Sketch};
/// use elevate_rise::egraph::{CostModel, SaturationLimits, RuleSet, Saturation};
/// use elevate_rise::{infer, parse_term, print_term};
/// let t = infer(&parse_term("fun(xs: 8.f32 => xs |> map(neg) |> map(abs))").unwrap()).unwrap();
/// let rules = RuleSet::parse("mapFusion,mapFission,betaReduction,etaReduction").unwrap();
/// let mut grown = Saturation::new(rules, SaturationLimits::default(), CostModel::Lowered).grow(&t).unwrap();
/// // The cheapest program fuses the maps; this sketch wants them apart.
/// let two_maps: Sketch = "map(abs, map(neg, ?))".parse().unwrap();
/// let (cost, body) = extract(&grown.egraph, grown.root, &two_maps, CostModel::Lowered).unwrap();
/// assert_eq!(print_term(&grown.program(&body)), "fun(xs: 8.f32 => xs |> map(neg) |> map(abs))");
/// assert!(cost > 2e9); // two computing loops left high-level
/// let transposed: Sketch = "contains(transpose)".parse().unwrap();
/// assert!(extract(&grown.egraph, grown.root, &transposed, CostModel::Lowered).is_none());
/// ```
pub fn extract(
    egraph: &RiseGraph,
    root: Id,
    sketch: &Sketch,
    cost: CostModel,
) -> Option<(f64, RecExpr<Rise>)> {
    extract_within(egraph, root, sketch, cost, None).unwrap_or(None)
}

/// [`extract`] that gives up at `deadline`.
pub fn extract_within(
    egraph: &RiseGraph,
    root: Id,
    sketch: &Sketch,
    cost: CostModel,
    deadline: Option<Instant>,
) -> Result<Option<(f64, RecExpr<Rise>)>, OutOfTime> {
    let patterns = Patterns::compile(sketch);
    let index = Index::new(egraph, Some(cost), deadline);
    let tables = index.tables(&patterns.pats)?;
    let slot = index.slot(root);
    let Some(best) = tables[patterns.root][slot].clone() else {
        return Ok(None);
    };
    let mut builder = Builder {
        index: &index,
        pats: &patterns.pats,
        tables: &tables,
        out: Nodes::default(),
        memo: FxHashMap::default(),
    };
    builder.build(patterns.root, slot);
    Ok(Some((best.cost.total, builder.out.finish())))
}

/// Whether some term of class `root` satisfies `sketch`: [`extract`] without costs
/// or a term, to stop a saturation as soon as the sketch can be extracted.
///
/// ```
/// use elevate_rise::egraph::sketch::{satisfied, Sketch};
/// use elevate_rise::egraph::{CostModel, SaturationLimits, RuleSet, Saturation};
/// use elevate_rise::{infer, parse_term};
/// let t = infer(&parse_term("fun(xs: 8.f32 => xs |> map(neg) |> map(abs))").unwrap()).unwrap();
/// let fused: Sketch = "map(fun(contains(abs)), ?)".parse().unwrap();
/// let goal = fused.clone();
/// let rules = RuleSet::parse("mapFusion,betaReduction").unwrap();
/// let grown = Saturation::new(rules, SaturationLimits::default(), CostModel::AstSize)
///     .with_goal(move |egraph, root| satisfied(egraph, root, &goal))
///     .grow(&t)
///     .unwrap();
/// assert_eq!(grown.report.stop_reason, "goal");
/// assert!(satisfied(&grown.egraph, grown.root, &fused));
/// ```
pub fn satisfied(egraph: &RiseGraph, root: Id, sketch: &Sketch) -> bool {
    let patterns = Patterns::compile(sketch);
    let index = Index::new(egraph, None, None);
    match index.tables(&patterns.pats) {
        Ok(tables) => tables[patterns.root][index.slot(root)].is_some(),
        Err(OutOfTime) => false,
    }
}

/// A sketch part, over e-nodes; children are indices of earlier patterns.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Pat {
    Any,
    Contains(usize),
    Or(usize, usize),
    /// A primitive e-node, of this loop size and element dimensions if any.
    Prim(Prim, Option<Nat>, Vec<Option<Nat>>),
    /// A nat e-node (the argument of a nat application), equal to this one if any.
    Nat(Option<Nat>),
    /// An e-node with this operator (a lambda, an application, a nat application)
    /// whose children satisfy these patterns.
    Node(Op, Vec<usize>),
}

/// The index of [`Pat::Any`], which every compiled sketch has.
const ANY: usize = 0;

/// A sketch as shared patterns, children first.
struct Patterns {
    pats: Vec<Pat>,
    ids: FxHashMap<Pat, usize>,
    root: usize,
}

impl Patterns {
    fn compile(sketch: &Sketch) -> Patterns {
        let mut patterns = Patterns {
            pats: Vec::new(),
            ids: FxHashMap::default(),
            root: ANY,
        };
        patterns.add(Pat::Any);
        patterns.root = patterns.add_sketch(sketch);
        patterns
    }

    fn add(&mut self, pat: Pat) -> usize {
        if let Some(&id) = self.ids.get(&pat) {
            return id;
        }
        self.pats.push(pat.clone());
        self.ids.insert(pat, self.pats.len() - 1);
        self.pats.len() - 1
    }

    fn add_sketch(&mut self, sketch: &Sketch) -> usize {
        guard(|| self.add_sketch_here(sketch))
    }

    fn add_sketch_here(&mut self, sketch: &Sketch) -> usize {
        let pat = match sketch {
            Sketch::Any => Pat::Any,
            Sketch::Contains(inner) => Pat::Contains(self.add_sketch(inner)),
            Sketch::Or(a, b) => Pat::Or(self.add_sketch(a), self.add_sketch(b)),
            Sketch::Fun(body) => Pat::Node(Op::Lam, vec![self.add_sketch(body)]),
            Sketch::App(f, a) => Pat::Node(Op::App, vec![self.add_sketch(f), self.add_sketch(a)]),
            // `split(32)` is the nat application of `split` to `32`.
            Sketch::Prim {
                prim,
                nats,
                size,
                elems,
            } => {
                let head = self.add(Pat::Prim(*prim, size.clone(), elems.clone()));
                return nats.iter().fold(head, |f, n| {
                    let n = self.add(Pat::Nat(n.clone()));
                    self.add(Pat::Node(Op::NatApp, vec![f, n]))
                });
            }
        };
        self.add(pat)
    }
}

/// How an entry's term is built.
#[derive(Debug, Clone, Copy)]
enum Choice {
    /// From this e-node (an index into [`Index::nodes`]), its children by the
    /// pattern's children (by `?` for `?`).
    Node(u32),
    /// `or`: by its second alternative, or its first.
    Branch(bool),
    /// `contains(S)`: the class itself satisfies `S`.
    Inside,
    /// `contains(S)`: from this e-node, the child at this position containing `S`,
    /// the other children by `?`.
    Below(u32, u32),
}

#[derive(Debug, Clone)]
struct Entry {
    cost: Work,
    choice: Choice,
}

/// For each class (by [`Index::slot`]), its cheapest satisfying term, if any.
type Table = Vec<Option<Entry>>;

/// A candidate entry for a class, ordered so that a max-heap pops the cheapest.
struct Candidate {
    cost: Work,
    slot: usize,
    choice: Choice,
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Candidate {}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .cost
            .total
            .total_cmp(&self.cost.total)
            .then(other.slot.cmp(&self.slot))
    }
}

/// How many steps of a table's loop run between two readings of the clock.
const CLOCK_EVERY: u32 = 1024;

/// The e-graph's e-nodes, numbered, and each class's parents.
struct Index<'a> {
    egraph: &'a RiseGraph,
    /// The cost model; `None`: every term costs nothing (only satisfiability counts).
    cost: Option<CostModel>,
    /// When to give up.
    deadline: Option<Instant>,
    /// Steps since the clock was last read.
    ticks: Cell<u32>,
    /// Every e-node with its class's slot.
    nodes: Vec<(usize, &'a Rise)>,
    /// The parents of slot `s` are `parents[starts[s]..starts[s + 1]]`: an e-node
    /// and the position of `s` among its children (once per occurrence).
    starts: Vec<usize>,
    parents: Vec<(u32, u32)>,
}

impl<'a> Index<'a> {
    fn new(egraph: &'a RiseGraph, cost: Option<CostModel>, deadline: Option<Instant>) -> Index<'a> {
        let slots = egraph
            .classes()
            .map(|c| usize::from(c.id) + 1)
            .max()
            .unwrap_or(0);
        let nodes: Vec<(usize, &Rise)> = egraph
            .classes()
            .flat_map(|c| c.nodes.iter().map(move |n| (usize::from(c.id), n)))
            .collect();
        // Parents grouped by child slot: count, then place.
        let slot = |id: Id| usize::from(egraph.find(id));
        let mut starts = vec![0usize; slots + 1];
        for (_, node) in &nodes {
            for &c in &node.children {
                starts[slot(c) + 1] += 1;
            }
        }
        for s in 0..slots {
            starts[s + 1] += starts[s];
        }
        let mut next = starts.clone();
        let mut parents = vec![(0, 0); starts[slots]];
        for (i, (_, node)) in nodes.iter().enumerate() {
            for (position, &c) in node.children.iter().enumerate() {
                let s = slot(c);
                parents[next[s]] = (i as u32, position as u32);
                next[s] += 1;
            }
        }
        Index {
            egraph,
            cost,
            deadline,
            ticks: Cell::new(0),
            nodes,
            starts,
            parents,
        }
    }

    fn slot(&self, id: Id) -> usize {
        usize::from(self.egraph.find(id))
    }

    /// One step of a loop: fails once the deadline has passed.
    fn tick(&self) -> Result<(), OutOfTime> {
        let Some(deadline) = self.deadline else {
            return Ok(());
        };
        let ticks = self.ticks.get() + 1;
        if ticks < CLOCK_EVERY {
            self.ticks.set(ticks);
            return Ok(());
        }
        self.ticks.set(0);
        match Instant::now() >= deadline {
            true => Err(OutOfTime),
            false => Ok(()),
        }
    }

    fn slots(&self) -> usize {
        self.starts.len() - 1
    }

    fn parents(&self, slot: usize) -> &[(u32, u32)] {
        &self.parents[self.starts[slot]..self.starts[slot + 1]]
    }

    /// The cost of `node` whose children cost `kids`.
    fn combine(&self, node: &Rise, kids: &[Work]) -> Work {
        let types = &self.egraph.analysis.types;
        self.cost
            .map_or_else(Work::zero, |c| c.combine(types, node, kids))
    }

    /// One table per pattern, in order.
    fn tables(&self, pats: &[Pat]) -> Result<Vec<Table>, OutOfTime> {
        let mut tables = Vec::with_capacity(pats.len());
        for pat in pats {
            let table = self.table(pat, &tables)?;
            tables.push(table);
        }
        Ok(tables)
    }

    fn table(&self, pat: &Pat, done: &[Table]) -> Result<Table, OutOfTime> {
        let cost_in = |table: usize, child: Id| {
            done[table][self.slot(child)]
                .as_ref()
                .map(|e| e.cost.clone())
        };
        match pat {
            // Every class holds a term (e-classes are made of added terms): without
            // costs to rank them, that is all `?` needs to know.
            Pat::Any if self.cost.is_none() => self.best_nodes(|_| Some(Work::zero())),
            Pat::Any => self.cheapest(),
            Pat::Contains(inner) => self.containing(&done[*inner], &done[ANY]),
            Pat::Or(a, b) => Ok(done[*a]
                .iter()
                .zip(&done[*b])
                .map(|(a, b)| match (a, b) {
                    (Some(a), Some(b)) if b.cost.total < a.cost.total => Some(branch(b, true)),
                    (Some(a), _) => Some(branch(a, false)),
                    (None, b) => b.as_ref().map(|b| branch(b, true)),
                })
                .collect()),
            Pat::Prim(prim, size, elems) => self.best_nodes(|node| {
                let types = &self.egraph.analysis.types;
                let fits = node.op == Op::Prim(*prim)
                    && (size.is_none() && elems.is_empty()
                        || types
                            .get(node.ty)
                            .is_some_and(|ty| loop_shape_fits(*prim, ty, size, elems)));
                fits.then(|| self.combine(node, &[]))
            }),
            Pat::Nat(want) => self.best_nodes(|node| match &node.op {
                Op::Nat(n) if want.as_ref().is_none_or(|w| w == n) => Some(self.combine(node, &[])),
                _ => None,
            }),
            Pat::Node(op, kids) => self.best_nodes(|node| {
                if node.op != *op || node.children.len() != kids.len() {
                    return None;
                }
                let children: Option<Vec<Work>> = kids
                    .iter()
                    .zip(&node.children)
                    .map(|(&k, &c)| cost_in(k, c))
                    .collect();
                Some(self.combine(node, &children?))
            }),
        }
    }

    /// The table of patterns that look one e-node deep: `cost(node)`, if it fits.
    fn best_nodes(&self, cost: impl Fn(&Rise) -> Option<Work>) -> Result<Table, OutOfTime> {
        let mut table: Table = vec![None; self.slots()];
        for (i, &(slot, node)) in self.nodes.iter().enumerate() {
            self.tick()?;
            if let Some(cost) = cost(node) {
                if table[slot]
                    .as_ref()
                    .is_none_or(|e| cost.total < e.cost.total)
                {
                    table[slot] = Some(Entry {
                        cost,
                        choice: Choice::Node(i as u32),
                    });
                }
            }
        }
        Ok(table)
    }

    /// Settles candidates cheapest first: the first per class is its entry; then
    /// `settled(slot, table, heap)` offers the candidates that entry makes possible.
    fn settle(
        &self,
        seeds: impl IntoIterator<Item = Candidate>,
        mut settled: impl FnMut(usize, &Table, &mut BinaryHeap<Candidate>),
    ) -> Result<Table, OutOfTime> {
        let mut table: Table = vec![None; self.slots()];
        let mut heap: BinaryHeap<Candidate> = seeds.into_iter().collect();
        while let Some(c) = heap.pop() {
            self.tick()?;
            if table[c.slot].is_some() {
                continue;
            }
            table[c.slot] = Some(Entry {
                cost: c.cost,
                choice: c.choice,
            });
            settled(c.slot, &table, &mut heap);
        }
        Ok(table)
    }

    /// `?`: every class's cheapest term. An e-node becomes a candidate once all its
    /// children are settled.
    fn cheapest(&self) -> Result<Table, OutOfTime> {
        let mut waiting: Vec<usize> = self.nodes.iter().map(|(_, n)| n.children.len()).collect();
        let leaves = self
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, (_, node))| node.children.is_empty())
            .map(|(i, &(slot, node))| Candidate {
                cost: self.combine(node, &[]),
                slot,
                choice: Choice::Node(i as u32),
            });
        self.settle(leaves, |slot, table, heap| {
            for &(p, _) in self.parents(slot) {
                let p = p as usize;
                waiting[p] -= 1;
                let (parent, node) = self.nodes[p];
                if waiting[p] > 0 || table[parent].is_some() {
                    continue;
                }
                let children: Option<Vec<Work>> = node
                    .children
                    .iter()
                    .map(|&c| table[self.slot(c)].as_ref().map(|e| e.cost.clone()))
                    .collect();
                let Some(children) = children else {
                    continue;
                };
                heap.push(Candidate {
                    cost: self.combine(node, &children),
                    slot: parent,
                    choice: Choice::Node(p as u32),
                });
            }
        })
    }

    /// `contains(S)`: a class contains `S` if it satisfies `S` or has an e-node with a
    /// child that contains `S`.
    fn containing(&self, inner: &Table, any: &Table) -> Result<Table, OutOfTime> {
        let seeds = inner.iter().enumerate().filter_map(|(slot, e)| {
            e.as_ref().map(|e| Candidate {
                cost: e.cost.clone(),
                slot,
                choice: Choice::Inside,
            })
        });
        self.settle(seeds, |slot, table, heap| {
            let Some(below) = table[slot].as_ref().map(|e| e.cost.clone()) else {
                return;
            };
            for &(p, position) in self.parents(slot) {
                let (parent, node) = self.nodes[p as usize];
                if table[parent].is_some() {
                    continue;
                }
                let kids: Option<Vec<Work>> = node
                    .children
                    .iter()
                    .enumerate()
                    .map(|(k, &c)| {
                        if k == position as usize {
                            Some(below.clone())
                        } else {
                            any[self.slot(c)].as_ref().map(|e| e.cost.clone())
                        }
                    })
                    .collect();
                if let Some(kids) = kids {
                    heap.push(Candidate {
                        cost: self.combine(node, &kids),
                        slot: parent,
                        choice: Choice::Below(p, position),
                    });
                }
            }
        })
    }
}

fn branch(entry: &Entry, second: bool) -> Entry {
    Entry {
        cost: entry.cost.clone(),
        choice: Choice::Branch(second),
    }
}

/// Whether the array a loop primitive of type `ty` iterates over has length `size`
/// and elements of dimensions `elems` (outermost first; `None` is any).
fn loop_shape_fits(prim: Prim, ty: &Type, size: &Option<Nat>, elems: &[Option<Nat>]) -> bool {
    let Some(mut array) = loop_array(prim, ty) else {
        return false;
    };
    for want in std::iter::once(size).chain(elems) {
        let TypeKind::Array(n, elem) = array.kind() else {
            return false;
        };
        if want.as_ref().is_some_and(|w| w != n) {
            return false;
        }
        array = elem.clone();
    }
    true
}

/// The array a loop primitive `prim` of type `ty` iterates over: its array
/// parameter (the last of a reduction or scan, whose start value may be an array
/// too; the second of a map), or its array result (`generate`).
fn loop_array(prim: Prim, ty: &Type) -> Option<Type> {
    let mut ty = ty;
    while let TypeKind::DepFun(_, body) = ty.kind() {
        ty = body;
    }
    let skip = match prim.iteration() {
        Some(it) => it.array,
        None if prim == Prim::Generate => usize::MAX,
        None => 1,
    };
    let mut params = 0;
    loop {
        match ty.kind() {
            TypeKind::Fun(param, result) => match param.kind() {
                TypeKind::Array(..) if params >= skip => return Some(param.clone()),
                _ => {
                    params += 1;
                    ty = result;
                }
            },
            TypeKind::Array(..) => return Some(ty.clone()),
            _ => return None,
        }
    }
}

/// Writes the terms the tables chose into one expression.
struct Builder<'a> {
    index: &'a Index<'a>,
    pats: &'a [Pat],
    tables: &'a [Table],
    out: Nodes,
    /// What has been built, by (pattern, slot).
    memo: FxHashMap<(usize, usize), Id>,
}

impl Builder<'_> {
    /// The chosen term of `pat` for class `slot` (which has one).
    fn build(&mut self, pat: usize, slot: usize) -> Id {
        if let Some(&id) = self.memo.get(&(pat, slot)) {
            return id;
        }
        let choice = self.tables[pat][slot]
            .as_ref()
            .expect("only satisfiable entries are built")
            .choice;
        let id = match (choice, &self.pats[pat]) {
            (Choice::Branch(second), &Pat::Or(a, b)) => {
                self.build(if second { b } else { a }, slot)
            }
            (Choice::Inside, &Pat::Contains(inner)) => self.build(inner, slot),
            (Choice::Below(node, position), _) => {
                self.node(node, |k| if k == position as usize { pat } else { ANY })
            }
            (Choice::Node(node), Pat::Node(_, kids)) => {
                let kids = kids.clone();
                self.node(node, |k| kids[k])
            }
            (Choice::Node(node), _) => self.node(node, |_| ANY),
            (choice, pat) => unreachable!("the choice {choice:?} for the pattern {pat:?}"),
        };
        self.memo.insert((pat, slot), id);
        id
    }

    /// E-node `node`, its `k`-th child built by pattern `child(k)`.
    fn node(&mut self, node: u32, child: impl Fn(usize) -> usize) -> Id {
        let node = self.index.nodes[node as usize].1;
        let mut children = SmallVec::new();
        for (k, &c) in node.children.iter().enumerate() {
            let slot = self.index.slot(c);
            children.push(guard(|| self.build(child(k), slot)));
        }
        self.out.add(Rise {
            op: node.op.clone(),
            ty: node.ty,
            children,
        })
    }
}
