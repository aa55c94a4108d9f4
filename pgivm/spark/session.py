"""The SparkSession for pgivm: local master, the PostgreSQL JDBC driver, and JDBC URLs from DSNs.

The driver jar is ``$PGIVM_JDBC_JAR`` when set (a path to a postgresql-*.jar), else the jar of
``org.postgresql:postgresql`` already in the local ivy or Maven repository, else that Maven
coordinate resolved by Spark (through Ivy, from the local repositories or the network). Missing
Java or a missing driver is a one-line PgivmError.

Start-up is quiet: Spark logs errors only (its own log4j2 configuration, below), and a driver jar
found locally spares the Ivy resolution report; only a first resolution prints Ivy's.

Two variables tune the session without code: ``$PGIVM_SPARK_CONF``, settings over pgivm's own
(``key=value`` pairs separated by spaces, e.g. ``spark.sql.shuffle.partitions=2``), and
``$PGIVM_SPARK_JAVA_OPTIONS``, options of the driver's JVM (e.g. ``-XX:TieredStopAtLevel=1``, which
starts faster and compiles less: what the tests use, where every Spark job is tiny).

The driver's JVM loads Spark's classes from an archive of them (Java's AppCDS), written by the
first session that finds none, at its JVM's exit, and kept in ``~/.cache/pgivm`` (or at
``$PGIVM_SPARK_CLASS_ARCHIVE``; ``off`` for none): measured here, a session starts in 2.1 s
instead of 4.7 and runs a first trivial job in 2.1 s instead of 4.5 (``validate --spark`` of a
tiny view: about 2 s less of 10). The archive is a cache: Java
checks it against its own build and the class path, and starts without it when they differ.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from psycopg.conninfo import conninfo_to_dict

from pgivm.errors import PgivmError

JDBC_PACKAGE = "org.postgresql:postgresql:42.7.13"
JDBC_DRIVER = "org.postgresql.Driver"

_session: Any = None

# Spark's log4j2 configuration: errors only, on stderr, in Spark's own layout. The PySpark gateway's
# logger gets the root's level too: when they differ Spark prints "Setting default log level".
_LOG4J2_PROPERTIES = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
"""


def jdbc_url_from_dsn(dsn: str) -> tuple[str, dict[str, str]]:
    """A JDBC URL and connection properties (user, password, driver) for a libpq DSN or URL.

    JDBC speaks TCP only: a Unix-socket host (a path) or no host becomes 127.0.0.1, same port.
    """
    params = conninfo_to_dict(dsn)
    host = params.get("host") or os.environ.get("PGHOST") or ""
    if not host or host.startswith("/") or host.startswith("@"):
        host = params.get("hostaddr") or "127.0.0.1"
    host = host.split(",")[0]
    port = str(params.get("port") or os.environ.get("PGPORT") or 5432).split(",")[0]
    dbname = params.get("dbname") or os.environ.get("PGDATABASE") or params.get("user") or "postgres"
    user = params.get("user") or os.environ.get("PGUSER") or "postgres"
    props = {"user": user, "driver": JDBC_DRIVER}
    password = params.get("password") or os.environ.get("PGPASSWORD")
    if password:
        props["password"] = password
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"jdbc:postgresql://{host}:{port}/{dbname}", props


def _check_java() -> None:
    home = os.environ.get("JAVA_HOME")
    if home:
        if not os.path.exists(os.path.join(home, "bin", "java")):
            raise PgivmError(f"JAVA_HOME={home} has no bin/java",
                             "install Java 17 (e.g. apt-get install openjdk-17-jre-headless) and set JAVA_HOME to it")
    elif shutil.which("java") is None:
        raise PgivmError("Spark needs Java, and no java is on PATH and JAVA_HOME is not set",
                         "install Java 17 (e.g. apt-get install openjdk-17-jre-headless) and set JAVA_HOME")


def _jar_config() -> dict[str, str]:
    jar = os.environ.get("PGIVM_JDBC_JAR")
    if jar:
        if not os.path.isfile(jar):
            raise PgivmError(f"PGIVM_JDBC_JAR={jar} is not a file", "point it to a PostgreSQL JDBC driver jar (postgresql-42.x.jar)")
        return {"spark.jars": jar, "spark.driver.extraClassPath": jar, "spark.executor.extraClassPath": jar}
    local = _local_driver_jar()
    if local is not None:
        # What resolving the coordinate would add (checker-qual is excluded), without Ivy's report.
        return {"spark.jars": str(local)}
    return {"spark.jars.packages": JDBC_PACKAGE, "spark.jars.excludes": "org.checkerframework:checker-qual"}


def _local_driver_jar() -> Path | None:
    """The driver jar of JDBC_PACKAGE where Spark's Ivy retrieves it, or in the local Maven repository."""
    group, artifact, version = JDBC_PACKAGE.split(":")
    home = Path.home()
    candidates = [
        home / ".ivy2" / "jars" / f"{group}_{artifact}-{version}.jar",
        home / ".m2" / "repository" / Path(*group.split(".")) / artifact / version / f"{artifact}-{version}.jar",
    ]
    return next((jar for jar in candidates if jar.is_file()), None)


@contextlib.contextmanager
def _log4j2_configuration() -> Iterator[str]:
    """The path of a file holding _LOG4J2_PROPERTIES, for as long as the driver JVM starts (log4j
    reads it once, at start-up)."""
    handle, path = tempfile.mkstemp(prefix="pgivm-log4j2-", suffix=".properties")
    try:
        with os.fdopen(handle, "w") as out:
            out.write(_LOG4J2_PROPERTIES)
        yield path
    finally:
        os.unlink(path)


