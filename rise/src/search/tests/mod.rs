//! Tests of RISE's side of search.

mod fingerprint;
mod model;
mod trace;
