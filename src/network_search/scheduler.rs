//! The task scheduler of a network search: which layer's search gets the next round.

/// What the scheduler knows of a task.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskState {
    /// The layers it stands for.
    pub count: usize,
    /// The multiply-adds of one of them: its weight before it has a cost.
    pub work: f64,
    /// The library schedule's cost, once measured.
    pub library: Option<f64>,
    /// The best cost after each of its rounds (`None`: nothing yet).
    pub history: Vec<Option<f64>>,
    /// Whether its space has no more points to give.
    pub exhausted: bool,
}

impl TaskState {
    /// Its best cost: the search's best or the library's, whichever is lower.
    pub fn best(&self) -> Option<f64> {
        let searched = self.history.last().copied().flatten();
        match (searched, self.library) {
            (Some(s), Some(l)) => Some(s.min(l)),
            (s, l) => s.or(l),
        }
    }
}

/// The share of a round a task that stopped improving is still given, over the
/// rounds it had: a task never improved is tried again, ever less often.
const OPTIMISM: f64 = 0.1;

/// The task scheduler (see the module).
///
/// ```
/// use elevate::network_search::{Scheduler, TaskState};
/// let mut s = Scheduler::new(vec![
///     TaskState { count: 1, work: 1e6, library: Some(1.0), ..Default::default() },
///     TaskState { count: 4, work: 2e6, library: Some(2.0), ..Default::default() },
/// ]);
/// // The heavier task first: 4 layers of 2 million multiply-adds.
/// assert_eq!(s.next(), Some(1));
/// s.record(1, Some(2.0), false);
/// assert_eq!(s.next(), Some(0));
/// s.record(0, Some(1.0), false);
/// // Task 1 improved by half in its second round: it keeps the time.
/// s.record(1, Some(1.0), false);
/// assert_eq!(s.next(), Some(1));
/// ```
#[derive(Debug, Clone)]
pub struct Scheduler {
    /// The tasks, in the order of [`tasks`](super::tasks).
    pub tasks: Vec<TaskState>,
}

impl Scheduler {
    /// A scheduler of `tasks`.
    pub fn new(tasks: Vec<TaskState>) -> Scheduler {
        Scheduler { tasks }
    }

    /// The task to give the next round, `None` when every space is exhausted.
    pub fn next(&self) -> Option<usize> {
        let open = || self.tasks.iter().enumerate().filter(|(_, t)| !t.exhausted);
        // Every task its first round, the heaviest (by its work) first.
        if let Some((i, _)) =
            open()
                .filter(|(_, t)| t.history.is_empty())
                .max_by(|(_, a), (_, b)| {
                    (a.work * a.count as f64).total_cmp(&(b.work * b.count as f64))
                })
        {
            return Some(i);
        }
        open()
            .max_by(|(_, a), (_, b)| gain(a).total_cmp(&gain(b)))
            .map(|(i, _)| i)
    }

    /// Task `task`'s round ended with `best` its search's best cost so far;
    /// `exhausted` where it evaluated nothing new.
    pub fn record(&mut self, task: usize, best: Option<f64>, exhausted: bool) {
        if let Some(t) = self.tasks.get_mut(task) {
            t.history.push(best);
            t.exhausted |= exhausted;
        }
    }

    /// The network's cost as its tasks' costs give it: each task's best times the
    /// layers it stands for (`None` until every task has one).
    pub fn total(&self, best: bool) -> Option<f64> {
        self.tasks
            .iter()
            .map(|t| {
                let cost = if best { t.best() } else { t.library };
                cost.map(|c| c * t.count as f64)
            })
            .sum()
    }
}

/// A task's share of the network's time: its best cost times its layers (before it
/// has one, its work: of the tasks never measured, the heaviest goes first).
fn weight(t: &TaskState) -> f64 {
    t.best().unwrap_or(t.work) * t.count as f64
}

/// What another round of a task may gain: its share of the network's time times the
/// last round's relative gain, or an optimistic share shrinking with its rounds.
fn gain(t: &TaskState) -> f64 {
    let rounds = t.history.len() as f64;
    let bests: Vec<f64> = t.history.iter().flatten().copied().collect();
    let recent = match bests[..] {
        [.., before, after] if before > 0.0 => (before - after) / before,
        _ => 0.0,
    };
    weight(t) * recent.max(OPTIMISM / rounds.max(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(count: usize, library: f64) -> TaskState {
        TaskState {
            count,
            work: library,
            library: Some(library),
            ..TaskState::default()
        }
    }

    #[test]
    fn every_task_has_a_first_round_before_any_has_a_second() {
        let mut s = Scheduler::new(vec![task(1, 1.0), task(1, 9.0), task(2, 3.0)]);
        let mut first = Vec::new();
        while let Some(t) = s.next().filter(|t| s.tasks[*t].history.is_empty()) {
            first.push(t);
            s.record(t, s.tasks[t].library, false);
        }
        // By work: 9, then 2 x 3, then 1.
        assert_eq!(first, [1, 2, 0]);
    }

    #[test]
    fn a_task_still_improving_keeps_the_rounds_and_a_stalled_one_yields_them() {
        let mut s = Scheduler::new(vec![task(1, 10.0), task(1, 10.0)]);
        for t in [0, 1] {
            s.record(t, Some(10.0), false);
        }
        // Task 0 gains a fifth, task 1 nothing.
        s.record(0, Some(8.0), false);
        s.record(1, Some(10.0), false);
        assert_eq!(s.next(), Some(0));
        // Task 0 stalls for rounds on end: the optimistic share of task 1 (fewer
        // rounds, more time) wins it back.
        for _ in 0..4 {
            s.record(0, Some(8.0), false);
        }
        assert_eq!(s.next(), Some(1));
    }

    #[test]
    fn exhausted_tasks_get_no_round_and_the_totals_weigh_tasks_by_their_layers() {
        let mut s = Scheduler::new(vec![task(3, 2.0), task(1, 1.0)]);
        s.record(0, Some(1.0), true);
        s.record(1, None, true);
        assert_eq!(s.next(), None);
        assert_eq!(s.total(false), Some(7.0));
        // Task 1's search found nothing: its best is the library's.
        assert_eq!(s.total(true), Some(4.0));
    }
}
