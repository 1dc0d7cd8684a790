--
-- reopen: indices survive festival.close(), new sessions (\c) and sessions
-- that end without closing them.
--
-- Answers are kept in the regular table ro_answer, since temporary tables
-- end with the session.  After each \c the previous backend may still be
-- exiting (its exit hook flushes the indices it left open, then releases
-- them); opening an index waits for that (festival.open_timeout).
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

-- ro_answer(idx, tag): every answer of festival.query(idx) for every
-- predicate and query geometry of the table, saved under tag
CREATE TABLE ro_answer (idx text, tag text, pred text, qid int, id bigint);
CREATE FUNCTION ro_save(idx text, tag text, qmin int, qmax int) RETURNS bigint
LANGUAGE sql AS $$
	WITH saved AS (
		INSERT INTO ro_answer
		SELECT idx, tag, p.pred, q.qid, r.id
		FROM fx_predicate p CROSS JOIN fx_query q
		CROSS JOIN LATERAL festival.query(idx, q.g, p.pred) r
		WHERE q.qid BETWEEN qmin AND qmax
		RETURNING 1)
	SELECT count(*) FROM saved
$$;
-- answers under tag a that are not under tag b, and the other way round
CREATE FUNCTION ro_diff(idx text, a text, b text) RETURNS TABLE (only_a bigint, only_b bigint)
LANGUAGE sql AS $$
	SELECT (SELECT count(*) FROM (SELECT pred, qid, id FROM ro_answer WHERE ro_answer.idx = ro_diff.idx AND tag = a
								  EXCEPT ALL
								  SELECT pred, qid, id FROM ro_answer WHERE ro_answer.idx = ro_diff.idx AND tag = b) d),
		   (SELECT count(*) FROM (SELECT pred, qid, id FROM ro_answer WHERE ro_answer.idx = ro_diff.idx AND tag = b
								  EXCEPT ALL
								  SELECT pred, qid, id FROM ro_answer WHERE ro_answer.idx = ro_diff.idx AND tag = a) d)
$$;

SELECT festival.create_device('ro_dev');
-- mixed geometries on direct I/O, points on buffered I/O
SELECT festival.create_device('ro_dev_buffered', io => 'buffered');
SELECT festival.create_index('ro_mixed', 'rtree', 'ro_dev',
	'{"page_size": 2048, "split": "linear"}', 'fx_src') > 0 AS created;
SELECT festival.create_index('ro_points', 'rtree', 'ro_dev_buffered',
	'{"page_size": 1024}', 'fx_pts') > 0 AS created;
SELECT festival.build('ro_mixed') AS built, festival.build('ro_points') AS built;

-- the brute force, once and for all
INSERT INTO ro_answer
SELECT 'ro_mixed', 'brute', * FROM fx_brute('fx_src', ARRAY(SELECT qid FROM fx_query WHERE qid < 100));
INSERT INTO ro_answer
SELECT 'ro_points', 'brute', * FROM fx_brute('fx_pts', ARRAY(SELECT qid FROM fx_query WHERE qid >= 100));

-- answers in the building session: equal to the brute force
SELECT ro_save('ro_mixed', 'built', 1, 99) AS answers,
	   ro_save('ro_points', 'built', 100, 199) AS answers;
SELECT 'ro_mixed' AS idx, * FROM ro_diff('ro_mixed', 'built', 'brute')
UNION ALL
SELECT 'ro_points', * FROM ro_diff('ro_points', 'built', 'brute');

SELECT festival.stats('ro_mixed')->>'entries' AS entries,
	   festival.stats('ro_mixed')->>'height' AS height \gset ro_mixed_
SELECT festival.stats('ro_points')->>'entries' AS entries,
	   festival.stats('ro_points')->>'height' AS height \gset ro_points_

-------------------------------------------------------------------------------
-- festival.close: true for an open index, false when it is not open
-------------------------------------------------------------------------------
SELECT festival.close('ro_mixed') AS closed, festival.close('ro_mixed') AS closed_again;
SELECT festival.close('ro_points') AS closed;
-- unknown names are errors, not false
\set VERBOSITY terse
SELECT festival.close('ro_no_such_index');
\set VERBOSITY default

