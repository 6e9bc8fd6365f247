//! A round of candidates through the workers: compiled at once, then each run alone;
//! and the final comparison's turns.

use super::{Candidate, DeepRc, Measured, SETUP_TIME};
use crate::measure::pool::Busy;
use crate::measure::protocol::{Reply, Request, RunSpec};
use elevate_rise::Term;
use elevate_strategies::search::{parallel_map, Cost, Measure, Rejection, Status};
use std::collections::VecDeque;
use std::time::Instant;

impl Measured {
    /// Compiles `candidates` on up to `jobs` workers at once: for each, the slot of
    /// the worker that holds it and its compile time, or why it has none.
    pub(super) fn compile_all(
        &self,
        shared: &mut DeepRc,
        candidates: &[Candidate],
        deadline: Option<Instant>,
    ) -> Vec<Result<(usize, f64), Rejection>> {
        let mut results: Vec<Option<Result<(usize, f64), Rejection>>> =
            vec![None; candidates.len()];
        let mut queue: VecDeque<usize> = (0..candidates.len()).collect();
        let mut busy: Vec<Busy> = Vec::new();
        let mut working: Vec<Option<usize>> = vec![None; shared.pool.len()];
        loop {
            // Every idle worker takes the next candidate.
            let idle: Vec<usize> = (0..working.len())
                .filter(|&s| working[s].is_none())
                .collect();
            for slot in idle {
                let Some(&i) = queue.front() else { break };
                if let Err(why) = shared.pool.ensure(slot) {
                    queue.pop_front();
                    results[i] = Some(Err(Rejection::new(Status::Crashed, why)));
                    continue;
                }
                let c = &candidates[i];
                let request = Request::Compile {
                    key: c.key.clone(),
                    program: c.text.clone(),
                };
                queue.pop_front();
                match shared.pool.send(slot, &request) {
                    Ok(()) => {
                        working[slot] = Some(i);
                        self.flying(slot, Some((c, "compiling")));
                        busy.push(Busy {
                            slot,
                            since: Instant::now(),
                            limit: self.limits.compile,
                            over: Status::CompileTimeout,
                            what: "the compile limit",
                        });
                    }
                    Err(r) => results[i] = Some(Err(r)),
                }
            }
            if busy.is_empty() {
                break;
            }
            let (slot, outcome) = shared.pool.wait(&mut busy, deadline, self.stop_flag());
            let Some(i) = working[slot].take() else {
                continue;
            };
            self.flying(slot, None);
            results[i] = Some(match outcome {
                Ok(Reply::Compiled { compile_ms, .. }) => {
                    shared.pool.served(slot, &candidates[i].key);
                    Ok((slot, compile_ms))
                }
                Ok(reply) => Err(failure(reply)),
                Err(r) => Err(r),
            });
            if results[i]
                .as_ref()
                .is_some_and(|r| r.as_ref().is_err_and(|r| r.status == Status::Stopped))
            {
                // The rest of the round is stopped too.
                for j in queue.drain(..) {
                    results[j] = Some(Err(r_stopped()));
                }
            }
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(r_stopped())))
            .collect()
    }

    /// Runs candidate `c` on the worker in `slot` (compiling it there if it does not
    /// hold it), alone.
    pub(super) fn run_one(
        &self,
        shared: &mut DeepRc,
        slot: usize,
        c: &Candidate,
        how: Runs,
        deadline: Option<Instant>,
    ) -> Result<Reply, Rejection> {
        let Runs {
            check,
            warm_up,
            runs,
            race,
            output,
        } = how;
        shared
            .pool
            .ensure(slot)
            .map_err(|why| Rejection::new(Status::Crashed, why))?;
        if check && !shared.pool.has_reference(slot) {
            let values = self.reference(shared, deadline)?;
            if !shared.pool.has_reference(slot) {
                shared.pool.send(
                    slot,
                    &Request::Expect {
                        values: values.to_string(),
                    },
                )?;
                let mut busy = vec![Busy {
                    slot,
                    since: Instant::now(),
                    limit: SETUP_TIME * 10,
                    over: Status::Timeout,
                    what: "the time to take the reference values",
                }];
                match shared.pool.wait(&mut busy, deadline, self.stop_flag()).1? {
                    Reply::Ready { .. } => shared.pool.set_has_reference(slot),
                    other => return Err(failure(other)),
                }
            }
        }
        let compiles = !shared.pool.holds(slot, &c.key);
        let request = Request::Run {
            key: c.key.clone(),
            program: c.text.clone(),
            how: RunSpec {
                check,
                warm_up,
                runs,
                best_ms: shared.best_ms.filter(|_| race),
                run_limit_ms: self.limits.run.as_secs_f64() * 1e3,
                output,
            },
        };
        shared.pool.send(slot, &request)?;
        self.flying(slot, Some((c, "running")));
        // Every run up to its limit, time to set up the call and compare its values,
        // and the compilation if this worker must compile it.
        let mut limit = self.limits.run * (runs as u32 + 1) + SETUP_TIME;
        if compiles {
            limit += self.limits.compile;
        }
        let mut busy = vec![Busy {
            slot,
            since: Instant::now(),
            limit,
            over: if compiles {
                Status::CompileTimeout
            } else {
                Status::Timeout
            },
            what: if compiles {
                "the compile limit and the run limit of each run"
            } else {
                "the run limit of each run"
            },
        }];
        let outcome = shared.pool.wait(&mut busy, deadline, self.stop_flag()).1;
        self.flying(slot, None);
        let reply = outcome?;
        shared.pool.served(slot, &c.key);
        Ok(reply)
    }

    /// A slot whose worker runs, or the first.
    pub(super) fn any_slot(shared: &DeepRc) -> usize {
        (0..shared.pool.len())
            .find(|&s| shared.pool.id(s).is_some())
            .unwrap_or(0)
    }

    /// A round: its candidates compiled on up to `jobs` workers, then each run alone.
    pub(super) fn round(
        &self,
        programs: &[&Term],
        jobs: usize,
        deadline: Option<Instant>,
    ) -> Vec<Result<Measure, Rejection>> {
        let candidates: Vec<Candidate> = programs.iter().map(|p| Candidate::of(p)).collect();
        let mut guard = self.lock();
        let shared = &mut *guard;
        shared.pool.resize(jobs.max(1));
        // Every candidate compiles (or fails to) before any runs.
        let compiling = Instant::now();
        let compiled = self.compile_all(shared, &candidates, deadline);
        shared.compile_rate.candidates += compiled
            .iter()
            .filter(|r| {
                r.as_ref()
                    .map_or_else(|r| r.status != Status::Stopped, |_| true)
            })
            .count();
        shared.compile_rate.seconds += compiling.elapsed().as_secs_f64();
        // Then each runs alone, on the worker that compiled it where it still runs.
        let mut results = Vec::with_capacity(candidates.len());
        for (c, compiled) in candidates.iter().zip(compiled) {
            let (slot, compile_ms) = match compiled {
                Ok(done) => done,
                Err(r) => {
                    results.push(Err(r));
                    continue;
                }
            };
            let slot = match shared.pool.holds(slot, &c.key) {
                true => slot,
                false => Self::any_slot(shared),
            };
            let check = !shared.checked.contains(&c.hash);
            let how = Runs {
                check,
                warm_up: true,
                runs: self.runs,
                race: true,
                output: false,
            };
            let outcome = self.run_one(shared, slot, c, how, deadline);
            let result = outcome.and_then(|reply| {
                let raced = matches!(reply, Reply::Measured { raced: true, .. });
                match measure_of(&reply, Some(compile_ms)) {
                    Some(m) => {
                        if raced {
                            shared.raced += 1;
                        } else {
                            shared.best_ms = Some(shared.best_ms.map_or(m.cost, |b| b.min(m.cost)));
                        }
                        Ok(m)
                    }
                    None => Err(failure(reply)),
                }
            });
            if check && result.is_ok() {
                shared.checked.insert(c.hash);
            }
            results.push(result);
        }
        self.idle();
        shared.pool.retire_worn();
        drop(guard);
        if let Some(model) = &self.model {
            let ok: Vec<usize> = (0..programs.len())
                .filter(|&i| results[i].is_ok())
                .collect();
            let chosen: Vec<&Term> = ok.iter().map(|&i| programs[i]).collect();
            let estimates = parallel_map(&chosen, jobs, |p| model.evaluate(p));
            for (i, estimate) in ok.into_iter().zip(estimates) {
                if let (Ok(m), Ok(e)) = (&mut results[i], estimate) {
                    m.model = Some(e.cost);
                }
            }
        }
        results
    }

    /// `programs` run in turns, one run each a turn (see [`Cost::compare`]).
    pub(super) fn turns(
        &self,
        programs: &[&Term],
        turns: usize,
        deadline: Option<Instant>,
    ) -> Vec<Option<Measure>> {
        let candidates: Vec<Candidate> = programs.iter().map(|p| Candidate::of(p)).collect();
        let mut guard = self.lock();
        let shared = &mut *guard;
        // The workers that hold the programs compiled stay.
        shared.pool.resize(shared.pool.len().max(1));
        // A warm-up run before each turn's timed one (the call's buffers are fresh
        // each time), except for programs whose run takes a second or more, for
        // which a first touch of their buffers is noise.
        const NO_WARM_UP_MS: f64 = 1_000.0;
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); candidates.len()];
        let mut failed = vec![false; candidates.len()];
        'turns: for turn in 0..turns.max(1) {
            for (k, c) in candidates.iter().enumerate() {
                if failed[k] {
                    continue;
                }
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    break 'turns;
                }
                // On the worker that holds it compiled, if one does.
                let slot = (0..shared.pool.len())
                    .find(|&s| shared.pool.holds(s, &c.key))
                    .unwrap_or_else(|| Self::any_slot(shared));
                // One run a turn; the first turn warms the program up.
                let slow = times[k].last().is_some_and(|&ms| ms >= NO_WARM_UP_MS);
                let how = Runs {
                    check: false,
                    warm_up: turn == 0 || !slow,
                    runs: 1,
                    race: false,
                    output: false,
                };
                match self.run_one(shared, slot, c, how, deadline) {
                    Ok(Reply::Measured { times_ms, .. }) if !times_ms.is_empty() => {
                        times[k].extend(times_ms)
                    }
                    Ok(Reply::Measured {
                        warm_up_ms: Some(ms),
                        ..
                    }) => times[k].push(ms),
                    _ => failed[k] = true,
                }
            }
        }
        self.idle();
        times
            .into_iter()
            .map(|mut t| {
                if t.is_empty() {
                    return None;
                }
                t.sort_by(f64::total_cmp);
                let median = t[t.len() / 2];
                Some(Measure {
                    cost: median,
                    model: None,
                    ms: Some(median),
                    compile_ms: None,
                    spread_ms: Some((t[0], t[t.len() - 1])),
                })
            })
            .collect()
    }
}

