//! Buffers: allocating them, reading them, writing values into them (in place of a
//! part of another where the bridge would), materializing, reductions.

use super::eval::{
    linear, scalar, scalar_bytes, size, unsupported, Arr, Ev, Load, Sc, Storage, R, V,
};
use super::index::Idx;
use super::{Accumulator, Buffer, LoopKind, Role};
use crate::types::{Type, TypeKind};
use elevate_core::stack::guard;
use std::rc::Rc;

impl Ev {
    /// New buffers for a value of type `ty`.
    pub(super) fn alloc(&mut self, ty: &Type, role: Role) -> R<Rc<Storage>> {
        self.alloc_within(ty, Vec::new(), role)
    }

    fn alloc_within(&mut self, ty: &Type, mut dims: Vec<i64>, role: Role) -> R<Rc<Storage>> {
        guard(|| match ty.kind() {
            TypeKind::Array(n, e) | TypeKind::Vector(e, n) => {
                dims.push(size(n)?);
                self.alloc_within(e, dims, role)
            }
            TypeKind::Scalar(s) => {
                let elements = dims.iter().try_fold(1i64, |n, d| n.checked_mul(*d));
                let Some(elements) = elements else {
                    return unsupported(format!(
                        "a buffer of type {ty} with more than 2^63 elements"
                    ));
                };
                // Explicit loops allocate a buffer where its value is computed, at
                // each iteration of the loops around; the structured translation's
                // buffers are allocated once (or promoted with their tiles).
                let allocated_in = match (self.in_place, role) {
                    (false, Role::Computed) => self.stack.last().copied(),
                    _ => None,
                };
                self.trace.buffers.push(Buffer {
                    elements,
                    bytes: scalar_bytes(*s),
                    role,
                    allocated_in,
                });
                self.alias.push(None);
                Ok(Rc::new(Storage::Leaf {
                    buf: self.trace.buffers.len() - 1,
                    dims: dims.into(),
                    base: Idx::cst(0),
                }))
            }
            TypeKind::Pair(a, b) => Ok(Rc::new(Storage::Pair(
                self.alloc_within(a, dims.clone(), role)?,
                self.alloc_within(b, dims, role)?,
            ))),
            _ => unsupported(format!("data of type {ty} in memory")),
        })
    }

    /// The value of type `ty` in `storage` at `prefix`.
    pub(super) fn view(&mut self, storage: &Rc<Storage>, ty: &Type, prefix: Vec<Idx>) -> R<V> {
        guard(|| match (ty.kind(), &**storage) {
            (TypeKind::Array(n, e), _) => {
                let (s, e, whole) = (storage.clone(), e.clone(), prefix.is_empty());
                let mut arr = Arr::new(size(n)?, move |ev, i| {
                    let mut at = prefix.clone();
                    at.push(i);
                    ev.view(&s, &e, at)
                });
                if whole {
                    arr.natural = Some(storage.clone());
                }
                Ok(V::A(arr))
            }
            (TypeKind::Pair(a, b), Storage::Pair(sa, sb)) => Ok(V::P(Rc::new((
                self.view(sa, a, prefix.clone())?,
                self.view(sb, b, prefix)?,
            )))),
            (TypeKind::Vector(_, n), Storage::Leaf { buf, dims, base }) => {
                let lanes = size(n)?;
                let load = Load {
                    buf: *buf,
                    off: linear(base, dims, &prefix),
                    lanes,
                    lane_stride: 1,
                };
                Ok(V::S(Sc::load(load, lanes as u32)))
            }
            (TypeKind::Scalar(_), Storage::Leaf { buf, dims, base }) => {
                let load = Load {
                    buf: *buf,
                    off: linear(base, dims, &prefix),
                    lanes: 1,
                    lane_stride: 0,
                };
                Ok(V::S(Sc::load(load, 1)))
            }
            _ => unsupported(format!("reading data of type {ty}")),
        })
    }

    /// Whether buffer `b` can be written as part of another made before it (`newer_than`,
    /// when given): computed, not already part of something, and made later (a loop's
    /// result is made while the loop that stores it runs; an older buffer, such as an
    /// accumulator the stored value was read from, stays where it is).
    fn placeable(&self, b: usize, newer_than: Option<usize>) -> bool {
        self.in_place
            && self.trace.buffers[b].role == Role::Computed
            && self.alias[b].is_none()
            && newer_than.is_none_or(|d| b > d)
    }

    /// Whether the buffers of `s` can all be written as part of `dst`'s (or used in
    /// place, without `dst`).
    fn free_to_place(&self, s: &Storage, dst: Option<&Storage>) -> bool {
        let (mut leaves, mut targets) = (Vec::new(), Vec::new());
        s.leaves(&mut leaves);
        if let Some(d) = dst {
            d.leaves(&mut targets);
        }
        let newest = targets.iter().map(|(b, _, _)| *b).max();
        leaves.iter().all(|(b, _, _)| self.placeable(*b, newest))
    }

