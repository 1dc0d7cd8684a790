/*-------------------------------------------------------------------------
 *
 * options.h
 *	  Declared, validated index options, and the typed structs they fill.
 *
 * This module is below every layer: it knows PostgreSQL's jsonb and
 * festival.h, nothing of the modules whose options it parses.  Every module
 * that takes options (the index file, each structure, each node store, the
 * page cache) declares them in its own NULL-terminated OptionSpec table and
 * a typed struct; each entry names its field of that struct by offsetof,
 * as PostgreSQL's relopt_parse_elt does for reloptions.
 *
 * options_parse() checks a user's jsonb object against the tables that
 * apply: an unknown key, a value of the wrong type, out of range or not
 * among the choices is an ERROR whose hint lists what is accepted.  Missing
 * keys take their defaults, so the resulting FestConfig is complete and is
 * what options_to_jsonb() gives for festival.index and the meta pages.
 * A module then reads its options once, when the index is opened or
 * created, with OPTIONS_FILL(config, its_table, &its_struct), and uses the
 * typed fields from then on; there are no look-ups by name.
 *
 * Field types by OptionType: OPT_INT and OPT_BYTES an int64, OPT_REAL a
 * double, OPT_BOOL a bool, OPT_CHOICE an int (the index into choices),
 * OPT_BOX an OptionBox.  OPT_BYTES is a byte count: a JSON integer, or a
 * string with one of PostgreSQL's memory units (B, kB, MB, GB, TB, base
 * 1024; "1.5kB" is 1536 bytes, but a string that is not a whole number of
 * bytes is refused); the stored configuration holds bytes.
 *
 * IDENTIFICATION
 *	  src/options/options.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_OPTIONS_H
#define FEST_OPTIONS_H

#include "festival.h"

#include "utils/jsonb.h"

typedef enum OptionType
{
	OPT_INT,
	OPT_BYTES,					/* an integer byte count; strings may carry a unit */
	OPT_REAL,
	OPT_CHOICE,
	OPT_BOOL,
	OPT_BOX,					/* [xmin, ymin, xmax, ymax], or null (unset) */
	OPT_STRING					/* a name of 1..63 characters (a JSON string
								 * or number, kept as text), or null (unset);
								 * filled as a const char *, NULL while unset */
} OptionType;

typedef struct OptionSpec
{
	const char *name;
	OptionType	type;
	double		default_number; /* OPT_INT, OPT_REAL, OPT_BOOL (0/1) */
	const char *default_choice; /* OPT_CHOICE */
	double		min;			/* OPT_INT, OPT_REAL */
	double		max;
	int64		multiple_of;	/* OPT_INT; 0 = any */
	const char *const *choices; /* OPT_CHOICE, NULL-terminated */
	const char *description;
	size_t		offset;			/* of the field in the module's typed struct */
} OptionSpec;

/* An OPT_BOX field. */
typedef struct OptionBox
{
	bool		set;			/* false while the option is null */
	double		xmin,
				ymin,
				xmax,
				ymax;
} OptionBox;

/*
 * Every typed options struct has "uint32 filled" (any position); it holds
 * OPTIONS_FILLED once OPTIONS_FILL has run, so code that reads the struct
 * can Assert it was filled (OPTIONS_ASSERT_FILLED).
 */
#define OPTIONS_FILLED	0x4F505453	/* "OPTS" */
#define OPTIONS_FILL(config, table, opts) \
	options_fill((config), (table), (opts), sizeof(*(opts)), &(opts)->filled)
#define OPTIONS_ASSERT_FILLED(opts) Assert((opts)->filled == OPTIONS_FILLED)

#define FEST_MAX_OPTIONS 64

typedef struct OptionValue
{
	const OptionSpec *spec;
	double		number;
	const char *choice;			/* OPT_CHOICE: points into spec->choices;
								 * OPT_STRING: the text, NULL while unset */
	bool		box_set;		/* OPT_BOX: false while null */
	double		box[4];			/* OPT_BOX: xmin, ymin, xmax, ymax */
} OptionValue;

typedef struct FestConfig
{
	int			noptions;
	OptionValue values[FEST_MAX_OPTIONS];
} FestConfig;

extern FestConfig *options_parse(Jsonb *user, const OptionSpec *const *groups,
								 const char *structure, const char *framework);
extern Jsonb *options_to_jsonb(const FestConfig *config);
extern void options_fill(const FestConfig *config, const OptionSpec *table,
						 void *out, size_t out_size, uint32 *filled);
extern const char *options_peek_choice(Jsonb *user, const OptionSpec *spec);
extern JsonbValue *options_user_value(Jsonb *user, const char *name);
extern void config_error(const FestConfig *config, const char *detail,
						 const char *hint) pg_attribute_noreturn();

#endif							/* FEST_OPTIONS_H */
