//! The primitives of RISE, high- and low-level, with their types.
//!
//! Each primitive is defined once, in the table below (its name and nat parameters;
//! its type in [`Prim::instantiate`]). Every consumer that gives primitives a meaning matches
//! on [`Prim`] without a wildcard arm, so that a primitive added here fails to compile
//! until each says what it does with it: the interpreter (`interp`) and the loop program
//! (`loop_program`: what the bridge compiles and the cost model reads). How a loop
//! primitive iterates is a fact of the table too ([`Prim::iteration`]), which the loop
//! program and the e-graph's cost both read.

use crate::nat::{Nat, NatVar};
use crate::types::{Scalar, Type};
use std::fmt;

macro_rules! primitives {
    ($($variant:ident = $name:literal, $nats:literal;)*) => {
        /// A built-in primitive of RISE.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Prim { $(
            #[doc = concat!("`", $name, "`")]
            $variant,
        )* }

        impl Prim {
            /// Every primitive.
            pub const ALL: &'static [Prim] = &[$(Prim::$variant),*];

            /// The primitive's name in RISE syntax.
            pub fn name(self) -> &'static str {
                match self { $(Prim::$variant => $name,)* }
            }

            /// How many nat arguments it takes first, written like ordinary arguments:
            /// `split(32)`, `slide(3, 1)`.
            pub fn nat_params(self) -> usize {
                match self { $(Prim::$variant => $nats,)* }
            }

            /// The primitive named `name`.
            pub fn from_name(name: &str) -> Option<Prim> {
                match name { $($name => Some(Prim::$variant),)* _ => None }
            }
        }
    };
}

primitives! {
    Id = "id", 0;
    Neg = "neg", 0;
    Not = "not", 0;
    Add = "add", 0;
    Sub = "sub", 0;
    Mul = "mul", 0;
    Div = "div", 0;
    Mod = "mod", 0;
    Max = "max", 0;
    Min = "min", 0;
    Exp = "exp", 0;
    Sqrt = "sqrt", 0;
    Abs = "abs", 0;
    Lt = "lt", 0;
    Gt = "gt", 0;
    Equal = "equal", 0;
    Select = "select", 0;
    Cast = "cast", 0;
    Let = "let", 0;
    ToMem = "toMem", 0;
    ToGlobal = "toGlobal", 0;
    ToShared = "toShared", 0;
    ToPrivate = "toPrivate", 0;
    Generate = "generate", 0;
    Idx = "idx", 0;
    IndexAsNat = "indexAsNat", 0;
    NatAsIndex = "natAsIndex", 1;
    Take = "take", 1;
    Drop = "drop", 1;
    Concat = "concat", 0;
    Split = "split", 1;
    Join = "join", 0;
    Slide = "slide", 2;
    Transpose = "transpose", 0;
    PadCst = "padCst", 2;
    PadClamp = "padClamp", 2;
    Zip = "zip", 0;
    Unzip = "unzip", 0;
    MakePair = "makePair", 0;
    Fst = "fst", 0;
    Snd = "snd", 0;
    MapFst = "mapFst", 0;
    MapSnd = "mapSnd", 0;
    VectorFromScalar = "vectorFromScalar", 0;
    AsVector = "asVector", 1;
    AsVectorAligned = "asVectorAligned", 1;
    AsScalar = "asScalar", 0;
    Map = "map", 0;
    MapSeq = "mapSeq", 0;
    MapSeqUnroll = "mapSeqUnroll", 0;
    MapPar = "mapPar", 0;
    MapGlobal = "mapGlobal", 1;
    MapWorkGroup = "mapWorkGroup", 1;
    MapLocal = "mapLocal", 1;
    Reduce = "reduce", 0;
    ReduceSeq = "reduceSeq", 0;
    ReduceSeqUnroll = "reduceSeqUnroll", 0;
    ScanSeq = "scanSeq", 0;
    Iterate = "iterate", 1;
}

/// A constraint on a type variable that plain unification cannot express.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// A number or a vector of numbers (arithmetic, ordering).
    Arithmetic,
    /// A scalar, `bool` included, or a vector of them (`equal`).
    Comparable,
    /// A float scalar or a vector of floats (`exp`, `sqrt`).
    Float,
    /// A scalar (`cast`).
    Scalar,
    /// Data, not a function (`toMem`, `select`, `let`'s value...).
    Data,
}