-- reopened in the same session: the counters start from zero
SELECT count(*) AS answers FROM festival.query('ro_mixed', ST_MakeEnvelope(0, 0, 100, 100));
SELECT festival.stats('ro_mixed')->'totals'->>'queries' AS queries,
	   festival.stats('ro_mixed')->'totals'->>'builds' AS builds,
	   festival.stats('ro_mixed')->'totals'->>'inserts' AS inserts,
	   festival.stats('ro_mixed')->>'clean_on_disk' AS clean;
SELECT festival.close('ro_mixed') AS closed;

-------------------------------------------------------------------------------
-- A new session
-------------------------------------------------------------------------------
\c
SET client_min_messages = warning;

-- the indices open as they were: same entries, height, configuration
SELECT festival.stats('ro_mixed')->>'entries' = :'ro_mixed_entries' AS same_entries,
	   festival.stats('ro_mixed')->>'height' = :'ro_mixed_height' AS same_height,
	   festival.stats('ro_mixed')->>'clean_on_disk' AS clean,
	   festival.stats('ro_mixed')->'config'->'options' AS options;
SELECT festival.stats('ro_points')->>'entries' = :'ro_points_entries' AS same_entries,
	   festival.stats('ro_points')->>'height' = :'ro_points_height' AS same_height,
	   festival.stats('ro_points')->>'all_points' AS all_points;
-- nothing has run in this session yet
SELECT festival.stats('ro_mixed')->'totals'->>'queries' AS queries,
	   festival.stats('ro_mixed')->'totals'->>'builds' AS builds,
	   festival.stats('ro_mixed')->'totals'->>'inserts' AS inserts;

-- the same answers as before and as the brute force
SELECT ro_save('ro_mixed', 'session 2', 1, 99) AS answers,
	   ro_save('ro_points', 'session 2', 100, 199) AS answers;
SELECT 'ro_mixed' AS idx, * FROM ro_diff('ro_mixed', 'session 2', 'built')
UNION ALL
SELECT 'ro_mixed', * FROM ro_diff('ro_mixed', 'session 2', 'brute')
UNION ALL
SELECT 'ro_points', * FROM ro_diff('ro_points', 'session 2', 'built')
UNION ALL
SELECT 'ro_points', * FROM ro_diff('ro_points', 'session 2', 'brute');
-- the queries were counted since the index was opened in this session
SELECT festival.stats('ro_mixed')->'totals'->>'queries' AS queries;
SELECT * FROM festival.check('ro_mixed');
SELECT * FROM festival.check('ro_points');

-------------------------------------------------------------------------------
-- Closing and reopening many times
-------------------------------------------------------------------------------
CREATE TABLE ro_cycle (n int, closed boolean, answers bigint);
DO $$
DECLARE
	was_open boolean;
	answers bigint;
BEGIN
	FOR n IN 1 .. 40 LOOP
		was_open := festival.close('ro_points');
		SELECT count(*) INTO answers
		FROM festival.query('ro_points', ST_MakeEnvelope(20, 30, 80, 90), 'within');
		INSERT INTO ro_cycle VALUES (n, was_open, answers);
	END LOOP;
END
$$;
-- every close found the index open (the query of the round before opened
-- it), and every round gave the same answer
SELECT count(*) AS rounds, count(*) FILTER (WHERE closed) AS closed,
	   min(answers) AS min_answers, max(answers) AS max_answers
FROM ro_cycle;
SELECT count(*) AS brute FROM fx_pts WHERE ST_Within(geom, ST_MakeEnvelope(20, 30, 80, 90));
-- only the last round's query is counted
SELECT festival.stats('ro_points')->'totals'->>'queries' AS queries;
-- and the file is what it was
SELECT festival.stats('ro_points')->>'entries' = :'ro_points_entries' AS same_entries;
SELECT * FROM festival.check('ro_points');

