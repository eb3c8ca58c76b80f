//! `hatf export` to Parquet, read by real query engines (DuckDB, DataFusion through their
//! Python packages): SQL over the table gives exactly the figures `hatf stats` gives (record
//! counts, bytes allocated, per-thread counts, the lifetime histogram).

mod support;

use std::path::Path;
use std::process::Command;

use support::{corpus, hatf};

/// True when `python3` can import `module`; prints why the test is skipped otherwise.
fn python_has(module: &str) -> bool {
    let ok = Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipping: python3 cannot import `{module}` (`pip install {module}`)");
    }
    ok
}

/// Runs `script` (which prints one JSON object) with the Parquet file as its argument.
fn python_json(script: &str, parquet: &Path) -> serde_json::Value {
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(parquet)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stdout));
    })
}

fn export(input: &Path, out: &Path) {
    hatf()
        .args(["export", "--to", "parquet"])
        .arg(input)
        .arg("-o")
        .arg(out)
        .assert()
        .success();
}

fn stats(input: &Path) -> serde_json::Value {
    let out = hatf()
        .args(["stats", "--json"])
        .arg(input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).unwrap()
}

/// memory_replay figures in SQL: every line is an event; bytes allocated are malloc's,
/// memalign's and realloc's size and calloc's nmemb × size.
const REPLAY_SQL: &str = r#"
with t as (select * from read_parquet(?) where record not like 'verbatim%')
select
  (select count(*) from t) as records,
  (select sum(case record when 'calloc' then extra * size
                          when 'free' then 0 when 'threadDone' then 0 else size end)::ubigint
     from t) as bytes_allocated,
  (select list({'name': thread::varchar, 'count': n, 'bytes': b} order by n desc, thread) from (
     select thread, count(*) as n,
            sum(case record when 'calloc' then extra * size
                            when 'free' then 0 when 'threadDone' then 0 else size end)::ubigint as b
     from t group by thread order by n desc, thread limit 10)) as top_threads,
  (select map(list(k), list(n)) from (
     select case record when 'threadDone' then 'destroy-thread' else record end as k,
            count(*) as n from t group by 1)) as records_by_kind
"#;

/// mtrace figures in SQL: a `<` line followed by its `>` line is one realloc, a lone `<` a free
/// and a lone `>` a malloc (as `hatf stats` pairs them).
const MTRACE_SQL: &str = r#"
with ops as (
  select record, size, lag(record) over w as prev, lead(record) over w as next
  from read_parquet(?) where record in ('malloc', 'free', 'reallocOld', 'reallocNew')
  window w as (order by index)),
kinds as (
  select case
    when record = 'malloc' then 'malloc'
    when record = 'free' then 'free'
    when record = 'reallocNew' and prev = 'reallocOld' then 'realloc'
    when record = 'reallocNew' then 'malloc'
    when record = 'reallocOld' and next is distinct from 'reallocNew' then 'free'
    end as kind, size from ops)
select
  (select count(*) from kinds where kind is not null) as records,
  (select sum(size)::ubigint from kinds where kind in ('malloc', 'realloc')) as bytes_allocated,
  (select map(list(kind), list(n)) from (
     select kind, count(*) as n from kinds where kind is not null group by kind)) as records_by_kind
"#;

/// The lifetime histogram of `hatf stats` in SQL, from `acts`: each event's births and deaths
/// by address, numbered by event (`now`, a death before a birth of the same event). A death
/// right after a birth at its address ends that object; the object's lifetime is the number
/// of events between, counted in power-of-two buckets.
const LIFETIMES_SQL: &str = r#"
deaths as (
  select now - lag(now) over w as lifetime, is_birth, lag(is_birth) over w as after_birth
  from acts window w as (partition by addr order by now, ord))
select list({'count': n, 'from': f} order by f) as lifetimes from (
  select pow(2, floor(log2(lifetime)))::ubigint as f, count(*) as n
  from deaths where is_birth = 0 and after_birth = 1 group by f)
"#;

/// memory_replay events as births and deaths: every line but a verbatim one is an event; a
/// realloc frees its old address and allocates its new one.
const REPLAY_ACTS_SQL: &str = r#"
with ev as (
  select *, row_number() over (order by index) as now
  from read_parquet(?) where record not like 'verbatim%'),
acts as (
  select now, address as addr, 1 as is_birth, 1 as ord from ev
    where record in ('malloc', 'calloc', 'memalign', 'realloc') and address <> 0
  union all
  select now, old_address, 0, 0 from ev where record = 'realloc' and old_address <> 0
  union all
  select now, address, 0, 0 from ev where record = 'free' and address <> 0),
"#;

/// mtrace events as births and deaths, paired as [`MTRACE_SQL`] pairs them: a realloc frees
/// the address of its `<` line and allocates the one of its `>` line.
const MTRACE_ACTS_SQL: &str = r#"
with ops as (
  select index, record, address, lag(record) over w as prev, lead(record) over w as next,
         lag(address) over w as prev_address
  from read_parquet(?) where record in ('malloc', 'free', 'reallocOld', 'reallocNew')
  window w as (order by index)),
