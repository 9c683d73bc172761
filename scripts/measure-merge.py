#!/usr/bin/env python3
"""Merge results.json files of scripts/measure-memory.sh (one per device call) into one fixture.

  measure-merge.py NAME=results.json [NAME=results.json ...] > testdata/measured/FILE.json

A NAME=FILE whose FILE is a fixture this script wrote starts from its calls (e.g.
`base=testdata/measured/h200-x2.json run5=results.json`).

Each call's machine, driver, Megatron commit and script version go under "runs" (keyed by NAME,
given in the order the calls ran); every configuration goes under "configs" with "run" naming its
call, the first call that measured it. A configuration measured again by a later call (a baseline
repeated on another machine) goes under "repeats", so that step times are compared only within
one run (one machine) and the repeat says how far two machines differ.
"""

import json
import sys

# run1 and run2 wrote "unfused" for Megatron-core's DotProductAttention; Megatron's AttnBackend
# (and the layouts' attention_backend) calls it "local" ("unfused" is Transformer Engine's
# UnfusedDotProductAttention), as measure_configs.py now writes it.
RENAMED = {"unfused": "local"}


def rename(args):
    if "attention_backend" in args:
        args["attention_backend"] = RENAMED.get(args["attention_backend"],
                                                args["attention_backend"])
    for sub in args.values():
        if isinstance(sub, dict):
            rename(sub)


def main():
    out = {"runs": {}, "configs": {}, "repeats": {}}
    for arg in sys.argv[1:]:
        name, path = arg.split("=", 1)
        with open(path) as f:
            doc = json.load(f)
        if "runs" in doc:
            # A fixture this script wrote (NAME is ignored): its calls come first, as they ran.
            for key in out:
                out[key].update(doc[key])
            continue
        out["runs"][name] = {k: doc[k] for k in ("nvidia_smi", "megatron_commit",
                                                  "script_version") if k in doc}
        for cname, c in doc["configs"].items():
            c = dict(c, run=name)
            rename(c["arguments"])
            rename(c["stack"])
            c["env"] = dict(c["env"], script_version=doc.get("script_version"))
            target = "repeats" if cname in out["configs"] else "configs"
            key = cname if cname not in out[target] else f"{cname}@{name}"
            out[target][key] = c
    json.dump(out, sys.stdout, indent=1, sort_keys=False)
    print()


if __name__ == "__main__":
    main()
