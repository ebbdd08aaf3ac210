//! `uqd bench stress`: the NLI model on a stress suite of labelled (premise, hypothesis) pairs
//! (`models/nli/stress.jsonl`: distractors, paraphrases, swapped negations, unsupported and
//! off-topic hypotheses, long passages). Each pair is judged as `uq_nli(premise, hypothesis)`
//! judges it ([`Engine::nli`], long premises in windows, the most decisive window kept); the
//! pairs go through the engine in batches. Prints one JSON line per `kind` (in first-seen
//! order) and one for `all`, an aligned table to stderr, and with `--items` each pair's
//! probabilities as JSON lines.

use std::io::Write;
use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Map, Value};
use uq_core::limits::check_text;
use uq_core::protocol::NliProbs;

use super::lines::round;
use uqd::engine::Engine;

/// Pairs per [`Engine::nli`] call (progress is printed between calls).
const CHUNK: usize = 256;

/// The shape of a line, named in the errors.
const LINE_SHAPE: &str = r#"{"id":…,"kind":…,"sub":…,"topic":…,"premise":…,"hypothesis":…,"label":"entailment|neutral|contradiction"}"#;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Label {
    Entailment,
    Neutral,
    Contradiction,
}

impl Label {
    fn parse(s: &str) -> Option<Label> {
        match s.trim().to_ascii_lowercase().as_str() {
            "entailment" => Some(Label::Entailment),
            "neutral" => Some(Label::Neutral),
            "contradiction" => Some(Label::Contradiction),
            _ => None,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Label::Entailment => "entailment",
            Label::Neutral => "neutral",
            Label::Contradiction => "contradiction",
        }
    }

    /// The 3-way argmax (ties to the earlier of entailment, neutral, contradiction).
    fn predicted(p: &NliProbs) -> Label {
        let mut best = (Label::Entailment, p.entailment);
        for (l, v) in [
            (Label::Neutral, p.neutral),
            (Label::Contradiction, p.contradiction),
        ] {
            if v > best.1 {
                best = (l, v);
            }
        }
        best.0
    }
}

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    id: Option<Value>,
    kind: String,
    #[serde(default)]
    sub: Option<String>,
    premise: String,
    hypothesis: String,
    label: String,
}

struct Item {
    id: Value,
    kind: String,
    sub: String,
    premise: String,
    hypothesis: String,
    label: Label,
}

/// A stress suite read from its JSON-lines file.
pub struct StressSuite {
    items: Vec<Item>,
}

impl StressSuite {
    /// Reads and checks the whole file; an error names the line and the fix.
    pub fn load(path: &Path) -> Result<StressSuite, String> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            format!(
                "cannot read --data {}: {e}; give --data PATH of a stress suite, one JSON object \
                 per line: {LINE_SHAPE}",
                path.display()
            )
        })?;
        let mut items = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = format!("{} line {}", path.display(), i + 1);
            let l: Line = serde_json::from_str(line).map_err(|e| {
                format!("{at}: {e}; each line must be one JSON object {LINE_SHAPE}: fix or remove the line")
            })?;
            let label = Label::parse(&l.label).ok_or_else(|| {
                format!(
                    "{at}: unknown label {:?}; the label must be entailment, neutral or \
                     contradiction: fix the line",
                    l.label
                )
            })?;
            if l.kind.trim().is_empty() {
                return Err(format!(
                    "{at}: the kind is empty; give each item a kind (e.g. \"paraphrase\")"
                ));
            }
            check_text(&l.premise, &format!("{at}: the premise"))?;
            check_text(&l.hypothesis, &format!("{at}: the hypothesis"))?;
            items.push(Item {
                id: l.id.unwrap_or_else(|| json!(i + 1)),
                kind: l.kind,
                sub: l.sub.unwrap_or_default(),
                premise: l.premise,
                hypothesis: l.hypothesis,
                label,
            });
        }
        if items.is_empty() {
            return Err(format!(
                "--data {} holds no items; give a stress suite, one JSON object per line: \
                 {LINE_SHAPE}",
                path.display()
            ));
        }
        Ok(StressSuite { items })
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// The figures of one group of items (a kind, a sub, or all).
#[derive(Default)]
struct Tally {
    n: usize,
    correct: usize,
    sum_e: f64,
    sum_c: f64,
    entailment_items: usize,
    entailment_contra: usize,
    neutral_items: usize,
    neutral_contra: usize,
    /// Neutral and contradiction items, and those of them with P(entailment) > 0.5: false
    /// support, the worst error of a hallucination detector.
    unsupported_items: usize,
    false_support: usize,
}

