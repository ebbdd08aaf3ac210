#!/usr/bin/env python3
"""The source's shape, measured: import cycles between modules, imports that run back up to an
ancestor module (parent<->child loops), core maths that reaches up into `options/` or
`protocol`, the largest non-test files and the longest non-test functions. Used for the
"before/after" figures of a restructuring, and by `make check` (`--check`).

    python3 scripts/structure.py [ROOT] [--top N] [--check]

ROOT is a checkout (default: this one). Test code (files named `tests.rs`, `tests/` folders,
`#[cfg(test)]` modules and the files of `#[cfg(test)] mod x;`) is left out of every figure. It
ends with the checks, each of which should be 0: core maths -> protocol imports, imports back up
to an ancestor, stray `UQ_*` reads, import cycles between files (any length: siblings, a parent
and its child, or further apart; an import is a `use`, or a `crate::`/`super::`/`self::` path or a
path through a child module written in code), non-test files over 450 lines (all lines but
their tests'; a file whose doc says it is "one table of data" is exempt) and non-test functions
over 80 lines. `--check` (`make check`) prints the checks only, and exits 1 when a file cycle, a
stray `UQ_*` read, a file over 450 lines or a function over 80 lines is found.
"""
import re
import sys
from pathlib import Path

CRATES = {"core": "core/src", "daemon": "daemon/src", "llm": "daemon/llm/src", "eval": "daemon/eval/src",
          "cli": "daemon/cli/src", "ext": "ext/src"}
# The crates whose `UQ_*` reads must go through `daemon/src/config/settings.rs`.
SETTINGS_USERS = ("daemon", "eval", "cli")
# Modules of `uq_core` that hold the maths: they may not import `options`.
CORE_MATHS = ("aggregate", "calibrate", "decompose", "ensemble", "metrics", "score", "scorers")
# The pipeline's maths: it may not import the socket protocol (`protocol` uses its types instead).
PROTOCOL_FREE = ("score", "aggregate", "decompose", "calibrate")
# A non-test file longer than this (all its lines but its tests') fails `--check`: split it by
# concern. A file that is one table of data (its `//!` doc says "one table of data") is exempt.
MAX_FILE_LINES = 450
TABLE_MARK = re.compile(r"^//!.*\bone table of data\b", re.M)
# A non-test function longer than this fails `--check`: split it by what it does.
MAX_FN_LINES = 80


# Comments, strings (raw ones with any number of `#`, escaped newlines included) and char
# literals, matched in one pass so that `//` inside a string is no comment.
LEXEMES = re.compile(r"//[^\n]*|/\*(?:.|\n)*?\*/|\bb?r(#*)\"(?:.|\n)*?\"\1|b?\"(?:\\(?:.|\n)|[^\"\\])*\"|'(?:\\.|[^'\\])'")


def blank(m):
    """A comment as nothing, a string as `""`, a char literal as `' '`."""
    lexeme = m.group(0)
    return "" if lexeme.startswith("/") else "' '" if lexeme.startswith("'") else '""'


def strip_tests(text):
    """The text without `#[cfg(test)]` items (a module or a function), comments and strings."""
    text = LEXEMES.sub(blank, text)
    out, i = [], 0
    for start, end in test_spans(text):
        out.append(text[i:start])
        i = end
    out.append(text[i:])
    return "".join(out)


# What a `#[cfg(test)]` attribute may stand on as an item (after other attributes and `pub`).
ITEM = re.compile(r"\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?"
                  r"(?:mod|fn|impl|use|struct|enum|union|const|static|trait|type|macro_rules!|extern)\b")


def test_spans(text):
    """(start, end) of each `#[cfg(test)]` item of `text` (comments and strings already blanked);
    on anything else (a struct field, a field's initialiser, a statement) the span runs to the
    next `,` or `;` at its own depth, or to the end of the enclosing brackets."""
    spans, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]", text):
        if m.start() < i:
            continue
        if not ITEM.match(text, m.end()):
            i = end_of_element(text, m.end())
        else:
            j = text.find("{", m.end())
            semi = text.find(";", m.end())
            if semi != -1 and (j == -1 or semi < j):
                i = semi + 1
            else:
                i = match_brace(text, j) + 1
        spans.append((m.start(), i))
    return spans


def end_of_element(text, k):
    """Just past the `,` or `;` that ends the element starting at `k`, or at its closing bracket."""
    depth = 0
    for n in range(k, len(text)):
        ch = text[n]
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            if depth == 0:
                return n
            depth -= 1
        elif ch in ",;" and depth == 0:
            return n + 1
    return len(text)


def lines_outside_tests(text):
    """The lines of a file but those of its `#[cfg(test)]` items (comments and blank lines count)."""
    same_length = LEXEMES.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    inside = sum(text.count("\n", a, b) + 1 for a, b in test_spans(same_length))
    return text.count("\n") + (not text.endswith("\n")) - inside


