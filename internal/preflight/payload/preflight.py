#!/usr/bin/env python3
"""mimoplan preflight: prove a MIMO layout's process groups on the real GPUs.

Run under torchrun, one process per GPU (mimoplan preflight prints the line):

    torchrun --standalone --nproc-per-node=G preflight.py --plan plan.json

plan.json is what `mimoplan render LAYOUT --format json` prints. Every rank

  1. binds the GPU of its LOCAL_RANK and checks, through the rendezvous
     store, that every rank holds the same plan and sits on its own GPU at
     the place torchrun's static rank assignment gives it;
  2. builds every group of every module the way Megatron's HyperCommGrid
     does (from the module's sizes, not from the plan's lists), calling
     torch.distributed.new_group on every rank in one global order;
  3. compares get_process_group_ranks of each of its groups with the plan;
  4. all-reduces a one-hot vector (1 at its own rank) in each of its groups:
     the sum is exactly the set of ranks that took part, which must be the
     plan's group;
  5. times an all-reduce of --bytes in each group kind (bus bandwidth).

Rank 0 gathers every rank's observations and prints one table. A step that
does not finish within --timeout seconds is reported (which step, which
ranks of the group never reached it and where they are) instead of hanging.

Exit status: 0 every check passed; 1 a check failed; 2 the plan or the
environment is unusable; 3 a step timed out. (torchrun turns any worker's
non-zero status into its own 1.)

Only the standard library and torch are used, and torch is imported inside
run() so that the plan logic can be imported and tested without it.
"""

import argparse
import faulthandler
import hashlib
import json
import math
import os
import signal
import socket
import sys
import threading
import time

EXIT_OK, EXIT_FAILED, EXIT_UNUSABLE, EXIT_TIMEOUT = 0, 1, 2, 3

DEFAULT_BYTES = 64 << 20
DEFAULT_TIMEOUT = 60.0
DEFAULT_ITERS = 10
# The largest world a layout may have (internal/layout.MaxWorldSize): the
# plan checks' cost is bounded by the world, so a plan claiming more is
# refused before anything is counted.
MAX_WORLD = 1 << 24
MAX_RANK_LINES = 16

LANGUAGE = "language"
BASE_DIMS = ("tp", "gtp_remat", "cp", "dp", "pp")
EXPERT_DIMS = ("expt_tp", "ep", "expt_gtp_remat", "expt_dp", "pp")

# Every group kind with the HyperCommGrid dims that build it and whether it
# is enumerated over the expert view, in the order of `render --format json`
# (Megatron's pg_collection_from_grid).
GROUP_KINDS = (
    ("tp", ("tp",), False),
    ("cp", ("cp",), False),
    ("pp", ("pp",), False),
    ("dp", ("dp",), False),
    ("dp_cp", ("dp", "cp"), False),
    ("dp_cp_gtp_remat", ("gtp_remat", "dp", "cp"), False),
    ("gtp_remat", ("gtp_remat",), False),
    ("tp_cp", ("tp", "cp"), False),
    ("tp_dp", ("tp", "gtp_remat", "dp"), False),
    ("tp_dp_cp", ("tp", "gtp_remat", "dp", "cp"), False),
    ("mp", ("tp", "gtp_remat", "pp"), False),
    ("intra_dist_opt", ("tp", "gtp_remat", "cp", "dp", "pp"), False),
    ("ep", ("ep",), True),
    ("expt_tp", ("expt_tp",), True),
    ("expt_gtp_remat", ("expt_gtp_remat",), True),
    ("expt_dp", ("expt_dp",), True),
    ("expt_dp_gtp_remat", ("expt_gtp_remat", "expt_dp"), True),
    ("tp_ep", ("expt_tp", "ep"), True),
    ("tp_ep_pp", ("expt_tp", "ep", "pp"), True),
    ("tp_ep_pp_with_egtp_remat", ("expt_tp", "ep", "expt_gtp_remat", "pp"), True),
)
# Kinds only the language module has; derived from its pp groups and not a
# partition of the module's ranks.
LANGUAGE_KINDS = ("embd", "pos_embd")
SIZE_FIELDS = BASE_DIMS[:4] + ("pp",) + EXPERT_DIMS[:4]


class PlanError(Exception):
    """The plan or this rank's environment cannot be used; the message
    lists every problem found. A problem of the plan is the same on every
    rank that read the same file, so one rank per node says it; per_rank
    marks a problem of this rank alone, which it says itself."""

    def __init__(self, msg, per_rank=False):
        Exception.__init__(self, msg)
        self.per_rank = per_rank


# --- the groups Megatron builds ----------------------------------------------


def rank_enum(shape, names, offset, dims):
    """HyperCommGrid.get_rank_enum: the groups of ranks that differ only in
    dims. The first dim varies fastest, inside a group and across groups."""
    for d in dims:
        if d not in names:
            raise ValueError("dim %r is not one of %s" % (d, ", ".join(names)))
    inner, outer = [0], [0]
    stride = 1
    for name, size in zip(names, shape):
        offs = inner if name in dims else outer
        offs = [o + k * stride for k in range(size) for o in offs]
        if name in dims:
            inner = offs
        else:
            outer = offs
        stride *= size
    return [[offset + o + i for i in inner] for o in outer]


