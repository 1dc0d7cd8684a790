--
-- devices_sim: device profiles, virtual device time, the simulated FTL and
-- memory devices.
--
-- The device model is checked directly with festival.device_simulate() on
-- crafted access patterns (profile sanity, batching, interference, FTL
-- invariants, determinism), then through indices: on a profiled file
-- device and on memory devices, under frameworks none, FAST and eFIND,
-- after heavy overwrites (which make the simulated FTL collect garbage)
-- the answers must equal PostGIS brute force and festival.check() must be
-- clean; two identical workloads must give identical virtual time and
-- counters.  It tests device model 1 (the <name>_v1 profiles, exactly the
-- shipped profiles before model 2); drive_model.sql tests model 2.  Virtual times are compared, never printed, except where the
-- model's arithmetic is the point.
--
SET client_min_messages = warning;
SET festival.progress_interval = 0;

-------------------------------------------------------------------------------
-- Shipped profiles: each cites its source and says what was assumed.
-------------------------------------------------------------------------------
SELECT name, kind, builtin, source <> '' AS has_source, assumed <> '' AS has_assumptions,
	   flash_page_bytes IS NOT NULL AS has_ftl
FROM festival.device_profile WHERE model_version = 1 ORDER BY name;

-- the numbers taken from the papers' tables
SELECT name, read_latency_us, write_latency_us, seq_read_mbps, seq_write_mbps,
	   rand_read_iops_qd32, rand_write_iops_qd32
FROM festival.device_profile WHERE model_version = 1 ORDER BY name;

-- CHECK constraints: a flash profile needs its FTL geometry, an HDD its
-- rotation, an HDD has one head, values are positive
INSERT INTO festival.device_profile (name, kind, read_latency_us, write_latency_us,
	seq_read_mbps, seq_write_mbps, rand_read_iops_qd32, rand_write_iops_qd32, channels, source)
VALUES ('bad_ssd', 'ssd', 100, 50, 500, 500, 90000, 80000, 8, 'test');
INSERT INTO festival.device_profile (name, kind, read_latency_us, write_latency_us,
	seq_read_mbps, seq_write_mbps, rand_read_iops_qd32, rand_write_iops_qd32, channels,
	rpm, track_kb, avg_seek_ms, source)
VALUES ('bad_hdd', 'hdd', 10000, 10000, 100, 100, 100, 100, 4, 7200, 512, 9, 'test');
INSERT INTO festival.device_profile (name, kind, read_latency_us, write_latency_us,
	seq_read_mbps, seq_write_mbps, rand_read_iops_qd32, rand_write_iops_qd32, channels, source)
VALUES ('bad_kind', 'tape', 100, 50, 500, 500, 90000, 80000, 8, 'test');
INSERT INTO festival.device_profile (name, kind, read_latency_us, write_latency_us,
	seq_read_mbps, seq_write_mbps, rand_read_iops_qd32, rand_write_iops_qd32, channels, source)
VALUES ('bad_latency', '3dxpoint', 0, 50, 500, 500, 90000, 80000, 8, 'test');

-- a user's own profile: a small SATA SSD with little over-provisioning
INSERT INTO festival.device_profile (name, kind, read_latency_us, write_latency_us,
	seq_read_mbps, seq_write_mbps, rand_read_iops_qd32, rand_write_iops_qd32, channels,
	interference_us, flash_page_bytes, pages_per_block, erase_latency_us,
	overprovision_percent, source, assumed)
VALUES ('ds_tiny_ssd', 'ssd', 100, 40, 500, 450, 90000, 80000, 4, 100, 4096, 16, 2000, 5,
		'regression test', 'everything');

-------------------------------------------------------------------------------
-- The model on crafted patterns.
-------------------------------------------------------------------------------
-- 200 random single-page reads (a fixed scattered permutation) and 200
-- sequential ones, one submission each
CREATE FUNCTION ds_pattern(kind text, n int) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE kind
		WHEN 'random_reads' THEN ARRAY(SELECT 'r ' || ((i * 7919) % 100003) FROM generate_series(1, n) i)
		WHEN 'sequential_reads' THEN ARRAY(SELECT 'r ' || i FROM generate_series(1, n) i)
		WHEN 'random_writes' THEN ARRAY(SELECT 'w ' || ((i * 7919) % 100003) FROM generate_series(1, n) i)
	END
