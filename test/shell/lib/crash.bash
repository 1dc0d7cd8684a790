# shellcheck shell=bash
# test/shell/lib/crash.bash: helpers of the crash tests of FAST and eFIND
# indices (sourced after tap.bash).
#
# A "victim" is a psql coprocess whose backend the test kills with SIGKILL.
# Every statement sent to it is followed by an \echo marker, so that the
# test reads exactly the answer of that statement (or nothing, after an
# error) and never waits for a line that will not come.  Its messages
# (NOTICE, ERROR) go to a file of their own.

CRASH_MARK="-- end of statement --"

# crash_begin <database> <planned tests> [with_device | with_tiers [profile]]:
# a fresh database, the plan (or a skip when the server is not on a local
# Unix socket: the backend must be killable), a scratch directory in $tmp;
# with_device also creates the buffered device "crash" and the crash_schema
# functions; with_tiers, the tier tests' set-up, also the buffered device
# "crash_fast" for a fast tier (with the drive profile given, if any).
crash_begin() {
    fresh_database "$1"
    if [ "$(q -c "SELECT inet_server_addr() IS NULL")" != "t" ]; then
        tap_skip_all "needs a server on a local Unix socket (the test kills a backend)"
    fi
    tap_plan "$2"
    tmp=$(mktemp -d)
    if [ "${3:-}" = with_device ] || [ "${3:-}" = with_tiers ]; then
        q -c "SET client_min_messages = warning" \
          -c "SELECT festival.create_device('crash', io => 'buffered')" >/dev/null
        crash_schema
    fi
    if [ "${3:-}" = with_tiers ]; then
        q -c "SET client_min_messages = warning" \
          -c "SELECT festival.create_device('crash_fast', io => 'buffered'${4:+, profile => '$4'})" >/dev/null
    fi
}

# crash_end <database>: drop every index (a dropped database would leave
# their files behind), the database and the scratch directory; end the plan.
crash_end() {
    rm -rf "$tmp"
    for ix in $(qv -c "SELECT name FROM festival.index"); do
        qv -c "SELECT festival.drop_index('$ix')" >/dev/null
    done
    psql -X -q -d postgres -c "DROP DATABASE $1" >/dev/null 2>&1
    tap_done
}

# Objects of a crash test database: pt(i) is the geometry of object i (a
# point, scattered over [0, 1000) x [0, 997)); brute_force_mismatches(index,
# table) runs 17 window queries (16 windows and the whole area) through the
# index and by brute force over the table and counts the windows whose
# answers differ.  Points, windows and comparator are the campaigns' too:
# fixture.scatter_point, fixture.scatter_windows and fixture.window_wrong of
# sql/fixture_helpers.sql, loaded here.
CRASH_HELPERS="$(dirname "${BASH_SOURCE[0]}")/../../../sql/fixture_helpers.sql"
crash_schema() {
    q -c "SET client_min_messages = warning" -f "$CRASH_HELPERS" >/dev/null
    q <<'SQL' >/dev/null
CREATE FUNCTION pt(i bigint) RETURNS geometry LANGUAGE sql IMMUTABLE
    AS $$ SELECT fixture.scatter_point(i) $$;
CREATE TABLE crash_windows AS SELECT * FROM fixture.scatter_windows();
CREATE FUNCTION brute_force_mismatches(ix text, tbl regclass) RETURNS bigint LANGUAGE sql
    AS $$ SELECT fixture.window_wrong(ix, 'crash_windows', tbl) $$;
SQL
}

# crash_index <index> <options json> <initial rows> [structure]: a source
# table <index>_src with rows 1..n and an index over it (an R-tree unless
# a structure is given) on the device "crash" (or $CRASH_DEVICE), built
# and closed (clean, empty log).  The build does not sync its log
# (festival.log_sync = never, set before the index is opened): only the
# closed result matters here.
crash_index() {
    q <<SQL >/dev/null
SET client_min_messages = warning;
SET festival.log_sync = never;
CREATE TABLE $1_src (id bigint PRIMARY KEY, geom geometry);
INSERT INTO $1_src SELECT i, pt(i) FROM generate_series(1, $3) i;
SELECT festival.create_index('$1', '${4:-rtree}', '${CRASH_DEVICE:-crash}', '$2', '$1_src');
SELECT festival.build('$1');
SELECT festival.close('$1');
SQL
}

