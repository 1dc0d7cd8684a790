/*-------------------------------------------------------------------------
 *
 * describe.c
 *	  The configuration of an index as recorded with runs, and
 *	  festival.stats(): the live figures of an open index.
 *
 * IDENTIFICATION
 *	  src/sql/describe.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/describe.h"
#include "sql/args.h"
#include "device/sim.h"

#include "fmgr.h"
#include "stats/jsonbuild.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(festival_stats);

/*
 * Everything that defines an index for comparisons: structure, device,
 * the complete options, the parameters derived from them and the source.
 */
Jsonb *
ix_config_jsonb(OpenIndex *ix)
{
	JsonbParseState *state = NULL;
	JsonbValue *result;
	const DeviceSpec *dev = &ix->cat.device;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	jb_string(&state, "structure", ix->cat.structure);
	jb_string(&state, "framework", ix->opts.framework->name);

	jb_key(&state, "device");
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	jb_string(&state, "name", dev->name);
	jb_string(&state, "kind", device_kind_names[dev->kind]);
	jb_string(&state, "io", device_io_names[dev->io_mode]);
	jb_string(&state, "engine", device_engine_names[dev->engine]);
	jb_string(&state, "profile", dev->profile);
	pushJsonbValue(&state, WJB_END_OBJECT, NULL);

	jb_jsonb(&state, "options", ix->cat.options);

	jb_key(&state, "derived");
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	ix->structure->describe(&ix->sidx, &state);
	pushJsonbValue(&state, WJB_END_OBJECT, NULL);

	if (OidIsValid(ix->cat.source))
	{
		char	   *rel = get_rel_name(ix->cat.source);

		jb_string(&state, "source",
				  rel ? quote_qualified_identifier(get_namespace_name(get_rel_namespace(ix->cat.source)), rel) : NULL);
	}
	else
		jb_null(&state, "source");

	result = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(result);
}

/*
 * festival.stats(index): the state and counters of an index in this
 * session (opening it if needed), without changing anything.
 */
/*
 * "device": the storage of the open index: memory pages held, and the
 * simulated drive (virtual clock, FTL) when the device has a profile.
 */
static void
push_device_state(OpenIndex *ix, JsonbParseState **state)
{
	DeviceState *ds = ix->devstate;

	jb_key(state, "device");
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	jb_string(state, "name", ix->cat.device.name);
	jb_string(state, "kind", device_kind_names[ix->cat.device.kind]);
	if (ds != NULL && ds->pages != NULL)
		jb_int(state, "memory_pages", (int64) memory_pages_count(ds->pages));
	if (ds != NULL && ds->sim != NULL)
		sim_push_jsonb(ds->sim, state);
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

/*
 * "hot": the hot-page detector of a detecting tier placement (hot,
 * level_hot, random): its s now (hot_selectivity_tuning auto moves it),
 * clock, hot pages and the epoch's demotions so far; absent for any other
 * index.
 */
static void
push_hot_state(OpenIndex *ix, JsonbParseState **state)
{
	TierHotState hot;

	if (ix->tier == NULL || !tier_hot_state(ix->tier, &hot))
		return;
	jb_key(state, "hot");
	pushJsonbValue(state, WJB_BEGIN_OBJECT, NULL);
	jb_numeric(state, "selectivity",
			   DatumGetNumeric(DirectFunctionCall1(float8_numeric,
												   Float8GetDatum(hot.selectivity))));
	jb_int(state, "clock", hot.clock);
	jb_int(state, "hot_pages", hot.hot_pages);
	jb_int(state, "epoch_demotions", hot.epoch_demotions);
	pushJsonbValue(state, WJB_END_OBJECT, NULL);
}

Datum
festival_stats(PG_FUNCTION_ARGS)
{
	OpenIndex  *ix;
	JsonbParseState *state = NULL;
	JsonbValue *result;
	FestMeta   *meta;
	Jsonb	   *config;
	FestStats	totals;

	ix = ix_begin_op(fest_name_arg(fcinfo, 0, "index"), IX_READ);
	meta = &ix->meta;
	config = ix_config_jsonb(ix);

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	jb_string(&state, "index", ix->name);
	jb_string(&state, "opened_at", timestamptz_to_str(ix->opened_at));
	jb_int(&state, "height", meta->height);
	jb_int(&state, "root", (int64) meta->root);
	if (meta->flags & FEST_META_ENTRIES_VALID)
		jb_int(&state, "entries", (int64) meta->entry_count);
	else
		jb_null(&state, "entries");
	jb_int(&state, "pages", (int64) meta->page_count);
	jb_int(&state, "free_pages", (int64) meta->free_count);
	jb_int(&state, "file_bytes", (int64) (meta->page_count * meta->page_size));
	jb_bool(&state, "clean_on_disk", (meta->flags & FEST_META_CLEAN) != 0 && !ix->ns->marked_unclean);
	jb_bool(&state, "all_points", (meta->flags & FEST_META_ALL_POINTS) != 0);
	if (meta->flags & FEST_META_HAS_SRID)
		jb_int(&state, "srid", meta->srid);
	else
		jb_null(&state, "srid");
	/* a memory device has no file */
	jb_string(&state, "file",
			  device_has(&ix->cat.device, DEVICE_CAP_FILE) ? ix->path : NULL);
	jb_jsonb(&state, "config", config);
	jb_key(&state, "buffers");
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	ix->ns->ops->describe(ix->ns, &state);
	pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	/* the totals include this call (which may have opened the index) */
	totals = ix->totals;
	fest_stats_add(&totals, &ix->op.stats);
	jb_jsonb(&state, "totals", fest_stats_to_jsonb(&totals));
	push_device_state(ix, &state);
	push_hot_state(ix, &state);
	result = pushJsonbValue(&state, WJB_END_OBJECT, NULL);

	ix_end_op(ix);
	PG_RETURN_JSONB_P(JsonbValueToJsonb(result));
}
