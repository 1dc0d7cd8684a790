--
-- drive_model: device model 2 (the drive's DRAM cache and real capacity)
-- on hand-computed sequences.  Each expected time is written out as the
-- arithmetic of docs/devices.md, "Model versions", so the test compares the
-- model with an independent calculation, not with its own output.
--
-- The test profile dc_xp (3DXPoint: no FTL, no interference, one channel):
--   medium read   100 us + 4096 B at 1000 MB/s (4096 ns)  = 104096 ns
--   medium write   50 us + 4096 ns                         =  54096 ns
--   sequential page (previous page + 1): 4096 ns
--   cache hit      10 us + 4096 B at 4096 MB/s (1000 ns)   =  11000 ns
--   cache          16 KB = 4 pages of 4 KB, LRU
--
SET client_min_messages = warning;

INSERT INTO festival.device_profile (name, kind, read_latency_us, write_latency_us,
	seq_read_mbps, seq_write_mbps, rand_read_iops_qd32, rand_write_iops_qd32, channels,
	source, model_version, cache_mb, cache_hit_us, cache_write_back, interface_mbps, capacity_gb)
VALUES ('dc_xp', '3dxpoint', 100, 50, 1000, 1000, 10000, 10000, 1, 'regression test',
		2, 16.0 / 1024, 10, true, 4096, 1),
	   ('dc_xp_wt', '3dxpoint', 100, 50, 1000, 1000, 10000, 10000, 1, 'regression test',
		2, 16.0 / 1024, 10, false, 4096, 1),
	   ('dc_xp_v1', '3dxpoint', 100, 50, 1000, 1000, 10000, 10000, 1, 'regression test',
		1, 16.0 / 1024, 10, true, 4096, 1);

CREATE FUNCTION dc(profile text, ops text[]) RETURNS jsonb
LANGUAGE sql AS $$ SELECT festival.device_simulate(profile, ops) $$;

-- a miss, then a hit
SELECT (r->>'device_ns')::bigint = 104096 + 11000 AS miss_then_hit,
	   r->>'cache_hits' AS hits, r->>'cache_misses' AS misses
FROM dc('dc_xp', ARRAY['r 1', 'r 1']) r;

-- write-back: writes are acknowledged from the cache, a read of one hits
SELECT (r->>'device_ns')::bigint = 3 * 11000 AS write_back_absorbs,
	   r->>'cache_dirty' AS dirty, r->>'cache_destages' AS destages
FROM dc('dc_xp', ARRAY['w 1', 'w 2', 'r 1']) r;

-- eviction: the fifth page evicts page 1 (least recently used, dirty),
-- which is written to the medium first (head unpositioned: a random write)
SELECT (r->>'device_ns')::bigint = 5 * 11000 + 54096 AS eviction_destages,
	   r->>'cache_used' AS used, r->>'cache_dirty' AS dirty, r->>'cache_destages' AS destages
FROM dc('dc_xp', ARRAY['w 1', 'w 2', 'w 3', 'w 4', 'w 5']) r;

-- then reading page 1 misses (random read: the head is after page 1) and
-- evicts page 2, whose write-back follows page 1: sequential, 4096 ns
SELECT (r->>'device_ns')::bigint = 5 * 11000 + 54096 + 104096 + 4096 AS destage_order_moves_head
FROM dc('dc_xp', ARRAY['w 1', 'w 2', 'w 3', 'w 4', 'w 5', 'r 1']) r;

-- LRU, not FIFO: reading page 1 makes it recent, so pages 2 and 3 are
-- evicted (2: random write, 3: follows 2)
SELECT (r->>'device_ns')::bigint = 4 * 11000 + 11000 + (11000 + 54096) + (11000 + 4096) AS lru_order,
	   r->>'cache_destages' AS destages
FROM dc('dc_xp', ARRAY['w 1', 'w 2', 'w 3', 'w 4', 'r 1', 'w 5', 'w 6']) r;
-- page 1 survived: reading it now is a hit
SELECT (a->>'device_ns')::bigint - (b->>'device_ns')::bigint = 11000 AS recent_page_kept
FROM dc('dc_xp', ARRAY['w 1', 'w 2', 'w 3', 'w 4', 'r 1', 'w 5', 'w 6', 'r 1']) a,
	 dc('dc_xp', ARRAY['w 1', 'w 2', 'w 3', 'w 4', 'r 1', 'w 5', 'w 6']) b;

-- truncation drops cached pages past the end, dirty ones unwritten
SELECT (r->>'device_ns')::bigint = 2 * 11000 + 11000 + 104096 AS truncate_drops,
	   r->>'cache_dirty' AS dirty, r->>'cache_destages' AS destages
FROM dc('dc_xp', ARRAY['w 1', 'w 2', 't 2', 'r 1', 'r 2']) r;

-- write-through: the write pays the medium and leaves a clean copy
SELECT (r->>'device_ns')::bigint = 54096 + 11000 AS write_through,
	   r->>'cache_dirty' AS dirty
FROM dc('dc_xp_wt', ARRAY['w 1', 'r 1']) r;

-- model 1 ignores the cache columns: two random reads (page 1 is not page 2)
SELECT (r->>'device_ns')::bigint = 2 * 104096 AS model1_no_cache, r ? 'cache_hits' AS has_cache
FROM dc('dc_xp_v1', ARRAY['r 1', 'r 1']) r;

-- HDD, model 2: seeks scale with the square root of the distance over a
-- third of the capacity.  dc_hdd: 6000 rpm (half a rotation 5 ms), average
-- seek 9 ms, track-to-track 1 ms, capacity 3 x 10000 pages of 4 KB, so a
-- jump of 10000 pages is the average seek and one of 2500 pages costs
-- 1 + 8 x 0.5 = 5 ms; transfer 4096 B at 100 MB/s = 40960 ns.  The first
-- access (head anywhere) pays the average seek.
INSERT INTO festival.device_profile (name, kind, read_latency_us, write_latency_us,
	seq_read_mbps, seq_write_mbps, rand_read_iops_qd32, rand_write_iops_qd32, channels,
	rpm, track_kb, avg_seek_ms, source, model_version, capacity_gb, min_seek_ms)
VALUES ('dc_hdd', 'hdd', 20000, 20000, 100, 100, 50, 50, 1, 6000, 0, 9, 'regression test',
		2, 3 * 10000 * 4096 / 1e9, 1);
-- (within 2 ns: the square root is computed in floating point)
SELECT abs((festival.device_simulate('dc_hdd', ARRAY['r 0', 'r 10001'])->>'device_ns')::bigint
		   - 2 * (9000000 + 5000000 + 40960)) <= 2 AS hdd_average_seek,
	   abs((festival.device_simulate('dc_hdd', ARRAY['r 0', 'r 2501'])->>'device_ns')::bigint
		   - ((9000000 + 5000000 + 40960) + (5000000 + 5000000 + 40960))) <= 2 AS hdd_short_seek;
-- an HDD profile of model 2 needs its capacity and track-to-track seek
INSERT INTO festival.device_profile (name, kind, read_latency_us, write_latency_us,
	seq_read_mbps, seq_write_mbps, rand_read_iops_qd32, rand_write_iops_qd32, channels,
	rpm, track_kb, avg_seek_ms, source, model_version)
VALUES ('dc_bad_hdd', 'hdd', 20000, 20000, 100, 100, 50, 50, 1, 6000, 0, 9, 'test', 2);

-- Flash, model 2: the drive's free space keeps the FTL from collecting
-- garbage; the same overwrites on the model-1 profile (the file is the
-- whole drive) amplify writes
CREATE FUNCTION dc_overwrites(n int) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
	SELECT ARRAY(SELECT 'w ' || (abs(hashint4(i)) % 2000) FROM generate_series(1, n) i)
$$;
SELECT name, (r->>'write_amplification')::numeric = 1 AS no_amplification,
	   (r->>'erases')::int = 0 AS no_erases
FROM (SELECT name, festival.device_simulate(name, dc_overwrites(20000)) r
	  FROM festival.device_profile WHERE name IN ('ssd_samsung_850pro', 'ssd_samsung_850pro_v1')) s
ORDER BY name;

-- Model 3 (docs/devices.md, "Model versions"): read-ahead, command streams,
-- flash commands without a head, flash read-modify-write.  dc_xp3 is dc_xp
-- with model 3 and a read-ahead of 8 KB (2 pages); a continued command
-- served from the cache costs its transfer only: 4096 B at 4096 MB/s =
-- 1000 ns.  3DXPoint has no head, so every command pays its latency.
INSERT INTO festival.device_profile (name, kind, read_latency_us, write_latency_us,
	seq_read_mbps, seq_write_mbps, rand_read_iops_qd32, rand_write_iops_qd32, channels,
	source, model_version, cache_mb, cache_hit_us, cache_write_back, interface_mbps, capacity_gb,
	readahead_kb)
VALUES ('dc_xp3', '3dxpoint', 100, 50, 1000, 1000, 10000, 10000, 1, 'regression test',
		3, 16.0 / 1024, 10, true, 4096, 1, 8);

-- read-ahead: the miss of page 1 also caches pages 2 and 3, so page 3
-- hits (not a continuation: page 2 would continue page 1); page 4 misses
-- and its read-ahead (5, 6) evicts pages 1 and 2 (least recently used),
-- so page 2 misses again (and reads 3 and 4 ahead: 6 pages read ahead in
-- all).  Model 2 (dc_xp) has no read-ahead: pages 3
-- and 2 miss (random reads), page 4 follows page 3 (sequential).
SELECT (r->>'device_ns')::bigint = 104096 + 11000 + 104096 + 104096 AS readahead_hit,
	   r->>'cache_hits' AS hits, r->>'cache_misses' AS misses,
	   r->>'cache_readaheads' AS readaheads, r->>'readahead_pages' AS readahead_pages
FROM dc('dc_xp3', ARRAY['r 1', 'r 3', 'r 4', 'r 2']) r;
SELECT (r->>'device_ns')::bigint = 104096 + 104096 + 4096 + 104096 AS model2_no_readahead,
	   r->>'cache_hits' AS hits, r ? 'cache_readaheads' AS has_readahead
FROM dc('dc_xp', ARRAY['r 1', 'r 3', 'r 4', 'r 2']) r;

-- command streams: write-back writes of pages 1, 2, 3 as three commands
-- cost one hit and two continuations; so does one command of pages 1-3;
-- a skipped page or a change of direction starts a new stream
SELECT (a->>'device_ns')::bigint = 11000 + 1000 + 1000 AS stream_continues,
	   (b->>'device_ns')::bigint = 11000 + 1000 + 1000 AS one_command_same,
	   (c->>'device_ns')::bigint = 11000 + 11000 AS skip_breaks_stream,
	   (d->>'device_ns')::bigint = 11000 + 1000 + 1000 + 11000 + 1000 + 11000 AS direction_breaks_stream
FROM dc('dc_xp3', ARRAY['w 1', 'w 2', 'w 3']) a,
	 dc('dc_xp3', ARRAY['w 1-3']) b,
	 dc('dc_xp3', ARRAY['w 1', 'w 3']) c,
	 dc('dc_xp3', ARRAY['w 1', 'w 2', 'w 3', 'r 1', 'r 2', 'w 3']) d;
-- model 2 charges every command a hit
SELECT (festival.device_simulate('dc_xp', ARRAY['w 1', 'w 2', 'w 3'])->>'device_ns')::bigint
	   = 3 * 11000 AS model2_no_streams;

-- Flash, model 3: dc_ssd3 (one channel, no interference, erase free),
-- 2 KB index pages on 4 KB flash pages: transfer 2048 B at 1000 MB/s =
-- 2048 ns, a flash page 4096 ns; write 50 us, read 100 us.
INSERT INTO festival.device_profile (name, kind, read_latency_us, write_latency_us,
	seq_read_mbps, seq_write_mbps, rand_read_iops_qd32, rand_write_iops_qd32, channels,
	flash_page_bytes, pages_per_block, erase_latency_us, overprovision_percent,
	source, model_version, capacity_gb)
VALUES ('dc_ssd3', 'ssd', 100, 50, 1000, 1000, 10000, 10000, 1, 4096, 64, 0, 7,
		'regression test', 3, 1),
	   ('dc_ssd2', 'ssd', 100, 50, 1000, 1000, 10000, 10000, 1, 4096, 64, 0, 7,
		'regression test', 2, 1);
-- pages 0 and 1 share flash page 0: each written alone reads the flash
-- page first (100 us + 4096 ns = 104096 ns); page 1 written in the same
-- command right after page 0 does not (and streams: 2048 ns), page 2
-- (another flash page) does.  Model 2 never reads.
SELECT (festival.device_simulate('dc_ssd3', ARRAY['w 0', 'w 1'], 2048)->>'device_ns')::bigint
		= 2 * (52048 + 104096) AS rmw_alone,
	   festival.device_simulate('dc_ssd3', ARRAY['w 0', 'w 1'], 2048)->>'rmw_reads' AS rmw_reads,
	   (festival.device_simulate('dc_ssd3', ARRAY['w 0-1'], 2048)->>'device_ns')::bigint
		= 52048 + 104096 + 2048 AS same_command_one_rmw,
	   (festival.device_simulate('dc_ssd3', ARRAY['w 1-2'], 2048)->>'rmw_reads') AS other_flash_page_rmw,
	   (festival.device_simulate('dc_ssd3', ARRAY['w 0', 'w 1'], 4096)->>'rmw_reads') AS whole_pages_no_rmw,
	   (festival.device_simulate('dc_ssd2', ARRAY['w 0', 'w 1'], 2048)->>'device_ns')::bigint
		= 52048 + 2048 AS model2_no_rmw;
-- no head: reading page 1 after page 0 in another command pays the
-- latency again (model 2: only its transfer); within one command it streams
SELECT (festival.device_simulate('dc_ssd3', ARRAY['r 0', 'r 1'], 2048)->>'device_ns')::bigint
		= 2 * 102048 AS flash_commands_pay_latency,
	   (festival.device_simulate('dc_ssd3', ARRAY['r 0-1'], 2048)->>'device_ns')::bigint
		= 102048 + 2048 AS one_command_streams,
	   (festival.device_simulate('dc_ssd2', ARRAY['r 0', 'r 1'], 2048)->>'device_ns')::bigint
		= 102048 + 2048 AS model2_sequential_discount;

-- the shipped drives: every model-2 profile has a _v1 twin with the same
-- figures and model 1; every profile cites its source
SELECT p.name, p.model_version, p.cache_mb, p.cache_write_back, p.capacity_gb,
	   v.model_version AS v1_model, p.source <> '' AND v.source <> '' AS sourced
FROM festival.device_profile p JOIN festival.device_profile v ON v.name = p.name || '_v1'
WHERE p.builtin ORDER BY p.name;

-- the drives model 3 recalibrated keep model 2 as <name>_v2: the same
-- figures apart from the model and the read-ahead
SELECT p.name, p.model_version, p.readahead_kb, v.model_version AS v2_model,
	   (to_jsonb(p) - ARRAY['name', 'description', 'model_version', 'readahead_kb', 'source', 'assumed'])
	   = (to_jsonb(v) - ARRAY['name', 'description', 'model_version', 'readahead_kb', 'source', 'assumed'])
	   AS same_figures
FROM festival.device_profile p JOIN festival.device_profile v ON v.name = p.name || '_v2'
WHERE p.builtin ORDER BY p.name;

DELETE FROM festival.device_profile WHERE name LIKE 'dc\_%';