# recovery_checks <index>: the first use of an index after a crash
# restart (eight assertions).  It replays the log (a NOTICE counts the
# modifications restored, RESTORED is set to that number) without a
# warning; the source table holds every acknowledged object (ids up to
# ACKED) and at most the one whose commit the kill did not interrupt
# before the acknowledgement was read; the index holds each object of the
# source table exactly once and nothing else but, possibly, the insert the
# kill interrupted between the index and the commit (the index is outside
# transactions); once that one is deleted, festival.check() finds nothing.
# With RECOVERY_MAY_BE_CLEAN=1 (a kill in a flush, which may come after
# the flush made the index clean) an index opened clean passes the first.
recovery_checks() {
    local ix=$1 out
    out=$(q -c "CREATE TEMP TABLE got AS SELECT id FROM festival.query('$ix', ST_MakeEnvelope(-10, -10, 2000, 2000))" \
            -c "SELECT 'acked_in_source=' || count(*) FROM ${ix}_src WHERE id <= $ACKED" \
            -c "SELECT 'unacked_in_source=' || count(*) || ' ' || coalesce(string_agg(id::text, ','), '') FROM ${ix}_src WHERE id > $ACKED + 1" \
            -c "SELECT 'missing=' || count(*) FROM ${ix}_src s WHERE NOT EXISTS (SELECT FROM got g WHERE g.id = s.id)" \
            -c "SELECT 'extra=' || coalesce(string_agg(id::text, ','), '') FROM (SELECT id FROM got EXCEPT SELECT id FROM ${ix}_src) e" \
            -c "SELECT 'duplicates=' || count(*) - count(DISTINCT id) FROM got" \
            -c "SELECT 'reconciled=' || count(festival.delete('$ix', id, pt(id))) FROM (SELECT id FROM got EXCEPT SELECT id FROM ${ix}_src) e" \
            -c "SELECT 'check=' || coalesce(string_agg(severity || ': ' || message, '; '), '') FROM festival.check('$ix')")
    if [ "${RECOVERY_MAY_BE_CLEAN:-0}" = 1 ] && ! grep -q 'not closed cleanly' <<<"$out"; then
        # the kill came after the flush had made the index clean
        tap_ok 0 "$ix: the index was clean (the kill came after its flush was complete)"
    else
        tap_like "$out" "^NOTICE:  index \"$ix\" was not closed cleanly; its log restored [1-9][0-9]* modifications$" \
            "$ix: the first use says how many modifications the log restored"
    fi
    tap_unlike "$out" 'WARNING|ERROR' "$ix: and neither warns nor fails"
    RESTORED=$(printf '%s\n' "$out" | sed -n 's/.*its log restored \([0-9]*\) modifications$/\1/p')
    tap_like "$out" "^acked_in_source=$ACKED$" "$ix: the source table holds all $ACKED acknowledged objects"
    tap_like "$out" '^unacked_in_source=0 $' "$ix: and at most the one the kill interrupted besides"
    tap_like "$out" '^missing=0$' "$ix: every object of the source table is in the index"
    tap_like "$out" "^extra=($((ACKED + 1)))?$" \
        "$ix: the index holds nothing else but the insert the kill interrupted"
    tap_like "$out" '^duplicates=0$' "$ix: no object is in the index twice"
    tap_like "$out" '^check=$' "$ix: festival.check() finds nothing"
}

# The file of an index of the current database, found through the catalog
# (the index is not opened).
index_file() {
    qv -c "SELECT current_setting('data_directory') || '/festival/' || d.directory || '/' || i.file_name
           FROM festival.index i JOIN festival.device d ON d.name = i.device
           WHERE i.name = '$1'"
}

# victim_start <message file>: start the victim, set VICTIM_BACKEND.
victim_start() {
    VICTIM_ERR=$1
    coproc VICTIM { psql -X -qAt 2>"$VICTIM_ERR"; }
    # copies that outlive the coprocess (bash closes its descriptors when
    # it ends), so that its last words can be read; only the copies stay
    exec {victim_in}>&"${VICTIM[1]}" {victim_out}<&"${VICTIM[0]}"
    exec {VICTIM[1]}>&- {VICTIM[0]}<&-
    victim_psql=$VICTIM_PID
    VICTIM_BACKEND=$(victim_ask "SELECT pg_backend_pid();")
    echo "# victim backend: $VICTIM_BACKEND"
}