$$;

CREATE TABLE ds_model AS
SELECT p.name, p.kind,
	   (festival.device_simulate(p.name, ds_pattern('random_reads', 200))->>'device_ns')::bigint AS random_read_ns,
	   (festival.device_simulate(p.name, ds_pattern('sequential_reads', 200))->>'device_ns')::bigint AS seq_read_ns,
	   (festival.device_simulate(p.name, ds_pattern('random_writes', 200))->>'device_ns')::bigint AS random_write_ns
FROM festival.device_profile p WHERE p.builtin AND p.model_version = 1;

-- profile sanity: the HDD's random reads cost more than any flash
-- device's; sequential reads are cheaper than random ones on the HDD
-- (and everywhere); 3DXPoint reads at queue depth 1 are cheaper than
-- every NAND device's
SELECT (SELECT random_read_ns FROM ds_model WHERE name = 'hdd_wd_7200_v1') >
	   (SELECT max(random_read_ns) FROM ds_model WHERE kind <> 'hdd') AS hdd_random_costliest,
	   (SELECT bool_and(seq_read_ns < random_read_ns) FROM ds_model) AS sequential_cheaper,
	   (SELECT seq_read_ns * 100 < random_read_ns FROM ds_model WHERE name = 'hdd_wd_7200_v1') AS hdd_sequential_100x_cheaper,
	   (SELECT random_read_ns FROM ds_model WHERE name = 'optane_memory_32gb_v1') <
	   (SELECT min(random_read_ns) FROM ds_model WHERE kind IN ('ssd', 'nvme')) AS optane_qd1_cheapest;

-- the model's arithmetic for one random 4 KB read at queue depth 1:
-- latency + 4096 bytes at the sequential bandwidth (first access of a
-- fresh drive is random)
SELECT name, (festival.device_simulate(name, ARRAY['r 5'])->>'device_ns')::bigint AS ns,
	   floor(read_latency_us * 1000 + 4096 * 1000.0 / seq_read_mbps) AS expected_ns
FROM festival.device_profile WHERE builtin AND model_version = 1 ORDER BY name;

-- an HDD jump within a track costs half a rotation (30e9 / 7200 rpm ns), not a seek
SELECT (festival.device_simulate('hdd_wd_7200_v1', ARRAY['r 0', 'r 10'])->>'device_ns')::bigint
	 - (festival.device_simulate('hdd_wd_7200_v1', ARRAY['r 0'])->>'device_ns')::bigint AS near_jump_ns,
	   floor(30e9 / 7200 + 4096 * 1000.0 / 150) AS expected_ns;

-- batch size vs parallelism: 64 random pages in one submission are served
-- in ceil(64 / channels) rounds; the HDD (one head) gains nothing
SELECT name, channels,
	   (festival.device_simulate(name, ARRAY['r ' || array_to_string(ARRAY(SELECT (i * 7919) % 100003 FROM generate_series(1, 64) i), ' ')])->>'device_ns')::bigint <
	   (festival.device_simulate(name, ds_pattern('random_reads', 64))->>'device_ns')::bigint AS batch_cheaper,
	   (festival.device_simulate(name, ARRAY['r ' || array_to_string(ARRAY(SELECT (i * 7919) % 100003 FROM generate_series(1, 64) i), ' ')])->>'submissions')::int AS submissions
FROM festival.device_profile WHERE builtin AND model_version = 1 ORDER BY name;

-- reads after writes: reading a region written since the previous read
-- waits interference_us (once: the next read finds the program done)
SELECT name,
	   (festival.device_simulate(name, ARRAY['w 0', 'r 1'])->>'interference_hits')::int AS hits_same_region,
	   (festival.device_simulate(name, ARRAY['w 0', 'r 90000'])->>'interference_hits')::int AS hits_far,
	   (festival.device_simulate(name, ARRAY['w 0', 'r 10', 'r 11'])->>'interference_hits')::int AS hits_two_reads
FROM festival.device_profile WHERE builtin AND model_version = 1 AND interference_us > 0 ORDER BY name;

