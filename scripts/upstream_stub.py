"""What the fixture scripts (scripts/gen-*.py) share to run upstream's own
code without committing it: files read or copied from a mirror at a commit
(into a scratch folder), modules made from those files, a stub for the
packages the code imports but never calls (torch and the like), and the
syntax-tree lookup that takes one function out of a file.

A script of this folder imports it as `import upstream_stub` (Python puts
the script's own folder on sys.path). scripts/gen-mimo-vpp-fixtures.py keeps
its own Stub: it runs whole packages, on the device with real torch, and its
stub stands in for numbers and versions too.
"""

import ast
import io
import subprocess
import sys
import tarfile
import types


def head(mirror):
    """The commit the mirror is at."""
    return subprocess.check_output(["git", "-C", mirror, "rev-parse", "HEAD"], text=True).strip()


def show(mirror, commit, path):
    """The text of one file at commit."""
    return subprocess.check_output(["git", "-C", mirror, "show", f"{commit}:{path}"], text=True)


def python_files(mirror, commit, folder):
    """The .py files under folder at commit (none when it has no such folder)."""
    out = subprocess.check_output(["git", "-C", mirror, "ls-tree", "-r", "--name-only", commit, folder], text=True)
    return [f for f in out.split() if f.endswith(".py")]


def extract(mirror, commit, files, dest):
    """Copies files (or folders) as they are at commit into dest."""
    data = subprocess.check_output(["git", "-C", mirror, "archive", commit, *files])
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, filter="data")
        else:  # Python before 3.11.4: the archive is upstream's own, from git
            tar.extractall(dest)


def module(name, path=None, src=None):
    """Registers a module under name, run from the file at path or from
    src (neither: an empty one, e.g. a package to hang others on)."""
    m = types.ModuleType(name)
    if path:
        m.__file__ = path
        src = open(path).read()
    sys.modules[name] = m
    if src is not None:
        exec(compile(src, path or name, "exec"), m.__dict__)
    return m


class Stub(types.ModuleType):
    """A module whose every attribute is another stub: enough for imports
    and annotations that the code run never calls."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Stub(self.__name__ + "." + name)

    def __call__(self, *a, **k):
        return Stub(self.__name__ + "()")

    def __mro_entries__(self, bases):
        return (object,)

    def __or__(self, other):
        return self

    __ror__ = __or__


def stub(*names):
    """Registers a Stub under each name (torch, torch.distributed, ...)."""
    for name in names:
        sys.modules[name] = Stub(name)


def function(tree, name, cls=None):
    """The top-level function name of a parsed file (or the method of class
    cls); exits when upstream no longer defines it."""
    body = tree.body
    if cls:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == cls).body
    for n in body:
        if isinstance(n, ast.FunctionDef) and n.name == name:
            return n
    sys.exit(f"upstream no longer defines {cls + '.' if cls else ''}{name}")