victim_send() {  # victim_send <sql>: send a statement, do not wait
    printf '%s;\n\\echo %s\n' "${1%;}" "$CRASH_MARK" >&"$victim_in"
}

# victim_ask <sql>: send a statement and print its answer (the lines it
# printed, empty after an error).
victim_ask() {
    local line answer=""
    victim_send "$1"
    while IFS= read -r -t 60 -u "$victim_out" line; do
        [ "$line" = "$CRASH_MARK" ] && break
        answer+="${answer:+ }$line"
    done
    printf '%s' "$answer"
}

# The statement the victims run: object i into the source table and the
# index in one statement (one transaction).
insert_sql() {  # insert_sql <index> <id>
    echo "WITH s AS (INSERT INTO $1_src VALUES ($2, pt($2)) RETURNING id, geom) SELECT festival.insert('$1', id, geom) FROM s;"
}

# The delete the victims run: object i out of the source table and the
# index in one statement.
delete_sql() {  # delete_sql <index> <id>
    echo "WITH s AS (DELETE FROM $1_src WHERE id = $2 RETURNING id, geom) SELECT festival.delete('$1', id, geom) FROM s;"
}

# victim_stream <file>: send the statements of the file (one a line) to
# the victim (from a background writer, so that neither side waits for the
# other), then read every answer; STREAM_ACKS is how many answered "t".
victim_stream() {
    local stmt line n answered=0 writer
    n=$(wc -l <"$1")
    (
        while IFS= read -r stmt; do
            victim_send "$stmt"
        done <"$1"
    ) 2>/dev/null &
    writer=$!
    STREAM_ACKS=0
    while [ "$answered" -lt "$n" ] && IFS= read -r -t 60 -u "$victim_out" line; do
        if [ "$line" = "$CRASH_MARK" ]; then
            answered=$((answered + 1))
        elif [ "$line" = "t" ]; then
            STREAM_ACKS=$((STREAM_ACKS + 1))
        fi
    done
    wait "$writer"
}

# victim_insert <index> <first id> <last id>: insert one object per
# statement, reading each acknowledgement.  Sets INSERT_ACKS to how many
# were acknowledged and advances ACKED (the last id acknowledged, all
# before it acknowledged too).
victim_insert() {
    local i ack
    INSERT_ACKS=0
    for i in $(seq "$2" "$3"); do
        ack=$(victim_ask "$(insert_sql "$1" "$i")")
        if [ "$ack" = "t" ]; then
            INSERT_ACKS=$((INSERT_ACKS + 1))
            [ "$ACKED" -eq $((i - 1)) ] && ACKED=$i
        fi
    done
}

# victim_kill_midstream <index> <first id> <count> <acknowledgements>:
# stream count inserts to the victim (from a background writer, so that
# the victim never waits for input), and once it has acknowledged the
# given number of them, kill its backend with SIGKILL: the backend is then
# working on the next one.  ACKED advances over the acknowledged inserts;
# BURST_ACKED is how many of the stream were; the victim is gone
# afterwards.
victim_kill_midstream() {
    local i line writer answered
    (
        for i in $(seq "$2" $(($2 + $3 - 1))); do
            victim_send "$(insert_sql "$1" "$i")"
        done
    ) 2>/dev/null &
    writer=$!
    BURST_ACKED=0
    answered=0
    while [ "$BURST_ACKED" -lt "$4" ] && [ "$answered" -lt "$3" ] &&
        IFS= read -r -t 60 -u "$victim_out" line; do
        if [ "$line" = "t" ]; then
            BURST_ACKED=$((BURST_ACKED + 1))
            ACKED=$((ACKED + 1))
        elif [ "$line" = "$CRASH_MARK" ]; then
            answered=$((answered + 1))
        fi
    done
    kill -9 "$VICTIM_BACKEND"
    victim_end
    wait "$writer" 2>/dev/null
    while IFS= read -r line; do
        if [ "$line" = "t" ]; then
            BURST_ACKED=$((BURST_ACKED + 1))
            ACKED=$((ACKED + 1))
        fi
    done <<<"$VICTIM_TAIL"
}

