//! Prints how the assertion comparison (core/src/assertion.rs) reads two texts: each side's
//! content words (lemma, negated, quantity) and what `compare` finds. For looking at one pair:
//!   cargo run --release -p memory_fabric_core --example cmp -- "TEXT A" "TEXT B"
use memory_fabric_core::assertion::{compare, parse, Assertion};
fn main() {
    let a: Vec<String> = std::env::args().collect();
    assert!(a.len() == 3, "usage: cmp \"TEXT A\" \"TEXT B\"");
    let (x, y) = (parse(&a[1]), parse(&a[2]));
    let words = |t: &Assertion| -> Vec<_> { t.words.iter().map(|w| (w.lemma.clone(), w.negated, w.quantity.as_ref().map(|q| (q.value.clone(), q.unit.clone())))).collect() };
    println!("A: {:?}", words(&x));
    println!("B: {:?}", words(&y));
    println!("nums {:?} / {:?}", x.numbers, y.numbers);
    println!("{:?}", compare(&x, &y));
}