impl Tally {
    fn add(&mut self, label: Label, p: &NliProbs) {
        self.n += 1;
        self.correct += (Label::predicted(p) == label) as usize;
        self.sum_e += p.entailment;
        self.sum_c += p.contradiction;
        let contra = p.contradiction > 0.5;
        if label != Label::Entailment {
            self.unsupported_items += 1;
            self.false_support += (p.entailment > 0.5) as usize;
        }
        match label {
            Label::Entailment => {
                self.entailment_items += 1;
                self.entailment_contra += contra as usize;
            }
            Label::Neutral => {
                self.neutral_items += 1;
                self.neutral_contra += contra as usize;
            }
            Label::Contradiction => {}
        }
    }

    fn share(a: usize, b: usize) -> Option<f64> {
        (b > 0).then(|| round(a as f64 / b as f64))
    }

    fn accuracy(&self) -> Option<f64> {
        Tally::share(self.correct, self.n)
    }

    fn mean(&self, sum: f64) -> Option<f64> {
        (self.n > 0).then(|| round(sum / self.n as f64))
    }
}

/// A group in first-seen order of its key.
struct Groups<T> {
    keys: Vec<String>,
    values: Vec<T>,
}

impl<T> Default for Groups<T> {
    fn default() -> Self {
        Groups {
            keys: Vec::new(),
            values: Vec::new(),
        }
    }
}

impl<T: Default> Groups<T> {
    fn entry(&mut self, key: &str) -> &mut T {
        let i = match self.keys.iter().position(|k| k == key) {
            Some(i) => i,
            None => {
                self.keys.push(key.to_string());
                self.values.push(T::default());
                self.keys.len() - 1
            }
        };
        &mut self.values[i]
    }

    fn iter(&self) -> impl Iterator<Item = (&String, &T)> {
        self.keys.iter().zip(&self.values)
    }
}

#[derive(Default)]
struct Kind {
    all: Tally,
    subs: Groups<Tally>,
}

/// Judges every pair of `suite` and prints the lines (JSON to stdout, the table to stderr);
/// with `items` also writes one line per pair there.
pub fn stress(engine: &Engine, suite: &StressSuite, items: Option<&Path>) -> Result<(), String> {
    let info = engine.info();
    let start = std::time::Instant::now();
    let mut probs: Vec<NliProbs> = Vec::with_capacity(suite.items.len());
    for chunk in suite.items.chunks(CHUNK) {
        let pairs: Vec<(String, String)> = chunk
            .iter()
            .map(|it| (it.premise.clone(), it.hypothesis.clone()))
            .collect();
        probs.extend(engine.nli(&pairs)?);
        if suite.items.len() > CHUNK {
            eprintln!("bench stress: {}/{} pairs", probs.len(), suite.items.len());
        }
    }
    let wall = start.elapsed().as_secs_f64();

    if let Some(path) = items {
        write_items(path, suite, &probs)?;
    }

    let mut kinds: Groups<Kind> = Groups::default();
    let mut all = Tally::default();
    for (it, p) in suite.items.iter().zip(&probs) {
        let k = kinds.entry(&it.kind);
        k.all.add(it.label, p);
        k.subs.entry(&it.sub).add(it.label, p);
        all.add(it.label, p);
    }

    let head = |kind: &str, t: &Tally| {
        json!({
            "bench": "stress",
            "model": info.nli_model,
            "precision": info.precision,
            "kind": kind,
            "n": t.n,
            "correct": t.correct,
            "accuracy": t.accuracy(),
            "mean_p_entailment": t.mean(t.sum_e),
            "mean_p_contradiction": t.mean(t.sum_c),
            "entailment_items": t.entailment_items,
            "entailment_with_p_contradiction_over_half":
                Tally::share(t.entailment_contra, t.entailment_items),
            "neutral_items": t.neutral_items,
            "neutral_with_p_contradiction_over_half":
                Tally::share(t.neutral_contra, t.neutral_items),
            "unsupported_items": t.unsupported_items,
            "false_support": Tally::share(t.false_support, t.unsupported_items),
        })
    };
    for (name, k) in kinds.iter() {
        let mut line = head(name, &k.all);
        let subs: Map<String, Value> = k
            .subs
            .iter()
            .map(|(s, t)| (s.clone(), json!({"n": t.n, "accuracy": t.accuracy()})))
            .collect();
        line["subs"] = Value::Object(subs);
        println!("{line}");
    }
    let mut line = head("all", &all);
    line["wall_s"] = json!(round(wall));
    line["nli_pairs_per_s"] = json!(round(all.n as f64 / wall.max(1e-9)));
    println!("{line}");

    eprint!("{}", table(&info.nli_model, &info.precision, &kinds, &all));
    Ok(())
}

