"""CPU tests of the preflight payload's plan logic (no torch needed).

Run from this directory: python3 -m unittest -v test_preflight
The Go test TestPayloadLogic runs it and, through PREFLIGHT_PLANS, hands it
plans rendered by mimoplan with Megatron's own enumerations beside them.
"""

import copy
import contextlib
import glob
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import preflight as pf  # noqa: E402

TESTDATA = os.path.join(HERE, "..", "testdata")
# Bounds on waiting for a payload process, in seconds. They catch hangs,
# not slowness: far above what a machine loaded many times over takes.
HANG = 120


def module(name, offset, n, **sizes):
    """A plan module with its groups as Megatron builds them."""
    m = {"name": name, "rank_offset": offset, "num_ranks": n}
    for f in ("tp", "gtp_remat", "cp", "pp", "ep", "expt_tp", "expt_gtp_remat"):
        m[f] = sizes.get(f, 1)
    m["dp"] = n // (m["tp"] * m["gtp_remat"] * m["cp"] * m["pp"])
    m["expt_dp"] = n // (m["expt_tp"] * m["ep"] * m["expt_gtp_remat"] * m["pp"])
    m["groups"] = pf.module_groups(m)
    return m


def plan_of(world, *mods, mode="non_colocated"):
    return {"version": 1, "name": "t", "world_size": world, "mode": mode, "modules": list(mods)}


def lines_run(fn, budget):
    """fn(), counting the Python lines it runs; past budget the count
    fails the test (rather than letting an unbounded loop run on). Work
    done, not time taken, so the machine's load does not matter."""
    count = [0]

    def local(frame, event, arg):
        if event == "line":
            count[0] += 1
            if count[0] > budget:
                raise AssertionError("more than %d lines run" % budget)
        return local

    sys.settrace(lambda frame, event, arg: local)
    try:
        return fn(), count[0]
    finally:
        sys.settrace(None)


def nonco4():
    return plan_of(4, module("vision", 0, 2, tp=2), module("language", 2, 2, pp=2))


def simulate(plan, break_sum=None):
    """What every rank would report from a healthy cluster: new_group gives
    the built group (sorted, as torch returns it) and the one-hot sum holds
    each member once. break_sum=(gid, rank) drops rank from that group's sum."""
    groups = pf.build_groups(plan)
    mods = {m["name"]: m for m in plan["modules"]}
    results = []
    for r in range(plan["world_size"]):
        checks = {}
        for g in groups:
            if r not in g.ranks:
                continue
            summed = {m: 1 for m in g.ranks}
            if break_sum and break_sum[0] == g.gid:
                summed.pop(break_sum[1], None)
            checks[str(g.gid)] = pf.observe(mods[g.module], g, r, sorted(g.ranks), summed)
        times = {"%s/%s" % k: 0.001 for k, gs in pf.kind_steps(groups) if any(r in g.ranks for g in gs)}
        results.append({"rank": r, "checks": checks, "times": times})
    return groups, results


class RankEnum(unittest.TestCase):
    def test_cases(self):
        shape, names = [2, 1, 1, 2, 2], pf.BASE_DIMS  # tp 2, dp 2, pp 2 over 8 ranks
        cases = [
            (["tp"], [[0, 1], [2, 3], [4, 5], [6, 7]]),
            (["dp"], [[0, 2], [1, 3], [4, 6], [5, 7]]),
            (["pp"], [[0, 4], [1, 5], [2, 6], [3, 7]]),
            (["tp", "dp"], [[0, 1, 2, 3], [4, 5, 6, 7]]),
            (["dp", "tp"], [[0, 1, 2, 3], [4, 5, 6, 7]]),  # dims order does not matter
            (["cp"], [[r] for r in range(8)]),
            (["tp", "gtp_remat", "cp", "dp", "pp"], [list(range(8))]),
        ]
        for dims, want in cases:
            with self.subTest(dims=dims):
                self.assertEqual(pf.rank_enum(shape, names, 0, dims), want)
        self.assertEqual(pf.rank_enum([2, 1, 1, 1, 1], names, 6, ["tp"]), [[6, 7]])
        with self.assertRaises(ValueError):
            pf.rank_enum(shape, names, 0, ["ep"])

    def test_language_embedding_groups(self):
        m = module("language", 0, 8, tp=2, pp=4)
        self.assertEqual(m["groups"]["pp"], [[0, 2, 4, 6], [1, 3, 5, 7]])
        self.assertEqual(m["groups"]["embd"], [[0, 6], [1, 7]])
        self.assertEqual(m["groups"]["pos_embd"], [[0], [1]])
        self.assertNotIn("embd", module("vision", 0, 8, tp=2)["groups"])
        self.assertEqual(module("language", 0, 2)["groups"]["embd"], [[0], [1]])

    def test_rendered_plans(self):
        """Plans that mimoplan rendered must equal what the payload builds,
        and Megatron's own enumeration where the Go test supplied it."""
        d = os.environ.get("PREFLIGHT_PLANS")
        if not d:
            self.skipTest("PREFLIGHT_PLANS not set (the Go test sets it)")
        plans = sorted(glob.glob(os.path.join(d, "*.plan.json")))
        self.assertTrue(plans, "no plans in %s" % d)
        for path in plans:
            name = os.path.basename(path)[: -len(".plan.json")]
            with open(path) as f:
                plan = json.load(f)
            megatron = None
            golden = os.path.join(d, name + ".expected.json")
            if os.path.exists(golden):
                with open(golden) as f:
                    megatron = json.load(f)
            with self.subTest(plan=name):
                self.assertEqual(pf.check_plan(plan, plan["world_size"]), [])
                for i, m in enumerate(plan["modules"]):
                    built = pf.module_groups(m)
                    self.assertEqual(list(built), list(m["groups"]), "kind order of %s" % m["name"])
                    self.assertEqual(built, m["groups"], m["name"])
                    if megatron:
                        self.assertEqual(built, megatron["modules"][i]["groups"], m["name"])


