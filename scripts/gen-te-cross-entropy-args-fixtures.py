#!/usr/bin/env python3
"""Runs Megatron-LM's own argument validation on the loss's fusion keys and
writes internal/validate/testdata/te-cross-entropy-args-megatron.json,
which internal/validate's TestTECrossEntropyArgsMatchMegatron compares with
the rule te-cross-entropy-fusion-disabled on target megatron-lm (the
refusal in megatron/training/arguments.py:1697-1702 at COMMIT, PR #5115;
scripts/gen-te-cross-entropy-fixtures.py runs ModelParallelConfig, which
targets core and megatron-bridge build without validate_args).

What runs is examples/mimo/pretrain_mimo.py's _parse_and_validate (its own
parser, Megatron-LM's parse_args and validate_args, the example's grid
check) on the argv of a one-rank language-only launch
(scripts/gen-p2p-overlap-fixtures.py's, at pp 1), with
--cross-entropy-loss-fusion or not and --cross-entropy-fusion-impl native
or te: the argv mimoplan's launch plan writes for those keys.

Upstream's code is never committed: megatron/ and examples/mimo are
extracted from the Megatron-LM mirror at COMMIT into a scratch folder
(--extract) and run there (--run) on CPU, packages the machine lacks
stubbed as scripts/gen-mimo-vpp-fixtures.py does; run it with the Python
3.12 the fixture names (3.11's typing lacks `override`, which Megatron
imports).

Usage:
  scripts/gen-te-cross-entropy-args-fixtures.py --extract DIR [--mirror MIRROR]
  scripts/gen-te-cross-entropy-args-fixtures.py --run DIR [--out FILE]
"""

import upstream_stub

mimovpp = upstream_stub.script("mimovpp", "gen-mimo-vpp-fixtures.py")
p2p = upstream_stub.script("p2p", "gen-p2p-overlap-fixtures.py")

COMMIT = mimovpp.COMMIT


def cases():
    """name -> (cross_entropy_loss_fusion, cross_entropy_fusion_impl, argv)."""
    out = {}
    for fusion in (False, True):
        for impl in ("native", "te"):
            argv = p2p.base(1) + ["--cross-entropy-fusion-impl", impl]
            if fusion:
                argv += ["--cross-entropy-loss-fusion"]
            out[f"{'fusion' if fusion else 'no-fusion'}-{impl}"] = (fusion, impl, argv)
    return out


def one_case(root, name, stubs):
    p2p.parse_and_validate(root, cases()[name][2], 1, stubs,
                           ["cross_entropy_loss_fusion", "cross_entropy_fusion_impl"])


def fields(case):
    fusion, impl, argv = case
    return {"cross_entropy_loss_fusion": fusion, "cross_entropy_fusion_impl": impl, "argv": argv}


if __name__ == "__main__":
    upstream_stub.case_main(__file__, COMMIT, mimovpp.MIRROR, mimovpp.extract,
                            "internal/validate/testdata/te-cross-entropy-args-megatron.json", cases, fields, one_case)
