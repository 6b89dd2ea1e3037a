//! Prints how review's sentence comparison reads each pair of a corpus file, for looking at its
//! mistakes: cargo run -p memory_fabric_core --example compare -- <file.tsv> [label]
use memory_fabric_core::assertion::{compare, parse};

fn main() {
    let path = std::env::args().nth(1).expect("a .tsv file");
    let only = std::env::args().nth(2);
    let text = std::fs::read_to_string(path).expect("read");
    for l in text.lines().skip(1) {
        let f: Vec<&str> = l.split('\t').collect();
        if only.as_deref().is_some_and(|o| o != f[0]) {
            continue;
        }
        let (a, b) = (parse(f[3]), parse(f[4]));
        let c = compare(&a, &b);
        let got = if c.equivalent { "EQUIV".to_owned() } else { c.difference.map_or("-".to_owned(), |d| d.as_str().to_uppercase()) };
        println!("{}\t{}\t{}\t{}\t{}", f[0], got, f[2], f[3], f[4]);
        let show = |x: &memory_fabric_core::assertion::Assertion| {
            x.words.iter().map(|w| if w.negated { format!("!{}", w.lemma) } else { w.lemma.clone() }).collect::<Vec<_>>().join(" ")
                + &format!(" {:?} {:?}", x.numbers.iter().map(|q| format!("{}{}", q.value, q.unit.clone().unwrap_or_default())).collect::<Vec<_>>(), x.ids)
        };
        println!("\t\t\ta: {}\n\t\t\tb: {}", show(&a), show(&b));
    }
}
