//! The agents' environment with the model cost (no compilation), timed per step and
//! per episode: shared by `examples/env_bench.rs`, `examples/search_bench.rs` and the
//! criterion benchmark of search.

#![allow(dead_code)]

use elevate::rise::search::{Auto, Machine, ModelCost};
use elevate::rise::Term;
use elevate::strategies::search::{Environment, Space};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What [`episodes`] measured.
pub struct EnvTimes {
    /// Microseconds per step, the steps that end an episode (which ask the model for
    /// the end's cost) left out.
    pub us_per_step: f64,
    /// The median of those steps, in microseconds.
    pub us_per_step_median: f64,
    /// Microseconds per step that ends an episode: the step, the model's cost of the
    /// program it ends with (where the environment has not met that program before)
    /// included. The median.
    pub us_per_end_step_median: f64,
    /// Their mean.
    pub us_per_end_step: f64,
    /// Microseconds per episode: the reset and every step to the end, the end's cost
    /// included.
    pub us_per_episode: f64,
    /// Microseconds of the first reset (which derives `auto` from the program).
    pub us_first_reset: f64,
    /// Steps per episode, on average (the last one included).
    pub steps_per_episode: f64,
}

/// A space of rule-level steps, ELEVATE's heuristic-search neighbourhood: each step is
/// one rule at one location.
pub const RULE_STEPS: &str = "DFNF ; steps(6, {splitJoin(32), loopInterchange, mapFission, mapFusion, liftReduce, fuseReduceMap}) ; defaultLowering";

/// An environment over `space` (`auto` or any space text) on `start` with the model
/// cost, reset once.
pub fn environment(start: &Term, space: &str) -> Environment<Term> {
    let space = Space::parse_with_auto(space, Arc::new(elevate::rise::registry()), Auto::default())
        .expect("the space reads");
    let mut env = Environment::new(space, ModelCost::new(Machine::host()));
    env.reset(start);
    env
}

/// The next number of a fixed linear congruential sequence.
pub fn next_random(seed: &mut u64) -> usize {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*seed >> 33) as usize
}

/// One episode of random legal actions from `start`; each step's time, and whether it
/// ended the episode.
pub fn episode(env: &mut Environment<Term>, start: &Term, seed: &mut u64) -> Vec<(Duration, bool)> {
    env.reset(start);
    let mut steps = Vec::new();
    while !env.state().is_final() {
        let legal = env.legal_actions();
        let action = legal[next_random(seed) % legal.len()];
        let t = Instant::now();
        let transition = env.step(action).expect("a legal action");
        steps.push((t.elapsed(), transition.done));
    }
    steps
}

/// `count` episodes of random legal actions on `start` over `space`, with the model
/// cost, in a fresh environment.
pub fn episodes(start: &Term, space: &str, count: u32) -> EnvTimes {
    let first = Instant::now();
    let mut env = environment(start, space);
    let us_first_reset = first.elapsed().as_secs_f64() * 1e6;
    let (mut steps, mut ends, mut all_steps) = (Vec::new(), Vec::new(), 0usize);
    let mut episode_time = Duration::ZERO;
    let mut seed = 1u64;
    for _ in 0..count {
        let t = Instant::now();
        let taken = episode(&mut env, start, &mut seed);
        episode_time += t.elapsed();
        all_steps += taken.len();
        steps.extend(taken.iter().filter(|(_, done)| !done).map(|(d, _)| *d));
        ends.extend(taken.iter().filter(|(_, done)| *done).map(|(d, _)| *d));
    }
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let total: Duration = steps.iter().sum();
    let end_total: Duration = ends.iter().sum();
    steps.sort();
    ends.sort();
    let count = f64::from(count.max(1));
    EnvTimes {
        us_per_step: us(total) / steps.len().max(1) as f64,
        us_per_step_median: steps.get(steps.len() / 2).map_or(0.0, |d| us(*d)),
        us_per_end_step: us(end_total) / ends.len().max(1) as f64,
        us_per_end_step_median: ends.get(ends.len() / 2).map_or(0.0, |d| us(*d)),
        us_per_episode: us(episode_time) / count,
        us_first_reset,
        steps_per_episode: all_steps as f64 / count,
    }
}
