"""``pgivm bench fivm``: F-IVM against first-order IVM, recompute and no view, in one run.

Four workloads on the Housing-like star (``pgivm.data.housing``) and the TPC-H snowflake
(``pgivm.data.tpch``), each on freshly generated data per system so every system starts from
the same database and gets the same stream:

1. ``batches``: count/sum with GROUP BY under the paper's update workload, inserts to every
   relation round-robin in batches of 1,000, each batch one COPY committed on its own; tuples/s.
2. ``cofactor``: the regression aggregate over m features, F-IVM's degree-m matrix ring against
   first-order IVM holding the same 1 + m + m(m+1)/2 sums as separate columns.
3. ``single``: single-row inserts into the fact table (house) and into a dimension (transport)
   at growing scale: median latency, rows read per insert (pg_stat_xact_user_tables over the base
   and state tables), fitted log-log slope against the database size.
4. ``listing``: the factorized listing of the six-way join: state bytes against the flat result's
   rows and a flat first-order materialization's bytes, and time per 1,000-row batch.

Every base table has a btree index on its join columns for every system (first-order needs them;
no system is given an index the others lack). Tables print as they complete; the last one lists
the issue's targets with the measured values.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from pgivm import command
from pgivm.bench.scaling import fit_loglog
from pgivm.data import housing, tpch
from pgivm.bench.plots import _pyplot
from pgivm.report import human_bytes, print_table


def _plot(config: Config, filename: str, draw: Any) -> None:
    """Draw one PNG into ``config.out`` (skipped without an output folder or matplotlib)."""
    if config.out is None:
        return
    plt = _pyplot()
    if plt is None:
        return
    config.out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    draw(ax)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    path = config.out / filename
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"plot: {path}")

HOUSING_JOIN = ("FROM house h JOIN shop s USING (postcode) JOIN institution i USING (postcode) "
                "JOIN restaurant r USING (postcode) JOIN demographics d USING (postcode) JOIN transport t USING (postcode)")
HOUSING_SUM = f"SELECT h.nbbedrooms, count(*) AS n, sum(h.price) AS price {HOUSING_JOIN} GROUP BY h.nbbedrooms"
TPCH_SUM = ("SELECT n.n_name, count(*) AS n, sum(l.l_extendedprice) AS revenue FROM lineitem l "
            "JOIN orders o ON l.l_orderkey = o.o_orderkey JOIN customer c ON o.o_custkey = c.c_custkey "
            "JOIN nation n ON c.c_nationkey = n.n_nationkey GROUP BY n.n_name")
TPCH_TABLES = ("nation", "customer", "orders", "lineitem")
FEATURES = ["h.price", "h.livingarea", "h.nbbedrooms", "h.nbbathrooms", "s.openinghoursshop", "s.pricerangeshop",
            "d.averagesalary", "d.crimesperyear", "t.nbbuslines", "t.nbtrainstations", "r.pricerangerest",
            "i.sizeinstitution"]
HOUSING_LISTING = ("SELECT * FROM house JOIN shop USING (postcode) JOIN institution USING (postcode) "
                   "JOIN restaurant USING (postcode) JOIN demographics USING (postcode) JOIN transport USING (postcode)")


@dataclass
class Config:
    scale: int = 2
    postcodes: int = 5_000
    batches: int = 30  # 1,000-row batches per system in the batch workloads
    recompute_batches: int = 3
    tpch_scale: float = 0.01
    features: int = 10
    single_scales: tuple[int, ...] = (1, 2, 5, 10, 20)
    single_postcodes: int = 1_000
    single_updates: int = 200
    listing_scales: tuple[int, ...] = (1, 2, 4, 8)
    listing_postcodes: int = 1_000
    listing_flat_limit: int = 2_000_000  # first-order's flat materialization is built up to this many rows
    seed: int = 1
    out: Path | None = None  # where the PNG plots go (none: no plots)
    targets: list[list[Any]] = field(default_factory=list)


def _state_bytes(conn: psycopg.Connection, name: str) -> int:
    row = conn.execute("SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                       "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'",
                       [f"pgivm_{name}"]).fetchone()
    return int(row[0]) if row else 0


def _reset(conn: psycopg.Connection) -> None:
    for view in command.list_views(target=conn):
        command.drop(view.name, target=conn)
    conn.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")


def _run_batches(conn: psycopg.Connection, batches: Iterator[tuple[str, list[Any]]], insert: Any, count: int) -> tuple[int, float]:
    rows, seconds = 0, 0.0
    for table, batch in islice(batches, count):
        started = time.perf_counter()
        with conn.transaction():
            insert(conn, table, batch)
        seconds += time.perf_counter() - started
        rows += len(batch)
    return rows, seconds


def _systems(config: Config) -> list[tuple[str, int]]:
    return [("none", config.batches), ("fivm", config.batches), ("first-order", config.batches),
            ("recompute", config.recompute_batches)]


def batches(conn: psycopg.Connection, config: Config) -> dict[str, dict[str, float]]:
    """Workload 1: tuples/s per system on Housing and on TPC-H."""
    results: dict[str, dict[str, float]] = {}
    table_rows = []
    for dataset in ("housing", "tpch"):
        results[dataset] = {}
        for system, count in _systems(config):
            _reset(conn)
            if dataset == "housing":
                housing.generate(conn, config.scale, seed=config.seed, postcodes=config.postcodes)
                stream = housing.stream(config.scale, seed=config.seed + 1, postcodes=config.postcodes, batch=1000)
                insert, query = housing.insert, HOUSING_SUM
            else:
                counts = tpch.generate(conn, config.tpch_scale, seed=config.seed)
                stream = tpch.stream(config.tpch_scale, seed=config.seed + 1, batch=1000, counts=counts, tables=TPCH_TABLES)
                insert, query = tpch.insert, TPCH_SUM
            if system != "none":
                command.create("v", query, system=system, target=conn)
            rows, seconds = _run_batches(conn, stream, insert, count)
            if system != "none":
                report = command.verify("v", target=conn)
                assert report.ok, f"{system} on {dataset}: verify failed: {[str(f) for f in report.failures]}"
            results[dataset][system] = rows / seconds
            table_rows.append([dataset, system, count, rows, f"{seconds:.2f}", f"{rows / seconds:,.0f}"])
            print_table(["data", "system", "batches", "tuples", "seconds", "tuples/s"], [table_rows[-1]])
    print("\nbatches of 1,000 inserts to all relations, round-robin (count/sum with GROUP BY):")
    print_table(["data", "system", "batches", "tuples", "seconds", "tuples/s"], table_rows)
    def draw_batches(ax: Any) -> None:
        systems = ["none", "fivm", "first-order", "recompute"]
        width = 0.2
        for i, system in enumerate(systems):
            ax.bar([d + (i - 1.5) * width for d in range(len(results))], [r[system] for r in results.values()],
                   width, label=system if system != "none" else "no view")
        ax.set_xticks(range(len(results)), list(results))
        ax.set_yscale("log")
        ax.set_ylabel("tuples/s (log)")
        ax.set_title("batches of 1,000 inserts to all relations")

    _plot(config, "fivm-batches.png", draw_batches)
    for dataset, r in results.items():
        config.targets.append([f"{dataset}: fivm / first-order tuples/s (≥ 5)", f"{r['fivm'] / r['first-order']:.2f}",
                               _met(r["fivm"] / r["first-order"] >= 5)])
        config.targets.append([f"{dataset}: fivm / recompute tuples/s (≥ 100)", f"{r['fivm'] / r['recompute']:.0f}",
                               _met(r["fivm"] / r["recompute"] >= 100)])
        config.targets.append([f"{dataset}: fivm / no view tuples/s (≥ 0.3)", f"{r['fivm'] / r['none']:.2f}",
                               _met(r["fivm"] / r["none"] >= 0.3)])
    return results


def _met(ok: bool) -> str:
    return "met" if ok else "missed"


def cofactor(conn: psycopg.Connection, config: Config) -> dict[str, float]:
    """Workload 2: cofactor(m features) under fivm vs the same sums as columns under first-order."""
    features = FEATURES[:config.features]
    m = len(features)
    ring_sql = f"SELECT cofactor({', '.join(features)}) {HOUSING_JOIN}"
    sums = ["count(*) AS c"] + [f"sum({x}) AS s{j}" for j, x in enumerate(features)]
    # in numeric, as the cofactor ring keeps them: price·price overflows integer, and PostgreSQL's
    # query (so first-order's view) fails on the first row where it does
    sums += [f"sum(1.0 * {features[j]} * {features[k]}) AS q{j}_{k}" for j in range(m) for k in range(j, m)]
    sums_sql = f"SELECT {', '.join(sums)} {HOUSING_JOIN}"
    out: dict[str, float] = {}
    rows_out = []
    matrices = {}
    for system, query in (("fivm", ring_sql), ("first-order", sums_sql)):
        _reset(conn)
        housing.generate(conn, config.scale, seed=config.seed, postcodes=config.postcodes)
        created = command.create("v", query, system=system, target=conn)
        stream = housing.stream(config.scale, seed=config.seed + 1, postcodes=config.postcodes, batch=1000)
        rows, seconds = _run_batches(conn, stream, housing.insert, config.batches)
        out[system] = rows / seconds
        if system == "fivm":
            matrices[system] = {(i, j): v for i, j, v in conn.execute("SELECT i, j, value FROM v")}
        else:
            values = conn.execute("SELECT * FROM v").fetchone()
            names = ["c"] + [f"s{j}" for j in range(m)] + [f"q{j}_{k}" for j in range(m) for k in range(j, m)]
            got = dict(zip(names, values))
            matrix = {(0, 0): float(got["c"])}
            for j in range(m):
                matrix[(0, j + 1)] = matrix[(j + 1, 0)] = float(got[f"s{j}"])
                for k in range(j, m):
                    matrix[(j + 1, k + 1)] = matrix[(k + 1, j + 1)] = float(got[f"q{j}_{k}"])
            matrices[system] = matrix
        rows_out.append([system, m, 1 + m + m * (m + 1) // 2, f"{created.seconds:.2f}", config.batches, rows,
                         f"{seconds:.2f}", f"{rows / seconds:,.0f}", human_bytes(_state_bytes(conn, "v"))])
        print_table(["system", "m", "aggregates", "create s", "batches", "tuples", "seconds", "tuples/s", "state"], [rows_out[-1]])
    agree = all(abs(matrices["fivm"][key] - value) <= 1e-9 * max(1.0, abs(value)) for key, value in matrices["first-order"].items())
    print(f"\ncofactor matrix over {m} features (fivm: the degree-{m} matrix ring; first-order: the same sums as "
          f"columns); the two matrices agree to 1e-9: {agree}")
    print_table(["system", "m", "aggregates", "create s", "batches", "tuples", "seconds", "tuples/s", "state"], rows_out)
    assert agree, "fivm's cofactor matrix differs from first-order's sums"
    config.targets.append([f"cofactor m={m}: fivm / first-order tuples/s (≥ 10)", f"{out['fivm'] / out['first-order']:.2f}",
                           _met(out["fivm"] / out["first-order"] >= 10)])
    return out


def _rows_read(conn: psycopg.Connection) -> int:
    row = conn.execute("SELECT coalesce(sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)), 0) "
                       "FROM pg_stat_xact_user_tables").fetchone()
    return int(row[0]) if row else 0


def single(conn: psycopg.Connection, config: Config) -> None:
    """Workload 3: single-row inserts (then deletes) into house and transport at growing scale."""
    table_rows = []
    series: dict[str, tuple[list[float], list[float]]] = {"house": ([], []), "transport": ([], [])}
    for scale in config.single_scales:
        _reset(conn)
        counts = housing.generate(conn, scale, seed=config.seed, postcodes=config.single_postcodes)
        size = sum(counts.values())
        command.create("v", HOUSING_SUM, system="fivm", target=conn)
        for table in ("house", "transport"):
            columns = housing.COLUMNS[table]
            new_rows = list(islice(housing.stream(scale, seed=config.seed + 2, postcodes=config.single_postcodes,
                                                  batch=1, per_table=config.single_updates), 6 * config.single_updates))
            new_rows = [rows[0] for name, rows in new_rows if name == table][:config.single_updates]
            insert = sql.SQL("INSERT INTO {} VALUES ({})").format(sql.Identifier(table), sql.SQL(", ").join(sql.Placeholder() * len(columns)))
            times, reads = [], []
            for row in new_rows:
                with conn.transaction():
                    before = _rows_read(conn)
                    started = time.perf_counter()
                    conn.execute(insert, row)
                    times.append(time.perf_counter() - started)
                    reads.append(_rows_read(conn) - before)
            delete = sql.SQL("DELETE FROM {} WHERE ctid = (SELECT ctid FROM {} WHERE postcode = %s LIMIT 1)").format(
                sql.Identifier(table), sql.Identifier(table))
            deletes = []
            for row in new_rows:
                started = time.perf_counter()
                conn.execute(delete, [row[0]])
                deletes.append(time.perf_counter() - started)
            median = statistics.median(times)
            series[table][0].append(size)
            series[table][1].append(median)
            table_rows.append([table, scale, f"{size:,}", len(times), f"{median * 1000:.3f}",
                               f"{statistics.median(deletes) * 1000:.3f}", f"{statistics.median(reads):.0f}"])
            print_table(["table", "scale", "database rows", "inserts", "median insert ms", "median delete ms",
                         "rows read per insert"], [table_rows[-1]])
        assert command.verify("v", target=conn).ok
    print("\nsingle-row inserts under fivm (Housing count/sum GROUP BY), each its own transaction:")
    print_table(["table", "scale", "database rows", "inserts", "median insert ms", "median delete ms",
                 "rows read per insert"], table_rows)
    def draw_single(ax: Any) -> None:
        for table, (xs, ys) in series.items():
            ax.plot(xs, [y * 1000 for y in ys], "o-", label=f"insert into {table}")
        ax.set_xscale("log")
        ax.set_xlabel("database rows (log)")
        ax.set_ylabel("median insert (ms)")
        ax.set_ylim(bottom=0)
        ax.set_title("fivm: single-row inserts against the database size")

    _plot(config, "fivm-single.png", draw_single)
    for table, (xs, ys) in series.items():
        fit = fit_loglog(xs, ys, table)
        if fit is not None:
            print(f"fitted log-log slope of the median insert time against the database size ({table}): {fit.slope:.3f}")
            if table == "house":
                config.targets.append(["single-row inserts into the fact table: log-log slope (≤ 0.1)",
                                       f"{fit.slope:.3f}", _met(fit.slope <= 0.1)])


def listing(conn: psycopg.Connection, config: Config) -> None:
    """Workload 4: the factorized listing of Housing's join against a flat first-order materialization."""
    table_rows = []
    last: dict[str, Any] = {}
    points: list[dict[str, Any]] = []
    for scale in config.listing_scales:
        flat_rows = housing.join_size(scale, config.listing_postcodes)
        entry: dict[str, Any] = {"scale": scale, "flat_rows": flat_rows}
        for system in ("fivm", "first-order"):
            if system == "first-order" and flat_rows > config.listing_flat_limit:
                continue
            _reset(conn)
            counts = housing.generate(conn, scale, seed=config.seed, postcodes=config.listing_postcodes)
            created = command.create("flat", HOUSING_LISTING, system=system, target=conn)
            stream = housing.stream(scale, seed=config.seed + 3, postcodes=config.listing_postcodes, batch=1000)
            rows, seconds = _run_batches(conn, stream, housing.insert, 6)
            entry[system] = {"bytes": _state_bytes(conn, "flat"), "batch_ms": seconds / 6 * 1000, "create": created.seconds,
                             "base": sum(counts.values())}
            count = conn.execute("SELECT count FROM pgivm_flat.result").fetchone()[0]
            entry["count_after"] = count
        fivm, first = entry["fivm"], entry.get("first-order")
        table_rows.append([scale, f"{entry['fivm']['base']:,}", f"{flat_rows:,}", human_bytes(fivm["bytes"]),
                           human_bytes(first["bytes"]) if first else "not built", f"{fivm['batch_ms']:.1f}",
                           f"{first['batch_ms']:.1f}" if first else "-",
                           f"{first['bytes'] / fivm['bytes']:.1f}" if first else "-"])
        print_table(["scale", "base rows", "flat join rows", "fivm state", "first-order flat", "fivm ms/batch",
                     "first-order ms/batch", "space ratio"], [table_rows[-1]])
        points.append(entry)
        last = entry

    def draw_listing(ax: Any) -> None:
        ax.plot([p["scale"] for p in points], [p["fivm"]["bytes"] / 2**20 for p in points], "o-", label="fivm state")
        built = [p for p in points if "first-order" in p]
        ax.plot([p["scale"] for p in built], [p["first-order"]["bytes"] / 2**20 for p in built], "s-",
                label="first-order flat materialization")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("Housing scale (log)")
        ax.set_ylabel("MB (log)")
        ax.set_title("factorized listing: state against the flat join")

    _plot(config, "fivm-listing.png", draw_listing)
    print(f"\nfactorized listing ({config.listing_postcodes:,} postcodes): state against the flat join; "
          "6 batches of 1,000 inserts per system and scale")
    print_table(["scale", "base rows", "flat join rows", "fivm state", "first-order flat", "fivm ms/batch",
                 "first-order ms/batch", "space ratio"], table_rows)
    built = [e for e in table_rows if e[4] != "not built"]
    if built:
        print(f"(first-order's flat materialization is built while the flat join has at most "
              f"{config.listing_flat_limit:,} rows)")
    largest_first = max((s for s in config.listing_scales
                         if housing.join_size(s, config.listing_postcodes) <= config.listing_flat_limit), default=None)
    if largest_first is not None:
        row = next(r for r in table_rows if r[0] == largest_first)
        config.targets.append([f"listing at scale {largest_first}: flat first-order bytes / fivm bytes (≥ 100)", row[7],
                               _met(float(row[7]) >= 100)])
        config.targets.append([f"listing at scale {largest_first}: first-order / fivm ms per batch (> 1)",
                               f"{float(row[6]) / float(row[5]):.1f}", _met(float(row[6]) > float(row[5]))])


def main(conn: psycopg.Connection, config: Config, parts: tuple[str, ...] = ("batches", "cofactor", "single", "listing")) -> None:
    print(f"pgivm bench fivm: Housing scale {config.scale} with {config.postcodes:,} postcodes, TPC-H SF {config.tpch_scale}; "
          f"{config.batches} batches of 1,000 per system (recompute: {config.recompute_batches})")
    for part in parts:
        print(f"\n== {part} ==")
        {"batches": batches, "cofactor": cofactor, "single": single, "listing": listing}[part](conn, config)
    print("\ntargets (issue 11):")
    print_table(["target", "measured", ""], config.targets)
