/*-------------------------------------------------------------------------
 *
 * progress.h
 *	  The progress of one long operation (a build, a bulk load, an
 *	  insert_many batch, a check), counted where the work is done.
 *
 * The SQL layer starts a Progress for an operation that may run long and
 * hands it down with the operation (StructIndex.progress, CheckReport's);
 * a loop doing the work calls progress_step once per unit (a row read, a
 * node written, a page checked) and progress_phase when it starts another
 * part of the work.  A step costs an addition and a decrement: the clock
 * is read only every PROGRESS_CLOCK_STEPS steps, and the SQL layer's
 * publish callback runs then, told whether festival.progress_interval has
 * passed since the last notice (sql/progress.c: the NOTICE and the slot
 * of festival.progress).  A NULL Progress counts nothing.
 *
 * IDENTIFICATION
 *	  src/stats/progress.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_PROGRESS_H
#define FEST_PROGRESS_H

#include "stats/stats.h"

/*
 * Steps between clock reads: few enough that the slowest step we count
 * (a source row from a view, a node read from a slow device) keeps a
 * notice within a fraction of a second of its time.
 */
#define PROGRESS_CLOCK_STEPS 16

#define PROGRESS_PHASE_LEN 48

struct Progress;

/* Called at every clock read; notice_due: an interval has passed. */
typedef void (*ProgressPublish) (struct Progress *progress, bool notice_due);

typedef struct Progress
{
	const char *operation;		/* "build", "bulk load", "insert_many", "check" */
	char		phase[PROGRESS_PHASE_LEN];	/* part of the work under way */
	const char *unit;			/* what done counts: "rows", "nodes", ... */
	int64		done;			/* units done in this phase */
	int64		total;			/* units the phase has, or -1 when unknown */
	int64		start_ns;		/* when the operation began */
	int64		interval_ns;	/* between notices; 0: no notices */
	int64		next_notice_ns;
	int			countdown;		/* steps until the next clock read */
	ProgressPublish publish;
	void	   *arg;			/* the publisher's */
} Progress;

extern void progress_init(Progress *progress, const char *operation,
						  int64 interval_ns, ProgressPublish publish, void *arg);
extern void progress_phase(Progress *progress, const char *phase,
						   const char *unit, int64 total);
extern void progress_tick(Progress *progress);

/* Count n units of work. */
static inline void
progress_step(Progress *progress, int64 n)
{
	if (progress == NULL)
		return;
	progress->done += n;
	if (--progress->countdown <= 0)
		progress_tick(progress);
}

#endif							/* FEST_PROGRESS_H */
