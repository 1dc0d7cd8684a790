--
-- replay: festival.replay(run_id, profile) re-costs a traced run's I/O on
-- a profile.  On the profile the run was recorded on it must give exactly
-- the live run's device time and counters, for every shipped profile (both
-- device models); on another profile it must equal a live run there (the
-- model is a function of the submissions); bad input is refused with an
-- errcode and a hint.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

SELECT festival.generate_points('rp_points', 3000, 'gaussian_clusters', 7,
	   ST_MakeBox2D(ST_MakePoint(0, 0), ST_MakePoint(1000, 1000)));
SELECT festival.generate_windows('rp_windows', 20, 1.0,
	   ST_MakeBox2D(ST_MakePoint(0, 0), ST_MakePoint(1000, 1000)), 3);

-- one traced run per shipped profile: create, build one insert at a time
-- (FAST, so flushing units are multi-page submissions), query, delete
CREATE TABLE rp_live (profile text, run_id bigint);
-- the index CPU time too: a replay keeps the source's, so its modelled
-- elapsed time differs from the source's by the device time alone
SET festival.track_cpu_time = on;
DO $$
DECLARE
	p record;
	ix text;
BEGIN
	FOR p IN SELECT name FROM festival.device_profile WHERE builtin ORDER BY name LOOP
		ix := 'rp_' || p.name;
		PERFORM festival.create_device('rpd_' || p.name, kind => 'memory', profile => p.name);
		PERFORM festival.begin_run('replay test ' || p.name, trace => true);
		PERFORM festival.create_index(ix, 'rtree', 'rpd_' || p.name,
			'{"page_size": 2048, "framework": "fast", "flushing_unit": 3, "buffer_size": 16384, "log_size": 0}'::jsonb,
			'rp_points'::regclass);
		PERFORM festival.build(ix);
		PERFORM count(*) FROM rp_windows w, LATERAL festival.query(ix, w.geom) q;
		PERFORM festival.delete(ix, id, geom) FROM rp_points WHERE id % 7 = 0;
		PERFORM festival.flush(ix);
		INSERT INTO rp_live VALUES (p.name, festival.end_run());
	END LOOP;
END $$;

-- replay every run on its own profile, on the SSD and on the HDD of
-- model 1 (a replay's row is visible to the statements after it)
CREATE TABLE rp_replayed AS
SELECT l.profile, l.run_id, p AS on_profile, festival.replay(l.run_id, p) AS replay_id
FROM rp_live l, LATERAL (SELECT DISTINCT p FROM (VALUES (l.profile), ('ssd_kingston_v300'), ('hdd_wd_7200_v1')) v(p)) v
ORDER BY l.profile, p;

-- replayed on its own profile: exactly the live device time and counters
SELECT l.profile, r.device_seconds > 0 AS costed,
	   r.device_seconds = s.device_seconds AS same_device_time,
	   r.erases = s.erases AND r.write_amplification IS NOT DISTINCT FROM s.write_amplification AS same_ftl,
	   r.replay_of = s.run_id AS linked,
	   r.label = s.label || ' replay=' || l.profile AS labelled,
	   r.model_elapsed_seconds - r.device_seconds = s.model_elapsed_seconds - s.device_seconds AS same_cpu
FROM rp_replayed l JOIN festival.run s ON s.run_id = l.run_id
	 JOIN festival.run r ON r.run_id = l.replay_id
WHERE l.on_profile = l.profile
ORDER BY l.profile;

-- deterministic: replaying again gives the same time
CREATE TABLE rp_again AS
SELECT replay_id, festival.replay(run_id, on_profile) AS again FROM rp_replayed;
SELECT count(*) AS replays, bool_and(a.device_seconds = b.device_seconds) AS repeatable
FROM rp_again g JOIN festival.run a ON a.run_id = g.replay_id JOIN festival.run b ON b.run_id = g.again;

-- the run recorded on the HDD, replayed on the SSD, equals the run
-- recorded live on the SSD (same workload, deterministic model)
SELECT (SELECT device_seconds FROM festival.run r JOIN rp_replayed x ON r.run_id = x.replay_id
		WHERE x.profile = 'hdd_wd_7200' AND x.on_profile = 'ssd_kingston_v300')
	 = (SELECT device_seconds FROM festival.run r JOIN rp_live l USING (run_id)
		WHERE l.profile = 'ssd_kingston_v300') AS cross_profile_equals_live;

-- model 2 against model 1 on one trace: the drive cache saves HDD time
SELECT (SELECT device_seconds FROM festival.run r JOIN rp_replayed x ON r.run_id = x.replay_id
		WHERE x.profile = 'hdd_wd_7200' AND x.on_profile = 'hdd_wd_7200_v1')
	 > 3 * (SELECT device_seconds FROM festival.run r JOIN rp_live l USING (run_id)
		WHERE l.profile = 'hdd_wd_7200') AS cache_saves_hdd_time;

-- bad input
SELECT festival.replay(999999, 'hdd_wd_7200');
SELECT festival.begin_run('replay test untraced') IS NOT NULL AS begun;
SELECT festival.end_run() IS NOT NULL AS stored;
-- (the message names the run, whose id depends on the tests before)
DO $$
DECLARE
	hint text;
BEGIN
	PERFORM festival.replay((SELECT max(run_id) FROM festival.run WHERE label = 'replay test untraced'), 'hdd_wd_7200');
EXCEPTION WHEN object_not_in_prerequisite_state THEN
	GET STACKED DIAGNOSTICS hint = PG_EXCEPTION_HINT;
	RAISE WARNING 'refused (%): message matches: %, hint: %', SQLSTATE,
		SQLERRM ~ '^run \d+ has no I/O trace$', hint;
END $$;
SELECT festival.replay((SELECT run_id FROM rp_live LIMIT 1), 'no_such_drive');
SELECT festival.replay(NULL, 'hdd_wd_7200');
SELECT festival.replay((SELECT run_id FROM rp_live LIMIT 1), NULL);

SELECT count(festival.drop_index('rp_' || name)) FROM festival.device_profile WHERE builtin;
SELECT count(festival.drop_device('rpd_' || name)) FROM festival.device_profile WHERE builtin;
