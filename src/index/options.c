/*-------------------------------------------------------------------------
 *
 * options.c
 *	  Validating index options against their declarations.
 *
 * IDENTIFICATION
 *	  src/index/options.c
 *
 *-------------------------------------------------------------------------
 */
#include "index/options.h"

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
				if (spec->type == OPT_INT &&
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
	JsonbValue	key;
	JsonbValue *found;

	Assert(spec->type == OPT_CHOICE);
	value.spec = spec;
	value.choice = spec->default_choice;
	if (user == NULL || !JB_ROOT_IS_OBJECT(user) || JB_ROOT_IS_SCALAR(user))
		return value.choice;

	key.type = jbvString;
	key.val.string.val = (char *) spec->name;
	key.val.string.len = strlen(spec->name);
	found = findJsonbValueFromContainer(&user->root, JB_FOBJECT, &key);
	if (found != NULL)
		set_value(&value, found);
	return value.choice;
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

static const OptionValue *
require_value(const FestConfig *config, const char *name, OptionType type)
{
	const OptionValue *value = find_value(config, name);

	if (value == NULL || value->spec->type != type)
		elog(ERROR, "option \"%s\" is not declared with the expected type", name);
	return value;
}

int64
config_int(const FestConfig *config, const char *name)
{
	return (int64) require_value(config, name, OPT_INT)->number;
}

double
config_real(const FestConfig *config, const char *name)
{
	return require_value(config, name, OPT_REAL)->number;
}

bool
config_bool(const FestConfig *config, const char *name)
{
	return require_value(config, name, OPT_BOOL)->number != 0;
}

/* An OPT_BOX option: false (outputs untouched) while it is null. */
bool
config_box(const FestConfig *config, const char *name,
		   double *xmin, double *ymin, double *xmax, double *ymax)
{
	const OptionValue *value = require_value(config, name, OPT_BOX);

	if (!value->box_set)
		return false;
	*xmin = value->box[0];
	*ymin = value->box[1];
	*xmax = value->box[2];
	*ymax = value->box[3];
	return true;
}

/* An OPT_STRING option: NULL while it is null. */
const char *
config_string(const FestConfig *config, const char *name)
{
	return require_value(config, name, OPT_STRING)->choice;
}

const char *
config_choice_name(const FestConfig *config, const char *name)
{
	return require_value(config, name, OPT_CHOICE)->choice;
}

int
config_choice_index(const FestConfig *config, const char *name)
{
	const OptionValue *value = require_value(config, name, OPT_CHOICE);

	for (int i = 0; value->spec->choices[i] != NULL; i++)
		if (value->spec->choices[i] == value->choice)
			return i;
	elog(ERROR, "option \"%s\" holds an undeclared choice", name);
	pg_unreachable();
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
