//! `exhaustive`: every point of the space.

use super::{Driver, BATCH};
use crate::search::cost::Fingerprint;
use crate::search::explorer::Explorer;
use crate::search::space::State;
use elevate_core::Traversable;

/// Every point, depth first, in the order of the options; equal programs are
/// evaluated once (the explorer's cache), so the log's distinct programs are the
/// space's.
pub struct Exhaustive;

impl<P: Traversable + Fingerprint> Driver<P> for Exhaustive {
    fn name(&self) -> String {
        "exhaustive".into()
    }

    fn explore(&mut self, explorer: &mut Explorer<'_, P>) {
        // Depth first with a work stack of states (each shares its prefix).
        let mut stack: Vec<State<P>> = vec![explorer.root().clone()];
        let mut batch = Vec::with_capacity(BATCH);
        while let Some(state) = stack.pop() {
            if explorer.exhausted() {
                return;
            }
            if state.is_final() {
                batch.push(state);
                if batch.len() == BATCH {
                    explorer.evaluate(&batch);
                    batch.clear();
                }
                continue;
            }
            for i in (0..state.options()).rev() {
                if let Some(next) = state.choose(i) {
                    stack.push(next);
                }
            }
        }
        explorer.evaluate(&batch);
    }
}
