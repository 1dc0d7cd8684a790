/*-------------------------------------------------------------------------
 *
 * options.c
 *	  Validating index options against their declarations, and filling
 *	  the modules' typed structs from the result.
 *
 * IDENTIFICATION
 *	  src/options/options.c
 *
 *-------------------------------------------------------------------------
 */
#include "options/options.h"

#include <ctype.h>
#include <math.h>

#include "common/shortest_dec.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

/* "a, b, c" listing every option name of the groups. */
static char *
option_names(const OptionSpec *const *groups)
{
	StringInfoData buf;
	bool		first = true;

	initStringInfo(&buf);
	for (int g = 0; groups[g] != NULL; g++)
		for (const OptionSpec *s = groups[g]; s->name != NULL; s++)
		{
			appendStringInfo(&buf, "%s%s", first ? "" : ", ", s->name);
			first = false;
		}
	return buf.data;
}

/* What a spec accepts, as a sentence fragment for hints. */
static char *
option_accepts(const OptionSpec *spec)
{
	StringInfoData buf;

	initStringInfo(&buf);
	switch (spec->type)
	{
		case OPT_INT:
		case OPT_BYTES:
			appendStringInfo(&buf, "an integer from %.0f to %.0f", spec->min, spec->max);
			if (spec->multiple_of > 1)
				appendStringInfo(&buf, " that is a multiple of " INT64_FORMAT,
								 spec->multiple_of);
			break;
		case OPT_REAL:
			appendStringInfo(&buf, "a number from %g to %g", spec->min, spec->max);
			break;
		case OPT_BOOL:
			appendStringInfoString(&buf, "true or false");
			break;
		case OPT_BOX:
			appendStringInfoString(&buf, "null or an array of four numbers [xmin, ymin, xmax, ymax] with xmin < xmax, ymin < ymax and a finite width and height");
			break;
		case OPT_STRING:
			appendStringInfoString(&buf, "null or a string of 1 to 63 characters");
			break;
		case OPT_CHOICE:
			appendStringInfoString(&buf, "one of ");
			for (int i = 0; spec->choices[i] != NULL; i++)
				appendStringInfo(&buf, "%s'%s'", i > 0 ? ", " : "", spec->choices[i]);
			break;
	}
	return buf.data;
}

static void
bad_value(const OptionSpec *spec, const char *got)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid value %s for option \"%s\"", got, spec->name),
			 errdetail("%s", spec->description),
			 errhint("Option \"%s\" accepts %s.", spec->name, option_accepts(spec))));
}

/*
 * PostgreSQL's memory units, as postgresql.conf spells them (case matters:
 * "mb" is refused there too), base 1024.
 */
static const struct
{
	const char *name;
	double		bytes;
}			memory_units[] = {
	{"B", 1.0},
	{"kB", 1024.0},
	{"MB", 1024.0 * 1024},
	{"GB", 1024.0 * 1024 * 1024},
	{"TB", 1024.0 * 1024 * 1024 * 1024},
};

#define MEMORY_UNITS_HINT "Write a byte count as a JSON integer, or as a string of a number and a memory unit (\"B\", \"kB\", \"MB\", \"GB\" or \"TB\", base 1024) such as \"32kB\"."

/* An OPT_BYTES string whose number, or number of bytes, overflows a double. */
static void number_out_of_range(const OptionSpec *spec, const char *shown) pg_attribute_noreturn();

static void
number_out_of_range(const OptionSpec *spec, const char *shown)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid value %s for option \"%s\"", shown, spec->name),
			 errdetail("Its number is out of range."),
			 errhint("Option \"%s\" accepts %s.", spec->name, option_accepts(spec))));
}

/*
 * The bytes an OPT_BYTES string gives: a decimal number, optional spaces,
 * a unit.  The unit is required: a bare "4096" is refused, as it always
 * was, so a number in quotes is never silently taken for bytes.  A
 * fraction is accepted when the product is a whole number of bytes
 * ("1.5kB"), refused otherwise ("0.1kB"), since a byte count is exact.
 * Range and multiple_of are checked by the caller on the result.
 */