    /// Writes `v` into `storage` at `prefix` and the positions below.
    pub(super) fn store(&mut self, v: &V, storage: &Rc<Storage>, prefix: &[Idx]) -> R<()> {
        guard(|| self.store_at(v, storage, prefix))
    }

    fn store_at(&mut self, v: &V, storage: &Rc<Storage>, prefix: &[Idx]) -> R<()> {
        self.tick()?;
        match (v, &**storage) {
            (V::S(s), Storage::Leaf { buf, dims, base }) => {
                self.consume(s)?;
                let (lanes, lane_stride) = if s.lanes > 1 {
                    (i64::from(s.lanes), 1)
                } else {
                    (1, 0)
                };
                self.record(*buf, linear(base, dims, prefix), lanes, lane_stride, true);
                Ok(())
            }
            (V::P(p), Storage::Pair(sa, sb)) => {
                self.store(&p.0, sa, prefix)?;
                self.store(&p.1, sb, prefix)
            }
            (V::A(a), _) => {
                if let Some(src) = &a.natural {
                    if Rc::ptr_eq(src, storage) && prefix.is_empty() {
                        return Ok(()); // already there
                    }
                    if self.free_to_place(src, Some(storage)) && self.place(src, storage, prefix) {
                        return Ok(());
                    }
                }
                if let Storage::Leaf { buf, dims, base } = &**storage {
                    if let Some(src) = self.rearranged(a)? {
                        if self.placeable(src, Some(*buf)) {
                            self.alias[src] = Some((*buf, linear(base, dims, prefix)));
                            return Ok(());
                        }
                    }
                }
                let i = self.enter(LoopKind::Copy, a.len, None);
                let stored = a.at(self, i.clone()).and_then(|e| {
                    let mut at = prefix.to_vec();
                    at.push(i);
                    self.store(&e, storage, &at)
                });
                self.leave();
                stored
            }
            _ => unsupported("storing a function or an index"),
        }
    }

    /// Makes the buffers of `src` parts of those of `dst` at `prefix`, if their shapes
    /// agree.
    fn place(&mut self, src: &Storage, dst: &Storage, prefix: &[Idx]) -> bool {
        let (mut from, mut to) = (Vec::new(), Vec::new());
        src.leaves(&mut from);
        dst.leaves(&mut to);
        let fits = from.len() == to.len()
            && from.iter().zip(&to).all(|((_, a, _), (_, b, _))| {
                b.len() >= prefix.len() && a[..] == b[prefix.len()..]
            });
        if fits {
            for ((a, _, _), (b, dims, base)) in from.iter().zip(&to) {
                self.alias[*a] = Some((*b, linear(base, dims, prefix)));
            }
        }
        fits
    }

    /// The computed buffer `a` only rearranges (every element of it, once, nothing
    /// computed), if there is one: looked at without recording anything.
    fn rearranged(&mut self, a: &Arr) -> R<Option<usize>> {
        let snapshot = self.snapshot();
        let found = self.first_element(a);
        self.restore(snapshot);
        let Some((s, elements)) = found? else {
            return Ok(None);
        };
        let (loads, work) = self.flatten(&s)?;
        let [load] = loads.as_slice() else {
            return Ok(None);
        };
        let b = &self.trace.buffers[load.buf];
        let whole = b.elements == elements.saturating_mul(i64::from(s.lanes));
        let ok = work.ops() == 0.0
            && whole
            && b.role == Role::Computed
            && self.alias[load.buf].is_none();
        Ok(ok.then_some(load.buf))
    }

    /// The scalar at position 0 of `a`, and how many elements `a` has.
    fn first_element(&mut self, a: &Arr) -> R<Option<(Sc, i64)>> {
        let mut elements = 1i64;
        let mut v = V::A(a.clone());
        loop {
            match v {
                V::A(arr) if arr.len > 0 => {
                    elements = elements.saturating_mul(arr.len);
                    v = arr.at(self, Idx::cst(0))?;
                }
                V::S(s) => return Ok(Some((s, elements))),
                _ => return Ok(None),
            }
        }
    }

    /// The block of a computed buffer that `a` (of type `ty`, an array of scalars) is,
    /// element for element in row-major order, if it is one: looked at without
    /// recording anything.
    fn block_of(&mut self, a: &Arr, ty: &Type) -> R<Option<Rc<Storage>>> {
        if !self.in_place {
            return Ok(None);
        }
        let mut dims = Vec::new();
        let mut t = ty;
        while let TypeKind::Array(n, e) = t.kind() {
            dims.push(size(n)?);
            t = e;
        }
        if !matches!(t.kind(), TypeKind::Scalar(_)) || dims.is_empty() || dims.contains(&0) {
            return Ok(None);
        }
        let snapshot = self.snapshot();
        let found = self.probe_block(a, &dims);
        self.restore(snapshot);
        Ok(found?.map(|(buf, base)| {
            Rc::new(Storage::Leaf {
                buf,
                dims: dims.into(),
                base,
            })
        }))
    }