-- determinism: the same workload twice gives identical results
SELECT festival.device_simulate('ssd_samsung_850pro_v1', ds_pattern('random_writes', 3000) || ds_pattern('random_reads', 500))
	 = festival.device_simulate('ssd_samsung_850pro_v1', ds_pattern('random_writes', 3000) || ds_pattern('random_reads', 500)) AS identical;

-------------------------------------------------------------------------------
-- FTL invariants: overwrites of 2000 pages in a scattered order.
-------------------------------------------------------------------------------
CREATE FUNCTION ds_overwrites(n int) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
	SELECT ARRAY(SELECT 'w ' || (abs(hashint4(i)) % 2000) FROM generate_series(1, n) i)
$$;
CREATE TABLE ds_ftl AS
SELECT p.name, n, festival.device_simulate(p.name, ds_overwrites(n)) AS r,
	   (SELECT count(DISTINCT abs(hashint4(i)) % 2000) FROM generate_series(1, n) i) AS distinct_pages
FROM festival.device_profile p CROSS JOIN unnest(ARRAY[2000, 8000, 20000]) n
WHERE p.name IN ('ssd_samsung_850pro_v1', 'nvme_intel_p3700_v1', 'ds_tiny_ssd');

-- every host page counted; write amplification >= 1 and = flash / host;
-- exactly the pages written are valid; wear spread is reported
SELECT name, n,
	   (r->>'host_writes')::int = n AS host_writes_counted,
	   (r->>'write_amplification')::numeric >= 1 AS wa_at_least_1,
	   (r->>'flash_writes')::int = (r->>'host_writes')::int + (r->>'gc_copies')::int AS flash_is_host_plus_copies,
	   (r->>'valid_pages')::int = distinct_pages AS valid_equals_distinct,
	   (r->>'erases')::int = (r->>'gc_runs')::int AS erase_per_gc,
	   (r->>'wear_min')::int <= (r->>'wear_max')::int AS wear_ordered,
	   (r->>'device_erases') = (r->>'erases') AND (r->>'ftl_flash_writes') = (r->>'flash_writes') AS counters_agree
FROM ds_ftl ORDER BY name, n;

-- erases and write amplification grow with overwrites; less
-- over-provisioning amplifies more
SELECT name,
	   bool_and(erases_grew) AS erases_grow,
	   bool_and(wa_grew) AS wa_grows
FROM (SELECT name, n,
			 (r->>'erases')::int > lag((r->>'erases')::int) OVER w AS erases_grew,
			 (r->>'write_amplification')::numeric >= lag((r->>'write_amplification')::numeric) OVER w AS wa_grew
	  FROM ds_ftl WINDOW w AS (PARTITION BY name ORDER BY n)) s
WHERE n > 2000 GROUP BY name ORDER BY name;
SELECT (SELECT (r->>'write_amplification')::numeric FROM ds_ftl WHERE name = 'nvme_intel_p3700_v1' AND n = 20000) <
	   (SELECT (r->>'write_amplification')::numeric FROM ds_ftl WHERE name = 'ssd_samsung_850pro_v1' AND n = 20000)
	   AS more_spare_less_amplification;

-- wear levelling: 2000 cold pages written once, then 30000 writes to 100
-- hot pages; cold blocks are moved too, so every block wears and the
-- spread of erase counts stays bounded (16 between levelling moves)
SELECT (r->>'wear_min')::int > 0 AS cold_blocks_worn,
	   (r->>'wear_max')::int - (r->>'wear_min')::int <= 32 AS spread_bounded,
	   (r->>'valid_pages')::int AS valid_pages
FROM (SELECT festival.device_simulate('ssd_samsung_850pro_v1', ARRAY['w 0-1999'] ||
		ARRAY(SELECT 'w ' || (abs(hashint4(i)) % 100) FROM generate_series(1, 30000) i)) r) s;

-- truncation trims: the pages beyond are no longer valid
SELECT r->>'valid_pages' AS valid_after_trim, r->>'gc_copies' AS copies
FROM (SELECT festival.device_simulate('ds_tiny_ssd', ARRAY['w 0-999', 't 100']) r) s;

-- 3DXPoint writes in place: no FTL
SELECT festival.device_simulate('optane_memory_32gb_v1', ARRAY['w 0-9', 'w 0-9']) ? 'write_amplification' AS optane_has_ftl;

