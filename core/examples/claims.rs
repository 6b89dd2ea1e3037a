//! What review's claim analysis (core/src/claim.rs) finds in a file of texts, one a line: each
//! text's claims, and how many texts could clash with another at all (a keyed state, or a single
//! generic statement).
//!     cargo run -p memory_fabric_core --example claims -- FILE [--show state|generic|all]
//!     cargo run -p memory_fabric_core --example claims -- --pairs CORPUS.tsv [LABEL]
//! The second form prints, for each labelled pair of a corpus file (core/tests/data/corpus), how
//! the two texts' claims relate.
use memory_fabric_core::claim::{analyze, relate, Kind};

fn pairs(path: &str, label: Option<&str>) {
    let text = std::fs::read_to_string(path).expect("cannot read the file");
    let mut counts: std::collections::BTreeMap<(String, String), usize> = Default::default();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < 5 || label.is_some_and(|l| l != f[0]) {
            continue;
        }
        let (a, b) = (analyze(f[3]), analyze(f[4]));
        let r = format!("{:?}", relate(&a, &b));
        let key = r.split(['(', ' ', '{']).next().unwrap_or("").to_owned();
        *counts.entry((f[0].to_owned(), key)).or_default() += 1;
        if label.is_some() {
            println!("{r} | {} | {} || {} | {}", a.describe(), f[3], b.describe(), f[4]);
        }
    }
    for ((l, k), n) in counts {
        eprintln!("{l}\t{k}\t{n}");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).is_some_and(|a| a == "--pairs") {
        return pairs(args.get(2).expect("a corpus file"), args.get(3).map(String::as_str));
    }
    let path = args.get(1).expect("usage: claims FILE [--show state|generic|all]");
    let show = args.iter().position(|a| a == "--show").and_then(|i| args.get(i + 1)).cloned();
    let text = std::fs::read_to_string(path).expect("cannot read the file");
    let (mut n, mut keyed, mut generic, mut events, mut multi, mut other) = (0, 0, 0, 0, 0, 0);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        n += 1;
        let a = analyze(line);
        let has_state = a.claims.iter().any(|c| c.kind == Kind::State);
        let single_generic = a.single().is_some_and(|c| c.kind == Kind::Generic);
        if has_state {
            keyed += 1;
        } else if single_generic {
            generic += 1;
        } else if a.claims.iter().any(|c| c.kind == Kind::Event) {
            events += 1;
        } else if a.claims.iter().any(|c| c.kind == Kind::Multi) {
            multi += 1;
        } else {
            other += 1;
        }
        let wanted = match show.as_deref() {
            Some("state") => has_state,
            Some("generic") => single_generic,
            Some("all") => true,
            _ => false,
        };
        if wanted {
            println!("{} | {line}", a.describe());
        }
    }
    eprintln!("{n} texts: {keyed} with a keyed state, {generic} a single generic statement, {events} events, {multi} multi-valued, {other} nothing that can clash");
}
