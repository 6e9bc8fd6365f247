//! RISE's side of search over strategies (`spec/search.md`): the fingerprint a
//! search's cache is keyed by.

mod fingerprint;

pub use fingerprint::fingerprint;

#[cfg(test)]
mod tests;