def _settings_from_environment() -> dict[str, str]:
    """``$PGIVM_SPARK_CONF`` as settings: ``key=value`` pairs separated by spaces."""
    settings = {}
    for pair in os.environ.get("PGIVM_SPARK_CONF", "").split():
        key, equals, value = pair.partition("=")
        if not (key and equals and value):
            raise PgivmError(f"PGIVM_SPARK_CONF holds {pair!r}, not a key=value pair",
                             "write Spark settings as key=value separated by spaces, e.g. spark.sql.shuffle.partitions=2")
        settings[key] = value
    return settings


def _class_archive() -> tuple[str, Path | None]:
    """The JVM options that read Spark's class archive, or write it (at the JVM's exit, to a
    ``.part`` file: the JVM's pid is recorded beside it once known, and a later session adopts it
    when that JVM has exited; while one is written, other sessions start without); with the
    ``.part`` path written, else None."""
    setting = os.environ.get("PGIVM_SPARK_CLASS_ARCHIVE", "")
    if setting == "off":
        return "", None
    if setting:
        archive = Path(setting).expanduser()
    else:
        import pyspark

        key = f"{pyspark.__version__} {shutil.which('java')} {os.environ.get('JAVA_HOME', '')} {_jar_config()}"
        archive = Path.home() / ".cache" / "pgivm" / f"spark-{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsa"
    quiet = "-Xlog:cds=off,cds+dynamic=off"  # an archive Java cannot use is skipped without a word
    with contextlib.suppress(OSError):
        archive.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private(archive.parent) or (archive.exists() and not _private(archive)):
            return "", None  # classes another user could have put there: start without
        _adopt_finished_archives(archive)
        if archive.is_file():
            return f"-XX:SharedArchiveFile={archive} {quiet}", None
        if any(archive.parent.glob(f"{archive.name}.*.part*")):  # another session's JVM writes one: one is enough
            return "", None
        part = archive.with_name(f"{archive.name}.{os.getpid()}.{time.time_ns()}.part")
        return f"-XX:ArchiveClassesAtExit={part} {quiet}", part
    return "", None


def _private(path: Path) -> bool:
    """Only this user can change ``path`` (the class archive is code the JVM runs, and its
    directory decides what a later session finds there): ours, not writable by group or others."""
    found = path.stat()
    return found.st_uid == os.getuid() and not found.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _adopt_finished_archives(archive: Path) -> None:
    """The first archive a JVM finished writing becomes ``archive``; what a JVM that exited left
    (or a session that never recorded its JVM, after ten minutes) goes."""
    for written_by in archive.parent.glob(f"{archive.name}.*.part.jvm"):
        try:
            os.kill(int(written_by.read_text()), 0)
            continue  # still running (or writing)
        except (ValueError, ProcessLookupError):
            pass
        except PermissionError:
            continue
        part = written_by.with_suffix("")
        if part.exists() and not archive.exists():
            os.replace(part, archive)
        part.unlink(missing_ok=True)
        written_by.unlink(missing_ok=True)
    for part in archive.parent.glob(f"{archive.name}.*.part"):
        if not part.with_name(part.name + ".jvm").exists() and time.time() - part.stat().st_mtime > 600:
            part.unlink(missing_ok=True)


def get_spark(master: str = "local[*]") -> Any:
    """The process-wide SparkSession (created once; a later master is ignored)."""
    global _session
    if _session is not None and _session._jsc is not None and not _session._jsc.sc().isStopped():
        return _session
    _check_java()
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise PgivmError("pyspark is not installed", "pip install 'pgivm[spark]'") from None
    builder = SparkSession.builder.master(master).appName("pgivm")
    conf = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "8",
        "spark.driver.memory": os.environ.get("PGIVM_SPARK_DRIVER_MEMORY", "2g"),
        "spark.sql.session.timeZone": "UTC",
        **_jar_config(),
    }
    conf.update(_settings_from_environment())
    for key, value in conf.items():
        builder = builder.config(key, value)
    try:
        with _log4j2_configuration() as log_config:
            archive_options, part = _class_archive()
            java_options = (f"-Dlog4j2.configurationFile={log_config} {archive_options} "
                            f"{os.environ.get('PGIVM_SPARK_JAVA_OPTIONS', '')}")
            builder = builder.config("spark.driver.extraJavaOptions", java_options.strip())
            spark = builder.getOrCreate()
            if part is not None:  # the JVM that will write it: a later session adopts it once that JVM exited
                with contextlib.suppress(Exception):
                    part.with_name(part.name + ".jvm").write_text(str(spark.sparkContext._gateway.proc.pid))
    except Exception as err:  # JVM launch or dependency resolution
        first = (str(err).strip().splitlines() or ["error"])[0]
        raise PgivmError(f"cannot start Spark: {first}",
                         "check Java (JAVA_HOME) and the JDBC driver: set PGIVM_JDBC_JAR to a postgresql-42.x.jar") from None
    spark.sparkContext.setLogLevel("ERROR")
    try:
        jvm = spark.sparkContext._jvm  # type: ignore[union-attr]
        jvm.java.lang.Thread.currentThread().getContextClassLoader().loadClass(JDBC_DRIVER)
    except Exception:
        spark.stop()
        raise PgivmError("the PostgreSQL JDBC driver is not on Spark's classpath",
                         f"set PGIVM_JDBC_JAR to a postgresql-42.x.jar, or make {JDBC_PACKAGE} resolvable") from None
    _session = spark
    return spark


def stop_spark() -> None:
    global _session
    if _session is not None:
        _session.stop()
        _session = None


def conninfo_of(conn: Any) -> str:
    """A libpq conninfo reaching the same database as ``conn``, password included (for side connections)."""
    from psycopg.conninfo import make_conninfo

    password = conn.info.password
    return make_conninfo(conn.info.dsn, password=password) if password else conn.info.dsn
