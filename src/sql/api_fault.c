/*-------------------------------------------------------------------------
 *
 * api_fault.c
 *	  Testing tools: festival.inject_fault, clear_fault, fault_status.
 *
 * They arm the fault layer of an open index (device/fault.h), so that
 * the crash and corruption suites can fail any page write, read or sync,
 * or a write or sync of the redo log, at a chosen point of an operation.
 * The fault state lives in the index's DeviceState: it survives the
 * reload that follows the failure it causes, and is dropped when the
 * index is closed.  Superusers only: a fault can kill the backend.
 *
 * IDENTIFICATION
 *	  src/sql/api_fault.c
 *
 *-------------------------------------------------------------------------
 */
#include "sql/handle.h"
#include "sql/args.h"

#include "device/fault.h"
#include "miscadmin.h"
#include "stats/jsonbuild.h"
#include "utils/jsonb.h"

PG_FUNCTION_INFO_V1(festival_inject_fault);
PG_FUNCTION_INFO_V1(festival_clear_fault);
PG_FUNCTION_INFO_V1(festival_fault_status);

static void
require_superuser(const char *what)
{
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to %s", what),
				 errhint("Only superusers may inject faults: a fault can make the backend kill itself.")));
}

static int
parse_choice(const char *what, const char *value, const char *const *choices)
{
	StringInfoData list;

	for (int i = 0; choices[i] != NULL; i++)
		if (strcmp(value, choices[i]) == 0)
			return i;
	initStringInfo(&list);
	for (int i = 0; choices[i] != NULL; i++)
		appendStringInfo(&list, "%s%s", i > 0 ? ", " : "", choices[i]);
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid fault %s \"%s\"", what, value),
			 errhint("Accepted values: %s.", list.data)));
	pg_unreachable();
}

/*
 * Refuse a target that can never fire on this index: a fault armed there
 * would wait for an operation that does not exist, and a test relying on
 * it would pass without testing anything.
 */
static void
refuse_unfireable(OpenIndex *ix, FaultTarget target, bool fast)
{
	const char *tname = fault_target_names[target];

	/* the fast chain sees page transfers only: log and tier files go to the slow side */
	if (fast && target != FAULT_WRITE && target != FAULT_READ && target != FAULT_SYNC)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fault target \"fast:%s\" never fires", tname),
				 errdetail("The fast device of index \"%s\" receives page writes, reads and syncs only; the redo log and the tier files are written beside the index file.",
						   ix->name),
				 errhint("Use \"fast:write\", \"fast:read\" or \"fast:sync\", or \"%s\" without the prefix.",
						 tname)));
	if ((target == FAULT_TIER_WRITE || target == FAULT_TIER_MAP_WRITE) && ix->tier == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("index \"%s\" has no fast device, so fault target \"%s\" never fires", ix->name, tname),
				 errhint("tier_write and tier_map_write are the hot-page weights and the page -> tier map of an index with a fast_device.")));
	if (target == FAULT_TIER_WRITE && ix->opts.tier.placement != TIER_HOT &&
		ix->opts.tier.placement != TIER_LEVEL_HOT && ix->opts.tier.placement != TIER_RANDOM)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("index \"%s\" writes no hot-page weights under placement \"%s\", so fault target \"tier_write\" never fires",
						ix->name, tier_placement_name(ix->opts.tier.placement)),
				 errhint("The weights are written under placements hot, level_hot and random; \"tier_map_write\" fails the map's writes.")));
	/*
	 * The redo log of FAST and eFIND (none with log_size 0), and under
	 * framework none the write-through store's journal, which it keeps over
	 * a write-back cache or a fast device (docs/durability.md); a store
	 * with neither writes no log.
	 */
	if ((target == FAULT_LOG_WRITE || target == FAULT_LOG_SYNC) && !ix->ns->has_log &&
		(ix->opts.framework->uses_log ||
		 (ix->opts.cache.cache == 0 && !ix->opts.tier.enabled)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("index \"%s\" keeps no log, so fault target \"%s\" never fires", ix->name, tname),
				 ix->opts.framework->uses_log
				 ? errhint("Its framework's log is disabled (log_size 0); create it with a log_size to test its log.")
				 : errhint("Under framework \"none\" an index writes through without a log unless it has a cache or a fast_device; use \"write\" or \"sync\".")));
}

