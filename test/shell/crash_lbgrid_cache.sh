#!/usr/bin/env bash
# LB-Grid under a page cache after kill -9 (issue 21, item 1): nothing
# acknowledged is lost, no deleted object comes back, and the index never
# takes changes over a state it cannot prove right.
#
# Two LB-Grids (1 kB pages, extent [0, 0, 1000, 1000], cache lru and clru
# of 64 kB) are built over 800 points and closed; one victim session
# changes both through festival.insert and festival.delete, each change in
# one statement with its source table (300 inserts, 400 deletes), and is
# killed (kill -9) between statements once every change is acknowledged.
# The source tables then hold exactly the acknowledged rows.  After the
# restart (lib/crash.bash, survived_checks): the first query answers
# without an error, every acknowledged row is there, no deleted row is
# back, check() finds no error, 100 more inserts are taken (or refused with
# the check/build hint), and a later session answers as brute force.
# Without a cache the same stream is correct (lbgrid_crash.sh).
source "$(dirname "$0")/lib/tap.bash"
source "$(dirname "$0")/lib/crash.bash"

crash_begin festival_crash_lbgrid_cache 16 with_device
indices="lbc_lru lbc_clru"
crash_index lbc_lru '{"page_size": 1024, "extent": [0, 0, 1000, 1000], "cache": "lru", "cache_size": 65536}' 800 lbgrid
crash_index lbc_clru '{"page_size": 1024, "extent": [0, 0, 1000, 1000], "cache": "clru", "cache_size": 65536, "cache_clru_pages": 8}' 800 lbgrid

victim_start "$tmp/victim.err"
for ix in $indices; do
    churn_statements "$ix" >"$tmp/$ix.sql"
    victim_stream "$tmp/$ix.sql"
    tap_is "$STREAM_ACKS" 700 "$ix: the victim's 300 inserts and 400 deletes are acknowledged"
done
victim_kill
wait_for_server

for ix in $indices; do
    survived_checks "$ix" 2001
done

crash_end festival_crash_lbgrid_cache
