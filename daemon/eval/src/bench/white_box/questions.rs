//! Questions whose correct answer a program knows, and the grading of a free-text answer to
//! them: sums and products, the weekday of a date, unit conversions, letter counts, the month
//! after a month and the larger of two numbers. Seeded, so a run can be repeated; no outside
//! data.

use uq_core::metrics::bootstrap::Rng;

/// What a question's answer is graded as.
#[derive(Debug, Clone, PartialEq)]
pub enum Expected {
    /// The first number in the answer (commas inside it ignored).
    Number(i64),
    /// The first weekday or month name in the answer (case ignored).
    Name(&'static str),
}

/// One question with its kind (for the per-kind accuracy) and answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub kind: &'static str,
    pub prompt: String,
    pub expected: Expected,
}

pub const WEEKDAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
pub const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const WORDS: [&str; 16] = [
    "cat",
    "house",
    "river",
    "elephant",
    "garden",
    "pencil",
    "mountain",
    "book",
    "window",
    "strawberry",
    "sun",
    "computer",
    "orange",
    "bicycle",
    "tree",
    "library",
];
/// (unit asked for, unit given, factor).
const CONVERSIONS: [(&str, &str, i64); 4] = [
    ("centimetres", "metres", 100),
    ("minutes", "hours", 60),
    ("grams", "kilograms", 1000),
    ("seconds", "minutes", 60),
];

/// Day of the week of a Gregorian date, 0 = Sunday (Sakamoto's method).
pub fn weekday(year: i64, month: usize, day: i64) -> usize {
    const T: [i64; 12] = [0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4];
    let y = if month < 3 { year - 1 } else { year };
    ((y + y / 4 - y / 100 + y / 400 + T[month - 1] + day).rem_euclid(7)) as usize
}

fn days_in(year: i64, month: usize) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `n` questions, the kinds in turn, numbers drawn from `seed`.
pub fn questions(n: usize, seed: u64) -> Vec<Question> {
    let mut rng = Rng(seed);
    let mut r = |lo: i64, hi: i64| lo + rng.below((hi - lo + 1) as usize) as i64;
    let only = "Reply with the answer only.";
    (0..n)
        .map(|i| match i % 7 {
            0 => {
                let (a, b) = (r(10, 99), r(10, 99));
                Question {
                    kind: "sum",
                    prompt: format!("What is {a} + {b}? {only}"),
                    expected: Expected::Number(a + b),
                }
            }
            1 => {
                let (a, b) = (r(2, 12), r(3, 25));
                Question {
                    kind: "product",
                    prompt: format!("What is {a} times {b}? {only}"),
                    expected: Expected::Number(a * b),
                }
            }
            2 => {
                let (y, m) = (r(1990, 2030), r(1, 12) as usize);
                let d = r(1, days_in(y, m));
                Question {
                    kind: "weekday",
                    prompt: format!("What day of the week was {d} {} {y}? {only}", MONTHS[m - 1]),
                    expected: Expected::Name(WEEKDAYS[weekday(y, m, d)]),
                }
            }
            3 => {
                let (to, from, f) = CONVERSIONS[r(0, 3) as usize];
                let x = r(2, 12);
                Question {
                    kind: "conversion",
                    prompt: format!("How many {to} are in {x} {from}? {only}"),
                    expected: Expected::Number(x * f),
                }
            }
            4 => {
                let w = WORDS[r(0, WORDS.len() as i64 - 1) as usize];
                Question {
                    kind: "letters",
                    prompt: format!("How many letters are in the word \"{w}\"? {only}"),
                    expected: Expected::Number(w.chars().count() as i64),
                }
            }
            5 => {
                let m = r(0, 11) as usize;
                Question {
                    kind: "next_month",
                    prompt: format!("Which month comes after {}? {only}", MONTHS[m]),
                    expected: Expected::Name(MONTHS[(m + 1) % 12]),
                }
            }
            _ => {
                let (a, b) = (r(100, 999), r(100, 999));
                let b = if a == b { b + 1 } else { b };
                Question {
                    kind: "larger",
                    prompt: format!("Which number is larger, {a} or {b}? {only}"),
                    expected: Expected::Number(a.max(b)),
                }
            }
        })
        .collect()
}