/// Makes fresh inference variables for instantiating type schemes.
pub trait FreshVars {
    /// A fresh type variable.
    fn fresh_type(&mut self) -> Type;
    /// A fresh nat unknown.
    fn fresh_nat(&mut self) -> Nat;
}

/// A primitive's type, instantiated with fresh variables, and the class constraints
/// on them.
pub struct Instance {
    /// The type; explicit nat parameters are leading `DepFun`s.
    pub ty: Type,
    /// Constraints to check once the variables are solved.
    pub classes: Vec<(Type, Class)>,
}

fn f(a: Type, b: Type) -> Type {
    Type::fun(a, b)
}

fn arr(n: &Nat, t: &Type) -> Type {
    Type::array(n.clone(), t.clone())
}

impl Prim {
    /// The type of the primitive with fresh variables (see [`Instance`]).
    pub fn instantiate(self, fresh: &mut dyn FreshVars) -> Instance {
        use Prim::*;
        let t = fresh.fresh_type();
        let s = fresh.fresh_type();
        let n = fresh.fresh_nat();
        let m = fresh.fresh_nat();
        // Binders of explicit nat parameters carry names no program can write, so that
        // substituting an argument never captures a program variable.
        let p = |k: &str| NatVar::Named(format!("#{k}").into());
        let pn = |k: &str| Nat::var(p(k));
        let mut classes = Vec::new();
        let ty = match self {
            Id => f(t.clone(), t.clone()),
            Neg => {
                classes.push((t.clone(), Class::Arithmetic));
                f(t.clone(), t.clone())
            }
            Not => f(Type::scalar(Scalar::Bool), Type::scalar(Scalar::Bool)),
            Add | Sub | Mul | Div | Mod | Max | Min => {
                classes.push((t.clone(), Class::Arithmetic));
                f(t.clone(), f(t.clone(), t.clone()))
            }
            Exp | Sqrt | Abs => {
                classes.push((
                    t.clone(),
                    if self == Abs {
                        Class::Arithmetic
                    } else {
                        Class::Float
                    },
                ));
                f(t.clone(), t.clone())
            }
            Lt | Gt | Equal => {
                let class = if self == Equal {
                    Class::Comparable
                } else {
                    Class::Arithmetic
                };
                classes.push((t.clone(), class));
                f(t.clone(), f(t.clone(), Type::scalar(Scalar::Bool)))
            }
            Select => {
                classes.push((t.clone(), Class::Data));
                f(
                    Type::scalar(Scalar::Bool),
                    f(t.clone(), f(t.clone(), t.clone())),
                )
            }
            Cast => {
                classes.push((s.clone(), Class::Scalar));
                classes.push((t.clone(), Class::Scalar));
                f(s.clone(), t.clone())
            }
            Let => {
                classes.push((s.clone(), Class::Data));
                f(s.clone(), f(f(s.clone(), t.clone()), t.clone()))
            }
            ToMem | ToGlobal | ToShared | ToPrivate => {
                classes.push((t.clone(), Class::Data));
                f(t.clone(), t.clone())
            }
            Generate => f(f(Type::index(n.clone()), t.clone()), arr(&n, &t)),
            Idx => f(Type::index(n.clone()), f(arr(&n, &t), t.clone())),
            IndexAsNat => f(Type::index(n.clone()), Type::scalar(Scalar::I64)),
            NatAsIndex => Type::dep_fun(p("n"), f(Type::scalar(Scalar::I64), Type::index(pn("n")))),
            Take => Type::dep_fun(p("n"), f(arr(&pn("n").add(&m), &t), arr(&pn("n"), &t))),
            Drop => Type::dep_fun(p("n"), f(arr(&pn("n").add(&m), &t), arr(&m, &t))),
            Concat => f(arr(&n, &t), f(arr(&m, &t), arr(&n.add(&m), &t))),
            Split => Type::dep_fun(
                p("n"),
                f(arr(&m.mul(&pn("n")), &t), arr(&m, &arr(&pn("n"), &t))),
            ),
            Join => f(arr(&n, &arr(&m, &t)), arr(&n.mul(&m), &t)),
            Slide => Type::dep_fun(
                p("sz"),
                Type::dep_fun(
                    p("sp"),
                    f(
                        arr(&pn("sp").mul(&n).add(&pn("sz")), &t),
                        arr(&Nat::cst(1).add(&n), &arr(&pn("sz"), &t)),
                    ),
                ),
            ),
            Transpose => f(arr(&n, &arr(&m, &t)), arr(&m, &arr(&n, &t))),
            PadCst => Type::dep_fun(
                p("l"),
                Type::dep_fun(
                    p("r"),
                    f(
                        t.clone(),
                        f(arr(&n, &t), arr(&pn("l").add(&n).add(&pn("r")), &t)),
                    ),
                ),
            ),
            PadClamp => Type::dep_fun(
                p("l"),
                Type::dep_fun(
                    p("r"),
                    f(arr(&n, &t), arr(&pn("l").add(&n).add(&pn("r")), &t)),
                ),
            ),
            Zip => f(
                arr(&n, &s),
                f(arr(&n, &t), arr(&n, &Type::pair(s.clone(), t.clone()))),
            ),
            Unzip => f(
                arr(&n, &Type::pair(s.clone(), t.clone())),
                Type::pair(arr(&n, &s), arr(&n, &t)),
            ),
            MakePair => f(s.clone(), f(t.clone(), Type::pair(s.clone(), t.clone()))),
            Fst => f(Type::pair(s.clone(), t.clone()), s.clone()),
            Snd => f(Type::pair(s.clone(), t.clone()), t.clone()),
            MapFst | MapSnd => {
                let u = fresh.fresh_type();
                let (before, after) = if self == MapFst {
                    (
                        Type::pair(s.clone(), t.clone()),
                        Type::pair(u.clone(), t.clone()),
                    )
                } else {
                    (
                        Type::pair(s.clone(), t.clone()),
                        Type::pair(s.clone(), u.clone()),
                    )
                };
                let g = if self == MapFst {
                    f(s.clone(), u)
                } else {
                    f(t.clone(), u)
                };
                f(g, f(before, after))
            }
            VectorFromScalar => {
                classes.push((t.clone(), Class::Scalar));
                f(t.clone(), Type::vector(t.clone(), n.clone()))
            }
            AsVector | AsVectorAligned => {
                classes.push((t.clone(), Class::Scalar));
                Type::dep_fun(
                    p("n"),
                    f(
                        arr(&m.mul(&pn("n")), &t),
                        arr(&m, &Type::vector(t.clone(), pn("n"))),
                    ),
                )
            }
            AsScalar => {
                classes.push((t.clone(), Class::Scalar));
                f(
                    arr(&m, &Type::vector(t.clone(), n.clone())),
                    arr(&m.mul(&n), &t),
                )
            }
            Map | MapSeq | MapSeqUnroll | MapPar => {
                f(f(s.clone(), t.clone()), f(arr(&n, &s), arr(&n, &t)))
            }
            MapGlobal | MapWorkGroup | MapLocal => Type::dep_fun(
                p("d"),
                f(f(s.clone(), t.clone()), f(arr(&n, &s), arr(&n, &t))),
            ),
            Reduce => {
                classes.push((t.clone(), Class::Data));
                f(
                    f(t.clone(), f(t.clone(), t.clone())),
                    f(t.clone(), f(arr(&n, &t), t.clone())),
                )
            }
            ReduceSeq | ReduceSeqUnroll => {
                classes.push((t.clone(), Class::Data));
                f(
                    f(t.clone(), f(s.clone(), t.clone())),
                    f(t.clone(), f(arr(&n, &s), t.clone())),
                )
            }
            ScanSeq => f(
                f(s.clone(), f(t.clone(), t.clone())),
                f(t.clone(), f(arr(&n, &s), arr(&n, &t))),
            ),
            Iterate => {
                let l = NatVar::Named("#l".into());
                let body = Type::dep_fun(
                    l.clone(),
                    f(arr(&Nat::var(l.clone()).mul(&n), &t), arr(&Nat::var(l), &t)),
                );
                Type::dep_fun(
                    p("k"),
                    f(body, f(arr(&m.mul(&n.pow(&pn("k"))), &t), arr(&m, &t))),
                )
            }
        };
        Instance { ty, classes }
    }