kinds as (
  select index, address, prev_address, case
    when record = 'malloc' then 'malloc'
    when record = 'free' then 'free'
    when record = 'reallocNew' and prev = 'reallocOld' then 'realloc'
    when record = 'reallocNew' then 'malloc'
    when record = 'reallocOld' and next is distinct from 'reallocNew' then 'free'
    end as kind from ops),
ev as (select *, row_number() over (order by index) as now from kinds where kind is not null),
acts as (
  select now, address as addr, 1 as is_birth, 1 as ord from ev
    where kind in ('malloc', 'realloc') and address <> 0
  union all
  select now, prev_address, 0, 0 from ev where kind = 'realloc' and prev_address <> 0
  union all
  select now, address, 0, 0 from ev where kind = 'free' and address <> 0),
"#;

fn duckdb_script(sql: &str) -> String {
    format!(
        "import duckdb, json, sys\n\
         con = duckdb.connect()\n\
         con.execute('PRAGMA disable_progress_bar')\n\
         cur = con.execute('''{sql}''', [sys.argv[1]])\n\
         names = [d[0] for d in cur.description]\n\
         row = cur.fetchone()\n\
         print(json.dumps(dict(zip(names, row)), default=int))\n"
    )
}

#[test]
fn duckdb_computes_the_stats_of_a_memory_replay_trace() {
    if !python_has("duckdb") {
        return;
    }
    let Some(input) = corpus("malloc/android/systemui.zip") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let parquet = dir.path().join("systemui.parquet");
    export(&input, &parquet);
    let sql = python_json(&duckdb_script(REPLAY_SQL), &parquet);
    let want = stats(&input);
    assert_eq!(sql["records"], want["records"]);
    assert_eq!(sql["bytes_allocated"], want["bytes_allocated"]);
    assert_eq!(sql["top_threads"], want["top_threads"]);
    assert_eq!(sql["records_by_kind"], want["records_by_kind"]);
    assert!(want["top_threads"].as_array().unwrap().len() > 1);
    let lifetimes = python_json(
        &duckdb_script(&format!("{REPLAY_ACTS_SQL}{LIFETIMES_SQL}")),
        &parquet,
    );
    assert_eq!(lifetimes["lifetimes"], want["lifetimes"]["buckets"]);
    assert!(want["lifetimes"]["buckets"].as_array().unwrap().len() > 4);
}

#[test]
fn duckdb_computes_the_stats_of_an_mtrace_log_and_reads_the_metadata() {
    if !python_has("duckdb") {
        return;
    }
    let Some(input) = corpus("malloc/glibc-mtrace/python-json.mtrace.zst") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Straight from the (compressed) text trace.
    let parquet = dir.path().join("python.parquet");
    export(&input, &parquet);
    let sql = python_json(&duckdb_script(MTRACE_SQL), &parquet);
    let want = stats(&input);
    assert_eq!(sql["records"], want["records"]);
    assert_eq!(sql["bytes_allocated"], want["bytes_allocated"]);
    assert_eq!(sql["records_by_kind"], want["records_by_kind"]);
    let lifetimes = python_json(
        &duckdb_script(&format!("{MTRACE_ACTS_SQL}{LIFETIMES_SQL}")),
        &parquet,
    );
    assert_eq!(lifetimes["lifetimes"], want["lifetimes"]["buckets"]);
    assert!(want["lifetimes"]["buckets"].as_array().unwrap().len() > 4);
    let meta = python_json(
        "import duckdb, json, sys\n\
         rows = duckdb.sql(f\"select decode(key) as k, decode(value) as v from parquet_kv_metadata('{sys.argv[1]}')\").fetchall()\n\
         print(json.dumps(dict(rows)))\n",
        &parquet,
    );
    assert_eq!(meta["hatf.format"], "mtrace");
    // The format's DTD, though the file only refers to it.
    let dtd =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../dtds/mtrace.dtd"))
            .unwrap();
    assert_eq!(meta["hatf.dtd"], dtd.as_str());
}

#[test]
fn datafusion_counts_the_records_of_an_elephant_tracks_trace() {
    if !python_has("datafusion") {
        return;
    }
    let Some(input) = corpus("et/et3-merlin/pipeline_results/LotsOfAllocs/trace_with_deaths")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let parquet = dir.path().join("et.parquet");
    export(&input, &parquet);
    let got = python_json(
        "import datafusion, json, sys\n\
         ctx = datafusion.SessionContext()\n\
         ctx.register_parquet('t', sys.argv[1])\n\
         rows = ctx.sql('select record, count(*) as n from t group by record').to_pylist()\n\
         print(json.dumps({r['record']: r['n'] for r in rows}))\n",
        &parquet,
    );
    let want = stats(&input);
    let kinds = want["records_by_kind"]
        .as_object()
        .expect("ET stats count records by kind");
    assert!(!kinds.is_empty());
    for (letter, n) in kinds {
        let sql = got[letter.as_str()].as_u64().unwrap_or(0)
            + if letter == "D" {
                got["Ds"].as_u64().unwrap_or(0)
            } else {
                0
            };
        assert_eq!(Some(sql), n.as_u64(), "{letter}: {got}");
    }
}
