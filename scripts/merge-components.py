#!/usr/bin/env python3
"""Add one device call's component measurements to testdata/measured/components-h200.json.

  merge-components.py RUN COMPONENTS_JSON [STEPS_RUN=RESULTS_JSON ...] --machine TEXT \
      --megatron-commit SHA --script-version HEX

RUN names the call (c6, ...): its env goes under "runs", each record of every list in
COMPONENTS_JSON (scripts/measure-components.py's output) is appended to the same list with
"run": RUN. Each STEPS_RUN=RESULTS_JSON (scripts/measure-memory.sh's results.json of whole
steps measured again in the same call or on the same machine) adds its configurations to
"steps", trimmed to what a step-time comparison reads: config, run, arguments, stack, step,
env and each rank's step_seconds.
"""

import argparse
import json

PATH = "testdata/measured/components-h200.json"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("run")
    p.add_argument("components")
    p.add_argument("steps", nargs="*")
    p.add_argument("--machine", required=True)
    p.add_argument("--megatron-commit", required=True)
    p.add_argument("--script-version", required=True)
    o = p.parse_args()
    with open(PATH) as f:
        out = json.load(f)
    with open(o.components) as f:
        new = json.load(f)
    if o.run in out["runs"]:
        raise SystemExit(f"{o.run} is already in {PATH}")
    env = dict(new["env"], megatron_commit=o.megatron_commit, script_version=o.script_version,
               machine=o.machine)
    parts = [k for k, v in new.items() if k != "env" and v]
    env["parts"] = ",".join(parts)
    out["runs"][o.run] = env
    for k in parts:
        out.setdefault(k, []).extend(dict(r, run=o.run) for r in new[k])
    for arg in o.steps:
        run, path = arg.split("=", 1)
        with open(path) as f:
            res = json.load(f)
        for name, r in res["configs"].items():
            out.setdefault("steps", []).append({
                "config": name, "run": run, "arguments": r["arguments"], "stack": r["stack"],
                "step": r["step"], "env": dict(r["env"], script_version=res["script_version"]),
                "step_seconds": [x["step_seconds"] for x in r["ranks"]]})
    with open(PATH, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
