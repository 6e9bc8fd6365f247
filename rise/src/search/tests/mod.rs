//! Tests of RISE's side of search.

mod auto;
mod features;
mod fingerprint;
mod loop_nests;
mod model;