class CheckPlan(unittest.TestCase):
    def test_good(self):
        self.assertEqual(pf.check_plan(nonco4(), 4), [])
        colo = plan_of(4, module("vision", 0, 4, tp=2), module("language", 0, 4, tp=4), mode="colocated")
        self.assertEqual(pf.check_plan(colo, 4), [])
        self.assertEqual(pf.check_plan(nonco4()), [])

    def test_bad(self):
        def edit(f):
            p = nonco4()
            f(p)
            return p

        def groups(p, mod=1):
            return p["modules"][mod]["groups"]

        cases = [
            ("world size", edit(lambda p: None), 8, "the plan is for 4 ranks but the launcher started 8"),
            ("version", edit(lambda p: p.update(version=2)), 4, "version is 2"),
            ("not an object", [], 4, "not a JSON object"),
            ("no modules", edit(lambda p: p.update(modules=[])), 4, "modules is missing"),
            ("no language", edit(lambda p: p["modules"][1].update(name="audio")), 4, "no module is named 'language'"),
            ("duplicate", edit(lambda p: p["modules"][0].update(name="language")), 4, "appears twice"),
            ("bool size", edit(lambda p: p["modules"][0].update(tp=True)), 4, "tp must be whole numbers"),
            ("zero size", edit(lambda p: p["modules"][0].update(cp=0)), 4, "cp must be whole numbers"),
            ("out of world", edit(lambda p: p["modules"][1].update(rank_offset=3)), 4, "ranks [3, 5) are outside"),
            ("dense product", edit(lambda p: p["modules"][0].update(dp=2)), 4, "tp*gtp_remat*cp*dp*pp = 4"),
            ("expert product", edit(lambda p: p["modules"][0].update(ep=2)), 4, "expt_tp*ep*expt_gtp_remat*expt_dp*pp = 4"),
            ("missing kind", edit(lambda p: groups(p).pop("ep")), 4, "group kind ep is missing"),
            ("unknown kind", edit(lambda p: groups(p).update(xp=[[2, 3]])), 4, "unknown group kind 'xp'"),
            ("no embd on vision", edit(lambda p: groups(p, 0).update(embd=[[0]])), 4, "module 'vision': unknown group kind 'embd'"),
            ("outside span", edit(lambda p: groups(p).update(tp=[[2], [1]])), 4, "tp[1] has ranks [1] outside"),
            ("rank twice", edit(lambda p: groups(p).update(pp=[[2, 2]])), 4, "pp[0] lists a rank twice"),
            ("two groups", edit(lambda p: groups(p).update(tp=[[2, 3], [3]])), 4, "tp puts ranks [3] in more than one group"),
            ("no group", edit(lambda p: groups(p).update(tp=[[2]])), 4, "tp leaves ranks [3] in no group"),
            ("not ranks", edit(lambda p: groups(p).update(tp=[["2"], [3]])), 4, "tp[0] is not a list of ranks"),
            ("overlap", edit(lambda p: p["modules"][0].update(rank_offset=1, num_ranks=2)), 4, "overlap"),
            ("hole", edit(lambda p: p.update(world_size=5)), 5, "ranks [4] belong to no module"),
        ]
        for name, plan, world, want in cases:
            with self.subTest(name):
                errs = pf.check_plan(plan, world)
                self.assertTrue(any(want in e for e in errs), "want %r in %s" % (want, errs))

    def test_world_first(self):
        """A world that disagrees with WORLD_SIZE is the only message, and
        nothing is counted: a plan claiming 10**12 ranks is refused at once,
        in a few lines run whatever the size it claims."""
        huge = nonco4()
        huge["world_size"] = 10 ** 12
        huge["modules"][1].update(num_ranks=10 ** 12 - 2, dp=10 ** 12 - 2)
        errs, lines = lines_run(lambda: pf.check_plan(huge, 4), 100)
        self.assertEqual(errs, [
            "the plan is for 1000000000000 ranks but the launcher started 4 (WORLD_SIZE): "
            "run it with --nproc-per-node and --nnodes that multiply to 1000000000000"])
        small = nonco4()
        small["world_size"] = 8
        self.assertEqual(lines_run(lambda: pf.check_plan(small, 4), 100)[1], lines)
        errs, lines = lines_run(lambda: pf.check_plan(huge), 100)
        self.assertEqual(errs, ["world_size 1000000000000 is more than a layout may have (16777216)"])
        # Other problems are not reported beside a wrong world.
        bad = nonco4()
        bad["modules"][0]["groups"].pop("tp")
        self.assertEqual(len(pf.check_plan(bad, 8)), 1)

    def test_corrupt_fixtures_are_usable_plans(self):
        # The corruption keeps every kind a partition: only the GPUs find it.
        for path in glob.glob(os.path.join(TESTDATA, "corrupt-*.plan.json")):
            with open(path) as f:
                plan = json.load(f)
            with self.subTest(os.path.basename(path)):
                self.assertEqual(pf.check_plan(plan, plan["world_size"]), [])