def kinds_of(module_name):
    """The group kinds a module gets, in plan order."""
    kinds = [k for k, _, _ in GROUP_KINDS]
    if module_name == LANGUAGE:
        kinds += LANGUAGE_KINDS
    return kinds


def module_groups(mod):
    """Every group of a plan module, built from its sizes as Megatron does:
    {kind: [[ranks], ...]} in plan order."""
    base = [mod[d] for d in BASE_DIMS]
    expert = [mod[d] for d in EXPERT_DIMS]
    out = {}
    for kind, dims, is_expert in GROUP_KINDS:
        if is_expert:
            out[kind] = rank_enum(expert, EXPERT_DIMS, mod["rank_offset"], dims)
        else:
            out[kind] = rank_enum(base, BASE_DIMS, mod["rank_offset"], dims)
    if mod["name"] == LANGUAGE:
        # default_embedding_ranks / default_position_embedding_ranks, per pp group.
        out["embd"] = [[g[0], g[-1]] if len(g) > 1 else [g[0]] for g in out["pp"]]
        out["pos_embd"] = [[g[0]] for g in out["pp"]]
    return out


# --- plan checks ---------------------------------------------------------------


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def check_plan(plan, world_size=None):
    """Every problem that makes the plan unusable, as messages; [] when it
    can be run. world_size is the launcher's WORLD_SIZE, when known."""
    if not isinstance(plan, dict):
        return ["the plan is not a JSON object"]
    errs = []
    if plan.get("version") != 1:
        errs.append("version is %r, want 1" % (plan.get("version"),))
    world = plan.get("world_size")
    if not _is_int(world) or world < 1:
        return errs + ["world_size is %r, want a positive integer" % (world,)]
    # The world first, and nothing more when it is wrong: every check below
    # costs up to the world's size, which is then bounded by the ranks
    # really started (or by MAX_WORLD).
    if world_size is not None and world != world_size:
        return errs + [
            "the plan is for %d ranks but the launcher started %d (WORLD_SIZE): "
            "run it with --nproc-per-node and --nnodes that multiply to %d" % (world, world_size, world)
        ]
    if world > MAX_WORLD:
        return errs + ["world_size %d is more than a layout may have (%d)" % (world, MAX_WORLD)]
    mods = plan.get("modules")
    if not isinstance(mods, list) or not mods:
        return errs + ["modules is missing or empty"]
    spans, names = [], set()
    for i, m in enumerate(mods):
        where = "modules[%d]" % i
        if not isinstance(m, dict):
            errs.append("%s is not an object" % where)
            continue
        name = m.get("name")
        if not isinstance(name, str) or not name:
            errs.append("%s has no name" % where)
            continue
        where = "module %r" % name
        if name in names:
            errs.append("%s appears twice" % where)
        names.add(name)
        bad = [f for f in ("rank_offset", "num_ranks") + SIZE_FIELDS if not _is_int(m.get(f))]
        bad += [f for f in SIZE_FIELDS + ("num_ranks",) if _is_int(m.get(f)) and m[f] < 1]
        if _is_int(m.get("rank_offset")) and m["rank_offset"] < 0:
            bad.append("rank_offset")
        if bad:
            errs.append("%s: %s must be whole numbers, sizes at least 1" % (where, ", ".join(sorted(set(bad)))))
            continue
        lo, n = m["rank_offset"], m["num_ranks"]
        if lo + n > world:
            errs.append("%s: ranks [%d, %d) are outside the world of %d" % (where, lo, lo + n, world))
            continue
        spans.append((lo, lo + n))
        dense = m["tp"] * m["gtp_remat"] * m["cp"] * m["dp"] * m["pp"]
        expert = m["expt_tp"] * m["ep"] * m["expt_gtp_remat"] * m["expt_dp"] * m["pp"]
        if dense != n:
            errs.append("%s: tp*gtp_remat*cp*dp*pp = %d, but num_ranks is %d" % (where, dense, n))
        if expert != n:
            errs.append("%s: expt_tp*ep*expt_gtp_remat*expt_dp*pp = %d, but num_ranks is %d" % (where, expert, n))
        errs += _check_groups(m, where, lo, lo + n)
    if LANGUAGE not in names:
        errs.append("no module is named %r" % LANGUAGE)
    if spans and len(spans) == len(mods):
        errs += _check_spans(spans, world)
    return errs