fn write_items(path: &Path, suite: &StressSuite, probs: &[NliProbs]) -> Result<(), String> {
    let err = |e: std::io::Error| format!("cannot write --items {}: {e}", path.display());
    let file = std::fs::File::create(path).map_err(err)?;
    let mut out = std::io::BufWriter::new(file);
    for (it, p) in suite.items.iter().zip(probs) {
        let line = json!({
            "id": it.id,
            "kind": it.kind,
            "sub": it.sub,
            "label": it.label.as_str(),
            "p_entailment": p.entailment,
            "p_neutral": p.neutral,
            "p_contradiction": p.contradiction,
            "predicted": Label::predicted(p).as_str(),
        });
        writeln!(out, "{line}").map_err(err)?;
    }
    out.flush().map_err(err)
}

/// The human-readable table: one row per kind, its subs indented below it, then `all`.
fn table(model: &str, precision: &str, kinds: &Groups<Kind>, all: &Tally) -> String {
    let opt = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.3}"));
    let mut rows: Vec<(String, &Tally)> = Vec::new();
    for (name, k) in kinds.iter() {
        rows.push((name.clone(), &k.all));
        // A kind with one sub (or none given) needs no sub rows.
        if k.subs.keys.len() > 1 {
            for (s, t) in k.subs.iter() {
                rows.push((format!("  {s}"), t));
            }
        }
    }
    rows.push(("all".into(), all));
    let w = rows
        .iter()
        .map(|(n, _)| n.chars().count())
        .max()
        .unwrap_or(3);
    let mut out = format!("bench stress: {model} ({precision})\n");
    out += &format!(
        "{:<w$}  {:>5}  {:>6}  {:>7}  {:>7}  {:>5}  {:>9}  {:>5}  {:>9}  {:>9}\n",
        "kind",
        "n",
        "acc",
        "mean_pE",
        "mean_pC",
        "ent",
        "ent_pC>.5",
        "neu",
        "neu_pC>.5",
        "n+c_pE>.5"
    );
    for (name, t) in rows {
        out += &format!(
            "{:<w$}  {:>5}  {:>6}  {:>7}  {:>7}  {:>5}  {:>9}  {:>5}  {:>9}  {:>9}\n",
            name,
            t.n,
            opt(t.accuracy()),
            opt(t.mean(t.sum_e)),
            opt(t.mean(t.sum_c)),
            t.entailment_items,
            opt(Tally::share(t.entailment_contra, t.entailment_items)),
            t.neutral_items,
            opt(Tally::share(t.neutral_contra, t.neutral_items)),
            opt(Tally::share(t.false_support, t.unsupported_items)),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(e: f64, n: f64, c: f64) -> NliProbs {
        NliProbs {
            entailment: e,
            neutral: n,
            contradiction: c,
        }
    }

    #[test]
    fn argmax_and_tally() {
        assert_eq!(Label::predicted(&p(0.6, 0.3, 0.1)), Label::Entailment);
        assert_eq!(Label::predicted(&p(0.1, 0.3, 0.6)), Label::Contradiction);
        let mut t = Tally::default();
        t.add(Label::Entailment, &p(0.2, 0.2, 0.6));
        t.add(Label::Entailment, &p(0.8, 0.1, 0.1));
        t.add(Label::Neutral, &p(0.1, 0.8, 0.1));
        assert_eq!((t.n, t.correct), (3, 2));
        assert_eq!(
            Tally::share(t.entailment_contra, t.entailment_items),
            Some(0.5)
        );
        assert_eq!(Tally::share(t.neutral_contra, t.neutral_items), Some(0.0));
        assert_eq!(Tally::share(0, 0), None);
        // false support: neutral and contradiction items read as entailment
        t.add(Label::Contradiction, &p(0.7, 0.1, 0.2));
        t.add(Label::Neutral, &p(0.5, 0.4, 0.1));
        assert_eq!((t.false_support, t.unsupported_items), (1, 3));
    }

    #[test]
    fn bad_lines_name_the_line_and_the_fix() {
        let dir = std::env::temp_dir().join(format!("uqd-stress-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("s.jsonl");
        let ok =
            r#"{"id":"a","kind":"k","sub":"s","premise":"P.","hypothesis":"H.","label":"neutral"}"#;
        std::fs::write(&f, format!("{ok}\n\n{{\"kind\": 1}}\n")).unwrap();
        let e = StressSuite::load(&f).err().unwrap();
        assert!(e.contains("line 3") && e.contains("fix or remove"), "{e}");
        std::fs::write(&f, ok.replace("neutral", "maybe")).unwrap();
        let e = StressSuite::load(&f).err().unwrap();
        assert!(e.contains("line 1") && e.contains("\"maybe\""), "{e}");
        std::fs::write(&f, format!("{ok}\n")).unwrap();
        assert_eq!(StressSuite::load(&f).unwrap().len(), 1);
        let e = StressSuite::load(&dir.join("missing.jsonl")).err().unwrap();
        assert!(e.contains("cannot read --data"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
