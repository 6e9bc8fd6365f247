//! `model+measured`: the model ranks, the best few are measured.

use super::Measured;
use elevate_rise::search::ModelCost;
use elevate_rise::Term;
use elevate_strategies::search::{evaluate_as_batch, parallel_map, Cost, Measure, Rejection};
use std::sync::Mutex;
use std::time::Instant;

/// `model+measured`: the model ranks each round, the best `best` of it are measured;
/// the others cost the model's estimate times the geometric mean of measured time over
/// estimate of every candidate measured so far (1 before any), and are marked as not
/// measured ([`Measure::ms`] is `None`).
pub struct ModelMeasured {
    model: ModelCost,
    measured: Measured,
    best: usize,
    /// The sum of `ln(measured / estimated)` and how many.
    calibration: Mutex<(f64, usize)>,
}

impl ModelMeasured {
    /// Measures the best `best` (at least 1) of each round by `model`.
    pub fn new(model: ModelCost, measured: Measured, best: usize) -> ModelMeasured {
        ModelMeasured {
            model,
            measured,
            best: best.max(1),
            calibration: Mutex::new((0.0, 0)),
        }
    }

    /// Measured time over estimate, as learned so far.
    pub fn scale(&self) -> f64 {
        self.calibration.lock().map_or(1.0, |c| {
            if c.1 == 0 {
                1.0
            } else {
                (c.0 / c.1 as f64).exp()
            }
        })
    }

    /// The measured cost it uses.
    pub fn measured(&self) -> &Measured {
        &self.measured
    }
}

impl Cost<Term> for ModelMeasured {
    fn name(&self) -> String {
        "model+measured".into()
    }

    fn evaluate(&self, program: &Term) -> Result<Measure, Rejection> {
        evaluate_as_batch(self, program)
    }

    fn evaluate_all(&self, programs: &[&Term], jobs: usize) -> Vec<Result<Measure, Rejection>> {
        self.evaluate_until(programs, jobs, None)
    }

    fn compare(
        &self,
        programs: &[&Term],
        turns: usize,
        deadline: Option<Instant>,
    ) -> Vec<Option<Measure>> {
        self.measured.compare(programs, turns, deadline)
    }

    fn evaluate_until(
        &self,
        programs: &[&Term],
        jobs: usize,
        deadline: Option<Instant>,
    ) -> Vec<Result<Measure, Rejection>> {
        let estimates = parallel_map(programs, jobs, |p| self.model.evaluate(p));
        let mut ranked: Vec<usize> = (0..programs.len())
            .filter(|&i| estimates[i].is_ok())
            .collect();
        ranked.sort_by(|&a, &b| {
            let cost = |i: usize| estimates[i].as_ref().map_or(f64::INFINITY, |m| m.cost);
            cost(a).total_cmp(&cost(b))
        });
        ranked.truncate(self.best);
        let chosen: Vec<&Term> = ranked.iter().map(|&i| programs[i]).collect();
        let measured = self.measured.evaluate_until(&chosen, jobs, deadline);
        let mut results: Vec<Result<Measure, Rejection>> = estimates.clone();
        for (&i, m) in ranked.iter().zip(measured) {
            let estimate = estimates[i].as_ref().map_or(f64::NAN, |e| e.cost);
            results[i] = m.map(|mut m| {
                m.model = Some(estimate);
                if let (Some(ms), Ok(mut c)) = (m.ms, self.calibration.lock()) {
                    if ms > 0.0 && estimate > 0.0 {
                        c.0 += (ms / estimate).ln();
                        c.1 += 1;
                    }
                }
                m
            });
        }
        let scale = self.scale();
        for (i, r) in results.iter_mut().enumerate() {
            if ranked.contains(&i) {
                continue;
            }
            if let Ok(m) = r {
                m.cost = m.model.unwrap_or(m.cost) * scale;
            }
        }
        results
    }
}