    /// How many value arguments it takes (after its nat arguments).
    pub fn value_arity(self) -> usize {
        use Prim::*;
        match self {
            Id | Neg | Not | Exp | Sqrt | Abs | Cast | ToMem | ToGlobal | ToShared | ToPrivate
            | Generate | IndexAsNat | NatAsIndex | Take | Drop | Split | Join | Slide
            | Transpose | PadClamp | Unzip | Fst | Snd | VectorFromScalar | AsVector
            | AsVectorAligned | AsScalar => 1,
            Add | Sub | Mul | Div | Mod | Max | Min | Lt | Gt | Equal | Let | Idx | Concat
            | PadCst | Zip | MakePair | MapFst | MapSnd | Map | MapSeq | MapSeqUnroll | MapPar
            | MapGlobal | MapWorkGroup | MapLocal | Iterate => 2,
            Select | Reduce | ReduceSeq | ReduceSeqUnroll | ScanSeq => 3,
        }
    }

    /// Whether applications are printed as pipes, `xs |> map(f)`: the primitive
    /// transforms its last argument, an array.
    pub fn is_pipeline_stage(self) -> bool {
        use Prim::*;
        matches!(
            self,
            Map | MapSeq
                | MapSeqUnroll
                | MapPar
                | MapGlobal
                | MapWorkGroup
                | MapLocal
                | Reduce
                | ReduceSeq
                | ReduceSeqUnroll
                | ScanSeq
                | Split
                | Join
                | Slide
                | Transpose
                | PadCst
                | PadClamp
                | Take
                | Drop
                | AsVector
                | AsVectorAligned
                | AsScalar
                | ToMem
                | ToGlobal
                | ToShared
                | ToPrivate
                | Iterate
                | Unzip
        )
    }

