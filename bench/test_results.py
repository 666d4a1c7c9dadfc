"""Checks the tables of the A/B comparisons and of run_ladder.sh
(ladder_results.py, sim_results.py) on made-up output directories: the
figures they read from Google Benchmark's JSON (medians and single
repetitions, cpu_time, real_time x threads, items_per_second and its
wall-time form), ladder_tool's waits, the per-round differences, and the
verdicts. CTest: bench_results_tables.
"""
import contextlib
import io
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ladder_results  # noqa: E402
import sim_results  # noqa: E402


def gb_json(path, entries, repetitions=3):
    """Google Benchmark's JSON: entries (run_name, threads, cpu ns, real ns, extra)."""
    bench = []
    for run_name, threads, cpu, real, extra in entries:
        common = dict(run_name=run_name, threads=threads, time_unit="ns", **extra)
        if repetitions == 1:
            bench.append(dict(common, name=run_name, run_type="iteration", cpu_time=cpu, real_time=real))
            continue
        for agg, k in (("mean", 1.0), ("median", 1.0), ("stddev", 0.01)):
            bench.append(dict(common, name=f"{run_name}_{agg}", run_type="aggregate", aggregate_name=agg,
                              cpu_time=cpu * k, real_time=real * k))
    with open(path, "w") as f:
        json.dump({"context": {}, "benchmarks": bench}, f)