static double
bytes_from_string(const OptionSpec *spec, const char *text, const char *shown)
{
	char	   *end;
	double		number;
	const char *unit;

	errno = 0;
	number = strtod(text, &end);
	if (end != text && (errno == ERANGE || isinf(number)))
		number_out_of_range(spec, shown);
	if (end == text || errno != 0 || isnan(number) ||
		!(isdigit((unsigned char) text[0]) || text[0] == '-' || text[0] == '+' || text[0] == '.'))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value %s for option \"%s\"", shown, spec->name),
				 errdetail("It does not start with a number."),
				 errhint("Option \"%s\" accepts %s. " MEMORY_UNITS_HINT,
						 spec->name, option_accepts(spec))));
	while (*end == ' ')
		end++;
	unit = end;
	for (int i = 0; i < lengthof(memory_units); i++)
		if (strcmp(unit, memory_units[i].name) == 0)
		{
			double		bytes = number * memory_units[i].bytes;

			if (isinf(bytes))
				number_out_of_range(spec, shown);
			if (bytes != floor(bytes))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid value %s for option \"%s\"", shown, spec->name),
						 errdetail("It is not a whole number of bytes."),
						 errhint("Option \"%s\" accepts %s. " MEMORY_UNITS_HINT,
								 spec->name, option_accepts(spec))));
			return bytes;
		}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid value %s for option \"%s\"", shown, spec->name),
			 errdetail(*unit == '\0' ? "It has no memory unit." :
					   "\"%s\" is not a memory unit.", unit),
			 errhint("Valid units for option \"%s\" are \"B\", \"kB\", \"MB\", \"GB\" and \"TB\" (base 1024); it accepts %s.",
					 spec->name, option_accepts(spec))));
	pg_unreachable();
}

static const OptionSpec *
find_spec(const OptionSpec *const *groups, const char *name)
{
	for (int g = 0; groups[g] != NULL; g++)
		for (const OptionSpec *s = groups[g]; s->name != NULL; s++)
			if (strcmp(s->name, name) == 0)
				return s;
	return NULL;
}

static OptionValue *
find_value(const FestConfig *config, const char *name)
{
	for (int i = 0; i < config->noptions; i++)
		if (strcmp(config->values[i].spec->name, name) == 0)
			return (OptionValue *) &config->values[i];
	return NULL;
}

/* Is a JSON number an integer, judged before any rounding to float8? */
static bool
numeric_is_whole(Numeric value)
{
	Datum		num = NumericGetDatum(value);
	Datum		truncated = DirectFunctionCall2(numeric_trunc, num, Int32GetDatum(0));

	return DatumGetBool(DirectFunctionCall2(numeric_eq, num, truncated));
}

/*
 * An OPT_BOX value: a JSON array of four finite numbers, a proper
 * rectangle whose width and height are finite too (an infinite width
 * makes every grid cell and Hilbert coordinate NaN).  v is a container
 * value (the iterator runs with skipNested).  Returns NULL if the value is
 * good, or what is wrong with it.
 */
static const char *
box_from_jsonb(const JsonbValue *v, double *box)
{
	JsonbIterator *it;
	JsonbValue	elem;
	JsonbIteratorToken tok;
	int			n = 0;

	if (v->type != jbvBinary || !JsonContainerIsArray(v->val.binary.data))
		return "it is not an array";
	it = JsonbIteratorInit(v->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &elem, true)) != WJB_DONE)
	{
		if (tok != WJB_ELEM)
			continue;
		if (elem.type != jbvNumeric)
			return "an element is not a number";
		if (n >= 4)
			return "it has more than four numbers";
		box[n++] = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
													  NumericGetDatum(elem.val.numeric)));
		if (isnan(box[n - 1]) || isinf(box[n - 1]))
			return "a number is out of the range of double precision";
	}
	if (n != 4)
		return "it has fewer than four numbers";
	if (!(box[0] < box[2]))
		return "its width is not positive (xmin must be less than xmax)";
	if (!(box[1] < box[3]))
		return "its height is not positive (ymin must be less than ymax)";
	if (isinf(box[2] - box[0]) || isinf(box[3] - box[1]))
		return "its width or height exceeds the range of double precision";
	return NULL;
}

