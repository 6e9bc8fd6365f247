//! Arithmetic operators (`+ - * / %`, unary `-`) and conversions.

use std::ops;

use super::repr::{Nat, NatVar};

macro_rules! impl_binary_op {
    ($trait:ident, $method:ident) => {
        impl ops::$trait<&Nat> for &Nat {
            type Output = Nat;
            fn $method(self, rhs: &Nat) -> Nat {
                Nat::$method(self, rhs)
            }
        }
        impl ops::$trait<Nat> for Nat {
            type Output = Nat;
            fn $method(self, rhs: Nat) -> Nat {
                Nat::$method(&self, &rhs)
            }
        }
        impl ops::$trait<&Nat> for Nat {
            type Output = Nat;
            fn $method(self, rhs: &Nat) -> Nat {
                Nat::$method(&self, rhs)
            }
        }
        impl ops::$trait<Nat> for &Nat {
            type Output = Nat;
            fn $method(self, rhs: Nat) -> Nat {
                Nat::$method(self, &rhs)
            }
        }
    };
}

impl_binary_op!(Add, add);
impl_binary_op!(Sub, sub);
impl_binary_op!(Mul, mul);
impl_binary_op!(Div, div);
impl_binary_op!(Rem, rem);

impl ops::Neg for Nat {
    type Output = Nat;
    fn neg(self) -> Nat {
        Nat::neg(&self)
    }
}

impl ops::Neg for &Nat {
    type Output = Nat;
    fn neg(self) -> Nat {
        Nat::neg(self)
    }
}

impl From<i64> for Nat {
    fn from(value: i64) -> Nat {
        Nat::cst(value)
    }
}

impl From<NatVar> for Nat {
    fn from(v: NatVar) -> Nat {
        Nat::var(v)
    }
}