-- errors
SELECT festival.device_simulate('no_such_profile', ARRAY['r 1']);
SELECT festival.device_simulate('hdd_wd_7200_v1', ARRAY['x 1']);
SELECT festival.device_simulate('hdd_wd_7200_v1', ARRAY['r 5-2']);
SELECT festival.device_simulate('hdd_wd_7200_v1', ARRAY['r']);
SELECT festival.device_simulate('hdd_wd_7200_v1', ARRAY['r 1', NULL]);
SELECT festival.device_simulate('hdd_wd_7200_v1', NULL);
SELECT festival.device_simulate('hdd_wd_7200_v1', ARRAY['r 1'], 1000);

-------------------------------------------------------------------------------
-- Devices with profiles and memory devices.
-------------------------------------------------------------------------------
SELECT festival.create_device('ds_nope', profile => 'no_such_profile');
SET client_min_messages = notice;
SELECT festival.create_device('ds_mem', kind => 'memory');
SET client_min_messages = warning;
SELECT festival.create_device('ds_ssd', io => 'buffered', profile => 'ds_tiny_ssd');
SELECT festival.create_device('ds_mem_nvme', kind => 'memory', profile => 'nvme_intel_p3700_v1');
SELECT festival.create_device('ds_ssd2', io => 'buffered', profile => 'ds_tiny_ssd');
SELECT name, kind, profile FROM festival.device WHERE name LIKE 'ds\_%' ORDER BY name;
-- a profile in use cannot be deleted
DELETE FROM festival.device_profile WHERE name = 'ds_tiny_ssd';

-- the source: a quarter of fx_src; another quarter is inserted and
-- deleted again and again (heavy overwrites)
CREATE TABLE ds_src (id bigint PRIMARY KEY, geom geometry NOT NULL);
INSERT INTO ds_src SELECT id, geom FROM fx_src WHERE id % 4 = 0;
CREATE TABLE ds_churn AS SELECT id, geom FROM fx_src WHERE id % 4 = 2;

CREATE TABLE ds_index (name text PRIMARY KEY, device text NOT NULL, options jsonb NOT NULL);
INSERT INTO ds_index VALUES
	('ds_ssd_none', 'ds_ssd', '{"page_size": 1024}'),
	('ds_ssd_fast', 'ds_ssd', '{"page_size": 1024, "framework": "fast", "buffer_size": 8192}'),
	('ds_ssd_efind', 'ds_ssd', '{"page_size": 1024, "framework": "efind", "buffer_size": 8192}'),
	('ds_mem_none', 'ds_mem', '{"page_size": 1024}'),
	('ds_mem_fast', 'ds_mem', '{"page_size": 1024, "framework": "fast", "buffer_size": 8192}'),
	('ds_mem_efind', 'ds_mem', '{"page_size": 1024, "framework": "efind", "buffer_size": 8192}'),
	('ds_nvme_none', 'ds_mem_nvme', '{"page_size": 2048, "split": "linear"}'),
	('ds_nvme_efind', 'ds_mem_nvme', '{"page_size": 2048, "framework": "efind"}');

SET client_min_messages = notice;
SELECT festival.create_index('ds_notice', 'rtree', 'ds_mem', '{}', 'ds_src') > 0 AS created;
SET client_min_messages = warning;
SELECT festival.drop_index('ds_notice');

SELECT count(*) FILTER (WHERE festival.create_index(name, 'rtree', device, options, 'ds_src') > 0) AS created
FROM ds_index;
SELECT name, festival.build(name) AS built FROM ds_index ORDER BY name;

-- heavy overwrites: two rounds of inserting and deleting ds_churn
CREATE FUNCTION ds_churn_round() RETURNS TABLE (name text, inserted bigint, deleted bigint)
LANGUAGE sql AS $$
	SELECT i.name,
		   (SELECT count(*) FILTER (WHERE festival.insert(i.name, c.id, c.geom)) FROM ds_churn c),
		   (SELECT count(*) FILTER (WHERE festival.delete(i.name, c.id, c.geom)) FROM ds_churn c)
	FROM ds_index i ORDER BY i.name