def match_brace(text, j):
    depth = 0
    for k in range(j, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(text) - 1


def is_test_file(rel):
    return rel.name == "tests.rs" or "tests" in rel.parts[:-1]


# `#[cfg(test)] mod name;`: a module file that only tests compile (e.g. a property-test file).
TEST_MOD = re.compile(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;")


def modules(src):
    """{module path tuple: file} for every non-test file of a crate."""
    mods = {}
    for f in sorted(src.rglob("*.rs")):
        rel = f.relative_to(src)
        if is_test_file(rel):
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[-1] in ("lib", "main", "mod"):
            parts = parts[:-1]
        if parts and parts[0] == "bin":
            continue
        mods[tuple(parts)] = f
    test_only = {m + (name,) for m, f in mods.items()
                 for name in TEST_MOD.findall(LEXEMES.sub(blank, f.read_text()))}
    return {m: f for m, f in mods.items() if not any(m[:len(t)] == t for t in test_only)}


def use_paths(text, children=()):
    """Every path a `use` brings in, and every `crate::`/`super::`/`self::` path written in code;
    `children`: the names of the module's child modules, whose relative paths (`child::item`, in
    a `use` or in code) are read as `self::child::item`."""
    paths = []
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        paths += expand(m.group(1).replace("\n", " ").replace(" ", ""))
    # `pub(in crate::x)` names where an item is visible, not what it uses.
    body = re.sub(r"\bpub\s*\(\s*in\s+[\w:]+\s*\)|\buse\s+[^;]+;", "", text)
    for m in re.finditer(r"\b((?:crate|super|self)(?:::\w+)+)", body):
        paths.append(m.group(1))
    for m in re.finditer(r"(?<![\w:])(\w+)((?:::\w+)+)", body):
        if m.group(1) in children:
            paths.append(m.group(0))
    return [f"self::{p}" if p.split("::")[0] in children else p for p in paths]


def expand(tree):
    """`a::{b, c::{d, e}}` -> [`a::b`, `a::c::d`, `a::c::e`]."""
    i = tree.find("{")
    if i == -1:
        return [re.sub(r"as\w+$", "", tree)]
    prefix, inner = tree[:i], tree[i + 1:tree.rfind("}")]
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    return [p for part in parts if part for p in expand(prefix + part)]


def resolve(path, here, mods):
    """The module a path points into (its longest known prefix), or None for another crate."""
    segs = path.split("::")
    if segs[0] == "crate":
        base, segs = (), segs[1:]
    elif segs[0] in ("super", "self"):
        base = here
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                base = base[:-1]
            segs = segs[1:]
    else:
        return None
    target = base
    for s in segs:
        if target + (s,) in mods:
            target = target + (s,)
        else:
            break
    return target


def name(mod):
    return "::".join(mod) or "lib"


def crate_graph(src):
    mods = modules(src)
    edges = {}
    for mod, f in mods.items():
        text = strip_tests(f.read_text())
        children = {m[-1] for m in mods if len(m) == len(mod) + 1 and m[:len(mod)] == mod}
        for p in use_paths(text, children):
            t = resolve(p, mod, mods)
            if t is not None and t != mod:
                edges.setdefault(mod, {}).setdefault(t, set()).add(p.split("::")[-1])
    return mods, edges


def sccs(nodes, adj):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in adj.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return out


def functions(text):
    """(name, lines) of every `fn` with a body."""
    out = []
    for m in re.finditer(r"\bfn\s+(\w+)", text):
        j = text.find("{", m.end())
        semi = text.find(";", m.end())
        if j == -1 or (semi != -1 and semi < j):
            continue
        k = match_brace(text, j)
        out.append((m.group(1), text.count("\n", m.start(), k) + 1))
    return out


def main():
    args = sys.argv[1:]
    top = 5
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    say = (lambda *_, **__: None) if check else print  # --check: only the checks
    if "--top" in args:
        i = args.index("--top")
        top = int(args[i + 1])
        del args[i:i + 2]
    root = Path(args[0] if args else Path(__file__).resolve().parent.parent)
    files, funcs, long_files, file_cycles = [], [], [], []
    n_back, to_protocol = 0, []
    for crate, rel in CRATES.items():
        src = root / rel
        mods, edges = crate_graph(src)
        # Every import counts: between siblings, a parent and its child, or further apart.
        cycles = sccs(list(mods), edges)
        tops = {}
        for a, bs in edges.items():
            for b, items in bs.items():
                if a[:1] != b[:1] and a and b:
                    tops.setdefault(a[:1], {}).setdefault(b[:1], set()).update(
                        f"{name(a)} -> {name(b)}::{i}" for i in items)
        folder_cycles = sccs(sorted({m[:1] for m in mods if m}), tops)
        n_imports = sum(len(bs) for bs in edges.values())
        back = [(a, b, sorted(items)) for a, bs in edges.items() for b, items in bs.items()
                if a[:len(b)] == b]
        say(f"## {crate} ({rel}): {len(mods)} modules, {n_imports} module imports, "
              f"{len(back)} back up to an ancestor, {len(cycles)} import cycles between files, "
              f"{len(folder_cycles)} between top-level modules")
        for c in cycles:
            pairs = [f"{name(a)} -> {name(b)} ({', '.join(sorted(edges[a][b]))})"
                     for a in c for b in c if b in edges.get(a, {})]
            say("  cycle: " + " | ".join(pairs))
            file_cycles.append(" <-> ".join(str(mods[m].relative_to(root)) for m in c))
        for c in folder_cycles:
            links = [x for a in c for b in c if b in tops.get(a, {}) for x in sorted(tops[a][b])]
            say(f"  top-level cycle {' <-> '.join(name(m) for m in c)}: " + "; ".join(links))
        for a, b, items in sorted(back):
            say(f"  back up: {name(a)} -> {name(b)} ({', '.join(items)})")
        if crate == "core":
            for a, bs in sorted(edges.items()):
                if a and a[0] in CORE_MATHS:
                    for b, items in bs.items():
                        if b and b[0] == "options":
                            say(f"  maths -> options: {name(a)} -> {name(b)} ({', '.join(sorted(items))})")
            to_protocol = [(a, b, sorted(items)) for a, bs in sorted(edges.items()) if a and a[0] in PROTOCOL_FREE
                           for b, items in bs.items() if b and b[0] == "protocol"]
            for a, b, items in to_protocol:
                say(f"  maths -> protocol: {name(a)} -> {name(b)} ({', '.join(items)})")
        n_back += len(back)
        for mod, f in mods.items():
            text = f.read_text()
            stripped = strip_tests(text)
            code = [l for l in stripped.splitlines() if l.strip()]
            files.append((len(code), str(f.relative_to(root))))
            funcs += [(n, fn, str(f.relative_to(root))) for fn, n in functions(stripped)]
            n_lines = lines_outside_tests(text)
            if n_lines > MAX_FILE_LINES and not TABLE_MARK.search(text):
                long_files.append((n_lines, str(f.relative_to(root))))
    say(f"\n## {top} largest non-test files (non-blank, non-comment lines)")
    for n, f in sorted(files, reverse=True)[:top]:
        say(f"  {n:5}  {f}")
    say(f"\n## {top} longest non-test functions (lines)")
    for n, fn, f in sorted(funcs, reverse=True)[:top]:
        say(f"  {n:5}  {fn}  ({f})")
    over = [x for x in funcs if x[0] > MAX_FN_LINES]
    stray = stray_variable_reads(root)
    say()
    print("## checks (each should be 0)")
    print(f"core maths ({', '.join(PROTOCOL_FREE)}) -> protocol imports: {len(to_protocol)}")
    print(f"parent<->child loops (imports back up to an ancestor, all crates): {n_back}")
    print(f"stray UQ_* reads in daemon/src, daemon/eval/src, daemon/cli/src (outside config/settings.rs): {len(stray)}")
    for s in stray:
        print(f"  {s}")
    print(f"import cycles between files: {len(file_cycles)}")
    for c in file_cycles:
        print(f"  {c}")
    print(f"non-test files over {MAX_FILE_LINES} lines (all lines but their tests'): {len(long_files)}")
    for n, f in sorted(long_files, reverse=True):
        print(f"  {n:5}  {f}")
    print(f"non-test functions over {MAX_FN_LINES} lines: {len(over)}")
    for n, fn, f in sorted(over, reverse=True):
        print(f"  {n:5}  {fn}  ({f})")
    failed = [what for what, n in [("import cycles between files", len(file_cycles)),
                                   ("stray UQ_* reads", len(stray)),
                                   (f"files over {MAX_FILE_LINES} lines", len(long_files)),
                                   (f"functions over {MAX_FN_LINES} lines", len(over))] if n]
    if check and failed:
        print(f"structure check failed: {', '.join(failed)} (listed above): break a cycle with a "
              "leaf file for the shared types, read a UQ_* variable through "
              "daemon/src/config/settings.rs, split a long file by concern and a long function by "
              "what it does (docs/design.md, \"Where to change what\")", file=sys.stderr)
        sys.exit(1)


# A call with one string argument naming a UQ_ variable: env::var("UQ_X"), var_os("UQ_X"), env("UQ_X").
VARIABLE_READ = re.compile(r'\w\s*\(\s*"(UQ_[A-Z0-9_]+)"\s*\)')
# The extension's own variables and the docs' regeneration switch (config/tests.rs, NOT_SETTINGS).
NOT_SETTINGS = {"UQ_DAEMON", "UQ_SOCKET", "UQ_BLESS"}


def stray_variable_reads(root):
    """Reads of UQ_* variables in the daemon's, the evaluation tools' and the binary's non-test
    files beside daemon/src/config/settings.rs."""
    out = []
    for crate in SETTINGS_USERS:
        src = root / CRATES[crate]
        for f in sorted(src.rglob("*.rs")):
            rel = f.relative_to(src)
            if f.relative_to(root).as_posix() == "daemon/src/config/settings.rs" or is_test_file(rel):
                continue
            for n, line in enumerate(f.read_text().splitlines(), 1):
                for m in VARIABLE_READ.finditer(line.split("//")[0]):
                    if m.group(1) not in NOT_SETTINGS:
                        out.append(f"{CRATES[crate]}/{rel.as_posix()}:{n} reads {m.group(1)}")
    return out


if __name__ == "__main__":
    main()