    /// Whether a function that uses it computes (rather than only building or
    /// rearranging data): arithmetic, comparison, conversion, or a reduction. What
    /// `defaultLowering` lowers, and what the e-graph's cost model charges for.
    pub fn computes(self) -> bool {
        use Prim::*;
        matches!(
            self,
            Neg | Not
                | Add
                | Sub
                | Mul
                | Div
                | Mod
                | Max
                | Min
                | Exp
                | Sqrt
                | Abs
                | Lt
                | Gt
                | Equal
                | Cast
                | Reduce
                | ReduceSeq
                | ReduceSeqUnroll
                | ScanSeq
                | Iterate
        )
    }

    /// Whether it stores its argument in memory: `toMem` (where the target chooses), or
    /// `toGlobal`, `toShared`, `toPrivate` (a GPU's global memory, a workgroup's shared
    /// memory, a thread's registers or local memory). All four are the identity on
    /// values; on a CPU the four are the same memory.
    ///
    /// ```
    /// use elevate_rise::prim::Prim;
    /// assert!(Prim::ToShared.stores() && Prim::ToMem.stores() && !Prim::Map.stores());
    /// ```
    pub fn stores(self) -> bool {
        use Prim::*;
        matches!(self, ToMem | ToGlobal | ToShared | ToPrivate)
    }

    /// Whether this is a low-level form (it records how to compute, not what).
    pub fn is_low_level(self) -> bool {
        use Prim::*;
        matches!(
            self,
            ToMem
                | ToGlobal
                | ToShared
                | ToPrivate
                | MapSeq
                | MapSeqUnroll
                | MapPar
                | MapGlobal
                | MapWorkGroup
                | MapLocal
                | ReduceSeq
                | ReduceSeqUnroll
                | ScanSeq
                | AsVector
                | AsVectorAligned
                | AsScalar
                | VectorFromScalar
                | Iterate
        )
    }
}

