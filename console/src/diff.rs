//! The differing words of two texts, for the side-by-side view of a candidate and the memory it
//! duplicates or contradicts: a longest common subsequence over whitespace-separated words.

/// One word of a side, and whether the other side lacks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word<'a> {
    pub text: &'a str,
    pub changed: bool,
}

/// Texts longer than this many words are compared as wholes (the table is words² cells).
const MAX_WORDS: usize = 1000;

/// Both sides, word by word, each word marked when it is not in the common subsequence.
pub fn words<'a>(left: &'a str, right: &'a str) -> (Vec<Word<'a>>, Vec<Word<'a>>) {
    let a: Vec<&str> = left.split_whitespace().collect();
    let b: Vec<&str> = right.split_whitespace().collect();
    if a.len() > MAX_WORDS || b.len() > MAX_WORDS {
        let same = a == b;
        let mark = |v: &[&'a str]| v.iter().map(|w| Word { text: w, changed: !same }).collect();
        return (mark(&a), mark(&b));
    }
    // lcs[i][j]: the common subsequence's length of a[i..] and b[j..]
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u16; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if same_word(a[i], b[j]) { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut left_out, mut right_out) = (Vec::with_capacity(n), Vec::with_capacity(m));
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if same_word(a[i], b[j]) {
            left_out.push(Word { text: a[i], changed: false });
            right_out.push(Word { text: b[j], changed: false });
            i += 1;
            j += 1;
        } else if lcs[i + 1][j] >= lcs[i][j + 1] {
            left_out.push(Word { text: a[i], changed: true });
            i += 1;
        } else {
            right_out.push(Word { text: b[j], changed: true });
            j += 1;
        }
    }
    left_out.extend(a[i..].iter().map(|w| Word { text: w, changed: true }));
    right_out.extend(b[j..].iter().map(|w| Word { text: w, changed: true }));
    (left_out, right_out)
}

/// Words compare without case and without trailing punctuation ("post." is "Post").
fn same_word(x: &str, y: &str) -> bool {
    let trim = |w: &str| w.trim_end_matches(['.', ',', ';', ':', '!', '?']).to_lowercase();
    trim(x) == trim(y)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changed<'a>(v: &[Word<'a>]) -> Vec<&'a str> {
        v.iter().filter(|w| w.changed).map(|w| w.text).collect()
    }

    #[test]
    fn marks_only_the_differing_words() {
        let (l, r) = words("Customer cus_42 wants invoices by email.", "Customer cus_42 now wants invoices by post.");
        assert_eq!(changed(&l), vec!["email."]);
        assert_eq!(changed(&r), vec!["now", "post."]);
        assert_eq!(l.len(), 6);
        assert_eq!(r.len(), 7);
    }

    #[test]
    fn equal_and_empty_texts() {
        let (l, r) = words("Same words here.", "same  words HERE");
        assert!(changed(&l).is_empty() && changed(&r).is_empty());
        let (l, r) = words("", "new text");
        assert!(l.is_empty());
        assert_eq!(changed(&r), vec!["new", "text"]);
    }

    #[test]
    fn long_texts_are_compared_whole() {
        let long = "w ".repeat(MAX_WORDS + 1);
        let (l, r) = words(&long, "w");
        assert!(l.iter().all(|w| w.changed) && r.iter().all(|w| w.changed));
        let (l, _) = words(&long, &long);
        assert!(l.iter().all(|w| !w.changed));
    }
}