def _check_groups(m, where, lo, hi):
    groups = m.get("groups")
    if not isinstance(groups, dict):
        return ["%s: groups is missing" % where]
    errs = []
    kinds = kinds_of(m["name"])
    for extra in sorted(set(groups) - set(kinds)):
        errs.append("%s: unknown group kind %r" % (where, extra))
    for kind in kinds:
        lists = groups.get(kind)
        if not isinstance(lists, list) or not lists:
            errs.append("%s: group kind %s is missing or empty" % (where, kind))
            continue
        seen = {}
        for gi, g in enumerate(lists):
            if not isinstance(g, list) or not g or not all(_is_int(r) for r in g):
                errs.append("%s: %s[%d] is not a list of ranks" % (where, kind, gi))
                continue
            outside = [r for r in g if not lo <= r < hi]
            if outside:
                errs.append("%s: %s[%d] has ranks %s outside the module's ranks [%d, %d)" % (where, kind, gi, outside, lo, hi))
            if len(set(g)) != len(g):
                errs.append("%s: %s[%d] lists a rank twice: %s" % (where, kind, gi, g))
            for r in g:
                seen.setdefault(r, []).append(gi)
        if kind in LANGUAGE_KINDS:
            continue
        twice = sorted(r for r, gs in seen.items() if len(set(gs)) > 1)
        if twice:
            errs.append("%s: %s puts ranks %s in more than one group" % (where, kind, _fold(twice)))
        missing = [r for r in range(lo, hi) if r not in seen]
        if missing:
            errs.append("%s: %s leaves ranks %s in no group" % (where, kind, _fold(missing)))
    return errs


def _check_spans(spans, world):
    if all(s == spans[0] for s in spans):
        if spans[0] != (0, world):
            return ["the colocated modules span [%d, %d), not the whole world [0, %d)" % (spans[0] + (world,))]
        return []
    covered = [0] * world
    for a, b in spans:
        for r in range(a, b):
            covered[r] += 1
    errs = []
    twice = [r for r, c in enumerate(covered) if c > 1]
    if twice:
        errs.append("module spans overlap on ranks %s without being identical" % _fold(twice))
    none = [r for r, c in enumerate(covered) if c == 0]
    if none:
        errs.append("ranks %s belong to no module" % _fold(none))
    return errs


def plan_group_of(plan_mod, kind, rank):
    """The plan's group of one kind that holds rank, or None."""
    for g in plan_mod["groups"].get(kind, []):
        if rank in g:
            return g
    return None


def _fold(ranks, limit=8):
    ranks = list(ranks)
    if len(ranks) <= limit:
        return "[%s]" % ",".join(str(r) for r in ranks)
    return "[%s,...,%d] (%d ranks)" % (",".join(str(r) for r in ranks[: limit - 1]), ranks[-1], len(ranks))


# --- the schedule every rank follows ------------------------------------------


class Group:
    """One process group to build: module, kind, index within the kind."""

    __slots__ = ("gid", "module", "kind", "index", "ranks")

    def __init__(self, gid, module, kind, index, ranks):
        self.gid, self.module, self.kind, self.index, self.ranks = gid, module, kind, index, list(ranks)

    @property
    def label(self):
        return "%s/%s#%d" % (self.module, self.kind, self.index)

    def __repr__(self):
        return "%s %s" % (self.label, _fold(self.ranks))


def build_groups(plan):
    """Every group of every module in the one global order: modules in plan
    order, kinds in plan order, groups in HyperCommGrid order."""
    out = []
    for m in plan["modules"]:
        built = module_groups(m)
        for kind in kinds_of(m["name"]):
            for i, ranks in enumerate(built[kind]):
                out.append(Group(len(out), m["name"], kind, i, ranks))
    return out


class Step:
    """One thing every taking-part rank does, in global order. peers(rank)
    is who rank waits for in it."""

    __slots__ = ("index", "what", "desc", "ranks", "_peers")

    def __init__(self, index, what, desc, ranks, peers=None):
        self.index, self.what, self.desc, self.ranks = index, what, desc, ranks
        self._peers = peers

    def takes_part(self, rank):
        return self.ranks is None or rank in self.ranks

    def peers(self, rank, world):
        if self._peers is not None:
            return self._peers(rank)
        return list(range(world)) if self.ranks is None else list(self.ranks)

    def __repr__(self):
        return "step %d (%s)" % (self.index, self.desc)


def kind_steps(groups):
    """The groups of each (module, kind) with more than one member, in
    order: the unit of the bandwidth timing."""
    return [(k, gs) for k, gs in _by_kind(groups) if len(gs[0].ranks) > 1]


def schedule(groups, world, bandwidth=True):
    """The global step list. Binding the GPU is each rank's own step;
    NCCL's init and the create steps involve every rank (new_group is
    collective over the world); check steps only the group's members."""
    steps = [
        Step(0, "bind", "binding the GPU of LOCAL_RANK (CUDA init)", None, lambda r: [r]),
        Step(1, "init", "init_process_group (NCCL init over the world)", None),
        Step(2, "exchange", "placement and plan exchange through the store", None),
    ]
    create, check, timing = {}, {}, {}
    for g in groups:
        create[g.gid] = len(steps)
        steps.append(Step(len(steps), "create", "new_group %r" % g, None))
    for g in groups:
        check[g.gid] = len(steps)
        steps.append(Step(len(steps), "check", "all-reduce %r" % g, frozenset(g.ranks)))
    if bandwidth:
        for (module, kind), gs in kind_steps(groups):
            members = frozenset(r for g in gs for r in g.ranks)
            of = {r: g.ranks for g in gs for r in g.ranks}
            timing[(module, kind)] = len(steps)
            steps.append(Step(len(steps), "bandwidth", "timed all-reduce %s/%s" % (module, kind), members, of.get))
    steps.append(Step(len(steps), "gather", "gather of every rank's results on rank 0", None))
    return steps, create, check, timing