class Schedule(unittest.TestCase):
    def test_order_and_members(self):
        plan = nonco4()
        groups = pf.build_groups(plan)
        self.assertEqual([g.gid for g in groups], list(range(len(groups))))
        self.assertEqual((groups[0].module, groups[0].kind, groups[0].ranks), ("vision", "tp", [0, 1]))
        self.assertEqual(groups[-1].label, "language/pos_embd#0")
        # vision: the 6 kinds spanning tp and the 2 spanning expt_dp give 1
        # group, 12 give 2; language: the 5 spanning pp give 1, 15 give 2,
        # plus embd and pos_embd.
        self.assertEqual(len(groups), (8 + 12 * 2) + (5 + 15 * 2 + 2))
        steps, create, check, timing = pf.schedule(groups, 4)
        self.assertEqual([s.index for s in steps], list(range(len(steps))))
        self.assertEqual([s.what for s in steps[:3]], ["bind", "init", "exchange"])
        self.assertEqual(steps[0].peers(2, 4), [2], "binding the GPU is the rank's own step")
        self.assertEqual(steps[-1].what, "gather")
        for g in groups:
            self.assertTrue(steps[create[g.gid]].takes_part(3), "every rank creates every group")
            self.assertEqual(steps[check[g.gid]].ranks, frozenset(g.ranks))
            self.assertLess(create[g.gid], check[g.gid])
        # Only kinds with groups of two or more are timed; peers are the group.
        timed = sorted(timing)
        self.assertIn(("vision", "tp"), timed)
        self.assertIn(("language", "pp"), timed)
        self.assertNotIn(("language", "tp"), timed)
        st = steps[timing[("language", "pp")]]
        self.assertEqual(st.peers(2, 4), [2, 3])
        self.assertFalse(st.takes_part(0))
        steps2, _, _, timing2 = pf.schedule(groups, 4, bandwidth=False)
        self.assertEqual(timing2, {})
        self.assertEqual(len(steps2), len(steps) - len(timing))

    def test_group_count(self):
        # vision tp 2 over 2 ranks: tp-like kinds have one group, the rest two.
        groups = pf.build_groups(nonco4())
        count = {}
        for g in groups:
            count[(g.module, g.kind)] = count.get((g.module, g.kind), 0) + 1
        self.assertEqual(count[("vision", "tp")], 1)
        self.assertEqual(count[("vision", "dp")], 2)
        self.assertEqual(count[("language", "pp")], 1)
        self.assertEqual(count[("language", "embd")], 1)
        self.assertEqual(len(groups), sum(count.values()))

    def test_creation_order(self):
        groups = pf.build_groups(nonco4())
        self.assertEqual(pf.creation_order(groups, 1, None), groups)
        self.assertEqual(pf.creation_order(groups, 1, ("reorder", 2)), groups)
        swapped = pf.creation_order(groups, 1, ("reorder", 1))
        self.assertNotEqual(swapped[0].ranks, groups[0].ranks)
        self.assertEqual(sorted(g.gid for g in swapped), [g.gid for g in groups])
        self.assertEqual(sum(a is not b for a, b in zip(swapped, groups)), 2)