-- close, modify, close in turns
DO $$
BEGIN
	FOR n IN 1 .. 20 LOOP
		PERFORM festival.insert('ro_points', 100000 + n, ST_MakePoint(1000 + n, 1000));
		PERFORM festival.close('ro_points');
	END LOOP;
END
$$;
SELECT count(*) AS new_points
FROM festival.query('ro_points', ST_MakeEnvelope(1000, 1000, 1100, 1000), 'intersects', false);
SELECT count(*) FILTER (WHERE festival.delete('ro_points', 100000 + n, ST_MakePoint(1000 + n, 1000))) AS deleted
FROM generate_series(1, 20) n;
SELECT festival.stats('ro_points')->>'entries' = :'ro_points_entries' AS same_entries;
SELECT * FROM festival.check('ro_points');

-- festival.flush writes everything and marks the file clean; the index
-- stays open and keeps counting
SELECT festival.insert('ro_points', 300001, 'POINT(-7 -7)') AS inserted;
SELECT festival.stats('ro_points')->>'clean_on_disk' AS clean;
SELECT festival.flush('ro_points');
SELECT festival.stats('ro_points')->>'clean_on_disk' AS clean,
	   festival.stats('ro_points')->'totals'->>'inserts' AS inserts,
	   festival.stats('ro_points')->'totals'->>'deletes' AS deletes;
SELECT festival.delete('ro_points', 300001, 'POINT(-7 -7)') AS deleted;

-------------------------------------------------------------------------------
-- Ending a session without festival.close(): the exit hook flushes
-------------------------------------------------------------------------------
-- ro_points changes (and stays open): object 1 moves and gets id 200001
-- (the index keeps as many entries as its source has rows, and check()
-- names the entry its source lacks and the row it lacks); ro_mixed is only
-- read
SELECT festival.update('ro_points', 1, geom, 200001, 'POINT(12.5 12.5)') AS updated
FROM fx_pts WHERE id = 1;
SELECT festival.stats('ro_points')->>'clean_on_disk' AS clean_before_exit;
SELECT count(*) AS answers FROM festival.query('ro_mixed', 'POINT(50 50)');

\c
SET client_min_messages = warning;

-- no "not closed cleanly" warning: the file was flushed and marked clean,
-- its entry count is exact, and the update is there
SELECT festival.stats('ro_points')->>'clean_on_disk' AS clean,
	   festival.stats('ro_points')->>'entries' = :'ro_points_entries' AS same_entries;
SELECT id FROM festival.query('ro_points', ST_MakeEnvelope(-5, -5, 15, 15), 'intersects', false)
WHERE id IN (1, 200001) ORDER BY id;
SELECT * FROM festival.check('ro_points');
SELECT festival.stats('ro_mixed')->>'clean_on_disk' AS clean;
SELECT * FROM festival.check('ro_mixed');

-- put ro_points back as it was and compare once more, then leave both
-- open (ro_mixed was read above): the next session ends with them open
-- as well
SELECT festival.update('ro_points', 200001, 'POINT(12.5 12.5)', 1, geom) AS updated
FROM fx_pts WHERE id = 1;
SELECT ro_save('ro_points', 'session 3', 100, 199) AS answers;
SELECT 'ro_points' AS idx, * FROM ro_diff('ro_points', 'session 3', 'brute');

\c
SET client_min_messages = warning;
SELECT festival.stats('ro_points')->>'entries' = :'ro_points_entries' AS same_entries,
	   festival.stats('ro_points')->>'clean_on_disk' AS clean;
SELECT count(*) AS answers FROM festival.query('ro_points', 'POINT(0 0)');
SELECT * FROM festival.check('ro_points');

-------------------------------------------------------------------------------
-- Clean up
-------------------------------------------------------------------------------
SELECT festival.drop_index('ro_mixed'), festival.drop_index('ro_points');
SELECT festival.drop_device('ro_dev'), festival.drop_device('ro_dev_buffered');
DROP TABLE ro_answer, ro_cycle;
DROP FUNCTION ro_save(text, text, int, int), ro_diff(text, text, text);
