//! Tests of the strategy engine on the small arithmetic IR of `elevate_core::arith`
//! (and, for fresh names, a tree IR with identities).

mod arith;
mod budget;
mod cursor;
mod deep;
mod drivers;
mod gen;
mod laws;
mod names;
mod persistence;
mod text;
mod threads;
mod traversals;