class Reports(unittest.TestCase):
    def setUp(self):
        self.groups = pf.build_groups(nonco4())
        self.steps, self.create, self.check, _ = pf.schedule(self.groups, 4)

    def test_timeout_names_the_late_ranks(self):
        g = self.groups[0]  # vision/tp#0 [0,1]
        step = self.steps[self.check[g.gid]]
        earlier = self.create[self.groups[5].gid]
        cases = [
            ("one late", {0: step.index, 1: earlier}, ["rank 1 did not answer: it is still at step %d (new_group" % earlier, "did not answer: [1]"]),
            ("never started", {0: step.index, 1: None}, ["rank 1 did not answer: it never reported progress", "did not answer: [1]"]),
            ("all there", {0: step.index, 1: step.index}, ["every rank of [0,1] reached this step"]),
            ("went past", {0: step.index, 1: step.index + 3}, ["rank 1 went past this step", "every rank of [0,1] reached"]),
        ]
        for name, entered, want in cases:
            with self.subTest(name):
                lines = pf.timeout_report(step, 0, [0, 1], entered, self.steps, 5)
                self.assertIn("rank 0: step %d (all-reduce vision/tp#0 [0,1]) did not finish within 5s" % step.index, lines[0])
                text = "\n".join(lines)
                for w in want:
                    self.assertIn(w, text)

    def test_timeout_folds_many_ranks(self):
        step = self.steps[1]
        peers = list(range(100))
        lines = pf.timeout_report(step, 0, peers, {}, self.steps, 1)
        self.assertEqual(len(lines), 1 + pf.MAX_RANK_LINES + 2)
        self.assertIn("... and 83 more ranks", lines[-2])
        self.assertIn("(99 ranks)", lines[-1])

    def test_evaluate_healthy(self):
        plan = nonco4()
        groups, results = simulate(plan)
        rows, failures, bad = pf.evaluate(groups, results, 64 << 20)
        self.assertEqual((failures, bad), ([], 0))
        self.assertEqual(len(rows), 20 + 22)
        tp = rows[0]
        self.assertEqual((tp["module"], tp["kind"], tp["members_ok"], tp["sum_ok"]), ("vision", "tp", 1, 1))
        self.assertAlmostEqual(tp["busbw"], (64 << 20) / 0.001 * 2 * 1 / 2)
        self.assertIsNone(rows[1]["busbw"], "cp groups have one member")
        table = pf.format_table(rows)
        self.assertTrue(table[0].startswith("MODULE"))
        self.assertEqual(len(table), 1 + len(rows))
        self.assertIn("67.1", table[1])

    def test_evaluate_corrupt_plan(self):
        """A member swapped in the plan: the built groups disagree with it on
        every rank involved, in members and in sums; other groups pass."""
        with open(os.path.join(TESTDATA, "corrupt-coloc-4gpu.plan.json")) as f:
            plan = json.load(f)
        groups, results = simulate(plan)
        rows, failures, bad = pf.evaluate(groups, results, 1 << 20)
        self.assertEqual(bad, 2)
        tp = [r for r in rows if (r["module"], r["kind"]) == ("vision", "tp")][0]
        self.assertEqual((tp["members_ok"], tp["sum_ok"]), (0, 0))
        self.assertEqual(sum(r["members_ok"] for r in rows), len(groups) - 2)
        self.assertEqual(len(failures), 8)  # 4 ranks x (members, sum)
        self.assertIn("vision/tp#0 [0,1]: rank 0: new_group gave [0, 1], the plan has [0, 2]", failures[0])
        self.assertIn("vision/tp#0 [0,1]: rank 0: the all-reduce summed ranks [0,1], the plan predicts [0, 2]", failures[1])

    def test_evaluate_members_in_another_order(self):
        """A plan group with the right members in another order: an
        all-reduce sum cannot see order, but torch sorts new_group's ranks,
        so the member check fails, and only it."""
        plan = nonco4()
        plan["modules"][1]["groups"]["pp"] = [[3, 2]]
        self.assertEqual(pf.check_plan(plan, 4), [])
        groups, results = simulate(plan)
        _, failures, bad = pf.evaluate(groups, results, 1 << 20)
        self.assertEqual(bad, 1)
        self.assertEqual(failures, [
            "language/pp#0 [2,3]: rank 2: new_group gave [2, 3], the plan has [3, 2]",
            "language/pp#0 [2,3]: rank 3: new_group gave [2, 3], the plan has [3, 2]",
        ])

    def test_evaluate_broken_sum_and_missing(self):
        plan = nonco4()
        groups, results = simulate(plan, break_sum=(0, 1))
        _, failures, bad = pf.evaluate(groups, results, 1 << 20)
        self.assertEqual(bad, 1)
        self.assertEqual(len(failures), 2)  # ranks 0 and 1 both saw [0]
        self.assertIn("the all-reduce summed ranks [0], the plan predicts [0, 1]", failures[0])
        results[3]["checks"].clear()
        _, failures, bad = pf.evaluate(groups, results, 1 << 20)
        self.assertIn("rank 3 reported no result", "\n".join(failures))

    def test_sum_counts(self):
        obs = {"plan": [0, 1], "members": [0, 1], "sum": {"0": 1, "1": 1}}
        self.assertTrue(pf.sum_ok(obs))
        self.assertFalse(pf.sum_ok(dict(obs, sum={"0": 2, "1": 1})))
        self.assertFalse(pf.sum_ok(dict(obs, plan=None)))
        self.assertFalse(pf.members_ok(dict(obs, members=[1, 0])))
        self.assertEqual(pf._sum_text({"0": 2, "1": 1}), "[0x2,1]")


