//! A statement with its amounts, percentages, dates and clock times in one spelling ("USD
//! 1,250.00" and "$1,250", "fifteen percent" and "15%", "Feb. 14, 2026" and "2026-02-14",
//! "midnight" and "00:00"), without a label in front ("FYI, …"): what the learned judge reads for
//! a merge (review::Spelling), and what claim.rs compares names and added words in. The judge
//! reads a number spelled two ways as two numbers (it scored "gets a 15% discount" / "receives a
//! fifteen percent discount" a contradiction at 0.98); the rules compare numbers by value
//! (assertion.rs), so the judge is left the words around them.

use crate::assertion::{fmt_value, month, parse_number, spelled_number, unit_of, without_label};
use std::borrow::Cow;

/// Texts longer than this are passed through as they are (the judge truncates them anyway).
const MAX_CHARS: usize = 4096;

/// Words spelled two ways, and the one spelling the judge reads (British and American, with a
/// hyphen or without, in one word or two).
const VARIANTS: &[(&str, &str)] = &[
    ("nobody", "no one"), ("no-one", "no one"), ("e-mail", "email"), ("e-mails", "emails"), ("e-mailed", "emailed"),
    ("neighbour", "neighbor"), ("neighbours", "neighbors"), ("colour", "color"), ("colours", "colors"), ("favourite", "favorite"),
    ("favourites", "favorites"), ("organisation", "organization"), ("organisations", "organizations"), ("centre", "center"),
    ("catalogue", "catalog"), ("canceled", "cancelled"), ("canceling", "cancelling"), ("behaviour", "behavior"),
    ("licence", "license"), ("travelled", "traveled"), ("travelling", "traveling"), ("programme", "program"),
];

/// One whitespace-separated piece: opening punctuation, the word, closing punctuation.
#[derive(Debug, Clone)]
struct Piece {
    lead: String,
    core: String,
    trail: String,
}

fn split(w: &str) -> Piece {
    let lead_end = w.find(|c: char| !matches!(c, '(' | '"' | '\'' | '“' | '‘' | '[')).unwrap_or(w.len());
    let rest = &w[lead_end..];
    let core_end = rest.trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '"', '\'', '”', '’', ']']).len();
    Piece { lead: w[..lead_end].to_owned(), core: rest[..core_end].to_owned(), trail: rest[core_end..].to_owned() }
}

/// An amount in digits ("1,250.00", "40", "0.5"): its value as the rules read it
/// (`assertion::parse_number`), where it has the shape of one: no stop at either end, commas
/// only as thousands separators ("1,250", not "1,2").
fn amount(s: &str) -> Option<f64> {
    let digits = s.replace(',', "");
    let commas_ok = !s.contains(',') || s.split('.').next().unwrap_or("").split(',').skip(1).all(|g| g.len() == 3);
    parse_number(s).filter(|_| !digits.starts_with('.') && !digits.ends_with('.') && commas_ok)
}

/// An amount as money is written: thousands separated, cents only when there are any.
fn money(x: f64) -> String {
    let cents = (x * 100.0).round() as i64;
    let (whole, frac) = (cents / 100, cents % 100);
    let digits = whole.to_string();
    let mut grouped = String::new();
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    if frac == 0 {
        grouped
    } else {
        format!("{grouped}.{frac:02}")
    }
}

/// The currency sign a code, a name or a sign stands for.
fn currency(w: &str) -> Option<&'static str> {
    match unit_of(&w.to_lowercase()) {
        Some(("usd", f)) if f == 1.0 => Some("$"),
        Some(("eur", _)) => Some("€"),
        Some(("gbp", _)) => Some("£"),
        Some(("jpy", _)) => Some("¥"),
        _ => None,
    }
}

/// A day of the month written as a number, "14" or "14th".
fn day(w: &str) -> Option<u32> {
    let d = w.strip_suffix("st").or_else(|| w.strip_suffix("nd")).or_else(|| w.strip_suffix("rd")).or_else(|| w.strip_suffix("th")).unwrap_or(w);
    if d.is_empty() || d.len() > 2 || !d.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    d.parse().ok().filter(|x| (1..=31).contains(x))
}

fn year(w: &str) -> Option<u32> {
    (w.len() == 4 && w.chars().all(|c| c.is_ascii_digit())).then(|| w.parse().ok()).flatten().filter(|y| (1000..=2999).contains(y))
}