$$;
SELECT * FROM ds_churn_round();
SELECT count(*) AS round_complete FROM ds_churn_round() r WHERE r.inserted = (SELECT count(*) FROM ds_churn) AND r.deleted = r.inserted;
-- and the churn half stays in, in the source too, for the comparison
INSERT INTO ds_src SELECT * FROM ds_churn;
SELECT name, (SELECT count(*) FILTER (WHERE festival.insert(i.name, c.id, c.geom)) FROM ds_churn c) AS inserted
FROM ds_index i ORDER BY name;

-- answers equal brute force over both halves, every structure is intact
CREATE TABLE ds_brute (pred text, qid int, id bigint);
INSERT INTO ds_brute SELECT * FROM fx_brute('ds_src', ARRAY[1, 2, 12, 14, 21]);
SELECT i.name, sum(c.brute) AS brute, sum(c.missing) AS missing, sum(c.extra) AS extra
FROM ds_index i CROSS JOIN LATERAL fx_compare(i.name, 'ds_brute', ARRAY[1, 2, 12, 14, 21]) c
GROUP BY i.name ORDER BY i.name;
SELECT name, (SELECT count(*) FROM festival.check(name)) AS problems FROM ds_index ORDER BY name;

-- the simulated drives collected garbage: flash devices erased blocks,
-- amplified writes, and counted virtual time next to the real time
SELECT name,
	   (festival.stats(name)->'device'->>'erases')::int > 0 AS erased,
	   (festival.stats(name)->'device'->>'write_amplification')::numeric > 1 AS amplified,
	   (festival.stats(name)->'device'->>'wear_max')::int >= (festival.stats(name)->'device'->>'wear_min')::int AS wear_spread,
	   (festival.stats(name)->'totals'->>'device_seconds')::numeric > 0 AS virtual_time,
	   (festival.stats(name)->'totals'->>'device_erases') = festival.stats(name)->'device'->>'erases' AS erases_in_totals,
	   (festival.stats(name)->'totals'->>'ftl_host_writes')::int > 0 AS host_writes
FROM ds_index WHERE device <> 'ds_mem' ORDER BY name;
-- a profiled file device does real I/O too (real and virtual time);
-- memory devices have no file
SELECT name, (festival.stats(name)->'totals'->>'io_seconds')::numeric > 0 AS real_io_time,
	   festival.stats(name)->>'file' IS NOT NULL AS has_file,
	   festival.stats(name)->'device' ? 'memory_pages' AS memory_pages
FROM ds_index WHERE device = 'ds_ssd' ORDER BY name;
SELECT name, festival.stats(name)->>'file' IS NOT NULL AS has_file,
	   (festival.stats(name)->'device'->>'memory_pages')::int
		   BETWEEN 1 AND (festival.stats(name)->>'pages')::int AS memory_pages_held
FROM ds_index WHERE device <> 'ds_ssd' ORDER BY name;
-- the flash-aware framework erased less than write-through on the same drive
SELECT (festival.stats('ds_nvme_efind')->'device'->>'erases')::int <
	   (festival.stats('ds_nvme_none')->'device'->>'erases')::int AS efind_erases_less;
-- without a profile there is no virtual time
SELECT name, festival.stats(name)->'totals'->>'device_seconds' AS device_seconds,
	   festival.stats(name)->'device' ? 'virtual_seconds' AS simulated
FROM ds_index WHERE device = 'ds_mem' ORDER BY name;

-------------------------------------------------------------------------------
-- Determinism through an index: the same workload on two fresh indices of
-- the same configuration gives identical virtual time and FTL counters.
-------------------------------------------------------------------------------
SELECT festival.create_index('ds_twin_a', 'rtree', 'ds_ssd', '{"page_size": 1024, "framework": "fast", "buffer_size": 8192}', 'ds_src') > 0,
	   festival.create_index('ds_twin_b', 'rtree', 'ds_ssd2', '{"page_size": 1024, "framework": "fast", "buffer_size": 8192}', 'ds_src') > 0;
CREATE FUNCTION ds_twin_workload(idx text) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM festival.build(idx);
	PERFORM festival.insert(idx, c.id, c.geom) FROM ds_churn c ORDER BY c.id;
	PERFORM festival.delete(idx, c.id, c.geom) FROM ds_churn c WHERE c.id % 3 = 0 ORDER BY c.id;
	PERFORM count(*) FROM fx_query q CROSS JOIN LATERAL festival.query(idx, q.g) r;
	PERFORM festival.flush(idx);
	RETURN festival.stats(idx)->'device';