/// How to run a candidate.
#[derive(Debug, Clone, Copy)]
pub(super) struct Runs {
    /// Check its values against the reference.
    pub(super) check: bool,
    /// Run it once untimed first.
    pub(super) warm_up: bool,
    /// The most timed runs.
    pub(super) runs: usize,
    /// Time it less when it is much slower than the best so far.
    pub(super) race: bool,
    /// Answer with its values too.
    pub(super) output: bool,
}

pub(super) fn r_stopped() -> Rejection {
    Rejection::new(
        Status::Stopped,
        "stopped by the budget: the search's time was up",
    )
}

/// The rejection a worker's reply other than the one hoped for stands for.
pub(super) fn failure(reply: Reply) -> Rejection {
    match reply {
        Reply::Failed { status, reason, .. } => Rejection::new(
            Status::parse(&status)
                .filter(|s| *s != Status::Ok)
                .unwrap_or(Status::CompileFailed),
            reason,
        ),
        Reply::Error { reason } => Rejection::new(Status::Crashed, reason),
        other => Rejection::new(Status::Crashed, format!("its worker answered {other:?}")),
    }
}

/// The measure of a worker's runs: the median of its timed runs (the warm-up's time
/// where it had none), their spread.
fn measure_of(reply: &Reply, compile_ms: Option<f64>) -> Option<Measure> {
    let Reply::Measured {
        compile_ms: compiled_now,
        warm_up_ms,
        times_ms,
        ..
    } = reply
    else {
        return None;
    };
    let mut times = times_ms.clone();
    times.sort_by(f64::total_cmp);
    let median = match times.len() {
        0 => (*warm_up_ms)?,
        n => times[n / 2],
    };
    Some(Measure {
        cost: median,
        model: None,
        ms: Some(median),
        compile_ms: compiled_now.or(compile_ms),
        spread_ms: (times.len() > 1).then(|| (times[0], times[times.len() - 1])),
    })
}