/* Check and store one user-supplied value. */
static void
set_value(OptionValue *value, const JsonbValue *v)
{
	const OptionSpec *spec = value->spec;
	char	   *shown;

	switch (v->type)
	{
		case jbvString:
			shown = psprintf("\"%.*s\"", v->val.string.len, v->val.string.val);
			break;
		case jbvNumeric:
			shown = DatumGetCString(DirectFunctionCall1(numeric_out,
														NumericGetDatum(v->val.numeric)));
			break;
		case jbvBool:
			shown = v->val.boolean ? "true" : "false";
			break;
		case jbvNull:
			shown = "null";
			break;
		default:
			shown = "(a JSON array or object)";
			break;
	}

	switch (spec->type)
	{
		case OPT_BYTES:
			if (v->type == jbvString)
			{
				double		number;

				number = bytes_from_string(spec, pnstrdup(v->val.string.val,
														  v->val.string.len),
										   shown);
				if (number < spec->min || number > spec->max ||
					(spec->multiple_of > 1 &&
					 fmod(number, (double) spec->multiple_of) != 0))
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("invalid value %s for option \"%s\"", shown, spec->name),
							 errdetail("It is %.0f bytes.", number),
							 errhint("Option \"%s\" accepts %s (after the unit is applied).",
									 spec->name, option_accepts(spec))));
				value->number = number;
				break;
			}
			/* a JSON number: as OPT_INT */
			/* FALLTHROUGH */
		case OPT_INT:
		case OPT_REAL:
			{
				double		number;

				if (v->type != jbvNumeric)
					bad_value(spec, shown);
				number = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
															NumericGetDatum(v->val.numeric)));
				if (isnan(number) || number < spec->min || number > spec->max)
					bad_value(spec, shown);
				if (spec->type != OPT_REAL &&
					(!numeric_is_whole(v->val.numeric) ||
					 (spec->multiple_of > 1 &&
					  fmod(number, (double) spec->multiple_of) != 0)))
					bad_value(spec, shown);
				value->number = number;
				break;
			}
		case OPT_BOOL:
			if (v->type != jbvBool)
				bad_value(spec, shown);
			value->number = v->val.boolean ? 1 : 0;
			break;
		case OPT_BOX:
			if (v->type == jbvNull)
			{
				value->box_set = false;
				break;
			}
			if (v->type != jbvBinary)
				bad_value(spec, shown);
			{
				const char *problem = box_from_jsonb(v, value->box);

				if (problem != NULL)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("invalid value for option \"%s\": %s",
									spec->name, problem),
							 errdetail("%s", spec->description),
							 errhint("Option \"%s\" accepts %s.",
									 spec->name, option_accepts(spec))));
			}
			value->box_set = true;
			break;
		case OPT_STRING:
			if (v->type == jbvNull)
				value->choice = NULL;
			else if (v->type == jbvString &&
					 v->val.string.len > 0 && v->val.string.len < 64)
				value->choice = pnstrdup(v->val.string.val, v->val.string.len);
			else if (v->type == jbvNumeric)
				value->choice = shown;
			else
				bad_value(spec, shown);
			break;
		case OPT_CHOICE:
			if (v->type != jbvString)
				bad_value(spec, shown);
			value->choice = NULL;
			for (int i = 0; spec->choices[i] != NULL; i++)
				if (strlen(spec->choices[i]) == (size_t) v->val.string.len &&
					strncmp(spec->choices[i], v->val.string.val, v->val.string.len) == 0)
					value->choice = spec->choices[i];
			if (value->choice == NULL)
				bad_value(spec, shown);
			break;
	}
}

/*
 * Validate user options (a jsonb object, or NULL for none) against the
 * groups and return the complete configuration, defaults filled in.
 */