def creation_order(groups, rank, inject):
    """The order in which this rank creates the groups: the global order,
    unless --inject reorder:RANK asks this rank to swap the first two groups
    whose members differ (what a rank running other code would do)."""
    order = list(groups)
    if inject and inject[0] == "reorder" and inject[1] == rank:
        for j in range(1, len(order)):
            if order[j].ranks != order[0].ranks:
                order[0], order[j] = order[j], order[0]
                break
    return order


# --- reports --------------------------------------------------------------------


def timeout_report(step, rank, peers, entered, steps, timeout):
    """What a rank says when step did not finish within timeout seconds.
    entered maps each peer to the last step index it reported entering, or
    None when it never reported."""
    lines = ["rank %d: %s did not finish within %gs" % (rank, step, timeout)]
    late, said = [], 0
    for p in peers:
        e = entered.get(p)
        if p == rank:
            continue
        if e is None:
            late.append(p)
            why = "did not answer: it never reported progress (not started, or stuck before the first step)"
        elif e < step.index:
            late.append(p)
            why = "did not answer: it is still at %s" % steps[e]
        elif e > step.index:
            why = "went past this step without finishing it with this rank (it is at %s)" % steps[e]
        else:
            continue
        said += 1
        if said <= MAX_RANK_LINES:
            lines.append("  rank %d %s" % (p, why))
    if said > MAX_RANK_LINES:
        lines.append("  ... and %d more ranks" % (said - MAX_RANK_LINES))
    if late:
        lines.append("  ranks that did not answer: %s" % _fold(late))
    elif list(peers) == [rank]:
        lines.append("  no other rank takes part: this rank is stuck in it (a GPU or driver problem)")
    else:
        lines.append(
            "  every rank of %s reached this step: the collective itself did not complete "
            "(NCCL transport, or ranks that built this group differently)" % _fold(peers)
        )
    return lines


def observe(plan_mod, group, rank, members, summed):
    """One rank's record of one group: what new_group gave (members), what
    the one-hot all-reduce summed ({rank: count}) and what the plan says."""
    want = plan_group_of(plan_mod, group.kind, rank)
    return {
        "plan": want,
        "members": list(members),
        "sum": {str(r): c for r, c in sorted(summed.items())},
    }


def members_ok(obs):
    return obs["plan"] is not None and obs["members"] == obs["plan"]


def sum_ok(obs):
    if obs["plan"] is None:
        return False
    return sorted(int(r) for r in obs["sum"]) == sorted(obs["plan"]) and all(c == 1 for c in obs["sum"].values())


def _sum_text(s):
    return "[%s]" % ",".join(r if c == 1 else "%sx%d" % (r, c) for r, c in s.items())


