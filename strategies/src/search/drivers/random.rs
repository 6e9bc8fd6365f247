//! `random`: points with uniformly random decisions.

use super::{Driver, BATCH};
use crate::search::cost::Fingerprint;
use crate::search::explorer::Explorer;
use elevate_core::Traversable;

/// The space's points to start from ([`Explorer::starts`]), then uniformly random
/// decisions from the root, until the budget is spent or the last
/// `BATCH * 8` points in a row were programs seen before (a small space is done).
pub struct Random;

impl<P: Traversable + Fingerprint> Driver<P> for Random {
    fn name(&self) -> String {
        "random".into()
    }

    fn explore(&mut self, explorer: &mut Explorer<'_, P>) {
        // The points to start from first, each on its own (a cost that measures the
        // best few of a round measures each).
        for start in explorer.starts().to_vec() {
            explorer.evaluate(&[start]);
        }
        let mut stale = 0;
        while !explorer.exhausted() && stale < BATCH * 8 {
            let root = explorer.root().clone();
            let batch: Vec<_> = (0..BATCH)
                .map(|_| explorer.random_completion(&root))
                .collect();
            let before = explorer.distinct_programs();
            let seen = explorer.log().len();
            explorer.evaluate(&batch);
            let new = explorer.distinct_programs() - before;
            let failed_new = explorer.log()[seen..]
                .iter()
                .filter(|c| !c.cached && c.measure.is_none())
                .count();
            if new + failed_new == 0 {
                stale += batch.len();
            } else {
                stale = 0;
            }
        }
    }
}