/// The integers in `text`, in order ("1,000" is 1000; a minus sign directly before one counts;
/// "1.5" is 1 and 5).
pub fn numbers(text: &str) -> Vec<i64> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let negative = i > 0 && chars[i - 1] == '-' && (i < 2 || !chars[i - 2].is_alphanumeric());
        let mut digits = String::new();
        while i < chars.len() {
            let c = chars[i];
            if c.is_ascii_digit() {
                digits.push(c);
            } else if !(c == ',' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit())) {
                break;
            }
            i += 1;
        }
        if let Ok(v) = digits.parse::<i64>() {
            out.push(if negative { -v } else { v });
        }
    }
    out
}

/// The names of `names` that `text` names as words (case ignored), in order.
fn names_in(text: &str, names: &[&'static str]) -> Vec<&'static str> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphabetic())
        .filter_map(|w| names.iter().find(|n| n.to_lowercase() == w).copied())
        .collect()
}

/// Whether `answer` gives `q`'s answer: its first number (or weekday or month name) that the
/// question does not itself name, since small models repeat the question ("2 x 23 = 46"); for
/// `larger`, whose answer is one of the question's numbers, its first number.
pub fn grade(q: &Question, answer: &str) -> bool {
    match &q.expected {
        Expected::Number(n) => {
            let asked = numbers(&q.prompt);
            numbers(answer)
                .into_iter()
                .find(|x| q.kind == "larger" || !asked.contains(x))
                == Some(*n)
        }
        Expected::Name(name) => {
            let list: &[&'static str] = if WEEKDAYS.contains(name) {
                &WEEKDAYS
            } else {
                &MONTHS
            };
            let asked = names_in(&q.prompt, list);
            names_in(answer, list)
                .into_iter()
                .find(|x| !asked.contains(x))
                == Some(*name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weekdays_of_known_dates() {
        assert_eq!(WEEKDAYS[weekday(2000, 1, 1)], "Saturday");
        assert_eq!(WEEKDAYS[weekday(2026, 12, 3)], "Thursday");
        assert_eq!(WEEKDAYS[weekday(1990, 3, 1)], "Thursday");
        assert_eq!(WEEKDAYS[weekday(2024, 2, 29)], "Thursday");
    }

    #[test]
    fn questions_are_seeded_and_their_answers_right() {
        let q = questions(14, 3);
        assert_eq!(q, questions(14, 3));
        assert_ne!(q, questions(14, 4));
        assert_eq!(q[0].kind, "sum");
        assert_eq!(q[7].kind, "sum");
        for x in &q {
            if x.kind == "letters" {
                let w = x.prompt.split('"').nth(1).unwrap();
                assert_eq!(x.expected, Expected::Number(w.len() as i64));
            }
            if x.kind == "sum" {
                let nums: Vec<i64> = x
                    .prompt
                    .split(|c: char| !c.is_ascii_digit())
                    .filter_map(|s| s.parse().ok())
                    .collect();
                assert_eq!(x.expected, Expected::Number(nums[0] + nums[1]));
            }
        }
    }

    #[test]
    fn grading_reads_the_first_number_or_name_the_question_does_not_name() {
        let q = |kind: &'static str, prompt: &str, expected: Expected| Question {
            kind,
            prompt: prompt.into(),
            expected,
        };
        let product = q("product", "What is 2 times 23?", Expected::Number(46));
        assert!(grade(&product, "2 x 23 = 46\nThe answer is 46."));
        assert!(!grade(&product, "2 x 23 = 48"));
        assert!(!grade(&product, "forty-six"));
        let grams = q(
            "conversion",
            "How many grams are in 1 kilograms?",
            Expected::Number(1000),
        );
        assert!(grade(&grams, "1 kilogram is 1,000 grams."));
        let larger = q(
            "larger",
            "Which number is larger, 170 or 984?",
            Expected::Number(984),
        );
        assert!(grade(&larger, "984"));
        assert!(!grade(&larger, "170 is larger than 984."));
        let month = q(
            "next_month",
            "Which month comes after October?",
            Expected::Name("November"),
        );
        assert!(grade(&month, "The month after October is November."));
        assert!(!grade(&month, "The month after October is December."));
        let day = q(
            "weekday",
            "What day of the week was 1 May 2000?",
            Expected::Name("Monday"),
        );
        assert!(grade(&day, "It was a monday."));
        assert!(!grade(&day, "Sunday, or maybe Monday."));
        assert_eq!(numbers("-4 and x-5, 1.5"), vec![-4, 5, 1, 5]);
        assert!(numbers("no digits").is_empty());
    }
}
