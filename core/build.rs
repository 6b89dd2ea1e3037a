//! Compiles the WordNet extract in `data/wordnet/` (see its README.md) into compact
//! static tables for `src/lexicon.rs`.
//!
//! The tables are written as little-endian binary blobs into `OUT_DIR` and a small
//! generated `lexicon_tables.rs` that `include_bytes!`s them and holds the counts, so
//! rustc never sees hundreds of thousands of literal tokens and the build stays fast.

use std::collections::HashMap;
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

const FILES: [&str; 4] = ["lemmas.txt", "synsets.txt", "antonyms.txt", "exceptions.txt"];
const POS: [char; 4] = ['n', 'v', 'a', 'r'];

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let data = manifest.join("data").join("wordnet");
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    println!("cargo:rerun-if-changed=build.rs");
    for f in FILES {
        println!("cargo:rerun-if-changed={}", data.join(f).display());
    }
    let read = |name: &str| -> String {
        fs::read_to_string(data.join(name)).unwrap_or_else(|e| panic!("reading data/wordnet/{name}: {e}"))
    };
    let records = |text: &'static str| text.lines().filter(|l| !l.is_empty() && !l.starts_with('#'));
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };

    // ---- synsets: POS (ids are grouped n, v, a, r) and hypernyms ----
    let synsets_txt = leak(read("synsets.txt"));
    let mut syn_pos: Vec<u8> = Vec::new();
    let mut hyper_idx: Vec<u32> = vec![0];
    let mut hyper: Vec<u32> = Vec::new();
    for line in records(synsets_txt) {
        let mut it = line.split(' ');
        let p = it.next().unwrap();
        // 's' (adjective satellite; its "hypernym" is its head adjective) counts as 'a'.
        let p = if p == "s" { 2 } else { POS.iter().position(|c| p.starts_with(*c)).unwrap_or_else(|| panic!("bad synset line {line:?}")) };
        assert!(syn_pos.last().is_none_or(|&q| q as usize <= p), "synsets must be grouped by POS");
        syn_pos.push(p as u8);
        for h in it {
            hyper.push(h.parse().unwrap_or_else(|_| panic!("bad synset line {line:?}")));
        }
        hyper_idx.push(hyper.len() as u32);
    }
    let n_syn = syn_pos.len();
    assert!(hyper.iter().all(|&h| (h as usize) < n_syn), "hypernym id out of range");
    let pos_end: Vec<usize> = (0..4).map(|p| syn_pos.iter().filter(|&&q| q as usize <= p).count()).collect();

    // Size of each synset's subtree: how many synsets have it as a (transitive) hypernym.
    // Walks every synset's ancestor closure once, de-duplicated with a stamp per synset.
    let mut desc = vec![0u32; n_syn];
    let mut stamp = vec![u32::MAX; n_syn];
    let mut stack: Vec<u32> = Vec::new();
    for s in 0..n_syn {
        stack.clear();
        stack.extend_from_slice(&hyper[hyper_idx[s] as usize..hyper_idx[s + 1] as usize]);
        while let Some(a) = stack.pop() {
            let a = a as usize;
            if stamp[a] == s as u32 {
                continue;
            }
            stamp[a] = s as u32;
            desc[a] += 1;
            stack.extend_from_slice(&hyper[hyper_idx[a] as usize..hyper_idx[a + 1] as usize]);
        }
    }

    // ---- lemmas: sorted strings, per (lemma, POS) sense lists and SemCor counts ----
    let lemmas_txt = leak(read("lemmas.txt"));
    let mut lemma_text: Vec<u8> = Vec::new();
    let mut lemma_off: Vec<u32> = vec![0];
    let mut sense_start: Vec<u32> = vec![0];
    let mut pos_lens: Vec<u16> = Vec::new();
    let mut senses: Vec<u32> = Vec::new();
    let mut counts: Vec<u16> = Vec::new();
    let mut ids: HashMap<&str, u32> = HashMap::new();
    let mut prev: &str = "";
    for line in records(lemmas_txt) {
        let mut it = line.split(' ');
        let lemma = it.next().unwrap();
        assert!(prev.as_bytes() < lemma.as_bytes(), "lemmas.txt must be sorted and unique: {lemma}");
        prev = lemma;
        ids.insert(lemma, ids.len() as u32);
        lemma_text.extend_from_slice(lemma.as_bytes());
        lemma_off.push(lemma_text.len() as u32);
        let mut groups: [(u16, Vec<u32>); 4] = Default::default();
        let mut cur: Option<usize> = None;
        for tok in it {
            let first = tok.as_bytes()[0];
            if first.is_ascii_digit() {
                let id: u32 = tok.parse().unwrap();
                let p = cur.unwrap_or_else(|| panic!("synset id before POS in {line:?}"));
                assert!((id as usize) < n_syn && syn_pos[id as usize] as usize == p, "bad sense {id} in {line:?}");
                groups[p].1.push(id);
            } else {
                let p = POS.iter().position(|&c| c as u8 == first).unwrap_or_else(|| panic!("bad POS in {line:?}"));
                let n: u64 = if tok.len() > 1 { tok[1..].parse().unwrap() } else { 0 };
                groups[p].0 = n.min(u16::MAX as u64) as u16;
                cur = Some(p);
            }
        }
        let mut lens = 0u16;
        for (p, (count, list)) in groups.into_iter().enumerate() {
            assert!(list.len() < 16, "more than 15 senses for {lemma}: raise the nibble width");
            lens |= (list.len() as u16) << (4 * p);
            counts.push(count);
            senses.extend(list);
        }
        pos_lens.push(lens);
        sense_start.push(senses.len() as u32);
    }
    let n_lemma = lemma_off.len() - 1;
    let id_of = |w: &str, what: &str| -> u32 {
        *ids.get(w).unwrap_or_else(|| panic!("{what}: {w:?} is not in lemmas.txt"))
    };

    // ---- antonyms: both directions, sorted (a, b) lemma id pairs; flag 1 = indirect ----
    let antonyms_txt = leak(read("antonyms.txt"));
    let mut ants: Vec<(u32, u32, u8)> = Vec::new();
    for line in records(antonyms_txt) {
        let f: Vec<&str> = line.split(' ').collect();
        assert!(f.len() == 4, "bad antonym line {line:?}");
        let (a, b) = (id_of(f[0], "antonyms.txt"), id_of(f[1], "antonyms.txt"));
        let k = u8::from(f[3] == "i");
        ants.push((a, b, k));
        ants.push((b, a, k));
    }
    ants.sort();
    ants.dedup_by(|x, y| x.0 == y.0 && x.1 == y.1); // keeps the first: direct (0) before indirect (1)

    // ---- exceptions: inflected form -> (POS, base lemma id), sorted by form ----
    let exc_txt = leak(read("exceptions.txt"));
    let mut excs: Vec<(&str, u8, u32)> = Vec::new();
    for line in records(exc_txt) {
        let f: Vec<&str> = line.split(' ').collect();
        assert!(f.len() == 3, "bad exception line {line:?}");
        let p = POS.iter().position(|&c| f[1].starts_with(c)).expect("exception POS") as u8;
        excs.push((f[0], p, id_of(f[2], "exceptions.txt")));
    }
    excs.sort_by(|x, y| x.0.as_bytes().cmp(y.0.as_bytes()).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
    excs.dedup();
    let mut exc_text: Vec<u8> = Vec::new();
    let mut exc_off: Vec<u32> = vec![0];
    let mut exc_base: Vec<u32> = Vec::new();
    let mut exc_pos: Vec<u8> = Vec::new();
    for (form, p, base) in &excs {
        exc_text.extend_from_slice(form.as_bytes());
        exc_off.push(exc_text.len() as u32);
        exc_base.push(*base);
        exc_pos.push(*p);
    }

    // ---- write the blobs and the Rust glue ----
    let u32s = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let u16s = |v: &[u16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let ant_pairs: Vec<u32> = ants.iter().flat_map(|&(a, b, _)| [a, b]).collect();
    let ant_kind: Vec<u8> = ants.iter().map(|&(_, _, k)| k).collect();
    let blobs: Vec<(&str, Vec<u8>)> = vec![
        ("LEMMA_TEXT", lemma_text),
        ("LEMMA_OFF", u32s(&lemma_off)),
        ("SENSE_START", u32s(&sense_start)),
        ("POS_LENS", u16s(&pos_lens)),
        ("SENSES", u32s(&senses)),
        ("COUNTS", u16s(&counts)),
        ("SYN_DESC", u32s(&desc)),
        ("HYPER_IDX", u32s(&hyper_idx)),
        ("HYPER", u32s(&hyper)),
        ("ANT_PAIRS", u32s(&ant_pairs)),
        ("ANT_KIND", ant_kind),
        ("EXC_TEXT", exc_text),
        ("EXC_OFF", u32s(&exc_off)),
        ("EXC_BASE", u32s(&exc_base)),
        ("EXC_POS", exc_pos),
    ];
    let mut rs = String::from("// Generated by core/build.rs from core/data/wordnet; do not edit.\n");
    for (name, bytes) in &blobs {
        let file = format!("lexicon_{}.bin", name.to_ascii_lowercase());
        write_if_changed(&out.join(&file), bytes);
        writeln!(rs, "static {name}: &[u8] = include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{file}\"));").unwrap();
    }
    writeln!(rs, "#[allow(dead_code)]\nconst N_LEMMAS: usize = {n_lemma};").unwrap();
    writeln!(rs, "#[allow(dead_code)]\nconst N_SYNSETS: usize = {n_syn};").unwrap();
    writeln!(rs, "#[allow(dead_code)]\nconst N_ANTONYM_PAIRS: usize = {};", ants.len()).unwrap();
    writeln!(rs, "#[allow(dead_code)]\nconst N_EXCEPTIONS: usize = {};", excs.len()).unwrap();
    writeln!(rs, "/// First synset id after the nouns, verbs, adjectives, adverbs.").unwrap();
    writeln!(rs, "#[allow(dead_code)]\nconst POS_END: [u32; 4] = {:?};", pos_end).unwrap();
    write_if_changed(&out.join("lexicon_tables.rs"), rs.as_bytes());
}

fn write_if_changed(path: &Path, bytes: &[u8]) {
    if fs::read(path).ok().as_deref() != Some(bytes) {
        fs::write(path, bytes).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }
}