# midstream_kill_case <index> <options json> <structure>: an index over
# 1,000 points, built and closed; a victim streams inserts and is killed
# (SIGKILL) after 40 acknowledgements, in the middle of the next; after the
# restart recovery_checks (nine assertions in all).
midstream_kill_case() {
    local ix=$1
    crash_index "$ix" "$2" 1000 "$3"
    ACKED=1000
    victim_start "$tmp/$ix.err"
    victim_kill_midstream "$ix" 1001 60 40
    tap_ok $((BURST_ACKED >= 40 ? 0 : 1)) "$ix: at least 40 inserts acknowledged before the kill"
    wait_for_server
    recovery_checks "$ix"
}

# victim_kill: kill the victim's backend with SIGKILL between statements.
victim_kill() {
    kill -9 "$VICTIM_BACKEND"
    victim_end
}

# psql notices its dead backend only when it next reads input: end its
# input, collect what it printed last (VICTIM_TAIL), wait for it.
victim_end() {
    exec {victim_in}>&-
    VICTIM_TAIL=$(timeout 60 cat <&"$victim_out")
    exec {victim_out}<&-
    wait "$victim_psql" 2>/dev/null
}

# flip_byte <file> <offset>: invert every bit of one byte, in place.
flip_byte() {
    local old
    old=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
    printf "$(printf '\\%03o' $((old ^ 255)))" |
        dd of="$1" bs=1 seek="$2" count=1 conv=notrunc status=none
}

# log_record_offsets <log file>: the offset of every record (walking the
# length fields from the end of the 512-byte header; records are 8-aligned).
log_record_offsets() {
    od -An -v -tu4 -w4 "$1" | awk '
        { word[NR - 1] = $1 }
        END {
            off = 512
            while (off + 40 <= 4 * NR) {
                print off
                len = word[(off + 4) / 4]
                if (len < 40) break
                off += int((len + 7) / 8) * 8
            }
        }'
}

# churn_statements <index>: the statements of issue 21's stream over an
# index built from rows 1..800: 300 inserts (801..1100) and 400 deletes
# (the even ids up to 800), interleaved, one a line.
churn_statements() {
    local k
    for k in $(seq 1 400); do
        delete_sql "$1" $((2 * k))
        if [ "$k" -le 300 ]; then insert_sql "$1" $((800 + k)); fi
    done
}