    fn probe_block(&mut self, a: &Arr, dims: &[i64]) -> R<Option<(usize, Idx)>> {
        let mut position = vec![0i64; dims.len()];
        let Some(origin) = self.plain_load(a, &position)? else {
            return Ok(None);
        };
        if !self.placeable(origin.buf, None) && self.alias[origin.buf].is_some() {
            return Ok(None);
        }
        if self.trace.buffers[origin.buf].role != Role::Computed {
            return Ok(None);
        }
        let mut stride = dims.iter().product::<i64>();
        for k in 0..dims.len() {
            stride /= dims[k].max(1);
            if dims[k] == 1 {
                continue;
            }
            position[k] = 1;
            let next = self.plain_load(a, &position)?;
            position[k] = 0;
            match next {
                Some(l) if l.buf == origin.buf && l.off.value - origin.off.value == stride => {}
                _ => return Ok(None),
            }
        }
        Ok(Some((origin.buf, origin.off)))
    }

    /// The one load that element `position` of `a` is, if it is nothing else.
    fn plain_load(&mut self, a: &Arr, position: &[i64]) -> R<Option<Load>> {
        let mut v = V::A(a.clone());
        for i in position {
            match v {
                V::A(arr) => v = arr.at(self, Idx::cst(*i))?,
                _ => return Ok(None),
            }
        }
        let V::S(s) = v else {
            return Ok(None);
        };
        let (loads, work) = self.flatten(&s)?;
        Ok(match loads.as_slice() {
            [l] if work.ops() == 0.0 && l.lanes == 1 => Some(l.clone()),
            _ => None,
        })
    }

    /// `v` in memory: an array computed into buffers of its own, unless it already
    /// is the contents of computed buffers, a block of one, or a rearrangement of
    /// one (the bridge writes those where they are read).
    pub(super) fn materialize(&mut self, v: V, ty: &Type) -> R<V> {
        let V::A(a) = &v else {
            return Ok(v);
        };
        if let Some(s) = &a.natural {
            if self.free_to_place(s, None) {
                return Ok(v);
            }
        }
        if self.in_place && (self.rearranged(a)?.is_some() || self.block_of(a, ty)?.is_some()) {
            return Ok(v);
        }
        let storage = self.alloc(ty, Role::Computed)?;
        self.store(&v, &storage, &[])?;
        self.view(&storage, ty, Vec::new())
    }

    /// A reduction of `xs` with `op` from `init`, as a loop of `kind`.
    pub(super) fn reduce(&mut self, kind: LoopKind, op: V, init: V, xs: Arr, ty: &Type) -> R<V> {
        match init {
            V::S(s) => {
                self.consume(&s)?;
                let lanes = s.lanes;
                let i = self.enter(kind, xs.len, Some(Accumulator::Register(lanes)));
                let step = (|| {
                    let x = xs.at(self, i)?;
                    let f = self.apply(&op, V::S(Sc::free(lanes)))?;
                    let next = scalar(self.apply(&f, x)?)?;
                    self.consume(&next)
                })();
                self.leave();
                step.map(|()| V::S(Sc::free(lanes)))
            }
            V::A(a) => {
                // In place where the start value already is in memory (as the bridge
                // accumulates into the block it starts from), else in a copy.
                let storage = match &a.natural {
                    Some(s) if self.free_to_place(s, None) => s.clone(),
                    _ => match self.block_of(&a, ty)? {
                        Some(block) => block,
                        None => {
                            let s = self.alloc(ty, Role::Computed)?;
                            self.store(&V::A(a.clone()), &s, &[])?;
                            s
                        }
                    },
                };
                let mut leaves = Vec::new();
                storage.leaves(&mut leaves);
                let acc = leaves.first().map(|(b, dims, _)| Accumulator::Buffer {
                    buffer: *b,
                    elements: dims.iter().product(),
                });
                let i = self.enter(kind, xs.len, acc);
                let step = (|| {
                    let x = xs.at(self, i)?;
                    let current = self.view(&storage, ty, Vec::new())?;
                    let f = self.apply(&op, current)?;
                    let mut next = self.apply(&f, x)?;
                    if !self.in_place {
                        // The explicit loops compute the next value into a buffer of
                        // its own, then copy it back.
                        next = self.materialize(next, ty)?;
                    }
                    self.store(&next, &storage, &[])
                })();
                self.leave();
                step?;
                self.view(&storage, ty, Vec::new())
            }
            _ => unsupported("a reduction with an accumulator of pairs"),
        }
    }
}
