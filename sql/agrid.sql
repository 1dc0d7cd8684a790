--
-- agrid: the adaptive grid file (structure 'agrid', festival's own design,
-- not the thesis's: Fevgas 2019 names it as future work): LB-Grid whose
-- buckets each switch between log mode (LB-Grid's log records) and
-- in-place mode (one page of its own, read and rewritten as GFFM's
-- bucket) from their recent share of writes, with hysteresis.
--
-- Three agrid indices (mode_window 2 and place_percent 40, switching at
-- almost every write;
-- the default window under the cache clru; delete_check 'read') and a
-- reference R-tree receive the same modifications in the same order: a
-- build, a read phase (every point searched: buckets become read-heavy),
-- inserts (buckets switch to in-place mode), deletes (merges), updates,
-- deletes of nearly everything and reinserts (back to log mode), reads
-- and updates again, a flush, a close and reopen.  After every phase (fixture.grid_verify): every
-- predicate, dwithin, kNN and query_batch equal PostGIS brute force,
-- festival.check() returns no rows (LB-Grid's checks, then every
-- in-place page is the first page of exactly one bucket's list, holds its
-- marker and only its points, and the bucket table's mode of each page is
-- the page's flag), one entry per point, and each index holds exactly the
-- R-tree's leaf entries.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;
SET festival.log_sync = never;

SELECT festival.create_device('ag_dev', io => 'buffered');
SELECT festival.create_device('ag_aio', io => 'buffered', engine => 'libaio');

CREATE TABLE ag_src (id bigint PRIMARY KEY, geom geometry NOT NULL);
CREATE TABLE ag_later (id bigint PRIMARY KEY, geom geometry NOT NULL);
CREATE TABLE ag_aside (id bigint PRIMARY KEY, geom geometry NOT NULL);
SELECT fixture.grid_points('ag_src', 'ag_later', 25);
SELECT fixture.grid_queries(950, 'ag');

CREATE TABLE ag_index (ord int PRIMARY KEY, name text NOT NULL UNIQUE, structure text NOT NULL,
					   device text NOT NULL, options jsonb NOT NULL, same_as text);
INSERT INTO ag_index VALUES
	(1, 'ag_w2', 'agrid', 'ag_dev', '{"page_size": 1024, "mode_window": 2, "place_percent": 40}', 'ag_rtree'),
	(2, 'ag_clru', 'agrid', 'ag_aio', '{"page_size": 1024, "range_algorithm": "p-rq", "cache": "clru",
		"cache_size": 24576, "cache_clru_pages": 3}', 'ag_rtree'),
	(3, 'ag_read', 'agrid', 'ag_dev', '{"page_size": 1024, "mode_window": 4, "delete_check": "read"}', 'ag_rtree'),
	(4, 'ag_rtree', 'rtree', 'ag_dev', '{"page_size": 1024}', NULL);
SELECT name, festival.create_index(name, structure, device, options, 'ag_src', 'id', 'geom') > 0 AS created
FROM ag_index ORDER BY ord;
SELECT festival.stats('ag_w2')->'config'->'derived'->>'bucket_max_entries' AS bucket_max,
	   festival.stats('ag_w2')->'config'->'derived'->>'mode_window' AS mode_window,
	   festival.stats('ag_w2')->'config'->'derived'->>'log_percent' AS log_percent,
	   festival.stats('ag_w2')->'config'->'derived'->>'place_percent' AS place_percent;

CREATE TABLE ag_qids AS SELECT array_agg(qid ORDER BY qid) AS qids FROM fx_query WHERE qid >= 100;
CREATE TABLE ag_brute (pred text, qid int, id bigint);
CREATE FUNCTION ag_verify(phase text) RETURNS SETOF fixture.grid_check
LANGUAGE sql AS $$
	SELECT * FROM fixture.grid_verify(phase, 'ag_index', 'ag_src', 'ag_brute', (SELECT qids FROM ag_qids),
									  'entries', ARRAY[0, 2.5])
$$;
CREATE FUNCTION ag_totals(idx text) RETURNS jsonb
LANGUAGE sql AS $$ SELECT festival.stats(idx)->'totals' $$;
CREATE FUNCTION ag_derived(idx text, key text) RETURNS bigint
LANGUAGE sql AS $$ SELECT (festival.stats(idx)->'config'->'derived'->>key)::bigint $$;
-- every stored point searched twice in each agrid index, how many found
-- themselves; in a fixed order (a plan chosen by the tables' statistics,
-- which autovacuum may gather at any time, would order the searches and so
-- the buckets' access windows differently): per index, each point twice in
-- a row, in id order
CREATE FUNCTION ag_search_twice() RETURNS TABLE (name text, found bigint)
LANGUAGE sql AS $$
	SELECT x.name, count(*) FILTER (WHERE q.id = x.id)
	FROM (SELECT i.ord, i.name, s.id, s.geom FROM ag_index i CROSS JOIN ag_src s
		  CROSS JOIN generate_series(1, 2) g
		  WHERE i.structure = 'agrid' ORDER BY i.ord, s.id, g) x
		 CROSS JOIN LATERAL festival.query(x.name, x.geom) q
	GROUP BY x.ord, x.name ORDER BY x.ord
$$;
-- the modes of each agrid index: buckets in place, switches since opened
CREATE FUNCTION ag_modes() RETURNS TABLE (name text, buckets bigint, in_place bigint,
										  to_place bigint, to_log bigint)
LANGUAGE sql AS $$
	SELECT name, ag_derived(name, 'logical_buckets'), ag_derived(name, 'buckets_in_place'),
		   ag_derived(name, 'switches_to_place'), ag_derived(name, 'switches_to_log')
	FROM ag_index WHERE structure = 'agrid' ORDER BY ord
$$;

-------------------------------------------------------------------------------
-- Phase 1: build (one point at a time: every bucket is written only, in
-- log mode)
-------------------------------------------------------------------------------
SELECT name, festival.build(name) AS built FROM ag_index ORDER BY ord;
SELECT * FROM ag_verify('build');
SELECT * FROM ag_modes();

-------------------------------------------------------------------------------
-- Phase 2: reads (each point searched twice), then inserts: read-heavy
-- buckets switch to in-place mode at their next write
-------------------------------------------------------------------------------
SELECT * FROM ag_search_twice();
SELECT * FROM fixture.grid_phase('insert', 'ag_index', 'ag_src', 'ag_later', 'ag_aside');
SELECT * FROM ag_verify('insert');
SELECT name, in_place > 0 AS some_in_place, to_place > 0 AS switched_to_place FROM ag_modes();

-------------------------------------------------------------------------------
-- Phase 3: deletes (merges), updates
-------------------------------------------------------------------------------
CREATE TABLE ag_merge AS SELECT name, ag_derived(name, 'logical_buckets') AS buckets FROM ag_index WHERE structure = 'agrid';
SELECT * FROM fixture.grid_phase('delete', 'ag_index', 'ag_src', 'ag_later', 'ag_aside');
SELECT m.name, ag_derived(m.name, 'logical_buckets') < m.buckets AS merged
FROM ag_merge m JOIN ag_index i USING (name) ORDER BY i.ord;
SELECT * FROM ag_verify('delete');
SELECT * FROM fixture.grid_phase('update', 'ag_index', 'ag_src', 'ag_later', 'ag_aside');
SELECT * FROM ag_verify('update');

-------------------------------------------------------------------------------
-- Phase 4: deletes of nearly everything and reinserts (write-heavy:
-- buckets go back to log mode)
-------------------------------------------------------------------------------
SELECT * FROM fixture.grid_phase('delete most', 'ag_index', 'ag_src', 'ag_later', 'ag_aside');
SELECT * FROM ag_verify('delete most');
SELECT * FROM fixture.grid_phase('reinsert', 'ag_index', 'ag_src', 'ag_later', 'ag_aside');
SELECT * FROM ag_verify('reinsert');
SELECT name, to_log > 0 AS switched_to_log FROM ag_modes();

-------------------------------------------------------------------------------
-- Phase 5: reads and updates again (modes switch), flush, close and
-- reopen: the bucket table, in-place pages included, is rebuilt from the
-- log pages with the same modes
-------------------------------------------------------------------------------
SELECT * FROM ag_search_twice();
SELECT * FROM fixture.grid_phase('update', 'ag_index', 'ag_src', 'ag_later', 'ag_aside');
SELECT * FROM fixture.grid_phase('flush', 'ag_index', 'ag_src', 'ag_later', 'ag_aside');
SELECT * FROM ag_verify('flush');
CREATE TABLE ag_shape AS SELECT name, buckets, in_place FROM ag_modes();
SELECT name, in_place > 0 AS some_in_place FROM ag_shape;
SELECT * FROM fixture.grid_phase('close', 'ag_index', 'ag_src', 'ag_later', 'ag_aside');
SELECT * FROM ag_verify('reopen');
SELECT s.name, m.buckets = s.buckets AND m.in_place = s.in_place AS same_modes
FROM ag_shape s JOIN ag_modes() m USING (name);

-------------------------------------------------------------------------------
-- The switches by hand (mode_window 4, log_percent 50, place_percent 30;
-- one bucket; counts as (writes, reads), halved when their sum reaches 8):
-- three inserts count (3, 0); nine point searches (3, 5) -> (1, 2), then
-- (1, 6).  Insert 4: (2, 6) -> (1, 3), 25 % writes <= 30: the bucket goes
-- in place, its records (all in the working page, in memory) written into
-- a fresh page: no log page read, one page written.  Insert 5: (2, 3),
-- 40 % < 50: stays in place, its page read and rewritten: one log page
-- read, one written.  Insert 6: (3, 3), 50 %: back to log mode, the
-- record appended to a fresh working page (the old one is older than the
-- bucket's page): none read, one written.  Insert 7: (4, 3), log mode, an
-- append: none read, one written.  The hysteresis: a window search (4, 4)
-- -> (2, 2) and three point searches (2, 5); insert 8: (3, 5) -> (1, 2),
-- 33 % writes, between 30 and 50: the bucket stays in log mode (as it
-- stayed in place at 40 % with insert 5).  A close and reopen start the
-- counts again (they are in memory only): six searches (0, 6); insert 9:
-- (1, 6), in place again: its list (the page of insert 4, then the
-- working page, in memory) read, one log page, and a fresh page written;
-- after another close and reopen the bucket is in place, as its page
-- says.
-------------------------------------------------------------------------------
SELECT festival.create_index('ag_hand', 'agrid', 'ag_dev', '{"extent": [0, 0, 10, 10], "page_size": 1024, "mode_window": 4}') > 0 AS created;
SELECT count(*) FILTER (WHERE festival.insert('ag_hand', i, ST_MakePoint(i, i))) AS inserted FROM generate_series(1, 3) i;
SELECT count(*) AS found FROM generate_series(1, 9) g, festival.query('ag_hand', ST_MakePoint(1 + g % 3, 1 + g % 3)) q;
CREATE TABLE ag_step (step int, log_pages_read bigint, pages_written bigint, in_place bigint,
					  to_place bigint, to_log bigint);
CREATE FUNCTION ag_hand_step(i int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	t0 jsonb := ag_totals('ag_hand');
BEGIN
	PERFORM festival.insert('ag_hand', i, ST_MakePoint(i, i));
	INSERT INTO ag_step
	SELECT i, coalesce((ag_totals('ag_hand')->'reads_per_level'->>'0')::int, 0)
			   - coalesce((t0->'reads_per_level'->>'0')::int, 0),
		   (ag_totals('ag_hand')->>'nodes_written')::int - (t0->>'nodes_written')::int,
		   ag_derived('ag_hand', 'buckets_in_place'), ag_derived('ag_hand', 'switches_to_place'),
		   ag_derived('ag_hand', 'switches_to_log');
END
$$;
SELECT ag_hand_step(4);
SELECT ag_hand_step(5);
SELECT ag_hand_step(6);
SELECT ag_hand_step(7);
SELECT * FROM ag_step ORDER BY step;
SELECT (SELECT array_agg(id ORDER BY id) FROM festival.query('ag_hand', ST_MakeEnvelope(0, 0, 10, 10))) AS found,
	   (SELECT count(*) FROM festival.check('ag_hand')) AS check_rows;
SELECT count(*) AS found FROM generate_series(1, 3) g, festival.query('ag_hand', ST_MakePoint(1 + g % 3, 1 + g % 3)) q;
SELECT ag_hand_step(8);
SELECT festival.close('ag_hand') AS closed;
SELECT count(*) AS found FROM generate_series(1, 6) g, festival.query('ag_hand', ST_MakePoint(1 + g % 3, 1 + g % 3)) q;
SELECT ag_hand_step(9);
SELECT * FROM ag_step WHERE step >= 8 ORDER BY step;
SELECT ag_derived('ag_hand', 'buckets_in_place') AS in_place_before_close, festival.close('ag_hand') AS closed;
SELECT (SELECT array_agg(id ORDER BY id) FROM festival.query('ag_hand', ST_MakeEnvelope(0, 0, 10, 10))) AS found,
	   (SELECT count(*) FROM festival.check('ag_hand')) AS check_rows;
SELECT ag_derived('ag_hand', 'buckets_in_place') AS in_place_after_reopen;

-------------------------------------------------------------------------------
-- Dumps, refused calls
-------------------------------------------------------------------------------
SELECT r.* FROM fixture.grid_regions(ARRAY(SELECT name FROM ag_index WHERE structure = 'agrid' ORDER BY ord)) r;
\set VERBOSITY default
SELECT festival.create_index('ag_fast', 'agrid', 'ag_dev', '{"framework": "fast", "extent": [0, 0, 1, 1]}');
SELECT festival.create_index('ag_band', 'agrid', 'ag_dev', '{"extent": [0, 0, 1, 1], "log_percent": 40, "place_percent": 40}');
SELECT festival.build('ag_w2', 'bulk');
\set VERBOSITY terse

-------------------------------------------------------------------------------
-- Clean up
-------------------------------------------------------------------------------
SELECT count(festival.drop_index(name)) AS dropped FROM (SELECT name FROM ag_index UNION ALL VALUES ('ag_hand')) n;
SELECT festival.drop_device('ag_dev');
SELECT festival.drop_device('ag_aio');
DELETE FROM fx_query WHERE qid BETWEEN 951 AND 957;
DROP FUNCTION ag_verify(text), ag_totals(text), ag_derived(text, text), ag_modes(), ag_hand_step(int), ag_search_twice();
DROP TABLE ag_src, ag_later, ag_aside, ag_index, ag_qids, ag_brute, ag_merge, ag_shape, ag_step;