def check_placement(infos):
    """(errors, warnings) about where the ranks run, from every rank's info
    dict (rank, host, local_rank, local_world_size, device, uuid, plan_sha).
    Several torchrun nodes on one host is only a warning: the groups still
    work, but the layout's node locality is not what runs."""
    errs, warns = [], []
    by_rank = sorted(infos, key=lambda i: i["rank"])
    sha0 = by_rank[0]["plan_sha"]
    other = [i["rank"] for i in by_rank if i["plan_sha"] != sha0]
    if other:
        errs.append("plan differs from rank 0's on ranks %s: every node needs the same plan.json" % _fold(other))
    payload0 = by_rank[0].get("payload_sha")
    other = [i["rank"] for i in by_rank if i.get("payload_sha") != payload0]
    if other:
        errs.append("preflight.py differs from rank 0's on ranks %s" % _fold(other))
    owners = {}
    for i in by_rank:
        owners.setdefault(i["uuid"], []).append(i["rank"])
    for uuid, ranks in owners.items():
        if len(ranks) > 1:
            errs.append("ranks %s share one GPU (%s)" % (_fold(ranks), uuid))
    hosts = {}
    for i in by_rank:
        lws = i["local_world_size"]
        if i["local_rank"] != i["rank"] % lws:
            errs.append(
                "rank %d has LOCAL_RANK %d; the layout places it on local GPU %d (rank %% %d)"
                % (i["rank"], i["local_rank"], i["rank"] % lws, lws)
            )
        hosts.setdefault(i["rank"] // lws, set()).add(i["host"])
    for node, hs in sorted(hosts.items()):
        if len(hs) > 1:
            errs.append("node %d's ranks run on several hosts: %s" % (node, ", ".join(sorted(hs))))
    nodes_of = {}
    for node, hs in hosts.items():
        for h in hs:
            nodes_of.setdefault(h, set()).add(node)
    for h, ns in sorted(nodes_of.items()):
        if len(ns) > 1:
            warns.append("host %s runs the ranks of nodes %s: the layout's nodes are not separate machines here" % (h, sorted(ns)))
    return errs, warns


def placement_lines(infos):
    """One line per host: its ranks and GPUs."""
    by_host = {}
    for i in sorted(infos, key=lambda i: i["rank"]):
        by_host.setdefault(i["host"], []).append(i)
    lines = []
    for host, rs in by_host.items():
        names = sorted(set(i["gpu"] for i in rs))
        lines.append(
            "  %s: ranks %s on cuda devices %s, %d distinct GPUs (%s)"
            % (host, _fold([i["rank"] for i in rs]), _fold([i["device"] for i in rs]),
               len(set(i["uuid"] for i in rs)), ", ".join(names))
        )
    return lines


def bus_bandwidth(nbytes, seconds, n):
    """NCCL's bus bandwidth of an all-reduce, bytes/s: algbw * 2(n-1)/n."""
    if seconds <= 0 or n < 2:
        return None
    return nbytes / seconds * 2.0 * (n - 1) / n


def evaluate(groups, results, nbytes):
    """Rank 0's verdict from every rank's results: (table rows, failure
    lines, number of groups that failed). A row is one (module, kind); a
    failure line names one group and one rank."""
    by_rank = {r["rank"]: r for r in results}
    rows, failures, bad = [], [], 0
    for (module, kind), gs in _by_kind(groups):
        m_ok = s_ok = 0
        slowest = None
        for g in gs:
            g_members = g_sum = True
            for r in g.ranks:
                obs = by_rank.get(r, {}).get("checks", {}).get(str(g.gid))
                if obs is None:
                    g_members = g_sum = False
                    failures.append("%r: rank %d reported no result" % (g, r))
                    continue
                if not members_ok(obs):
                    g_members = False
                    failures.append(
                        "%r: rank %d: new_group gave %s, the plan has %s"
                        % (g, r, obs["members"], "no group with this rank" if obs["plan"] is None else obs["plan"])
                    )
                if not sum_ok(obs):
                    g_sum = False
                    failures.append(
                        "%r: rank %d: the all-reduce summed ranks %s, the plan predicts %s"
                        % (g, r, _sum_text(obs["sum"]), obs["plan"])
                    )
            m_ok += g_members
            s_ok += g_sum
            bad += not (g_members and g_sum)
            if len(g.ranks) > 1:
                times = [by_rank.get(r, {}).get("times", {}).get("%s/%s" % (module, kind)) for r in g.ranks]
                if None not in times:
                    bw = bus_bandwidth(nbytes, max(times), len(g.ranks))
                    if bw is not None and (slowest is None or bw < slowest):
                        slowest = bw
        rows.append(
            {
                "module": module,
                "kind": kind,
                "groups": gs,
                "size": sorted(set(len(g.ranks) for g in gs)),
                "members_ok": m_ok,
                "sum_ok": s_ok,
                "busbw": slowest,
            }
        )
    return rows, failures, bad


def _by_kind(groups):
    """[((module, kind), [groups])] in schedule order."""
    out, index = [], {}
    for g in groups:
        key = (g.module, g.kind)
        if key not in index:
            index[key] = len(out)
            out.append((key, []))
        out[index[key]][1].append(g)
    return out


def format_table(rows, max_groups=4):
    head = ("MODULE", "GROUP", "SIZE", "MEMBERS OK", "SUM OK", "BUSBW GB/s", "RANKS")
    body = []
    for r in rows:
        n = len(r["groups"])
        shown = " ".join("[%s]" % ",".join(str(x) for x in g.ranks) for g in r["groups"][:max_groups])
        if n > max_groups:
            shown += " ... (%d groups)" % n
        body.append(
            (
                r["module"],
                r["kind"],
                "/".join(str(s) for s in r["size"]),
                "%d/%d" % (r["members_ok"], n),
                "%d/%d" % (r["sum_ok"], n),
                "-" if r["busbw"] is None else "%.1f" % (r["busbw"] / 1e9),
                shown,
            )
        )
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]
    lines = []
    for cells in [head] + body:
        lines.append("  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip())
    return lines


def parse_inject(value):
    """--inject reorder:RANK | stall:RANK, for testing preflight itself."""
    if not value:
        return None
    what, _, rank = value.partition(":")
    if what not in ("reorder", "stall") or not rank.isdigit():
        raise argparse.ArgumentTypeError("want reorder:RANK or stall:RANK, got %r" % value)
    return (what, int(rank))


def parse_args(argv):
    p = argparse.ArgumentParser(prog="preflight.py", description="Prove a mimoplan plan on the GPUs (run under torchrun).")
    p.add_argument("--plan", required=True, help="plan JSON (mimoplan render --format json)")
    p.add_argument("--bytes", type=int, default=DEFAULT_BYTES, help="all-reduce size for the bandwidth timing; 0 skips it (default 64 MiB)")
    p.add_argument("--iters", type=int, default=DEFAULT_ITERS, help="timed all-reduces per group kind (default %(default)s)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds one step may take before it is reported (default %(default)s)")
    p.add_argument("--lazy-init", action="store_true", help="do not bind the device at init: NCCL communicators are created at first use, not split from the world's")
    p.add_argument("--inject", type=parse_inject, default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    # The same rules as mimoplan's (internal/preflight Options.Check),
    # which refuses these before anything runs.
    if a.bytes < 0 or 0 < a.bytes < 4 or a.iters < 1 or not math.isfinite(a.timeout) or a.timeout <= 0:
        p.error("--bytes must be 0 or at least 4 (one float32), --iters >= 1, --timeout a finite number > 0")
    return a


# --- the distributed run ----------------------------------------------------------


def say(rank, lines, stream=None):
    """Print lines, prefixed with the rank unless it is rank 0's stdout."""
    stream = stream or sys.stdout
    prefix = "" if (rank == 0 and stream is sys.stdout) else "[rank %d] " % rank
    stream.write("".join(prefix + line + "\n" for line in lines))
    stream.flush()


class Tracker:
    """Publishes this rank's current step in the store and, from a thread,
    reports and ends the process when a step outlives the timeout. The
    watchdog has its own store connection: the main thread's may be blocked
    inside a store call."""

    def __init__(self, rank, world, steps, store, watch_store, timeout, prefix):
        self.rank, self.world, self.steps = rank, world, steps
        self.store, self.watch_store = store, watch_store
        self.timeout, self.prefix = timeout, prefix
        self.current, self.deadline = None, None
        self.lock = threading.Lock()
        threading.Thread(target=self._watch, name="preflight-watchdog", daemon=True).start()

    def key(self, rank):
        return "%s/entered/%d" % (self.prefix, rank)

    def enter(self, step):
        self.store.set(self.key(self.rank), str(step.index))
        with self.lock:
            self.current, self.deadline = step, time.monotonic() + self.timeout
        # Last resort when a C++ call holds the GIL and the watchdog cannot run.
        faulthandler.dump_traceback_later(self.timeout + 30, exit=True)

    def leave(self):
        with self.lock:
            self.current = None
        faulthandler.cancel_dump_traceback_later()

    def finish(self):
        """Hold every rank until rank 0 has printed: torchrun stops the
        other workers as soon as one exits non-zero."""
        done = "%s/printed" % self.prefix
        if self.rank == 0:
            self.store.set(done, "1")
            return
        deadline = time.monotonic() + self.timeout
        while not self.store.check([done]) and time.monotonic() < deadline:
            time.sleep(0.01)

    def _entered(self, peers):
        out = {}
        for p in peers:
            k = self.key(p)
            try:
                out[p] = int(self.watch_store.get(k)) if self.watch_store.check([k]) else None
            except Exception:  # the store itself is gone: say so per rank
                out[p] = None
        return out

    def _watch(self):
        while True:
            time.sleep(0.1)
            with self.lock:
                step, deadline = self.current, self.deadline
            if step is None or time.monotonic() < deadline:
                continue
            try:
                peers = step.peers(self.rank, self.world)
                lines = timeout_report(step, self.rank, peers, self._entered(peers), self.steps, self.timeout)
            except Exception as e:
                lines = ["rank %d: %s did not finish within %gs (%s)" % (self.rank, step, self.timeout, e)]
            say(self.rank, lines, sys.stderr)
            # NCCL may hang in teardown; nothing else can be learnt here.
            os._exit(EXIT_TIMEOUT)


# The run's tracker, for main() to name the step an exception came from.
TRACKERS = []
# The exit status, once rank 0 has printed the verdict.
VERDICT = []


def env_int(name, default=None):
    v = os.environ.get(name)
    if v is None:
        if default is None:
            raise PlanError("%s is not set: run preflight.py under torchrun" % name)
        return default
    return int(v)


def file_sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def wait_for(done):
    """Spin until done() is true; the watchdog ends the wait on timeout."""
    while not done():
        time.sleep(0.0002)


def human_bytes(n):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return "%d %s" % (n // size, unit)
    return "%d B" % n


def agent_store():
    """Whether MASTER_ADDR:MASTER_PORT is torchrun's agent store, which is
    up before any worker starts; otherwise rank 0 hosts the store inside
    init_process_group and no rank can connect before that."""
    return os.environ.get("TORCHELASTIC_USE_AGENT_STORE", "").lower() in ("1", "true")


def exit_now(code):
    """Flush and leave without tearing NCCL down: tearing down many
    communicators is slow and can block in C++ holding the GIL, where no
    Python timer could end it; the verdict is already out."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def plan_timeout(rank, path, timeout):
    say(rank, ["preflight: reading and checking %s did not finish within %gs" % (path, timeout)], sys.stderr)
    exit_now(EXIT_TIMEOUT)


def run(args):
    rank, world = env_int("RANK"), env_int("WORLD_SIZE")
    local_rank = env_int("LOCAL_RANK")
    local_world = env_int("LOCAL_WORLD_SIZE", world)
    # Reading and checking the plan runs under a watchdog of its own (the
    # tracker needs a checked plan): bounded as the checks are, a rank that
    # still takes longer than --timeout says so and leaves.
    watch = threading.Timer(args.timeout, plan_timeout, (rank, args.plan, args.timeout))
    watch.daemon = True
    watch.start()
    try:
        with open(args.plan, "rb") as f:
            raw = f.read()
        try:
            plan = json.loads(raw)
        except ValueError as e:
            raise PlanError("%s is not JSON: %s" % (args.plan, e))
        errs = check_plan(plan, world)
    finally:
        watch.cancel()
    if errs:
        raise PlanError("%s cannot be used:\n  %s" % (args.plan, "\n  ".join(errs)))
    if args.inject and args.inject[1] >= world:
        raise PlanError("--inject %s:%d names no rank of the %d" % (args.inject + (world,)))
    groups = build_groups(plan)
    steps, create_at, check_at, timing_at = schedule(groups, world, bandwidth=args.bytes > 0)
    plan_mods = {m["name"]: m for m in plan["modules"]}

    import datetime

    import torch
    import torch.distributed as dist

    addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
    prefix = "mimoplan-preflight/%s" % os.environ.get("TORCHELASTIC_RUN_ID", "run")

    def start_tracker():
        store = dist.TCPStore(addr, port, is_master=False, timeout=datetime.timedelta(seconds=args.timeout))
        watch_store = dist.TCPStore(addr, port, is_master=False, timeout=datetime.timedelta(seconds=10))
        tracker = Tracker(rank, world, steps, store, watch_store, args.timeout, prefix)
        TRACKERS.append(tracker)
        return tracker

    # Under torchrun the store is up already: watch the GPU binding and
    # NCCL's init too, so that a rank stuck in either is named.
    tracker = None
    if agent_store():
        try:
            tracker = start_tracker()
        except Exception as e:  # watch from after the init, as with other launchers
            say(rank, ["preflight: warning: no store before init_process_group (%s: %s): "
                       "GPU binding and NCCL init are not watched" % (type(e).__name__, e)], sys.stderr)
    if tracker:
        tracker.enter(steps[0])
    if not torch.cuda.is_available() or local_rank >= torch.cuda.device_count():
        raise PlanError("LOCAL_RANK %d, but this host shows %d CUDA devices" % (local_rank, torch.cuda.device_count()), per_rank=True)
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    if tracker:
        tracker.leave()
        tracker.enter(steps[1])
    # NCCL's own watchdog must not fire before ours: its report names no group.
    nccl_timeout = datetime.timedelta(seconds=args.timeout + max(30.0, args.timeout))
    t0 = time.monotonic()
    dist.init_process_group("nccl", timeout=nccl_timeout, device_id=None if args.lazy_init else device)
    t_init = time.monotonic() - t0
    if tracker:
        tracker.leave()
    else:
        tracker = start_tracker()
    store = tracker.store

    # 1. placement and plan, through the store: no NCCL involved.
    props = torch.cuda.get_device_properties(local_rank)
    info = {
        "rank": rank,
        "host": socket.gethostname(),
        "local_rank": local_rank,
        "local_world_size": local_world,
        "device": local_rank,
        "gpu": torch.cuda.get_device_name(local_rank),
        "uuid": str(getattr(props, "uuid", "")) or "%s:cuda%d" % (socket.gethostname(), local_rank),
        "plan_sha": hashlib.sha256(raw).hexdigest(),
        "payload_sha": file_sha(__file__),
    }
    tracker.enter(steps[2])
    store.set("%s/info/%d" % (prefix, rank), json.dumps(info))
    keys = ["%s/info/%d" % (prefix, r) for r in range(world)]
    wait_for(lambda: store.check(keys))
    infos = [json.loads(store.get(k)) for k in keys]
    tracker.leave()
    problems, warnings = check_placement(infos)
    header = [
        "mimoplan preflight: plan %r, %d ranks, %s, modules %s, %d groups"
        % (plan.get("name", ""), world, plan.get("mode", "?"), ", ".join(m["name"] for m in plan["modules"]), len(groups)),
        "torch %s, NCCL %s, %s init in %.2fs"
        % (torch.__version__, ".".join(str(v) for v in torch.cuda.nccl.version()), "lazy" if args.lazy_init else "eager", t_init),
        "placement:",
    ] + placement_lines(infos) + ["  warning: " + w for w in warnings]
    if rank == 0:
        say(rank, header)
    if problems:
        if rank == 0:
            say(rank, ["FAILED placement:"] + ["  " + p for p in problems])
        tracker.finish()
        exit_now(EXIT_FAILED)

    # 2. every group, on every rank, in one global order.
    t0 = time.monotonic()
    pgs = {}
    for pos, g in enumerate(creation_order(groups, rank, args.inject)):
        tracker.enter(steps[create_at[groups[pos].gid]])
        pgs[g.gid] = dist.new_group(ranks=g.ranks)
        tracker.leave()
    t_create = time.monotonic() - t0

    # 3 and 4. members and one-hot sums, in every group this rank is in.
    t0 = time.monotonic()
    checks = {}
    stall = args.inject and args.inject[0] == "stall" and args.inject[1] == rank
    for g in groups:
        if rank not in g.ranks:
            continue
        if stall and len(g.ranks) > 1:
            time.sleep(10 * args.timeout)  # stuck before reaching the group's collective
        tracker.enter(steps[check_at[g.gid]])
        pg = pgs[g.gid]
        members = dist.get_process_group_ranks(pg)
        onehot = torch.zeros(world, dtype=torch.int32, device=device)
        onehot[rank] = 1
        work = dist.all_reduce(onehot, group=pg, async_op=True)
        wait_for(work.is_completed)
        got = onehot.cpu().tolist()
        summed = {r: c for r, c in enumerate(got) if c}
        checks[str(g.gid)] = observe(plan_mods[g.module], g, rank, members, summed)
        tracker.leave()
    t_check = time.monotonic() - t0

    # 5. bandwidth: every group of a kind at once, as in training.
    times = {}
    if args.bytes > 0:
        n = args.bytes // 4
        buf = torch.zeros(n, dtype=torch.float32, device=device)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for (module, kind), gs in kind_steps(groups):
            mine = [g for g in gs if rank in g.ranks]
            if not mine:
                continue
            pg = pgs[mine[0].gid]
            tracker.enter(steps[timing_at[(module, kind)]])
            # The clock starts on the GPU when the warm-up ends, which is
            # the same moment on every member: the host's lag does not count.
            # wait() makes the current stream wait for NCCL's; the host does not.
            dist.all_reduce(buf, group=pg, async_op=True).wait()
            start.record()
            for _ in range(args.iters):
                work = dist.all_reduce(buf, group=pg, async_op=True)
            work.wait()
            end.record()
            wait_for(end.query)
            times["%s/%s" % (module, kind)] = start.elapsed_time(end) / 1e3 / args.iters
            tracker.leave()

    # 6. every rank's results on every rank, so that all exit alike.
    result = {"rank": rank, "checks": checks, "times": times}
    tracker.enter(steps[-1])
    results = [None] * world
    dist.all_gather_object(results, result)
    tracker.leave()

    rows, failures, bad = evaluate(groups, results, (args.bytes // 4) * 4)
    if rank == 0:
        lines = [
            "groups: created %d in %.2fs, checked in %.2fs; bandwidth: %s" % (
                len(groups), t_create, t_check,
                "%s all-reduce, mean of %d" % (human_bytes(args.bytes), args.iters) if args.bytes else "skipped"),
            "",
        ] + format_table(rows) + [""]
        if failures:
            lines += ["FAILED: %d of %d groups disagree with the plan" % (bad, len(groups))]
            lines += ["  " + f for f in failures]
        else:
            lines += ["ok: all %d groups match the plan (members and all-reduce sums) on %d ranks" % (len(groups), world)]
        say(rank, lines)
    VERDICT.append(EXIT_FAILED if failures else EXIT_OK)
    tracker.finish()
    exit_now(VERDICT[0])


def on_signal(signum, frame):
    """SIGINT or SIGTERM (torchrun passes on its own): leave at once, saying
    where; a KeyboardInterrupt would unwind into NCCL's teardown."""
    if VERDICT:  # torchrun stops the others once one rank has left
        exit_now(VERDICT[0])
    rank = int(os.environ.get("RANK", "0"))
    where = TRACKERS[0].current if TRACKERS and TRACKERS[0].current else None
    say(rank, ["preflight: stopped by signal %d%s" % (signum, "" if where is None else " in %s" % where)], sys.stderr)
    exit_now(128 + signum)


def main(argv=None):
    args = parse_args(argv)
    rank = int(os.environ.get("RANK", "0"))
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        run(args)
    except (PlanError, OSError) as e:
        # An unreadable file may be missing on one node only.
        if getattr(e, "per_rank", True) or os.environ.get("LOCAL_RANK", "0") == "0":
            say(rank, ["preflight: %s" % e], sys.stderr)
        exit_now(EXIT_UNUSABLE)
    except Exception as e:  # an NCCL or torch error inside a step
        where = TRACKERS[0].current if TRACKERS and TRACKERS[0].current else None
        say(rank, ["preflight: %s%s: %s" % ("" if where is None else "%s failed: " % where, type(e).__name__, e)], sys.stderr)
        exit_now(EXIT_FAILED)


if __name__ == "__main__":
    main()
