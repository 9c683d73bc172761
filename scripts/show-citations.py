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
# A source: REPO@COMMIT, then backticked `path:line` and `:line` (same path).
SOURCE = re.compile(r"(Megatron-LM|Megatron-Bridge)@([0-9a-f]{7,40})((?:[ ,;]*`[^`]+`)+)")
CITE = re.compile(r"`([^`:]*):(\d+)`")


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
            line = int(c.group(2))
            try:
                text = subprocess.run(["git", "-C", git, "show", "%s:%s" % (commit, path)],
                                      check=True, capture_output=True, text=True).stdout.split("\n")
            except subprocess.CalledProcessError as e:
                print("%s@%s %s: %s" % (repo, commit, path, e.stderr.strip()), file=sys.stderr)
                bad += 1
                continue
            if line > len(text):
                print("%s@%s %s:%d: past the end (%d lines)" % (repo, commit, path, line, len(text)), file=sys.stderr)
                bad += 1
                continue
            print("%s@%s %s:%d: %s" % (repo, commit, path, line, text[line - 1].strip()))
            shown += 1
    if shown == 0 and bad == 0:
        print("no mirror given: set %s" % " or ".join(REPOS.values()), file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
