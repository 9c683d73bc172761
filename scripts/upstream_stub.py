"""What the fixture scripts (scripts/gen-*.py) share to run upstream's own
code without committing it: files read or copied from a mirror at a commit
(into a scratch folder), modules made from those files, a stub for the
packages the code imports but never calls (torch and the like), the
syntax-tree lookup that takes one function out of a file, and the command
line of the scripts that run upstream case by case, each case in a fresh
process that stubs what it finds missing (case_main, run_cases).

A script of this folder imports it as `import upstream_stub` (Python puts
the script's own folder on sys.path). scripts/gen-mimo-vpp-fixtures.py keeps
its own Stub: it runs whole packages, on the device with real torch, and its
stub stands in for numbers and versions too.
"""

import argparse
import ast
import importlib.util
import io
import json
import os
import subprocess
import sys
import tarfile
import traceback
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


def raised_at(e, name):
    """The line of the innermost frame of e's traceback in the code module() compiled as name."""
    return [f.lineno for f in traceback.extract_tb(e.__traceback__) if f.filename == name][-1]


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


def write_fixture(path, script, **fields):
    """Writes a fixture at path: fields with the script that made it and the Python it ran on,
    keys sorted, as every gen-*-fixtures.py writes them."""
    fixture = {"generated_by": "scripts/" + os.path.basename(script), "python": sys.version.split()[0],
               **fields}
    with open(path, "w") as f:
        json.dump(fixture, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(fields.get('cases', {}))} cases to {path}")


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



def script(name, filename):
    """Another script of this folder (its name has dashes, so it cannot be
    imported) as a module called name."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), filename)
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m

# How many packages a case may have stubbed before its "missing" result
# stands.
MAX_STUBS = 30


def run_cases(script, root, cases, fields):
    """Runs each case of cases (name -> what the script knows of it) in a
    fresh process (script --case NAME --root ROOT --stubs A,B), which prints
    its result as a line "RESULT {json}". While a case reports a missing
    module ({"outcome": "missing", "module": name}) its package is stubbed
    and the case run again; a stub found for one case stays for the rest.
    Each result gains fields(case). Returns the results and the stubs."""
    results, stubs = {}, []
    for name, case in cases.items():
        while True:
            p = subprocess.run([sys.executable, script, "--case", name, "--root", root, "--stubs", ",".join(stubs)],
                               capture_output=True, text=True, timeout=240)
            lines = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
            if not lines:
                sys.exit(f"{name}: no result\n{p.stderr[-2000:]}")
            res = json.loads(lines[-1][len("RESULT "):])
            if res["outcome"] != "missing" or res["module"] is None or len(stubs) > MAX_STUBS:
                break
            stubs.append(res["module"].split(".")[0])
        res.update(fields(case))
        results[name] = res
        print(name, json.dumps({k: res.get(k) for k in ("outcome", "where", "result")}), flush=True)
    return results, stubs


def case_main(script, commit, mirror, extract, out, cases, fields, one_case, doc=None):
    """The command line of a script that runs upstream's code case by case
    from a scratch folder (scripts/gen-p2p-overlap-fixtures.py and the like):
    --extract DIR [--mirror MIRROR] calls extract(mirror, DIR), which copies
    upstream at commit there with a file COMMIT; --run DIR [--out FILE] runs
    cases() through run_cases and writes the fixture (megatron_commit,
    python, stubbed, cases and the fields of doc); --case, --root and
    --stubs are run_cases' calls of one_case(root, name, stubs)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--extract")
    ap.add_argument("--mirror", default=mirror)
    ap.add_argument("--run")
    ap.add_argument("--out", default=out)
    ap.add_argument("--case")
    ap.add_argument("--root")
    ap.add_argument("--stubs", default="")
    a = ap.parse_args()
    if a.case:
        one_case(a.root, a.case, [s for s in a.stubs.split(",") if s])
    elif a.extract:
        extract(a.mirror, a.extract)
    elif a.run:
        root = os.path.abspath(a.run)
        results, stubs = run_cases(script, root, cases(), fields)
        with open(os.path.join(root, "COMMIT")) as f:
            got = f.read().strip()
        if got != commit:
            sys.exit(f"{root} holds Megatron-LM at {got}, not {commit}")
        write_fixture(a.out, script, megatron_commit=commit, stubbed=stubs, cases=results, **(doc or {}))
    else:
        ap.error("give --extract DIR or --run DIR")