/// How a loop primitive goes over its array: the facts of [`Prim::iteration`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Iteration {
    /// Which of its value arguments is the array it iterates over (0 is the first):
    /// a map's second, a reduction's or scan's third, after the start value.
    pub array: usize,
    /// What its iterations make.
    pub makes: Makes,
    /// How its iterations run.
    pub schedule: Schedule,
}

/// What the iterations of a loop primitive make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Makes {
    /// An element of the result each (`map` and its lowered forms).
    Elements,
    /// One value, accumulated (`reduce` and its lowered forms).
    Accumulation,
    /// Every prefix's accumulation (`scanSeq`).
    Prefixes,
}

/// How the iterations of a loop primitive run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// Not said yet (`map`, `reduce`): a rewrite chooses.
    Unlowered,
    /// One after another.
    Sequential,
    /// One after another, unrolled.
    Unrolled,
    /// On CPU threads (`mapPar`).
    Parallel,
    /// On a GPU, in the dimension the primitive's nat argument names.
    Gpu(GpuLevel),
}

/// What a GPU map's iterations run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuLevel {
    /// `mapGlobal`: threads across the whole grid.
    Global,
    /// `mapWorkGroup`: blocks.
    Block,
    /// `mapLocal`: the threads of a block.
    Thread,
}

impl GpuLevel {
    /// The map whose iterations run on it (read from [`Prim::iteration`]).
    ///
    /// ```
    /// use elevate_rise::prim::{GpuLevel, Prim};
    /// assert_eq!(GpuLevel::Block.map(), Prim::MapWorkGroup);
    /// ```
    pub fn map(self) -> Prim {
        let runs_here = |p: &&Prim| {
            p.iteration()
                .is_some_and(|it| it.schedule == Schedule::Gpu(self))
        };
        *Prim::ALL
            .iter()
            .find(runs_here)
            .expect("a map for every GPU level")
    }
}

impl Prim {
    /// How it iterates, if it is a loop over the elements of one of its arguments:
    /// which argument, what each iteration makes, how the iterations run. Said here
    /// once: the loop program records its loops by it, the e-graph's cost weighs
    /// them by it, and sketches find a loop's array by it. `iterate` (a function
    /// applied again and again) and `generate` (an array made by a function) are no
    /// loops over an argument's elements.
    ///
    /// ```
    /// use elevate_rise::prim::{Makes, Prim, Schedule};
    /// let it = Prim::ReduceSeqUnroll.iteration().unwrap();
    /// assert_eq!((it.array, it.makes, it.schedule), (2, Makes::Accumulation, Schedule::Unrolled));
    /// assert_eq!(Prim::Iterate.iteration(), None);
    /// ```
    pub fn iteration(self) -> Option<Iteration> {
        use Makes::*;
        use Prim::*;
        use Schedule::*;
        let over = |array, makes, schedule| {
            Some(Iteration {
                array,
                makes,
                schedule,
            })
        };
        match self {
            Map => over(1, Elements, Unlowered),
            MapSeq => over(1, Elements, Sequential),
            MapSeqUnroll => over(1, Elements, Unrolled),
            MapPar => over(1, Elements, Parallel),
            MapGlobal => over(1, Elements, Gpu(GpuLevel::Global)),
            MapWorkGroup => over(1, Elements, Gpu(GpuLevel::Block)),
            MapLocal => over(1, Elements, Gpu(GpuLevel::Thread)),
            Reduce => over(2, Accumulation, Unlowered),
            ReduceSeq => over(2, Accumulation, Sequential),
            ReduceSeqUnroll => over(2, Accumulation, Unrolled),
            ScanSeq => over(2, Prefixes, Sequential),
            Id | Neg | Not | Add | Sub | Mul | Div | Mod | Max | Min | Exp | Sqrt | Abs | Lt
            | Gt | Equal | Select | Cast | Let | ToMem | ToGlobal | ToShared | ToPrivate
            | Generate | Idx | IndexAsNat | NatAsIndex | Take | Drop | Concat | Split | Join
            | Slide | Transpose | PadCst | PadClamp | Zip | Unzip | MakePair | Fst | Snd
            | MapFst | MapSnd | VectorFromScalar | AsVector | AsVectorAligned | AsScalar
            | Iterate => None,
        }
    }
}

impl fmt::Display for Prim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
