#!/usr/bin/env bash
# A real small file system filled to ENOSPC (issue 21): acknowledged
# inserts are never lost, no query answers wrongly without an error, and
# flush() and close() do not succeed over changes they could not write.
#
# The devices "fs_slow" and "fs_fast" are directories inside
# festival.data_directory; for each case a fresh 16 MB tmpfs is mounted
# over each (owned by the server's user), an index is built
# over 1,000 points and closed, and the rest of the file system is filled
# with a file, leaving 32 kB.  A session then inserts points one at a
# time (each insert and its source row in one subtransaction, so the
# source table holds exactly the acknowledged rows) until 20 inserts have
# failed, queries the whole extent and calls flush() and close().  The
# filler is removed and the next session queries again.  Five assertions
# a case (lib/crash.bash, write_fault_checks): the first error is 53100;
# in that session the whole extent answers every acknowledged row and
# nothing else, or fails; flush() or close() fails, or the next session
# holds every acknowledged row and nothing else; the next session answers
# right or fails; every acknowledged row is there in it.
#
# The cases: an R-tree under lru, a grid file and an LB-Grid under clru
# (16 kB caches), write-through R-tree under all_fast and grid file under
# level_hot, and a FAST R-tree.  Skipped where mounting is not allowed
# (not root, or no tmpfs).
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"

cases=(
    "fs_lru rtree lru"
    "fs_gclru gridfile clru"
    "fs_lbclru lbgrid clru"
    "fs_allfast rtree all_fast"
    "fs_glhot gridfile level_hot"
    "fs_fast rtree fast"
)
SIZE=16m
HEADROOM=32768

probe=$(mktemp -d)
if [ "$(id -u)" -ne 0 ] || ! mount -t tmpfs -o size=1m tmpfs "$probe" 2>/dev/null; then
    rmdir "$probe"
    tap_skip_all "mounting a tmpfs is not allowed here (needs root and tmpfs)"
fi
umount "$probe"
rmdir "$probe"

CRASH_DEVICE=fs_slow
CRASH_FAST_DEVICE=fs_fast
crash_begin festival_enospc_tmpfs $((${#cases[@]} * 5))
crash_schema
write_fault_schema
q -c "SET client_min_messages = warning" \
  -c "SELECT festival.create_device('fs_slow', io => 'buffered')" \
  -c "SELECT festival.create_device('fs_fast', io => 'buffered')" >/dev/null
base="$(qv -c "SHOW data_directory")/festival"
owner=$(stat -c %U "$base")   # the server's user (postgres) must write there
mounted=()
unmount_all() {
    local d
    for d in "${mounted[@]+"${mounted[@]}"}"; do umount "$d" 2>/dev/null; done
    mounted=()
}
trap unmount_all EXIT

# fill <directory>: a file takes all the space of the mount but HEADROOM
fill() {
    dd if=/dev/zero of="$1/filler" bs=64k status=none 2>/dev/null
    truncate -s "-$HEADROOM" "$1/filler"
}

for c in "${cases[@]}"; do
    set -- $c
    ix=$1
    for d in fs_slow fs_fast; do
        mount -t tmpfs -o "size=$SIZE,mode=0700" tmpfs "$base/$d"
        chown "$owner": "$base/$d"
        mounted+=("$base/$d")
    done
    crash_index "$ix" "$(fault_options "$2" "$3")" 1000 "$2"
    fill "$base/fs_slow"
    fill "$base/fs_fast"
    out=$(q -c "SET client_min_messages = error" \
            -c "SELECT 'after: ' || wb_inserts('$ix', 1001, 100000, 20)" \
            -c "SELECT 'answers: ' || wb_answers('$ix')" \
            -c "SELECT 'flush: ' || wb_try(\$\$SELECT festival.flush('$ix')\$\$)" \
            -c "SELECT 'close: ' || wb_try(\$\$SELECT festival.close('$ix')\$\$)")
    rm -f "$base/fs_slow/filler" "$base/fs_fast/filler"
    next=$(q -c "SET client_min_messages = error" -c "SELECT 'next: ' || wb_answers('$ix')" \
             -c "SELECT festival.close('$ix')")
    echo "# $ix ($2, $3):" $out "/" $next
    write_fault_checks "$ix" "$out" "$next"
    qv -c "SELECT festival.drop_index('$ix')" >/dev/null
    unmount_all
done

crash_end festival_enospc_tmpfs