FestConfig *
options_parse(Jsonb *user, const OptionSpec *const *groups,
			  const char *structure, const char *framework)
{
	FestConfig *config = palloc0(sizeof(FestConfig));

	/* defaults first */
	for (int g = 0; groups[g] != NULL; g++)
		for (const OptionSpec *s = groups[g]; s->name != NULL; s++)
		{
			OptionValue *value;

			if (config->noptions >= FEST_MAX_OPTIONS)
				elog(ERROR, "too many declared options");
			value = &config->values[config->noptions++];
			value->spec = s;
			value->number = s->default_number;
			value->choice = s->default_choice;
		}

	if (user == NULL)
		return config;

	if (!JB_ROOT_IS_OBJECT(user) || JB_ROOT_IS_SCALAR(user))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("index options must be a JSON object"),
				 errhint("Write options like '{\"page_size\": 8192}'; accepted keys for structure \"%s\": %s.",
						 structure, option_names(groups))));

	{
		JsonbIterator *it = JsonbIteratorInit(&user->root);
		JsonbValue	v;
		JsonbIteratorToken tok;
		char	   *key = NULL;

		while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
		{
			if (tok == WJB_KEY)
			{
				key = pnstrdup(v.val.string.val, v.val.string.len);
				if (find_spec(groups, key) == NULL)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("unknown option \"%s\" for structure \"%s\" with framework \"%s\"",
									key, structure, framework),
							 errhint("Accepted options with framework \"%s\": %s.",
									 framework, option_names(groups))));
			}
			else if (tok == WJB_VALUE)
				set_value(find_value(config, key), &v);
		}
	}
	return config;
}

/*
 * The value a user's options give to one choice option (validated), or
 * its default.  Used to learn which option groups apply (the framework)
 * before the whole object is checked.
 */
const char *
options_peek_choice(Jsonb *user, const OptionSpec *spec)
{
	OptionValue value;
	JsonbValue *found;

	Assert(spec->type == OPT_CHOICE);
	value.spec = spec;
	value.choice = spec->default_choice;
	found = options_user_value(user, spec->name);
	if (found != NULL)
		set_value(&value, found);
	return value.choice;
}

/*
 * The value the user's options object gives for name (JSON null included),
 * or NULL when it does not name it or is not an object; looked at before
 * parsing, to decide which tables apply or what to fill in.
 */
JsonbValue *
options_user_value(Jsonb *user, const char *name)
{
	JsonbValue	key;

	if (user == NULL || !JB_ROOT_IS_OBJECT(user) || JB_ROOT_IS_SCALAR(user))
		return NULL;
	key.type = jbvString;
	key.val.string.val = (char *) name;
	key.val.string.len = strlen(name);
	return findJsonbValueFromContainer(&user->root, JB_FOBJECT, &key);
}

/*
 * A float8 as the numeric that reads back as the same float8: the
 * shortest exact decimal, where float8_numeric keeps only 15 digits.  An
 * extent rounded inwards would refuse the source's own extreme points
 * once the index is reopened from its stored options.
 */
static Numeric
float8_exact_numeric(double value)
{
	char		buf[DOUBLE_SHORTEST_DECIMAL_LEN];

	double_to_shortest_decimal_buf(value, buf);
	return DatumGetNumeric(DirectFunctionCall3(numeric_in, CStringGetDatum(buf),
											   ObjectIdGetDatum(InvalidOid),
											   Int32GetDatum(-1)));
}

