//! BERT WordPiece tokenisation (uncased), exactly as the reference pipeline does it.
//!
//! The reference is the Hugging Face `tokenizers` library behind `BertTokenizer` (what
//! sentence-transformers calls), configured by the model's tokenizer.json:
//!
//! 1. Special tokens (`[PAD] [UNK] [CLS] [SEP] [MASK]`, "normalized": false) are matched
//!    literally in the raw text first; the text between them is tokenised on its own.
//! 2. BertNormalizer: drop U+0000, U+FFFD and "control" characters (Unicode Cc, Cf, Co, but
//!    not `\t \n \r`); map whitespace to a space; put spaces around CJK ideographs; NFD and
//!    drop non-spacing marks (Mn), since accents are stripped when lowercasing; lowercase
//!    (`char::to_lowercase`, so no final-sigma rule).
//! 3. BertPreTokenizer: split on whitespace (dropped) and on punctuation (each mark its own
//!    word): ASCII punctuation plus Unicode P*.
//! 4. WordPiece: greedy longest match, continuation pieces prefixed with `##`; a word of more
//!    than 100 characters, or one that cannot be covered, becomes a single `[UNK]`.
//! 5. `[CLS]` + ids + `[SEP]`, the ids truncated so that the whole is at most 256 long.
//!
//! The Unicode categories come from the `unicode_categories` crate, the very tables the
//! reference library uses (an older Unicode version than std's: a character assigned since
//! then is treated the same way as there).
//!
//! Work is bounded by the truncation: tokenisation stops as soon as 254 word pieces are
//! known, so a huge text costs no more than its first few thousand characters.

use crate::interrupt::Every;
use std::cmp::Ordering;
use unicode_categories::UnicodeCategories;
use unicode_normalization::UnicodeNormalization;

/// Longest word WordPiece splits; longer words become `[UNK]`.
const MAX_WORD_CHARS: usize = 100;
/// The tokenizer's loop checks for interrupts once per this many input characters.
const CHECK_EVERY_CHARS: usize = 4096;

/// The vocabulary: the file's text and an index of its lines sorted by their bytes, so that a
/// lookup is a binary search and the vocabulary costs ~0.6 MB instead of a hash map's ~2 MB.
pub(crate) struct Vocab {
    text: String,
    /// (start, end, id) of each token in `text`, sorted by the token's bytes.
    sorted: Vec<(u32, u32, u32)>,
}

impl Vocab {
    /// Parses vocab.txt: one token per line, id = line number. `expect` is the number of
    /// tokens the model's embedding matrix has.
    pub(crate) fn parse(path: &std::path::Path, expect: usize) -> Result<Vocab, String> {
        let what = path.display();
        let bytes = std::fs::read(path).map_err(|e| format!("cannot read {what}: {e}"))?;
        let text = String::from_utf8(bytes).map_err(|e| format!("{what} is not UTF-8: {e}"))?;
        let mut sorted = Vec::with_capacity(expect);
        let mut pos = 0usize;
        for line in text.split_inclusive('\n') {
            let token = line.strip_suffix('\n').unwrap_or(line);
            let token = token.strip_suffix('\r').unwrap_or(token);
            let id = sorted.len() as u32;
            sorted.push((pos as u32, (pos + token.len()) as u32, id));
            pos += line.len();
        }
        if sorted.len() != expect {
            return Err(format!(
                "{what} has {} tokens, the model has {expect} (truncated or a different vocabulary?)",
                sorted.len()
            ));
        }
        let key = |&(s, e, _): &(u32, u32, u32)| &text.as_bytes()[s as usize..e as usize];
        sorted.sort_unstable_by(|a, b| key(a).cmp(key(b)));
        if let Some(w) = sorted.windows(2).find(|w| key(&w[0]) == key(&w[1])) {
            return Err(format!(
                "{what}: token {:?} appears twice (lines {} and {})",
                String::from_utf8_lossy(key(&w[0])),
                w[0].2.min(w[1].2) + 1,
                w[0].2.max(w[1].2) + 1
            ));
        }
        Ok(Vocab { text, sorted })
    }

    fn find(&self, cmp: impl Fn(&[u8]) -> Ordering) -> Option<u32> {
        let bytes = self.text.as_bytes();
        self.sorted
            .binary_search_by(|&(s, e, _)| cmp(&bytes[s as usize..e as usize]))
            .ok()
            .map(|i| self.sorted[i].2)
    }

    /// The id of `token`.
    pub(crate) fn get(&self, token: &str) -> Option<u32> {
        self.find(|t| t.cmp(token.as_bytes()))
    }

    /// The id of `"##" + piece`, without building that string.
    fn get_continuation(&self, piece: &str) -> Option<u32> {
        self.find(|t| {
            let n = t.len().min(2);
            match t[..n].cmp(&b"##"[..n]) {
                Ordering::Equal if t.len() < 2 => Ordering::Less,
                Ordering::Equal => t[2..].cmp(piece.as_bytes()),
                o => o,
            }
        })
    }
}

/// The special tokens that tokenizer.json matches literally in the raw text.
const SPECIALS: [&str; 5] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];

pub(crate) struct Tokenizer {
    vocab: Vocab,
    special_ids: [u32; 5],
    unk: u32,
    cls: u32,
    sep: u32,
}

/// Control characters that BertNormalizer drops: Cc, Cf, Co except tab, newline, return.
fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && c.is_other()
}

/// BertNormalizer's whitespace: tab, newline, return and everything std calls whitespace.
fn is_whitespace(c: char) -> bool {
    c.is_whitespace()
}

/// The "Chinese character" ranges of BertNormalizer (CJK Unified Ideographs blocks).
fn is_chinese_char(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B920..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

/// BertPreTokenizer's punctuation: ASCII punctuation or Unicode P*.
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || c.is_punctuation()
}