# midstream_crash_checks <index> <counter or "">: the kill of the stream
# scenarios of crash_fast_efind.sh and crash_fortree.sh, whose index was
# built from rows 1..2000 (crash_index) and whose victim has acknowledged
# inserts up to ACKED: 200 more inserts are streamed (ids 2301..2500) and the
# backend killed once 100 are acknowledged.  After the restart the first use
# replays the log (recovery_checks); with an empty counter (nothing was
# compacted) every insert since the build was restored; the next session
# opens the index silently, takes 200 more inserts and answers as brute
# force.  14 assertions, 15 with an empty counter.
midstream_crash_checks() {
    local ix=$1 counter=$2 out
    victim_kill_midstream "$ix" 2301 200 100
    tap_ok "$([ "$BURST_ACKED" -lt 200 ]; echo $?)" \
        "$ix: its backend was killed in the middle of 200 inserts ($BURST_ACKED acknowledged)"
    wait_for_server
    tap_ok $? "$ix: the server is back after the crash restart"
    recovery_checks "$ix"
    if [ -z "$counter" ]; then
        tap_ok "$([ "${RESTORED:-0}" -ge $((ACKED - 2000)) ]; echo $?)" \
            "$ix: the log restored every acknowledged insert ($RESTORED modifications, $((ACKED - 2000)) acknowledged)"
    fi
    # work goes on; the session above ended normally, so this one opens silently
    out=$(q -c "WITH s AS (INSERT INTO ${ix}_src SELECT i, pt(i) FROM generate_series(3001, 3200) i RETURNING id, geom)
                SELECT 'inserted=' || count(*) FILTER (WHERE festival.insert('$ix', id, geom)) FROM s" \
            -c "SELECT 'mismatches=' || brute_force_mismatches('$ix', '${ix}_src')" \
            -c "SELECT 'complete=' || ((SELECT count(*) FROM festival.query('$ix', ST_MakeEnvelope(-10, -10, 2000, 2000))) = (SELECT count(*) FROM ${ix}_src))")
    tap_unlike "$out" 'not closed cleanly|WARNING|ERROR' "$ix: the next session opens it without a warning"
    tap_like "$out" '^inserted=200$' "$ix: 200 more inserts"
    tap_like "$out" '^mismatches=0$' "$ix: window queries give what brute force gives"
    tap_like "$out" '^complete=true$' "$ix: the index holds every object of the source table"
}

# survived_checks <index> <first id of later inserts>: the first use after
# a crash restart of an index whose victim was killed between statements
# (its source table holds exactly the acknowledged changes): queries answer
# without an error, every acknowledged row is there, no deleted row is
# back and none is there twice (fixture.extent_wrong), and check() finds
# no error (which lifts the suspect state of a write-through index); the
# next 100 inserts are taken (or refused with the hint to run check() and
# build()), and a later session, after a close, answers as brute force
# without an error.  Seven assertions.
survived_checks() {
    local ix=$1 first=$2 out
    out=$(q -c "SELECT 'missing=' || missing || ' extra=' || extra
                FROM fixture.extent_wrong('$ix', '${ix}_src', ST_MakeEnvelope(-10, -10, 2000, 2000))")
    tap_unlike "$out" 'ERROR' "$ix: the first query after the crash answers without an error"
    tap_like "$out" '^missing=0 ' "$ix: every acknowledged row is in the index"
    tap_like "$out" ' extra=0$' "$ix: no deleted row is back, none is there twice"
    out=$(q -c "SELECT 'check=' || coalesce(string_agg(message, '; ') FILTER (WHERE severity = 'error'), '') FROM festival.check('$ix')")
    tap_like "$out" '^check=$' "$ix: festival.check() finds no error"
    out=$(q -c "WITH s AS (INSERT INTO ${ix}_src SELECT i, pt(i) FROM generate_series($first, $first + 99) i RETURNING id, geom)
                SELECT 'inserted=' || count(*) FILTER (WHERE festival.insert('$ix', id, geom)) FROM s" \
            -c "SELECT festival.close('$ix')")
    tap_like "$out" '^inserted=100$|^HINT: .*festival\.check\(.*festival\.build\(' \
        "$ix: 100 more inserts are taken, or refused with the check/build hint"
    out=$(q -c "SELECT 'mismatches=' || brute_force_mismatches('$ix', '${ix}_src')" \
            -c "SELECT 'whole=' || missing || ' ' || extra
                FROM fixture.extent_wrong('$ix', '${ix}_src', ST_MakeEnvelope(-10, -10, 2000, 2000))")
    tap_like "$out" '^mismatches=0$' "$ix: a later session answers 17 windows as brute force does"
    tap_like "$out" '^whole=0 0$' "$ix: and the whole extent, without an error"
}

# write_fault_schema: the functions of the tests that fill a device
# (write_back_faults.sh, enospc_tmpfs.sh): wb_inserts(ix, a, b, max_errors)
# inserts ids a..b one at a time, each with its source row in one
# subtransaction, until max_errors failed ('acked=N errors=M first=SQLSTATE';
# an error whose detail says the change was logged and is kept, raised
# after the change was made durable in a log or journal, counts as an error
# whose row the source table then gets too);
# wb_answers(ix) compares the whole extent with the source table
# (fixture.extent_wrong: 'missing=N extra=M', or 'error=SQLSTATE'); wb_try(sql)
# runs a statement ('ok' or 'error=SQLSTATE').
write_fault_schema() {
    q <<'SQL' >/dev/null
CREATE FUNCTION wb_inserts(ix text, a bigint, b bigint, max_errors int DEFAULT 1000000) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    acked int := 0;
    errors int := 0;
    first text := '';
    detail text;
BEGIN
    FOR i IN a..b LOOP
        BEGIN
            EXECUTE format('INSERT INTO %I VALUES ($1, pt($1))', ix || '_src') USING i;
            PERFORM festival.insert(ix, i, pt(i));
            acked := acked + 1;
        EXCEPTION WHEN others THEN
            GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
            errors := errors + 1;
            IF first = '' THEN first := SQLSTATE; END IF;
            IF detail LIKE '%is kept%' THEN
                EXECUTE format('INSERT INTO %I VALUES ($1, pt($1))', ix || '_src') USING i;
            END IF;
            EXIT WHEN errors >= max_errors;
        END;
    END LOOP;
    RETURN 'acked=' || acked || ' errors=' || errors || ' first=' || first;
END $$;
CREATE FUNCTION wb_answers(ix text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    e record;
BEGIN
    e := fixture.extent_wrong(ix, (ix || '_src')::regclass, ST_MakeEnvelope(-10, -10, 2000, 2000));
    RETURN 'missing=' || e.missing || ' extra=' || e.extra;
EXCEPTION WHEN others THEN
    RETURN 'error=' || SQLSTATE;
END $$;
CREATE FUNCTION wb_try(sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE sql;
    RETURN 'ok';
EXCEPTION WHEN others THEN
    RETURN 'error=' || SQLSTATE;
END $$;
SQL
}

# write_fault_checks <index> <session output> <next session output>: five
# assertions over what a session that met a failed write printed ("after:"
# wb_inserts after the failure began, "answers:" wb_answers, "flush:",
# "close:" wb_try; "armed flush:" a flush before the inserts) and what the
# next session printed ("next:" wb_answers):
#   1. the first error is 53100 (a full disk);
#   2. in that session the whole extent answers every acknowledged row and
#      nothing else, or fails with an error;
#   3. flush() or close() fails, or the next session holds every
#      acknowledged row and nothing else;
#   4. the next session answers every acknowledged row and nothing else,
#      or fails with an error;
#   5. every acknowledged row is in the index in the next session.
write_fault_checks() {
    local ix=$1 out=$2 next=$3 first reported
    first=$(grep -oE '(flush: error=[0-9A-Z]+|after: .*first=[0-9A-Z]+|close: error=[0-9A-Z]+)' <<<"$out" | head -1 | grep -oE '[0-9A-Z]{5}$')
    tap_is "$first" 53100 "$ix: the first error is a full disk (53100)"
    tap_like "$out" '^answers: (missing=0 extra=0|error=.*)$' \
        "$ix: in the session, the whole extent answers every acknowledged row and nothing else, or fails"
    reported=$(grep -cE '^(flush|close): error=' <<<"$out")
    tap_ok "$([ "$reported" -gt 0 ] || grep -q '^next: missing=0 extra=0$' <<<"$next"; echo $?)" \
        "$ix: flush() or close() fails, or the next session holds every acknowledged row and nothing else"
    tap_like "$next" '^next: (missing=0 extra=0|error=.*)$' \
        "$ix: the next session answers every acknowledged row and nothing else, or fails"
    tap_like "$next" '^next: missing=0 ' "$ix: every acknowledged row is in the index in the next session"
}

# fault_options <structure> <words>: index options of 1 kB pages (and the
# extent [0, 0, 1000, 1000] for grid files) with, for each word of the
# comma-separated list, framework fast, a 16 kB cache lru or clru (cold
# lists of 2), a placement over the fast device "crash_fast" (or
# $CRASH_FAST_DEVICE; hot, level_hot and random with hot_selectivity 1.0),
# or wbN:
# per-device write buffers of N pages (write_buffer_pages), or shared: no
# write buffers (write_buffers shared_cache), or coolN: cooling after N
# idle accesses (cool_after).
fault_options() {
    local o='{"page_size": 1024' w
    case "$1" in gridfile|lbgrid) o+=', "extent": [0, 0, 1000, 1000]' ;; esac
    for w in ${2//,/ }; do
        case "$w" in
            fast) o+=', "framework": "fast"' ;;
            lru) o+=', "cache": "lru", "cache_size": 16384' ;;
            clru) o+=', "cache": "clru", "cache_size": 16384, "cache_clru_pages": 2' ;;
            level_hot|hot|random) o+=", \"fast_device\": \"${CRASH_FAST_DEVICE:-crash_fast}\", \"placement\": \"$w\", \"hot_selectivity\": 1.0" ;;
            wb[0-9]*) o+=", \"write_buffer_pages\": ${w#wb}" ;;
            shared) o+=', "write_buffers": "shared_cache"' ;;
            cool[0-9]*) o+=", \"cool_after\": ${w#cool}" ;;
            *) o+=", \"fast_device\": \"${CRASH_FAST_DEVICE:-crash_fast}\", \"placement\": \"$w\"" ;;
        esac
    done
    echo "$o}"
}

