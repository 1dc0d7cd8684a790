/*-------------------------------------------------------------------------
 *
 * options.h
 *	  Declared, validated index options.
 *
 * Every layer that takes options (the index file, each structure, later the
 * node stores and caches) declares them in a NULL-terminated OptionSpec
 * array.  options_parse() checks a user's jsonb object against the arrays
 * that apply: an unknown key, a value of the wrong type, out of range or not
 * among the choices is an ERROR whose hint lists what is accepted.  Missing
 * keys take their defaults, so the resulting FestConfig is complete and is
 * what gets stored in festival.index and in the meta pages.
 *
 * IDENTIFICATION
 *	  src/index/options.h
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
	OPT_REAL,
	OPT_CHOICE,
	OPT_BOOL,
	OPT_BOX,					/* [xmin, ymin, xmax, ymax], or null (unset) */
	OPT_STRING					/* a name of 1..63 characters (a JSON string
								 * or number, kept as text), or null (unset) */
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
} OptionSpec;

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
extern int64 config_int(const FestConfig *config, const char *name);
extern double config_real(const FestConfig *config, const char *name);
extern bool config_bool(const FestConfig *config, const char *name);
extern bool config_box(const FestConfig *config, const char *name,
					   double *xmin, double *ymin, double *xmax, double *ymax);
extern const char *config_string(const FestConfig *config, const char *name);
extern const char *config_choice_name(const FestConfig *config, const char *name);
extern int	config_choice_index(const FestConfig *config, const char *name);
extern const char *options_peek_choice(Jsonb *user, const OptionSpec *spec);
extern void config_error(const FestConfig *config, const char *detail,
						 const char *hint) pg_attribute_noreturn();

#endif							/* FEST_OPTIONS_H */