class Placement(unittest.TestCase):
    def infos(self, n=4, per_node=4):
        return [
            {"rank": r, "host": "node%d" % (r // per_node), "local_rank": r % per_node, "local_world_size": per_node,
             "device": r % per_node, "gpu": "H200", "uuid": "GPU-%d" % r, "plan_sha": "a", "payload_sha": "p"}
            for r in range(n)
        ]

    def test_good(self):
        self.assertEqual(pf.check_placement(self.infos()), ([], []))
        self.assertEqual(pf.check_placement(self.infos(8, 4)), ([], []))
        self.assertEqual(pf.placement_lines(self.infos(8, 4)), [
            "  node0: ranks [0,1,2,3] on cuda devices [0,1,2,3], 4 distinct GPUs (H200)",
            "  node1: ranks [4,5,6,7] on cuda devices [0,1,2,3], 4 distinct GPUs (H200)",
        ])

    def test_nodes_sharing_a_host_warn(self):
        infos = self.infos(4, 2)
        for i in infos:
            i["host"] = "vm"
        errs, warns = pf.check_placement(infos)
        self.assertEqual(errs, [])
        self.assertEqual(warns, ["host vm runs the ranks of nodes [0, 1]: the layout's nodes are not separate machines here"])
        self.assertIn("4 distinct GPUs", pf.placement_lines(infos)[0])

    def test_bad(self):
        def edit(f, n=4, per_node=4):
            i = self.infos(n, per_node)
            f(i)
            return i

        cases = [
            ("plan differs", edit(lambda i: i[2].update(plan_sha="b")), "plan differs from rank 0's on ranks [2]"),
            ("payload differs", edit(lambda i: i[3].update(payload_sha="q")), "preflight.py differs from rank 0's on ranks [3]"),
            ("shared gpu", edit(lambda i: i[1].update(uuid="GPU-0")), "ranks [0,1] share one GPU (GPU-0)"),
            ("local rank", edit(lambda i: i[1].update(local_rank=2)), "rank 1 has LOCAL_RANK 2; the layout places it on local GPU 1"),
            ("split node", edit(lambda i: i[3].update(host="other"), 8), "node 0's ranks run on several hosts: node0, other"),
        ]
        for name, infos, want in cases:
            with self.subTest(name):
                errs, _ = pf.check_placement(infos)
                self.assertTrue(any(want in e for e in errs), "want %r in %s" % (want, errs))


class CommandLine(unittest.TestCase):
    def test_defaults(self):
        a = pf.parse_args(["--plan", "p.json"])
        self.assertEqual((a.bytes, a.timeout, a.iters, a.lazy_init, a.inject), (64 << 20, 60.0, 10, False, None))
        self.assertEqual(pf.parse_args(["--plan", "p", "--inject", "stall:3"]).inject, ("stall", 3))

    def run_payload(self, plan, env):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "plan.json")
            with open(path, "w") as f:
                f.write(plan if isinstance(plan, str) else json.dumps(plan))
            e = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
            e.update(env)
            p = subprocess.run([sys.executable, os.path.join(HERE, "preflight.py"), "--plan", path],
                               env=e, capture_output=True, text=True, timeout=HANG)
            return p.returncode, p.stderr

    def test_unusable_before_torch(self):
        """Refused before torch is imported (torch need not be installed)."""
        env = {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0"}
        cases = [
            ("world size", nonco4(), env, "the plan is for 4 ranks but the launcher started 2"),
            ("not json", "{", env, "is not JSON"),
            ("no torchrun", nonco4(), {}, "RANK is not set: run preflight.py under torchrun"),
        ]
        for name, plan, e, want in cases:
            with self.subTest(name):
                code, err = self.run_payload(plan, e)
                self.assertEqual(code, pf.EXIT_UNUSABLE, err)
                self.assertIn(want, err)

    def test_bad_arguments(self):
        """The payload refuses what mimoplan refuses (Options.Check)."""
        for args in (["--timeout", "nan"], ["--timeout", "inf"], ["--timeout=-inf"], ["--timeout", "0"],
                     ["--bytes", "3"], ["--bytes=-1"], ["--iters", "0"]):
            with self.subTest(" ".join(args)):
                with contextlib.redirect_stderr(io.StringIO()) as err:
                    with self.assertRaises(SystemExit) as e:
                        pf.parse_args(["--plan", "p"] + args)
                self.assertEqual(e.exception.code, 2)
                self.assertIn("--timeout a finite number > 0", err.getvalue())
        self.assertEqual(pf.parse_args(["--plan", "p", "--bytes", "4", "--timeout", "0.5"]).bytes, 4)

    def test_plan_check_watched(self):
        """Reading and checking the plan runs under a watchdog: a rank that
        takes longer than --timeout says so and leaves with the timeout
        status."""
        world = 1 << 16
        lang = {"name": "language", "rank_offset": 0, "num_ranks": world}
        lang.update({f: 1 for f in pf.SIZE_FIELDS})
        lang.update(dp=world, expt_dp=world, groups={k: [[0]] for k in pf.kinds_of("language")})
        plan = {"version": 1, "world_size": world, "modules": [lang]}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "plan.json")
            with open(path, "w") as f:
                json.dump(plan, f)
            e = dict(os.environ, RANK="0", WORLD_SIZE=str(world), LOCAL_RANK="0")
            p = subprocess.run([sys.executable, os.path.join(HERE, "preflight.py"), "--plan", path, "--timeout", "0.001"],
                               env=e, capture_output=True, text=True, timeout=HANG)
        self.assertEqual(p.returncode, pf.EXIT_TIMEOUT, p.stderr)
        self.assertIn("reading and checking %s did not finish within 0.001s" % path, p.stderr)

    def test_other_ranks_stay_quiet(self):
        code, err = self.run_payload(nonco4(), {"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1"})
        self.assertEqual((code, err), (pf.EXIT_UNUSABLE, ""))


