"""``python -m uqlite``: paths of the installed pieces, for the shell.

    python -m uqlite path     # the extension, for sqlite3's .load
    python -m uqlite daemon   # the uqd binary
    eval "$(python -m uqlite env)" && "$(python -m uqlite daemon)" score answers.db answers
"""

import shlex
import sys

from .runtime import __version__, daemon_path, loadable_path, runtime_env


def main(argv):
    cmd = argv[0] if argv else "env"
    if cmd == "path":
        print(loadable_path())
    elif cmd == "daemon":
        print(daemon_path())
    elif cmd == "env":
        for k, v in runtime_env().items():
            print(f"export {k}={shlex.quote(v)}")
    elif cmd == "version":
        print(__version__)
    else:
        print(f"unknown command {cmd!r}: use path, daemon, env or version", file=sys.stderr)
        return 2
    return 0


sys.exit(main(sys.argv[1:]))
