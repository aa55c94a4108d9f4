"""``pgivm bench deferred``: deferred views (asymmetric batch IVM, He et al. ICDE 2005) measured.

- ``writes``: what a writer pays under an IVMε view over a graph (ε = ½): single-row INSERTs and
  one COPY of many rows, with no view, an immediate view, a deferred view whose writers take the
  actions, and a deferred view served by ``pgivm worker``; then what the worker's processing of
  the COPY cost against the immediate path's maintenance of it.
- ``tpch``: the paper's motivating case on TPC-H (partsupp, supplier, nation, region from
  ``tpchgen-cli``): a sum of supply costs over the 4-way join with the region filter, under F-IVM;
  each step updates one partsupp.supplycost and one supplier.nationkey. The cost functions are
  measured (``calibrate``); the same stream runs immediate, deferred with NAIVE and with ONLINE,
  and with no view. Total maintenance work (predicted from the cost functions, and measured) per
  planner, side by side: the paper's Figures 5 (simulated against actual) and 6.
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from pgivm import command, deferred
from pgivm.errors import PgivmError
from pgivm.report import print_table

EDGE_VIEW = ("SELECT count(*) FROM edges AS r JOIN edges AS s ON r.dst = s.src "
             "JOIN edges AS t ON s.dst = t.src AND t.dst = r.src")
TPCH_VIEW = ("SELECT sum(ps.ps_supplycost) AS cost FROM partsupp ps, supplier s, nation n, region r "
             "WHERE s.s_suppkey = ps.ps_suppkey AND s.s_nationkey = n.n_nationkey "
             "AND n.n_regionkey = r.r_regionkey AND r.r_name = 'MIDDLE EAST'")


@dataclass
class Config:
    edges: list[tuple[int, int]] = field(default_factory=list)
    source: str = ""
    parts: tuple[str, ...] = ("writes", "tpch")
    single_rows: int = 2_000  # single-row INSERTs per setting
    copy_rows: int = 100_000  # rows of the one COPY
    budget_ms: float = 50.0
    tpch_scale: float = 0.1
    steps: int = 1_000  # TPC-H: steps, each one partsupp and one supplier update
    tpch_budget_ms: float | None = None  # None: four times the largest measured setup cost
    seed: int = 1
    dsn: str = ""  # for the worker process
    out: Path | None = None  # plots
    targets: list[list[Any]] = field(default_factory=list)


# --- writes --------------------------------------------------------------------------------------


def _reset_edges(conn: psycopg.Connection, base: list[tuple[int, int]]) -> None:
    for view in command.list_views(target=conn):
        command.drop(view.name, target=conn)
    conn.execute("DROP TABLE IF EXISTS edges; CREATE TABLE edges (src int NOT NULL, dst int NOT NULL)")
    with conn.cursor().copy("COPY edges (src, dst) FROM STDIN") as copy:
        for row in base:
            copy.write_row(row)
    conn.execute("ANALYZE edges")


def _setting(conn: psycopg.Connection, setting: str, budget: float) -> None:
    if setting == "no view":
        return
    options: dict[str, Any] = {"epsilon": 0.5}
    if setting.startswith("deferred"):
        options.update(refresh="deferred", budget=budget)
    command.create("tri", EDGE_VIEW, system="ivme", target=conn, **options)


def _worker(dsn: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-m", "pgivm.cli", "worker", "--dsn", dsn, "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    with psycopg.connect(dsn, autocommit=True) as conn:
        for _ in range(400):
            if deferred.worker_pid(conn):
                return proc
            time.sleep(0.05)
    proc.kill()
    raise PgivmError("the pgivm worker did not start", proc.communicate()[1].strip()[-300:])


def _stop(proc: subprocess.Popen[str] | None) -> None:
    if proc is not None:
        proc.terminate()
        proc.communicate(timeout=60)


def writes(conn: psycopg.Connection, config: Config) -> None:
    rng = random.Random(config.seed)
    edges = list(config.edges)
    rng.shuffle(edges)
    base = edges[: max(len(edges) - config.single_rows, len(edges) // 2)]
    fresh = edges[len(base):][: config.single_rows]
    nodes = max(max(e) for e in edges) + 1
    bulk = [(rng.randrange(nodes), rng.randrange(nodes)) for _ in range(config.copy_rows)]
    settings = ("no view", "immediate", "deferred (writers act)", "deferred + worker")
    rows, single, copies, processing = [], {}, {}, {}
    for setting in settings:
        # single-row INSERTs, each committed
        _reset_edges(conn, base)
        _setting(conn, setting, config.budget_ms)
        worker = _worker(config.dsn) if setting == "deferred + worker" else None
        latencies = []
        try:
            for row in fresh:
                started = time.perf_counter()
                conn.execute("INSERT INTO edges VALUES (%s, %s)", row)
                latencies.append(time.perf_counter() - started)
        finally:
            _stop(worker)
        single[setting] = len(latencies) / sum(latencies)
        # one COPY
        _reset_edges(conn, base)
        _setting(conn, setting, config.budget_ms)
        worker = _worker(config.dsn) if setting == "deferred + worker" else None
        try:
            started = time.perf_counter()
            with conn.cursor().copy("COPY edges (src, dst) FROM STDIN") as copy:
                for row in bulk:
                    copy.write_row(row)
            copies[setting] = time.perf_counter() - started
            if setting.startswith("deferred"):
                # what processing the COPY costs: the worker's (or writer's) actions plus the rest at a refresh
                command.refresh("tri", target=conn)
                figures = command.status("tri", target=conn).figures
                processing[setting] = (figures["work_actual_ms"] / 1e3, figures["actions"])
                assert command.verify("tri", target=conn).ok, "deferred view differs from its recount"
        finally:
            _stop(worker)
        rows.append([setting, f"{single[setting]:,.0f}", f"{single[setting] / single['no view']:.2f}",
                     f"{copies[setting]:.2f}", f"{copies[setting] / copies['no view']:.2f}",
                     f"{processing[setting][0]:.2f} ({processing[setting][1]} actions)" if setting in processing else ""])
    print(f"\n== writes under an IVMε triangle view (ε = 1/2) over {config.source}: {len(base):,} edges loaded, "
          f"{len(fresh):,} single-row INSERTs, one COPY of {config.copy_rows:,} rows, budget {config.budget_ms:g} ms ==")
    print_table(["setting", "single rows/s", "× no view", "COPY s", "× no view", "processing of the COPY s"], rows)
    immediate_maintenance = copies["immediate"] - copies["no view"]
    print(f"immediate maintenance of the COPY: {immediate_maintenance:.2f} s (its COPY minus the COPY with no view)")
    config.targets += [
        ["single-row writes under a deferred IVMε view ≥ 0.8× no view",
         f"{single['deferred + worker'] / single['no view']:.2f}× with the worker, "
         f"{single['deferred (writers act)'] / single['no view']:.2f}× without (immediate "
         f"{single['immediate'] / single['no view']:.2f}×)"],
        [f"COPY of {config.copy_rows:,} rows under a deferred view with the worker ≤ 1.5× no view",
         f"{copies['deferred + worker'] / copies['no view']:.2f}×"],
        ["the worker's processing of it ≤ the immediate path's maintenance of it",
         f"{processing['deferred + worker'][0]:.2f} s against {immediate_maintenance:.2f} s"],
    ]


# --- TPC-H: the paper's asymmetric case -------------------------------------------------------------


def _load_tpch(conn: psycopg.Connection, scale: float) -> dict[str, int]:
    from pgivm.data.tpch import tpchgen_executable

    executable = tpchgen_executable()
    if executable is None:
        raise PgivmError("tpchgen-cli not found", "pip install tpchgen-cli (it is in the dev and bench extras)")
    columns = {"partsupp": [("ps_partkey", "int"), ("ps_suppkey", "int"), ("ps_supplycost", "bigint")],
               "supplier": [("s_suppkey", "int"), ("s_nationkey", "int")],
               "nation": [("n_nationkey", "int"), ("n_regionkey", "int")],
               "region": [("r_regionkey", "int"), ("r_name", "text")]}
    counts = {}
    with tempfile.TemporaryDirectory(prefix="pgivm-deferred-") as directory:
        subprocess.run([executable, "csv", "--scale-factor", repr(float(scale)), "--tables", ",".join(columns),
                        "--output-dir", directory, "--quiet"], check=True, capture_output=True)
        for table, cols in columns.items():
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(sql.Identifier(table)))
            conn.execute(sql.SQL("CREATE TABLE {} ({})").format(sql.Identifier(table), sql.SQL(", ").join(
                sql.SQL("{} {}").format(sql.Identifier(c), sql.SQL(t)) for c, t in cols)))  # type: ignore[arg-type]
            import csv

            with open(Path(directory) / f"{table}.csv", newline="") as handle:
                reader = csv.DictReader(handle)
                with conn.cursor().copy(sql.SQL("COPY {} FROM STDIN").format(sql.Identifier(table))) as copy:
                    for line in reader:
                        # supply costs in cents: exact sums
                        copy.write_row([round(float(line[c]) * 100) if c == "ps_supplycost" else line[c] for c, _ in cols])
            counts[table] = int(conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table))).fetchone()[0])  # type: ignore[index]
    # The writers' UPDATEs find a partsupp row by index. (F-IVM never reads the base tables while it
    # maintains: whatever asymmetry there is between the two tables' batches lies in its view tree,
    # and calibrate measures it.)
    conn.execute("CREATE INDEX ON partsupp (ps_partkey, ps_suppkey)")
    conn.execute("ANALYZE partsupp, supplier, nation, region")
    return counts


def _tpch_stream(conn: psycopg.Connection, steps: int, seed: int) -> list[tuple[str, list[int]]]:
    rng = random.Random(seed)
    keys = conn.execute("SELECT ps_partkey, ps_suppkey FROM partsupp ORDER BY 1, 2").fetchall()
    suppliers = int(conn.execute("SELECT max(s_suppkey) FROM supplier").fetchone()[0])  # type: ignore[index]
    out = []
    for _ in range(steps):
        part, supp = rng.choice(keys)
        out.append(("UPDATE partsupp SET ps_supplycost = %s WHERE ps_partkey = %s AND ps_suppkey = %s",
                    [rng.randint(100, 100_000), part, supp]))
        out.append(("UPDATE supplier SET s_nationkey = %s WHERE s_suppkey = %s", [rng.randint(0, 24), rng.randint(1, suppliers)]))
    return out


def tpch(conn: psycopg.Connection, config: Config) -> None:
    started = time.perf_counter()
    for view in command.list_views(target=conn):
        command.drop(view.name, target=conn)
    counts = _load_tpch(conn, config.tpch_scale)
    stream = _tpch_stream(conn, config.steps, config.seed)
    print(f"\n== the paper's case on TPC-H SF {config.tpch_scale:g} ({', '.join(f'{t} {n:,}' for t, n in counts.items())}; "
          f"loaded in {time.perf_counter() - started:.1f} s): {config.steps:,} steps of one partsupp.supplycost and one "
          f"supplier.nationkey update ==")
    # cost functions, measured once (the data is the same for every run)
    command.create("q", TPCH_VIEW, system="fivm", refresh="deferred", budget=config.budget_ms, target=conn)
    fits = command.calibrate("q", ladder=(1, 4, 16, 64, 256, 1024), repeats=3, target=conn)
    print_table(["table", "measured (log rows: ms)", "a ms", "b ms"],
                [[f.table, ", ".join(f"{k:,}: {y:.1f}" for k, y in f.points), f"{f.a_ms:.4f}", f"{f.b_ms:.2f}"] for f in fits])
    costs = {f.table: (f.a_ms, f.b_ms) for f in fits}
    # C where the planners have to choose: a few setups' worth (the paper sets C against its costs too)
    budget = config.tpch_budget_ms or 4 * max(b for _, b in costs.values())
    print(f"budget C = {budget:.2f} ms ({'given' if config.tpch_budget_ms else 'four times the largest setup cost b'})")
    command.drop("q", target=conn)
    snapshot = {t: conn.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(t))).fetchall() for t in ("partsupp", "supplier")}

    def restore() -> None:
        for table, rows in snapshot.items():
            conn.execute(sql.SQL("TRUNCATE {}").format(sql.Identifier(table)))
            with conn.cursor().copy(sql.SQL("COPY {} FROM STDIN").format(sql.Identifier(table))) as copy:
                for row in rows:
                    copy.write_row(row)
        conn.execute("ANALYZE partsupp, supplier")

    results: dict[str, dict[str, Any]] = {}
    for setting in ("no view", "immediate", "naive", "online"):
        restore()
        if setting != "no view":
            options: dict[str, Any] = {} if setting == "immediate" else {"refresh": "deferred", "budget": budget,
                                                                          "planner": setting}
            command.create("q", TPCH_VIEW, system="fivm", target=conn, **options)
            if setting in ("naive", "online"):
                for label, (a, b) in costs.items():
                    conn.execute("UPDATE pgivm_q.deferred_table SET a_ms = %s, b_ms = %s, calibrated = now() WHERE label = %s",
                                 [a, b, label])
        latencies = []
        for statement, params in stream:
            begun = time.perf_counter()
            conn.execute(statement, params)
            latencies.append(time.perf_counter() - begun)
        result: dict[str, Any] = {"stream": sum(latencies), "p99": sorted(latencies)[int(0.99 * len(latencies))]}
        if setting in ("naive", "online"):
            command.refresh("q", target=conn)  # the refresh at T
            figures = command.status("q", target=conn).figures
            result.update(actions=figures["actions"], predicted=figures["work_predicted_ms"], actual=figures["work_actual_ms"])
            per_table = conn.execute("SELECT label, actions FROM pgivm_q.deferred_table ORDER BY number").fetchall()
            result["per_table"] = ", ".join(f"{label.split('.')[-1]} {n}" for label, n in per_table)
        if setting != "no view":
            report = command.verify("q", target=conn)
            assert report.ok, f"{setting}: the view differs from its recount"
            command.drop("q", target=conn)
        results[setting] = result
    base = results["no view"]["stream"]
    rows = []
    for setting, r in results.items():
        work = r["actual"] / 1e3 if "actual" in r else r["stream"] - base
        rows.append([setting, f"{r['stream']:.2f}", f"{r['p99'] * 1e3:.1f}", r.get("actions", ""), r.get("per_table", ""),
                     f"{r['predicted'] / 1e3:.2f}" if "predicted" in r else "", f"{work:.2f}" if setting != "no view" else "",
                     f"{work * 1e3 / len(stream):.3f}" if setting != "no view" else ""])
    print_table(["setting", "stream s", "p99 write ms", "actions", "actions per table", "work predicted s",
                 "work measured s", "ms per modification"], rows)
    print("work measured: the actions' and the final refresh's own time (deferred); the stream's time over the "
          "no-view stream (immediate)")
    online, naive = results["online"], results["naive"]
    config.targets.append(["total maintenance work, ONLINE ≤ 0.7× NAIVE on the asymmetric TPC-H case",
                           f"{online['actual'] / naive['actual']:.2f}× measured, "
                           f"{online['predicted'] / naive['predicted']:.2f}× predicted"])
    config.targets.append(["simulated against actual cost (the paper's Figure 5)",
                           "; ".join(f"{p}: predicted {results[p]['predicted'] / 1e3:.2f} s, measured {results[p]['actual'] / 1e3:.2f} s"
                                     for p in ("naive", "online"))])


def main(conn: psycopg.Connection, config: Config) -> None:
    print(f"pgivm bench deferred: parts {', '.join(config.parts)}; budget C = {config.budget_ms:g} ms")
    if "writes" in config.parts:
        writes(conn, config)
    if "tpch" in config.parts:
        tpch(conn, config)
    print("\ntargets (issue 13):")
    print_table(["target", "measured"], config.targets)