/// The month a word names ("Feb", "February"), not the verb "may" or "march" on its own: the
/// caller asks only beside a day and a year.
fn month_of(w: &str) -> Option<u32> {
    month(&w.to_lowercase()).map(|m| m as u32 + 1)
}

/// A clock time in a 12-hour spelling: "9am", "9:30pm", or "9" / "9:30" before "am", "a.m.".
fn clock(number: &str, meridiem: &str) -> Option<String> {
    let pm = match meridiem.to_lowercase().as_str() {
        "am" | "a.m" | "a.m." => false,
        "pm" | "p.m" | "p.m." => true,
        _ => return None,
    };
    let (h, m) = match number.split_once(':') {
        Some((h, m)) if m.len() == 2 => (h.parse::<u32>().ok()?, m.parse::<u32>().ok()?),
        None => (number.parse::<u32>().ok()?, 0),
        _ => return None,
    };
    if !(1..=12).contains(&h) || m > 59 || number.len() > 5 {
        return None;
    }
    let h = match (h, pm) {
        (12, false) => 0,
        (12, true) => 12,
        (h, true) => h + 12,
        (h, false) => h,
    };
    Some(format!("{h:02}:{m:02}"))
}

/// The text as the learned judge reads it (see the module's comment); borrowed when nothing
/// is spelled another way.
pub fn canonical(text: &str) -> Cow<'_, str> {
    let text = without_label(text);
    if text.chars().count() > MAX_CHARS || !text.chars().any(|c| c.is_ascii_digit() || c.is_alphabetic()) {
        return Cow::Borrowed(text);
    }
    let pieces: Vec<Piece> = text.split_whitespace().map(split).collect();
    let mut out: Vec<Piece> = Vec::with_capacity(pieces.len());
    let mut changed = false;
    let mut i = 0;
    let core = |k: usize| pieces.get(k).map(|p| p.core.as_str()).unwrap_or("");
    let trail = |k: usize| pieces.get(k).map(|p| p.trail.as_str()).unwrap_or("");
    let lead = |k: usize| pieces.get(k).map(|p| p.lead.as_str()).unwrap_or("");
    while i < pieces.len() {
        let p = &pieces[i];
        let here = p.core.as_str();
        let lower = here.to_lowercase();
        let emit = |core: String, first: usize, last: usize, out: &mut Vec<Piece>| {
            out.push(Piece { lead: pieces[first].lead.clone(), core, trail: pieces[last].trail.clone() });
        };
        // words with two spellings: "nobody" / "no one", "e-mail" / "email", "neighbour" / "neighbor"
        if let Some((_, to)) = VARIANTS.iter().find(|(from, _)| *from == lower) {
            let to = if here.starts_with(char::is_uppercase) { format!("{}{}", to[..1].to_uppercase(), &to[1..]) } else { (*to).to_owned() };
            emit(to, i, i, &mut out);
            i += 1;
            changed = true;
            continue;
        }
        // dates: "February 14, 2026", "Feb. 14th 2026", "14 February 2026" -> 2026-02-14
        let month_first = month_of(here.trim_end_matches('.'))
            .filter(|_| here.chars().next().is_some_and(char::is_uppercase) && matches!(p.trail.as_str(), "" | "."))
            .and_then(|m| Some((m, day(core(i + 1))?, year(core(i + 2))?)))
            .filter(|_| matches!(trail(i + 1), "" | ",") && lead(i + 1).is_empty() && lead(i + 2).is_empty());
        let day_first = day(here)
            .filter(|_| p.trail.is_empty())
            .and_then(|d| Some((month_of(core(i + 1).trim_end_matches('.'))?, d, year(core(i + 2))?)))
            .filter(|_| core(i + 1).chars().next().is_some_and(char::is_uppercase) && matches!(trail(i + 1), "" | "." | ",") && lead(i + 1).is_empty() && lead(i + 2).is_empty());
        if let Some((m, d, y)) = month_first.or(day_first) {
            emit(format!("{y:04}-{m:02}-{d:02}"), i, i + 2, &mut out);
            i += 3;
            changed = true;
            continue;
        }
        // clock times: "midnight", "noon", "9am", "9:30 p.m.", "9:00" -> 00:00, 12:00, 09:00, 21:30, 09:00
        let named = match lower.as_str() {
            "midnight" => Some("00:00".to_owned()),
            "noon" | "midday" => Some("12:00".to_owned()),
            _ => None,
        };
        if let Some(t) = named {
            emit(t, i, i, &mut out);
            i += 1;
            changed = true;
            continue;
        }
        let glued = ["am", "pm", "a.m", "p.m"].iter().find_map(|m| lower.strip_suffix(m).and_then(|n| clock(n, m)));
        if let Some(t) = glued {
            // "9a.m." keeps its closing stop as the sentence's
            emit(t, i, i, &mut out);
            i += 1;
            changed = true;
            continue;
        }
        if p.trail.is_empty() && here.chars().next().is_some_and(|c| c.is_ascii_digit()) {
            let next = format!("{}{}", core(i + 1), if trail(i + 1).starts_with('.') { "." } else { "" });
            if let Some(t) = clock(here, &next).or_else(|| clock(here, core(i + 1))) {
                // the stop of "a.m." is no sentence's end unless more follows it
                let mut piece = Piece { lead: p.lead.clone(), core: t, trail: pieces[i + 1].trail.clone() };
                if core(i + 1).contains('.') && piece.trail.starts_with('.') && i + 2 < pieces.len() {
                    piece.trail.remove(0);
                }
                out.push(piece);
                i += 2;
                changed = true;
                continue;
            }
        }
        if let Some((h, m)) = here.split_once(':') {
            if h.len() == 1 && h.chars().all(|c| c.is_ascii_digit()) && m.len() == 2 && m.chars().all(|c| c.is_ascii_digit()) {
                emit(format!("0{h}:{m}"), i, i, &mut out);
                i += 1;
                changed = true;
                continue;
            }
        }
        // money: "USD 1,250.00", "1,250 USD", "40 euros", "$1,250.00", "99 cents",
        // "seventy-five-dollar" -> $1,250, €40, $0.99, $75
        let sign_glued = here.chars().next().and_then(|c| currency(&c.to_string()).map(|s| (s, &here[c.len_utf8()..])));
        if let Some((sign, x)) = sign_glued.and_then(|(s, rest)| Some((s, amount(rest)?))) {
            let whole = format!("{sign}{}", money(x));
            if whole != here {
                changed = true;
            }
            emit(whole, i, i, &mut out);
            i += 1;
            continue;
        }
        let code_first = currency(here).filter(|_| here.len() > 1 && p.trail.is_empty() && here.chars().all(|c| c.is_ascii_uppercase() || c == '$'));
        if let Some((sign, x)) = code_first.and_then(|s| Some((s, amount(core(i + 1))?))).filter(|_| lead(i + 1).is_empty()) {
            emit(format!("{sign}{}", money(x)), i, i + 1, &mut out);
            i += 2;
            changed = true;
            continue;
        }
        // a number in words only where a unit follows that makes it an amount ("fifteen percent",
        // "seventy-five-dollar"): "two men" is left as the judge learned it
        let spelled = spelled_number(&lower).filter(|_| here.chars().all(|c| c.is_alphabetic() || c == '-'));
        if let Some(x) = amount(here).or(spelled.as_ref().map(|s| s.0)) {
            let glued_unit = spelled.as_ref().and_then(|s| s.1.as_deref());
            if let Some(sign) = glued_unit.and_then(currency) {
                emit(format!("{sign}{}", money(x)), i, i, &mut out);
                i += 1;
                changed = true;
                continue;
            }
            // a unit after it: a currency, "cents", "percent", "per cent"
            let after = core(i + 1).to_lowercase();
            if p.trail.is_empty() && lead(i + 1).is_empty() && glued_unit.is_none() {
                let two = after == "per" && core(i + 2).eq_ignore_ascii_case("cent") && trail(i + 1).is_empty() && lead(i + 2).is_empty();
                let rendered = if let Some(sign) = currency(&after).filter(|_| !after.starts_with("pound")) {
                    Some(format!("{sign}{}", money(x)))
                } else if matches!(after.as_str(), "cent" | "cents") && x.fract() == 0.0 && x < 100.0 {
                    Some(format!("${}", money(x / 100.0)))
                } else if matches!(after.as_str(), "percent" | "pct") || two {
                    Some(format!("{}%", fmt_value(x)))
                } else {
                    None
                };
                if let Some(r) = rendered {
                    let last = if two { i + 2 } else { i + 1 };
                    emit(r, i, last, &mut out);
                    i = last + 1;
                    changed = true;
                    continue;
                }
            }
        }
        out.push(p.clone());
        i += 1;
    }
    if !changed {
        return Cow::Borrowed(text);
    }
    let mut s = String::with_capacity(text.len());
    for (k, p) in out.iter().enumerate() {
        if k > 0 {
            s.push(' ');
        }
        s.push_str(&p.lead);
        s.push_str(&p.core);
        s.push_str(&p.trail);
    }
    Cow::Owned(s)
}