/*
 * The fault state of the named index, opening it if needed; fast: the
 * fault layer of its fast device (docs/tiers.md).  With a target (not
 * -1), one that can never fire on the index is refused.
 */
static FaultState *
index_fault_state(const char *name, bool fast, int target)
{
	OpenIndex  *ix = ix_begin_op(name, IX_READ);
	FaultState *fs;

	if (fast && ix->fast_devstate == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("index \"%s\" has no fast device", name),
				 errhint("Targets with the prefix \"fast:\" are for indices with a fast_device.")));
	if (target >= 0)
		refuse_unfireable(ix, (FaultTarget) target, fast);
	fs = fast ? ix->fast_devstate->fault : ix->devstate->fault;
	ix_end_op(ix);
	Assert(fs != NULL);
	return fs;
}

/*
 * festival.inject_fault(index, target, after, error): let `after`
 * operations of target succeed, then fail the next one with error.
 */
Datum
festival_inject_fault(PG_FUNCTION_ARGS)
{
	char	   *name;
	FaultTarget target;
	FaultError	error;
	int64		after;
	char	   *target_text;
	bool		fast;

	require_superuser("inject faults");
	name = fest_name_arg(fcinfo, 0, "index");
	target_text = fest_text_arg(fcinfo, 1, "fault target");
	/* "fast:write" and so on: the fast device of a tiered index */
	fast = strncmp(target_text, "fast:", 5) == 0;
	target = (FaultTarget) parse_choice("target", fast ? target_text + 5 : target_text,
										fault_target_names);
	after = fest_int64_arg(fcinfo, 2, "after");
	error = (FaultError) parse_choice("error", fest_text_arg(fcinfo, 3, "fault error"),
									  fault_error_names);
	if (after < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("after must not be negative"),
				 errhint("Give how many operations of the target succeed before the fault: 0 fails the next one.")));
	if (error == FAULT_TORN && target != FAULT_WRITE && target != FAULT_LOG_WRITE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("only writes can be torn"),
				 errhint("Use target write or log_write with error torn.")));
	fault_arm(index_fault_state(name, fast, (int) target), target, after, error);
	PG_RETURN_VOID();
}

/* festival.clear_fault(index): disarm. */
Datum
festival_clear_fault(PG_FUNCTION_ARGS)
{
	char	   *name;

	require_superuser("clear faults");
	name = fest_name_arg(fcinfo, 0, "index");
	fault_disarm(index_fault_state(name, false, -1));
	{
		OpenIndex  *ix = ix_lookup_open(name);

		if (ix != NULL && ix->fast_devstate != NULL)
			fault_disarm(ix->fast_devstate->fault);
	}
	PG_RETURN_VOID();
}

/*
 * festival.fault_status(index): whether a fault is armed, how many fired,
 * and the operations of each target the fault layer has seen since the
 * index was opened (a test measures an operation's page writes with it).
 */
Datum
festival_fault_status(PG_FUNCTION_ARGS)
{
	char	   *name;
	FaultState *fs;
	JsonbParseState *state = NULL;
	JsonbValue *result;

	require_superuser("inspect faults");
	name = fest_name_arg(fcinfo, 0, "index");
	fs = index_fault_state(name, false, -1);
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	jb_bool(&state, "armed", fs->armed);
	jb_int(&state, "fired", (int64) fs->fired);
	for (int t = 0; t < FAULT_NTARGETS; t++)
		jb_int(&state, fault_target_names[t], (int64) fs->seen[t]);
	result = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	PG_RETURN_JSONB_P(JsonbValueToJsonb(result));
}