END
$$;
SELECT (ds_twin_workload('ds_twin_a') - 'name') = (ds_twin_workload('ds_twin_b') - 'name') AS identical_device_state;
SELECT (festival.stats('ds_twin_a')->'totals') - ARRAY['index_seconds', 'index_cpu_seconds', 'io_seconds', 'read_seconds', 'write_seconds', 'sync_seconds', 'sync_cpu_seconds', 'modelled_io_cpu_seconds', 'split_seconds', 'refine_seconds', 'refine_fetch_seconds', 'refine_cpu_seconds', 'flush_seconds', 'log_write_seconds', 'io_cpu_seconds']
	 = (festival.stats('ds_twin_b')->'totals') - ARRAY['index_seconds', 'index_cpu_seconds', 'io_seconds', 'read_seconds', 'write_seconds', 'sync_seconds', 'sync_cpu_seconds', 'modelled_io_cpu_seconds', 'split_seconds', 'refine_seconds', 'refine_fetch_seconds', 'refine_cpu_seconds', 'flush_seconds', 'log_write_seconds', 'io_cpu_seconds']
	   AS identical_counters,
	   (festival.stats('ds_twin_a')->'totals'->>'device_seconds')::numeric > 0 AS nonzero;

-------------------------------------------------------------------------------
-- Reopening.  A profiled file index reopens on a fresh simulated drive
-- holding its pages (written once, in order, nothing counted).  A memory
-- index loses its pages when closed: it reopens empty with a WARNING and
-- festival.build refills it.
-------------------------------------------------------------------------------
SELECT festival.close('ds_ssd_none');
SELECT count(*) AS answers FROM festival.query('ds_ssd_none', (SELECT g FROM fx_query WHERE qid = 4));
SELECT (d->>'host_writes')::int AS host_writes, (d->>'erases')::int AS erases,
	   (d->>'valid_pages')::int = ceil((festival.stats('ds_ssd_none')->>'pages')::int * 1024 / 4096.0) AS file_pages_valid
FROM (SELECT festival.stats('ds_ssd_none')->'device' AS d) s;

SELECT festival.close('ds_mem_fast');
SET client_min_messages = notice;
SELECT count(*) AS answers_after_loss FROM festival.query('ds_mem_fast', (SELECT g FROM fx_query WHERE qid = 4));
SET client_min_messages = warning;
SELECT festival.stats('ds_mem_fast')->>'entries' AS entries_after_loss;
SELECT festival.build('ds_mem_fast');
SELECT sum(c.brute) AS brute, sum(c.missing) AS missing, sum(c.extra) AS extra
FROM fx_compare('ds_mem_fast', 'ds_brute', ARRAY[1, 2, 12, 14, 21]) c;

-- a new session: memory indices start empty again; file indices keep everything
\c
SET client_min_messages = warning;
SELECT festival.stats('ds_mem_none')->>'entries' AS mem_entries_new_session,
	   (festival.stats('ds_ssd_efind')->>'entries')::int = (SELECT count(*) FROM ds_src) AS file_entries_kept;
-- check() reports the lost memory indices: they no longer match their source
SELECT name, c.severity, c.message FROM ds_index CROSS JOIN LATERAL festival.check(name) c ORDER BY name;

-------------------------------------------------------------------------------
-- Clean up.
-------------------------------------------------------------------------------
SELECT count(*) AS dropped FROM (SELECT festival.drop_index(name) FROM ds_index) s;
SELECT festival.drop_index('ds_twin_a'), festival.drop_index('ds_twin_b');
SELECT festival.drop_device(name) FROM festival.device WHERE name LIKE 'ds\_%' ORDER BY name;
DELETE FROM festival.device_profile WHERE name = 'ds_tiny_ssd';
DROP TABLE ds_model, ds_ftl, ds_src, ds_churn, ds_index, ds_brute;
DROP FUNCTION ds_pattern(text, int), ds_overwrites(int), ds_churn_round(), ds_twin_workload(text);
