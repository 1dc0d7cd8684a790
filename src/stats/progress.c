/*-------------------------------------------------------------------------
 *
 * progress.c
 *	  Counting a long operation's progress and reading the clock rarely.
 *
 * IDENTIFICATION
 *	  src/stats/progress.c
 *
 *-------------------------------------------------------------------------
 */
#include "stats/progress.h"

void
progress_init(Progress *progress, const char *operation, int64 interval_ns,
			  ProgressPublish publish, void *arg)
{
	Assert(interval_ns >= 0);
	memset(progress, 0, sizeof(Progress));
	progress->operation = operation;
	progress->unit = "rows";
	progress->total = -1;
	progress->start_ns = fest_now_ns();
	progress->interval_ns = interval_ns;
	progress->next_notice_ns = progress->start_ns + interval_ns;
	progress->countdown = PROGRESS_CLOCK_STEPS;
	progress->publish = publish;
	progress->arg = arg;
}

/*
 * Start another part of the work: its count begins at zero.  Published at
 * once (without a notice), so another session sees the phase change even
 * when the phase takes fewer steps than a clock read.
 */
void
progress_phase(Progress *progress, const char *phase, const char *unit,
			   int64 total)
{
	if (progress == NULL)
		return;
	strlcpy(progress->phase, phase, sizeof(progress->phase));
	progress->unit = unit;
	progress->done = 0;
	progress->total = total;
	if (progress->publish != NULL)
		progress->publish(progress, false);
	progress->countdown = PROGRESS_CLOCK_STEPS;
}

/* Every PROGRESS_CLOCK_STEPS steps: read the clock, publish. */
void
progress_tick(Progress *progress)
{
	int64		now = fest_now_ns();
	bool		due = progress->interval_ns > 0 && now >= progress->next_notice_ns;

	progress->countdown = PROGRESS_CLOCK_STEPS;
	if (due)
	{
		progress->next_notice_ns = now + progress->interval_ns;
	}
	if (progress->publish != NULL)
		progress->publish(progress, due);
}