#[cfg(test)]
mod tests {
    use super::canonical;

    fn v(t: &str) -> String {
        canonical(t).into_owned()
    }

    #[test]
    fn amounts_in_one_spelling() {
        assert_eq!(v("cust_7714 was refunded USD 1,250.00."), "cust_7714 was refunded $1,250.");
        assert_eq!(v("A refund of $1,250 was issued."), "A refund of $1,250 was issued.");
        assert_eq!(v("The monthly fee is EUR 40."), "The monthly fee is €40.");
        assert_eq!(v("The fee is 12.50 GBP."), "The fee is £12.50.");
        assert_eq!(v("It renews at 99 USD per year."), "It renews at $99 per year.");
        assert_eq!(v("ord_9090 was refunded 99 cents."), "ord_9090 was refunded $0.99.");
        assert_eq!(v("It requires a seventy-five-dollar deposit."), "It requires a $75 deposit.");
        assert_eq!(v("They paid 40 euros."), "They paid €40.");
        // weight, not money
        assert_eq!(v("The parcel weighs 5 pounds."), "The parcel weighs 5 pounds.");
        assert_eq!(v("It costs $5.50."), "It costs $5.50.");
    }

    #[test]
    fn percentages_and_numbers_in_digits() {
        assert_eq!(v("A fifteen percent discount."), "A 15% discount.");
        assert_eq!(v("VAT is 23 percent."), "VAT is 23%.");
        assert_eq!(v("VAT is 23 per cent."), "VAT is 23%.");
        assert_eq!(v("Fifteen dollars were refunded."), "$15 were refunded.");
        // a count in words is left as the judge learned it, and so is "one" (as often a
        // pronoun) and "two-factor" (no amount)
        assert_eq!(v("Order ord_8891 contains three items."), "Order ord_8891 contains three items.");
        assert_eq!(v("a thirty-day window"), "a thirty-day window");
        assert_eq!(v("No one came."), "No one came.");
        assert_eq!(v("Two-factor authentication is on."), "Two-factor authentication is on.");
    }

