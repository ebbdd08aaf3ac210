//! docs/reference.md's function index is generated from [`OBJECTS`] (`UQ_BLESS=1 cargo test
//! --release function_index`, in ext/, rewrites it), and every object has a section
//! (`### name(…)`) naming each of its arguments and agreeing with its *Daemon.* / *Local.* mark.

use uq_core::generated_docs::{check_section, reference_md};

use super::object::arg_counts;
use super::{Kind, Runs, SqlObject, OBJECTS};

const DOCS_BEGIN: &str = "<!-- functions:begin (generated from ext/src/sql/mod.rs, OBJECTS; UQ_BLESS=1 cargo test --release function_index, in ext/, regenerates it) -->";
const DOCS_END: &str = "<!-- functions:end -->";

/// A `### ` heading of the reference: its text, and its section (the heading to the next
/// heading of any level; lines in code fences are no headings).
struct Section<'a> {
    heading: &'a str,
    text: &'a str,
}

fn sections(doc: &str) -> Vec<Section<'_>> {
    let mut starts = Vec::new();
    let (mut at, mut fenced) = (0, false);
    for line in doc.split_inclusive('\n') {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            starts.push(at);
        }
        at += line.len();
    }
    starts
        .iter()
        .enumerate()
        .filter_map(|(k, &i)| {
            let end = starts.get(k + 1).copied().unwrap_or(doc.len());
            let heading = doc[i..end].lines().next()?.strip_prefix("### ")?;
            Some(Section {
                heading,
                text: &doc[i..end],
            })
        })
        .collect()
}

/// The name a signature or a function heading starts with (`temp.uq_llms` included).
fn called(s: &str) -> Option<&str> {
    let (name, rest) = s.split_once('(')?;
    let ok = rest.ends_with(')')
        && !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    ok.then_some(name)
}

/// GitHub's anchor of a heading: lower case, spaces to `-`, other punctuation but `-` and `_`
/// dropped.
fn anchor(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

fn kind(o: &SqlObject) -> &'static str {
    match o.kind {
        Kind::Scalar { .. } => "scalar",
        Kind::Aggregate { .. } => "aggregate",
        Kind::Module(_) => "table",
    }
}

/// The section of `o`: the one `### ` heading that calls its name.
fn section_of<'a>(o: &SqlObject, sections: &'a [Section<'a>]) -> Result<&'a Section<'a>, String> {
    let name =
        called(o.signature).ok_or_else(|| format!("signature {:?} is not f(…)", o.signature))?;
    let mut found = sections.iter().filter(|s| called(s.heading) == Some(name));
    match (found.next(), found.next()) {
        (Some(s), None) => Ok(s),
        (None, _) => Err(format!("{}: no section `### {name}(…)`", o.signature)),
        (Some(_), Some(_)) => Err(format!("{}: two sections `### {name}(…)`", o.signature)),
    }
}

/// The function index: one row per object, its signature linking to its section.
fn index(sections: &[Section]) -> Result<String, String> {
    let mut out = String::from("| function | kind | runs | summary |\n|---|---|---|---|\n");
    for o in OBJECTS {
        let s = section_of(o, sections)?;
        let runs = match o.runs {
            Runs::Local => "local",
            Runs::Daemon => "daemon",
        };
        out += &format!(
            "| [`{}`](#{}) | {} | {runs} | {} |\n",
            o.signature,
            anchor(s.heading),
            kind(o),
            o.summary
        );
    }
    Ok(out)
}

/// What is wrong with `o`'s entry and its section, if anything.
fn problems(o: &SqlObject, sections: &[Section]) -> Vec<String> {
    let mut out = Vec::new();
    if o.summary.trim().is_empty() || o.summary.contains(['|', '\n']) {
        out.push(format!(
            "{}: the summary must be one non-empty line without `|`",
            o.signature
        ));
    }
    let s = match section_of(o, sections) {
        Ok(s) => s,
        Err(e) => return vec![e],
    };
    let args = o.signature.split_once('(').map_or("", |(_, a)| a);
    let words = |t: &str| -> Vec<String> {
        t.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let documented = words(s.text);
    for a in words(args) {
        if !documented.contains(&a) {
            out.push(format!("{}: its section does not name `{a}`", o.signature));
        }
    }
    let marked = |m: &str| s.text.contains(m);
    match o.runs {
        Runs::Local if marked("*Daemon.*") => out.push(format!(
            "{}: OBJECTS says local, its section says *Daemon.*",
            o.signature
        )),
        Runs::Daemon if marked("*Local.*") => out.push(format!(
            "{}: OBJECTS says daemon, its section says *Local.*",
            o.signature
        )),
        _ => {}
    }
    out
}

fn doc() -> (std::path::PathBuf, String) {
    let path = reference_md(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    (path, doc)
}

/// The function index of docs/reference.md is [`index`]: no object missing, no row that is no
/// object.
#[test]
fn function_index_matches_objects() {
    let (path, doc) = doc();
    let want = index(&sections(&doc)).unwrap_or_else(|e| panic!("{e}"));
    let stale = format!(
        "the function index in {} is not sql::OBJECTS'; run UQ_BLESS=1 cargo test --release \
         function_index (in ext/) to regenerate it",
        path.display()
    );
    check_section(&path, DOCS_BEGIN, DOCS_END, &want, &stale);
}

/// Every object has a section naming each argument; every section of a function is an object's.
#[test]
fn every_object_is_documented_with_its_arguments() {
    let (path, doc) = doc();
    let sections = sections(&doc);
    let mut bad: Vec<String> = OBJECTS
        .iter()
        .flat_map(|o| problems(o, &sections))
        .collect();
    for s in &sections {
        if let Some(name) = called(s.heading) {
            if !OBJECTS.iter().any(|o| called(o.signature) == Some(name)) {
                bad.push(format!("### {}: no such object in sql::OBJECTS", s.heading));
            }
        }
    }
    assert!(bad.is_empty(), "{}:\n{}", path.display(), bad.join("\n"));
}

#[test]
fn signatures_parse() {
    assert_eq!(arg_counts("uq_version()"), (0, 0));
    assert_eq!(arg_counts("uq_nli(premise, hypothesis)"), (2, 2));
    assert_eq!(arg_counts("f(a, b[, c[, d]])"), (2, 4));
    assert_eq!(arg_counts("f([a])"), (0, 1));
    assert_eq!(called("temp.uq_llms(name, config)"), Some("temp.uq_llms"));
    assert_eq!(called("Metric conventions"), None);
    assert_eq!(
        anchor("uq_highlight(response, units_json, options_json)"),
        "uq_highlightresponse-units_json-options_json"
    );
    assert_eq!(
        anchor("temp.uq_llms(name, config)"),
        "tempuq_llmsname-config"
    );
}