/// One input character after cleaning: nothing, itself, or itself between two spaces.
struct Cleaned {
    chars: [char; 3],
    next: u8,
    end: u8,
}

impl Cleaned {
    fn of(c: char) -> Cleaned {
        let (chars, end) = if c == '\0' || c == '\u{FFFD}' || is_control(c) {
            ([' '; 3], 0)
        } else if is_whitespace(c) {
            ([' '; 3], 1)
        } else if is_chinese_char(c) {
            ([' ', c, ' '], 3)
        } else {
            ([c, ' ', ' '], 1)
        };
        Cleaned {
            chars,
            next: 0,
            end,
        }
    }
}

impl Iterator for Cleaned {
    type Item = char;
    #[inline]
    fn next(&mut self) -> Option<char> {
        (self.next < self.end).then(|| {
            self.next += 1;
            self.chars[self.next as usize - 1]
        })
    }
}

/// Collects the characters of one word (bounded: only whether it is too long matters beyond
/// `MAX_WORD_CHARS`).
struct Word {
    text: String,
    chars: usize,
}

impl Tokenizer {
    pub(crate) fn new(vocab: Vocab, path: &std::path::Path) -> Result<Tokenizer, String> {
        let mut special_ids = [0u32; 5];
        for (slot, token) in special_ids.iter_mut().zip(SPECIALS) {
            *slot = vocab.get(token).ok_or_else(|| {
                format!("{}: the special token {token} is missing", path.display())
            })?;
        }
        Ok(Tokenizer {
            unk: special_ids[1],
            cls: special_ids[2],
            sep: special_ids[3],
            vocab,
            special_ids,
        })
    }

    pub(crate) fn cls(&self) -> u32 {
        self.cls
    }

    pub(crate) fn sep(&self) -> u32 {
        self.sep
    }

    /// `[CLS]` + the word-piece ids of `text` + `[SEP]`, at most `max_len` (>= 2) ids.
    pub(crate) fn encode(&self, text: &str, max_len: usize) -> Vec<u32> {
        let limit = max_len.max(2) - 1; // ids before [SEP], [CLS] included
        let mut ids = Vec::with_capacity(limit.min(text.len() + 1) + 1);
        ids.push(self.cls);
        let mut every = Every::new(CHECK_EVERY_CHARS);
        let mut word = Word {
            text: String::new(),
            chars: 0,
        };
        let mut rest = text;
        while ids.len() < limit {
            let (segment, special, after) = self.next_special(rest);
            self.segment(segment, &mut ids, limit, &mut word, &mut every);
            match special {
                Some(id) if ids.len() < limit => ids.push(id),
                _ => break,
            }
            rest = after;
        }
        ids.truncate(limit);
        ids.push(self.sep);
        ids
    }

    /// Splits `text` at its first special token: (text before, the token's id, text after).
    fn next_special<'t>(&self, text: &'t str) -> (&'t str, Option<u32>, &'t str) {
        let bytes = text.as_bytes();
        let mut from = 0;
        while let Some(i) = bytes[from..].iter().position(|&b| b == b'[') {
            let at = from + i;
            for (token, &id) in SPECIALS.iter().zip(&self.special_ids) {
                if bytes[at..].starts_with(token.as_bytes()) {
                    return (&text[..at], Some(id), &text[at + token.len()..]);
                }
            }
            from = at + 1;
        }
        (text, None, "")
    }

    /// Normalises, splits and word-pieces one stretch of text without special tokens,
    /// appending ids until there are `limit`.
    fn segment(
        &self,
        text: &str,
        ids: &mut Vec<u32>,
        limit: usize,
        word: &mut Word,
        every: &mut Every,
    ) {
        let chars = text
            .chars()
            .inspect(|_| every.tick(1))
            .flat_map(Cleaned::of)
            .nfd()
            .filter(|c| !c.is_mark_nonspacing())
            .flat_map(char::to_lowercase);
        word.text.clear();
        word.chars = 0;
        for c in chars {
            if c.is_whitespace() {
                self.flush(word, ids);
            } else if is_punctuation(c) {
                self.flush(word, ids);
                if ids.len() < limit {
                    word.text.push(c);
                    word.chars = 1;
                    self.flush(word, ids);
                }
            } else {
                if word.chars < MAX_WORD_CHARS + 1 {
                    word.text.push(c);
                }
                word.chars += 1;
            }
            if ids.len() >= limit {
                word.text.clear();
                word.chars = 0;
                return;
            }
        }
        self.flush(word, ids);
    }

    /// Appends the word pieces of the collected word, if any, and empties it.
    fn flush(&self, word: &mut Word, ids: &mut Vec<u32>) {
        if word.chars > 0 {
            self.wordpiece(&word.text, word.chars, ids);
        }
        word.text.clear();
        word.chars = 0;
    }

    /// Greedy longest-match-first WordPiece of one word.
    fn wordpiece(&self, word: &str, chars: usize, ids: &mut Vec<u32>) {
        if chars > MAX_WORD_CHARS {
            ids.push(self.unk);
            return;
        }
        let first = ids.len();
        let mut start = 0;
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while start < end {
                let piece = &word[start..end];
                let id = if start == 0 {
                    self.vocab.get(piece)
                } else {
                    self.vocab.get_continuation(piece)
                };
                if id.is_some() {
                    found = id;
                    break;
                }
                end -= piece.chars().next_back().map_or(1, char::len_utf8);
            }
            match found {
                Some(id) => {
                    ids.push(id);
                    start = end;
                }
                None => {
                    ids.truncate(first);
                    ids.push(self.unk);
                    return;
                }
            }
        }
    }
}
