# shellcheck shell=bash
# test/shell/lib/faults.bash: the fault campaign shared by
# test/shell/faults.sh (CI) and scripts/campaign-faults (sourced after
# tap.bash; uses q from it).  The trials themselves are lib/faults.sql.

FAULT_SQL="$(dirname "${BASH_SOURCE[0]}")/faults.sql"
FAULT_HELPERS="$(dirname "${BASH_SOURCE[0]}")/../../../sql/fixture_helpers.sql"

# faults_setup: the device "ft", the comparator (sql/fixture_helpers.sql)
# and the trial functions in the current database.
faults_setup() {
    q -c "SET client_min_messages = warning" \
      -c "SELECT festival.create_device('ft', io => 'buffered')" >/dev/null
    q -c "SET client_min_messages = warning" -f "$FAULT_HELPERS" >/dev/null
    q -f "$FAULT_SQL" >/dev/null
}

# The cases: structure:bulk-method, and per framework operation:target.
FAULT_STRUCTURES=${FAULT_STRUCTURES:-"rtree:str rstartree:str hilbert:hilbert xbrtree:bulk gridfile:bulk lbgrid:insert fortree:insert"}
FAULT_FRAMEWORKS="none fast efind"
# fault_frameworks <structure>: the frameworks it works under (LB-Grid,
# log-structured itself, refuses FAST and eFIND); the FOR-tree also under
# its own write buffer (framework fortree), which works under any
# structure but is tried with its own (the campaign matrix deals it to all)
fault_frameworks() {
    case "$1" in
        lbgrid) echo none ;;
        fortree) echo "$FAULT_FRAMEWORKS fortree" ;;
        *) echo "$FAULT_FRAMEWORKS" ;;
    esac
}
fault_operations() {   # fault_operations <framework>
    if [ "$1" = none ]; then
        echo "insert:write bulk:write build:write"
    else
        echo "insert:write insert:log_write insert:log_sync flush:write compact:write compact:log_write bulk:write build:write"
    fi
}

# fault_case <structure> <framework> <operation> <target> <bulk> <cap>:
# prints "writes|error|outcome|trials" lines (see ft_campaign).
# With every position (cap 0) each error runs in a transaction of its own
# (each trial's dropped index holds a lock until the end of the transaction).
fault_case() {
    local e
    # logs are synced at every modification with operation only (the
    # default, never, syncs them at flush and close)
    if [ "$6" -ne 0 ]; then
        q -F'|' -c "SET client_min_messages = error" -c "SET festival.log_sync = operation" \
            -c "SELECT writes, error, outcome, trials FROM ft_campaign('$1', '$2', '$3', '$4', '$5', $6)"
        return
    fi
    for e in ENOSPC EIO torn; do
        case "$4:$e" in *sync:torn) continue ;; esac
        q -F'|' -c "SET client_min_messages = error" -c "SET festival.log_sync = operation" \
            -c "SELECT writes, error, outcome, trials FROM ft_campaign('$1', '$2', '$3', '$4', '$5', 0, 150, ARRAY['$e'])"
    done
}

# crash_trial <index> <structure> <framework> <op> <position>: a backend
# that kills itself (SIGKILL) after <position> page writes of <op> (insert:
# twelve single inserts; flush: festival.flush after 25 buffered inserts).
# Prints "acked=N" for the statements that returned.  CRASH_PRELUDE, if
# set, is SQL the victim runs first (a SET); CRASH_OPTIONS, if set, more
# index options (JSON members, e.g. '"max_fill": 30').
crash_trial() {
    local ix=$1 st=$2 fw=$3 op=$4 pos=$5 stmts="${CRASH_PRELUDE:-}"$'\n'
    q -c "SET client_min_messages = error" \
      -c "SELECT ft_setup('$ix', '$st', '{\"framework\": \"$fw\", \"page_size\": 1024${CRASH_OPTIONS:+, $CRASH_OPTIONS}}', 150, 'insert')" >/dev/null
    if [ "$op" = flush ]; then
        for k in $(seq 1 25); do stmts+="SELECT 'ack' FROM ft_insert('$ix', $((1150 + k)));"$'\n'; done
        stmts+="SELECT festival.inject_fault('$ix', 'write', $pos, 'crash');"$'\n'
        stmts+="SELECT festival.flush('$ix');"$'\n'
    else
        stmts+="SELECT festival.inject_fault('$ix', 'write', $pos, 'crash');"$'\n'
        for k in $(seq 1 12); do stmts+="SELECT 'ack' FROM ft_insert('$ix', $((150 + k)));"$'\n'; done
    fi
    printf '%s' "$stmts" | psql -X -qAt -v ON_ERROR_STOP=1 2>/dev/null | grep -c '^ack$' | sed 's/^/acked=/'
}

# restored_checks <index> <position>: the first use after a kill at page
# write <position> of a log-structured grid file (lbgrid, agrid), which
# restores it from its log pages (a file killed before its first write is
# still clean), then crash_verdict: nothing acknowledged lost, changes
# taken at once, check() clean, answers as brute force (five assertions).
restored_checks() {
    local ix=$1 pos=$2 out
    out=$(q -c "SELECT 'first_use=' || count(*) FROM festival.query('$ix', 'POINT(0 0)')"; crash_verdict "$ix")
    if [ "$pos" -gt 0 ]; then
        tap_like "$out" "^NOTICE:  index \"$ix\" was not closed cleanly; its structure restored it" "$ix: the first use restored it from its log pages"
    else
        tap_unlike "$out" 'not closed cleanly' "$ix: killed before its first write, the file is still clean"
    fi
    tap_like "$out" '^missing=0 extra=[0-1]$' "$ix: every acknowledged insert is there, nothing else but the interrupted one"
    tap_like "$out" '^refused=false$' "$ix: changes are accepted at once (restored, not suspect)"
    tap_like "$out" '^mismatches=0$' "$ix: answers equal brute force"
    tap_like "$out" '^final_check_errors=0$' "$ix: check() is clean"
}

# crash_verdict <index>: after the restart, every acknowledged insert (the
# source table) is found, nothing else but the one a kill interrupted; the
# index then accepts changes (after a clean check when it is suspect, or a
# build when the check finds errors) and answers as brute force.
crash_verdict() {
    local ix=$1
    q -c "SET client_min_messages = error" -c "
        WITH got AS (SELECT id FROM festival.query('$ix', ST_MakeEnvelope(-10, -10, 2000, 2000)))
        SELECT 'missing=' || (SELECT count(*) FROM ${ix}_src s WHERE s.id NOT IN (SELECT id FROM got))
            || ' extra=' || (SELECT count(*) FROM got WHERE id NOT IN (SELECT id FROM ${ix}_src))" \
      -c "SELECT 'refused=' || (ft_try_change('$ix', 990001) IS NOT NULL)" \
      -c "SELECT 'check_errors=' || ft_check_errors('$ix')" \
      -c "SELECT CASE WHEN ft_check_errors('$ix') > 0 THEN festival.build('$ix') END" \
      -c "SELECT 'accepted=' || (ft_try_change('$ix', 990002) IS NULL)" \
      -c "SELECT 'mismatches=' || ft_mismatches('$ix')" \
      -c "SELECT 'final_check_errors=' || ft_check_errors('$ix')" 2>&1 | grep -v '^$'
}
