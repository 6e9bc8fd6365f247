//! The reference values candidates are checked against: the interpreter's, computed
//! once by a worker, or (where it takes too long) the start program's compiled with
//! `defaultLowering` alone.

use super::rounds::{failure, Runs};
use super::{Candidate, DeepRc, Measured};
use crate::measure::pool::Busy;
use crate::measure::protocol::{Reply, Request};
use elevate_strategies::search::{Rejection, Status};
use std::sync::Arc;
use std::time::Instant;

impl Measured {
    /// The reference values, computed by a worker the first time.
    pub(super) fn reference(
        &self,
        shared: &mut DeepRc,
        deadline: Option<Instant>,
    ) -> Result<Arc<String>, Rejection> {
        if let Some(known) = &shared.reference {
            return known.clone();
        }
        let slot = 0;
        shared
            .pool
            .ensure(slot)
            .map_err(|why| Rejection::new(Status::Crashed, why))?;
        shared.pool.send(slot, &Request::Reference)?;
        let mut busy = vec![Busy {
            slot,
            since: Instant::now(),
            limit: self.reference_time,
            over: Status::Timeout,
            what: "the time the interpreter may take for the reference values",
        }];
        let why = |w: String| {
            Rejection::new(
                Status::WrongValues,
                format!("the interpreter cannot compute the reference values: {w}"),
            )
        };
        let outcome = shared.pool.wait(&mut busy, deadline, self.stop_flag()).1;
        let known = match outcome {
            Ok(Reply::Reference { values }) => {
                shared.pool.set_has_reference(slot);
                self.set_source("the interpreter");
                Ok(Arc::new(values))
            }
            Ok(Reply::Error { reason }) => Err(why(reason)),
            Ok(other) => Err(why(format!("the worker answered {other:?}"))),
            // Stopped: not known yet, asked again next time.
            Err(r) if r.status == Status::Stopped => return Err(r),
            // Too slow: the start program compiled with `defaultLowering` alone.
            Err(r) if r.status == Status::Timeout => self.compiled_reference(shared, deadline),
            // Its worker died or passed a limit: that is what the candidate gets.
            Err(r) => Err(Rejection::new(
                r.status,
                format!(
                    "the interpreter could not compute the reference values: {}",
                    r.reason
                ),
            )),
        };
        if let Err(r) = &known {
            if r.status == Status::Stopped {
                return known;
            }
        }
        shared.reference = Some(known.clone());
        known
    }

    /// The values of the start program compiled with `defaultLowering` alone, as the
    /// reference (where the interpreter takes too long).
    pub(super) fn compiled_reference(
        &self,
        shared: &mut DeepRc,
        deadline: Option<Instant>,
    ) -> Result<Arc<String>, Rejection> {
        let start = Candidate::of(&self.start);
        let how = Runs {
            check: false,
            warm_up: false,
            runs: 1,
            race: false,
            output: true,
        };
        let slot = Self::any_slot(shared);
        match self.run_one(shared, slot, &start, how, deadline)? {
            Reply::Measured {
                output: Some(values),
                ..
            } => {
                self.set_source("the start program compiled with defaultLowering alone");
                Ok(Arc::new(values))
            }
            other => Err(Rejection::new(
                Status::WrongValues,
                format!(
                    "no reference values: the interpreter took too long, and the start program compiled gave none ({})",
                    failure(other).reason
                ),
            )),
        }
    }
}