    #[test]
    fn dates_and_times_in_one_spelling() {
        assert_eq!(v("It renews on Feb. 14, 2026."), "It renews on 2026-02-14.");
        assert_eq!(v("It renews on 14 February 2026."), "It renews on 2026-02-14.");
        assert_eq!(v("Joined on July 4th, 2025, online."), "Joined on 2025-07-04, online.");
        assert_eq!(v("Call at 10:00 UTC on Tuesday, March 10, 2026."), "Call at 10:00 UTC on Tuesday, 2026-03-10.");
        assert_eq!(v("The export runs at midnight UTC."), "The export runs at 00:00 UTC.");
        assert_eq!(v("Call between 9am and 11:30 a.m. please."), "Call between 09:00 and 11:30 please.");
        assert_eq!(v("Call after 3 pm."), "Call after 15:00.");
        assert_eq!(v("Open from 9:00 to 17:00."), "Open from 09:00 to 17:00.");
        // a month without a day, a verb, a name: left as written
        assert_eq!(v("The promo runs until the end of March 2026."), "The promo runs until the end of March 2026.");
        assert_eq!(v("I may 3 times 2026 things"), "I may 3 times 2026 things");
        assert_eq!(v("Caroline (8 May 2023): I went to a support group."), "Caroline (2023-05-08): I went to a support group.");
    }

    #[test]
    fn words_with_two_spellings() {
        assert_eq!(v("Nobody from cust_7090's team attended."), "No one from cust_7090's team attended.");
        assert_eq!(v("Send it by e-mail to a neighbour."), "Send it by email to a neighbor.");
        assert_eq!(v("The order was canceled."), "The order was cancelled.");
        // a part of a word is no word
        assert_eq!(v("somebody nobodys"), "somebody nobodys");
    }

    #[test]
    fn nothing_to_change_is_borrowed() {
        assert!(matches!(canonical("Luis speaks Italian."), std::borrow::Cow::Borrowed(_)));
        assert_eq!(v("FYI, the invoice is due."), "the invoice is due.");
        assert_eq!(v(""), "");
        assert_eq!(v("   "), "   ");
    }
}