# write_fault_case <index> <structure> <fault target> <fault_options words>:
# one case of a failed write (write_back_faults.sh, crash_tiers_buffers.sh):
# an index over 1,000 points, 1,000 inserts, the fault armed (for the tier
# map's write, which a flush makes, then a flush), 200 more inserts, the
# whole extent queried, flush() and close(), the next session's answers;
# judged by write_fault_checks (five assertions).  Needs write_fault_schema.
write_fault_case() {
    local ix=$1 out next
    crash_index "$ix" "$(fault_options "$2" "$4")" 1000 "$2"
    out=$(q -c "SET client_min_messages = error" \
            -c "SELECT 'before: ' || wb_inserts('$ix', 1001, 2000)" \
            -c "SELECT festival.inject_fault('$ix', '$3', 0, 'ENOSPC')" \
            -c "SELECT CASE WHEN '$3' = 'tier_map_write' THEN 'armed flush: ' || wb_try(\$\$SELECT festival.flush('$ix')\$\$) END" \
            -c "SELECT 'after: ' || wb_inserts('$ix', 2001, 2200)" \
            -c "SELECT 'answers: ' || wb_answers('$ix')" \
            -c "SELECT 'flush: ' || wb_try(\$\$SELECT festival.flush('$ix')\$\$)" \
            -c "SELECT 'close: ' || wb_try(\$\$SELECT festival.close('$ix')\$\$)")
    next=$(q -c "SET client_min_messages = error" -c "SELECT 'next: ' || wb_answers('$ix')")
    echo "# $ix ($2, $4, $3):" $out "/" $next
    write_fault_checks "$ix" "$out" "$next"
}

