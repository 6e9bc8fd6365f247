//! Fresh names: every traversal tells the run's name supply the floor of the node it
//! descends from, so a rule that sees only a leaf still makes names that are new to
//! the whole program; and a run's names depend on nothing but the run.

use elevate_core::{
    rule_with_names, Context, Cursor, NameSupply, Node, NodeId, Path, Strategy, Traversable,
};
use elevate_strategies::*;

/// A tree whose nodes may carry a name (an identity), with the name floor cached as
/// an IR with binders does.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Tree(Node<TreeNode>);

#[derive(PartialEq, Eq, Hash)]
struct TreeNode {
    name: Option<u64>,
    children: Vec<Tree>,
    floor: u64,
}

impl Tree {
    fn new(name: Option<u64>, children: Vec<Tree>) -> Tree {
        let own = name.map_or(0, |id| id + 1);
        let floor = children.iter().map(Tree::name_floor).fold(own, u64::max);
        Tree(Node::new(TreeNode {
            name,
            children,
            floor,
        }))
    }

    fn leaf(name: Option<u64>) -> Tree {
        Tree::new(name, Vec::new())
    }

    /// Every name in the tree, in pre-order.
    fn names(&self) -> Vec<u64> {
        let mut out = Vec::new();
        let mut pending = vec![self];
        while let Some(t) = pending.pop() {
            out.extend(t.0.name);
            pending.extend(t.0.children.iter().rev());
        }
        out
    }
}

impl Traversable for Tree {
    fn arity(&self) -> usize {
        self.0.children.len()
    }

    fn child(&self, index: usize) -> &Self {
        &self.0.children[index]
    }

    fn with_child(&self, index: usize, child: Self) -> Self {
        let mut children = self.0.children.clone();
        children[index] = child;
        Tree::new(self.0.name, children)
    }

    fn node_id(&self) -> Option<NodeId> {
        Some(self.0.id())
    }

    fn name_floor(&self) -> u64 {
        self.0.floor
    }
}

/// `_ -> k` on an unnamed leaf, `k` fresh: the rule sees only the leaf.
fn name_leaf() -> Strategy<Tree> {
    rule_with_names("nameLeaf", |t: &Tree, names: &mut NameSupply| {
        (t.0.name.is_none() && t.arity() == 0).then(|| Tree::leaf(Some(names.fresh())))
    })
}

/// `20(_, 7(_, 30), _, 12)`: the unnamed leaves have floor 0, the tree 31.
fn sample() -> Tree {
    let inner = Tree::new(Some(7), vec![Tree::leaf(None), Tree::leaf(Some(30))]);
    Tree::new(
        Some(20),
        vec![
            Tree::leaf(None),
            inner,
            Tree::leaf(None),
            Tree::leaf(Some(12)),
        ],
    )
}

/// The names `result` has beyond `input`'s: each at least `input`'s floor, no two the
/// same. Their number.
fn check_new_names(input: &Tree, result: &Tree) -> usize {
    let old = input.names();
    let new: Vec<u64> = result
        .names()
        .into_iter()
        .filter(|n| !old.contains(n))
        .collect();
    let mut distinct = new.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), new.len(), "a name made twice: {new:?}");
    assert!(
        new.iter().all(|&n| n >= input.name_floor()),
        "a new name below the floor {}: {new:?}",
        input.name_floor()
    );
    assert_eq!(
        result.names().len(),
        old.len() + new.len(),
        "a new name equal to an old one"
    );
    new.len()
}

#[test]
fn every_traversal_makes_names_new_to_the_whole_program() {
    let r = name_leaf;
    let cases: Vec<(Strategy<Tree>, usize)> = vec![
        (top_down(r()), 1),
        (bottom_up(r()), 1),
        (one(r()), 1),
        (some(r()), 2),
        (all(try_(r())), 2),
        (try_all(r()), 3),
        (alltd(r()), 3),
        (sometd(r()), 3),
        (somebu(r()), 3),
        (normalize(r()), 3),
        (all_top_down(try_(r())), 3),
        (all_bottom_up(try_(r())), 3),
        (downup(try_(r())), 3),
        (at_path(Path::from(vec![1, 0]), r()), 1),
        (position(3, r()), 1),
        (skip(1, r()), 1),
        (repeat(top_down(r())), 3),
    ];
    let t = sample();
    assert_eq!(t.name_floor(), 31);
    for (s, made) in cases {
        let result = s.apply(&t, &mut Context::default()).unwrap();
        assert_eq!(check_new_names(&t, &result), made, "{s}");
    }
}

#[test]
fn a_rule_makes_names_new_to_the_node_it_rewrites() {
    // Names any unnamed node, keeping its children: applied at the root, with no
    // traversal before it to tell the supply about the children's names.
    let name_node = rule_with_names("nameNode", |t: &Tree, names: &mut NameSupply| {
        t.0.name
            .is_none()
            .then(|| Tree::new(Some(names.fresh()), t.0.children.clone()))
    });
    let t = Tree::new(None, vec![Tree::leaf(Some(5)), Tree::leaf(Some(2))]);
    let result = name_node.run(&t).unwrap();
    assert_eq!(result.names(), [6, 5, 2]);
}

#[test]
fn a_cursor_makes_names_new_to_the_whole_program() {
    let t = sample();
    let mut cursor = Cursor::new(t.clone());
    let mut cx = Context::default();
    cursor.goto(&Path::from(vec![1, 0])).unwrap();
    cursor.apply(&name_leaf(), &mut cx).unwrap();
    cursor.goto(&Path::from(vec![2])).unwrap();
    cursor.apply(&name_leaf(), &mut cx).unwrap();
    let result = cursor.into_root();
    assert_eq!(check_new_names(&t, &result), 2);
}

#[test]
fn a_run_names_the_same_whatever_ran_before() {
    let t = sample();
    let s = normalize(name_leaf());
    let first = s.run(&t).unwrap();
    // Other runs in between, on other programs, make names of their own.
    let other = Tree::new(Some(1000), vec![Tree::leaf(None), Tree::leaf(None)]);
    for _ in 0..3 {
        s.run(&other).unwrap();
    }
    let second = s.run(&t).unwrap();
    assert_eq!(first.names(), second.names());
    assert_eq!(first.names(), [20, 31, 7, 32, 30, 33, 12]);
}

#[test]
fn a_context_given_a_supply_names_above_it() {
    let t = sample();
    let mut cx = Context::default().with_names(NameSupply::above(500));
    let result = try_all(name_leaf()).apply(&t, &mut cx).unwrap();
    assert_eq!(result.names(), [20, 500, 7, 501, 30, 502, 12]);
    assert_eq!(cx.names().peek(), 503);
}