def run(fn, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = fn(*args)
    return status, out.getvalue()


def line_of(text, start):
    for line in text.splitlines():
        if line.startswith(start):
            return line
    raise AssertionError(f"no line starting {start!r} in:\n{text}")


def ladder_round(d, r, shift, attached=1, repetitions=3):
    """One round's processes; side B's figures `shift` ns above A's pattern."""
    os.makedirs(d, exist_ok=True)
    wobble = 0.01 * (r % 3)  # a little round-to-round noise
    for name in ("plain", "attached", "aggregate", "profile", "callpath", "counter", "trace1", "trace2"):
        entries = []
        for t in (1, 2):
            if name == "plain":
                entries.append((f"BM_uninstrumented/threads:{t}", t, 1.5 + wobble, 1.5 + wobble, {"monitor_attached": 0}))
                entries.append((f"BM_dormant/threads:{t}", t, 1.6 + wobble, 1.6 + wobble, {"monitor_attached": 0}))
                entries.append((f"BM_papi_pair/threads:{t}", t, 100.0, 100.0, {}))
            elif name.startswith("trace"):
                if name == f"trace{t}":
                    # real_time at 2 threads: wall over both threads' pairs.
                    entries.append((f"BM_trace/threads:{t}", t, 31.5 + shift + wobble, 40.0 / t, {"monitor_attached": attached}))
            else:
                rung_cpu = 105.0 if name == "counter" else 20.0
                entries.append((f"BM_{name}/threads:{t}", t, rung_cpu + shift + wobble, rung_cpu + shift,
                                {"monitor_attached": attached}))
        gb_json(os.path.join(d, name + ".json"), entries, repetitions)
        with open(os.path.join(d, name + ".log"), "w") as f:
            if name.startswith("trace"):
                f.write(f"ladder_tool: trace REGION_EVENT over bench_trace: 10 records emitted, 10 delivered "
                        f"(10 counted by the call-back), 0 discarded; {100 + r} waits for room, 0.250 s waited\n")


def test_ladder_compare():
    with tempfile.TemporaryDirectory() as out:
        for r in range(1, 8):
            ladder_round(os.path.join(out, f"round-{r:02d}", "A"), r, 0.0)
            ladder_round(os.path.join(out, f"round-{r:02d}", "B"), r, 5.0 if r else 0.0, repetitions=1)
        status, text = run(ladder_results.compare, out)
        assert status == 0, text
        # Equal sides: within noise; B's rungs 5 ns slower: called.
        assert line_of(text, "1 uninstrumented              1 cpu").endswith("within noise"), text
        assert line_of(text, "4 EXECUTION_TIME aggr.        1 cpu").endswith("B slower"), text
        # The trace rung at 2 threads: wall = real_time x threads = 40.
        trace = text[text.index("7 REGION_EVENT trace          2 cpu"):]
        wall = trace.splitlines()[1]
        assert "wall" in wall and "40.00 [40.00..40.00]" in wall, wall
        waits = trace.splitlines()[2]
        assert "waits" in waits and "104 [101..107]" in waits and waits.endswith("within noise"), waits


def test_ladder_table():
    with tempfile.TemporaryDirectory() as out:
        for r in range(1, 6):
            ladder_round(os.path.join(out, f"round-{r:02d}"), r, 0.0)
        status, text = run(ladder_results.table, out)
        # The counter and trace rungs of a made-up run are what is checked
        # here; the context rows it lacks make the status 1.
        assert status == 1, text
        line = line_of(text, "4 EXECUTION_TIME aggr.        1")
        assert "18.50 [18.50..18.50]" in line and "met" in line, line  # 20 - 1.5 in every round
        trace = line_of(text, "trace rung, 1 thread(s)")
        assert "by CPU 15.00 [15.00..15.00] (target 15: met)" in trace, trace  # (31.5 - 1.5) / 2
        assert "waits for ring room a process 103 [101..105], waited 250.0" in trace, trace
        counter = line_of(text, "counter rung, 1 thread(s)")
        assert "adds 5.0 [5.0..5.0] %" in counter and "met" in counter, counter
        # A run under the tool that was dormant is flagged.
        ladder_round(os.path.join(out, "round-06"), 6, 0.0, attached=0)
        status, text = run(ladder_results.table, out)
        assert "[monitor state unexpected]" in line_of(text, "4 EXECUTION_TIME aggr.        1"), text


def test_sim_throughput():
    with tempfile.TemporaryDirectory() as out:
        for r in range(1, 6):
            for side, rate in (("A", 200e6), ("B", 300e6)):
                d = os.path.join(out, f"round-{r:02d}")
                os.makedirs(d, exist_ok=True)
                gb_json(os.path.join(d, side + ".json"), [
                    ("BM_L1L2_matmul_ijk", 1, 10e6, 20e6, {"items_per_second": rate + r}),
                    ("BM_L1L2_split2_two_threads_matmul_ijk/real_time", 1, 5e6, 10e6,
                     {"items_per_second": 100e6, "items_per_cpu_second": 60e6}),
                ], repetitions=1 if side == "B" else 3)
        status, text = run(sim_results.throughput, out)
        assert status == 0, text
        cpu = line_of(text, "L1L2_matmul_ijk ")
        assert "200.0 [200.0..200.0]" in cpu and cpu.endswith("B higher"), cpu
        wall = text.splitlines()[text.splitlines().index(cpu) + 1]
        assert "100.0 [100.0..100.0]" in wall, wall  # items x cpu / real
        two = line_of(text, "L1L2_split2_two_threads_matmul_ijk")
        assert "60.0 [60.0..60.0]" in two and two.endswith("within noise"), two


def test_sim_slowdown():
    names = ["A: native", "B: native", "A: simulated", "B: simulated"]
    with tempfile.TemporaryDirectory() as out:
        path = os.path.join(out, "slowdown.csv")
        with open(path, "w") as f:
            f.write("order,round,variant,ms,cpu_ms\n")
            for r in range(1, 6):
                # B's native is twice as slow and so is its simulated run:
                # the same slowdown, 10x by wall and 20x by CPU.
                for v, ms, cpu in ((0, 10, 10), (1, 20, 20), (2, 100, 200), (3, 200, 400)):
                    f.write(f"ijk,{r},{v},{ms * (1 + 0.01 * r)},{cpu}\n")  # the round's speed moves all
        status, text = run(sim_results.slowdown, path, names)
        assert status == 0, text
        native = line_of(text, "ijk   native")
        assert native.endswith("B slower"), native
        sim = line_of(text, "ijk   simulated")
        assert "10.00 [" in sim and sim.endswith("within noise"), sim
        cpu = text.splitlines()[text.splitlines().index(sim) + 1]
        assert "20.00 [20.00..20.00]" in cpu, cpu


if __name__ == "__main__":
    for test in (test_ladder_compare, test_ladder_table, test_sim_throughput, test_sim_slowdown):
        test()
    print("test_results.py: passed")