# churn_kill_survive <index>...: one victim session sends each index 300
# inserts and 400 deletes (churn_statements, one statement each with its
# source table), all acknowledged, and is killed (kill -9) between
# statements; after the restart, survived_checks for each (eight
# assertions an index with the acknowledgement count).
churn_kill_survive() {
    local ix
    victim_start "$tmp/victim.err"
    for ix in "$@"; do
        churn_statements "$ix" >"$tmp/$ix.sql"
        victim_stream "$tmp/$ix.sql"
        tap_is "$STREAM_ACKS" 700 "$ix: the victim's 300 inserts and 400 deletes are acknowledged"
    done
    victim_kill
    wait_for_server
    for ix in "$@"; do
        survived_checks "$ix" 2001
    done
}

# flush_kill_case <index> <options json> <fault target> <label>: an index
# over 300 points, closed; a victim inserts 40 more (the log synced at each
# operation), arms the fault layer to kill the backend at the target (a
# device's sync: sync, fast:sync) and flushes; after the restart
# recovery_checks, and a change is taken at once (eleven assertions).
# Callers set RECOVERY_MAY_BE_CLEAN=1: the kill may come after the flush
# made the index clean.
flush_kill_case() {
    local ix=$1 target=$3 flushed out
    crash_index "$ix" "$2" 300
    ACKED=300
    victim_start "$tmp/$ix.err"
    victim_ask "SET festival.log_sync = operation" >/dev/null
    victim_insert "$ix" 301 340
    victim_ask "SELECT festival.inject_fault('$ix', '$target', 0, 'crash')" >/dev/null
    flushed=$(victim_ask "SELECT festival.flush('$ix')")
    victim_end
    # the flush answers nothing when the kill came inside it, the pages it
    # wrote when the faulted write comes later (all_fast: no slow sync in it)
    tap_like "$flushed|$ACKED" '^[0-9]*[|]340$' "$ix ($4, $target): 40 inserts acknowledged, then the flush"
    wait_for_server
    tap_ok $? "$ix: the server is back after the crash restart"
    recovery_checks "$ix"
    out=$(q -c "$(insert_sql "$ix" 9000)")
    tap_is "$out" "t" "$ix: and accepts changes at once"
}