/* The complete configuration as a jsonb object. */
Jsonb *
options_to_jsonb(const FestConfig *config)
{
	JsonbParseState *state = NULL;
	JsonbValue *result;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	for (int i = 0; i < config->noptions; i++)
	{
		const OptionValue *value = &config->values[i];
		JsonbValue	k;
		JsonbValue	v;

		k.type = jbvString;
		k.val.string.val = (char *) value->spec->name;
		k.val.string.len = strlen(value->spec->name);
		pushJsonbValue(&state, WJB_KEY, &k);

		switch (value->spec->type)
		{
			case OPT_INT:
			case OPT_BYTES:
				v.type = jbvNumeric;
				v.val.numeric = int64_to_numeric((int64) value->number);
				break;
			case OPT_REAL:
				v.type = jbvNumeric;
				v.val.numeric = DatumGetNumeric(DirectFunctionCall1(float8_numeric,
																	Float8GetDatum(value->number)));
				break;
			case OPT_BOOL:
				v.type = jbvBool;
				v.val.boolean = value->number != 0;
				break;
			case OPT_CHOICE:
				v.type = jbvString;
				v.val.string.val = (char *) value->choice;
				v.val.string.len = strlen(value->choice);
				break;
			case OPT_STRING:
				if (value->choice == NULL)
				{
					v.type = jbvNull;
					break;
				}
				v.type = jbvString;
				v.val.string.val = (char *) value->choice;
				v.val.string.len = strlen(value->choice);
				break;
			case OPT_BOX:
				if (!value->box_set)
				{
					v.type = jbvNull;
					break;
				}
				pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
				for (int c = 0; c < 4; c++)
				{
					v.type = jbvNumeric;
					v.val.numeric = float8_exact_numeric(value->box[c]);
					pushJsonbValue(&state, WJB_ELEM, &v);
				}
				pushJsonbValue(&state, WJB_END_ARRAY, NULL);
				continue;
		}
		pushJsonbValue(&state, WJB_VALUE, &v);
	}
	result = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(result);
}

/*
 * Fill a module's typed struct from a complete configuration: each entry of
 * table writes its field at spec->offset.  An option of the table that the
 * configuration does not hold (a group that did not apply, such as clru's
 * options under another cache) takes its default.  The value is found by
 * name: two tables may declare the same option (FAST's and eFIND's
 * buffer_size), and the configuration holds the one that applied.
 */
void
options_fill(const FestConfig *config, const OptionSpec *table, void *out,
			 size_t out_size, uint32 *filled)
{
	char	   *base = (char *) out;

	Assert(config != NULL && table != NULL);
	Assert((char *) filled >= base && (char *) (filled + 1) <= base + out_size);
	for (const OptionSpec *s = table; s->name != NULL; s++)
	{
		const OptionValue *value = find_value(config, s->name);
		OptionValue dflt;

		if (value == NULL)
		{
			memset(&dflt, 0, sizeof(dflt));
			dflt.spec = s;
			dflt.number = s->default_number;
			dflt.choice = s->default_choice;
			value = &dflt;
		}
		if (value->spec->type != s->type)
			elog(ERROR, "option \"%s\" is declared with two types", s->name);

		switch (s->type)
		{
			case OPT_INT:
			case OPT_BYTES:
				Assert(s->offset + sizeof(int64) <= out_size);
				*(int64 *) (base + s->offset) = (int64) value->number;
				break;
			case OPT_REAL:
				Assert(s->offset + sizeof(double) <= out_size);
				*(double *) (base + s->offset) = value->number;
				break;
			case OPT_BOOL:
				Assert(s->offset + sizeof(bool) <= out_size);
				*(bool *) (base + s->offset) = value->number != 0;
				break;
			case OPT_CHOICE:
				{
					int			index = -1;

					Assert(s->offset + sizeof(int) <= out_size);
					for (int i = 0; value->spec->choices[i] != NULL; i++)
						if (strcmp(value->spec->choices[i], value->choice) == 0)
							index = i;
					if (index < 0)
						elog(ERROR, "option \"%s\" holds an undeclared choice", s->name);
					*(int *) (base + s->offset) = index;
					break;
				}
			case OPT_BOX:
				{
					OptionBox  *box = (OptionBox *) (base + s->offset);

					Assert(s->offset + sizeof(OptionBox) <= out_size);
					box->set = value->box_set;
					box->xmin = value->box[0];
					box->ymin = value->box[1];
					box->xmax = value->box[2];
					box->ymax = value->box[3];
					break;
				}
			case OPT_STRING:
				/* the text lives as long as the configuration */
				Assert(s->offset + sizeof(const char *) <= out_size);
				*(const char **) (base + s->offset) = value->choice;
				break;
		}
	}
	*filled = OPTIONS_FILLED;
}

/* Raise the error for options that are valid alone but not together. */
void
config_error(const FestConfig *config, const char *detail, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("impossible combination of index options"),
			 errdetail("%s", detail),
			 errhint("%s", hint)));
}
