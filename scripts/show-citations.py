#!/usr/bin/env python3
"""Print every source line docs/rules.md cites as REPO@COMMIT `path:line`,
read from local git mirrors, so that a reviewer can check each citation
says what the rule claims.

  MEGATRON_LM_GIT=/path/to/Megatron-LM.git \
  MEGATRON_BRIDGE_GIT=/path/to/Megatron-Bridge.git scripts/show-citations.py

A mirror that is not given is skipped; a citation whose line does not
exist at its commit is an error (exit 1).
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPOS = {"Megatron-LM": "MEGATRON_LM_GIT", "Megatron-Bridge": "MEGATRON_BRIDGE_GIT"}
# A source: REPO@COMMIT, then backticked `path:line` and `:line` (same path),
# a line or a range of lines (`path:1024-1028`, `:3002-3029`).
SOURCE = re.compile(r"(Megatron-LM|Megatron-Bridge)@([0-9a-f]{7,40})((?:[ ,;]*`[^`]+`)+)")
CITE = re.compile(r"`([^`:]*):(\d+)(?:-(\d+))?`")


def main():
    with open(os.path.join(ROOT, "docs", "rules.md")) as f:
        doc = f.read()
    bad, shown = 0, 0
    for m in SOURCE.finditer(doc):
        repo, commit, cites = m.group(1), m.group(2), m.group(3)
        git = os.environ.get(REPOS[repo])
        if not git:
            continue
        path = None
        for c in CITE.finditer(cites):
            path = c.group(1) or path
            first = int(c.group(2))
            last = int(c.group(3) or first)
            where = "%s:%d" % (path, first) + ("-%d" % last if last != first else "")
            if path is None:
                print("%s@%s `:%s`: a line with no path before it" % (repo, commit, c.group(0)[2:-1]), file=sys.stderr)
                bad += 1
                continue
            try:
                text = subprocess.run(["git", "-C", git, "show", "%s:%s" % (commit, path)],
                                      check=True, capture_output=True, text=True).stdout.split("\n")
            except subprocess.CalledProcessError as e:
                print("%s@%s %s: %s" % (repo, commit, path, e.stderr.strip()), file=sys.stderr)
                bad += 1
                continue
            if last > len(text) or last < first:
                print("%s@%s %s: past the end (%d lines)" % (repo, commit, where, len(text)), file=sys.stderr)
                bad += 1
                continue
            print("%s@%s %s: %s" % (repo, commit, where, text[first - 1].strip()))
            shown += 1
    if shown == 0 and bad == 0:
        print("no mirror given: set %s" % " or ".join(REPOS.values()), file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