FAKE_TORCH = os.path.join(HERE, "fake_torch")

# --timeout of the runs that need the payload's watchdog to fire on a rank
# that never arrives. The waiting ranks must get from their start to the
# stalled step well within it, however loaded the machine: at 1 s a rank
# that got there a second late (Python's start and the plan check on a
# busy machine) would be reported in place of the stalled one.
STALL_TIMEOUT = 10


def launch(plan, world, args=(), env=None, stop_on_failure=True, until=None, limit=HANG):
    """Run preflight.py on world processes with the fake torch, as torchrun
    would (every rank's environment; once one rank fails the others are
    stopped, unless stop_on_failure is false). With until, the run ends
    when those ranks have ended by themselves, and the others are killed.
    Returns (exit codes, rank 0's stdout, every rank's stderr, wall
    seconds). limit is a hang bound."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "plan.json")
        with open(path, "w") as f:
            json.dump(plan, f)
        store = os.path.join(d, "store")
        os.mkdir(store)
        procs, outs, errs = [], [], []
        start = time.monotonic()
        for r in range(world):
            e = dict(os.environ)
            e.update(
                RANK=str(r), WORLD_SIZE=str(world), LOCAL_RANK=str(r), LOCAL_WORLD_SIZE=str(world),
                MASTER_ADDR="127.0.0.1", MASTER_PORT="1", TORCHELASTIC_RUN_ID="test",
                TORCHELASTIC_USE_AGENT_STORE="True", FAKE_TORCH_DIR=store,
                PYTHONPATH=os.pathsep.join([FAKE_TORCH] + [p for p in [os.environ.get("PYTHONPATH")] if p]),
                PYTHONDONTWRITEBYTECODE="1",
            )
            e.update(env or {})
            outs.append(open(os.path.join(d, "out%d" % r), "w+"))
            errs.append(open(os.path.join(d, "err%d" % r), "w+"))
            procs.append(subprocess.Popen([sys.executable, os.path.join(HERE, "preflight.py"), "--plan", path] + list(args),
                                          stdout=outs[-1], stderr=errs[-1], env=e))
        late = False
        while True:
            codes = [p.poll() for p in procs]
            if None not in codes or (until and all(codes[r] is not None for r in until)):
                break
            if time.monotonic() - start > limit:
                late = True
                break
            if stop_on_failure and any(codes):
                for p in procs:
                    if p.poll() is None:
                        p.terminate()
            time.sleep(0.01)
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        wall = time.monotonic() - start
        text = []
        for f in outs + errs:
            f.seek(0)
            text.append(f.read())
            f.close()
        out, err = text[0], "".join("[stderr of rank %d]\n%s" % (r, t) for r, t in enumerate(text[world:]) if t)
        if late:
            raise AssertionError("ranks %s still running after %ds\n%s%s" % (
                [r for r, c in enumerate(codes) if c is None], limit, out, err))
        return [p.returncode for p in procs], out, err, wall


class Distributed(unittest.TestCase):
    """run() end to end on CPU: several ranks, the fake torch."""

    def coloc4(self):
        return plan_of(4, module("vision", 0, 4, tp=2), module("language", 0, 4, tp=4), mode="colocated")

    def test_healthy(self):
        for name, plan, args in [
            ("non-colocated", nonco4(), ["--bytes", "64"]),
            ("colocated", self.coloc4(), ["--bytes", "1024", "--iters", "2"]),
            ("colocated, lazy init", self.coloc4(), ["--bytes", "0", "--lazy-init"]),
        ]:
            with self.subTest(name):
                codes, out, err, _ = launch(plan, 4, args)
                self.assertEqual(codes, [0] * 4, out + err)
                groups = pf.build_groups(plan)
                self.assertIn("ok: all %d groups match the plan (members and all-reduce sums) on 4 ranks" % len(groups), out)
                self.assertIn("MODULE    GROUP", out)
                self.assertNotIn("FAILED", out)
                self.assertEqual(err, "")
        self.assertRegex(out, r"\nvision    tp                        2     2/2         2/2     -           \[0,1\] \[2,3\]\n")
        self.assertRegex(out, r"\nlanguage  tp                        4     1/1         1/1     -           \[0,1,2,3\]\n")

    def test_corrupted_plan_fails(self):
        with open(os.path.join(TESTDATA, "corrupt-coloc-4gpu.plan.json")) as f:
            plan = json.load(f)
        codes, out, _, _ = launch(plan, 4, ["--bytes", "0"], stop_on_failure=False)
        self.assertEqual(codes, [pf.EXIT_FAILED] * 4, out)
        self.assertIn("FAILED: 2 of 117 groups disagree with the plan", out)
        self.assertIn("vision/tp#0 [0,1]: rank 0: new_group gave [0, 1], the plan has [0, 2]", out)
        self.assertIn("vision/tp#1 [2,3]: rank 3: the all-reduce summed ranks [2,3], the plan predicts [1, 3]", out)

    def test_reorder_is_caught_by_the_sums(self):
        codes, out, _, _ = launch(self.coloc4(), 4, ["--bytes", "0", "--inject", "reorder:1"], stop_on_failure=False)
        self.assertEqual(codes, [pf.EXIT_FAILED] * 4, out)
        self.assertIn("FAILED: 1 of 117 groups disagree with the plan", out)
        self.assertIn("vision/tp#0 [0,1]: rank 0: the all-reduce summed ranks [0], the plan predicts [0, 1]", out)
        self.assertIn("vision/tp#0 [0,1]: rank 1: the all-reduce summed ranks [1], the plan predicts [0, 1]", out)
        self.assertNotIn("new_group gave", out)

    def test_timeouts_name_the_missing_rank(self):
        """The waiting ranks leave by themselves (3), not before --timeout,
        naming the rank that did not answer and where it is; nothing but
        the stalled rank is left to stop."""
        cases = [
            ("stall before a collective", {}, ["--inject", "stall:1"], [0, 2, 3],
             "rank 1 did not answer: it is still at step 119 (new_group language/pos_embd#3 [3])"),
            ("stuck binding its GPU", {"FAKE_TORCH_HANG": "set_device:2"}, [], [0, 1, 3],
             "rank 2 did not answer: it is still at step 0 (binding the GPU of LOCAL_RANK"),
        ]
        for name, env, args, waiting, want in cases:
            with self.subTest(name):
                codes, _, err, wall = launch(self.coloc4(), 4, ["--bytes", "0", "--timeout", str(STALL_TIMEOUT)] + args,
                                             env, stop_on_failure=False, until=waiting)
                self.assertEqual([codes[r] for r in waiting], [pf.EXIT_TIMEOUT] * 3, err)
                self.assertIn(want, err)
                self.assertGreaterEqual(wall, STALL_TIMEOUT)

    def test_stuck_inside_a_collective(self):
        codes, _, err, _ = launch(nonco4(), 4, ["--bytes", "0", "--timeout", str(STALL_TIMEOUT)],
                                  {"FAKE_TORCH_HANG": "init:3"}, stop_on_failure=False, until=[0, 1, 2])
        self.assertEqual(codes[:3], [pf.EXIT_TIMEOUT] * 3, err)
        self.assertIn("step 1 (init_process_group (NCCL init over the world)) did not finish within %ds" % STALL_TIMEOUT, err)
        self.assertIn("every rank of [0,1,2,3] reached this step", err)

    def test_placement_failure(self):
        codes, out, _, _ = launch(nonco4(), 4, ["--bytes", "0"], {"FAKE_TORCH_UUID": "GPU-same"}, stop_on_failure=False)
        self.assertEqual(codes, [pf.EXIT_FAILED] * 4, out)
        self.assertIn("FAILED placement:", out)
        self.assertIn("ranks [0,1,2,3] share one GPU (GPU-same)", out)

    def test_signal_ends_a_rank_at_once(self):
        """torchrun passes SIGINT or SIGTERM on to the workers: a rank
        leaves with 128+N, naming the step it was in."""
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "plan.json")
            with open(path, "w") as f:
                json.dump(nonco4(), f)
            os.mkdir(os.path.join(d, "store"))
            env = dict(os.environ, RANK="0", WORLD_SIZE="4", LOCAL_RANK="0", LOCAL_WORLD_SIZE="4",
                       MASTER_ADDR="127.0.0.1", MASTER_PORT="1", TORCHELASTIC_USE_AGENT_STORE="True",
                       FAKE_TORCH_DIR=os.path.join(d, "store"), PYTHONPATH=FAKE_TORCH, PYTHONDONTWRITEBYTECODE="1")
            for sig in (signal.SIGINT, signal.SIGTERM):
                with self.subTest(sig.name):
                    # Alone of four, rank 0 waits in NCCL's init for the others:
                    # signalled once it is there (its key in the fake store),
                    # however long a loaded machine takes to get it there.
                    init = os.path.join(d, "store", hashlib.sha1(b"fake/init/0").hexdigest())
                    with contextlib.suppress(FileNotFoundError):
                        os.remove(init)
                    p = subprocess.Popen([sys.executable, os.path.join(HERE, "preflight.py"), "--plan", path],
                                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                    try:
                        deadline = time.monotonic() + HANG
                        while not os.path.exists(init) and p.poll() is None and time.monotonic() < deadline:
                            time.sleep(0.01)
                        self.assertIsNone(p.poll(), "rank 0 left before the init")
                        self.assertTrue(os.path.exists(init), "rank 0 not in the init after %ds" % HANG)
                        p.send_signal(sig)
                        _, err = p.communicate(timeout=HANG)
                    finally:
                        if p.poll() is None:
                            p.kill()
                            p.communicate()
                    self.assertEqual(p.returncode, 128 + sig, err)
                    self.assertIn("preflight: stopped by signal %d in step 1 (init_process_group" % sig, err)

    def test_too_few_gpus(self):
        codes, _, err, _ = launch(nonco4(), 4, ["--bytes", "0"], {"FAKE_TORCH_GPUS": "2"})
        self.assertIn(pf.EXIT_UNUSABLE, codes)
        self.assertRegex(err, r"\[rank [23]\] preflight: LOCAL_RANK [23], but this host shows 2 CUDA devices")


if __name__ == "__main__":
    unittest.main()
